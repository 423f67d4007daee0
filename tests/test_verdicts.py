"""Each file's verdict from its record or checked (pipeline/cache/verdicts.py), in-process: a cached verdict equals
the uncached one, a hit is counted (no check ran), a touched stat is a miss that re-reads the bytes, and what is
never recorded (a crash, a file that cannot be read) is checked every time (bench/mutate.py runs this file)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import List, Tuple

import pytest

from pipeline.cache import results, stamps, verdicts
from pipeline.cache.results import ResultCache, cache_keys
from pipeline.check import runner
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.spec.resources import bundled_profiles_dir

ROOT = Path(__file__).resolve().parent.parent
OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01: never racy
SPECS = ("specs/llama/llama-3.1-8b.yaml", "specs/qwen/qwen3-8b.yaml")


@pytest.fixture
def files(tmp_path: Path) -> List[Tuple[Path, str]]:
    """Two shipped specs copied and aged, with their displays, in display order."""
    found = []
    for spec in SPECS:
        path = tmp_path / "repo" / spec
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / spec, path)
        os.utime(path, ns=(OLD_NS, OLD_NS))
        found.append((path, spec))
    return found


def _cache(tmp_path: Path) -> ResultCache:
    return ResultCache(tmp_path / "cache", cache_keys(load_op_profiles(bundled_profiles_dir())))


def _plain(files: List[Tuple[Path, str]]) -> list:
    profiles = load_op_profiles(bundled_profiles_dir())
    return [runner.verdict_of(runner.check_file(path, display, profiles), None) for path, display in files]


def _same(found: list, expected: list) -> None:
    assert [(v.result, v.name, v.name_at) for v in found] == [(v.result, v.name, v.name_at) for v in expected]


def test_no_cache_checks_every_file_and_gives_no_row(files, checked: List[str]) -> None:
    profiles = load_op_profiles(bundled_profiles_dir())
    found = verdicts.verdicts(files, profiles)
    _same(found, _plain(files))
    assert [verdict.row for verdict in found] == [None, None]
    assert checked == [*SPECS, *SPECS]
    assert verdicts.cached_verdict(files[0][0], SPECS[0], profiles)[1] is None


def test_a_cached_verdict_is_the_uncached_one_and_a_hit_checks_nothing(tmp_path: Path, files,
                                                                       checked: List[str]) -> None:
    profiles = load_op_profiles(bundled_profiles_dir())
    progress: List[int] = []
    cache = _cache(tmp_path)
    first = verdicts.verdicts(files, profiles, jobs=1, progress=progress.append, cache=cache)
    assert checked == list(SPECS) and progress == [1, 1]
    assert [cache.record_stat(display) for _, display in files] == \
        [stamps.stat_text(os.stat(path)) for path, _ in files]
    assert cache.save() is None
    again = _cache(tmp_path)
    second = verdicts.verdicts(files, profiles, jobs=1, progress=progress.append, cache=again)
    assert checked == list(SPECS) and progress == [1, 1, 1, 1]  # two hits: nothing checked
    _same(second, first)
    _same(first, _plain(files))


def test_a_touched_file_is_read_again_and_its_record_restated(tmp_path: Path, files, checked: List[str]) -> None:
    profiles = load_op_profiles(bundled_profiles_dir())
    cache = _cache(tmp_path)
    first = verdicts.verdicts(files, profiles, jobs=1, cache=cache)
    cache.save()
    os.utime(files[0][0], ns=(OLD_NS + 10**9, OLD_NS + 10**9))  # same bytes, another stat
    line = _cache(tmp_path).line(SPECS[0])
    verdict, restated = verdicts.cached_verdict(files[0][0], SPECS[0], profiles, cache.keys, line)
    assert checked == list(SPECS)  # the bytes' digest matched: not checked again
    _same([verdict], first[:1])
    file, checksum, rest = restated.rstrip("\n").split("\t", 2)
    assert file == SPECS[0] and results.parse_record(file, checksum, rest).stat == \
        stamps.stat_text(os.stat(files[0][0]))


def test_a_record_that_does_not_decode_is_checked_again(tmp_path: Path, files, checked: List[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    profiles = load_op_profiles(bundled_profiles_dir())
    cache = _cache(tmp_path)
    first = verdicts.verdicts(files, profiles, jobs=1, cache=cache)
    cache.save()
    line = _cache(tmp_path).line(SPECS[0])
    record = results.parse_record(SPECS[0], *line)
    assert verdicts.decoded_verdict(SPECS[0], record) is not None
    monkeypatch.setattr(results, "decode_verdict", lambda *a: (_ for _ in ()).throw(ValueError("a foreign line")))
    assert verdicts.decoded_verdict(SPECS[0], record) is None
    os.utime(files[0][0], ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    verdict, fresh = verdicts.cached_verdict(files[0][0], SPECS[0], profiles, cache.keys, line)
    assert checked == [*SPECS, SPECS[0]]
    _same([verdict], first[:1])
    assert fresh is not None


def test_a_crash_and_an_unreadable_file_are_never_recorded(tmp_path: Path, files, monkeypatch) -> None:
    profiles = load_op_profiles(bundled_profiles_dir())
    keys = _cache(tmp_path).keys
    path, display = files[0]
    path.write_text(path.read_text(encoding="utf-8") + "head_dim: null\n", encoding="utf-8")
    warned, line = verdicts.cached_verdict(path, display, profiles, keys)
    assert warned.result.problems and line is not None  # a verdict with problems is recorded (no crash among them)
    monkeypatch.setattr(verdicts, "read_spec_bytes", lambda _: None)  # gone between its stat and its read
    verdict, line = verdicts.cached_verdict(path, display, profiles, keys)
    assert line is None and verdict.result.file == display
    monkeypatch.undo()
    monkeypatch.setattr(runner, "check_document", lambda doc, profiles: 1 / 0)
    crashed, line = verdicts.cached_verdict(path, display, profiles, keys)
    assert line is None and [p.code for p in crashed.result.problems] == ["check.internal"]
    folder = tmp_path / "repo" / "specs" / "folder.yaml"
    folder.mkdir()
    assert verdicts.cached_verdict(folder, "specs/folder.yaml", profiles, keys)[1] is None


def test_worker_processes_give_the_same_verdicts_in_order(tmp_path: Path, files) -> None:
    profiles = load_op_profiles(bundled_profiles_dir())
    keys = _cache(tmp_path).keys
    todo = [(path, display, None) for path, display in files]
    progress: List[int] = []
    local = list(verdicts._run_checks(todo, profiles, keys, 1, None, False))
    pooled = list(verdicts._run_checks(todo, profiles, keys, 2, progress.append, False, str(tmp_path / "cache")))
    _same([v for v, _ in pooled], [v for v, _ in local])
    assert [line is not None for _, line in pooled] == [True, True] and progress == [2]
    plain = list(verdicts._run_checks(todo, profiles, None, 2, None, False))
    _same([v for v, _ in plain], [v for v, _ in local])
    assert [line for _, line in plain] == [None, None]


def test_a_run_over_many_files_reads_the_records_at_once_not_one_search_each(tmp_path: Path, files,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    many = [(files[0][0].with_name(f"copy{index}.yaml"), f"specs/copy{index}.yaml") for index in range(5)]
    for path, _ in many:
        shutil.copyfile(files[0][0], path)
        os.utime(path, ns=(OLD_NS, OLD_NS))
    profiles = load_op_profiles(bundled_profiles_dir())
    cache = _cache(tmp_path)
    first = verdicts.verdicts(many, profiles, jobs=1, cache=cache)
    cache.save()
    monkeypatch.setattr(results, "_search_line", lambda *a: pytest.fail("searched the results file line by line"))
    _same(verdicts.verdicts(many, profiles, jobs=1, cache=_cache(tmp_path)), first)
