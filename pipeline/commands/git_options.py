"""``--changed-since REF`` for ``check`` and ``regen``, and how a git failure ends a command.

The option narrows a command's spec files to those a change touches
(:func:`pipeline.catalogue.git.select_specs`) and says on stderr what it chose
and which specs were removed, so stdout keeps only the report (JSON, SARIF
and the like stay parseable). A git failure (an unknown or option-like
revision, a shallow clone without the merge base, no repository) ends the
command with its message and exit code 2, the code of a usage or repository
error, never a silent full or empty run.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import click

from pipeline.spec.escape import printable
from pipeline.commands.output import echo

if TYPE_CHECKING:
    from pipeline.pricing.op_profiles import OpProfiles
    from pipeline.check.repo import SpecRepo

changed_since_option = click.option(
    "--changed-since", metavar="REF", default=None,
    help="Only the specs changed since the merge base of REF and HEAD (working tree included), plus those a "
         "changed op profile touches (every spec when the modelspec the repository pins changed); deleted specs "
         "are reported as removed. E.g. --changed-since origin/main.")


class GitFailure(click.ClickException):
    """A git question the command needed answered failed; exit code 2."""

    exit_code = 2


@contextlib.contextmanager
def git_errors() -> Iterator[None]:
    """Turn a :class:`~pipeline.catalogue.git.GitError` into ``Error: <message>`` on stderr and exit code 2."""
    from pipeline.catalogue.git import GitError  # pylint: disable=import-outside-toplevel

    try:
        yield
    except GitError as error:
        raise GitFailure(str(error)) from None


def _scope(repo: SpecRepo, paths: Sequence[Path]) -> List[str]:
    """The root-relative prefixes under which a deleted spec counts as removed: each folder named, or each file."""
    return [repo.display(path).rstrip("/") + ("/" if path.is_dir() or not path.exists() else "") for path in paths]


def _catalogue_prefixes(repo: SpecRepo, paths: Sequence[Path]) -> List[str]:
    """The root-relative prefixes of the catalogue's folders (``specs/``, and each folder named or configured):
    a spec changed under one that the run does not check is left out by the configuration or the files named."""
    return sorted({repo.display(path).rstrip("/") + "/" for path in (repo.specs, *paths) if path.is_dir()})


def rule_folders(repo: SpecRepo) -> List[str]:
    """The root-relative folders the running modelspec reads its rules from (its package, its schemas) that lie
    in *repo*: in modelspec's own checkout, ``pipeline/`` and ``schemas/``; for an installed modelspec, none."""
    import pipeline  # pylint: disable=import-outside-toplevel
    from pipeline.spec.resources import data_dir  # pylint: disable=import-outside-toplevel

    root = repo.root.resolve()
    folders = [Path(pipeline.__file__).resolve().parent, data_dir("schemas").resolve()]
    return [folder.relative_to(root).as_posix() + "/" for folder in folders if folder.is_relative_to(root)]


def _catalogue_name(repo: SpecRepo, by_display: Mapping[str, Path]) -> Callable[[str], Optional[str]]:
    """The catalogue's name for the spec file at an absolute path git names: its display when the catalogue
    takes it so; else the spec that is a symlink to it; else (a folder reached through a symlink:
    ``specs -> data/specs``, ``specs/ext -> ../vendor``, ``op_profiles -> shared/op_profiles``) its name in the
    catalogue's folder, or the op profiles', that is that folder (a deleted file too); else ``None``. The real
    paths are found once, when a name first needs them."""
    linked: Dict[str, str] = {}  # the real path of each spec that is a symlink: its name
    folders: Dict[str, str] = {}  # the real path of each folder of the catalogue, and of the op profiles: its name

    def name(path: str) -> Optional[str]:
        display = repo.display(path)
        if display in by_display:
            return display
        if not folders:
            for file_display, file in by_display.items():
                if os.path.islink(file):
                    linked.setdefault(os.path.realpath(file), file_display)
            for folder, shown in {os.path.dirname(os.fspath(file)): posixpath.dirname(file_display)
                                  for file_display, file in by_display.items()}.items():
                folders.setdefault(os.path.realpath(folder), shown)
            folders.setdefault(os.path.realpath(repo.profiles), repo.display(repo.profiles))
        real = os.path.realpath(path)
        if real in linked:
            return linked[real]
        folder = folders.get(os.path.realpath(os.path.dirname(path)))
        return None if folder is None else f"{folder}/{printable(os.path.basename(path))}"
    return name


def ask_changes(repo: SpecRepo, ref: str) -> Any:
    """Put ``--changed-since``'s git questions at once (:class:`~pipeline.catalogue.git.ChangesAsked`), for
    :func:`changed_files` to take the answers from once the command has walked its catalogue."""
    from pipeline.catalogue.git import ChangesAsked  # pylint: disable=import-outside-toplevel

    return ChangesAsked(repo.root, ref, rule_folders(repo))


def changed_files(repo: SpecRepo, ref: str, files: Sequence[Path], profiles: OpProfiles,
                  paths: Sequence[Path], quiet: bool = False, asked: Any = None,
                  displays: Optional[Sequence[str]] = None) -> Tuple[List[Path], Any]:
    """Return the files among *files* that the change since *ref* touches, and the
    :class:`~pipeline.catalogue.git.Selection` (the run's scope), saying on stderr what was chosen (unless *quiet*).

    Args:
        repo: The spec repository.
        ref: The revision to compare with.
        files: The spec files the command would check otherwise.
        profiles: The op profiles (to tell each spec's arch when a profile changed).
        paths: The folders or files the user named (default: ``specs/``), scoping the removed specs.
        quiet: Say nothing (``check --quiet``: nothing on success).
        asked: The git questions, when the command put them already (:func:`ask_changes`).
        displays: The displays of *files* (:meth:`~pipeline.check.repo.SpecRepo.displays`), in order, when the
            command knows them already (:attr:`pipeline.cache.names.Walked.displays`).

    Raises:
        GitFailure: If the change cannot be computed (exit code 2).
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.git import select_specs, spec_facts

    if displays is None:
        displays = repo.displays([str(path) for path in files])  # a catalogue's worth at once
    by_display = dict(zip(displays, files))
    own_profiles = repo.profiles.resolve().is_relative_to(repo.root.resolve())
    with git_errors():
        changes = (asked or ask_changes(repo, ref)).changes(_catalogue_name(repo, by_display))
    selection = select_specs(changes, sorted(by_display), lambda display: spec_facts(by_display[display], profiles),
                             repo.display(repo.profiles) + "/" if own_profiles else None, _scope(repo, paths),
                             rule_folders(repo), changes.pin, _catalogue_prefixes(repo, paths))
    for line in () if quiet else selection.summary():
        echo(line, err=True)
    return [by_display[display] for display in selection.specs], selection
