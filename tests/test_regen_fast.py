"""regen's fast paths held to their slow paths, byte for byte (issue 28: regen at catalogue scale).

- :func:`~pipeline.catalogue.artifacts.render` (python-rapidjson) is
  :func:`~pipeline.catalogue.artifacts.render_slow` (``json.dumps(indent=2)``, the pure-Python encoder) on every
  artifact of the catalogue's ``resolved/``, which is also the text on disk, and on generated JSON values (the
  ASCII ones reaching rapidjson's text, which is asserted); anything that is not plain JSON, and a string that
  rapidjson would escape in a way of its own, takes the slow path.
- :class:`~pipeline.catalogue.atomic.Batch` (every file staged, one flush, then each renamed) leaves each file as
  :func:`~pipeline.catalogue.atomic.write_atomic` does (bytes and mode), with one ``sync`` for a batch of
  :data:`~pipeline.catalogue.atomic.SYNC_FROM` files and more, a ``fsync`` per file below that or where ``sync``
  may return early, and nothing written nor left behind when a file cannot be staged.
"""

from __future__ import annotations

import collections
import enum
import json
import math
import os
import stat
import types
from pathlib import Path
from typing import Any, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.catalogue import artifacts, atomic
from pipeline.catalogue.artifacts import render, render_slow
from pipeline.catalogue.atomic import SYNC_FROM, Batch, write_atomic
from budget import examples

ROOT = Path(__file__).resolve().parent.parent
RESOLVED = sorted((ROOT / "resolved").glob("*.json"))


def test_the_catalogue_has_artifacts_to_compare() -> None:
    assert len(RESOLVED) > 40 and any(path.name == "index.json" for path in RESOLVED)


@pytest.mark.parametrize("path", RESOLVED, ids=lambda path: path.name)
def test_render_is_the_slow_rendering_and_the_file_of_every_catalogue_artifact(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    document = json.loads(text)
    assert render(document) == render_slow(document) == text


class _Level(enum.IntEnum):
    HIGH = 2


class _Name(str):
    """A string of its own type: not plain, so the slow path renders it."""


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                     st.text())
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(), inner, max_size=4)),
                     max_leaves=30)


@settings(max_examples=examples(200))
@given(_JSON)
def test_render_is_the_slow_rendering_of_any_json_value(value: Any) -> None:
    assert render(value) == render_slow(value)


#: Printable ASCII but the backslash (a string holding ``\\u`` takes the slow path: the cases of the test below).
_PRINTABLE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters="\\"))
_PLAIN_ASCII = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), _PRINTABLE),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_PRINTABLE, inner, max_size=4)),
    max_leaves=30)


@settings(max_examples=examples(200))
@given(_PLAIN_ASCII)
def test_rapidjson_writes_the_slow_rendering_of_any_printable_ascii_json_value(value: Any) -> None:
    """The fast path itself, not its fallback: json.dumps is never called for these."""
    expected = render_slow(value)
    real_dumps = artifacts.json.dumps
    try:
        artifacts.json.dumps = _refused
        assert render(value) == expected
    finally:
        artifacts.json.dumps = real_dumps


def _refused(*args, **kwargs):
    raise AssertionError("json.dumps called")


@pytest.mark.parametrize("value", [
    {"a": math.nan}, {"a": [1, math.inf]}, {1: "a"}, {"a": {2: 3}}, {"a": object()}, (1, [2, (3,)]),
    {"a": ()}, [[], {}, [[]], {"b": {}}], "text", 7, 2.5, None, {"a": collections.OrderedDict(c=1, b=[2])},
    {"a": [_Level.HIGH]}, {"a": _Name("x")}, collections.OrderedDict(b=1, a={"c": 2}),
    {"a": b"x"}, [bytearray(b"x")], {"a": types.MappingProxyType({"b": 1})}, [range(2)], {"a": {1, 2}},
    {"a": "\x1f"}, {"a": "\x7f"}, {"a": "\u00e9"}, {"\u00e9": 1, "e": 2}, {"a": "\b\f\r\n\t\"\\/"},
    {"a": "\ud800"}, {"a": "\U0001f600"}, {"a": "\\u0041"}, {"a": -math.inf}, [10 ** 400, -(2 ** 64)],
], ids=lambda value: type(value).__name__)
def test_what_is_not_plain_json_takes_the_slow_path(value: Any) -> None:
    try:
        expected = render_slow(value)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            render(value)
    else:
        assert render(value) == expected


def test_the_fast_path_is_taken_for_an_artifact(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparisons above are between two paths, not one: an artifact never reaches ``json.dumps``."""
    document = json.loads(next(path for path in RESOLVED if path.name != "index.json").read_text(encoding="utf-8"))
    expected = render_slow(document)
    monkeypatch.setattr(artifacts.json, "dumps", _refused)
    assert render(document) == expected


def _texts(count: int) -> List[str]:
    return [render({"name": f"m{index}", "values": list(range(index % 5))}) for index in range(count)]


@pytest.mark.parametrize("count", [1, SYNC_FROM - 1, SYNC_FROM, 3 * SYNC_FROM])
def test_a_batch_writes_what_write_atomic_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 count: int) -> None:
    slow, fast = tmp_path / "slow", tmp_path / "fast"
    slow.mkdir()
    fast.mkdir()
    texts = _texts(count)
    for folder in (slow, fast):  # an old file of its own mode, replaced: the mode is kept
        (folder / "f0.json").write_text("old", encoding="utf-8")
        (folder / "f0.json").chmod(0o600)
    for index, text in enumerate(texts):
        write_atomic(slow / f"f{index}.json", text)
    synced, fsynced = [], []
    real_sync_all, real_fsync = atomic._sync_all, os.fsync
    monkeypatch.setattr(atomic, "_sync_all", lambda: synced.append(True) or real_sync_all())
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: fsynced.append(fd) or real_fsync(fd))
    batch = Batch()
    for index, text in enumerate(texts):
        batch.stage(fast / f"f{index}.json", text)
    assert sorted(path.name for path in fast.iterdir() if not path.name.startswith(".")) == ["f0.json"]
    batch.flush()
    for index in range(count):
        batch.commit(fast / f"f{index}.json")
    batch.discard()
    assert sorted(os.listdir(fast)) == sorted(os.listdir(slow))
    for name in os.listdir(slow):
        assert (fast / name).read_bytes() == (slow / name).read_bytes()
        assert stat.S_IMODE((fast / name).stat().st_mode) == stat.S_IMODE((slow / name).stat().st_mode)
    assert stat.S_IMODE((fast / "f0.json").stat().st_mode) == 0o600
    if count >= SYNC_FROM and real_sync_all():
        assert (len(synced), len(fsynced)) == (1, 0)
    else:
        assert len(fsynced) == count


def test_a_batch_without_sync_all_flushes_each_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fsynced = []
    real_fsync = os.fsync
    monkeypatch.setattr(atomic, "_sync_all", lambda: False)
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: fsynced.append(fd) or real_fsync(fd))
    batch = Batch()
    texts = _texts(SYNC_FROM + 1)
    for index, text in enumerate(texts):
        batch.stage(tmp_path / f"f{index}.json", text)
    batch.flush()
    for index in range(len(texts)):
        batch.commit(tmp_path / f"f{index}.json")
    assert len(fsynced) == len(texts)
    assert [(tmp_path / f"f{index}.json").read_text(encoding="utf-8") for index in range(len(texts))] == texts


def test_a_batch_commits_only_after_its_flush_and_discards_what_it_did_not_commit(tmp_path: Path) -> None:
    batch = Batch()
    batch.stage(tmp_path / "a.json", "a")
    batch.stage(tmp_path / "b.json", "b")
    with pytest.raises(ValueError):
        batch.commit(tmp_path / "a.json")
    batch.flush()
    batch.commit(tmp_path / "a.json")
    batch.discard()
    assert sorted(os.listdir(tmp_path)) == ["a.json"]


def test_a_batch_that_cannot_stage_leaves_nothing(tmp_path: Path) -> None:
    batch = Batch()
    batch.stage(tmp_path / "a.json", "a")
    with pytest.raises(FileNotFoundError):
        batch.stage(tmp_path / "missing" / "b.json", "b")
    batch.discard()
    assert os.listdir(tmp_path) == []
