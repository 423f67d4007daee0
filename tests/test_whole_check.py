"""A whole check's answer recorded (pipeline/cache/whole_check.py): ``check`` over all of ``specs/`` answers an unchanged
catalogue again from its snapshot, byte for byte as a check without the cache does, in every format and every
``--output``, with its exit code; and walks every spec after any change the answer could depend on."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Iterator, List, Tuple

import pytest
from click.testing import CliRunner

from pipeline.cache import names

from pipeline.cache import whole_check

from pipeline.cache import verdicts as cached_verdicts
from pipeline.check import discovery, runner

from pipeline.cache import snapshot

from pipeline.cache import stamps
from pipeline.cli import main
from pipeline.commands.check import Request, _answer_key
from pipeline.pricing.op_profiles import _load_folder
from pipeline.check.repo import SpecRepo
from pipeline.spec.resources import bundled_profiles_dir
from pipeline.cache.stamps import CACHE_DIR_ENV
from test_snapshot import CHANGES, OLD, age, age_written

#: The cache's clock stopped at each test's start (tests/conftest.py): no verdict depends on the run's speed.
pytestmark = pytest.mark.usefixtures("frozen_clock")

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ["text", "json", "junit", "sarif", "github", "markdown"]
TARGET = "specs/llama/llama-3.1-8b.yaml"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped catalogue with its own op profiles, one spec failing and one warned of, everything aged."""
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "specs", dest / "specs")
    shutil.copytree(bundled_profiles_dir(), dest / "op_profiles")
    (dest / ".git").mkdir()
    failing = dest / "specs" / "qwen" / "qwen3-8b.yaml"
    failing.write_text(failing.read_text(encoding="utf-8").replace("hidden_size: 4096", "hidden_size: -1"),
                       encoding="utf-8")
    warned = dest / "specs" / "deepseek" / "deepseek-v3.yaml"
    warned.write_text(warned.read_text(encoding="utf-8") + "head_dim: null\n", encoding="utf-8")
    age(dest)
    return dest


def check(repo: Path, *args: str) -> Tuple[int, str, str]:
    """``modelspec check --root repo ARGS``: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, ["check", "--root", str(repo), *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def no_long_way(monkeypatch: pytest.MonkeyPatch) -> Callable[[], contextlib.AbstractContextManager]:
    """Within ``with no_long_way():``, walking the catalogue, loading the profiles or checking a spec fails the
    test."""
    @contextlib.contextmanager
    def forbid() -> Iterator[None]:
        with monkeypatch.context() as patched:
            patched.setattr(discovery, "spec_file_names", lambda *a, **k: pytest.fail("walked the catalogue"))
            patched.setattr(cached_verdicts, "verdicts", lambda *a, **k: pytest.fail("checked the catalogue"))
            patched.setattr("pipeline.commands.check.run_profiles", lambda *a: pytest.fail("loaded the profiles"))
            yield
    return forbid


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> List[object]:
    """What each run's look for a recorded answer found (``None``: nothing that holds), in order."""
    found: List[object] = []
    real = whole_check.recorded_answer
    monkeypatch.setattr(whole_check, "recorded_answer", lambda *a: found.append(real(*a)) or found[-1])
    return found


#: ``check --root repo`` with no option, not coloured (its stdout is not a terminal).
PLAIN_CHECK = Request(paths=(), fmt="text", outputs=(), strict=None, select=(), ignore=(), fix=False, quiet=False,
                      jobs=None, color=False, no_cache=False, changed_since=None, excludes=(), stdin_filename=None)


def answer_record_file(repo: Path) -> Path:
    """The snapshot file of the answer to a plain ``check --root repo`` (text, no option)."""
    return repo / ".modelspec_cache" / f"snapshot-{_answer_key(SpecRepo(repo), PLAIN_CHECK)}"


def outputs(folder: Path) -> List[str]:
    return [f"--output={fmt}={folder / f'report.{fmt}'}" for fmt in FORMATS]


def written(folder: Path) -> List[bytes]:
    return [(folder / f"report.{fmt}").read_bytes() for fmt in FORMATS]


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unchanged_catalogue_is_answered_again_byte_for_byte_in_every_format(
        repo: Path, tmp_path: Path, fmt: str, no_long_way, answers: List[object]) -> None:
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    cold.mkdir()
    warm.mkdir()
    expected = check(repo, "--format", fmt, *outputs(cold), "--no-cache")
    assert expected[0] == 1 and "qwen3-8b.yaml" in expected[1]
    assert check(repo, "--format", fmt, *outputs(warm)) == expected  # a full walk, which records the answer
    assert written(warm) == written(cold)
    for path in warm.iterdir():
        path.unlink()
    with no_long_way():
        assert check(repo, "--format", fmt, *outputs(warm)) == expected
    assert written(warm) == written(cold)
    assert [answer is not None for answer in answers] == [False, True]


def test_quiet_and_strict_are_answered_as_they_were_asked(repo: Path, no_long_way) -> None:
    (repo / "specs" / "qwen" / "qwen3-8b.yaml").unlink()  # only the warning is left
    age_written(repo)
    asked = [(), ("-q",), ("--strict",), ("-q", "--strict"), ("--ignore", "roundtrip.null")]
    expected = [check(repo, *args, "--no-cache") for args in asked]
    assert [code for code, _, _ in expected] == [0, 0, 1, 1, 0]
    assert expected[1][1] == "" and "roundtrip.null" in expected[3][1] and "roundtrip" not in expected[4][1]
    assert [check(repo, *args) for args in asked] == expected
    with no_long_way():
        assert [check(repo, *args) for args in asked] == expected


def test_the_colour_chosen_is_answered_as_it_was_chosen(repo: Path, no_long_way) -> None:
    def coloured(*args: str) -> str:  # stdout as a terminal shows it: the ANSI codes kept
        return CliRunner().invoke(main, ["check", "--root", str(repo), *args], color=True).stdout

    expected = [coloured("--color", "--no-cache"), coloured("--no-color", "--no-cache")]
    assert "\x1b[" in expected[0] and "\x1b[" not in expected[1]
    assert [coloured("--color"), coloured("--no-color")] == expected
    with no_long_way():
        assert [coloured("--color"), coloured("--no-color")] == expected


def _config(repo: Path) -> None:  # a configuration made where there was none: warnings fail the run
    (repo / "modelspec.toml").write_text("strict = true\n", encoding="utf-8")


def _pyproject(repo: Path) -> None:  # a pyproject.toml there already that gains the table
    path = repo / "pyproject.toml"
    path.write_text(path.read_text(encoding="utf-8") + "\n[tool.modelspec]\nignore = [\"roundtrip.null\"]\n",
                    encoding="utf-8")


def _fixed(repo: Path) -> None:  # the failing spec fixed in place
    path = repo / "specs" / "qwen" / "qwen3-8b.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("hidden_size: -1", "hidden_size: 4096"),
                    encoding="utf-8")


CHECK_CHANGES = [*CHANGES, _config, _pyproject, _fixed]


@pytest.mark.parametrize("change", CHECK_CHANGES, ids=[change.__name__.strip("_") for change in CHECK_CHANGES])
def test_any_change_the_answer_came_from_sends_the_next_check_the_long_way(repo: Path, change,
                                                                           answers: List[object]) -> None:
    (repo / "pyproject.toml").write_text("[project]\nname = \"catalogue\"\n", encoding="utf-8")
    age(repo)
    check(repo)
    assert check(repo)[0] == 1 and answers[-1] is not None
    change(repo)
    age_written(repo)
    _load_folder.cache_clear()  # a command's process reads the profiles once; these runs share one process
    answered = check(repo)
    assert answers[-1] is None  # the snapshot did not stand for the catalogue
    assert answered == check(repo, "--no-cache")


def test_a_configuration_made_above_the_root_up_to_the_git_top_counts_too(tmp_path: Path, repo: Path,
                                                                         answers: List[object]) -> None:
    top = tmp_path / "top"
    (repo / ".git").rmdir()
    shutil.move(str(repo), str(top / "catalogue"))
    (top / ".git").mkdir()
    age(top)
    inner = top / "catalogue"
    check(inner)
    assert check(inner)[0] == 1 and answers[-1] is not None
    (top / "modelspec.toml").write_text("ignore = [\"roundtrip.null\"]\n", encoding="utf-8")
    age_written(top)
    answered = check(inner)
    assert answers[-1] is None and answered == check(inner, "--no-cache")
    assert "roundtrip.null" not in answered[1]


def test_no_answer_is_recorded_while_a_spec_is_fresh(repo: Path, answers: List[object]) -> None:
    path = repo / TARGET
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")  # its stat cannot stand
    check(repo)                                                                           # for its bytes yet
    check(repo)
    assert answers == [None, None] and not answer_record_file(repo).exists()
    age_written(repo)
    check(repo)
    assert answer_record_file(repo).exists()
    check(repo)
    assert [answer is not None for answer in answers] == [False, False, False, True]


def test_a_run_whose_cache_could_not_be_saved_records_no_answer(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                              answers: List[object]) -> None:
    from pipeline.cache.results import ResultCache

    real = ResultCache.save
    monkeypatch.setattr(ResultCache, "save", lambda self: real(self) or "the disk is full")
    first = check(repo)
    assert first[2].startswith("modelspec: cannot write the result cache in ")
    assert check(repo) == first and answers == [None, None] and not answer_record_file(repo).exists()


def test_a_run_modelspec_crashed_in_records_no_answer(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                    answers: List[object]) -> None:
    def crash(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(runner, "check_document", crash)
    first = check(repo, "-j1")
    assert first[0] == 2 and "[check.internal] modelspec crashed on this file (RuntimeError: a bug)" in first[1]
    assert check(repo, "-j1") == first and answers == [None, None] and not answer_record_file(repo).exists()


def test_an_output_replaced_by_a_link_is_refused_as_the_long_way_refuses_it(repo: Path, tmp_path: Path,
                                                                          answers: List[object]) -> None:
    report, elsewhere = tmp_path / "report.json", tmp_path / "elsewhere.txt"
    check(repo, f"--output=json={report}")
    report.unlink()
    elsewhere.write_text("a file the link names\n", encoding="utf-8")
    report.symlink_to(elsewhere)
    code, _, stderr = check(repo, f"--output=json={report}")
    assert answers[-1] is not None and code == 2
    assert f"{report} is a symbolic link; a report is never written through one" in stderr
    assert elsewhere.read_text(encoding="utf-8") == "a file the link names\n"


def test_each_current_folder_and_repository_has_its_own_answer(tmp_path: Path, repo: Path,
                                                              monkeypatch: pytest.MonkeyPatch, no_long_way) -> None:
    (repo / ".git").rmdir()  # outside git, report paths are relative to the current folder when the root is in it
    other = tmp_path / "other"
    shutil.copytree(repo, other, symlinks=True)
    (other / "specs" / "qwen" / "qwen3-8b.yaml").unlink()
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "shared-cache"))  # one cache folder for both
    age(repo, other)
    runs = [(tmp_path, repo), (repo, repo), (tmp_path, other)]
    expected = []
    for here, root in runs:
        monkeypatch.chdir(here)
        expected.append(check(root, "--no-cache"))
        assert check(root) == expected[-1]
    assert "repo/specs/qwen/qwen3-8b.yaml" in expected[0][1] and "\nspecs/qwen/qwen3-8b.yaml" in expected[1][1]
    assert expected[2][0] == 0
    with no_long_way():
        for (here, root), answered in zip(runs, expected):
            monkeypatch.chdir(here)
            assert check(root) == answered


@pytest.mark.parametrize("damage", ["truncate", "edit the answer", "another environment"])
def test_a_damaged_answer_is_ignored(repo: Path, damage: str, answers: List[object]) -> None:
    expected = check(repo, "--no-cache")
    check(repo)
    path = answer_record_file(repo)
    data = path.read_bytes()
    header, _, rest = data.partition(b"\n")
    fields = header.split(b"\t")
    path.write_bytes({
        "truncate": data[: len(data) // 2],
        "edit the answer": data.replace(b"\n[1, ", b"\n[0, "),
        "another environment": b"\t".join([fields[0], b"0" * 32, *fields[2:]]) + b"\n" + rest,
    }[damage])
    assert check(repo) == expected and answers[-1] is None
    assert check(repo) == expected and answers[-1] is not None  # recorded again by a full walk


def test_a_check_of_named_files_or_changes_never_reads_or_records_an_answer(repo: Path,
                                                                         answers: List[object]) -> None:
    check(repo, str(repo / TARGET))
    check(repo, str(repo / "specs"))
    check(repo, "--exclude", "specs/llama/*")
    check(repo, "--no-cache")
    assert answers == [] and not answer_record_file(repo).exists()


def _root_linked(tmp_path: Path, repo: Path) -> Path:
    (tmp_path / "linked").symlink_to(repo)
    return tmp_path / "linked"


def _folder_above_linked(tmp_path: Path, repo: Path) -> Path:
    (tmp_path / "above").symlink_to(repo.parent)
    return tmp_path / "above" / repo.name


def _relative_through_a_link(tmp_path: Path, repo: Path) -> Path:
    (tmp_path / "linked").symlink_to(repo)
    os.chdir(tmp_path)  # the test's current folder (monkeypatch.chdir in the test puts it back)
    return Path("linked")


LINKED_ROOTS = [_root_linked, _folder_above_linked, _relative_through_a_link]
#: Each command whose answer a catalogue snapshot keeps (a check of one file reads the names snapshot): its
#: report names a vendored spec (a link under specs/ to a file outside it) by its real path when the root is linked.
NAMING_COMMANDS = [*(("check", "--format", fmt) for fmt in FORMATS), ("list", "--format", "json"),
                   ("show", "vendored")]


@pytest.mark.parametrize("spelled", LINKED_ROOTS, ids=[spelled.__name__.strip("_") for spelled in LINKED_ROOTS])
def test_a_root_spelled_through_a_link_records_no_snapshot_of_the_real_paths_its_reports_name(
        tmp_path: Path, repo: Path, spelled, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole class: under a linked root a spec's report name is its real path, which a folder renamed (and
    linked back) outside specs/ changes without changing any stat a snapshot records; check, list, show and
    the names a check of a few files reads are then as --no-cache answers them, never a recorded answer."""
    monkeypatch.chdir(tmp_path)
    vendor = repo / "vendor" / "x"
    vendor.mkdir(parents=True)
    text = (repo / TARGET).read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: vendored")
    (vendor / "a.yaml").write_text(text + "head_dim: null\n", encoding="utf-8")  # a warning every report names
    (repo / "specs" / "vendored.yaml").symlink_to("../vendor/x/a.yaml")
    (repo / "specs" / "llama" / "llama-3.1-8b.yaml").write_text(  # states the vendored name: a duplicate
        (repo / TARGET).read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: vendored"),
        encoding="utf-8")
    age(repo)
    root = spelled(tmp_path, repo)
    commands = [*NAMING_COMMANDS, ("check", "--format", "json", str(root / TARGET))]

    def answered(command: Tuple[str, ...], *args: str) -> Tuple[int, str, str]:
        result = CliRunner().invoke(main, [*command, "--root", str(root), *args], catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr

    for command in commands:
        answered(command)
        answered(command)
    (repo / "vendor" / "x").rename(repo / "vendor" / "y")  # the same file, under another real path
    (repo / "vendor" / "x").symlink_to("y")
    age_written(repo)
    for command in commands:
        expected = answered(command, "--no-cache")
        assert "vendor/y/a.yaml" in expected[1] + expected[2] and "vendor/x/" not in expected[1] + expected[2]
        assert answered(command) == expected, command


@pytest.mark.parametrize("library", ["yaml", "jsonschema", "jsonschema_rs", "junitparser"])
def test_a_library_whose_words_a_recorded_answer_holds_is_a_new_environment_once_upgraded(
        library: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML and python-jsonschema word the problems (a schema message is often jsonschema's own), jsonschema-rs
    tells the valid files, junitparser writes the JUnit report a recorded answer holds as written: their build is
    part of the environment every cached answer is recorded under, so a changed one trusts no recorded answer."""
    spec = importlib.util.find_spec(library)
    installed = tmp_path / library
    shutil.copytree(Path(spec.origin).parent, installed)  # the library as installed, first on the path
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, library, raising=False)  # an imported module is found by sys.modules, not the path
    try:
        stamps._installed.cache_clear()
        before = stamps.environment_digest()
        with (installed / Path(spec.origin).name).open("a", encoding="utf-8") as handle:
            handle.write("\n# the next release\n")
        stamps._installed.cache_clear()
        assert stamps.environment_digest() != before
    finally:
        stamps._installed.cache_clear()  # this process's later runs see the library as installed


def _forged_check_answer(repo: Path) -> Tuple[Tuple[str, ...], str, List[str], str]:  # clean, exit code 0
    return (("check",), _answer_key(SpecRepo(repo), PLAIN_CHECK), [],
            '[0, "forged\\n", [], 0]')


def _forged_list(repo: Path) -> Tuple[Tuple[str, ...], str, List[str], str]:
    return ("list",), snapshot.repo_key(SpecRepo(repo), "list", "text"), [], "forged\n"


def _forged_show(repo: Path) -> Tuple[Tuple[str, ...], str, List[str], str]:  # no spec states the name
    return ("show", "llama-3.1-8b"), snapshot.repo_key(SpecRepo(repo), "show"), [], ""


def _forged_names(repo: Path) -> Tuple[Tuple[str, ...], str, List[str], str]:  # the checked spec's name is its own
    path = str(repo / "specs" / "llama" / "copy.yaml")  # a line of its own: the file a check takes itself
    return (("check", path), names._snapshot_key(SpecRepo(repo)), [f"{path}\t{snapshot.RACY}\n"],
            snapshot.name_line("llama-3.1-8b", "specs/llama/copy.yaml", path))


FORGED = [_forged_check_answer, _forged_list, _forged_show, _forged_names]


@pytest.mark.parametrize("forged", FORGED, ids=[forged.__name__.strip("_") for forged in FORGED])
def test_a_snapshot_that_records_no_stat_of_the_catalogue_stands_for_none(repo: Path, forged) -> None:
    """A snapshot whose header is right (key, environment, checksum: any file can be made so) but whose stat
    lines name nothing of this catalogue, only a path that does not exist, would hold for every tree; the
    catalogue folder's stat is what no other checkout has, so a snapshot is trusted only if it records it."""
    shutil.copyfile(repo / TARGET, repo / "specs" / "llama" / "copy.yaml")  # a second llama-3.1-8b: a duplicate
    age(repo)
    args, key, lines, answer = forged(repo)
    run = CliRunner().invoke
    expected = run(main, [*args, "--root", str(repo), "--no-cache"])
    assert expected.exit_code == 1 and "llama-3.1-8b" in expected.stdout + expected.stderr
    snapshot.record_stated(repo / ".modelspec_cache", key, 1 + len(lines),
                         [f"{repo / 'no-such-file'}\t{snapshot.MISSING}\n", *lines, answer])
    assert snapshot.load(repo / ".modelspec_cache", key, repo / "specs") is None
    answered = run(main, [*args, "--root", str(repo)])
    assert (answered.exit_code, answered.stdout, answered.stderr) == (expected.exit_code, expected.stdout,
                                                                      expected.stderr)
