"""A spec repository's layout: where its specs, op profiles and artifacts are.

A spec repository is any folder holding ``specs/`` (and optionally its own
``op_profiles/`` and a ``resolved/`` for artifacts); this project's checkout
is one. Commands find it from ``--root`` or, by default, as the nearest
folder above the current one that holds ``specs/`` or ``.git``, the way git
finds its work tree, so ``modelspec check`` works from any subfolder.
Without an ``op_profiles/`` folder of its own, a repository uses the
profiles bundled with modelspec.

Two ways to name a file: :meth:`SpecRepo.display`, relative to the spec
repository's root, is what artifacts and git selections use (it is the same
wherever the repository sits); :meth:`SpecRepo.report_name`, relative to the
git work tree holding the repository (or the current folder outside git), is
what reports show, since that is the path a CI service finds in the checkout
when the specs sit in a subfolder (``--root catalogue``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

from pipeline.spec.escape import is_plain, printable
from pipeline.spec.resources import bundled_profiles_dir


#: The suffix of an artifact file: ``resolved/<name>.json``.
ARTIFACT_SUFFIX = ".json"


@dataclass(frozen=True)
class SpecRepo:
    """The folders of one spec repository.

    Attributes:
        root: The repository's top folder.
    """

    root: Path

    @property
    def specs(self) -> Path:
        """The catalogue: ``specs/<family>/<model>.yaml``."""
        return self.root / "specs"

    @property
    def resolved(self) -> Path:
        """Where ``regen`` writes the resolved-stack artifacts."""
        return self.root / "resolved"

    @property
    def profiles(self) -> Path:
        """The repository's own ``op_profiles/``, else the bundled ones."""
        own = self.root / "op_profiles"
        return own if own.is_dir() else bundled_profiles_dir()

    @property
    def profiles_chosen_by(self) -> Path:
        """What decides :attr:`profiles`, for a snapshot (:mod:`pipeline.cache.snapshot`) to stat: ``op_profiles/`` as
        named, whether it exists or not (a link to it retargeted stats as another folder; one made where there
        was none is a path that now exists). Not the root: every file made there would change its mtime."""
        return self.root / "op_profiles"

    @functools.cached_property
    def _resolved_root(self) -> Path:
        """The root with its symlinks resolved (once: :meth:`display` runs per file)."""
        return self.root.resolve()

    @functools.cached_property
    def spelled_real(self) -> bool:
        """Whether the root is spelled as its real path, with no symbolic link on the way (``--root`` a link, or
        in a linked folder). Only then are the names reports give the specs their own paths under the root
        (:meth:`report_name`, :meth:`pipeline.check.config.Config.relative`); under a linked root they are the real
        paths of the files, which a link outside ``specs/`` on the way to one decides, and a link or a folder
        renamed there changes no ``stat`` a catalogue snapshot (:mod:`pipeline.cache.snapshot`) records: none is kept."""
        return os.path.abspath(self.root) == str(self._resolved_root)

    def display(self, path: "Path | str") -> str:
        """*path* relative to the root when inside it (a symlink under the root by its own name), forward
        slashes, printable (an undecodable byte of a file name shown as ``\\xff``)."""
        return _relative(path, self._resolved_root)

    @functools.cached_property
    def report_base(self) -> Path:
        """The folder report paths are relative to: the top of the git work tree holding the root; outside
        git, the current folder when the root is inside it, else the root itself (found once per repository
        object: :meth:`report_name` runs per file)."""
        root = self._resolved_root
        for folder in (root, *root.parents):
            if (folder / ".git").exists():
                return folder
        here = Path.cwd().resolve()
        return here if root.is_relative_to(here) else root

    @functools.cached_property
    def reports_displays(self) -> bool:
        """Whether :meth:`report_name` is :meth:`display` (:attr:`report_base` is the root itself, as in a
        checkout of the catalogue): report names kept for a catalogue then serve as its displays."""
        return self.report_base == self._resolved_root

    def report_name(self, path: "Path | str") -> str:
        """*path* as reports show it: as :meth:`display` does, relative to :attr:`report_base`
        (``catalogue/specs/acme/bad.yaml`` for a spec repository in ``catalogue/`` of a git work tree)."""
        return _relative(path, self.report_base)

    def report_names(self, paths: Sequence[str]) -> List[str]:
        """:meth:`report_name` of each of *paths*, a catalogue's worth at once (:func:`_relative_all`)."""
        return _relative_all(paths, self.report_base)

    def displays(self, paths: Sequence[str]) -> List[str]:
        """:meth:`display` of each of *paths*, a catalogue's worth at once (:func:`_relative_all`)."""
        return _relative_all(paths, self._resolved_root)


@functools.lru_cache(maxsize=16)
def _prefix(base: Path) -> str:
    """How the absolute path of a file inside *base* starts, separator included."""
    text = str(base)
    return text if text.endswith(os.sep) else text + os.sep


def _relative(path: "Path | str", base: Path) -> str:
    """*path* relative to *base* when inside it, by its own name first, then with its links resolved; else as
    given. Forward slashes, printable. A path spelled under *base* costs string operations only."""
    text = os.fspath(path)
    normal = text.startswith(os.sep) and "/." not in text and "//" not in text and not text.endswith(os.sep)
    absolute = text if normal else os.path.abspath(text)  # abspath would change nothing: skip its cost
    prefix = _prefix(base)
    if absolute.startswith(prefix):
        return printable(absolute[len(prefix):].replace(os.sep, "/"))
    given = Path(text)
    for candidate in (Path(absolute), _resolved(given)):
        try:
            return printable(candidate.relative_to(base).as_posix())
        except ValueError:
            continue
    return printable(given.as_posix())


def _relative_all(paths: Sequence[str], base: Path) -> List[str]:
    """:func:`_relative` of each of *paths*; the common case (an absolute, normal path under *base*, plain
    text) told apart by string operations alone."""
    prefix = _prefix(base)
    return [path[len(prefix):] if path.startswith(prefix) and is_plain(path) and "/." not in path
            and "//" not in path and not path.endswith("/") else _relative(path, base) for path in paths]


def _resolved(path: Path) -> Path:
    """*path* with its symlinks resolved, or as it is when they loop."""
    try:
        return path.resolve()
    except RuntimeError:
        return path


def find_repo(root: Optional[Path] = None, start: Optional[Path] = None) -> SpecRepo:
    """Return the repository at *root*, or the nearest one above *start* (default: the current folder).

    The nearest folder holding ``specs/`` or ``.git`` wins; with neither
    anywhere above, *start* itself is the root.
    """
    if root is not None:
        return SpecRepo(root)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "specs").is_dir() or (folder / ".git").exists():
            return SpecRepo(folder)
    return SpecRepo(here)
