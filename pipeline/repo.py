"""A spec repository's layout: where its specs, op profiles and artifacts are.

A spec repository is any folder holding ``specs/`` (and optionally its own
``op_profiles/`` and a ``resolved/`` for artifacts); this project's checkout
is one. Commands find it from ``--root`` or, by default, as the nearest
folder above the current one that holds ``specs/`` or ``.git``, the way git
finds its work tree, so ``modelspec check`` works from any subfolder.
Without an ``op_profiles/`` folder of its own, a repository uses the
profiles bundled with modelspec.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from pipeline.op_profiles import bundled_profiles_dir
from pipeline.problems import printable


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

    @functools.cached_property
    def _resolved_root(self) -> Path:
        """The root with its symlinks resolved (once: :meth:`display` runs per file)."""
        return self.root.resolve()

    @functools.cached_property
    def _root_prefix(self) -> str:
        """The resolved root as the start of the absolute path of a file inside it, separator included."""
        root = str(self._resolved_root)
        return root if root.endswith(os.sep) else root + os.sep

    def display(self, path: Path) -> str:
        """*path* as reports show it: relative to the root when inside it (a symlink under the root by its own
        name), forward slashes, printable (an undecodable byte of a file name shown as ``\\xff``)."""
        absolute = os.path.abspath(path)
        if absolute.startswith(self._root_prefix):
            return printable(absolute[len(self._root_prefix):].replace(os.sep, "/"))
        root = self._resolved_root
        for candidate in (Path(absolute), _resolved(path)):
            try:
                return printable(candidate.relative_to(root).as_posix())
            except ValueError:
                continue
        return printable(path.as_posix())


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
