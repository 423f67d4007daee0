"""Options and error handling that several subcommands share.

``--root`` is every command's, ``--select``/``--ignore`` and the
configuration (:func:`run_config`, :func:`spec_files`) those of the commands
that take spec files; a broken repository (an op profile or schema
that cannot be read) ends any command with its problems on stderr and exit
code 2, distinct from the 1 of bad specs, so a CI gate can tell "your spec is
wrong" from "the repository is broken".
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional, Sequence, Set, Tuple

import click

from pipeline.commands.output import echo

if TYPE_CHECKING:
    from pipeline.check.config import Config
    from pipeline.pricing.op_profiles import OpProfiles
    from pipeline.check.repo import SpecRepo
    from pipeline.cache.results import ResultCache

root_option = click.option(
    "--root", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
    help="The spec repository (holding specs/, and optionally op_profiles/ and resolved/). "
         "Default: the nearest folder above the current one holding specs/ or .git.")


@contextlib.contextmanager
def repository_errors() -> Iterator[None]:
    """Turn a broken op profile into its located problems on stderr and exit code 2."""
    from pipeline.pricing.op_profiles import OpProfileError  # pylint: disable=import-outside-toplevel

    try:
        yield
    except OpProfileError as error:
        for problem in error.problems:
            echo(f"{problem.file}:{problem.line}:{problem.column}: error [{problem.code}] {problem.message}",
                 err=True)
        echo("modelspec: the op profiles are broken; fix them before checking specs", err=True)
        raise SystemExit(2) from None


def run_profiles(repo: "SpecRepo", use_cache: bool = True) -> "OpProfiles":
    """The op profiles of *repo*, kept checked in its result cache folder unless *use_cache* is false
    (``--no-cache``); broken ones end the command as :func:`repository_errors` says."""
    from pipeline.cache.results import ProfileCache  # pylint: disable=import-outside-toplevel
    from pipeline.cache.stamps import cache_folder  # pylint: disable=import-outside-toplevel
    from pipeline.pricing.op_profiles import load_op_profiles  # pylint: disable=import-outside-toplevel

    with repository_errors():
        return load_op_profiles(repo.profiles, ProfileCache(cache_folder(repo.root)) if use_cache else None)


@dataclass(frozen=True)
class WalkedCatalogue:
    """The whole catalogue as ``list`` and ``show`` read it by a full walk.

    Attributes:
        profiles: The op profiles (:func:`run_profiles`).
        files: Every spec file under ``specs/`` (:func:`pipeline.check.discovery.spec_file_names`).
        cache: The result cache, or ``None`` under ``--no-cache``.
        sources: What the command's snapshot comes from (:func:`pipeline.cache.snapshot.profiles_chosen`, then
            :func:`pipeline.cache.snapshot.walked`).
        taken: Their stat lines, taken before any spec was read (:func:`pipeline.cache.snapshot.take`); ``None`` when
            no snapshot may be recorded.
    """

    profiles: "OpProfiles"
    files: List[str]
    cache: Optional["ResultCache"]
    sources: List[str]
    taken: Optional[str]


def walk_catalogue(repo: "SpecRepo", no_cache: bool) -> WalkedCatalogue:
    """Load the profiles, walk ``specs/``, stat what a snapshot of the answer would come from, open the cache.

    Raises:
        click.UsageError: If there is no ``specs/`` folder.
    """
    from pipeline.cache import snapshot  # pylint: disable=import-outside-toplevel
    from pipeline.check.discovery import spec_file_names as found_names  # pylint: disable=import-outside-toplevel

    # Each source is stat'ed before what it stands for is read: the profiles before they are loaded, the
    # folders and specs the walk finds (it reads no spec) after the walk.
    chosen = snapshot.profiles_chosen(repo.profiles, repo.profiles_chosen_by)
    taken = snapshot.take(chosen) if not no_cache and repo.spelled_real else None
    profiles = run_profiles(repo, not no_cache)
    watched: Set[str] = set()
    try:
        files = found_names([repo.specs], watched)
    except FileNotFoundError as error:
        raise click.UsageError(str(error)) from None
    walked = snapshot.walked(watched, files)
    walked_taken = snapshot.take(walked) if taken is not None else None
    taken = f"{taken}\n{walked_taken}" if walked_taken is not None else None  # as take(chosen + walked) says
    return WalkedCatalogue(profiles, files, open_cache(repo, profiles, not no_cache), chosen + walked, taken)


def run_config(repo: "SpecRepo") -> "Config":
    """The configuration of *repo* (:func:`pipeline.check.config.load_config`); a broken one ends the command with
    its located problems on stderr and exit code 2."""
    from pipeline.check.config import ConfigError, load_config  # pylint: disable=import-outside-toplevel
    from pipeline.spec.problems import LazyCodes  # pylint: disable=import-outside-toplevel

    try:
        return load_config(repo.root, repo.report_base, LazyCodes(), lambda path: repo.report_name(path))
    except ConfigError as error:
        for problem in error.problems:
            echo(f"{problem.file}:{problem.line}:{problem.column}: error [{problem.code}] {problem.message}",
                 err=True)
        echo("modelspec: the configuration is broken; fix it before checking specs", err=True)
        raise SystemExit(2) from None


exclude_option = click.option(
    "--exclude", "excludes", multiple=True, metavar="PATTERN",
    help="Leave out the files found under a folder that match this glob pattern, as the configuration's exclude "
         "does (relative to its folder, else the repository's root; e.g. 'specs/drafts/*'); repeatable. A file "
         "named is always taken; hidden files and folders are always left out.")


def spec_files(paths: Sequence[Path], repo: "SpecRepo", config: "Config", excludes: Sequence[str] = ()) -> List[Path]:
    """The spec files a command takes: *paths*, else the configuration's ``specs``, else ``specs/``; the
    configuration's ``exclude`` and *excludes* (``--exclude``) leave out files found under a folder (a file
    named is always taken). Discovery is :func:`pipeline.check.discovery.find_spec_files`'s policy.

    Raises:
        click.UsageError: If a path does not exist or is neither a file nor a folder.
    """
    return [Path(path) for path in spec_file_names(paths, repo, config, excludes)]


def spec_file_names(paths: Sequence[Path], repo: "SpecRepo", config: "Config",
                    excludes: Sequence[str] = (), watched: Optional[Set[str]] = None) -> List[str]:
    """:func:`spec_files` as path strings: ``check`` over a catalogue the result cache answers builds no
    ``Path`` per file (a tenth of a warm run's time at 10,000 files). *watched* gets the folders and links the
    walk saw (:func:`pipeline.check.discovery.spec_file_names`).

    Raises:
        click.UsageError: If a path does not exist or is neither a file nor a folder.
    """
    from pipeline.check.discovery import spec_file_names as found_names  # pylint: disable=import-outside-toplevel

    named = list(paths) or list(config.specs) or [repo.specs]
    try:
        found = found_names(named, watched)
    except (FileNotFoundError, ValueError) as error:
        raise click.UsageError(str(error)) from None
    if excludes:
        import dataclasses  # pylint: disable=import-outside-toplevel

        config = dataclasses.replace(config, exclude=(*config.exclude, *excludes))
    if not config.exclude:  # nothing to leave out (a catalogue's worth of Path.absolute() saved)
        return found
    explicit = {Path(path).absolute() for path in named if not Path(path).is_dir()}
    return [path for path in found if Path(path).absolute() in explicit or not config.excluded(Path(path))]


def _parse_codes(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> Tuple[str, ...]:
    """Comma-separated codes or prefixes, each one a code modelspec reports (else a usage error)."""
    selectors = tuple(part.strip() for value in values for part in value.split(",") if part.strip())
    if not selectors:  # no code named: the codes need not be gathered (every module imported)
        return selectors
    from pipeline.check.config import unknown_selector  # pylint: disable=import-outside-toplevel
    from pipeline.spec.problems import all_codes  # pylint: disable=import-outside-toplevel

    codes = tuple(all_codes())
    for selector in selectors:
        reason = unknown_selector(selector, codes)
        if reason:
            raise click.BadParameter(reason, ctx, param)
    return selectors


select_option = click.option(
    "--select", metavar="CODES", multiple=True, callback=_parse_codes,
    help="Report only the warnings of these codes or code prefixes (comma-separated, repeatable; replaces the "
         "configuration's select). Errors are always reported.")
ignore_option = click.option(
    "--ignore", metavar="CODES", multiple=True, callback=_parse_codes,
    help="Do not report the warnings of these codes or code prefixes (comma-separated, repeatable; added to the "
         "configuration's ignore). Errors are always reported.")


jobs_option = click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=None,
    help="Worker processes. Default: the cores other work leaves idle (by the load average), for "
         "runs large enough to pay for starting them (a few hundred files to check); small runs, and "
         "files the result cache answers, stay in one process.")


no_cache_option = click.option(
    "--no-cache", is_flag=True,
    help="Neither read nor write the result cache (.modelspec_cache/ at the repository's root, or "
         "$MODELSPEC_CACHE_DIR): check every file afresh.")


def open_cache(repo, profiles, use: bool):
    """The repository's :class:`~pipeline.cache.results.ResultCache`, or ``None`` under ``--no-cache``.

    A cache that cannot be read is an empty one; nothing about the cache ever fails a command. A profile
    removed since *profiles* were read leaves the run no key to file its results under: it runs uncached.
    """
    if not use:
        return None
    from pipeline.cache.results import ResultCache, cache_keys  # pylint: disable=import-outside-toplevel
    from pipeline.cache.stamps import cache_folder  # pylint: disable=import-outside-toplevel

    try:
        keys = cache_keys(profiles)
    except OSError:
        return None
    return ResultCache(cache_folder(repo.root), keys)


def save_cache(cache, quiet: bool = False) -> bool:
    """Write the run's new records; if that fails, say so on stderr (unless *quiet*) and go on. Whether they
    were written (``False`` for no cache)."""
    if cache is None:
        return False
    problem = cache.save()
    if problem is not None and not quiet:
        echo(f"modelspec: cannot write the result cache in {cache.folder}: {problem}; the results are right, "
             "the next run checks again (--no-cache, or MODELSPEC_CACHE_DIR=<folder>, to move it)", err=True)
    return problem is None


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


#: How commands name text read from stdin (``-``) in their reports, unless ``--stdin-filename`` says otherwise.
STDIN_NAME = "-"


def read_stdin(limit: int) -> bytes:
    """Standard input's bytes, at most *limit* + 1 of them (so a caller can tell a too-large input)."""
    import sys  # pylint: disable=import-outside-toplevel

    return sys.stdin.buffer.read(limit + 1)


stdin_filename_option = click.option(
    "--stdin-filename", metavar="PATH", default=None,
    help="With '-' (read the spec from stdin): the path reports name it by, and that per-file-ignores and "
         "the schema line are worked out for. Default: '-'.")
