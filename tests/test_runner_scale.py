"""The runner's choices at catalogue scale: how many processes, and finding files as ``Path`` would.

``find_spec_files`` sorts and filters path strings rather than ``Path``
objects (a catalogue of 10,000 specs made those most of a cached run); these
tests hold it to ``Path``'s order and suffixes (its discovery policy is
tested in test_check and test_catalogue).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.check import runner
from pipeline.check.runner import FILES_PER_WORKER, idle_cores, worker_count
from pipeline.check.discovery import _path_key, _spec_suffix

names = st.text(alphabet="ab-._ Y/", min_size=1, max_size=12)  # "/" and "." make absolute, "." and ".." parts


@given(paths=st.lists(names, min_size=1, max_size=8))
def test_paths_sort_as_path_sorts_them(paths: list) -> None:
    assert [Path(path) for path in sorted(paths, key=_path_key)] == sorted(Path(path) for path in paths)


@given(name=st.text(alphabet="ab.yamlYML", min_size=1, max_size=10))
def test_a_spec_suffix_is_what_path_suffix_reads(name: str) -> None:
    assert _spec_suffix(name) == (Path(name).suffix.lower() in (".yaml", ".yml"))


@pytest.mark.parametrize("load, cores, idle", [(0.0, 2, 2), (0.4, 2, 2), (0.6, 2, 1), (1.7, 2, 1), (4.6, 2, 1),
                                               (1.0, 8, 7), (0.0, 1, 1)])
def test_default_jobs_leave_busy_cores_alone_by_the_load_average_where_linux_does_not_say(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, load: float, cores: int, idle: int) -> None:
    monkeypatch.setattr(runner, "LOADAVG", str(tmp_path / "no-such-file"))
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert idle_cores() == idle
    assert worker_count(None, 100 * FILES_PER_WORKER) == idle
    assert worker_count(None, FILES_PER_WORKER - 1) == 1  # a small run stays in one process
    assert worker_count(3, 100 * FILES_PER_WORKER) == 3  # --jobs is obeyed


@pytest.mark.parametrize("loadavg, cores, idle", [("0.00 0.01 0.05 1/80 4242", 2, 2), ("1.90 1.20 0.70 1/80 4242", 2, 2),
                                                   ("0.10 0.10 0.10 2/80 4242", 2, 1), ("3.0 3.0 3.0 5/90 4242", 2, 1),
                                                   ("0.5 0.5 0.5 3/90 4242", 8, 6)])
def test_default_jobs_leave_the_cores_busy_now_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, loadavg: str,
                                                     cores: int, idle: int) -> None:
    # The tasks runnable now, this one apart, decide; a high average left by a run that just ended does not.
    (tmp_path / "loadavg").write_text(loadavg + "\n", encoding="ascii")
    monkeypatch.setattr(runner, "LOADAVG", str(tmp_path / "loadavg"))
    monkeypatch.setattr(os, "getloadavg", lambda: pytest.fail("the load average was read"))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    assert idle_cores() == idle


def test_no_load_average_counts_as_idle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def unavailable():
        raise OSError("no load average here")

    monkeypatch.setattr(runner, "LOADAVG", str(tmp_path / "no-such-file"))
    monkeypatch.setattr(os, "getloadavg", unavailable)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert runner.idle_cores() == 2
