"""``modelspec show NAME``: one catalogue model's resolved layer stack, as a diagram or as JSON.

The model is found by the ``name`` its spec states (:mod:`pipeline.catalogue.views`),
checked with the five passes, and drawn from its resolved stack; a spec that
fails its check is not drawn, its problems are shown instead. Which file
states the name comes from the catalogue's snapshot while nothing in the
catalogue has changed, and the model's view from the one recorded for it while
neither its spec nor an op profile has (:mod:`pipeline.cache.snapshot`), so a
repeated ``show`` reads no spec.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

import click

from pipeline.spec.escape import json_text
from pipeline.commands.output import echo, echo_rendered

from pipeline.commands.options import (no_cache_option, root_option, run_profiles, save_cache,
                                       walk_catalogue)

if TYPE_CHECKING:
    from pipeline.catalogue.views import Entry
    from pipeline.check.repo import SpecRepo


@click.command(name="show", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="text: an aligned diagram; json: the resolved view for tools.")
@click.option("--seq-len", type=click.IntRange(min=1), default=None, metavar="S",
              help="State FLOPs and KV bytes for a sequence of S tokens (default 4096).")
@root_option
@no_cache_option
def command(name: str, fmt: str, seq_len: Optional[int], root: Optional[Path], no_cache: bool) -> None:
    """Show one catalogue model's resolved layer stack.

    Groups of layers with their ranges and counts (a repeated cycle drawn
    once with its repeat count), each kind's attention and feed-forward
    flavour, MTP layers marked, the MLA or linear-attention dimensions, the
    derived widths, the parameters (total, active, MTP apart, and per group
    of layers: attention, MLP, routed and shared experts, router, norms) and
    the forward FLOPs at 4,096 tokens (--seq-len S for another length) under
    the dense and causal conventions per kind with the KV-cache, state and
    weight bytes, and the vision tower below. --format json adds each kind's op counts, the op
    totals over the stack and the whole parameters block of the artifact.

    \b
    Examples:
      modelspec show deepseek-v3
      modelspec show qwen3.5-35b-a3b --format json
      modelspec show gemma-3-27b --seq-len 131072

    Exit codes: 0 shown, 1 the spec fails its check (its problems are
    shown) or its name is stated twice, 2 no spec has that name, no specs/
    folder (outside a spec repository), or usage error.
    """
    from pipeline.cache import snapshot
    from pipeline.catalogue.views import CatalogueError, find, render_show
    from pipeline.check.repo import find_repo
    from pipeline.cache.stamps import cache_folder

    repo = find_repo(root)
    folder, key = cache_folder(repo.root), snapshot.repo_key(repo, "show")
    recorded = snapshot.answer(folder, key, repo.specs) if not no_cache else None
    catalogue = _named(recorded, name) if recorded is not None else _catalogue(repo, no_cache, folder, key)
    try:
        entry = find(catalogue, name)
    except CatalogueError as error:
        if error.stated:
            echo(f"modelspec: {error}", err=True)
            raise SystemExit(1) from None
        raise click.BadParameter(str(error), param_hint="NAME") from None
    view = _view(repo, entry, None if no_cache else folder, seq_len)
    if fmt == "json":
        echo_rendered(json_text(json.dumps(view, indent=2)))
    else:
        echo(render_show(view), nl=False)


def _catalogue(repo: "SpecRepo", no_cache: bool, folder: Path, key: str) -> List["Entry"]:
    """Every spec file of the catalogue with the name it states (:func:`entries`); recorded as the
    snapshot *key* (see :func:`_named`) unless *no_cache*."""
    from pipeline.cache import snapshot

    walked = walk_catalogue(repo, no_cache)
    catalogue = entries(walked.files, repo.displays, walked.cache)
    save_cache(walked.cache)
    if not no_cache:
        snapshot.record(folder, key, walked.sources, walked.taken,
                      "".join(snapshot.name_line(item.name, item.file, item.path) for item in catalogue))
    return catalogue


def entries(paths: Sequence["Path | str"], display: Any, cache: Any = None) -> List[Entry]:
    """Read the name each spec file of *paths* states.

    Args:
        paths: The spec files.
        display: ``display(paths)``, the paths as reports show them (:meth:`~pipeline.check.repo.SpecRepo.displays`).
        cache: The result cache (:class:`~pipeline.cache.results.ResultCache`): the name of a file its catalogue
            index or a record stands for is taken from there, without parsing the file; ``None`` parses every file.
    """
    from pipeline.catalogue.views import Entry
    from pipeline.check.runner import stated_name

    shown = list(zip(paths, display(paths)))
    names = ((name for name, _ in cache.stated_names(shown)) if cache is not None
             else (stated_name(Path(path), file) for path, file in shown))
    return [Entry(path, file, name) for (path, file), name in zip(shown, names)]


def _named(name_map: str, name: str) -> List["Entry"]:
    """The entries of a catalogue snapshot's name map (:func:`pipeline.cache.snapshot.name_line`) that state *name*,
    compared case-folded (:func:`pipeline.catalogue.views.find`); every entry when none does (the closest names are
    then suggested)."""
    from pipeline.cache import snapshot
    from pipeline.catalogue.views import Entry

    found = snapshot.stating(name_map, name) or snapshot.every_name(name_map)
    return [Entry(path, display, stated) for stated, display, path in found]


def _view(repo: "SpecRepo", entry: "Entry", folder: Optional[Path], seq_len: Optional[int] = None) -> Dict[str, Any]:
    """:func:`pipeline.catalogue.model_view.show_view` of *entry*'s spec, checked with the five passes; recorded in *folder*
    (the cache folder; ``None``: ``--no-cache``) while the spec file and the op profiles stat as they did.

    A spec that fails its check has no view: its problems are shown and the command ends with exit code 1.
    A *seq_len* other than the default is drawn afresh, not recorded.
    """
    from pipeline.cache import snapshot
    from pipeline.catalogue.model_view import SHOW_SEQ_LEN

    if seq_len is not None and seq_len != SHOW_SEQ_LEN:
        folder = None

    sources = [str(entry.path), *snapshot.profile_sources(repo.profiles)]
    taken = snapshot.take(sources) if folder is not None else None
    key = snapshot.view_key(entry.file, taken) if taken is not None else None
    recorded = snapshot.recorded_view(folder, entry.file, key) if key is not None else None
    if recorded is not None:
        return json.loads(recorded)
    from pipeline.catalogue.model_view import show_view
    from pipeline.spec.problems import Severity
    from pipeline.check.runner import check_file

    profiles = run_profiles(repo, folder is not None)
    checked = check_file(Path(entry.path), entry.file, profiles)
    errors = [p for p in checked.result.problems if p.severity is Severity.ERROR]
    if errors or checked.stack is None:
        for problem in checked.result.problems:
            echo(f"{problem.file}:{problem.line}:{problem.column}: {problem.severity.value} "
                 f"[{problem.code}] {problem.message}", err=True)
        echo(f"modelspec: {entry.file} fails its check; fix it to show its stack", err=True)
        raise SystemExit(1)
    view = show_view(checked.spec, checked.stack, checked.tower, entry.file, profiles.get(checked.stack.arch),
                     seq_len or SHOW_SEQ_LEN)
    if key is not None and snapshot.take(sources) == taken:  # neither the spec nor a profile changed meanwhile
        snapshot.record_view(folder, entry.file, key, json.dumps(view))
    return view
