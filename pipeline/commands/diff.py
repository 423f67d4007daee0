"""``modelspec diff BASE [HEAD]``: what a change does to the catalogue, as resolved stacks, for a reviewer.

Each side is the catalogue as a git revision has it (its ``specs/`` and, when
it has them, its ``op_profiles/``, exported to a temporary folder) or, for a
missing HEAD, as the working tree has it; both are resolved by this
modelspec, so the comparison shows what the specs and profiles changed, not
what a newer modelspec does differently, and needs no committed
``resolved/``. The comparison and its text and Markdown forms are
:mod:`pipeline.catalogue_diff`'s.

Exit codes: 0 (or 1 with ``--exit-code`` when a model was added, removed or
changed), 2 for a git failure or broken op profiles at a side.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional

import click

from pipeline.commands.git_options import git_errors
from pipeline.commands.options import root_option

#: The label of the working tree side.
WORKING_TREE = "working tree"


@click.command(name="diff", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("base", metavar="BASE")
@click.argument("head", metavar="[HEAD]", required=False)
@root_option
@click.option("--format", "fmt", type=click.Choice(("text", "markdown")), default="text", show_default=True,
              help="text for a terminal or a log, markdown for a pull-request comment.")
@click.option("--exit-code", is_flag=True, help="Exit 1 when a model was added, removed or changed.")
def command(base: str, head: Optional[str], root: Optional[Path], fmt: str, exit_code: bool) -> None:
    """Show what a change does to the catalogue's resolved stacks.

    Compares the catalogue at git revision BASE with HEAD (a revision), or
    with the working tree when HEAD is left out: the models added and
    removed, and for each changed model what moved (layers per kind, MTP
    layers, flavours and op counts, linear-attention dimensions, derived
    widths, the vision tower), e.g. "deepseek-v3: moe 58 -> 57; MTP 1 -> 2".

    \b
    Examples:
      modelspec diff origin/main                   # your change, uncommitted work included
      modelspec diff v1 v2
      modelspec diff HEAD^1 HEAD --format markdown > comment.md   # a PR merge commit

    Exit codes: 0 (1 with --exit-code when something moved), 2 a git
    failure or broken op profiles.
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue_diff import diff_catalogues, render_markdown, render_text
    from pipeline.git_changes import check_revision
    from pipeline.repo import find_repo

    repo = find_repo(root)
    with git_errors():
        for rev in filter(None, (base, head)):
            check_revision(rev)
    with tempfile.TemporaryDirectory(prefix="modelspec-diff-") as scratch:
        before = _catalogue(repo, base, Path(scratch) / "base")
        after = _catalogue(repo, head, Path(scratch) / "head") if head else _working_tree(repo)
    result = diff_catalogues(before, after)
    click.echo(render_markdown(result) if fmt == "markdown" else render_text(result), nl=False)
    raise SystemExit(1 if exit_code and not result.empty else 0)


def _loaded(repo, label: str, shown_root: str):
    """Load *repo*'s catalogue; broken op profiles end the command with their problems and exit code 2."""
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue_diff import load_catalogue
    from pipeline.op_profiles import OpProfileError

    try:
        return load_catalogue(repo, label)
    except OpProfileError as error:
        for problem in error.problems:
            shown = problem.file.replace(str(repo.root.resolve()) + "/", shown_root)
            click.echo(f"{shown}:{problem.line}:{problem.column}: error [{problem.code}] {problem.message}", err=True)
        click.echo(f"modelspec: the op profiles at {label} are broken; fix them before comparing", err=True)
        raise SystemExit(2) from None


def _catalogue(repo, rev: str, scratch: Path):
    """The catalogue as revision *rev* has it, exported into *scratch*."""
    # pylint: disable=import-outside-toplevel
    from pipeline.git_changes import export_revision
    from pipeline.repo import SpecRepo

    scratch.mkdir()
    with git_errors():
        export_revision(repo.root, rev, [repo.display(repo.specs), "op_profiles"], scratch)
    return _loaded(SpecRepo(scratch), rev, f"{rev}:")


def _working_tree(repo):
    """The catalogue as the working tree has it."""
    return _loaded(repo, WORKING_TREE, "")
