"""Writing files whole: atomic replacement, and reports written where a shell redirection would write them."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from pipeline.catalogue.atomic import write_atomic, write_output


def test_write_atomic_replaces_a_file_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o600)
    write_atomic(target, "new\n")
    assert (target.read_text(encoding="utf-8"), stat.S_IMODE(target.stat().st_mode)) == ("new\n", 0o600)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_write_atomic_gives_a_new_file_0644(tmp_path: Path) -> None:
    write_atomic(tmp_path / "new.json", "x")
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644


def test_write_atomic_into_a_missing_folder_raises_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "no" / "a.json", "x")
    assert list(tmp_path.iterdir()) == []


def test_write_output_follows_a_symlink_and_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "real.sarif").write_text("old", encoding="utf-8")
    (tmp_path / "link.sarif").symlink_to(tmp_path / "real.sarif")
    write_output(tmp_path / "link.sarif", "new")
    assert ((tmp_path / "link.sarif").is_symlink(), (tmp_path / "real.sarif").read_text(encoding="utf-8")) == (
        True, "new")


def test_write_output_writes_into_a_fifo_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    write_output(fifo, "report\n")
    reader.join(timeout=10)
    assert (received, stat.S_ISFIFO(fifo.stat().st_mode)) == (["report\n"], True)


def test_write_output_refuses_a_folder_and_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(IsADirectoryError):
        write_output(tmp_path, "x")
    with pytest.raises(OSError):
        write_output(tmp_path / "loop", "x")
