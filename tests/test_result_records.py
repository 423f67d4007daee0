"""The result cache's files (pipeline/cache/results.py), in-process: a record reads back as written (a checked
file's, a name-only one), a forged line is refused, the results file is appended to and compacted as its header
says, a line is searched for (a hit counted: the file is not read into a table) or read from the table, the
catalogue index and the op profiles' entry read back under their stamp (bench/mutate.py runs this file;
tests/test_result_cache.py runs the same through the commands)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict, List

import pytest

from pipeline.cache import results
from pipeline.cache.results import Record, RecordingProfiles, ResultCache, cache_keys
from pipeline.cache.verdicts import check_recorded
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.spec import yaml_source
from pipeline.spec.resources import bundled_profiles_dir

ROOT = Path(__file__).resolve().parent.parent
OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01: never racy
CLEAN, FAILING = "specs/llama/llama-3.1-8b.yaml", "specs/qwen/qwen3-8b.yaml"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, object]:
    """Two specs copied and aged (one failing), checked once, with their records and verdicts."""
    root = tmp_path_factory.mktemp("records")
    profiles = load_op_profiles(bundled_profiles_dir())
    keys = cache_keys(profiles)
    found: Dict[str, object] = {"root": root, "keys": keys}
    for display in (CLEAN, FAILING):
        path = root / display
        path.parent.mkdir(parents=True, exist_ok=True)
        text = (ROOT / display).read_text(encoding="utf-8")
        path.write_text(text.replace("hidden_size: 4096", "hidden_size: -1") if display == FAILING else text,
                        encoding="utf-8")
        os.utime(path, ns=(OLD_NS, OLD_NS))
        raw = path.read_bytes()
        _, verdict, record = check_recorded(raw, display, profiles, keys,
                                            (os.stat(path), OLD_NS + 10 * 10**9, results.content_digest(raw)), True)
        found[display] = (path, verdict, record)
    return found


def _as_read(record: Record) -> Record:
    """*record* as a line of it reads back: an optional part written ``-`` is ``None``."""
    return Record(*record[:5], *(None if part == "-" else part for part in record[5:]))


def _split(line: str):
    file, checksum, rest = line.rstrip("\n").split("\t", 2)
    return file, checksum, rest


def test_a_record_reads_back_as_written_and_decodes_to_its_verdict(made) -> None:
    for display in (CLEAN, FAILING):
        _, verdict, record = made[display]
        assert results.parse_record(*_split(record.to_line(display))) == _as_read(record)
        decoded = results.decode_verdict(display, record, True)
        assert (decoded.result, decoded.name, decoded.name_at, decoded.stated_name, decoded.row) == \
            (verdict.result, verdict.name, verdict.name_at, verdict.stated_name, verdict.row)
    named = results.new_record(os.stat(made[CLEAN][0]), 5, "d" * 64, "env", "llama-3.1-8b")
    assert results.parse_record(*_split(named.to_line("x.yaml"))) == named and named.dependencies is None
    assert (results.listed(made[CLEAN][2]), results.listed(made[FAILING][2]), results.listed(named)) == ("1", "0", "-")


@pytest.mark.parametrize("forge", ["checksum", "fields", "read_ns"])
def test_a_forged_record_line_is_refused(made, forge: str) -> None:
    file, checksum, rest = _split(made[CLEAN][2].to_line(CLEAN))
    fields = rest.split("\t")
    if forge == "checksum":
        checksum = "0" * len(checksum)
    else:
        fields = [*fields, "-"] if forge == "fields" else [fields[0], "soon", *fields[2:]]
        checksum = results.line_checksum(file, "\t".join(fields))
    assert results.parse_record(file, checksum, "\t".join(fields)) is None


def test_names_rows_and_consulted_profiles_read_as_written() -> None:
    assert (results.json_name('"abc"'), results.json_name('"a\\"b"'), results.json_name("null"),
            results.json_name("1")) == ("abc", 'a"b', None, None)
    recording = RecordingProfiles({"llama": 1})
    assert ("llama" in recording, "qwen" in recording, recording["llama"]) == (True, False, 1)
    assert recording.dependencies() == ["llama", "qwen"]
    assert len(recording) == 1 and recording.dependencies() == ["*"]
    record = Record("1:2:3:4", 5, "d", "env", '"m"', row='{"a": 1}')
    assert results._row_line("1", record) == '1\t-\t{"a": 1}'
    assert results._row_line("1", record._replace(cells="c")) == '1\tc\t{"a": 1}'
    assert results._row_line("0", record._replace(cells="c")) == '0\t-\t{"a": 1}'


def test_the_checked_profiles_read_back_under_their_key_only(tmp_path: Path) -> None:
    documents = {"llama.yaml": {"arch": "llama", "sizes": [1, 2.5, None, True]}}
    results.store_profile_data(tmp_path, "key1", documents)
    assert results.load_profile_data(tmp_path, "key1") == documents
    assert results.load_profile_data(tmp_path, "key2") is None
    text = (tmp_path / "profiles").read_text(encoding="utf-8")
    (tmp_path / "profiles").write_text(text.replace("2.5", "3.5"), encoding="utf-8")
    assert results.load_profile_data(tmp_path, "key1") is None  # edited: its checksum fails
    header = text.partition("\n")[0]
    (tmp_path / "profiles").write_text(f"{header}\nkey1\t{results.line_checksum('key1', '[x')}\t[x\n",
                                       encoding="utf-8")
    assert results.load_profile_data(tmp_path, "key1") is None  # not JSON
    assert results.json_exact(documents)
    assert not any(map(results.json_exact, [{1: "a"}, {"a": float("nan")}, (1,), [float("inf")]]))


def _cache(made, folder: Path) -> ResultCache:
    return ResultCache(folder, made["keys"])


def test_the_results_file_is_compacted_then_appended_to(made, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = _cache(made, folder)
    first.add_checked(CLEAN, made[CLEAN][2].to_line(CLEAN))
    assert first.record_stat(CLEAN) == made[CLEAN][2].stat
    assert first.save() is None
    data = (folder / "results").read_bytes()
    head = data.partition(b"\n")[0]
    assert head == f"{results.HEADER[:-1]}\t{len(data):020d}".encode()  # compacted: its size in its header
    assert (folder / ".gitignore").exists() and (folder / "CACHEDIR.TAG").exists()
    second = _cache(made, folder)
    second.add_checked(FAILING, made[FAILING][2].to_line(FAILING))
    assert second.save() is None
    assert (folder / "results").read_bytes() == data + made[FAILING][2].to_line(FAILING).encode()  # appended
    third = _cache(made, folder)
    assert [third.record(CLEAN), third.record(FAILING)] == [_as_read(made[CLEAN][2]), _as_read(made[FAILING][2])]
    assert list(third.paths()) == [CLEAN, FAILING]


def test_a_few_lines_are_searched_for_and_many_read_from_the_table(made, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    saving = _cache(made, folder)
    for display in (CLEAN, FAILING):
        saving.add(display, made[display][2].to_line(display))
    saving.save()
    reads: List[Path] = []
    real = results._read_lines
    monkeypatch.setattr(results, "_read_lines", lambda path, header=results.HEADER: reads.append(path) or
                        real(path, header))
    few = _cache(made, folder)
    _, checksum, rest = _split(made[CLEAN][2].to_line(CLEAN))
    assert few.line(CLEAN) == (checksum, rest) and few.line("specs/none.yaml") is None and reads == []
    many = _cache(made, folder)
    many.expect_lookups(10)
    assert many.line(CLEAN) == (checksum, rest) and many.record(FAILING) == _as_read(made[FAILING][2])
    assert reads == [folder / "results"]


def test_a_line_longer_than_a_read_block_is_found_whole(tmp_path: Path) -> None:
    path = tmp_path / "results"
    long = "x" * 70_000
    path.write_text(f"{results.HEADER}a.yaml\tsum\t{long}\nb.yaml\tsum\tshort\n", encoding="utf-8")
    assert results._search_line(path, results.HEADER, "a.yaml") == f"sum\t{long}"
    assert results._search_line(path, results.HEADER, "b.yaml") == "sum\tshort"


def test_a_reused_record_must_be_current_and_its_stat_the_file_s(made, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    saving = _cache(made, folder)
    saving.add(CLEAN, made[CLEAN][2].to_line(CLEAN))
    saving.save()
    path, verdict, _ = made[CLEAN]
    reused = _cache(made, folder).reuse(CLEAN, path)
    assert (reused.result, reused.name) == (verdict.result, verdict.name)
    assert _cache(made, folder).reuse(FAILING, made[FAILING][0]) is None  # no record
    other = ResultCache(folder, results.CacheKeys("another environment", made["keys"].profiles))
    assert other.reuse(CLEAN, path) is None


def test_the_index_reads_back_what_runs_learnt_and_reads_its_file_once(made, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    for display in (CLEAN, FAILING):
        learning = _cache(made, folder)
        learning.index.learn(display, made[display][2], results.listed(made[display][2]))
        assert learning.save() is None
    reads: List[Path] = []
    real = results._IndexTable._read
    monkeypatch.setattr(results._IndexTable, "_read", lambda self: reads.append(self.path) or real(self))
    index = _cache(made, folder).index
    clean, failing = (os.stat(made[display][0]) for display in (CLEAN, FAILING))
    record = made[CLEAN][2]
    assert index.known_name(CLEAN, clean) == (True, "llama-3.1-8b")
    assert index.known_name(FAILING, failing) == (True, made[FAILING][2].stated_name)
    assert index.listed_row(CLEAN, clean) == (record.cells or "-", record.row)
    assert index.listed_row(FAILING, failing) is None  # it failed: list checks it
    assert index.stated_under(CLEAN) == (record.stat, "llama-3.1-8b")
    assert reads == [folder / "names", folder / "rows"]
    again = _cache(made, folder)
    again.index.learn(CLEAN, record._replace(read_ns=record.read_ns + 1))
    assert again.save() is None and reads == [folder / "names", folder / "rows", folder / "names"]


def test_a_line_of_another_environment_teaches_the_index_nothing(made, tmp_path: Path) -> None:
    cache = _cache(made, tmp_path / "cache")
    assert not cache.index.learnt
    cache.add(CLEAN, made[CLEAN][2]._replace(environment="another").to_line(CLEAN))
    assert not cache.index.learnt
    cache.add(CLEAN, made[CLEAN][2].to_line(CLEAN))
    assert cache.index.learnt
    cache.save()


def test_a_stated_name_comes_from_the_record_without_loading_the_file(made, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    path = made[CLEAN][0]
    first = _cache(made, folder)
    assert list(first.stated_names([(path, CLEAN)])) == [("llama-3.1-8b", os.stat(path))]  # loaded, recorded
    assert first.save() is None
    shutil.rmtree(folder / "names", ignore_errors=True)
    (folder / "names").unlink(missing_ok=True)  # only the record answers now
    monkeypatch.setattr(yaml_source, "load_bytes", lambda *a: pytest.fail("loaded the file"))
    assert _cache(made, folder).stated_name(path, CLEAN) == "llama-3.1-8b"
    monkeypatch.undo()
    assert _cache(made, folder).stated_name(tmp_path, "a folder.yaml") is None


def test_a_name_without_an_escape_is_its_own_content_even_where_json_would_refuse_it() -> None:
    assert results.json_name('"a\x01b"') == "a\x01b"  # read without the parser, which refuses a raw control


def test_a_save_that_would_grow_the_file_past_twice_its_compacted_size_compacts(made, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    first = _cache(made, folder)
    first.add(CLEAN, made[CLEAN][2].to_line(CLEAN))
    first.save()
    compacted = (folder / "results").stat().st_size
    second = _cache(made, folder)
    wanted = compacted + results._SLACK_BYTES + 1  # the spooled lines' bytes: one more than appending allows
    body = "x" * 990
    count = 0
    while wanted - count > 2000:
        line = f"f{count:08d}.yaml\tsum\t{body}\n"
        second.add(f"f{count:08d}.yaml", line)
        count += len(line)
    last = "specs/last.yaml\tsum\t"
    second.add("specs/last.yaml", last + "y" * (wanted - count - len(last) - 1) + "\n")
    assert second.save() is None
    size = (folder / "results").stat().st_size
    head = (folder / "results").read_bytes().partition(b"\n")[0]
    assert head == f"{results.HEADER[:-1]}\t{size:020d}".encode()  # compacted again, not appended to
