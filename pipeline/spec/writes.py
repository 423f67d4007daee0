"""The one rule every command that writes obeys: never through a symbolic link, never outside where it may write.

A checkout is a pull request's: a link committed where modelspec writes (a spec, ``resolved/``, the cache folder,
the site's folder) would have ``fmt``, ``check --fix``, ``import -o``, ``regen``, ``site`` or the result cache
replace whatever file the link names, outside the repository. So before each write the command asks
:func:`write_refusal` (or :func:`refuse_write`, which raises): the path must lie in the folder the write belongs
to (*within*: the repository, the output folder named, the cache folder), and no part of it below that folder
(the file included) may be a link. The folder itself may be reached through links (``/tmp`` on macOS); a caller
that must not follow even it (the cache folder, the site's output) asks :func:`link_refusal` of it first.

This module is the lowest layer's, so every writer can import it; it imports nothing but the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional


class WriteRefused(OSError):
    """A write the rule refuses; its message names the path and why (``strerror`` holds it too)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.strerror = why


def link_refusal(path: "str | os.PathLike[str]", what: str) -> Optional[str]:
    """Why the folder or file *path* (*what* it is, e.g. ``"the cache folder"``) may not be written into, or
    ``None``: it is a symbolic link."""
    if os.path.islink(path):
        return (f"{os.fspath(path)} ({what}) is a symbolic link; modelspec never writes through one (a checkout may "
                f"carry a link to any folder or file): remove the link")
    return None


def write_refusal(path: "str | os.PathLike[str]", within: "str | os.PathLike[str]") -> Optional[str]:
    """Why *path* may not be written, or ``None`` when it may: it lies outside the folder *within*, or a part of
    it below *within* (a folder on the way, or the file itself) is a symbolic link. Neither path's links are
    followed to decide where it lies (``os.path.abspath``, not ``realpath``).

    Strings, not ``Path``: ``regen`` asks this of every artifact it writes (10,000 in a catalogue of that size).
    """
    target, base = os.path.abspath(path), os.path.abspath(within)
    if target != base and not target.startswith(base if base.endswith(os.sep) else base + os.sep):
        return f"{os.fspath(path)} is outside {os.fspath(within)}; modelspec writes only inside it"
    current = base
    for part in target[len(base):].split(os.sep):
        if not part:
            continue
        current = os.path.join(current, part)
        if os.path.islink(current):
            return (f"{current} is a symbolic link; modelspec never writes through one (a checkout may carry a link "
                    f"to any file): remove the link, or write the file it names yourself")
    return None


def refuse_write(path: "str | os.PathLike[str]", within: "str | os.PathLike[str]") -> None:
    """Raise :class:`WriteRefused` when :func:`write_refusal` refuses writing *path*.

    Raises:
        WriteRefused: Naming the path and why.
    """
    why = write_refusal(path, within)
    if why is not None:
        raise WriteRefused(why)


def home_of(path: "str | os.PathLike[str]", root: "str | os.PathLike[str]") -> Path:
    """The folder a write of the file *path* must stay in: the repository *root* when *path* lies in it, else
    the file's own folder (a file named outside any repository: only it, and no link in its place)."""
    target = Path(os.path.abspath(path))
    base = Path(os.path.abspath(root))
    return base if base in target.parents else target.parent
