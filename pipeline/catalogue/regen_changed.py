"""``regen`` at the cost of what changed: the recorded answer of the last clean regen (:mod:`pipeline.cache.regen_answer`)
taken up where it still holds, the whole regen (:mod:`pipeline.catalogue.regen`) everywhere else.

The whole regen looks up every spec's result-cache record and artifact entry and every file of ``resolved/``,
then plans the whole tree: about 1.5 s at 10,000 specs with one spec edited, three times a ``check`` of that
spec (issue 28). When the last regen of the catalogue was clean (its plan had no problem: every spec wrote its
artifact under its own name, nothing in the way, ``resolved/`` holding exactly the artifacts and the index), its
plan is the recorded answer, and a run over the same list of specs, under the same environment and profiles,
needs only:

- a ``stat`` of each spec and each file of ``resolved/``, and the listing of ``resolved/``: the listing must be
  the answer's files exactly (a file added or removed: the whole regen);
- for each spec whose ``stat`` changed (or was racy), its resolution as the whole regen makes it
  (:func:`pipeline.catalogue.regen._known`, else checked and built): it must pass and keep its artifact's file
  name (it fails, or is renamed: the whole regen, which reports it);
- for each file of ``resolved/`` whose ``stat`` changed, or whose spec's artifact changed, its bytes: those the
  answer recorded (regen's own, so replaced, as the whole regen replaces its own file) or the planned ones (left
  alone); any other bytes (edited by hand, replaced): the whole regen, which judges the file;
- the index rebuilt from the answer's entries with the changed digests (every entry ``current``: a clean plan
  keeps no artifact of a failing spec).

It then writes what the whole regen would write, in its order (the artifacts by name, then the index, each
replaced whole: :class:`~pipeline.catalogue.atomic.Batch`), and the command prints what the whole regen prints.
Anything it cannot answer so, it leaves to the whole regen (``None``), before writing anything.
"""

from __future__ import annotations

import os
import stat as stat_module
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.cache import regen_answer
from pipeline.cache.artifacts import new_entry
from pipeline.cache.regen_answer import Answer, Artifact, recorded_stat
from pipeline.cache.stamps import RACY, RACY_NS, content_digest, now_ns, stat_text
from pipeline.catalogue.artifacts import ARTIFACT_SUFFIX, INDEX_FILE, IndexEntry, build_index, render
from pipeline.catalogue.regen import (Existing, Plan, Resolution, _Builder, _known, listed_files, locked,
                                      remove_leftovers, write_files)
from pipeline.pricing.op_profiles import OpProfiles

if TYPE_CHECKING:
    from pipeline.cache.artifacts import ArtifactCache
    from pipeline.cache.results import Record

#: The most specs changed (or racy) for which the answer is taken up; past that the whole regen is as cheap.
MOST_CHANGED = 64


@dataclass(frozen=True)
class Done:
    """What :func:`regen_changed` did.

    Attributes:
        written: The files written, in order (the artifacts by name, then the index).
        files: How many files the plan holds (every artifact and the index).
        answer: The answer to record now.
    """

    written: Tuple[str, ...]
    files: int
    answer: Answer

    @property
    def artifacts(self) -> int:
        """How many artifacts the plan holds."""
        return self.files - 1


def regen_changed(folder: Path, pairs: Sequence[Tuple[str, str]], answer: Answer, profiles: OpProfiles,
                  cache: "ArtifactCache", wait: float,
                  on_change: Optional[Callable[[str, str], None]] = None) -> Optional[Done]:
    """Do the regen of *pairs* (every spec, ``(path, display)`` in display order) into *folder* from *answer*,
    or nothing and ``None`` when the whole regen must (see the module). Holds the regen lock while it works.

    Raises:
        RegenError: As the whole regen does: locked past *wait*, a folder that is a link, a file not written.
    """
    if len(pairs) != len(answer.artifacts) or any(display != item.display
                                                  for (_, display), item in zip(pairs, answer.artifacts)):
        return None
    with locked(folder, wait):
        remove_leftovers(folder)
        return _Run(folder, pairs, answer, profiles, cache).run(on_change)


class _Run:
    """One :func:`regen_changed` under the lock."""

    def __init__(self, folder: Path, pairs: Sequence[Tuple[str, str]], answer: Answer, profiles: OpProfiles,
                 cache: "ArtifactCache") -> None:
        self.folder, self.pairs, self.answer, self.cache = folder, pairs, answer, cache
        self.builder = _Builder.of(profiles, cache)
        self.lines: List[Artifact] = list(answer.artifacts)
        self.texts: Dict[int, str] = {}  # spec index -> the artifact's text, when built
        self.records: Dict[int, "Record"] = {}

    def run(self, on_change: Optional[Callable[[str, str], None]]) -> Optional[Done]:
        """The whole of :func:`regen_changed` past the lock."""
        if not self._listed_as_answered():
            return None
        stats = self._changed()
        if stats is None:
            return None
        specs, files, index_status = stats
        for number in specs:
            if not self._resolve(number):
                return None
        writes = self._artifact_writes(files)
        if writes is None:
            return None
        index = self._index(index_status)
        if index is None:
            return None
        index_text, index_line = index
        written = self._write([*writes, *([(INDEX_FILE, index_text)] if index_text is not None else [])],
                              on_change)
        if index_text is not None:
            self.cache.add_index(index_text)
        return Done(tuple(file for file, _ in written), len(self.lines) + 1,
                    Answer(tuple(self.lines), *index_line))

    def _listed_as_answered(self) -> bool:
        """Whether ``resolved/`` lists exactly the answer's artifacts and the index (as
        :func:`~pipeline.catalogue.regen.read_resolved` lists it: ``*.json``, not hidden)."""
        try:
            names = set(listed_files(self.folder))
        except OSError:
            return False
        return names == {item.file for item in self.answer.artifacts} | {INDEX_FILE}

    def _changed(self) -> Optional[Tuple[List[int], Dict[str, os.stat_result], os.stat_result]]:
        """The specs whose ``stat`` is not the answer's (by number), the files of ``resolved/`` whose ``lstat`` is
        not (by name, with it), and the index's ``lstat``; ``None`` when one is not a regular file, or too many
        changed."""
        specs, files = [], {}
        folder = os.fspath(self.folder)
        for number, ((path, _), item) in enumerate(zip(self.pairs, self.answer.artifacts)):
            try:
                status = os.stat(path)
                held = os.lstat(os.path.join(folder, item.file))  # strings: no Path per file
            except (OSError, ValueError):
                return None
            if not (stat_module.S_ISREG(status.st_mode) and stat_module.S_ISREG(held.st_mode)):
                return None
            if stat_text(status) != item.spec_stat:
                specs.append(number)
            if stat_text(held) != item.file_stat:
                files[item.file] = held
        try:
            index_status = os.lstat(self.folder / INDEX_FILE)
        except OSError:
            return None
        if not stat_module.S_ISREG(index_status.st_mode) or len(specs) > MOST_CHANGED or len(files) > MOST_CHANGED:
            return None
        return specs, files, index_status

    def _resolve(self, number: int) -> bool:
        """Resolve the changed spec *number* as the whole regen would, and take its artifact into the lines;
        whether it passed and kept its artifact's file name."""
        path, display = Path(self.pairs[number][0]), self.pairs[number][1]
        item = _known(display, path, self.cache) or self.builder.resolve(path, display)
        if item.document is None or item.record is None or item.document["name"] + ARTIFACT_SUFFIX != \
                self.lines[number].file:
            return False
        if item.vouched is not None:
            sha256 = item.vouched.sha256
        else:
            self.texts[number] = item.text
            sha256 = content_digest(self.texts[number].encode("utf-8"))
        self.records[number] = item.record
        self.lines[number] = replace(self.lines[number], spec_stat=_spec_stat(item.record),
                                     digest=str(item.document["digest"]), sha256=sha256)
        return True

    def _artifact_writes(self, files: Mapping[str, os.stat_result]) -> Optional[List[Tuple[str, str]]]:
        """``(file, text)`` of each artifact to write, by name; ``None`` when a file holds bytes neither the answer
        recorded nor planned."""
        writes = []
        for number, (old, new) in enumerate(zip(self.answer.artifacts, self.lines)):
            if old.file not in files and old.sha256 == new.sha256:
                continue
            held = old.sha256
            if old.file in files:
                read_ns = now_ns()
                held = _file_digest(self.folder / old.file)
                if held is None:
                    return None
                self.lines[number] = replace(self.lines[number], file_stat=recorded_stat(files[old.file], read_ns))
            if held == new.sha256:
                continue
            if held != old.sha256:
                return None
            if number not in self.texts:  # known to the cache by its bytes only: build it, as the whole regen does
                item = self.builder.resolve(Path(self.pairs[number][0]), self.pairs[number][1])
                if item.document is None or item.record is None or item.text is None:
                    return None
                self.texts[number], self.records[number] = item.text, item.record
                if content_digest(self.texts[number].encode("utf-8")) != new.sha256:
                    return None
            writes.append((old.file, self.texts[number]))
        return sorted(writes)  # the whole regen's order: by file name

    def _index(self, status: os.stat_result) -> Optional[Tuple[Optional[str], Tuple[str, str]]]:
        """The index's text when it must be written (else ``None``) and its line ``(sha256, stat)``; ``None`` when
        it holds bytes neither the answer recorded nor planned."""
        moved = any(old.digest != new.digest for old, new in zip(self.answer.artifacts, self.lines))
        text, planned = None, self.answer.index_sha256
        if moved:
            text = render(build_index([IndexEntry(item.name, item.file, item.display, item.digest)
                                       for item in self.lines]))
            planned = content_digest(text.encode("utf-8"))
        held, held_stat = self.answer.index_sha256, self.answer.index_stat
        if stat_text(status) != self.answer.index_stat:
            read_ns = now_ns()
            held = _file_digest(self.folder / INDEX_FILE)
            if held is None:
                return None
            held_stat = recorded_stat(status, read_ns)
        if held == planned:
            return None, (planned, held_stat)
        if held != self.answer.index_sha256 or text is None:
            return None
        return text, (planned, RACY)

    def _write(self, writes: Sequence[Tuple[str, str]],
               on_change: Optional[Callable[[str, str], None]]) -> List[Tuple[str, str]]:
        """Write *writes* as :func:`~pipeline.catalogue.regen.apply_plan` does, and remember each artifact in the
        cache; the files written."""
        write_files(self.folder, writes, on_change)
        numbers = {item.file: number for number, item in enumerate(self.lines)}
        for file, text in writes:
            number = numbers.get(file)
            if number is None:
                continue
            item = self.lines[number]
            try:
                status = os.lstat(self.folder / file)
            except OSError:
                continue
            self.cache.add(item.display, new_entry(self.records[number], file, item.digest, text, status, now_ns()))
            self.lines[number] = replace(item, file_stat=RACY)
        return list(writes)


def _file_digest(path: Path) -> Optional[str]:
    """The SHA-256 of the bytes of *path*, a file of ``resolved/`` whose ``lstat`` said it is regular; ``None`` when
    it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return content_digest(handle.read())
    except OSError:
        return None


def _spec_stat(record: "Record") -> str:
    """The spec ``stat`` an answer may record from *record* (taken before its bytes were read): ``RACY`` within the
    racy window."""
    mtime = record.stat.split(":")[1] if record.stat.count(":") == 3 else ""
    return record.stat if mtime.isdigit() and int(mtime) + RACY_NS <= record.read_ns else RACY


def answer_of(resolutions: Sequence[Resolution], target: Plan, existing: Mapping[str, Existing],
              written: Sequence[str], folder: Path, hashed: Mapping[str, str]) -> Optional[Answer]:
    """The answer a whole regen leaves, when its plan was clean (see the module); else ``None``.

    Args:
        resolutions: Every spec's resolution (all of them resolved this run), in display order.
        target: The plan applied.
        existing: What ``resolved/`` held when it was planned (:func:`~pipeline.catalogue.regen.read_resolved`).
        written: The files written.
        folder: ``resolved/``.
        hashed: The SHA-256 of artifact texts already hashed, by file (what
            :func:`~pipeline.catalogue.regen.remember` entered).
    """
    if target.problems or target.orphans or len(target.files) != len(resolutions) + 1:
        return None
    wrote = set(written)
    lines = []
    for item in resolutions:
        if item.document is None or item.record is None:
            return None
        file = item.document["name"] + ARTIFACT_SUFFIX
        text = target.files.get(file)
        if text is None or target.sources.get(file) != item.path:
            return None
        sha256 = text.sha256 if not isinstance(text, str) else hashed.get(file) or content_digest(text.encode("utf-8"))
        lines.append(Artifact(item.path, _spec_stat(item.record), file, str(item.document["digest"]), sha256,
                              _file_stat(file, wrote, existing)))
    index = target.files[INDEX_FILE]
    if not isinstance(index, str) or not regen_answer.plain(
            value for line in lines for value in (line.display, line.file, line.digest)):
        return None
    try:
        names = set(listed_files(folder))
    except OSError:
        return None
    if names != set(target.files):
        return None
    return Answer(tuple(lines), content_digest(index.encode("utf-8")), _file_stat(INDEX_FILE, wrote, existing))


def _file_stat(file: str, written: "set[str]", existing: Mapping[str, Existing]) -> str:
    """The ``stat`` an answer records for the file *file* of ``resolved/``: ``RACY`` for one written this run (the
    next run reads it once), else the ``lstat`` taken before it was read (or vouched for)."""
    held = existing.get(file)
    if file in written or held is None or held.status is None:
        return RACY
    if held.read_ns == 0:  # vouched for by an entry whose stat was past the racy window
        return stat_text(held.status)
    return recorded_stat(held.status, held.read_ns)
