"""What decides whether a cached answer still holds: modelspec's environment, and when a file's ``stat`` stands
for its bytes; and where the cache folder is.

The result cache (:mod:`pipeline.cache.results`), the artifact cache and the
catalogue snapshots (:mod:`pipeline.cache.snapshot`) all key on these. They live
apart from the result cache because the snapshot's answer must cost no more
than reading a stat per file: this module imports nothing of the check (the
result cache's module imports the runner, and with it every pass, 40 ms).
"""

from __future__ import annotations

import functools
import os
import sys
import time
from pathlib import Path
from typing import Callable, List

try:  # CPython's own BLAKE2, which hashlib.blake2b is too: without hashlib, which loads OpenSSL (3 to 5 ms a run)
    from _blake2 import blake2b
except ImportError:  # another Python
    from hashlib import blake2b

import importlib.util

import pipeline
from pipeline.spec import resources

#: The environment variable that moves the cache folder.
CACHE_DIR_ENV = "MODELSPEC_CACHE_DIR"

#: The cache folder's name under the repository's root.
CACHE_FOLDER = ".modelspec_cache"

#: How much older than its reading a file's mtime must be for its ``stat`` to stand for its bytes (2 s:
#: file systems with a coarse clock tick stamp a rewrite in the same tick with the same mtime).
RACY_NS = 2_000_000_000


#: The clock every cache reads (ns since the epoch) to tell a racy stat: ``time.time_ns``. The one place the cache
#: reads the time, handed in by replacing it (tests/conftest.py's ``frozen_clock``): with a clock that does not
#: move, whether a file written during a run is racy depends on nothing but its mtime, however loaded the machine.
clock: Callable[[], int] = time.time_ns


def now_ns() -> int:
    """The time by :data:`clock`: when a file was read or stat'ed, for the racy rule."""
    return clock()


#: The stat a snapshot or the catalogue index records for a file whose mtime was within :data:`RACY_NS` of its
#: ``stat``: it stands for no bytes, so it matches no stat, and only a run that takes the file itself
#: (:func:`pipeline.cache.snapshot.answer`'s *skipped*) can use the snapshot.
RACY = "?"


def stat_text(status: os.stat_result) -> str:
    """The part of a ``stat`` that changes when a file is rewritten: size, mtime, inode, ctime (ns)."""
    return f"{status.st_size}:{status.st_mtime_ns}:{status.st_ino}:{status.st_ctime_ns}"


def content_digest(data: bytes) -> str:
    """SHA-256 of *data*, in hex: what a record knows a file's bytes by."""
    import hashlib  # pylint: disable=import-outside-toplevel  # only a run that reads a file needs it

    return hashlib.sha256(data).hexdigest()


def fingerprint(data: "bytes | memoryview") -> str:
    """BLAKE2b (128 bits) of *data*, in hex: what a cache file's header knows its key, its environment or its
    body by. Cheap to import: the answers of ``show`` and ``list`` use it and nothing else of hashlib."""
    return blake2b(data, digest_size=16).hexdigest()


def cache_folder(root: Path) -> Path:
    """Where the cache of the repository at *root* lives: ``$MODELSPEC_CACHE_DIR``, else ``root/.modelspec_cache``."""
    moved = os.environ.get(CACHE_DIR_ENV)
    return Path(moved) if moved else root / CACHE_FOLDER


@functools.lru_cache(maxsize=None)
def _folder_digest(folder: Path, pattern: str) -> str:
    """BLAKE2b over the names and bytes of the files of *folder* matching *pattern*, in name order."""
    hasher = blake2b(digest_size=16)
    for path in sorted(folder.rglob(pattern)):
        data = path.read_bytes()
        hasher.update(f"{path.relative_to(folder).as_posix()} {len(data)}\n".encode())
        hasher.update(data)
    return hasher.hexdigest()


@functools.lru_cache(maxsize=None)
def _code_identity(package: str) -> str:
    """Which build of modelspec's own code this is: every module of the package folder *package* with its size
    and mtime, as :func:`_installed` tells a library's build (a source edit, a checkout or a reinstall changes
    them), without reading a module's bytes: every command pays this, ``show`` included."""
    modules: List[str] = []
    folders = [package]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                        folders.append(entry.path)
                    elif entry.name.endswith(".py"):
                        modules.append(entry.path)
        except OSError:
            continue
    identities = "\n".join(_file_identity(path) for path in sorted(modules))
    return fingerprint(identities.encode("utf-8", "surrogateescape"))


#: The libraries whose output is part of a cached answer: PyYAML's parser messages, python-jsonschema's
#: messages and choice of error (it explains an invalid file), jsonschema-rs's verdict (it tells a valid one),
#: junitparser's JUnit XML (a recorded check answer holds the report as written, :mod:`pipeline.cache.whole_check`).
ANSWERING_LIBRARIES = ("yaml", "jsonschema", "jsonschema_rs", "junitparser")


def environment_digest() -> str:
    """What decides every cached answer besides the files it came from: modelspec's version and code, the
    schemas, the Python that runs it (its standard library writes JSON and XML) and the builds of
    :data:`ANSWERING_LIBRARIES`. Each store's own format is its header's business."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # pipeline/, every layer's modules
    parts = [f"modelspec {pipeline.__version__}", f"code {_code_identity(package)}",
             f"schemas {_folder_digest(resources.data_dir('schemas'), '*.json')}", f"python {sys.version}",
             *(_installed(name) for name in ANSWERING_LIBRARIES)]
    return fingerprint("\n".join(parts).encode())


@functools.lru_cache(maxsize=None)
def _installed(name: str) -> str:
    """Which build of the module *name* is installed: the path, size and mtime of its file, and for a package
    of every file in its folder (PyYAML's libyaml binding, ``_yaml*.so``, among them), which a reinstall or an
    upgrade changes; cheaper than asking ``importlib.metadata``. Found without importing it: a run the cache
    answers neither parses YAML nor validates a schema, and importing PyYAML and jsonschema_rs costs 20 ms.
    Found once per process (a run asks for its environment several times)."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    path = (spec.origin if spec is not None else None) or name
    files = [path]
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:  # its modules, not __pycache__ (bytecode comes and goes)
            try:
                files += sorted(os.path.join(folder, entry) for entry in os.listdir(folder)
                                if entry.endswith(_MODULE_SUFFIXES) and os.path.join(folder, entry) != path)
            except OSError:
                continue
    return "\n".join(f"{name} {_file_identity(file)}" for file in files)


#: What a package's module files are named: source and extension modules.
_MODULE_SUFFIXES = (".py", ".so", ".pyd")


def _file_identity(path: str) -> str:
    """*path* with its size and mtime (ns), or alone when it cannot be read."""
    try:
        status = os.stat(path)
    except OSError:
        return path
    return f"{path} {status.st_size} {status.st_mtime_ns}"
