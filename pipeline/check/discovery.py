"""Finding spec files: folders expanded into the ``*.yaml``/``*.yml`` files under them, the same way for every
command and for ``--changed-since``.

Kept apart from the passes (:mod:`pipeline.check.runner`) because a check the cache answers walks the
catalogue without checking a file: this module needs nothing but the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple

#: The file name patterns of spec files when a folder is given.
SPEC_SUFFIXES = (".yaml", ".yml")


def find_spec_files(paths: Sequence[Path]) -> List[Path]:
    """Expand folders into the spec files under them (``*.yaml``, ``*.yml``, any case), sorted, each file once.

    The discovery policy, the same for every command and for ``--changed-since``
    (which picks among these files):

    - A path named is kept whatever its suffix or name: the user named it.
    - Under a folder, an entry whose name starts with ``.`` is skipped, file or
      folder: editor and archive leftovers (``.#x.yaml``, ``.archive/``) are
      not the catalogue. ``.gitignore`` is not read: the catalogue is the
      folder, the same in a checkout, an export or a tarball; ``exclude``
      (configuration, ``--exclude``) leaves files out by pattern.
    - Everything else that bears a spec's suffix and is not a folder is kept,
      so a dangling link or a FIFO there is reported, not skipped.
    - A symlinked folder is followed, once: a folder reached again (a link
      loop, or two links to one folder) is not entered twice, and a file
      reached twice is kept once, under the first path found (in path order).
    - A folder that cannot be listed is kept as an entry of its own, which the
      load pass reports (``yaml.unreadable``): a run never passes, and regen
      never removes an artifact, because a folder could not be read.

    Raises:
        FileNotFoundError: If a path does not exist (a dangling symlink included).
        ValueError: If a named path is neither a folder nor a regular file (a
            FIFO would block the read forever).
    """
    return [Path(path) for path in spec_file_names(paths)]


def spec_file_names(paths: Sequence[Path], watched: Optional[Set[str]] = None) -> List[str]:
    """:func:`find_spec_files` as path strings (a catalogue-wide pass over names needs no ``Path`` objects).

    Args:
        paths: The paths named.
        watched: When given, gets every path besides the files found whose ``stat`` (links followed) decides
            what the walk finds: what a snapshot of the walk (:mod:`pipeline.cache.snapshot`) stats. Each folder
            walked, as the walk spelled it: an entry added, removed or renamed changes its mtime, and a link on
            the way retargeted (one outside the folders walked among them) changes which folder it is. And each
            link the walk passed over (to a folder walked already, to a file taken already, to no folder and
            no spec): retargeted, it could lead to specs. And each spec that is a link: retargeted, it could be
            a file taken already, which the walk takes once. A dangling one cannot be stat'ed, so no snapshot
            stands for the walk.
    """
    return [path for path, _ in spec_files_and_reals(paths, watched)]


def spec_files_and_reals(paths: Sequence[Path], watched: Optional[Set[str]] = None) -> List[Tuple[str, str]]:
    """``(path, real path)`` of each of :func:`spec_file_names` (*watched* as there): the file a link among them
    stands for, which is taken once, under the first of its names in path order."""
    found: List[Tuple[str, str, str]] = []
    entered: Set[str] = set()
    for path in paths:
        if path.is_dir():
            # Whatever bears a spec's name is a spec: a dangling link or a FIFO under specs/ is reported
            # (yaml.unreadable), not silently left out.
            found.extend(_folder_specs(os.path.normpath(path), os.path.realpath(path), entered, watched))
        elif path.is_file():
            found.append((_path_key(str(path)), str(path), _real(path)))
        elif path.exists():
            raise ValueError(f"{path}: not a regular file or a folder; name spec files or the folders holding them")
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    found.sort()
    unique: Dict[str, str] = {}
    for _, path, real in found:
        if unique.setdefault(real, path) != path and watched is not None:
            watched.add(path)  # a second name of a file taken: retargeted, it could name another spec
    return [(path, real) for real, path in unique.items()]


def _path_key(path: str) -> str:
    """What ``Path`` sorts *path* by, as a string: its parts in order, so ``a/b`` comes before ``a-b`` (a
    separator that sorts before every character a name can hold)."""
    parts = "\0".join(part for part in path.split(os.sep) if part and part != ".")  # as Path drops them
    if path.startswith(os.sep):  # Path's first part of an absolute path is its root: "/", or "//" (POSIX keeps it)
        root = 2 * os.sep if path.startswith(2 * os.sep) and not path.startswith(3 * os.sep) else os.sep
        return root + "\0" + parts if parts else root
    return parts


def _real(path: Path) -> str:
    """*path* with its symlinks resolved; itself when they loop (then it is reported unreadable by its name)."""
    try:
        return str(path.resolve())
    except RuntimeError:
        return str(path)


def _spec_suffix(name: str) -> bool:
    """Whether a file name has a spec's suffix, as ``Path.suffix`` reads it (``.yaml`` itself has none)."""
    dot = name.rfind(".")
    return 0 < dot < len(name) - 1 and name[dot:].lower() in SPEC_SUFFIXES


def _folder_specs(folder: str, real_folder: str, entered: Set[str],
                  watched: Optional[Set[str]] = None) -> Iterator[Tuple[str, str, str]]:
    """``(sort key, path, real path)`` of each spec-named entry under *folder* that is not a folder, by the
    policy of :func:`find_spec_files`; *entered* holds the real paths of the folders walked so far (loop
    protection), and entries are walked in name order, so the first link to a folder in path order wins.
    *watched* gets the folders and the links passed over, as :func:`spec_file_names` says.

    One ``scandir`` per folder: only a symlink costs a ``stat`` (is it a folder?) and a ``resolve``;
    any other entry's real path is its folder's, which is known.
    """
    if watched is not None:
        watched.add(folder)
    if real_folder in entered:
        return
    entered.add(real_folder)
    key = _path_key(folder) + "\0"
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        yield key[:-1], folder, real_folder  # reported by the load pass: the folder cannot be read
        return
    real_prefix = os.path.join(real_folder, "")  # the folder's real path and a separator, once per folder
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _folder_specs(entry.path, real_prefix + name, entered, watched)
        elif entry.is_symlink() and entry.is_dir():
            yield from _folder_specs(entry.path, os.path.realpath(entry.path), entered, watched)
        elif _spec_suffix(name):
            if not entry.is_symlink():
                yield key + name, entry.path, real_prefix + name
            elif not entry.is_dir():
                if watched is not None:  # retargeted (a link on its way outside specs/ too), it is another
                    watched.add(entry.path)  # file, or one the walk takes already: its stat tells
                yield key + name, entry.path, _real(Path(entry.path))
        elif watched is not None and entry.is_symlink():
            watched.add(entry.path)  # a link to no folder and no spec: retargeted, it could lead to specs
