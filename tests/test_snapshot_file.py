"""The snapshot file itself (pipeline/cache/snapshot.py), in-process: the stat lines taken, a snapshot written and
read back whole, a torn, edited or foreign one refused, the stat check done by a child process and its answer
read back (no descriptor left open, no child left unreaped), the name map searched, a view recorded
(bench/mutate.py runs this file; tests/test_snapshot.py runs the same through ``list`` and ``show``)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import List

import pytest

from pipeline.cache import snapshot, stamps

OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01: never racy
KEY = "k" * 32


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``specs/`` with two specs, every stat aged."""
    (tmp_path / "specs").mkdir()
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / "specs" / name).write_text(f"name: {name}\n", encoding="utf-8")
        os.utime(tmp_path / "specs" / name, ns=(OLD_NS, OLD_NS))
    os.utime(tmp_path / "specs", ns=(OLD_NS, OLD_NS))
    return tmp_path


def _line(path: Path) -> str:
    return f"{path}\t{stamps.stat_text(os.stat(path))}"


def _paths(tree: Path) -> List[str]:
    return [str(tree / "specs"), str(tree / "specs" / "a.yaml"), str(tree / "specs" / "b.yaml")]


def test_take_writes_a_stat_line_a_path_and_refuses_what_no_stat_can_stand_for(tree: Path) -> None:
    paths = _paths(tree)
    assert snapshot.take(paths) == "\n".join(_line(Path(path)) for path in paths)
    assert snapshot.take([str(tree / "none.yaml")]) == f"{tree / 'none.yaml'}\t{snapshot.MISSING}"
    assert snapshot.take([str(tree / "specs" / "a\nb.yaml")]) is None  # a line break: no line can hold it
    (tree / "dangling").symlink_to(tree / "nowhere")
    assert snapshot.take([str(tree / "dangling")]) is None
    status = os.stat(paths[1])
    assert snapshot.recorded(status, OLD_NS + 2 * 10**9) == stamps.stat_text(status)
    assert snapshot.recorded(status, OLD_NS + 1) == stamps.RACY


def test_a_snapshot_reads_back_whole_while_every_stat_holds(tree: Path) -> None:
    paths = _paths(tree)
    assert snapshot.load(tree / "cache", KEY, tree / "specs") is None  # none yet
    snapshot.record(tree / "cache", KEY, paths, snapshot.take(paths), "the answer\n")
    record = snapshot.load(tree / "cache", KEY, tree / "specs")
    assert record == snapshot.Record([_line(Path(path)) for path in paths], "the answer\n")
    assert snapshot.answer(tree / "cache", KEY, tree / "specs") == "the answer\n"
    assert snapshot.holds(record.lines) and snapshot.exists(tree / "cache", KEY)
    os.utime(paths[2], ns=(OLD_NS + 1, OLD_NS + 1))
    assert not snapshot.holds(record.lines)
    assert snapshot.holds(record.lines, {paths[2]})  # a file the check takes itself
    assert not snapshot.holds(record.lines, {str(tree / "other.yaml")})  # which must be one it records
    assert snapshot.answer(tree / "cache", KEY, tree / "specs") is None


def test_a_path_recorded_missing_holds_until_it_is_made(tree: Path) -> None:
    lines = [f"{tree / 'pyproject.toml'}\t{snapshot.MISSING}"]
    assert snapshot.holds(lines)
    (tree / "pyproject.toml").write_text("", encoding="utf-8")
    assert not snapshot.holds(lines)


@pytest.mark.parametrize("damage", ["torn", "edited", "header", "no catalogue folder", "count"])
def test_a_damaged_or_foreign_snapshot_is_refused(tree: Path, damage: str) -> None:
    paths = _paths(tree)
    if damage == "no catalogue folder":
        snapshot.record(tree / "cache", KEY, paths[1:], snapshot.take(paths[1:]), "the answer\n")
    elif damage == "count":
        snapshot.record_stated(tree / "cache", KEY, 9, [f"{line}\n" for line in snapshot.take(paths).split("\n")])
    else:
        snapshot.record(tree / "cache", KEY, paths, snapshot.take(paths), "the answer\n")
    file = tree / "cache" / f"snapshot-{KEY}"
    data = file.read_bytes()
    if damage == "torn":
        file.write_bytes(data[:-3])
    elif damage == "edited":
        file.write_bytes(data.replace(b"the answer", b"the other"))
    elif damage == "header":
        file.write_bytes(data.replace(b"format 2", b"format 3"))
    assert snapshot.load(tree / "cache", KEY, tree / "specs") is None


def test_nothing_is_written_for_no_lines_or_for_a_path_changed_since_its_stat(tree: Path) -> None:
    snapshot.record_stated(tree / "cache", KEY, 0, ["the answer"])
    assert not (tree / "cache" / f"snapshot-{KEY}").exists()
    paths = _paths(tree)
    taken = snapshot.take(paths)
    os.utime(paths[1], ns=(OLD_NS + 1, OLD_NS + 1))
    snapshot.record(tree / "cache", KEY, paths, taken, "the answer\n")
    assert not snapshot.exists(tree / "cache", KEY)


def test_a_child_process_answers_whether_the_stats_hold_and_is_reaped(tree: Path) -> None:
    lines = snapshot.take(_paths(tree)).split("\n")
    for holding in (True, False):
        if not holding:
            os.utime(tree / "specs" / "a.yaml", ns=(OLD_NS + 1, OLD_NS + 1))
        reader, pid = snapshot._start_child(lines, frozenset())
        assert snapshot._child_answer(reader, pid) is holding
        with pytest.raises(OSError):
            os.fstat(reader)  # closed
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped
    assert snapshot.holds_soon(lines * snapshot.CHILD_LINES)() is False


def test_no_child_is_forked_beside_another_thread_or_without_a_pipe(tree: Path, monkeypatch) -> None:
    lines = snapshot.take(_paths(tree)).split("\n")
    monkeypatch.setattr(os, "fork", lambda: pytest.fail("forked"))
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert snapshot._start_child(lines, frozenset()) is None
        assert snapshot.holds_soon(lines * snapshot.CHILD_LINES)() is True  # answered here
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(os, "pipe", lambda: (_ for _ in ()).throw(OSError("no descriptors left")))
    assert snapshot._start_child(lines, frozenset()) is None


def test_a_name_map_is_searched_by_name_and_by_path(tree: Path) -> None:
    lines = [snapshot.name_line("Llama", "specs/a.yaml", "/r/specs/a.yaml"),
             snapshot.name_line(None, "specs/b.yaml", "/r/specs/b.yaml"),
             snapshot.name_line("LLAMA", "specs/c.yaml", "/r/specs/c.yaml")]
    names = "".join(lines)
    assert snapshot.stating(names, "llama") == [("Llama", "specs/a.yaml", "/r/specs/a.yaml"),
                                                ("LLAMA", "specs/c.yaml", "/r/specs/c.yaml")]
    assert snapshot.stating(names, "qwen") == []
    assert snapshot.names_files(names, {"/r/specs/a.yaml", "/r/specs/c.yaml"})
    assert not snapshot.names_files(names, {"/r/specs/a.yaml", "/r/specs/d.yaml"})
    many = "".join(snapshot.name_line(f"m{index}", f"specs/{index}.yaml", f"/r/{index}.yaml") for index in range(12))
    assert snapshot.names_files(many, {f"/r/{index}.yaml" for index in range(10)})
    assert not snapshot.names_files(many, {f"/r/{index}.yaml" for index in range(13)})
    assert snapshot.every_name(names)[1] == (None, "specs/b.yaml", "/r/specs/b.yaml")


def test_the_profile_sources_are_the_folder_then_its_profiles(tmp_path: Path) -> None:
    for name in ("b.yaml", "a.yaml", "notes.txt"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert snapshot.profile_sources(tmp_path) == [str(tmp_path.resolve()), str(tmp_path.resolve() / "a.yaml"),
                                                  str(tmp_path.resolve() / "b.yaml")]


def test_a_view_reads_back_under_its_key_only(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    snapshot.record_view(folder, "specs/a.yaml", "v1", '{"view": 1}')
    assert snapshot.recorded_view(folder, "specs/a.yaml", "v1") == '{"view": 1}'
    assert snapshot.recorded_view(folder, "specs/a.yaml", "v2") is None
    assert snapshot.recorded_view(folder, "specs/b.yaml", "v1") is None
