"""Options and error handling that several subcommands share.

``--root`` is every command's; a broken repository (an op profile or schema
that cannot be read) ends any command with its problems on stderr and exit
code 2, distinct from the 1 of bad specs, so a CI gate can tell "your spec is
wrong" from "the repository is broken".
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Callable, Iterator, Optional

import click

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
            click.echo(f"{problem.file}:{problem.line}:{problem.column}: error [{problem.code}] {problem.message}",
                       err=True)
        click.echo("modelspec: the op profiles are broken; fix them before checking specs", err=True)
        raise SystemExit(2) from None


no_cache_option = click.option(
    "--no-cache", is_flag=True,
    help="Neither read nor write the result cache (.modelspec_cache/ at the repository's root, or "
         "$MODELSPEC_CACHE_DIR): check every file afresh.")


def open_cache(repo, profiles, use: bool):
    """The repository's :class:`~pipeline.result_cache.ResultCache`, or ``None`` under ``--no-cache``.

    A cache that cannot be read is an empty one; nothing about the cache ever fails a command.
    """
    if not use:
        return None
    from pipeline.result_cache import ResultCache, cache_folder, cache_keys  # pylint: disable=import-outside-toplevel

    return ResultCache(cache_folder(repo.root), cache_keys(profiles))


def save_cache(cache, quiet: bool = False) -> None:
    """Write the run's new records; if that fails, say so on stderr (unless *quiet*) and go on."""
    if cache is None:
        return
    problem = cache.save()
    if problem is not None and not quiet:
        click.echo(f"modelspec: cannot write the result cache in {cache.folder}: {problem}; the results are "
                   "right, the next run checks again (--no-cache, or MODELSPEC_CACHE_DIR=<folder>, to move it)",
                   err=True)


#: A command over more files than this shows a progress bar on an interactive stderr.
PROGRESS_THRESHOLD = 200


@contextlib.contextmanager
def progress_bar(total: int, label: str) -> Iterator[Optional[Callable[[int], None]]]:
    """``update(n)`` of a progress bar on stderr for a run over *total* files, or ``None``: no bar when stderr
    is not a terminal (a CI log, a pipe) or the run is short."""
    if total < PROGRESS_THRESHOLD or not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update
