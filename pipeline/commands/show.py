"""``modelspec show NAME``: one catalogue model's resolved layer stack, as a diagram or as JSON.

The model is found by the ``name`` its spec states (:mod:`pipeline.catalogue`),
checked with the five passes, and drawn from its resolved stack; a spec that
fails its check is not drawn, its problems are shown instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from pipeline.escape import json_text
from pipeline.output import echo, echo_rendered

from pipeline.commands.options import no_cache_option, open_cache, root_option, run_profiles, save_cache


@click.command(name="show", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="text: an aligned diagram; json: the resolved view for tools.")
@root_option
@no_cache_option
def command(name: str, fmt: str, root: Optional[Path], no_cache: bool) -> None:
    """Show one catalogue model's resolved layer stack.

    Groups of layers with their ranges and counts (a repeated cycle drawn
    once with its repeat count), each kind's attention and feed-forward
    flavour, MTP layers marked, the MLA or linear-attention dimensions, the
    derived widths, the parameters (total, active, MTP apart, and per group
    of layers: attention, MLP, routed and shared experts, router, norms) and
    the vision tower below. --format json adds each kind's op counts, the op
    totals over the stack and the whole parameters block of the artifact.

    \b
    Examples:
      modelspec show deepseek-v3
      modelspec show qwen3.5-35b-a3b --format json

    Exit codes: 0 shown, 1 the spec fails its check (its problems are
    shown) or its name is stated twice, 2 no spec has that name, no specs/
    folder (outside a spec repository), or usage error.
    """
    from pipeline.catalogue import CatalogueError, entries, find, render_show, show_view
    from pipeline.problems import Severity
    from pipeline.repo import find_repo
    from pipeline.runner import check_file, spec_file_names

    repo = find_repo(root)
    profiles = run_profiles(repo, not no_cache)
    cache = open_cache(repo, profiles, not no_cache)
    try:
        catalogue = entries(spec_file_names([repo.specs]), repo.displays, cache)
    except FileNotFoundError as error:
        raise click.UsageError(str(error)) from None
    save_cache(cache)
    try:
        entry = find(catalogue, name)
    except CatalogueError as error:
        if any(item.name == name for item in catalogue):
            echo(f"modelspec: {error}", err=True)
            raise SystemExit(1) from None
        raise click.BadParameter(str(error), param_hint="NAME") from None
    checked = check_file(entry.path, entry.file, profiles)
    errors = [p for p in checked.result.problems if p.severity is Severity.ERROR]
    if errors or checked.stack is None:
        for problem in checked.result.problems:
            echo(f"{problem.file}:{problem.line}:{problem.column}: {problem.severity.value} "
                       f"[{problem.code}] {problem.message}", err=True)
        echo(f"modelspec: {entry.file} fails its check; fix it to show its stack", err=True)
        raise SystemExit(1)
    view = show_view(checked.spec, checked.stack, checked.tower, entry.file, profiles.get(checked.stack.arch))
    if fmt == "json":
        echo_rendered(json_text(json.dumps(view, indent=2)))
    else:
        echo(render_show(view), nl=False)
