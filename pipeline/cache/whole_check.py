"""The answer of a check of the whole catalogue, given back while nothing it came from has changed.

``modelspec check`` over all of ``specs/`` (no files named, no
``--changed-since``, no ``--fix``, no ``specs`` or ``exclude`` configured,
the root spelled as its real path: :attr:`pipeline.check.repo.SpecRepo.spelled_real`)
answers from every spec, the configuration and the op profiles. Run again
on an unchanged tree, its answer is the same: the same reports, byte for
byte, the same exit code. The result cache makes that run cheap, but it
still walks ``specs/``, loads the profiles and decodes a record per spec:
about 250 ms at 10,000 specs. So the run records its answer as a catalogue
snapshot (:mod:`pipeline.cache.snapshot`, ``snapshot-<key>`` in the cache
folder), with the ``stat`` of everything it came from:

- each configuration file :func:`pipeline.check.config.find_config` may take
  (recorded as missing where there is none: making one is a change), and
  what chose the op profiles folder, the folder and each profile: stat'ed
  before the configuration and the profiles are read;
- each folder the walk of ``specs/`` entered and each link it passed over,
  stat'ed right after the walk (:func:`pipeline.cache.names.walk`);
- each spec file under the stat of the cache record the run reused or
  made for it (:meth:`pipeline.cache.results.ResultCache.record_stat`).

Nothing is recorded unless every one of those is a stat a file can have: a
spec read in its racy window, or one the run has no record of (one that
is no regular file, or one modelspec crashed on: a crash is never
cached), and the next run walks every spec. The key names what the command line and the
environment add: the report's format, ``--output``, ``--strict``,
``--select``, ``--ignore``, ``--quiet``, the colour chosen, the current
folder and the folder report paths are relative to; the snapshot's header
names modelspec's environment (:func:`pipeline.cache.stamps.environment_digest`).

The next such check reads the snapshot first; while every stat holds, it
prints the recorded report and writes the recorded ``--output`` reports, and
nothing else runs: no configuration, profile, spec or cache record is
read. This module imports nothing of the check for that reason.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

from pipeline.cache import snapshot

if TYPE_CHECKING:
    from pipeline.cache.names import Walked
    from pipeline.check.repo import SpecRepo
    from pipeline.cache.results import ResultCache

#: What a snapshot of a check's answer is for, in its key (:func:`pipeline.cache.snapshot.repo_key`).
SNAPSHOT = "check answer"


@dataclass(frozen=True)
class Answer:
    """What a check of the whole catalogue answered.

    Attributes:
        exit_code: The run's result's exit code (0 clean, 1 failed), before any report was written.
        report: The report printed on stdout, as rendered.
        outputs: Each ``--output`` report, as rendered, in the order the options name them.
        specs: The spec files it came from, as the walk spelled them (no report may be written onto one).
    """

    exit_code: int
    report: str
    outputs: Tuple[str, ...]
    specs: Tuple[str, ...] = ()


def answer_key(repo: "SpecRepo", asked: Sequence[object]) -> str:
    """The key of the snapshot of the answer to the check options *asked* (JSON-able values: the format, the
    ``--output`` pairs as text, strict, select, ignore, quiet, the colour chosen) in *repo*: with the current
    folder (relative ``--output`` paths and the report base depend on it) and the folder report paths are
    relative to."""
    return snapshot.repo_key(repo, SNAPSHOT, os.getcwd(), str(repo.report_base), json.dumps(list(asked)))


def recorded_answer(folder: Path, key: str, specs: Path) -> Optional[Answer]:
    """The answer the snapshot *key* in the cache folder *folder* records of the catalogue *specs*, while every stat
    it records holds; else ``None`` (none recorded, torn, foreign, or something changed)."""
    record = snapshot.load(folder, key, specs)
    if record is None or not snapshot.holds(record.lines):
        return None
    try:
        exit_code, report, outputs, count = json.loads(record.answer)
        if not isinstance(count, int) or not 0 <= count <= len(record.lines):
            return None
        spec_files = tuple(line.rpartition("\t")[0] for line in record.lines[len(record.lines) - count:])
        return Answer(int(exit_code), str(report), tuple(str(text) for text in outputs), spec_files)
    except (ValueError, TypeError):
        return None


def sources(repo: "SpecRepo") -> List[str]:
    """What decides a whole check's answer besides its specs, to stat before any of it is read: the
    configuration's candidate files (:func:`pipeline.check.config.config_candidates`), then the op profiles
    (:func:`pipeline.cache.snapshot.profiles_chosen`)."""
    from pipeline.check.config import config_candidates  # pylint: disable=import-outside-toplevel

    return [*(str(path) for path in config_candidates(repo.root, repo.report_base)),
            *snapshot.profiles_chosen(repo.profiles, repo.profiles_chosen_by)]


def record_answer(folder: Path, key: str, before: Tuple[List[str], Optional[str]], walked: "Walked",
                cache: "ResultCache", displays: Sequence[str], answer: Answer) -> None:
    """Record *answer* as the snapshot *key* in *folder*, when every stat it came from can be recorded.

    Args:
        folder: The cache folder.
        key: :func:`answer_key`.
        before: :func:`sources` and their stat lines (:func:`pipeline.cache.snapshot.take`), taken before any was
            read; nothing is recorded unless they still stat so.
        walked: The run's walk of ``specs/``; nothing is recorded unless its folders and links still stat as they
            did right after it.
        cache: The run's result cache, saved: each spec's stat is that of its record
            (:meth:`~pipeline.cache.results.ResultCache.record_stat`).
        displays: How reports name each of ``walked.files``, in order (the cache's names for them).
        answer: What the run answered.
    """
    from pipeline.cache.names import still_walked  # pylint: disable=import-outside-toplevel

    paths, taken = before
    stats = [cache.record_stat(display) for display in displays]
    if taken is None or None in stats or snapshot.RACY in stats or any("\n" in path for path in walked.files):
        return
    folders = still_walked(walked)
    if folders is None or snapshot.take(paths) != taken:
        return
    before_lines = [*taken.split("\n"), *folders]
    text = json.dumps([answer.exit_code, answer.report, list(answer.outputs), len(walked.files)])
    snapshot.record_stated(folder, key, len(before_lines) + len(walked.files), itertools.chain(
        (f"{line}\n" for line in before_lines), (f"{path}\t{stat}\n" for path, stat in zip(walked.files, stats)),
        (text,)))
