"""``modelspec fmt``: rewrite spec files in the canonical layout, or ``--check`` that they are.

The layout is :mod:`pipeline.spec.layout`'s. Files that are already canonical are not
touched; a changed file is written whole (:func:`pipeline.catalogue.atomic.write_atomic`),
and a symlinked spec is written through its link: the target gets the
canonical text and the link stays a link. A file reached twice (a link and
its target both under ``specs/``) is formatted once, reported by the name
reports give it (its target's).
A file that does not load strictly is reported on stderr and left alone.
``--check`` says what would change in each file (how many lines, the first
one); ``--diff`` prints the unified diff instead and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Tuple

import click

from pipeline.commands.options import (STDIN_NAME, exclude_option, read_stdin, root_option, run_config, spec_files,
                                       stdin_filename_option)
from pipeline.commands.output import echo, echo_rendered


@click.command(name="fmt", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--check", is_flag=True, help="Write nothing; name the files that would change, say how, and exit 1 "
                                            "if any.")
@click.option("--diff", "show_diff", is_flag=True,
              help="Write nothing; print the unified diff of each file that would change, and exit 1 if any.")
@root_option
@exclude_option
@stdin_filename_option
def command(paths: Tuple[Path, ...], check: bool, show_diff: bool, root: Optional[Path],
            excludes: Tuple[str, ...], stdin_filename: Optional[str]) -> None:
    """Rewrite spec files in the canonical layout.

    Keys in the schema's order (nested records in their own field order),
    block style indented by two, a '---' document start, the header comment
    block kept (its first line the yaml-language-server schema line when the
    repository has schemas/), every comment kept at its key, comment lines
    wrapped at 80 columns: the layout yamllint's default rules pass. Values
    never change.

    \b
    Examples:
      modelspec fmt                          # every spec under specs/
      modelspec fmt specs/qwen/qwen3-8b.yaml
      modelspec fmt --check                  # in CI: exit 1 if a file would change
      modelspec fmt --diff specs/qwen        # show what would change
      modelspec fmt - < a.yaml > b.yaml      # stdin to stdout (an editor's formatter)

    Exit codes: 0 nothing to change (or all written), 1 a file would change
    (--check, --diff), 2 a file fmt cannot read or parse (as ruff), or a
    usage error.
    """
    from pipeline.catalogue.atomic import write_atomic
    from pipeline.spec.writes import home_of, write_refusal
    from pipeline.spec.layout import change_summary, format_files, schema_line, unified_diff
    from pipeline.check.repo import find_repo

    repo = find_repo(root)
    if "-" in map(str, paths):
        _format_stdin(paths, repo, check, show_diff, stdin_filename)
    files = spec_files(paths, repo, run_config(repo), excludes)
    targets = {}
    for path in files:
        targets.setdefault(path.resolve(), path)
    failed = refused = False

    def original(path: Path) -> str:
        return path.read_bytes().decode("utf-8-sig")

    for path, result in format_files(list(targets.values()), repo.report_name, lambda p: schema_line(repo, p)):
        for problem in result.problems:
            echo(f"{problem.file}:{problem.line}:{problem.column}: {problem.severity.value} "
                       f"[{problem.code}] {problem.message}", err=True)
        refused = refused or bool(result.problems)
        if not result.changed:
            continue
        if show_diff:
            echo(unified_diff(original(path), result.text, repo.report_name(path)), nl=False)
            failed = True
            continue
        if check:
            echo(f"would reformat {repo.report_name(path)}: {change_summary(original(path), result.text)}")
            failed = True
            continue
        refused = write_refusal(path, home_of(path, repo.root))
        if refused is not None:  # a spec that is a link, or in a linked folder: its target is not fmt's to rewrite
            echo(f"modelspec: not reformatted: {refused}", err=True)
            failed = True
            continue
        try:
            write_atomic(path, result.text)
        except OSError as error:
            raise click.FileError(str(path), hint=error.strerror) from None
        echo(f"reformatted {repo.report_name(path)}")
    raise SystemExit(2 if refused else 1 if failed else 0)


def _format_stdin(paths: Tuple[Path, ...], repo, check: bool, show_diff: bool, stdin_filename: Optional[str]) -> None:
    """``fmt -``: format the spec on stdin to stdout (``--check``: say whether it would change; ``--diff``: the
    diff); exits. The schema line is worked out for ``--stdin-filename`` when given."""
    from pipeline.spec.layout import change_summary, format_text, schema_line, unified_diff
    from pipeline.spec.yaml_source import MAX_BYTES

    if len(paths) > 1:
        raise click.UsageError("'-' (stdin) is the only spec fmt takes with it; name files without it")
    name = stdin_filename or STDIN_NAME
    raw = read_stdin(MAX_BYTES)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = None
    result = format_text(text, name, schema_line(repo, Path(stdin_filename)) if stdin_filename else None) \
        if text is not None and len(raw) <= MAX_BYTES else None
    problems = result.problems if result is not None else ()
    if result is None:
        from pipeline.spec.yaml_source import load_bytes

        problems = load_bytes(raw, name).problems
    for problem in problems:
        echo(f"{problem.file}:{problem.line}:{problem.column}: {problem.severity.value} [{problem.code}] "
             f"{problem.message}", err=True)
    if result is None or result.text is None:
        raise SystemExit(2)
    if show_diff or check:
        if show_diff:
            echo(unified_diff(text, result.text, name), nl=False)
        elif result.changed:
            echo(f"would reformat {name}: {change_summary(text, result.text)}")
        raise SystemExit(1 if result.changed else 0)
    echo_rendered(result.text, nl=False)
    raise SystemExit(0)
