"""The result cache: a cached run reports byte for byte what a cold one does, and trusts nothing it should not.

Each test builds a repository in ``tmp_path`` and runs ``modelspec check``
in this process (``--jobs 1``), counting the files the passes really run on
(:func:`pipeline.check.runner.check_document`), so "reused" and "checked again"
are facts, not hopes. Concurrency is tested with real processes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from bundled import CATALOGUE_SPECS
from hypothesis import given
from hypothesis import strategies as st
from click.testing import CliRunner

import pipeline
from pipeline.cache import results as result_cache
from pipeline.cache import stamps
from pipeline.cli import main
from pipeline.pricing.op_profiles import _load_folder, bundled_profiles_dir, forget_read_profiles
from pipeline.cache.results import HEADER, RESULTS_FILE, ResultCache, parse_record
from pipeline.cache.stamps import CACHE_DIR_ENV

#: The cache's clock stopped at each test's start (tests/conftest.py): no verdict depends on the run's speed.
pytestmark = pytest.mark.usefixtures("frozen_clock")

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FORMATS = ("text", "json", "junit", "sarif", "github", "markdown")

#: Every spec file the tests and the catalogue hold: the corpus a cached run must report exactly as a cold one.
CORPUS = sorted([*(TESTS / "data").rglob("*.yaml"), *(ROOT / "specs").rglob("*.yaml")])

OLD = 1_600_000_000  # an mtime (2020) long before any record's reading: the stat shortcut applies


def corpus_repo(dest: Path) -> Path:
    """A repository whose specs/ holds the whole corpus, each file under a path of its own."""
    for path in CORPUS:
        target = dest / "specs" / path.relative_to(ROOT).as_posix().replace("/", "__")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    # inline ignores: one that silences a warning, one that silences nothing (itself a warning)
    llama = (ROOT / "specs" / "llama" / "llama-3.1-8b.yaml").read_text(encoding="utf-8")
    (dest / "specs" / "inline-ignores.yaml").write_text(llama.replace(
        "name: llama-3.1-8b", "name: inline-ignores  # modelspec: ignore[roundtrip.null]").replace(
        "torch_dtype: bfloat16", "torch_dtype: torch.bfloat16  # modelspec: ignore[roundtrip.torch-prefix]"),
        encoding="utf-8")
    (dest / ".git").mkdir()
    return dest


def age(repo: Path) -> None:
    """Make every spec's mtime old, so a record's stat stands for its bytes."""
    for path in (repo / "specs").rglob("*.yaml"):
        os.utime(path, (OLD, OLD))


def check(repo: Path, *args: str) -> Tuple[int, str]:
    """``modelspec check --root repo --jobs 1 ARGS``: (exit code, stdout)."""
    result = CliRunner().invoke(main, ["check", "--root", str(repo), "--jobs", "1", *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def results_lines(folder: Path) -> Dict[str, str]:
    """The cache file's records of spec files (the last line of each file wins), every one checked valid (a
    garbage line for no spec file may stay until the file is compacted: every reader ignores it)."""
    text = (folder / RESULTS_FILE).read_text(encoding="utf-8", errors="surrogateescape")
    first, _, body = text.partition("\n")
    assert re.fullmatch(re.escape(HEADER[:-1]) + r"\t\d{20}", first), first  # the format, the compacted size
    lines = {}
    for line in body.splitlines():
        if line.startswith("specs/"):
            lines[line.split("\t", 1)[0]] = line
    for file, line in lines.items():
        assert parse_record(*line.split("\t", 2)) is not None, line
    return lines


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cached_run_reports_byte_for_byte_what_a_cold_one_does(tmp_path: Path, fmt: str,
                                                                 checked: List[str]) -> None:
    repo = corpus_repo(tmp_path / "repo")
    cold = check(repo, "--format", fmt, "--no-cache")
    assert not (repo / ".modelspec_cache").exists()  # --no-cache writes nothing
    files = len(checked)
    assert files == len(CORPUS) + 1
    assert check(repo, "--format", fmt) == cold  # the first cached run checks everything and records it
    assert len(checked) == 2 * files
    age(repo)
    assert check(repo, "--format", fmt) == cold  # stat changed: bytes read and matched, nothing checked
    assert check(repo, "--format", fmt) == cold  # stat shortcut: nothing read
    assert check(repo, "--format", fmt, "--strict") == check(repo, "--format", fmt, "--strict", "--no-cache")
    assert len(checked) == 3 * files  # only the --no-cache run checked again


def test_the_cache_folder_keeps_out_of_git_and_moves_with_the_environment(
        tmp_path: Path, checked: List[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = corpus_repo(tmp_path / "repo")
    check(repo)
    folder = repo / ".modelspec_cache"
    assert (folder / ".gitignore").read_text() == ("# modelspec's result cache: never committed "
                                                   "(see modelspec check --help)\n*\n")
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55\n")
    assert len(results_lines(folder)) == len(CORPUS) + 1
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "elsewhere"))
    checked.clear()
    check(repo)
    assert len(checked) == len(CORPUS) + 1  # a new, empty cache
    assert results_lines(tmp_path / "elsewhere").keys() == results_lines(folder).keys()


def _spec_lines(folder: Path) -> List[str]:
    return (folder / RESULTS_FILE).read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("damage", [
    "truncated", "flipped byte", "another file's record", "another file's record, checksum forged",
    "wrong environment, checksum forged", "garbage", "another format",
])
def test_a_damaged_record_is_ignored_and_rewritten(tmp_path: Path, checked: List[str], damage: str) -> None:
    repo = corpus_repo(tmp_path / "repo")
    age(repo)
    cold = check(repo, "--format", "json")
    folder = repo / ".modelspec_cache"
    lines = _spec_lines(folder)
    first, second = lines[1].split("\t", 2), lines[2].split("\t", 2)
    if damage == "truncated":
        text = "\n".join(lines[:3]) + "\n" + lines[3][:len(lines[3]) // 2]  # a run killed mid-write
        hit = [line.split("\t")[0] for line in lines[3:] if line]
    elif damage == "flipped byte":
        lines[1] = lines[1].replace('"o":"', '"o":"x', 1)[:len(lines[1])]
        text, hit = "\n".join(lines), [first[0]]
    elif damage == "another file's record":
        lines[1] = "\t".join([first[0], second[1], second[2]])
        text, hit = "\n".join(lines), [first[0]]
    elif damage == "another file's record, checksum forged":
        lines[1] = "\t".join([first[0], result_cache.line_checksum(first[0], second[2]), second[2]])
        text, hit = "\n".join(lines), [first[0]]
    elif damage == "wrong environment, checksum forged":
        fields = first[2].split("\t")
        fields[3] = "0" * 32
        rest = "\t".join(fields)
        lines[1] = "\t".join([first[0], result_cache.line_checksum(first[0], rest), rest])
        text, hit = "\n".join(lines), [first[0]]
    elif damage == "garbage":
        text = HEADER + "\x00\xff not a record\n\n\t\t\n"
        hit = [line.split("\t")[0] for line in lines[1:] if line]
    else:
        text = HEADER.replace(f"format {result_cache.FORMAT}", "format 0") + "\n".join(lines[1:])
        hit = sorted(line.split("\t")[0] for line in lines[1:] if line)
    (folder / RESULTS_FILE).write_text(text, encoding="utf-8", errors="surrogateescape")
    checked.clear()
    assert check(repo, "--format", "json") == cold
    assert sorted(checked) == sorted(hit)  # exactly the damaged records' files were checked again
    assert len(results_lines(folder)) == len(CORPUS) + 1  # and their records rewritten
    checked.clear()
    age(repo)
    assert check(repo, "--format", "json") == cold and checked == []


def _tiny_repo(dest: Path) -> Path:
    """The fixture repository (three specs, one whose arch is inferred from its name), its own profiles."""
    shutil.copytree(TESTS / "data" / "repo", dest)
    (dest / ".git").mkdir()
    age(dest)
    return dest


def test_a_profile_change_invalidates_exactly_the_specs_that_read_it(tmp_path: Path, checked: List[str]) -> None:
    repo = _tiny_repo(tmp_path / "repo")
    cold = check(repo, "--format", "json")
    assert sorted(checked) == ["specs/deepseek/deepseek-v3.yaml", "specs/llama/llama-3.1-8b.yaml",
                               "specs/qwen/qwen3.5-35b-a3b.yaml"]
    profile = repo / "op_profiles" / "deepseek_v3.yaml"
    checked.clear()
    profile.write_bytes(profile.read_bytes() + b"# an edit that changes no count\n")
    _load_folder.cache_clear()
    assert check(repo, "--format", "json") == cold
    # deepseek reads its profile; the llama spec states no arch, so its name was matched against every profile
    assert checked == ["specs/deepseek/deepseek-v3.yaml", "specs/llama/llama-3.1-8b.yaml"]
    checked.clear()
    vision = repo / "op_profiles" / "vision.yaml"
    vision.write_bytes(vision.read_bytes() + b"# another\n")
    _load_folder.cache_clear()
    assert check(repo, "--format", "json") == cold
    assert checked == ["specs/llama/llama-3.1-8b.yaml", "specs/qwen/qwen3.5-35b-a3b.yaml"]  # the tower's profile
    checked.clear()
    assert check(repo, "--format", "json") == cold and checked == []


@pytest.mark.parametrize("change", ["version", "schema", "code"])
def test_a_version_schema_or_code_change_invalidates_every_record(
        tmp_path: Path, checked: List[str], monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    repo = _tiny_repo(tmp_path / "repo")
    cold = check(repo)
    checked.clear()
    if change == "version":
        monkeypatch.setattr(pipeline, "__version__", pipeline.__version__ + ".post1")
    else:
        name = "schemas" if change == "schema" else "pipeline"
        source = bundled_profiles_dir().parent / name if change == "schema" else Path(pipeline.__file__).parent
        copy = tmp_path / name
        shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__"))
        edited = next(copy.glob("*.json" if change == "schema" else "*.py"))
        edited.write_bytes(edited.read_bytes() + b"\n")
        if change == "schema":
            from pipeline.spec import resources
            real = resources.data_dir
            monkeypatch.setattr(resources, "data_dir", lambda folder: copy if folder == "schemas" else real(folder))
        else:
            monkeypatch.setattr(stamps, "__file__", str(copy / "stamps.py"))
    assert check(repo) == cold
    assert len(checked) == 3
    checked.clear()
    assert check(repo) == cold and checked == []


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(tmp_path: Path, checked: List[str]) -> None:
    repo = _tiny_repo(tmp_path / "repo")
    check(repo)
    spec = repo / "specs" / "deepseek" / "deepseek-v3.yaml"
    text = spec.read_text()
    spec.write_text(text.replace("num_hidden_layers: 61", "num_hidden_layers: 16"))
    os.utime(spec, (OLD, OLD))  # same size, same mtime: the ctime (and the bytes) tell
    checked.clear()
    assert check(repo, "--format", "json") == check(repo, "--format", "json", "--no-cache")
    # the cached run checks the edited spec again; --no-cache checks all three
    assert checked == ["specs/deepseek/deepseek-v3.yaml", "specs/deepseek/deepseek-v3.yaml",
                       "specs/llama/llama-3.1-8b.yaml", "specs/qwen/qwen3.5-35b-a3b.yaml"]


def test_checking_one_file_takes_the_others_names_from_the_cache(tmp_path: Path, checked: List[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _tiny_repo(tmp_path / "repo")
    check(repo)
    loads: List[str] = []
    from pipeline.spec import yaml_source
    real = yaml_source.load_bytes
    counting = lambda raw, file: loads.append(file) or real(raw, file)  # noqa: E731
    monkeypatch.setattr(yaml_source, "load_bytes", counting)
    checked.clear()
    one = str(repo / "specs" / "llama" / "llama-3.1-8b.yaml")
    cached = check(repo, one)
    forget_read_profiles()  # the --no-cache run as a fresh process makes it
    assert cached == check(repo, one, "--no-cache")
    assert checked == ["specs/llama/llama-3.1-8b.yaml"]  # the --no-cache run; the cached one reused its record
    # only --no-cache parsed the others for their names (and read the op profiles itself, not from the cache)
    assert [file for file in loads if file.startswith("specs/")] == [
        "specs/llama/llama-3.1-8b.yaml", "specs/deepseek/deepseek-v3.yaml", "specs/qwen/qwen3.5-35b-a3b.yaml"]
    assert [file for file in loads if not file.startswith("specs/")] == [
        str(path) for path in sorted((repo / "op_profiles").glob("*.yaml"))]
    clash = repo / "specs" / "llama" / "clash.yaml"
    clash.write_text((repo / "specs" / "deepseek" / "deepseek-v3.yaml").read_text())
    code, out = check(repo, one)
    assert (code, out) == check(repo, one, "--no-cache") and code == 0
    code, out = check(repo, str(clash))
    assert code == 1 and "[spec.duplicate-name] name 'deepseek-v3' is also the name of specs/deepseek/deepseek-v3.yaml" \
        in out


def test_two_runs_that_save_at_once_keep_both_their_records(tmp_path: Path) -> None:
    keys = result_cache.CacheKeys("env", {})
    first, second = ResultCache(tmp_path, keys), ResultCache(tmp_path, keys)  # both read an empty cache
    for index, cache in enumerate((first, second)):
        record = result_cache.Record("1:2:3:4", 5, "d" * 64, "env", json.dumps(f"name-{index}"))
        cache.add(f"specs/{index}.yaml", record.to_line(f"specs/{index}.yaml"))
    assert first.save() is None and second.save() is None
    assert sorted(results_lines(tmp_path)) == ["specs/0.yaml", "specs/1.yaml"]


def test_concurrent_processes_share_one_cache(tmp_path: Path) -> None:
    repo = corpus_repo(tmp_path / "repo")
    env = {key: value for key, value in os.environ.items() if key != CACHE_DIR_ENV}
    modelspec = shutil.which("modelspec") or str(Path(sys.executable).parent / "modelspec")
    command = [modelspec, "check", "--root", str(repo), "--format", "json"]
    expected = subprocess.run([*command, "--no-cache"], capture_output=True, text=True, env=env, cwd=repo)
    assert expected.returncode == 1 and json.loads(expected.stdout)["files"]
    for _ in range(2):
        runs = [subprocess.Popen([*command, "--jobs", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env, cwd=repo) for _ in range(4)]
        for run in runs:
            out, err = run.communicate(timeout=300)
            assert (run.returncode, out, err) == (expected.returncode, expected.stdout, "")
        assert len(results_lines(repo / ".modelspec_cache")) == len(CORPUS) + 1
    assert not list((repo / ".modelspec_cache").glob("*.tmp"))


def test_a_cache_that_cannot_be_written_is_said_once_and_the_run_goes_on(tmp_path: Path, checked: List[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _tiny_repo(tmp_path / "repo")
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "file" / "cache"))
    result = CliRunner().invoke(main, ["check", "--root", str(repo), "--jobs", "1"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stderr == (f"modelspec: cannot write the result cache in {tmp_path / 'file' / 'cache'}: "
                             "Not a directory; the results are right, the next run checks again (--no-cache, or "
                             "MODELSPEC_CACHE_DIR=<folder>, to move it)\n")
    quiet = CliRunner().invoke(main, ["check", "--root", str(repo), "--jobs", "1", "-q"], catch_exceptions=False)
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, "", "")


def test_saves_append_and_the_file_is_compacted_before_it_doubles(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(result_cache, "_SLACK_BYTES", 0)
    keys = result_cache.CacheKeys("env", {})
    sizes = []
    for run in range(6):
        cache = ResultCache(tmp_path, keys)
        for index in range(3):
            file = f"specs/{index}.yaml"
            cache.add(file, result_cache.Record(f"{run}:2:3:4", 5, "d" * 64, "env", '"x"').to_line(file))
        assert cache.save() is None
        sizes.append(len((tmp_path / RESULTS_FILE).read_text().splitlines()) - 1)
        assert {file: line.split("\t")[2] for file, line in results_lines(tmp_path).items()} == {
            f"specs/{index}.yaml": f"{run}:2:3:4" for index in range(3)}  # the last line of each file wins
    assert sizes == [3, 6, 3, 6, 3, 6]  # appended once, then compacted


def test_a_compacted_file_says_its_size_and_a_save_that_would_double_it_compacts(tmp_path: Path) -> None:
    keys = result_cache.CacheKeys("env", {})
    path = tmp_path / RESULTS_FILE
    cache = ResultCache(tmp_path, keys)
    cache.add("specs/a.yaml", result_cache.Record("1:2:3:4", 5, "d" * 64, "env", '"a"').to_line("specs/a.yaml"))
    assert cache.save() is None
    size = path.stat().st_size
    assert path.read_text().partition("\n")[0] == f"{HEADER[:-1]}\t{size:020d}"
    assert result_cache._compacted_size(path, HEADER) == (size, size)
    path.write_text(HEADER + path.read_text().partition("\n")[2])  # a header that says no size: compacted next
    assert result_cache._compacted_size(path, HEADER) == (None, size - 21)
    assert result_cache._read_lines(path).keys() == {"specs/a.yaml"}  # its lines are read all the same


@pytest.mark.parametrize("more", [10 ** 19, 1])
def test_a_header_that_says_more_than_the_file_holds_is_compacted_at_the_next_save(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, more: int) -> None:
    # A compacted size over the file's own size was written by no save (the file only grows after one): an
    # edited or damaged header. Trusted, appends would go on until the file was twice that size: without end.
    monkeypatch.setattr(result_cache, "_SLACK_BYTES", 0)
    keys = result_cache.CacheKeys("env", {})
    path = tmp_path / RESULTS_FILE
    record = result_cache.Record("1:2:3:4", 5, "d" * 64, "env", '"a"').to_line("specs/a.yaml")
    cache = ResultCache(tmp_path, keys)
    cache.add("specs/a.yaml", record)
    assert cache.save() is None
    said = min(path.stat().st_size + len(record) * 5 + more, 10 ** 20 - 1)
    path.write_text(f"{HEADER[:-1]}\t{said:020d}\n" + path.read_text().partition("\n")[2] + record * 5)
    assert result_cache._compacted_size(path, HEADER) == (None, path.stat().st_size)  # not trusted
    cache = ResultCache(tmp_path, keys)
    cache.add("specs/a.yaml", record)
    assert cache.save() is None
    size = path.stat().st_size
    assert path.read_text() == f"{HEADER[:-1]}\t{size:020d}\n" + record  # compacted, its true size said
    assert result_cache._compacted_size(path, HEADER) == (size, size)


SEARCHED = [("specs/a.yaml", "c1\tr1"), ("specs/b.yaml", "c2\tr2"), ("specs/a.yaml", "c3\tr3 \u00e9"),
            ("specs/ab.yaml", "c4\tr4"), ("specs/b.yaml\tc5", "r5"), ("specs/c.yaml", "c6\tr6"),
            ("x", "y" * 300 + "\tz"), ("specs/d.yaml", "no second tab")]


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 13, 64, 1 << 20])
@pytest.mark.parametrize("ending", ["", "specs/c.yaml\tc7", "specs/a.yaml\t", "\n"])
def test_a_line_searched_for_is_the_line_the_table_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         chunk: int, ending: str) -> None:
    # A later line wins; one without its second tab (a truncated last line) leaves the one before it; a name that
    # is another's prefix is no match, nor one holding a tab; a match across the chunks' border is found.
    monkeypatch.setattr(result_cache, "_SEARCH_CHUNK", chunk)
    path = tmp_path / RESULTS_FILE
    path.write_text(HEADER + "".join(f"{file}\t{tail}\n" for file, tail in SEARCHED) + ending, encoding="utf-8")
    table = result_cache._read_lines(path)
    assert table == {"specs/a.yaml": "c3\tr3 \u00e9", "specs/b.yaml": "c5\tr5", "specs/ab.yaml": "c4\tr4",
                     "specs/c.yaml": "c6\tr6", "x": "y" * 300 + "\tz"}
    for file in ["specs/a.yaml", "specs/b.yaml", "specs/ab.yaml", "specs/c.yaml", "x", "specs/d.yaml", "specs/",
                 "specs/b.yaml\tc5", "specs/e.yaml", ""]:
        assert result_cache._search_line(path, HEADER, file) == table.get(file), file
    path.write_text(HEADER.replace("format", "format 0"), encoding="utf-8")
    assert result_cache._search_line(path, HEADER, "specs/a.yaml") is None


def test_a_one_file_check_finds_its_record_without_reading_the_cache_into_a_table(
        tmp_path: Path, checked: List[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _tiny_repo(tmp_path / "repo")
    assert check(repo)[0] == 0  # every record, and the catalogue index
    target = sorted((repo / "specs").rglob("*.yaml"))[0]
    target.write_text(target.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    os.utime(target, (OLD, OLD))  # the others keep the stat their records have
    edited = check(repo, "--no-cache", "--format", "json", str(target))

    def no_table(*_: object) -> None:
        raise AssertionError("the results file was read into a table")

    monkeypatch.setattr(result_cache, "_read_lines", no_table)
    results = repo / ".modelspec_cache" / RESULTS_FILE
    lines = len(results.read_text().splitlines())
    checked.clear()
    assert check(repo, "--format", "json", str(target)) == edited and len(checked) == 1  # checked, appended
    assert len(results.read_text().splitlines()) == lines + 1
    checked.clear()
    assert check(repo, "--format", "json", str(target)) == edited and checked == []  # its new record found


@given(st.one_of(st.text(), st.none(), st.integers(), st.lists(st.text(), max_size=2)))
def test_a_records_name_reads_back_as_json_writes_it(value) -> None:
    # The shortcut for a literal without escapes must give what the JSON parser gives, for every value.
    assert result_cache.json_name(result_cache.json_text(value)) == (value if isinstance(value, str) else None)


# ---- the catalogue index ----------------------------------------------------------------------

def list_(repo: Path, *args: str) -> Tuple[int, str, str]:
    """``modelspec list --root repo ARGS``: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, ["list", "--root", str(repo), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _clean_repo(dest: Path) -> Path:
    """A repository of the shipped catalogue, every spec aged (its stat stands for its bytes)."""
    shutil.copytree(ROOT / "specs", dest / "specs")
    (dest / ".git").mkdir()
    age(dest)
    return dest


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_list_from_the_index_is_byte_for_byte_list_from_the_specs(tmp_path: Path, checked: List[str],
                                                                  fmt: str) -> None:
    repo = _clean_repo(tmp_path / "repo")
    cold = list_(repo, "--format", fmt, "--no-cache")
    assert cold[0] == 0 and len(checked) == CATALOGUE_SPECS
    assert list_(repo, "--format", fmt) == cold  # checks every spec and learns the index
    for name in (result_cache.NAMES_FILE, result_cache.ROWS_FILE):  # a header and a line per spec
        assert len((repo / ".modelspec_cache" / name).read_text(encoding="utf-8").splitlines()) == CATALOGUE_SPECS + 1
    checked.clear()
    results = repo / ".modelspec_cache" / RESULTS_FILE
    results.write_text("", encoding="utf-8")  # the results are not read: the index answers every spec
    assert list_(repo, "--format", fmt) == cold and checked == []


def test_list_checks_exactly_the_specs_the_index_does_not_stand_for(tmp_path: Path, checked: List[str]) -> None:
    repo = _clean_repo(tmp_path / "repo")
    list_(repo)
    edited = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: llama-renamed"),
                      encoding="utf-8")
    os.utime(edited, (OLD + 10, OLD + 10))
    checked.clear()
    code, out, _ = list_(repo)
    assert code == 0 and checked == ["specs/llama/llama-3.1-8b.yaml"]
    assert out == list_(repo, "--no-cache")[1] and "llama-renamed " in out and "llama-3.1-8b " not in out


def test_a_spec_read_in_the_tick_it_was_written_is_not_indexed(tmp_path: Path, checked: List[str]) -> None:
    repo = _clean_repo(tmp_path / "repo")
    fresh = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    fresh.touch()  # mtime: now, so its stat cannot stand for its bytes yet
    list_(repo)
    for name in (result_cache.NAMES_FILE, result_cache.ROWS_FILE):
        lines = (repo / ".modelspec_cache" / name).read_text(encoding="utf-8").splitlines()
        assert len(lines) == CATALOGUE_SPECS and not any(line.startswith("specs/llama/llama-3.1-8b.yaml\t") for line in lines)
    checked.clear()
    list_(repo)
    assert checked == []  # its record's digest still matches: read, not checked


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "another environment", "garbage"])
@pytest.mark.parametrize("table", ["names", "rows"])
def test_a_damaged_index_is_ignored_whole_and_rewritten(tmp_path: Path, checked: List[str], damage: str,
                                                        table: str) -> None:
    repo = _clean_repo(tmp_path / "repo")
    cold = list_(repo)
    show = ["show", "--root", str(repo), "llama-3.1-8b"]  # a names pass over every spec
    cold_show = CliRunner().invoke(main, show).stdout
    index = repo / ".modelspec_cache" / table
    good = index.read_text(encoding="utf-8")
    header, _, body = good.partition("\n")
    damaged = {"truncated": good[:len(good) // 2],
               "flipped byte": header + "\n" + body.replace("-v3", "-v4", 1),
               "another environment": header.replace("\t", "\t0", 1) + "\n" + body,
               "garbage": "\x00 not an index\n\t\t\n"}[damage]
    index.write_text(damaged, encoding="utf-8")
    forget_snapshots(repo)  # else list and show answer from them, reading no index
    checked.clear()
    # the results answered every spec instead (show checks its own spec), and the index was rebuilt, the same
    if table == "names":
        assert CliRunner().invoke(main, show).stdout == cold_show and checked == ["specs/llama/llama-3.1-8b.yaml"]
    else:
        assert list_(repo) == cold and checked == []
    assert index.read_text(encoding="utf-8") == good


def test_a_profile_change_invalidates_the_whole_index(tmp_path: Path, checked: List[str]) -> None:
    repo = _tiny_repo(tmp_path / "repo")
    age(repo)
    list_(repo)
    folder = repo / ".modelspec_cache"
    before = {name: (folder / name).read_text(encoding="utf-8") for name in (result_cache.NAMES_FILE,
                                                                             result_cache.ROWS_FILE)}
    assert all(len(text.splitlines()) == 4 for text in before.values())
    profile = repo / "op_profiles" / "llama.yaml"
    profile.write_text(profile.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    checked.clear()
    assert list_(repo) == list_(repo, "--no-cache")
    for name, text in before.items():  # another stamp: every line learnt again
        after = (folder / name).read_text(encoding="utf-8")
        assert after != text and len(after.splitlines()) == 4


def forget_snapshots(repo: Path) -> None:
    """Remove the catalogue snapshots and views ``list`` and ``show`` keep (pipeline/cache/snapshot.py)."""
    folder = repo / ".modelspec_cache"
    for path in folder.glob("snapshot-*"):
        path.unlink()
    shutil.rmtree(folder / "views", ignore_errors=True)


def reads_only_its_own_record(monkeypatch: pytest.MonkeyPatch, file: str) -> None:
    """Make a run fail if it reads the results for any spec but *file* (the others' names must come from the
    catalogue index)."""
    real = ResultCache.record

    def only_its_own(self, asked):
        assert asked == file, f"read the results for {asked}"
        return real(self, asked)

    monkeypatch.setattr(ResultCache, "record", only_its_own)


def test_checking_one_file_takes_the_others_names_from_the_index(tmp_path: Path, checked: List[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _clean_repo(tmp_path / "repo")
    list_(repo)
    one = str(repo / "specs" / "llama" / "llama-3.1-8b.yaml")
    expected = check(repo, one, "--no-cache")
    with monkeypatch.context() as patched:
        reads_only_its_own_record(patched, "specs/llama/llama-3.1-8b.yaml")
        checked.clear()
        assert check(repo, one) == expected and checked == []
    clash = repo / "specs" / "llama" / "clash.yaml"
    clash.write_text((repo / "specs" / "deepseek" / "deepseek-v3.yaml").read_text(encoding="utf-8"),
                     encoding="utf-8")
    code, out = check(repo, str(clash))
    assert code == 1 and "[spec.duplicate-name] name 'deepseek-v3' is also the name of specs/deepseek/deepseek-v3.yaml" \
        in out


def test_a_check_of_the_whole_catalogue_builds_the_index_a_one_file_check_then_reads(
        tmp_path: Path, checked: List[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _clean_repo(tmp_path / "repo")
    check(repo)  # from an empty cache: no index yet, so this run teaches it every spec's name and row
    folder = repo / ".modelspec_cache"
    assert len((folder / result_cache.NAMES_FILE).read_text(encoding="utf-8").splitlines()) == CATALOGUE_SPECS + 1
    assert len((folder / result_cache.ROWS_FILE).read_text(encoding="utf-8").splitlines()) == CATALOGUE_SPECS + 1
    listed = list_(repo, "--no-cache")
    with monkeypatch.context() as patched:  # so list then checks no spec, and reads no record
        patched.setattr(ResultCache, "record", lambda self, asked: pytest.fail(f"read the results for {asked}"))
        checked.clear()
        assert list_(repo) == listed and listed[0] == 0 and checked == []
    one = str(repo / "specs" / "llama" / "llama-3.1-8b.yaml")
    expected = check(repo, one, "--no-cache")
    with monkeypatch.context() as patched:
        reads_only_its_own_record(patched, "specs/llama/llama-3.1-8b.yaml")
        assert check(repo, one) == expected
    # a current index is let be: a warm check of the whole catalogue reads its header lines, not its lines
    monkeypatch.setattr(result_cache._IndexTable, "_read", lambda self: pytest.fail(f"read {self.path}"))
    checked.clear()
    assert check(repo) == check(repo, "--no-cache") and len(checked) == CATALOGUE_SPECS


def test_a_rows_line_holds_the_cells_list_prints_and_none_a_line_cannot_hold() -> None:
    row = {"name": "deepseek-v3", "file": "specs/deepseek/deepseek-v3.yaml", "arch": "deepseek_v3", "layers": 61,
           "mtp": 1, "experts": {"routed": 256, "per_token": 8, "shared": 1}, "tower_layers": None,
           "total": 684531386000, "active": 37554796000}
    cells = result_cache.row_cells(json.dumps(row))  # drawn where the file is checked, kept in its record
    assert cells == "deepseek-v3\x1fdeepseek_v3\x1f61\x1f256 top-8 +1 shared\x1f1\x1f-\x1f684,531,386,000\x1f37,554,796,000"
    record = result_cache.Record("1:2:3:4", 5, "digest", "environment", '"deepseek-v3"', row=json.dumps(row),
                                 cells=cells)
    assert result_cache._row_line("1", record) == f"1\t{cells}\t{record.row}"
    assert result_cache._row_line("0", record) == f"0\t-\t{record.row}"  # a spec that failed: no cells
    assert result_cache._row_line("1", record._replace(cells=None)) == f"1\t-\t{record.row}"
    for name in ("a\x1fb", "a\tb", "a\nb", "a\x1bb"):  # never a passing spec's name; the table reads its JSON
        assert result_cache.row_cells(json.dumps({**row, "name": name})) == "-"
    assert result_cache.row_cells("{}") == "-" and result_cache.row_cells("null") == "-"


def test_list_draws_a_row_the_index_has_no_cells_for_from_its_json(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _clean_repo(tmp_path / "repo")
    expected = list_(repo, "--no-cache")
    with monkeypatch.context() as patched:
        patched.setattr(result_cache, "plain_cells", lambda cells: False)
        check(repo)
    rows = (repo / ".modelspec_cache" / result_cache.ROWS_FILE).read_text(encoding="utf-8").splitlines()[1:]
    assert len(rows) == CATALOGUE_SPECS and all(line.split("\t")[3:5] == ["1", "-"] for line in rows)
    assert list_(repo) == expected
