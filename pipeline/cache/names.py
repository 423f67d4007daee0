"""The names of the specs a check leaves out, for the duplicate-name rule: from a snapshot of the catalogue's
names while nothing but the checked files has changed since it was kept, else from every other spec.

A check of a few files (``check FILE``, ``--changed-since``) must still
know every other spec's name: two specs of one name, compared case-folded,
would write one artifact. The long way walks ``specs/``, stats every other
spec and reads its name from the catalogue index (loading the few the index
does not answer): about 100 ms at 10,000 specs, most of such a check.

What the long way finds is kept as a snapshot (:mod:`pipeline.cache.snapshot`,
``snapshot-<key>`` in the cache folder, the key naming the command, the
root and the folder report paths are relative to): the stat of each folder
the walk entered, each link it passed over and each spec that is a link
(retargeted, it could be a spec the walk takes already), and of each spec
file, with
a line per spec file of the name it states (as ``show``'s name map writes
it). The name of each spec was found under the stat recorded for it (the
index's line, or the record, stands for that stat). A file whose mtime is
within the racy window (2 s) of that stat, and every file the run checked
itself (its name came from its check, which read it before the stat), is
recorded with a stat that matches none; a folder within the window, and
nothing is kept.

The next check answers from the snapshot when every stat it records holds
but those of the files that check takes itself, each of which the snapshot
must record as a spec of its own, and which must be no link (their names are
the check's own; a link to another spec is that spec, which the long way
leaves out of the others). A check of the same files again, and one of
files edited in place (a folder's entries unchanged), read no other spec,
no index and no folder. Those stats, one per spec, are most of such a check
of a big catalogue; from :data:`pipeline.cache.snapshot.CHILD_LINES` of them on, a
child process checks them while the check reads and checks its own files
(:func:`kept_answer`).

A check of the whole catalogue keeps the snapshot too, when there is none
(:func:`keep_whole`): from the catalogue index it has just saved, whose lines
say each spec's name and the stat it stands for, so the first check of one
file after it need not take the long way. And ``--changed-since`` over all
of ``specs/`` reads its walk from the snapshot while every folder and link
it records is unchanged (:func:`kept_walk`): those stats decide what a walk
finds.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Set, Tuple

from pipeline.cache import snapshot, stamps
from pipeline.check.discovery import spec_files_and_reals
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


def kept_answer(repo: "SpecRepo", files: Sequence[str], folder: Path, walked: Optional["Walked"] = None,
                in_child: bool = False) -> Callable[[], Optional[str]]:
    """The name map of the snapshot of the catalogue's names in the cache folder *folder* (read from *walked*
    when the walk was, else from the folder now), for a check of *files*: a function that gives it while every
    stat it records holds but those of *files*, else ``None``. Those stats are checked from now on, *in_child*
    by a child process while this one checks the files (:func:`pipeline.cache.snapshot.holds_soon`)."""
    kept = walked.kept if walked is not None and walked.kept is not None \
        else snapshot.load(folder, _snapshot_key(repo), repo.specs)
    if kept is None:
        return lambda: None
    holding = snapshot.holds_soon(kept.lines, {os.path.abspath(path) for path in files}, in_child)
    return lambda: kept.answer if holding() else None


def names_elsewhere(repo: "SpecRepo", files: Sequence[str], cache: Optional["ResultCache"],
                    checked: Sequence["Verdict"], walked: Optional["Walked"] = None,
                    kept: Optional[Callable[[], Optional[str]]] = None) -> Names:
    """The names the repository's specs this run leaves out state (:func:`pipeline.check.runner.spec_names`), for
    the names the *checked* specs state: what :func:`pipeline.check.runner.run_result` asks of them.

    Args:
        repo: The spec repository.
        files: The paths of the files the run checks.
        cache: The result cache (the catalogue index and the snapshot are kept beside it); ``None`` loads every
            other spec.
        checked: The run's verdicts.
        walked: The run's walk of ``specs/`` (:func:`walk`), when it walked all of it.
        kept: The snapshot's name map for *files* (:func:`kept_answer`), when the run asked for it before it
            checked them; else it is asked for now.
    """
    if not repo.specs.is_dir():
        return {}
    taken = {os.path.abspath(path) for path in files}
    wanted = {verdict.name.casefold() for verdict in checked if verdict.name is not None}
    name_map = None if cache is None else (kept or kept_answer(repo, files, cache.folder, walked))()
    if name_map is not None and _its_own(name_map, taken):
        return _kept_names(name_map, taken, wanted)
    return _long_way(repo, taken, cache, checked, walked, _snapshot_key(repo))


def _its_own(kept: str, taken: Set[str]) -> bool:
    """Whether the snapshot's name map *kept* can leave each checked file of *taken* out of the others: it has a
    line of its own for it, so no other spec of the map is it, and it is no link, so it is still no other
    spec (its stat, which would tell a link retargeted, is the one the snapshot does not compare). Else the
    long way leaves out what it is now: a link to another spec is that spec, no clash with it."""
    return snapshot.names_files(kept, taken) and not any(map(os.path.islink, taken))


def _kept_names(kept: str, taken: Set[str], wanted: Set[str]) -> Names:
    """The names of *wanted* the name map *kept* has, but those of the files of *taken*."""
    found: Names = {}
    for name in sorted(wanted):
        stating = [(stated, display) for stated, display, path in snapshot.stating(kept, name) if path not in taken]
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
            they cannot stand for it (one changed within the racy window, a dangling link).
        kept: The snapshot of the catalogue's names the walk was read from (:func:`kept_walk`), else ``None``.
        displays: The files' :meth:`~pipeline.check.repo.SpecRepo.displays`, in order, when read from that snapshot
            and its report names are them (:attr:`~pipeline.check.repo.SpecRepo.reports_displays`); else ``None``.
    """

    files: Sequence[str]
    seen: Set[str]
    taken: Optional[str]
    kept: Optional[snapshot.Kept] = None
    displays: Optional[Sequence[str]] = None


def walk(files: Sequence[str], seen: Set[str]) -> Walked:
    """The :class:`Walked` of a walk that has just found *files* and seen *seen*: stat'ed now, before any spec
    is read, so a folder changed after the walk read it is seen as changed."""
    return Walked(files, seen, snapshot.take(sorted(seen)))


def still_walked(walked: Walked) -> Optional[List[str]]:
    """The stat lines of the folders and links *walked* saw, when each still stats as it did right after the
    walk (so the walk would find the same files); else ``None``, and no snapshot may stand for the walk."""
    if walked.taken is None or snapshot.take(sorted(walked.seen)) != walked.taken:
        return None
    return walked.taken.split("\n") if walked.taken else []


def kept_walk(repo: "SpecRepo", folder: Path) -> Optional[Walked]:
    """The walk of all of ``specs/`` (:func:`pipeline.check.discovery.spec_file_names`), read from the snapshot of the
    catalogue's names in the cache folder *folder* while every folder and link it records still has the
    recorded stat: an entry added, removed or renamed changes its folder's, and a link retargeted its own, so
    the walk would find the files the snapshot lists, in its order, and shows them as its name map does (the
    report names, the displays too when they are the same). ``None`` when there is none such (or ``specs/`` is
    spelled relative: the snapshot's paths are absolute).
    """
    if os.path.abspath(repo.specs) != str(repo.specs):
        return None
    kept = snapshot.load(folder, _snapshot_key(repo), repo.specs)
    if kept is None:
        return None
    # The name map's lines, in order: name, name as stated, display, path. Each is split twice, for the paths
    # and for the displays: keeping a list per line would cost the garbage collector more than the second split.
    rows = kept.answer.split("\n")[:-1]
    files = [row.split("\t", 3)[3] for row in rows]
    folders = len(kept.lines) - len(files)  # the folders' and links' lines come first, then a line per file
    if folders < 0 or [line.rpartition("\t")[0] for line in kept.lines[folders:]] != files \
            or not snapshot.holds(kept.lines[:folders]):
        return None
    return Walked(files, {line.rpartition("\t")[0] for line in kept.lines[:folders]},
                  "\n".join(kept.lines[:folders]), kept,
                  [row.split("\t", 3)[2] for row in rows] if repo.reports_displays else None)


def _long_way(repo: "SpecRepo", taken: Set[str], cache: Optional["ResultCache"], checked: Sequence["Verdict"],
              walked: Optional[Walked], key: str) -> Names:
    """Every other spec's name, from the index (else loaded); kept as the snapshot *key* when there is a cache
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
        _kept_by_check(cache.folder, key, walked, shown, {path: found for (path, _), found in zip(pairs, stated)},
                       checked, now)
    return names_of(pairs, (name for name, _ in stated))


def keep_whole(repo: "SpecRepo", cache: "ResultCache", walked: Walked, checked: Sequence["Verdict"]) -> None:
    """After a check of the whole catalogue, its cache saved: keep the snapshot of the catalogue's names when
    none is kept, from the catalogue index (each line's stat and name; a file the index has no line for,
    learnt in its racy window, racy with its verdict's name), so that the first check of a few files after it
    need not take the long way. A snapshot kept already is let be: checking it would cost a stat per file.
    """
    key = _snapshot_key(repo)
    if not repo.spelled_real or snapshot.kept(cache.folder, key):
        return
    by_display: Dict[str, Optional[str]] = {}  # the verdicts' names, found when the index first lacks a file

    def known(_: str, display: str) -> Optional[Tuple[str, Optional[str]]]:
        indexed = cache.index.stated_under(display)
        if indexed is not None:
            return indexed
        if not by_display:
            by_display.update((verdict.result.file, verdict.stated_name) for verdict in checked)
        return (snapshot.RACY, by_display[display]) if display in by_display else None

    _keep(cache.folder, key, walked, repo.report_names(walked.files), known)


def _kept_by_check(folder: Path, key: str, walked: Walked, shown: Sequence[str],
                   stated: Dict[str, Tuple[Optional[str], Optional[os.stat_result]]], checked: Sequence["Verdict"],
                   now: int) -> None:
    """Keep the snapshot *key* in *folder* from what a check of a few files found: each file it did not check
    under the stat its name was found under (*stated*: ``(name, stat)``, stat'ed after *now*), each it checked
    racy, with its verdict's name."""
    by_display = {verdict.result.file: verdict.stated_name for verdict in checked}

    def known(path: str, display: str) -> Optional[Tuple[str, Optional[str]]]:
        if path in stated:
            name, status = stated[path]
            return (snapshot.recorded(status, now), name) if status is not None else None
        return (snapshot.RACY, by_display[display]) if display in by_display else None

    _keep(folder, key, walked, shown, known)


def _keep(folder: Path, key: str, walked: Walked, shown: Sequence[str],
          known: Callable[[str, str], Optional[Tuple[str, Optional[str]]]]) -> None:
    """Keep the snapshot *key* in *folder*: the stat of the folders and links the walk saw, as it was right
    after the walk and still is, then of each file it found (shown as *shown* says, in order) as its name was
    found, then the name map, written as it is made (:func:`pipeline.cache.snapshot.keep_stated`). *known* gives
    each ``(path, display)``'s ``(stat, name)``, or ``None`` when no stat can stand for it here (no regular
    file, a checked file shown under another name): then, or for a path with a line break, nothing is kept."""
    taken = still_walked(walked)
    if taken is None:
        return
    found = [known(path, display) if "\n" not in path else None for path, display in zip(walked.files, shown)]
    if None in found:
        return
    snapshot.keep_stated(folder, key, len(taken) + len(found), itertools.chain(
        (f"{line}\n" for line in taken),
        (f"{path}\t{stat}\n" for path, (stat, _) in zip(walked.files, found)),
        (snapshot.name_line(name, display, path) for path, display, (_, name) in zip(walked.files, shown, found))))
