"""Catalogue snapshots (pipeline/cache/snapshot.py): ``list`` and ``show`` answer an unchanged catalogue again from
what they drew, byte for byte as a full walk does, and walk every spec after any change that could alter it."""

from __future__ import annotations

import contextlib
import os
import shutil
import zlib
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from bundled import CATALOGUE_SPECS
from click.testing import CliRunner

from pipeline.cache import verdicts as cached_verdicts
from pipeline.check import discovery, runner

from pipeline.cache import snapshot
from pipeline.cli import main
from pipeline.pricing.op_profiles import _load_folder
from pipeline.spec.resources import bundled_profiles_dir
from pipeline.cache.stamps import CACHE_DIR_ENV

#: The cache's clock stopped at each test's start (tests/conftest.py): no verdict depends on the run's speed.
pytestmark = pytest.mark.usefixtures("frozen_clock")

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
OLD = 1_600_000_000  # an mtime (2020) long before any run: a snapshot may stand for what has it


def age(*folders: Path) -> None:
    """Make the mtime of every file and folder under *folders* (themselves included) old."""
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            os.utime(path, (OLD, OLD), follow_symlinks=False)


def age_written(*folders: Path) -> None:
    """Make old what was written under *folders* since :func:`age` (an mtime not old), and nothing else: any
    other file or folder keeps its stat, ctime included, so only what a change touched can tell a run of it."""
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            if path.lstat().st_mtime_ns != OLD * 1_000_000_000:
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
            patched.setattr(discovery, "spec_file_names", lambda *a, **k: pytest.fail("walked the catalogue"))
            patched.setattr(runner, "check_file", lambda *a, **k: pytest.fail("checked a spec"))
            patched.setattr(cached_verdicts, "verdicts", lambda *a, **k: pytest.fail("checked the catalogue"))
            yield
    return forbid


# ---- list ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "json"])
def test_list_answers_an_unchanged_catalogue_from_its_snapshot_byte_for_byte(repo: Path, fmt: str,
                                                                            no_long_way) -> None:
    expected = run(repo, "list", "--format", fmt, "--no-cache")
    assert expected[0] == 0 and expected[1].count("\n") >= CATALOGUE_SPECS
    assert run(repo, "list", "--format", fmt) == expected  # a full walk, which takes the snapshot
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
    age_written(repo / "specs", repo / "op_profiles")
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
    real = cached_verdicts.verdicts

    def editing(*args, **kwargs):  # the catalogue changes under the run, after its first stat
        path = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
        path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
        os.utime(path, (OLD + 1, OLD + 1))
        return real(*args, **kwargs)

    monkeypatch.setattr(cached_verdicts, "verdicts", editing)
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
    assert snapshot.answer(repo / ".modelspec_cache", name[len("snapshot-"):], repo / "specs") is None
    assert run(repo, "list") == expected


def test_a_snapshot_s_header_sums_the_rest_with_crc32_and_a_format_1_one_is_ignored(repo: Path) -> None:
    expected = run(repo, "list")
    [name] = snapshots(repo)
    path = repo / ".modelspec_cache" / name
    header, _, rest = path.read_bytes().partition(b"\n")
    fields = header.split(b"\t")
    assert fields[0] == b"modelspec catalogue snapshot, format 2"
    assert fields[4] == f"{zlib.crc32(rest):08x}".encode()
    path.write_bytes(b"\t".join([b"modelspec catalogue snapshot, format 1", *fields[1:]]) + b"\n" + rest)
    assert snapshot.answer(repo / ".modelspec_cache", name[len("snapshot-"):], repo / "specs") is None
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


def test_a_file_made_at_the_root_of_a_repository_on_the_bundled_profiles_changes_nothing(
        tmp_path: Path, no_long_way) -> None:
    dest = tmp_path / "bare"  # no op_profiles/: what chose the bundled profiles is that there is none
    shutil.copytree(ROOT / "specs", dest / "specs")
    (dest / ".git").mkdir()
    age(dest / "specs")
    listed = run(dest, "list")
    assert listed[0] == 0 and len(snapshots(dest)) == 1  # taken by the run that made the cache folder
    (dest / "notes.txt").write_text("an editor's swap file, a README\n", encoding="utf-8")
    with no_long_way():
        assert run(dest, "list") == listed


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
    for name in SHIPPED:  # a full walk: the catalogue's snapshot once, then each model's view
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


def test_show_of_a_name_no_readable_spec_states_points_at_the_files_that_state_none(repo: Path,
                                                                                   no_long_way) -> None:
    broken = repo / "specs" / "llama" / "broken.yaml"
    broken.write_text("name: [half a flow\n", encoding="utf-8")
    age(repo / "specs")
    expected = run(repo, "show", "broken-model", "--no-cache")
    assert expected[0] == 2 and expected[2].splitlines()[-1] == (
        f"Error: Invalid value for NAME: no spec in the catalogue is named 'broken-model'; none of the {CATALOGUE_SPECS} names is "
        "close to it (modelspec list shows them all); specs/llama/broken.yaml states no name that can be read "
        "(modelspec check says why)")
    assert run(repo, "show", "broken-model") == expected
    with no_long_way():
        assert run(repo, "show", "broken-model") == expected


def test_a_spec_edited_since_its_view_was_recorded_is_checked_again(repo: Path) -> None:
    run(repo, "show", "llama-3.1-8b")
    _edit(repo)
    age(repo / "specs")
    code, out, _ = run(repo, "show", "llama-3.1-8b")
    assert code == 0 and "30 layers" in out and (code, out) == run(repo, "show", "llama-3.1-8b", "--no-cache")[:2]
    assert len(list((repo / ".modelspec_cache" / "views").iterdir())) == 1  # one view per spec, the last recorded


def test_a_spec_that_fails_its_check_is_shown_failing_every_time(repo: Path) -> None:
    path = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("hidden_size: 4096", "hidden_size: -1"),
                    encoding="utf-8")
    age(repo / "specs")
    first = run(repo, "show", "llama-3.1-8b")
    assert first[0] == 1 and "fails its check" in first[2]
    assert run(repo, "show", "llama-3.1-8b") == first
    assert not (repo / ".modelspec_cache" / "views").exists()


# ---- what decides the walk besides the folders it entered: links, and the op profiles folder chosen -----------

def _age_tree(top: Path) -> None:
    """Make every entry under *top* old, links themselves included, without following a link."""
    for folder, names, files in os.walk(top):
        for name in [*names, *files]:
            os.utime(os.path.join(folder, name), (OLD, OLD), follow_symlinks=False)
    os.utime(top, (OLD, OLD))


def _vendored(repo: Path, name: str) -> str:
    """A copy of llama-3.1-8b that states *name*."""
    text = (repo / "specs" / "llama" / "llama-3.1-8b.yaml").read_text(encoding="utf-8")
    return text.replace("name: llama-3.1-8b", f"name: {name}").replace("parameters:\n  total: 8030261248\n", "")


def _relink(link: Path, target: str) -> None:
    """Point the symlink *link* at *target* (its folder, outside specs/, gets a new entry: nothing the walk
    entered changes)."""
    link.unlink()
    link.symlink_to(target)


def _outside_link_to_an_empty_folder(repo: Path) -> Tuple[str, callable]:
    vendor = repo / "vendor"
    (vendor / "v1").mkdir(parents=True)
    (vendor / "v2").mkdir()
    (vendor / "v2" / "v.yaml").write_text(_vendored(repo, "vendored"), encoding="utf-8")
    (vendor / "current").symlink_to("v1")
    (repo / "specs" / "ext").symlink_to("../vendor/current")
    return "vendored", lambda: _relink(vendor / "current", "v2")


def _outside_link_of_a_folder_walked_already(repo: Path) -> Tuple[str, callable]:
    vendor = repo / "vendor"
    (vendor / "v1").mkdir(parents=True)
    (vendor / "v2").mkdir()
    (vendor / "v1" / "a.yaml").write_text(_vendored(repo, "vendored-a"), encoding="utf-8")
    (vendor / "v2" / "b.yaml").write_text(_vendored(repo, "vendored-b"), encoding="utf-8")
    (vendor / "current").symlink_to("v1")
    (repo / "specs" / "a_direct").symlink_to("../vendor/v1")
    (repo / "specs" / "b_current").symlink_to("../vendor/current")  # the folder a_direct walked: passed over
    return "vendored-b", lambda: _relink(vendor / "current", "v2")


def _outside_link_of_a_spec_taken_already(repo: Path) -> Tuple[str, callable]:
    vendor = repo / "vendor"
    vendor.mkdir()
    (vendor / "a.yaml").write_text(_vendored(repo, "vendored-a"), encoding="utf-8")
    (vendor / "b.yaml").write_text(_vendored(repo, "vendored-b"), encoding="utf-8")
    (vendor / "current.yaml").symlink_to("a.yaml")
    (repo / "specs" / "a.yaml").symlink_to("../vendor/a.yaml")
    (repo / "specs" / "b.yaml").symlink_to("../vendor/current.yaml")  # the file a.yaml is: taken once
    return "vendored-b", lambda: _relink(vendor / "current.yaml", "b.yaml")


def _dangling_link_whose_folder_appears(repo: Path) -> Tuple[str, callable]:
    (repo / "specs" / "ext").symlink_to("../vendor")

    def change() -> None:
        (repo / "vendor").mkdir()
        (repo / "vendor" / "v.yaml").write_text(_vendored(repo, "vendored"), encoding="utf-8")
    return "vendored", change


def _link_to_a_file_retargeted_to_a_folder(repo: Path) -> Tuple[str, callable]:
    vendor = repo / "vendor"
    (vendor / "v2").mkdir(parents=True)
    (vendor / "v2" / "v.yaml").write_text(_vendored(repo, "vendored"), encoding="utf-8")
    (vendor / "notes.txt").write_text("not a spec\n", encoding="utf-8")
    (vendor / "current").symlink_to("notes.txt")
    (repo / "specs" / "ext").symlink_to("../vendor/current")
    return "vendored", lambda: _relink(vendor / "current", "v2")


def _specs_folder_through_an_outside_link(repo: Path) -> Tuple[str, callable]:
    shutil.rmtree(repo / "specs")
    (repo / "vendor" / "empty").mkdir(parents=True)
    (repo / "vendor" / "current").symlink_to("empty")
    (repo / "specs").symlink_to("vendor/current")
    (repo / "vendor" / "other").mkdir()
    (repo / "vendor" / "other" / "v.yaml").write_text(_vendored(ROOT, "vendored"), encoding="utf-8")
    return "vendored", lambda: _relink(repo / "vendor" / "current", "other")


LINKS = [_outside_link_to_an_empty_folder, _outside_link_of_a_folder_walked_already,
         _outside_link_of_a_spec_taken_already, _dangling_link_whose_folder_appears,
         _link_to_a_file_retargeted_to_a_folder, _specs_folder_through_an_outside_link]


@pytest.mark.parametrize("layout", LINKS, ids=[layout.__name__.strip("_") for layout in LINKS])
def test_a_link_retargeted_outside_the_catalogue_sends_the_next_run_the_long_way(repo: Path, layout) -> None:
    name, change = layout(repo)
    _age_tree(repo)
    commands = [("list",), ("list", "--format", "json"), ("show", name)]
    before = [run(repo, *command) for command in commands]
    assert [run(repo, *command) for command in commands] == before
    assert before[2][0] == 2 and f"no spec in the catalogue is named {name!r}" in before[2][2]
    change()
    after = [run(repo, *command, "--no-cache") for command in commands]
    assert after[0][0] == 0 and f"\n{name} " in after[0][1] and after[2][0] == 0
    assert [run(repo, *command) for command in commands] == after


def _own_profiles_made(repo: Path) -> None:  # the bundled profiles were the repository's until now
    shutil.copytree(bundled_profiles_dir(), repo / "op_profiles")
    (repo / "op_profiles" / "qwen3.yaml").unlink()


def _profiles_link_retargeted(repo: Path) -> None:
    (repo / "op_profiles").unlink()
    (repo / "op_profiles").symlink_to("../elsewhere/trimmed")


@pytest.mark.parametrize("change", [_own_profiles_made, _profiles_link_retargeted],
                         ids=["own profiles made", "profiles link retargeted"])
def test_the_op_profiles_folder_chosen_anew_sends_the_next_run_the_long_way(repo: Path, change) -> None:
    shutil.rmtree(repo / "op_profiles")
    if change is _profiles_link_retargeted:
        shutil.copytree(bundled_profiles_dir(), repo.parent / "elsewhere" / "full")
        shutil.copytree(bundled_profiles_dir(), repo.parent / "elsewhere" / "trimmed")
        (repo.parent / "elsewhere" / "trimmed" / "qwen3.yaml").unlink()
        (repo / "op_profiles").symlink_to("../elsewhere/full")
        _age_tree(repo.parent / "elsewhere")
    _age_tree(repo)
    before = run(repo, "list")
    _age_tree(repo)
    assert before[0] == 0 and run(repo, "list") == before and len(snapshots(repo)) == 1
    change(repo)
    _load_folder.cache_clear()  # a command's process reads the profiles once; these runs share one process
    after = run(repo, "list", "--no-cache")
    assert after[0] == 1 and "specs/qwen/qwen3-8b.yaml" in after[2]  # no qwen3 profile any more
    assert run(repo, "list") == after


def test_a_profile_changed_after_it_was_read_and_before_the_walk_leaves_no_snapshot(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = discovery.spec_file_names

    def walking(*args, **kwargs):  # the profiles were read, the stats are not taken yet: a profile goes
        (repo / "op_profiles" / "qwen3.yaml").unlink()
        os.utime(repo / "op_profiles", (OLD, OLD))
        return real(*args, **kwargs)

    with monkeypatch.context() as patched:
        patched.setattr(discovery, "spec_file_names", walking)
        assert run(repo, "list")[0] == 0  # drawn with the qwen3 profile it read
    assert snapshots(repo) == []
    _load_folder.cache_clear()
    after = run(repo, "list", "--no-cache")
    assert after[0] == 1 and "specs/qwen/qwen3-8b.yaml" in after[2]
    assert run(repo, "list") == after


@pytest.mark.parametrize("command, code", [(("list",), 0), (("check",), 0)], ids=["list", "check"])
def test_a_profile_removed_after_the_profiles_were_read_runs_the_command_uncached(
        repo: Path, monkeypatch: pytest.MonkeyPatch, command: Tuple[str, ...], code: int) -> None:
    expected = run(repo, *command, "--no-cache")
    real = discovery.spec_file_names

    def walking(*args, **kwargs):  # the cache's keys hash every profile read: one is gone before they are made
        (repo / "op_profiles" / "qwen3.yaml").unlink(missing_ok=True)
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "spec_file_names", walking)
    assert expected[0] == code
    assert run(repo, *command) == expected  # the run the profiles it read decide, as --no-cache's: no traceback


@pytest.mark.parametrize("few", [0, 8])
def test_a_name_map_has_a_file_only_for_a_line_of_its_own(monkeypatch: pytest.MonkeyPatch, few: int) -> None:
    # Each file searched for in the text, or all against the map's paths listed: the same answer. A path is a
    # line's last field; a folder's name may hold a tab, so a path ending another line's is not that line's.
    monkeypatch.setattr(snapshot, "_FEW_FILES", few)
    names = "".join(snapshot.name_line(name, display, path) for name, display, path in [
        ("a", "specs/a.yaml", "/r/specs/a.yaml"), (None, "specs/t\\tb.yaml", "/r/specs/t\t/r/specs/b.yaml"),
        ("c", "specs/c.yaml", "/r/specs/c.yaml")])
    assert snapshot.names_files(names, {"/r/specs/a.yaml", "/r/specs/c.yaml"})
    assert snapshot.names_files(names, {"/r/specs/t\t/r/specs/b.yaml"})
    for absent in ["/r/specs/b.yaml", "/r/specs/a.yam", "specs/a.yaml", "/r/specs", "a.yaml"]:
        assert not snapshot.names_files(names, {"/r/specs/a.yaml", absent}), absent


# ---- holds_soon: a snapshot's stats checked by a child process while the caller works ------------------------

@pytest.fixture
def stat_lines(tmp_path: Path) -> Tuple[List[str], List[Path]]:
    """The stat lines of 12 files (as :func:`snapshot.take` writes them), and the files."""
    files = []
    for index in range(12):
        path = tmp_path / f"s{index:02d}.yaml"
        path.write_text(f"name: s{index}\n", encoding="utf-8")
        os.utime(path, (OLD, OLD))
        files.append(path)
    taken = snapshot.take([str(path) for path in files])
    assert taken is not None
    return taken.split("\n"), files


@pytest.fixture
def forks(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """The pids of the children ``os.fork`` starts in this process from now on (a child is 0's own)."""
    started: List[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            started.append(pid)
        return pid
    monkeypatch.setattr(os, "fork", fork)
    return started


def _reaped(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
        return False
    return True


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this system does not fork")
@pytest.mark.parametrize("change", ["none", "edited", "removed", "skipped edited"])
def test_a_child_says_whether_the_stats_hold_as_the_process_itself_would(
        stat_lines, forks: List[int], monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    lines, files = stat_lines
    monkeypatch.setattr(snapshot, "CHILD_LINES", 10)
    skipped = {str(files[0])} if change == "skipped edited" else set()
    if change in ("edited", "skipped edited"):
        files[-1 if change == "edited" else 0].write_text("name: changed\n", encoding="utf-8")
    elif change == "removed":
        files[5].unlink()
    answer = snapshot.holds_soon(lines, skipped)
    assert len(forks) == 1
    expected = change in ("none", "skipped edited")
    assert snapshot.holds(lines, skipped) is expected
    monkeypatch.setattr(snapshot, "holds", lambda *a, **k: pytest.fail("the parent checked the stats itself"))
    assert answer() is expected and answer() is expected  # the same answer again, the child asked once
    assert _reaped(forks[0])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="this system does not fork")
def test_a_child_that_leaves_without_an_answer_has_the_process_check_the_stats(
        stat_lines, forks: List[int], monkeypatch: pytest.MonkeyPatch) -> None:
    lines, files = stat_lines
    monkeypatch.setattr(snapshot, "CHILD_LINES", 10)
    parent, real = os.getpid(), snapshot.holds
    monkeypatch.setattr(snapshot, "holds", lambda *a: real(*a) if os.getpid() == parent else os._exit(3))
    files[3].write_text("name: changed\n", encoding="utf-8")
    answer = snapshot.holds_soon(lines)
    assert answer() is False and len(forks) == 1 and _reaped(forks[0])


@pytest.mark.parametrize("why", ["fewer lines than CHILD_LINES", "not asked to", "another thread runs",
                                 "fork fails", "no fork"])
def test_no_child_is_started_where_one_would_not_pay_or_could_deadlock(
        stat_lines, monkeypatch: pytest.MonkeyPatch, why: str) -> None:
    import threading

    lines, files = stat_lines
    monkeypatch.setattr(snapshot, "CHILD_LINES", 100 if why == "fewer lines than CHILD_LINES" else 10)

    def failing_fork() -> int:
        if why == "fork fails":
            raise OSError(11, "Resource temporarily unavailable")
        pytest.fail("forked")
    if why == "no fork":
        monkeypatch.delattr(os, "fork", raising=False)
    else:
        monkeypatch.setattr(os, "fork", failing_fork)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    if why == "another thread runs":
        other.start()
    try:
        answer = snapshot.holds_soon(lines, in_child=why != "not asked to")
        files[2].write_text("name: changed\n", encoding="utf-8")  # after the call: the stats are checked when asked
        assert answer() is False
    finally:
        release.set()
        if other.is_alive():
            other.join()
