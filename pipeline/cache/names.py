"""The names of the specs a check leaves out, for the duplicate-name rule: from a snapshot of the catalogue's
names while nothing but the checked files has changed since it was recorded, else from every other spec.

A check of a few files (``check FILE``, ``--changed-since``) must still
know every other spec's name: two specs of one name, compared case-folded,
would write one artifact. A full walk walks ``specs/``, stats every other
spec and reads its name from the catalogue index (loading the few the index
does not answer): about 100 ms at 10,000 specs, most of such a check.

What a full walk finds is recorded as a snapshot (:mod:`pipeline.cache.snapshot`,
``snapshot-<key>`` in the cache folder, the key naming the command, the
root and the folder report paths are relative to): the stat of each folder
the walk entered, each link it passed over and each spec that is a link
(retargeted, it could be a spec the walk takes already), and of each spec
file, with
a line per spec file of the name it states (as ``show``'s name map writes
it). The name of each spec was found under the stat recorded for it (the
index's line, or the record, was made under that stat). A file whose mtime is
within the racy window (2 s) of that stat, and every file the run checked
itself (its name came from its check, which read it before the stat), is
recorded with a stat that matches none; a folder within the window, and
nothing is recorded.

The next check answers from the snapshot when every stat it records holds
but those of the files that check takes itself, each of which the snapshot
must record as a spec of its own, and which must be no link (their names are
the check's own; a link to another spec is that spec, which a full walk
leaves out of the others). A check of the same files again, and one of
files edited in place (a folder's entries unchanged), read no other spec,
no index and no folder. Those stats, one per spec, are most of such a check
of a big catalogue; from :data:`pipeline.cache.snapshot.CHILD_LINES` of them on, a
child process checks them while the check reads and checks its own files
(:func:`recorded_name_map`).

A check of the whole catalogue records the snapshot too, when there is none
(:func:`record_whole`): from the catalogue index it has just saved, whose lines
say each spec's name and the stat it was read under, so the first check of one
file after it need not walk every spec. And ``--changed-since`` over all
of ``specs/`` reads its walk from the snapshot while every folder and link
it records is unchanged (:func:`recorded_walk`): those stats decide what a walk
finds.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Set, Tuple

from pipeline.cache import snapshot, stamps
from pipeline.check.discovery import spec_file_names, spec_files_and_reals
from pipeline.check.verdict import names_of

if TYPE_CHECKING:
    from pipeline.check.repo import SpecRepo
    from pipeline.cache.results import ResultCache
    from pipeline.check.verdict import Verdict

#: What a snapshot of the catalogue's names is for, in its key (:func:`pipeline.cache.snapshot.repo_key`).
SNAPSHOT = "check names"

#: ``{name case-folded: [(name, display), ...]}``: :func:`pipeline.check.runner.spec_names`'s answer.
Names = Dict[str, List[Tuple[str, str]]]


def _snapshot_key(repo: "SpecRepo") -> str:
    """The key of the repository's snapshot of the catalogue's names (:func:`pipeline.cache.snapshot.repo_key`):
    it names the folder report paths are relative to, which its displays are."""
    return snapshot.repo_key(repo, SNAPSHOT, str(repo.report_base))


def recorded_name_map(repo: "SpecRepo", files: Sequence[str], folder: Path, walked: Optional["Walked"] = None,
                in_child: bool = False) -> Callable[[], Optional[str]]:
    """The name map of the snapshot of the catalogue's names in the cache folder *folder* (read from *walked*
    when the walk was, else from the folder now), for a check of *files*: a function that gives it while every
    stat it records holds but those of *files*, else ``None``. Those stats are checked from now on, *in_child*
    by a child process while this one checks the files (:func:`pipeline.cache.snapshot.holds_soon`)."""
    record = walked.record if walked is not None and walked.record is not None \
        else snapshot.load(folder, _snapshot_key(repo), repo.specs)
    if record is None:
        return lambda: None
    holding = snapshot.holds_soon(record.lines, {os.path.abspath(path) for path in files}, in_child)
    return lambda: record.answer if holding() else None


def names_outside_run(repo: "SpecRepo", files: Sequence[str], cache: Optional["ResultCache"],
                      checked: Sequence["Verdict"], walked: Optional["Walked"] = None,
                      recorded: Optional[Callable[[], Optional[str]]] = None) -> Names:
    """The names the repository's specs this run leaves out state (:func:`pipeline.check.runner.spec_names`), for
    the names the *checked* specs state: what :func:`pipeline.check.runner.run_result` asks of them.

    Args:
        repo: The spec repository.
        files: The paths of the files the run checks.
        cache: The result cache (the catalogue index and the snapshot are stored beside it); ``None`` loads every
            other spec.
        checked: The run's verdicts.
        walked: The run's walk of ``specs/`` (:func:`walk`), when it walked all of it.
        recorded: The snapshot's name map for *files* (:func:`recorded_name_map`), when the run asked for it before it
            checked them; else it is asked for now.
    """
    if not repo.specs.is_dir():
        return {}
    taken = {os.path.abspath(path) for path in files}
    wanted = {verdict.name.casefold() for verdict in checked if verdict.name is not None}
    name_map = None if cache is None else (recorded or recorded_name_map(repo, files, cache.folder, walked))()
    if name_map is not None and _its_own(name_map, taken):
        return _names_from_record(name_map, taken, wanted)
    return _walk_every_spec(repo, taken, cache, checked, walked, _snapshot_key(repo))


def _its_own(name_map: str, taken: Set[str]) -> bool:
    """Whether the snapshot's name map *name_map* can leave each checked file of *taken* out of the others: it has a
    line of its own for it, so no other spec of the map is it, and it is no link, so it is still no other
    spec (its stat, which would tell a link retargeted, is the one the snapshot does not compare). Else the
    full walk leaves out what it is now: a link to another spec is that spec, no clash with it."""
    return snapshot.names_files(name_map, taken) and not any(map(os.path.islink, taken))


def _names_from_record(name_map: str, taken: Set[str], wanted: Set[str]) -> Names:
    """The names of *wanted* the name map *name_map* has, but those of the files of *taken*."""
    found: Names = {}
    for name in sorted(wanted):
        stating = [(stated, display) for stated, display, path in snapshot.stating(name_map, name) if path not in taken]
        if stating:
            found[name] = stating
    return found


@dataclass(frozen=True)
class Walked:
    """A walk of all of ``specs/`` and what a snapshot of it records.

    Attributes:
        files: The spec files it found (:func:`pipeline.check.discovery.spec_file_names`), in order.
        seen: The folders it entered and the links it passed over.
        taken: Their stat lines (:func:`pipeline.cache.snapshot.take`) right after the walk, or ``None`` when
            no snapshot can record it (one changed within the racy window, a dangling link).
        record: The snapshot of the catalogue's names the walk was read from (:func:`recorded_walk`), else ``None``.
        displays: The files' :meth:`~pipeline.check.repo.SpecRepo.displays`, in order, when read from that snapshot
            and its report names are them (:attr:`~pipeline.check.repo.SpecRepo.reports_displays`); else ``None``.
    """

    files: Sequence[str]
    seen: Set[str]
    taken: Optional[str]
    record: Optional[snapshot.Record] = None
    displays: Optional[Sequence[str]] = None


def walk(files: Sequence[str], seen: Set[str]) -> Walked:
    """The :class:`Walked` of a walk that has just found *files* and seen *seen*: stat'ed now, before any spec
    is read, so a folder changed after the walk read it is seen as changed."""
    return Walked(files, seen, snapshot.take(sorted(seen)))


def still_walked(walked: Walked) -> Optional[List[str]]:
    """The stat lines of the folders and links *walked* saw, when each still stats as it did right after the
    walk (so the walk would find the same files); else ``None``, and no snapshot may record the walk."""
    if walked.taken is None or snapshot.take(sorted(walked.seen)) != walked.taken:
        return None
    return walked.taken.split("\n") if walked.taken else []


def recorded_walk(repo: "SpecRepo", folder: Path) -> Optional[Walked]:
    """The walk of all of ``specs/`` (:func:`pipeline.check.discovery.spec_file_names`), read from the snapshot of the
    catalogue's names in the cache folder *folder* while every folder and link it records still has the
    recorded stat: an entry added, removed or renamed changes its folder's, and a link retargeted its own, so
    the walk would find the files the snapshot lists, in its order, and shows them as its name map does (the
    report names, the displays too when they are the same). ``None`` when there is none such (or ``specs/`` is
    spelled relative: the snapshot's paths are absolute).
    """
    if os.path.abspath(repo.specs) != str(repo.specs):
        return None
    record = snapshot.load(folder, _snapshot_key(repo), repo.specs)
    if record is None:
        return None
    # The name map's lines, in order: name, name as stated, display, path. Each is split twice, for the paths
    # and for the displays: keeping a list per line would cost the garbage collector more than the second split.
    rows = record.answer.split("\n")[:-1]
    files = [row.split("\t", 3)[3] for row in rows]
    folders = len(record.lines) - len(files)  # the folders' and links' lines come first, then a line per file
    if folders < 0 or [line.rpartition("\t")[0] for line in record.lines[folders:]] != files \
            or not snapshot.holds(record.lines[:folders]):
        return None
    return Walked(files, {line.rpartition("\t")[0] for line in record.lines[:folders]},
                  "\n".join(record.lines[:folders]), record,
                  [row.split("\t", 3)[2] for row in rows] if repo.reports_displays else None)


def every_spec(repo: "SpecRepo", use_cache: bool) -> Tuple[List[str], List[str]]:
    """Every spec file under ``specs/`` (:func:`pipeline.check.discovery.spec_file_names`) and its display, in
    order, as strings (no ``Path`` per spec): the walk a check recorded in the snapshot while every folder and
    link it stats holds (:func:`recorded_walk`, with *use_cache*), else a walk now. What ``diff`` and ``regen``
    of the whole catalogue resolve."""
    walked = recorded_walk(repo, stamps.cache_folder(repo.root)) if use_cache else None
    if walked is None:
        files = spec_file_names([repo.specs])
        return files, repo.displays(files)
    files = list(walked.files)
    return files, list(walked.displays) if walked.displays is not None else repo.displays(files)


def _walk_every_spec(repo: "SpecRepo", taken: Set[str], cache: Optional["ResultCache"], checked: Sequence["Verdict"],
              walked: Optional[Walked], key: str) -> Names:
    """Every other spec's name, from the index (else loaded); recorded as the snapshot *key* when there is a cache
    and the walk took the checked files under the names the run gave them."""
    specs = os.path.abspath(repo.specs)  # the walk's paths below are then absolute and normal already
    linked: Set[str] = set()
    if walked is None or specs != str(repo.specs):  # a file named may be one the walk takes under another
        seen: Set[str] = set()                        # name (a link to it, or it a link)
        named = {os.path.realpath(path) for path in taken}
        found = spec_files_and_reals([Path(specs)], seen)
        walked = walk([path for path, _ in found], seen)
        linked = {path for path, real in found if path not in taken and real in named}
    every = walked.files
    shown = repo.report_names(every)
    pairs = [(path, display) for path, display in zip(every, shown) if path not in taken and path not in linked]
    if cache is None:
        # loading each file needs the passes' modules, which a check the cache answers never imports
        from pipeline.check.runner import spec_names  # pylint: disable=import-outside-toplevel

        return spec_names(pairs)
    now = stamps.now_ns()
    stated = list(cache.stated_names(pairs))
    if not linked and repo.spelled_real:
        _record_walk(cache.folder, key, walked, shown, {path: found for (path, _), found in zip(pairs, stated)},
                       checked, now)
    return names_of(pairs, (name for name, _ in stated))


def record_whole(repo: "SpecRepo", cache: "ResultCache", walked: Walked, checked: Sequence["Verdict"]) -> None:
    """After a check of the whole catalogue, its cache saved: record the snapshot of the catalogue's names when
    none is recorded, from the catalogue index (each line's stat and name; a file the index has no line for,
    learnt in its racy window, racy with its verdict's name), so that the first check of a few files after it
    need not walk every spec. A snapshot recorded already is let be: checking it would cost a stat per file.
    """
    key = _snapshot_key(repo)
    if not repo.spelled_real or snapshot.exists(cache.folder, key):
        return
    by_display: Dict[str, Optional[str]] = {}  # the verdicts' names, found when the index first lacks a file

    def known(_: str, display: str) -> Optional[Tuple[str, Optional[str]]]:
        indexed = cache.index.stated_under(display)
        if indexed is not None:
            return indexed
        if not by_display:
            by_display.update((verdict.result.file, verdict.stated_name) for verdict in checked)
        return (snapshot.RACY, by_display[display]) if display in by_display else None

    _record(cache.folder, key, walked, repo.report_names(walked.files), known)


def _record_walk(folder: Path, key: str, walked: Walked, shown: Sequence[str],
                   stated: Dict[str, Tuple[Optional[str], Optional[os.stat_result]]], checked: Sequence["Verdict"],
                   now: int) -> None:
    """Record the snapshot *key* in *folder* from what a check of a few files found: each file it did not check
    under the stat its name was found under (*stated*: ``(name, stat)``, stat'ed after *now*), each it checked
    racy, with its verdict's name."""
    by_display = {verdict.result.file: verdict.stated_name for verdict in checked}

    def known(path: str, display: str) -> Optional[Tuple[str, Optional[str]]]:
        if path in stated:
            name, status = stated[path]
            return (snapshot.recorded(status, now), name) if status is not None else None
        return (snapshot.RACY, by_display[display]) if display in by_display else None

    _record(folder, key, walked, shown, known)


def _record(folder: Path, key: str, walked: Walked, shown: Sequence[str],
          known: Callable[[str, str], Optional[Tuple[str, Optional[str]]]]) -> None:
    """Record the snapshot *key* in *folder*: the stat of the folders and links the walk saw, as it was right
    after the walk and still is, then of each file it found (shown as *shown* says, in order) as its name was
    found, then the name map, written as it is made (:func:`pipeline.cache.snapshot.record_stated`). *known* gives
    each ``(path, display)``'s ``(stat, name)``, or ``None`` when no stat can be recorded for it here (no regular
    file, a checked file shown under another name): then, or for a path with a line break, nothing is recorded."""
    taken = still_walked(walked)
    if taken is None:
        return
    found = [known(path, display) if "\n" not in path else None for path, display in zip(walked.files, shown)]
    if None in found:
        return
    snapshot.record_stated(folder, key, len(taken) + len(found), itertools.chain(
        (f"{line}\n" for line in taken),
        (f"{path}\t{stat}\n" for path, (stat, _) in zip(walked.files, found)),
        (snapshot.name_line(name, display, path) for path, display, (_, name) in zip(walked.files, shown, found))))
