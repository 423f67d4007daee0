"""Opening a file for reading only when it is a regular file, so that no read blocks or never ends.

A spec repository is a pull request's choice: a FIFO or a link to a device may sit where a spec, a cache entry
or an artifact belongs. Every layer reads through here, so this module imports nothing but the standard library.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import IO, Any

#: Largest spec file read, in bytes (1 MiB). A spec is a few kilobytes; a
#: bigger file is the wrong file, and the cap bounds the parser's work.
MAX_BYTES = 1 << 20


def open_regular(path: "str | os.PathLike[str]", mode: str = "rb", **options: Any) -> IO:
    """*path* (a file of the cache folder, a spec whose bytes are digested) open for reading
    (``os.fdopen(..., mode, **options)``) when it is a regular file: a FIFO put in its place would block the
    open or the read forever, a device (a link to ``/dev/zero``) never end the read.

    Raises:
        OSError: If it cannot be opened, or is not a regular file (``EINVAL``).
    """
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO's open waits for no writer
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        return os.fdopen(descriptor, mode, **options)
    except BaseException:
        os.close(descriptor)
        raise
