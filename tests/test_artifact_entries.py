"""The artifact cache's entries (pipeline/cache/artifacts.py), in-process: an entry reads back as written, a forged
or foreign line is refused, a stat vouches for a file only past the racy window, an entry decides an artifact
only under the record's inputs, and the ``index.json`` line reads back under its environment only
(bench/mutate.py runs this file; tests/test_artifact_cache.py runs the same through ``regen``)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

import pytest

from pipeline.cache import artifacts, results, stamps
from pipeline.cache.artifacts import ArtifactCache, Entry, Vouched
from pipeline.cache.results import CacheKeys, Record

OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01
KEYS = CacheKeys("env", {"llama": "h" * 64})
DEPENDS = '["llama"]'
RECORD = Record("1:2:3:4", OLD_NS, "d" * 64, "env", '"m"', DEPENDS, KEYS.depends(DEPENDS), "[]", "1:1:\"m\"", "-", "-")
ENTRY = Entry("d" * 64, "env", KEYS.depends(DEPENDS), "m.json", "a" * 16, "s" * 64, "5:6:7:8", OLD_NS)


def _parsed(line: str, path: str = "specs/m.yaml"):
    file, checksum, rest = line.rstrip("\n").split("\t", 2)
    assert file == path
    return artifacts.parse_entry(path, checksum, rest)


def test_an_entry_reads_back_as_written_and_is_frozen() -> None:
    line = ENTRY.to_line("specs/m.yaml")
    assert line.count("\t") == 9 and line.endswith("\t5:6:7:8\t1577836800000000000\n")
    assert _parsed(line) == ENTRY
    assert (ENTRY.name, ENTRY.document("specs/m.yaml")) == \
        ("m", {"name": "m", "path": "specs/m.yaml", "digest": "a" * 16})
    with pytest.raises(dataclasses.FrozenInstanceError):
        ENTRY.file = "n.json"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Vouched("s").sha256 = "t"  # type: ignore[misc]


@pytest.mark.parametrize("forge", ["checksum", "moved", "fields", "read_ns", "file"])
def test_a_forged_or_foreign_line_is_no_entry(forge: str) -> None:
    path, line = "specs/m.yaml", ENTRY.to_line("specs/m.yaml")
    _, checksum, rest = line.rstrip("\n").split("\t", 2)
    if forge == "checksum":
        checksum = "0" * len(checksum)
    elif forge == "moved":
        path = "specs/n.yaml"
    else:
        fields = rest.split("\t")
        if forge == "fields":
            fields.append("more")
        elif forge == "read_ns":
            fields[7] = "soon"
        else:
            fields[3] = "m.yaml"
        rest = "\t".join(fields)
        checksum = results.line_checksum(path, rest)
    assert artifacts.parse_entry(path, checksum, rest) is None


def test_a_stat_vouches_for_the_file_only_as_recorded_and_past_the_racy_window(tmp_path: Path) -> None:
    file = tmp_path / "m.json"
    file.write_text("{}", encoding="utf-8")
    os.utime(file, ns=(OLD_NS, OLD_NS))
    status = os.stat(file)
    entry = dataclasses.replace(ENTRY, stat=stamps.stat_text(status), read_ns=OLD_NS + stamps.RACY_NS)
    assert entry.vouches(status)
    assert not dataclasses.replace(entry, read_ns=OLD_NS + stamps.RACY_NS - 1).vouches(status)
    assert not ENTRY.vouches(status)
    assert entry.restated(status, 7) == dataclasses.replace(entry, read_ns=7)
    assert Vouched(hashlib.sha256(b"{}").hexdigest()).matches("{}")
    assert not Vouched("s").matches("{}") and Vouched("s").matches(Vouched("s")) and not Vouched("s").matches(b"s")


def test_an_entry_decides_the_artifact_only_under_the_record_s_inputs() -> None:
    assert ENTRY.decides(RECORD, KEYS)
    assert not dataclasses.replace(ENTRY, environment="other").decides(RECORD, KEYS)
    assert not dataclasses.replace(ENTRY, spec_digest="e" * 64).decides(RECORD, KEYS)
    assert not dataclasses.replace(ENTRY, profiles="other").decides(RECORD, KEYS)
    assert not ENTRY.decides(RECORD._replace(verdict=None), KEYS)
    made = artifacts.new_entry(RECORD, "m.json", "a" * 16, "{}", os.stat(__file__), 9)
    assert made == Entry("d" * 64, "env", RECORD.profiles, "m.json", "a" * 16, hashlib.sha256(b"{}").hexdigest(),
                         stamps.stat_text(os.stat(__file__)), 9)


def test_entries_and_the_index_line_read_back_from_the_artifacts_file(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ArtifactCache(tmp_path, KEYS)
    assert cache.folder == tmp_path and cache.entry("specs/m.yaml") is None and cache.index_digest() is None
    other = dataclasses.replace(ENTRY, environment="old")
    cache.add("specs/m.yaml", ENTRY)
    cache.add("specs/m2.yaml", ENTRY)
    cache.add("specs/o.yaml", other)
    cache.add_index('{"index": 1}')
    assert cache.save() is None
    lines = (tmp_path / "artifacts").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t", 1)[0] for line in lines[1:]] == ["specs/m.yaml", "specs/m2.yaml", "specs/o.yaml",
                                                              "index.json"]
    again = ArtifactCache(tmp_path, KEYS)
    again.expect_lookups(10)
    monkeypatch.setattr(results, "_search_line", lambda *a: pytest.fail("searched line by line"))
    assert again.entry("specs/m.yaml") == ENTRY and again.entry("specs/o.yaml") == other
    assert again.by_file() == {"m.json": [("specs/m.yaml", ENTRY), ("specs/m2.yaml", ENTRY)]}
    assert again.index_digest() == hashlib.sha256(b'{"index": 1}').hexdigest()
    monkeypatch.undo()
    assert ArtifactCache(tmp_path, CacheKeys("new", KEYS.profiles)).index_digest() is None
    before = (tmp_path / "artifacts").read_bytes()
    again.add_index('{"index": 1}')  # the line the file holds already: nothing to add
    again.add("specs/m.yaml", ENTRY)
    assert again.save() is None and (tmp_path / "artifacts").read_bytes() == before


def test_a_forged_index_line_is_no_digest(tmp_path: Path) -> None:
    cache = ArtifactCache(tmp_path, KEYS)
    cache._entries.add("index.json", f"index.json\t{'0' * 16}\tenv\t{'s' * 64}\n")
    cache._entries.add("specs/x.yaml", "specs/x.yaml\t0\tnot an entry\n")
    cache.save()
    again = ArtifactCache(tmp_path, KEYS)
    assert again.index_digest() is None and again.by_file() == {}
    short = ArtifactCache(tmp_path, KEYS)
    rest = f"env\t{'s' * 63}"
    short._entries.add("index.json", f"index.json\t{results.line_checksum('index.json', rest)}\t{rest}\n")
    short.save()
    assert ArtifactCache(tmp_path, KEYS).index_digest() is None
