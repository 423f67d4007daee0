"""The record of a whole check's answer (pipeline/cache/whole_check.py), in-process: what is written reads back as
the same answer while every stat holds, nothing is written that a stat could not stand behind (a spec with no
cache record or a racy one, a source or a folder changed since it was stat'ed, a path with a line break), and a
record that is torn, forged or stale gives no answer (bench/mutate.py runs this file; tests/test_whole_check.py
runs the same through the command)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from pipeline.cache import names, snapshot, stamps, whole_check
from pipeline.cache.whole_check import Answer
from pipeline.check.repo import SpecRepo

OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01: never racy
ANSWER = Answer(1, "specs/a.yaml: error\n", ("{}\n", "<xml/>\n"))


class _Records:
    """A saved result cache's stat of each spec's record (:meth:`pipeline.cache.results.ResultCache.record_stat`)."""

    def __init__(self, stats: Dict[str, Optional[str]]) -> None:
        self.stats = stats

    def record_stat(self, display: str) -> Optional[str]:
        return self.stats.get(display)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``specs/`` with two specs and ``specs/sub``, a configuration file, every stat aged."""
    (tmp_path / "specs" / "sub").mkdir(parents=True)
    for name in ("specs/a.yaml", "specs/sub/b.yaml", "modelspec.toml"):
        (tmp_path / name).write_text(f"# {name}\n", encoding="utf-8")
    for path in (tmp_path / "specs" / "a.yaml", tmp_path / "specs" / "sub" / "b.yaml", tmp_path / "modelspec.toml",
                 tmp_path / "specs" / "sub", tmp_path / "specs"):
        os.utime(path, ns=(OLD_NS, OLD_NS))
    return tmp_path


def _files(tree: Path) -> List[str]:
    return [str(tree / "specs" / "a.yaml"), str(tree / "specs" / "sub" / "b.yaml")]


def _record(tree: Path, files: Optional[List[str]] = None, stats: Optional[Dict[str, Optional[str]]] = None,
            sources: Optional[List[str]] = None, before=None, walked=None, answer: Answer = ANSWER) -> Path:
    """Record *answer* as a run over *tree* would; the snapshot file's path."""
    files = _files(tree) if files is None else files
    displays = [f"d{index}" for index in range(len(files))]
    if stats is None:
        stats = {display: stamps.stat_text(os.stat(path)) for display, path in zip(displays, files)}
    sources = [str(tree / "pyproject.toml"), str(tree / "modelspec.toml")] if sources is None else sources
    walked = names.walk(files, {str(tree / "specs"), str(tree / "specs" / "sub")}) if walked is None else walked
    whole_check.record_answer(tree / "cache", "k" * 32, before or (sources, snapshot.take(sources)), walked,
                              _Records(stats), displays, answer)
    return tree / "cache" / f"snapshot-{'k' * 32}"


def _recorded(tree: Path) -> Optional[Answer]:
    return whole_check.recorded_answer(tree / "cache", "k" * 32, tree / "specs")


def test_a_recorded_answer_reads_back_whole_with_its_specs(tree: Path) -> None:
    assert _recorded(tree) is None  # none recorded yet
    _record(tree)
    assert _recorded(tree) == dataclasses.replace(ANSWER, specs=tuple(_files(tree)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ANSWER.exit_code = 0  # type: ignore[misc]


@pytest.mark.parametrize("change", ["spec", "config made", "folder"])
def test_a_change_to_anything_it_came_from_gives_no_answer(tree: Path, change: str) -> None:
    _record(tree)
    if change == "spec":
        os.utime(tree / "specs" / "sub" / "b.yaml", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    elif change == "config made":
        (tree / "pyproject.toml").write_text("", encoding="utf-8")
    else:
        os.utime(tree / "specs" / "sub", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    assert _recorded(tree) is None


@pytest.mark.parametrize("why", ["no record", "racy record", "line break", "sources racy", "source changed",
                                 "folder changed"])
def test_nothing_is_recorded_that_a_stat_cannot_stand_behind(tree: Path, why: str) -> None:
    files, stats, before, walked = None, None, None, None
    if why in ("no record", "racy record"):
        stats = {"d0": stamps.stat_text(os.stat(_files(tree)[0])), "d1": None if why == "no record" else snapshot.RACY}
    elif why == "line break":
        files = [*_files(tree), str(tree / "specs" / "c\n.yaml")]
        stats = {"d0": "1:1:1:1", "d1": "1:1:1:1", "d2": "1:1:1:1"}
    elif why == "sources racy":
        before = ([str(tree / "modelspec.toml")], None)
    elif why == "source changed":
        sources = [str(tree / "modelspec.toml")]
        before = (sources, snapshot.take(sources))
        os.utime(tree / "modelspec.toml", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    else:
        walked = names.walk(_files(tree), {str(tree / "specs")})
        os.utime(tree / "specs", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    assert not _record(tree, files, stats, before=before, walked=walked).exists()


@pytest.mark.parametrize("count, answered", [(0, True), (2, True), (-1, False), (99, False), ("2", False),
                                             ("not json", False)])
def test_a_forged_count_of_spec_lines_gives_no_answer(tree: Path, count, answered: bool) -> None:
    lines = [f"{tree / 'specs'}\t{stamps.stat_text(os.stat(tree / 'specs'))}",
             *(f"{path}\t{stamps.stat_text(os.stat(path))}" for path in _files(tree))]
    text = "[0" if count == "not json" else json.dumps([0, "clean\n", [], count])
    snapshot.record_stated(tree / "cache", "k" * 32, len(lines), [*(f"{line}\n" for line in lines), text])
    expected = Answer(0, "clean\n", (), tuple(_files(tree)[:count]) if count else ()) if answered else None
    assert _recorded(tree) == expected


def test_the_answer_key_names_the_options_the_folder_and_the_report_base(tree: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    repo = SpecRepo(tree)
    monkeypatch.chdir(tree)
    key = whole_check.answer_key(repo, ["text", [], False])
    assert len(key) == 32 and key != whole_check.answer_key(repo, ["json", [], False])
    assert key != names._snapshot_key(repo)
    monkeypatch.chdir(tree / "specs")
    assert whole_check.answer_key(repo, ["text", [], False]) != key


def test_the_sources_are_every_configuration_file_then_the_profiles(tree: Path) -> None:
    repo = SpecRepo(tree)
    found = whole_check.sources(repo)
    assert found[:2] == [str(tree.resolve() / "modelspec.toml"), str(tree.resolve() / "pyproject.toml")]
    assert found[-len(snapshot.profiles_chosen(repo.profiles, repo.profiles_chosen_by)):] == \
        snapshot.profiles_chosen(repo.profiles, repo.profiles_chosen_by)
