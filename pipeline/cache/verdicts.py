"""Each spec file's verdict, from its result-cache record while that is current, else checked and recorded.

This is where the result cache (:mod:`pipeline.cache.results`) wraps the check (:mod:`pipeline.check.runner`):
a file whose record still holds (its ``stat``, else its bytes' digest, and every op profile its check read) is
not checked again; the rest are checked, here or spread over worker processes, and their new records handed
back for the caller to save. Without a cache (``--no-cache``) every file is checked the same way.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Iterator, List, Optional, Sequence, Tuple

from pipeline.cache import results
from pipeline.cache.results import CacheKeys, ProfileCache, Record, ResultCache
from pipeline.check.runner import CheckedSpec, check_bytes, check_file, list_row_of, verdict_of, worker_count
from pipeline.check.verdict import Verdict, read_spec_bytes
from pipeline.pricing.op_profiles import OpProfiles, load_op_profiles

#: Files a worker process checks per task it is sent.
_CHUNK = 100


def _check_chunk(items: Sequence[Tuple[str, str, Optional[Tuple[str, str]]]], profiles_root: str,
                 keys: Optional[CacheKeys], with_rows: bool,
                 cache_folder: Optional[str] = None) -> List[Tuple[Verdict, Optional[str]]]:
    """Worker: :func:`cached_verdict` for a chunk of ``(path, display, cache line)`` (picklable arguments only).

    The profiles are loaded as the command loaded them (with its cache folder, *cache_folder*), so a forked
    worker finds them in the memo it inherited, and any other takes the recorded ones instead of checking them.
    """
    profiles = load_op_profiles(Path(profiles_root), ProfileCache(Path(cache_folder)) if cache_folder else None)
    return [cached_verdict(Path(path), display, profiles, keys, line, with_rows) for path, display, line in items]


def cached_verdict(path: Path, display: str, profiles: OpProfiles, keys: Optional[CacheKeys] = None,
                   line: Optional[Tuple[str, str]] = None, with_row: bool = False) -> Tuple[Verdict, Optional[str]]:
    """One file's :class:`Verdict`, from its cache record when that is current, else by checking it.

    Args:
        path: The file.
        display: Its path as reports show it.
        profiles: The op profiles.
        keys: The run's :class:`~pipeline.results.results.CacheKeys`; ``None`` to neither use nor make a record.
        line: The file's cache line (``(checksum, record)``), if the cache has one.
        with_row: Decode the ``list`` row of a reused record too.

    Returns:
        The verdict, and the cache line to store for the file (``None`` when there is nothing new to keep:
        no cache, the record was current, or the file cannot be read as a regular file).
    """
    status = results.regular_file_stat(path) if keys is not None else None
    if status is None:
        return verdict_of(check_file(path, display, profiles), None, with_row), None
    record = results.parse_record(display, *line) if line is not None else None
    usable = record is not None and record.current(keys)
    if usable and record.unchanged(status):
        reused = decoded_verdict(display, record, with_row)
        if reused is not None:
            return reused, None
    read_ns = results.now_ns()
    raw = read_spec_bytes(path)
    if raw is None:
        return verdict_of(check_file(path, display, profiles), None, with_row), None
    digest = results.content_digest(raw)
    if usable and record.digest == digest:
        reused = decoded_verdict(display, record, with_row)
        if reused is not None:
            return reused, record.restated(status, read_ns).to_line(display)
    _, verdict, fresh = check_recorded(raw, display, profiles, keys, (status, read_ns, digest), with_row)
    return verdict, fresh.to_line(display) if fresh is not None else None


def check_recorded(raw: bytes, display: str, profiles: OpProfiles, keys: CacheKeys,
                   read: Tuple[os.stat_result, int, str],
                   with_row: bool = False) -> Tuple[CheckedSpec, Verdict, Optional[Record]]:
    """Check a file's bytes *raw* and make its cache record (for ``regen``, which needs the spec itself too).

    Args:
        raw: The bytes (:func:`read_spec_bytes`).
        display: The path reports show.
        profiles: The op profiles; the record notes which the check consulted.
        keys: The run's :class:`~pipeline.results.results.CacheKeys`.
        read: ``(stat, when read, SHA-256 of raw)`` of the file as it was read.
        with_row: Give the verdict its ``list`` row.

    Returns:
        The check, its :class:`Verdict`, and its record (``None`` when it cannot be recorded: a crash, or a
        problem about another file).
    """
    recording = results.RecordingProfiles(profiles.profiles)
    checked, stated = check_bytes(raw, display, OpProfiles(profiles.root, recording))
    verdict = verdict_of(checked, stated, with_row)
    texts = results.encode_verdict(verdict, verdict.row if with_row else list_row_of(checked))
    if texts is None or any(p.code == "check.internal" for p in verdict.result.problems):
        return checked, verdict, None
    dependencies = recording.dependencies()
    status, read_ns, digest = read
    return checked, verdict, results.new_record(status, read_ns, digest, keys.environment, stated,
                                              (dependencies, keys.depends(results.json_text(dependencies)), texts))


def decoded_verdict(display: str, record: Record, with_row: bool = False) -> Optional[Verdict]:
    """The verdict a record keeps, or ``None`` when it does not decode (a line not of this format)."""
    try:
        return results.decode_verdict(display, record, with_row)
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def verdicts(files: Sequence[Tuple[Path, str]], profiles: OpProfiles, jobs: Optional[int] = None,
             progress: Optional[Callable[[int], None]] = None, cache: Optional[ResultCache] = None,
             with_rows: bool = False) -> List[Verdict]:
    """Each file's :class:`Verdict`, from the result cache where current, the rest checked in several processes
    when that pays (:func:`worker_count`); in path order.

    Args:
        files: ``(path, display name)`` pairs.
        profiles: The op profiles (each worker loads its own copy).
        jobs: The most worker processes to use; ``None`` for every usable core.
        progress: Called with the number of files finished since the last call.
        cache: The result cache; its new lines are added to it (:meth:`~pipeline.cache.results.ResultCache.add`),
            for the caller to save. ``None`` checks every file.
        with_rows: Give each verdict its ``list`` row (decoded from a reused record only when asked).
    """
    keys = cache.keys if cache is not None else None
    if cache is not None:
        cache.expect_lookups(len(files))
    found: List[Verdict] = []
    todo: List[Tuple[Path, str, Optional[Tuple[str, str]]]] = []
    for path, display in files:
        reused = cache.reuse(display, path, with_rows) if cache is not None else None
        if reused is not None:
            found.append(reused)
            if progress:
                progress(1)
            continue
        todo.append((path, display, cache.line(display) if cache is not None else None))
    folder = str(cache.folder) if cache is not None else None
    for verdict, line in _run_checks(todo, profiles, keys, worker_count(jobs, len(todo)), progress, with_rows,
                                     folder):
        found.append(verdict)
        if line is not None and cache is not None:
            cache.add_checked(verdict.result.file, line, with_rows)
    return sorted(found, key=lambda item: item.result.file)


def _run_checks(todo: Sequence[Tuple[Path, str, Optional[Tuple[str, str]]]], profiles: OpProfiles,
                keys: Optional[CacheKeys], workers: int, progress: Optional[Callable[[int], None]],
                with_rows: bool, cache_folder: Optional[str] = None) -> Iterator[Tuple[Verdict, Optional[str]]]:
    """:func:`cached_verdict` of each item, here or over *workers* processes, as each finishes its chunk."""
    if workers == 1:
        for path, display, line in todo:
            yield cached_verdict(path, display, profiles, keys, line, with_rows)
            if progress:
                progress(1)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_check_chunk, [(str(p), d, line) for p, d, line in todo[start:start + _CHUNK]],
                               str(profiles.root), keys, with_rows, cache_folder)
                   for start in range(0, len(todo), _CHUNK)]
        for future in futures:
            part = future.result()
            yield from part
            if progress:
                progress(len(part))
