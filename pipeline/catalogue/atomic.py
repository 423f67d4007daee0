"""Writing a file whole or not at all.

Every file modelspec writes (reports, formatted specs, imported specs,
resolved artifacts) goes through :func:`write_atomic`: the text is written to a
temporary file in the destination's own folder, flushed to disk, then renamed
over the destination. A rename within one filesystem is atomic on POSIX and
Windows, so a reader, or a run killed at any moment, sees the old file or the
new one, never a half-written one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Dict, Optional, Sequence, Tuple


def _mode_for(path: Path) -> int:
    """The permissions a file replacing *path* gets: the old regular file's, or ``0644``."""
    try:
        return stat.S_IMODE(path.lstat().st_mode) if path.is_file() and not path.is_symlink() else 0o644
    except FileNotFoundError:
        return 0o644


#: Files in one :class:`Batch` from which one ``sync(2)`` replaces a ``fsync`` per file. On ext4 each ``fsync`` is
#: a journal commit (about 2.7 ms on the 2-core machine of issue 28, so 27 s for the 10,000 artifacts of a regen
#: from empty); one ``sync`` writes the same data with one commit.
SYNC_FROM = 16


def _sync_all() -> bool:
    """Flush every file written so far to disk at once; whether the platform did.

    Linux's ``sync(2)`` returns once the data is written (POSIX lets it return before, and other systems' does),
    so only there; elsewhere the caller flushes each file.
    """
    if not sys.platform.startswith("linux"):
        return False
    os.sync()
    return True


class Batch:
    """Many files replaced whole, as :func:`write_atomic` replaces one, with one flush to disk for all of them.

    :meth:`stage` writes each text to its temporary file ``.<name>.<random>.tmp`` beside its destination (not yet
    flushed); :meth:`flush` puts every staged file on disk (one ``sync`` from :data:`SYNC_FROM` files on
    Linux, else a ``fsync`` of each); :meth:`commit` then renames one staged file over
    its destination. So each destination holds its old bytes or its new ones, never half of them, and no rename
    happens before its bytes are on disk: what :func:`write_atomic` promises, for one journal commit instead of one
    per file. :meth:`discard` removes what was staged and not committed (a run killed in between leaves
    ``.*.tmp`` files, which :func:`pipeline.catalogue.regen.remove_leftovers` removes).
    """

    def __init__(self) -> None:
        self._staged: Dict[Path, Tuple[str, int]] = {}  # destination -> (temporary file, mode)
        self._flushed = False

    def stage(self, path: Path, text: str) -> None:
        """Write *text* (UTF-8, ``\\n`` line endings) to a temporary file for *path*, in its folder.

        Raises:
            OSError: If the folder is missing or not writable (the temporary file is removed).
        """
        self.adopt(path, stage_file(path, text))

    def adopt(self, path: Path, tmp: str) -> None:
        """Take *tmp*, a temporary file :func:`stage_file` wrote for *path* (another process may have), as its
        staged file: flushed, committed or discarded as one :meth:`stage` wrote."""
        self._staged[path] = (tmp, _mode_for(path))
        self._flushed = False

    def flush(self) -> None:
        """Put every staged file's bytes on disk.

        Raises:
            OSError: If a file cannot be flushed.
        """
        if len(self._staged) < SYNC_FROM or not _sync_all():
            for tmp, _ in self._staged.values():
                descriptor = os.open(tmp, os.O_RDWR)
                try:
                    os.fsync(descriptor)
                finally:
                    os.close(descriptor)
        self._flushed = True

    def commit(self, path: Path) -> None:
        """Rename *path*'s staged file over it, with the mode it keeps; call after :meth:`flush`.

        Raises:
            OSError: If it cannot be renamed (the staged file is removed).
        """
        if not self._flushed:
            raise ValueError("flush a batch before committing a file of it")
        tmp, mode = self._staged.pop(path)
        _move_into_place(tmp, mode, path)

    def discard(self) -> None:
        """Remove every staged file not committed."""
        for tmp, _ in self._staged.values():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self._staged.clear()


def write_atomic(path: Path, text: str) -> None:
    """Replace *path* with *text* (UTF-8, ``\\n`` line endings) atomically.

    The destination's folder must exist. The temporary file is named
    ``.<name>.<random>.tmp`` beside it and is removed if writing fails. The
    new file keeps the old regular file's permissions, or gets ``0644`` (a
    symlink is replaced by the file, never followed: use :func:`write_output`
    to follow it).

    Raises:
        OSError: If the folder is missing or not writable.
    """
    mode = _mode_for(path)
    _move_into_place(_temporary(path, text, durable=True), mode, path)


def stage_file(path: Path, text: str) -> str:
    """Write *text* (UTF-8, ``\\n`` line endings) to a new temporary file ``.<name>.<random>.tmp`` beside *path*,
    not yet flushed to disk; its path (for :meth:`Batch.adopt`).

    Raises:
        OSError: If the folder is missing or not writable (the temporary file is removed).
    """
    return _temporary(path, text, durable=False)


def _temporary(path: Path, text: str, durable: bool) -> str:
    """Write *text* to a new temporary file beside *path* (as :func:`tempfile.mkstemp` makes one: a random name,
    created exclusively, mode ``0600``), flushed to disk when *durable*; its path.

    Raises:
        OSError: If the folder is missing or not writable (the temporary file is removed).
    """
    data = text.encode("utf-8")  # a str's "\n" is the file's: no newline translation, as newline="\n" gives
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return tmp


def _move_into_place(tmp: str, mode: int, path: Path) -> None:
    """Give the written temporary file *tmp* the permissions *mode* and rename it over *path*; on failure it is
    removed and the error raised."""
    try:
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def report_target_refusal(path: Path, protected: Sequence[Path]) -> Optional[str]:
    """Why a report must not be written to *path*, or ``None`` when it may.

    A checkout is the pull request's: a symbolic link committed where CI
    writes ``modelspec.sarif`` would make the run overwrite whatever file the
    link names. So a report is never written through a link, at the path or
    at a folder of a relative path, unless the link names a terminal or a
    pipe (``/dev/stdout``); and never onto one of *protected* (the specs
    being checked, and any file in the repository's own folders).
    """
    if path.is_symlink() and not _is_stream(path):
        return (f"{path} is a symbolic link; a report is never written through one (a checkout may carry a link to "
                "any file): remove the link or name another file")
    if not path.is_absolute():
        for folder in list(path.parents)[:-1]:
            if folder.is_symlink():
                return (f"{folder} is a symbolic link; a report is never written through one (a checkout may carry "
                        "a link to any folder): name a file in a real folder")
    target = Path(os.path.realpath(path))
    for kept in protected:
        kept_real = Path(os.path.realpath(kept))
        if target == kept_real or kept_real in target.parents:
            what = "a spec being checked" if target == kept_real else f"in {kept}, which modelspec reads"
            return f"{path} is {what}; a report never replaces it: name another file"
    return None


def is_stream(path: Path) -> bool:
    """Whether *path* is a link naming a terminal or a pipe (``/dev/stdout``): written in place, never replaced,
    so the write rule's refusal of links (:mod:`pipeline.spec.writes`) does not apply to it."""
    return path.is_symlink() and _is_stream(path)


def _is_stream(path: Path) -> bool:
    """Whether *path* (a link) names a character device or a FIFO: a terminal or a pipe, written in place."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def write_output(path: Path, text: str) -> None:
    """Write a report to *path* the way a shell redirection would, but never half-written.

    A regular file (or a new one) is replaced atomically (:func:`write_atomic`);
    a symlink is followed, so the link stays and its target gets the text; a
    device or a FIFO (``/dev/stdout``, a named pipe) is written in place,
    since renaming over it would replace the device with a regular file.

    Raises:
        OSError: If the folder is missing, not writable, or *path* is a folder.
    """
    if path.is_symlink() and _is_stream(path):  # /dev/stdout: a link to /proc/self/fd/1, which names no file
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        return
    if path.is_symlink():
        try:
            path = path.resolve(strict=False)
        except RuntimeError as error:  # a symlink loop
            raise OSError(40, "a symlink loop", str(path)) from error
    if path.exists() and not path.is_file():
        if path.is_dir():
            raise IsADirectoryError(21, "is a folder", str(path))
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        return
    write_atomic(path, text)
