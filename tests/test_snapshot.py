"""Catalogue snapshots (pipeline/snapshot.py): ``list`` and ``show`` answer an unchanged catalogue again from
what they drew, byte for byte as the long way does, and take the long way after any change that could alter it."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest
from click.testing import CliRunner

from pipeline import runner, snapshot
from pipeline.cli import main
from pipeline.op_profiles import _load_folder
from pipeline.resources import bundled_profiles_dir
from pipeline.stamps import CACHE_DIR_ENV

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
OLD = 1_600_000_000  # an mtime (2020) long before any run: a snapshot may stand for what has it


def age(*folders: Path) -> None:
    """Make the mtime of every file and folder under *folders* (themselves included) old."""
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            os.utime(path, (OLD, OLD), follow_symlinks=False)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository of the shipped catalogue and its own copy of the op profiles, everything aged."""
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "specs", dest / "specs")
    shutil.copytree(bundled_profiles_dir(), dest / "op_profiles")
    (dest / ".git").mkdir()
    age(dest / "specs", dest / "op_profiles")
    return dest


def run(repo: Path, *args: str) -> Tuple[int, str, str]:
    """``modelspec ARGS --root repo``: (exit code, stdout, stderr)."""
    result = CliRunner().invoke(main, [*args, "--root", str(repo)], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def snapshots(repo: Path) -> List[str]:
    return sorted(path.name for path in (repo / ".modelspec_cache").glob("snapshot-*"))


@pytest.fixture
def no_long_way(monkeypatch: pytest.MonkeyPatch):
    """Within ``with no_long_way():``, walking the catalogue or checking a spec fails the test."""
    @contextlib.contextmanager
    def forbid() -> Iterator[None]:
        with monkeypatch.context() as patched:
            patched.setattr(runner, "spec_file_names", lambda *a, **k: pytest.fail("walked the catalogue"))
            patched.setattr(runner, "check_file", lambda *a, **k: pytest.fail("checked a spec"))
            patched.setattr(runner, "verdicts", lambda *a, **k: pytest.fail("checked the catalogue"))
            yield
    return forbid


# ---- list ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "json"])
def test_list_answers_an_unchanged_catalogue_from_its_snapshot_byte_for_byte(repo: Path, fmt: str,
                                                                            no_long_way) -> None:
    expected = run(repo, "list", "--format", fmt, "--no-cache")
    assert expected[0] == 0 and expected[1].count("\n") >= 33
    assert run(repo, "list", "--format", fmt) == expected  # the long way, which takes the snapshot
    assert len(snapshots(repo)) == 1
    with no_long_way():
        assert run(repo, "list", "--format", fmt) == expected
        assert run(repo, "list", "--format", fmt) == expected


def _edit(repo: Path) -> None:  # two layers fewer (and no stated total, which the check would hold it to)
    path = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    text = path.read_text(encoding="utf-8").replace("num_hidden_layers: 32", "num_hidden_layers: 30")
    path.write_text(text.replace("parameters:\n  total: 8030261248\n", ""), encoding="utf-8")


def _add(repo: Path) -> None:
    shutil.copyfile(repo / "specs" / "llama" / "llama-3.1-8b.yaml", repo / "specs" / "llama" / "copy.yaml")
    path = repo / "specs" / "llama" / "copy.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: llama-copy"),
                    encoding="utf-8")


def _add_folder(repo: Path) -> None:
    (repo / "specs" / "zeta").mkdir()
    shutil.copyfile(repo / "specs" / "llama" / "llama-3.1-8b.yaml", repo / "specs" / "zeta" / "z.yaml")
    path = repo / "specs" / "zeta" / "z.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: zeta"), encoding="utf-8")


def _delete(repo: Path) -> None:
    (repo / "specs" / "llama" / "llama-3.1-8b.yaml").unlink()


def _rename(repo: Path) -> None:
    (repo / "specs" / "llama" / "llama-3.1-8b.yaml").rename(repo / "specs" / "llama" / "renamed.yaml")


def _hidden(repo: Path) -> None:
    (repo / "specs" / "llama" / ".draft.yaml").write_text("name: [broken\n", encoding="utf-8")


def _profile(repo: Path) -> None:  # a count the parameters of every llama row depend on
    path = repo / "op_profiles" / "llama.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")


def _new_profile(repo: Path) -> None:
    shutil.copyfile(repo / "op_profiles" / "llama.yaml", repo / "op_profiles" / "llama_copy.yaml")
    path = repo / "op_profiles" / "llama_copy.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("arch: llama", "arch: llama_copy", 1),
                    encoding="utf-8")


def _chmod_folder(repo: Path) -> None:  # a folder's ctime: what else may have changed is not known
    (repo / "specs" / "llama").chmod(0o755)


CHANGES = [_edit, _add, _add_folder, _delete, _rename, _hidden, _profile, _new_profile, _chmod_folder]


@pytest.mark.parametrize("change", CHANGES, ids=[change.__name__.strip("_") for change in CHANGES])
@pytest.mark.parametrize("command", [("list",), ("list", "--format", "json"), ("show", "llama-3.1-8b"),
                                     ("show", "deepseek-v3", "--format", "json")], ids=" ".join)
def test_any_change_it_came_from_sends_the_next_run_the_long_way(repo: Path, change, command: Tuple[str, ...],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    run(repo, *command)
    run(repo, *command)
    change(repo)
    age(repo / "specs", repo / "op_profiles")
    _load_folder.cache_clear()  # a command's process reads the profiles once; these runs share one process
    answers: List[object] = []
    real = snapshot.answer
    monkeypatch.setattr(snapshot, "answer", lambda *a: answers.append(real(*a)) or answers[-1])
    answered = run(repo, *command)
    assert answers == [None]  # the snapshot did not stand for the catalogue
    assert answered == run(repo, *command, "--no-cache")


def test_a_snapshot_is_not_taken_while_a_file_it_comes_from_is_fresh(repo: Path) -> None:
    _add(repo)  # written now: its stat cannot stand for its bytes yet (the racy rule)
    expected = run(repo, "list", "--no-cache")
    assert run(repo, "list") == expected
    assert snapshots(repo) == []
    age(repo / "specs")
    assert run(repo, "list") == expected and len(snapshots(repo)) == 1


def test_a_file_changed_while_the_run_reads_leaves_no_snapshot(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = runner.verdicts

    def editing(*args, **kwargs):  # the catalogue changes under the run, after its first stat
        path = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
        path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
        os.utime(path, (OLD + 1, OLD + 1))
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "verdicts", editing)
    assert run(repo, "list")[0] == 0
    assert snapshots(repo) == []


def test_a_failing_spec_is_never_answered_from_a_snapshot(repo: Path) -> None:
    path = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("hidden_size: 4096", "hidden_size: -1"),
                    encoding="utf-8")
    age(repo / "specs")
    first = run(repo, "list")
    assert first[0] == 1 and "llama-3.1-8b.yaml" in first[2]
    assert run(repo, "list") == first and snapshots(repo) == []


@pytest.mark.parametrize("damage", ["truncate", "edit the answer", "edit a stat", "another environment",
                                    "another key", "empty"])
def test_a_damaged_snapshot_is_ignored(repo: Path, damage: str, no_long_way) -> None:
    expected = run(repo, "list")
    [name] = snapshots(repo)
    path = repo / ".modelspec_cache" / name
    data = path.read_bytes()
    header, _, rest = data.partition(b"\n")
    fields = header.split(b"\t")
    damaged = {
        "truncate": data[: len(data) // 2],
        "edit the answer": data.replace(b"llama-3.1-8b", b"llama-3.1-9b"),
        "edit a stat": header + b"\n" + rest.replace(b":", b";", 1),
        "another environment": b"\t".join([fields[0], b"0" * 32, *fields[2:]]) + b"\n" + rest,
        "another key": b"\t".join([*fields[:2], b"0" * 32, *fields[3:]]) + b"\n" + rest,
        "empty": b"",
    }[damage]
    path.write_bytes(damaged)
    assert snapshot.answer(repo / ".modelspec_cache", name[len("snapshot-"):]) is None
    assert run(repo, "list") == expected


def test_a_path_with_a_line_break_is_listed_and_never_snapshotted(repo: Path) -> None:
    source = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    odd = repo / "specs" / "llama" / "odd\nname.yaml"
    odd.write_text(source.read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: odd-name"),
                   encoding="utf-8")
    age(repo / "specs")
    expected = run(repo, "list", "--no-cache")
    assert "odd-name" in expected[1]
    assert run(repo, "list") == expected and snapshots(repo) == []


@pytest.mark.parametrize("command", [("list",), ("show", "llama-3.1-8b")], ids=" ".join)
def test_a_repository_that_gains_its_own_op_profiles_is_read_again(tmp_path: Path, command: Tuple[str, ...],
                                                                  no_long_way) -> None:
    dest = tmp_path / "bare"  # no op_profiles/: the bundled profiles price it
    shutil.copytree(ROOT / "specs", dest / "specs")
    (dest / ".git").mkdir()
    age(dest / "specs")
    bundled = run(dest, *command)
    assert bundled[0] == 0 and run(dest, *command) == bundled
    with no_long_way():
        assert run(dest, *command) == bundled
    shutil.copytree(bundled_profiles_dir(), dest / "op_profiles")
    llama = dest / "op_profiles" / "llama.yaml"
    llama.write_text(llama.read_text(encoding="utf-8").replace("arch: llama", "arch: llama\n# a profile of its "
                                                               "own", 1), encoding="utf-8")
    age(dest / "op_profiles")  # the specs keep their stat: only the new folder can tell
    _load_folder.cache_clear()
    answers: List[object] = []
    real = snapshot.answer
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(snapshot, "answer", lambda *a: answers.append(real(*a)) or answers[-1])
        assert run(dest, *command) == run(dest, *command, "--no-cache")
    assert answers == [None]


def test_no_cache_neither_reads_nor_writes_a_snapshot(repo: Path) -> None:
    run(repo, "list", "--no-cache")
    run(repo, "show", "llama-3.1-8b", "--no-cache")
    assert not (repo / ".modelspec_cache").exists()


# ---- show ------------------------------------------------------------------------------------

SHIPPED = sorted(line.split(": ", 1)[1] for path in (ROOT / "specs").rglob("*.yaml")
                 for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("name: "))


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_show_answers_every_shipped_model_again_byte_for_byte(repo: Path, fmt: str, no_long_way) -> None:
    expected = {name: run(repo, "show", name, "--format", fmt, "--no-cache") for name in SHIPPED}
    assert all(code == 0 for code, _, _ in expected.values())
    for name in SHIPPED:  # the long way: the catalogue's snapshot once, then each model's view
        assert run(repo, "show", name, "--format", fmt) == expected[name]
    with no_long_way():
        for name in SHIPPED:
            assert run(repo, "show", name, "--format", fmt) == expected[name]


def test_show_refuses_from_a_snapshot_as_it_does_the_long_way(repo: Path, no_long_way) -> None:
    clash = repo / "specs" / "llama" / "clash.yaml"
    clash.write_text((repo / "specs" / "deepseek" / "deepseek-v3.yaml").read_text(encoding="utf-8"),
                     encoding="utf-8")
    age(repo / "specs")
    cased = repo / "specs" / "llama" / "cased.yaml"
    cased.write_text((repo / "specs" / "qwen" / "qwen3-8b.yaml").read_text(encoding="utf-8").replace(
        "name: qwen3-8b", "name: Qwen3-8B"), encoding="utf-8")
    age(repo / "specs")
    cases = [("deepseek-v3",), ("deepseek-v", ), ("no-such-model-at-all",), ("qwen3-8b",), ("QWEN3-8b",)]
    expected = [run(repo, "show", *case, "--no-cache") for case in cases]
    assert [code for code, _, _ in expected] == [1, 2, 2, 1, 1]
    assert "(as 'Qwen3-8B', 'qwen3-8b': names are compared case-folded)" in expected[4][2]
    assert "is stated by specs/deepseek/deepseek-v3.yaml and specs/llama/clash.yaml" in expected[0][2]
    assert "did you mean deepseek-v3" in expected[1][2]
    assert [run(repo, "show", *case) for case in cases] == expected
    with no_long_way():
        assert [run(repo, "show", *case) for case in cases] == expected


def test_a_spec_edited_since_its_view_was_kept_is_checked_again(repo: Path) -> None:
    run(repo, "show", "llama-3.1-8b")
    _edit(repo)
    age(repo / "specs")
    code, out, _ = run(repo, "show", "llama-3.1-8b")
    assert code == 0 and "30 layers" in out and (code, out) == run(repo, "show", "llama-3.1-8b", "--no-cache")[:2]
    assert len(list((repo / ".modelspec_cache" / "views").iterdir())) == 1  # one view per spec, the last kept


def test_a_spec_that_fails_its_check_is_shown_failing_every_time(repo: Path) -> None:
    path = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("hidden_size: 4096", "hidden_size: -1"),
                    encoding="utf-8")
    age(repo / "specs")
    first = run(repo, "show", "llama-3.1-8b")
    assert first[0] == 1 and "fails its check" in first[2]
    assert run(repo, "show", "llama-3.1-8b") == first
    assert not (repo / ".modelspec_cache" / "views").exists()
