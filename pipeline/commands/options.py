"""Options and error handling that several subcommands share.

``--root`` is every command's; a broken repository (an op profile or schema
that cannot be read) ends any command with its problems on stderr and exit
code 2, distinct from the 1 of bad specs, so a CI gate can tell "your spec is
wrong" from "the repository is broken".
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

import click

from pipeline.output import echo

from pipeline.op_profiles import OpProfileError

root_option = click.option(
    "--root", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
    help="The spec repository (holding specs/, and optionally op_profiles/ and resolved/). "
         "Default: the nearest folder above the current one holding specs/ or .git.")


@contextlib.contextmanager
def repository_errors() -> Iterator[None]:
    """Turn a broken op profile into its located problems on stderr and exit code 2."""
    try:
        yield
    except OpProfileError as error:
        for problem in error.problems:
            echo(f"{problem.file}:{problem.line}:{problem.column}: error [{problem.code}] {problem.message}",
                       err=True)
        echo("modelspec: the op profiles are broken; fix them before checking specs", err=True)
        raise SystemExit(2) from None
