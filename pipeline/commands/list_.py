"""``modelspec list``: the catalogue as a table (name, arch, layers, experts, MTP, tower), or as JSON.

Every spec under the repository's ``specs/`` is checked (a spec the result
cache holds a current result of is not checked again: its row is kept in
the catalogue index); a spec that fails is left out of the table and its
problems are shown on stderr. A catalogue where nothing changed since the
last clean list is answered from that list's snapshot
(:mod:`pipeline.cache.snapshot`): the same bytes, for a ``stat`` per file. Without
a ``specs/`` folder there is no catalogue to list, which is a usage error (as
for ``check``), not an empty table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Tuple

import click

from pipeline.spec.escape import json_text
from pipeline.commands.output import echo, echo_rendered

from pipeline.commands.options import (no_cache_option, progress_bar, root_option, save_cache,
                                       walk_catalogue)

if TYPE_CHECKING:
    from pipeline.commands.options import WalkedCatalogue
    from pipeline.check.repo import SpecRepo


@click.command(name="list", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="text: an aligned table; json: one record per model.")
@root_option
@no_cache_option
def command(fmt: str, root: Optional[Path], no_cache: bool) -> None:
    """List the catalogue: name, arch, layers, experts, MTP, tower, parameters, FLOPs per token at 4k.

    One row per spec under specs/, sorted by name. layers counts the body
    layers; experts is routed experts, top-k and shared experts; mtp is '-'
    when the spec states no MTP depth; tower is the vision tower's layers;
    total and active are the counted parameters ('-' when the spec's
    profile cannot count them); flops/token@4k is the forward FLOPs per
    token of a 4,096-token sequence (dense convention), read from the
    model's artifact in resolved/ ('-' when there is none: run regen).

    \b
    Examples:
      modelspec list
      modelspec list --format json

    Exit codes: 0 listed, 1 a spec fails its check (it is left out and its
    problems are shown), 2 usage error, no specs/ folder (outside a spec
    repository) or a broken op profile.
    """
    from pipeline.cache import snapshot
    from pipeline.check.repo import find_repo
    from pipeline.cache.stamps import cache_folder

    repo = find_repo(root)
    folder, key = cache_folder(repo.root), snapshot.repo_key(repo, "list", fmt)
    recorded = snapshot.answer(folder, key, repo.specs) if not no_cache else None
    if recorded is not None:  # nothing it came from has changed since a list drew it
        echo_rendered(recorded, nl=False)
        raise SystemExit(0)
    shown, failed, walked = _listed(repo, fmt, no_cache)
    echo_rendered(shown, nl=False)
    if failed:
        raise SystemExit(1)
    if not no_cache:
        snapshot.record(folder, key, walked.sources, walked.taken, shown)
    raise SystemExit(0)


def _listed(repo: "SpecRepo", fmt: str, no_cache: bool) -> Tuple[str, bool, "WalkedCatalogue"]:
    """``(the listing as printed, whether a spec failed, the catalogue as walked)``; each failing spec's errors
    are shown on stderr. The snapshot's sources were stat'ed before any spec was read (:func:`walk_catalogue`)."""
    from pipeline.catalogue.views import flops_cell, render_list_cells
    from pipeline.check.rows import list_cells
    from pipeline.spec.escape import printable
    from pipeline.spec.problems import Severity
    from pipeline.cache.results import CELL_SEPARATOR, regular_file_stat
    from pipeline.cache.verdicts import verdicts

    walked = walk_catalogue(repo, no_cache)
    cache, files = walked.cache, walked.files
    indexed, todo = [], []  # (file, cells, row JSON) the catalogue index holds, and the files it does not answer
    for path, display in zip(files, repo.displays(files)):
        status = regular_file_stat(path) if cache is not None else None
        found = cache.index.listed_row(display, status) if status is not None else None
        if found is not None:
            indexed.append((display, *found))
        else:
            todo.append((path, display))
    rows, failed = [], False
    with progress_bar(len(todo), "reading the catalogue") as update:
        checked = verdicts(todo, walked.profiles, progress=update, cache=cache, with_rows=True)
    save_cache(cache)
    for item in checked:
        errors = [p for p in item.result.problems if p.severity is Severity.ERROR]
        if errors or item.row is None:
            failed = True
            for problem in errors:
                echo(f"{problem.file}:{problem.line}:{problem.column}: error [{problem.code}] "
                           f"{problem.message}", err=True)
            continue
        rows.append(item.row)
    if fmt == "json":
        rows += json.loads(f"[{','.join(row for _, _, row in indexed)}]")
        rows.sort(key=lambda row: (row["name"], row["file"]))
        rows = [{**row, "flops_per_token_4k": artifact_flops(repo.resolved, row["name"])} for row in rows]
        return json_text(json.dumps(rows, indent=2)) + "\n", failed, walked
    # the index's cells as they are: no row decoded, none formatted again
    table = [(cells.split(CELL_SEPARATOR) if cells != "-" else list_cells(json.loads(row)), file)
             for file, cells, row in indexed]
    table += [(list_cells(row), row["file"]) for row in rows]
    ordered = sorted((cells[0], file, cells) for cells, file in table)  # by name, then file
    text = render_list_cells([(*cells, flops_cell(artifact_flops(repo.resolved, cells[0]))) for _, _, cells in ordered])
    return printable(text, keep="\n\t"), failed, walked


def artifact_flops(resolved: Path, name: str) -> Optional[int]:
    """Forward FLOPs per token at 4,096 tokens (dense) that *name*'s artifact in *resolved* states, or ``None``.

    Read from the artifact ``regen`` wrote, never computed: ``list`` stays a table of what ``check`` and ``regen``
    already know (a missing, unreadable or older artifact gives ``None``).
    """
    try:
        document = json.loads((resolved / f"{name}.json").read_text(encoding="utf-8"))
        return next(entry["per_token_dense"] for entry in document["flops"]["at"] if entry["seq_len"] == 4096)
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
