"""Catalogue snapshots: what ``list`` or ``show`` drew from the whole catalogue, given back while nothing it came
from has changed (and the name map a check of a few files records, :mod:`pipeline.cache.names`, and the answer of a
check of the whole catalogue, :mod:`pipeline.cache.whole_check`).

Both commands answer from every spec under ``specs/``: ``list`` prints a row
per spec, and ``show NAME`` needs every spec's name to know that exactly one
states NAME. When nothing has changed since one of them last did, its
answer is the same. A snapshot records that answer with the ``stat`` of
everything it came from:

- each folder the walk of ``specs/`` entered, as the walk spelled it (a
  link on the way followed): an entry added, removed or renamed in a
  folder changes the folder's mtime, so an unchanged folder means the walk
  would find the same files, and a link on the way retargeted (outside
  ``specs/`` too) makes it another folder;
- each link the walk passed over (to a folder or a file it took already,
  to no folder and no spec), which retargeted could lead to other specs;
- each spec file;
- what chose the op profiles folder (the repository's ``op_profiles/`` as
  named, recorded as missing when there is none, so that making one is a
  change), the folder and each of its profiles.

While every one of those stats is as recorded, and modelspec is the same
(:func:`pipeline.cache.stamps.environment_digest`), the snapshot's answer is the
one the catalogue would give. Checking that costs a ``stat`` per path and nothing else: no
folder is listed, and no spec, profile or cache record is read. This module
imports nothing of the check, so that answer costs no more than that.

A snapshot is taken only around a run that saw the whole catalogue clean.
Every path is stat'ed before the run reads it (:func:`take`:
the profiles before they are loaded, the walk's folders and specs once the
walk, which reads no spec, has found them) and again after it has its
answer (:func:`record`). The snapshot is written only if the
two agree and no mtime is within :data:`~pipeline.cache.stamps.RACY_NS` of the
first stat. Git's racy rule applies here too: a file written in the clock
tick it was stat'ed in could change again and keep its stat.

The file is ``snapshot-<key>`` in the cache folder. Its first line is a
header: the format, the environment, the key, how many stat lines follow,
and a CRC-32 of the rest (:func:`_checksum`). Then come the stat lines
(``path TAB stat``), then the answer. It is written to a temporary file and
renamed, so a reader sees a whole snapshot or none. A file that is torn,
edited or foreign fails its header and is ignored, and so is one that
records no stat of the catalogue folder (:func:`load`): made to record
nothing, it would hold for any tree.
"""

from __future__ import annotations

import json
import os
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, AbstractSet, Callable, Iterable, List, Optional, Sequence, Tuple

from pipeline.spec.files import open_regular
from pipeline.cache.stamps import RACY, RACY_NS, environment_digest, fingerprint, now_ns, stat_text

if TYPE_CHECKING:
    from pipeline.check.repo import SpecRepo

#: The snapshot file's format; a file of another format is ignored.
FORMAT = 2
HEADER = f"modelspec catalogue snapshot, format {FORMAT}"


def key(*parts: str) -> str:
    """The key of the snapshot of an answer that *parts* decide (the command, its format, the repository's
    root): 32 hex digits of BLAKE2b (:func:`pipeline.cache.stamps.fingerprint`)."""
    return fingerprint("\0".join(parts).encode("utf-8", "surrogateescape"))


def repo_key(repo: "SpecRepo", *parts: str) -> str:
    """The key of a command's snapshot (:func:`key`) in *repo*: *parts* (the command, its format), the
    repository's root, and the current folder when that root is relative (the snapshot's paths are spelled
    from it)."""
    return key(*parts, str(repo.root), "" if repo.root.is_absolute() else os.getcwd())


def profiles_chosen(profiles: Path, chosen_by: Path) -> List[str]:
    """The first of the paths a catalogue's answer comes from, stat'ed before the profiles are read: what chose
    the op profiles folder (:attr:`pipeline.check.repo.SpecRepo.profiles_chosen_by`), the folder *profiles* and its
    ``*.yaml`` profiles (:func:`pipeline.pricing.op_profiles.load_op_profiles`)."""
    return [str(chosen_by), *profile_sources(profiles)]


def walked(watched: Iterable[str], files: Sequence[str]) -> List[str]:
    """The rest of those paths, stat'ed after the walk: the folders it entered and the links it passed over
    (*watched*, :func:`pipeline.check.discovery.spec_file_names`), and the spec files it found."""
    return [*sorted(watched), *files]


#: The stat a snapshot records for a path that does not exist (nor is a link): creating it is a change.
MISSING = "-"


def take(paths: Sequence[str]) -> Optional[str]:
    """The stat lines of *paths*, ``path TAB stat`` (:data:`MISSING` for a path that does not exist), one per
    path.

    Returns ``None`` when a snapshot cannot record them: a path cannot be
    stat'ed (a dangling link among them) or holds a line break, or its mtime
    is within :data:`~pipeline.cache.stamps.RACY_NS` of now.
    """
    now = now_ns()
    lines = []
    for path in paths:
        if "\n" in path:
            return None
        try:
            status = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            if os.path.lexists(path):
                return None
            lines.append(f"{path}\t{MISSING}")
            continue
        except (OSError, ValueError):
            return None
        if status.st_mtime_ns + RACY_NS > now:
            return None
        lines.append(f"{path}\t{stat_text(status)}")
    return "\n".join(lines)


def answer(folder: Path, snapshot_key: str, specs: "str | os.PathLike[str]",
           skipped: AbstractSet[str] = frozenset()) -> Optional[str]:
    """The answer the snapshot *snapshot_key* in *folder* records, or ``None``.

    It is ``None`` unless the snapshot is whole, of this environment, of the catalogue *specs* (:func:`load`),
    and every path it records still has the recorded stat, but the paths of *skipped* (:func:`holds`).
    """
    found = load(folder, snapshot_key, specs)
    return found.answer if found is not None and holds(found.lines, skipped) else None


@dataclass(frozen=True)
class Record:
    """A snapshot as read, before any of its stats is checked (:func:`holds`).

    Attributes:
        lines: Its stat lines, ``path TAB stat``, in order.
        answer: The answer it records.
    """

    lines: List[str]
    answer: str


def load(folder: Path, snapshot_key: str, specs: "str | os.PathLike[str]") -> Optional[Record]:
    """The snapshot *snapshot_key* in *folder*, when it is whole (its header's count of lines, its checksum), of
    this environment, and records the stat of the catalogue folder *specs* (as a walk spells it, from the root
    as given or absolute); else ``None``. Every snapshot records it: one that does not (made or edited to
    record nothing, or only paths that do not exist) would hold for any tree, while the folder's ``stat`` is
    one no other machine's checkout has."""
    try:
        with open_regular(folder / f"snapshot-{snapshot_key}") as handle:
            data = handle.read()
    except OSError:
        return None
    cut = data.find(b"\n")
    fields = data[:max(cut, 0)].decode("utf-8", "replace").split("\t")
    if len(fields) != 5 or fields[0] != HEADER or fields[2] != snapshot_key or not fields[3].isdigit():
        return None
    rest = memoryview(data)[cut + 1:]  # a view, not a copy: a catalogue's snapshot is megabytes
    if fields[4] != _checksum(rest) or fields[1] != environment_digest():
        return None
    count = int(fields[3])
    parts = str(rest, "utf-8", "surrogateescape").split("\n", count)
    stating = (f"{os.path.normpath(specs)}\t", f"{os.path.abspath(specs)}\t")
    if len(parts) != count + 1 or not any(line.startswith(stating) for line in parts[:count]):
        return None
    return Record(parts[:count], parts[count])


#: Whether this system stats a name relative to an open folder (POSIX does; Windows does not).
_BY_FOLDER = os.stat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


def holds(lines: Sequence[str], skipped: AbstractSet[str] = frozenset()) -> bool:
    """Whether every ``path TAB stat`` of *lines* still holds, but those of the paths of *skipped* (the files a
    check takes itself: what the answer says of them is not used), which must each be among them. A run of
    paths in one folder is stat'ed by name from the folder (``fstatat``): the kernel looks up one name, not the
    whole path, a sixth less per file."""
    folder, descriptor, stat, sep, passed = None, None, os.stat, os.sep, 0
    try:
        for line in lines:
            path, _, recorded = line.rpartition("\t")
            if path in skipped:
                passed += 1
                continue
            parent, _, name = path.rpartition(sep)
            if parent != folder:
                if descriptor is not None:
                    os.close(descriptor)
                    descriptor = None
                folder = parent
                if parent and name and _BY_FOLDER:
                    descriptor = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
            if recorded == MISSING:
                if os.path.lexists(path):
                    return False
                continue
            status = stat(name, dir_fd=descriptor) if descriptor is not None else stat(path)
            if stat_text(status) != recorded:
                return False
    except (OSError, ValueError):
        return False
    finally:
        if descriptor is not None:
            os.close(descriptor)
    return passed == len(skipped)


#: From this many stat lines on, :func:`holds_soon` has a child process check them. Measured on 2 cores beside a
#: check of one file of a 10k catalogue: a fork costs the parent about 1.4 ms, and :func:`holds` about 6 us a
#: line, so 1,000 lines (6 ms) are worth a child and a shipped catalogue's 50 are not.
CHILD_LINES = 1000


def holds_soon(lines: Sequence[str], skipped: AbstractSet[str] = frozenset(),
               in_child: bool = True) -> Callable[[], bool]:
    """:func:`holds` of *lines* and *skipped*, asked now and answered later: the function returned gives the
    answer, waiting for it if need be, and the same answer when asked again.

    With *in_child*, from :data:`CHILD_LINES` lines on, a forked child process stats them while the caller
    goes on: a check of a few files of a big catalogue reads and checks them meanwhile, on another core.
    Where no child can be started (no ``fork``, a process running more than one thread, whose locks a child
    could find held forever; a fork that fails), or when the child gives no answer, the stats are checked in
    this process when the answer is asked for.
    """
    child = _start_child(lines, skipped) if in_child and len(lines) >= CHILD_LINES else None
    answered: List[bool] = []

    def answer() -> bool:
        if not answered:
            told = _child_answer(*child) if child is not None else None
            answered.append(holds(lines, skipped) if told is None else told)
        return answered[0]
    return answer


def _start_child(lines: Sequence[str], skipped: AbstractSet[str]) -> Optional[Tuple[int, int]]:
    """Fork a child that writes whether *lines* hold (:func:`holds`) as one byte (``1`` or ``0``) to a pipe and
    leaves; the pipe's end to read and the child's pid, or ``None`` when none can be started."""
    threading = sys.modules.get("threading")
    if not hasattr(os, "fork") or (threading is not None and threading.active_count() > 1):
        return None
    try:
        reader, writer = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return None
    if pid == 0:
        try:
            os.close(reader)
            os.write(writer, b"1" if holds(lines, skipped) else b"0")
        finally:
            os._exit(0)  # nothing of the parent's runs here: no exit handler, no buffered output written twice
    os.close(writer)
    return reader, pid


def _child_answer(reader: int, pid: int) -> Optional[bool]:
    """What the child *pid* of :func:`_start_child` wrote to *reader*, once it has left; ``None`` when it wrote
    nothing (it was killed, or failed)."""
    try:
        told = os.read(reader, 1)
    except OSError:
        told = b""
    finally:
        os.close(reader)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:  # reaped already (SIGCHLD ignored)
        pass
    return {b"1": True, b"0": False}.get(told)


def record(folder: Path, snapshot_key: str, paths: Sequence[str], taken: Optional[str], text: str) -> None:
    """Write the snapshot *snapshot_key* of the answer *text* to *folder*.

    Nothing is written unless *paths* still stat as *taken* (:func:`take`
    before the run read anything) said. A snapshot that cannot be written
    is not an error: the next run finds its answer with a full walk.
    """
    if not paths or taken is None or take(paths) != taken:
        return
    _write_snapshot(folder, snapshot_key, len(paths), (taken, "\n", text))




def recorded(status: os.stat_result, now: int) -> str:
    """What a stat line records (as :func:`take` writes it) for *status*, a ``stat`` taken after *now* (ns):
    :data:`RACY` for a racy file."""
    return RACY if status.st_mtime_ns + RACY_NS > now else stat_text(status)


def exists(folder: Path, snapshot_key: str) -> bool:
    """Whether *folder* holds a snapshot *snapshot_key*, whole or not, current or not."""
    return (folder / f"snapshot-{snapshot_key}").exists()


def record_stated(folder: Path, snapshot_key: str, count: int, pieces: Iterable[str]) -> None:
    """Write the snapshot *snapshot_key* to *folder* from *pieces*: its *count* stat lines (:func:`take`,
    :func:`recorded`: a run that found each name under the stat it records), each with its line break, then
    its answer; written as they come, never held whole (a 30k catalogue's is 7 MB). Nothing is written for no
    lines; one that cannot be written is let go."""
    if count:
        _write_snapshot(folder, snapshot_key, count, pieces)


def _write_snapshot(folder: Path, snapshot_key: str, count: int, pieces: Iterable[str]) -> None:
    """Write the snapshot file of *pieces*, its header naming the format, the environment, *snapshot_key* and
    the *count* of its stat lines (:func:`_write`)."""
    _write(folder, folder / f"snapshot-{snapshot_key}",
           "\t".join([HEADER, environment_digest(), snapshot_key, str(count), ""]), pieces)


# ---- a map from name to file ----------------------------------------------------------------------

def name_line(name: Optional[str], display: str, path: str) -> str:
    """The line of a snapshot's name map (``show``'s, ``check``'s) for the spec file at *path*, shown as
    *display*, stating *name* (``None``: none that can be read): the name case-folded and as stated, as JSON,
    then *display* and *path*, each after a tab; a line break ends it."""
    return f"{folded(name)}\t{json.dumps(name)}\t{display}\t{path}\n"


def folded(name: Optional[str]) -> str:
    """*name* case-folded, as JSON (``null`` for none): how a name map's line starts."""
    return json.dumps(None if name is None else name.casefold())


def stating(names: str, name: str) -> List[Tuple[str, str, str]]:
    """``(name as stated, display, path)`` of each line of the name map *names* (:func:`name_line`, in order)
    whose name is *name* compared case-folded."""
    text, needle, found = "\n" + names, f"\n{folded(name)}\t", []
    start = text.find(needle)
    while start != -1:  # every line ends with a line break, the one separator no path in a snapshot holds
        end = text.index("\n", start + 1)
        found.append(_name_fields(text[start + 1:end]))
        start = text.find(needle, end)
    return found


#: How many files :func:`names_files` looks for one at a time in a name map; for more, it lists the map's paths.
_FEW_FILES = 8


def names_files(names: str, paths: AbstractSet[str]) -> bool:
    """Whether the name map *names* has a line for each file of *paths* (its last field), not only a stat line
    of it (a link the walk passed over, a second name of a file it took). A few are each searched for in the
    text (a 10k catalogue's map is a megabyte: about 0.2 ms a search); more, against the map's paths listed."""
    if len(paths) > _FEW_FILES:
        return paths <= {line.split("\t", 3)[3] for line in names.split("\n")[:-1]}
    return all(_names_file(names, path) for path in paths)


def _names_file(names: str, path: str) -> bool:
    needle = f"\t{path}\n"
    start = names.find(needle)
    while start != -1:  # the fields before the path hold no tab (JSON, a printable display): two tabs before it
        if names.count("\t", names.rfind("\n", 0, start) + 1, start) == 2:
            return True
        start = names.find(needle, start + 1)
    return False


def every_name(names: str) -> List[Tuple[str, str, str]]:
    """:func:`stating`'s fields of every line of the name map *names*."""
    return [_name_fields(line) for line in names.split("\n")[:-1]]


def _name_fields(line: str) -> Tuple[str, str, str]:
    _, stated, display, path = line.split("\t", 3)
    return json.loads(stated), display, path


# ---- one spec's view ------------------------------------------------------------------------------

#: The format of a recorded view (``views/<key of its path>`` in the cache folder).
VIEW_HEADER = "modelspec show view, format 2"


def view_key(display: str, stat_lines: str) -> str:
    """The key of ``show``'s view of one spec (:func:`pipeline.catalogue.model_view.show_view`): what decides it, the path
    it is shown under, the stat lines (:func:`take`) of the spec file and the op profiles
    (:func:`profile_sources`), and the environment."""
    return key("view", environment_digest(), display, stat_lines)


def profile_sources(profiles: Path) -> List[str]:
    """The op profiles folder and its profiles, as :func:`profiles_chosen` lists them."""
    folder = profiles.resolve()
    return [str(folder), *(str(path) for path in sorted(folder.glob("*.yaml")))]


def recorded_view(folder: Path, display: str, view: str) -> Optional[str]:
    """The view JSON recorded in *folder* for the spec shown as *display*, when it was recorded under the key *view*;
    else ``None``."""
    try:
        with open_regular(_view_file(folder, display)) as handle:
            data = handle.read()
    except OSError:
        return None
    header, _, body = data.partition(b"\n")
    if header.decode("utf-8", "replace") != f"{VIEW_HEADER}\t{view}\t{_checksum(body)}":
        return None
    return body.decode("utf-8", "surrogateescape")


def record_view(folder: Path, display: str, view: str, text: str) -> None:
    """Record the view JSON *text*, of key *view*, for the spec shown as *display* (one file per spec, the last
    view recorded); one that cannot be written is let go."""
    _write(folder, _view_file(folder, display), f"{VIEW_HEADER}\t{view}\t", (text,))


def _write(folder: Path, path: Path, start: str, pieces: Iterable[str]) -> None:
    """Write *start*, the CRC-32 (:func:`_checksum`) of all that follows its line break, the line break, then
    *pieces*, to *path* in the cache folder *folder*: as they come, summed as written (a 30k
    catalogue's snapshot is 7 MB: held whole, it would double a check's memory), the sum filled in its place
    last; whole or not at all (:func:`pipeline.cache.results.replacing`). What cannot be written (or encoded)
    is let go: a cache's loss costs only a full walk next time."""
    from pipeline.cache.results import prepare_folder, replacing  # pylint: disable=import-outside-toplevel

    head, summed = start.encode("utf-8", "surrogateescape"), 0
    try:
        prepare_folder(folder)
        path.parent.mkdir(exist_ok=True)
        with replacing(path, binary=True) as handle:
            handle.write(head + b"0" * 8 + b"\n")
            for piece in pieces:
                data = piece.encode("utf-8", "surrogateescape")
                summed = zlib.crc32(data, summed)
                handle.write(data)
            handle.seek(len(head))
            handle.write(f"{summed:08x}".encode("ascii"))
    except (OSError, UnicodeError):
        pass


def _checksum(data: "bytes | memoryview") -> str:
    """The CRC-32 of *data*, 8 hex digits: what tells a torn or damaged snapshot or view, as gzip's tells a damaged
    archive, at a fifth of BLAKE2b's cost (0.6 ms against 2.5 ms for the 2.4 MB of a 10,000-spec catalogue's,
    which every ``show`` and ``list`` it answers reads whole). It is no seal, as a digest would not be either:
    whoever can write the cache folder can write a right one, and what guards a snapshot against one made for
    another tree is the stat of the catalogue folder it must record (:func:`load`)."""
    return f"{zlib.crc32(data):08x}"


def _view_file(folder: Path, display: str) -> Path:
    return folder / "views" / key("view file", display)
