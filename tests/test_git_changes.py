"""``--changed-since REF``: which specs a change touches, in real throwaway git repositories, and every refusal."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Dict, List, Sequence

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.catalogue.git import (ChangesAsked, Changes, FileChange, GitError, SpecFacts, changes_since, merge_base_of,
                                  select_specs)
from spec_repos import GIT_ENV, commit_all, edit, git, git_repo, make_repo, modelspec_argv, run

DEEPSEEK = "specs/deepseek/deepseek-v3.yaml"
LLAMA = "specs/llama/llama-3.1-8b.yaml"
QWEN = "specs/qwen/qwen3.5-35b-a3b.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The fixture catalogue committed on ``main``, with a ``schemas/`` and a ``pipeline/`` file of its own."""
    root = make_repo(tmp_path / "repo")
    (root / "schemas").mkdir()
    (root / "schemas" / "model-spec.schema.json").write_text("{}\n", encoding="utf-8")
    (root / "pipeline").mkdir()
    (root / "pipeline" / "rules.py").write_text("RULES = 1\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "catalogue")
    return root


def base_of(root: Path, ref: str = "main") -> str:
    """The first 12 digits of the merge base of *ref* and HEAD."""
    return git(root, "merge-base", ref, "HEAD").strip()[:12]


def checked_files(stdout: str) -> Sequence[str]:
    """The files a ``check --format json`` report lists."""
    return [item["file"] for item in json.loads(stdout)["files"]]


def check_changed(root: Path, ref: str = "main", *paths: str):
    """``modelspec check [paths] --changed-since REF --format json``."""
    return run(root, "check", *[str(root / path) for path in paths], "--changed-since", ref, "--format", "json")


def test_a_modified_spec_is_checked_alone(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    result = check_changed(repo)
    assert (result.exit_code, checked_files(result.stdout)) == (0, [DEEPSEEK])
    assert result.stderr == f"changed since main (merge base {base_of(repo)}): 1 of 3 specs (1 modified)\n"


def test_quiet_says_nothing_on_success_even_about_the_change(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    result = run(repo, "check", "--changed-since", "main", "-q")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_a_staged_change_and_an_untracked_spec_are_checked(repo: Path) -> None:
    edit(repo / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    git(repo, "add", LLAMA)
    (repo / "specs" / "llama" / "new.yaml").write_text(
        (repo / LLAMA).read_text(encoding="utf-8").replace("llama-3.1-8b", "llama-3.1-8b-new"), encoding="utf-8")
    result = check_changed(repo)
    assert checked_files(result.stdout) == [LLAMA, "specs/llama/new.yaml"]
    assert result.stderr == f"changed since main (merge base {base_of(repo)}): 2 of 4 specs (1 added; 1 modified)\n"


def untracked_everywhere(root: Path) -> None:
    """Untracked files of every kind: artifacts, notes, a spec in capitals, a new op profile, a new rule file."""
    (root / "resolved").mkdir()
    (root / "resolved" / "llama-3.1-8b.json").write_text("{}\n", encoding="utf-8")
    (root / "notes.txt").write_text("notes\n", encoding="utf-8")
    (root / "specs" / "llama" / "NEW.YML").write_text("name: new\n", encoding="utf-8")
    (root / "op_profiles" / "newarch.yaml").write_text("arch: newarch\n", encoding="utf-8")
    (root / "pipeline" / "new_rule.py").write_text("RULE = 2\n", encoding="utf-8")


#: What :func:`untracked_everywhere` adds that can touch a spec, without the rules folders' file.
UNTRACKED_SPEC_FILES = (FileChange("added", "op_profiles/newarch.yaml"), FileChange("added", "specs/llama/NEW.YML"))


@pytest.mark.parametrize("pathspec_env", [None, "GIT_LITERAL_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
                                          "GIT_ICASE_PATHSPECS", "GIT_GLOB_PATHSPECS"])
def test_of_the_untracked_files_only_those_that_can_touch_a_spec_are_listed(
        repo: Path, monkeypatch: pytest.MonkeyPatch, pathspec_env: str) -> None:
    # an uncommitted resolved/ of 10,000 artifacts cost every --changed-since 35 ms to list, for nothing: only a
    # spec file, an op profile or a file of the rules' folders can touch a spec; git's pathspec switches in the
    # environment do not change what modelspec's pathspecs mean
    if pathspec_env is not None:
        monkeypatch.setenv(pathspec_env, "1")
    untracked_everywhere(repo)
    assert changes_since(repo, "main").files == UNTRACKED_SPEC_FILES
    assert changes_since(repo, "main", rules=["pipeline/"]).files == (
        UNTRACKED_SPEC_FILES[0], FileChange("added", "pipeline/new_rule.py"), UNTRACKED_SPEC_FILES[1])


def test_the_untracked_rule_files_are_found_from_a_root_below_the_work_tree_s_top(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "top" / "catalogue")
    (root / "pipeline").mkdir()
    (tmp_path / "top" / "pipeline").mkdir()  # the top's own pipeline/ is not the root's
    git(tmp_path / "top", "init", "-q", "-b", "main")
    commit_all(tmp_path / "top", "catalogue")
    untracked_everywhere(root)
    (tmp_path / "top" / "pipeline" / "other.py").write_text("OTHER = 1\n", encoding="utf-8")
    asked = ChangesAsked(root, "main", ["pipeline/"])
    assert asked.changes().files == (
        UNTRACKED_SPEC_FILES[0], FileChange("added", "pipeline/new_rule.py"), UNTRACKED_SPEC_FILES[1])


def test_a_renamed_spec_is_checked_under_its_new_path(repo: Path) -> None:
    (repo / "specs" / "meta").mkdir()
    git(repo, "mv", LLAMA, "specs/meta/llama-3.1-8b.yaml")
    result = check_changed(repo)
    assert (result.exit_code, checked_files(result.stdout)) == (0, ["specs/meta/llama-3.1-8b.yaml"])
    assert result.stderr == f"changed since main (merge base {base_of(repo)}): 1 of 3 specs (1 renamed)\n"
    changes = changes_since(repo, "main")
    assert changes.files == (FileChange("renamed", "specs/meta/llama-3.1-8b.yaml", LLAMA),)


def test_a_file_moved_without_git_is_a_removal_and_an_addition(repo: Path) -> None:
    (repo / "specs" / "meta").mkdir()
    (repo / LLAMA).rename(repo / "specs" / "meta" / "llama-3.1-8b.yaml")
    result = check_changed(repo)
    assert checked_files(result.stdout) == ["specs/meta/llama-3.1-8b.yaml"]
    assert result.stderr == (f"changed since main (merge base {base_of(repo)}): 1 of 3 specs (1 added)\n"
                             f"removed since main: {LLAMA} (not checked)\n")


def test_a_deleted_spec_is_reported_not_checked(repo: Path) -> None:
    (repo / QWEN).unlink()
    result = check_changed(repo)
    assert (result.exit_code, checked_files(result.stdout)) == (0, [])
    assert result.stderr == (f"changed since main (merge base {base_of(repo)}): 0 of 2 specs\n"
                             f"removed since main: {QWEN} (not checked)\n")


@pytest.mark.parametrize("profile, expected, reason", [
    ("deepseek_v3", [DEEPSEEK], "op profile deepseek_v3 changed"),
    ("llama", [LLAMA], "op profile llama changed"),            # the arch inferred from the name
    ("qwen3_5_moe", [QWEN], "op profile qwen3_5_moe changed"),
    ("vision", [QWEN], "vision profile changed"),               # the one spec with a tower
])
def test_a_profile_change_fans_out_to_exactly_the_specs_of_that_arch(repo: Path, profile: str,
                                                                       expected: Sequence[str], reason: str) -> None:
    with (repo / "op_profiles" / f"{profile}.yaml").open("a", encoding="utf-8") as handle:
        handle.write("# a comment changes the profile's bytes\n")
    result = check_changed(repo)
    # the repository's own profile, changed, is not the bundled one: gate.own-profile names it beside its specs
    assert (result.exit_code, checked_files(result.stdout)) == (0, [f"op_profiles/{profile}.yaml", *expected])
    assert result.stderr == f"changed since main (merge base {base_of(repo)}): 1 of 3 specs (1 {reason})\n"


def test_a_profile_change_also_takes_a_spec_whose_arch_cannot_be_told(repo: Path) -> None:
    (repo / "specs" / "broken.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    commit_all(repo, "a broken spec")
    with (repo / "op_profiles" / "llama.yaml").open("a", encoding="utf-8") as handle:
        handle.write("# changed\n")
    result = check_changed(repo)
    assert checked_files(result.stdout) == ["op_profiles/llama.yaml", "specs/broken.yaml", LLAMA]
    assert result.stderr == (f"changed since main (merge base {base_of(repo)}): 2 of 4 specs "
                             "(1 op profile llama changed; 1 op profiles changed and its arch cannot be told)\n")


@pytest.mark.parametrize("changed", ["schemas/model-spec.schema.json", "pipeline/rules.py"])
def test_the_repository_s_own_pipeline_or_schemas_folder_touches_no_spec(repo: Path, changed: str) -> None:
    # modelspec does not read a spec repository's pipeline/ or schemas/: they are not the rules that run
    with (repo / changed).open("a", encoding="utf-8") as handle:
        handle.write("\n")
    result = check_changed(repo)
    assert checked_files(result.stdout) == []


@pytest.mark.parametrize(("name", "before", "after"), [
    (".pre-commit-config.yaml", "repos:\n  - repo: https://github.com/o/modelspec\n    rev: aaa\n",
     "repos:\n  - repo: https://github.com/o/modelspec\n    rev: bbb\n"),
    ("requirements.txt", "click\nmodelspec-catalogue @ git+https://x/modelspec@aaa\n",
     "click\nmodelspec-catalogue @ git+https://x/modelspec@bbb\n"),
])
def test_a_new_modelspec_pin_fans_out_to_all(tmp_path: Path, name: str, before: str, after: str) -> None:
    root = make_repo(tmp_path / "repo")
    (root / name).write_text(before, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "catalogue")
    result = check_changed(root)
    assert checked_files(result.stdout) == []
    (root / name).write_text(after.replace("click\n", "click>=8\n"), encoding="utf-8")
    result = check_changed(root)
    assert checked_files(result.stdout) == [DEEPSEEK, LLAMA, QWEN]
    assert result.stderr == (f"changed since main (merge base {base_of(root)}): 3 of 3 specs (3 {name} pins modelspec "
                             "anew)\n")


@pytest.mark.parametrize("pin", [b"modelspec-catalogue==1\n", b"modelspec-catalogue==1  # \xe9t\xe9 (Latin-1)\n"])
def test_another_line_of_a_pin_file_is_no_rule_change(tmp_path: Path, pin: bytes) -> None:
    # The pin line is compared as the base has it and as the file has it, byte for byte, even when not UTF-8.
    root = make_repo(tmp_path / "repo")
    (root / "requirements.txt").write_bytes(b"click\n" + pin)
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "catalogue")
    (root / "requirements.txt").write_bytes(b"click>=8\n" + pin)
    assert checked_files(check_changed(root).stdout) == []


def test_an_unrelated_file_touches_no_spec(repo: Path) -> None:
    (repo / "README.md").write_text("notes\n", encoding="utf-8")
    with (repo / "op_profiles" / "README.md").open("a", encoding="utf-8") as handle:
        handle.write("notes\n")
    result = check_changed(repo)
    assert (result.exit_code, checked_files(result.stdout)) == (0, [])


def test_only_the_branch_changes_count_not_what_landed_on_the_ref(repo: Path) -> None:
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    commit_all(repo, "feature: deepseek")
    git(repo, "checkout", "-q", "main")
    edit(repo / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    commit_all(repo, "main: llama")
    git(repo, "checkout", "-q", "feature")
    result = check_changed(repo)
    assert checked_files(result.stdout) == [DEEPSEEK]


def test_paths_narrow_the_selection(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    edit(repo / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    (repo / QWEN).unlink()
    result = check_changed(repo, "main", "specs/deepseek")
    # the changed spec the path named leaves out is named (gate.excluded-change), not checked
    assert checked_files(result.stdout) == [DEEPSEEK, LLAMA]
    assert [(item["file"], [p["code"] for p in item["problems"]]) for item in json.loads(result.stdout)["files"]
            if item["file"] == LLAMA] == [(LLAMA, ["gate.excluded-change"])]
    assert result.stderr == (f"changed since main (merge base {base_of(repo)}): 1 of 1 spec (1 modified)\n"
                             f"changed since main but left out by the configuration or the files named: {LLAMA} "
                             "(not checked)\n")


def test_a_spec_repository_inside_a_larger_git_repository(tmp_path: Path) -> None:
    top = tmp_path / "top"
    root = make_repo(top / "catalogue")
    (top / "elsewhere.yaml").write_text("x: 1\n", encoding="utf-8")
    git(top, "init", "-q", "-b", "main")
    commit_all(top, "monorepo")
    edit(root / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    (top / "elsewhere.yaml").write_text("x: 2\n", encoding="utf-8")
    result = check_changed(root)
    # The report names the file from the work tree's top, where CI finds it; git's selection is the root's.
    assert checked_files(result.stdout) == ["catalogue/" + LLAMA]
    assert changes_since(root, "main").files == (FileChange("modified", LLAMA),)


def test_specs_whose_names_reports_escape_are_selected_and_removed_under_those_names(repo: Path) -> None:
    # git names a file by its bytes, the catalogue by the name reports show (an undecodable byte as \xfe, a
    # control character escaped): a change must find its spec all the same, never drop it silently.
    llama = (repo / LLAMA).read_text(encoding="utf-8")
    tracked = repo / "specs" / os.fsdecode(b"old \xfe.yaml")
    gone = repo / "specs" / "gone\n.yaml"
    tracked.write_text(llama.replace("llama-3.1-8b", "old"), encoding="utf-8")
    gone.write_text(llama.replace("llama-3.1-8b", "gone"), encoding="utf-8")
    commit_all(repo, "odd names")
    edit(tracked, "vocab_size: 128256", "vocab_size: 128000")
    gone.unlink()
    (repo / "specs" / os.fsdecode(b"new \xfd\t.yaml")).write_text(llama.replace("llama-3.1-8b", "new"),
                                                                  encoding="utf-8")
    result = check_changed(repo)
    assert (result.exit_code, checked_files(result.stdout)) == (0, ["specs/new \\xfd\\t.yaml",
                                                                    "specs/old \\xfe.yaml"])
    assert result.stderr == (f"changed since main (merge base {base_of(repo)}): 2 of 5 specs (1 added; 1 modified)\n"
                             "removed since main: specs/gone\\n.yaml (not checked)\n")


@pytest.mark.parametrize("link, target", [("specs", "data/specs"),                   # the catalogue folder itself
                                           ("specs/llama", "../../vendor/llama")])  # a folder outside the root
def test_a_spec_in_a_folder_reached_through_a_symlink_is_selected_and_removed_by_its_catalogue_name(
        tmp_path: Path, link: str, target: str) -> None:
    # git names such a file where it is, the catalogue by the link: the change is the catalogue's spec.
    top = tmp_path / "top"
    root = make_repo(top / "catalogue")
    real = (root / link).parent / target
    real.parent.mkdir(parents=True, exist_ok=True)
    (root / link).rename(real)
    (root / link).symlink_to(target)
    llama = real / (LLAMA.removeprefix("specs/") if link == "specs" else "llama-3.1-8b.yaml")
    (llama.parent / "old.yaml").write_text(llama.read_text(encoding="utf-8").replace("llama-3.1-8b", "old"),
                                           encoding="utf-8")
    git(top, "init", "-q", "-b", "main")
    commit_all(top, "catalogue, a folder of it linked")
    edit(llama, "vocab_size: 128256", "vocab_size: 128000")
    (llama.parent / "old.yaml").unlink()
    result = check_changed(root)
    assert (result.exit_code, checked_files(result.stdout)) == (0, ["catalogue/" + LLAMA])
    assert result.stderr == (f"changed since main (merge base {base_of(top)}): 1 of 3 specs (1 modified)\n"
                             "removed since main: specs/llama/old.yaml (not checked)\n")


def test_a_spec_that_is_a_symlink_is_selected_when_the_file_it_names_changes(tmp_path: Path) -> None:
    top = tmp_path / "top"
    root = make_repo(top / "catalogue")
    (top / "vendor").mkdir()
    (root / LLAMA).rename(top / "vendor" / "llama.yaml")
    (root / LLAMA).symlink_to(Path("..", "..", "..", "vendor", "llama.yaml"))
    git(top, "init", "-q", "-b", "main")
    commit_all(top, "catalogue, a spec of it linked")
    edit(top / "vendor" / "llama.yaml", "vocab_size: 128256", "vocab_size: 128000")
    result = check_changed(root)
    assert (result.exit_code, checked_files(result.stdout)) == (0, ["catalogue/" + LLAMA])
    assert result.stderr == f"changed since main (merge base {base_of(top)}): 1 of 3 specs (1 modified)\n"


def test_a_profile_changed_in_a_linked_op_profiles_folder_fans_out(repo: Path) -> None:
    (repo / "shared").mkdir()
    (repo / "op_profiles").rename(repo / "shared" / "op_profiles")
    (repo / "op_profiles").symlink_to(Path("shared", "op_profiles"))
    commit_all(repo, "the op profiles linked")
    with (repo / "shared" / "op_profiles" / "llama.yaml").open("a", encoding="utf-8") as handle:
        handle.write("# a comment changes the profile's bytes\n")
    result = check_changed(repo, "HEAD")
    assert (result.exit_code, checked_files(result.stdout)) == (0, ["op_profiles/llama.yaml", LLAMA])
    assert result.stderr == (f"changed since HEAD (merge base {base_of(repo, 'HEAD')}): 1 of 3 specs "
                             "(1 op profile llama changed)\n")


@pytest.mark.parametrize("variable, value", [("GIT_DIR", "other/.git"), ("GIT_WORK_TREE", "other")])
def test_git_s_environment_does_not_change_the_repository_compared(repo: Path, tmp_path: Path, variable: str,
                                                                  value: str) -> None:
    # As diff and regen --commit (GitPython) do: the repository is the one holding the root, whatever GIT_DIR or
    # GIT_WORK_TREE names; else the root's files are compared with another history, or another folder's files
    # (or the run ends in a traceback).
    other = git_repo(tmp_path / "other")
    edit(other / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    commit_all(other, "another history")
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    result = CliRunner().invoke(main, ["check", "--root", str(repo), "--changed-since", "main", "--format", "json"],
                                env={**GIT_ENV, variable: str(tmp_path / value)}, catch_exceptions=False)
    assert (result.exit_code, checked_files(result.stdout)) == (0, [DEEPSEEK])
    assert result.stderr == f"changed since main (merge base {base_of(repo)}): 1 of 3 specs (1 modified)\n"


# ---- refusals: each a clear error with the fix, exit code 2, never a silent run ------------------------------------


def test_an_unknown_ref_is_refused(repo: Path) -> None:
    result = check_changed(repo, "origin/nope")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "Error: 'origin/nope' names no commit in this repository; name a branch, tag or commit that exists here "
        "(git branch -a lists them), and in CI fetch it first, e.g. git fetch origin main\n"))


def test_the_questions_put_early_answer_as_changes_since_and_refuse_only_when_asked(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    assert ChangesAsked(repo, "main").changes() == changes_since(repo, "main")
    asked = ChangesAsked(repo, "origin/nope")  # git runs in a thread: nothing is raised until the answer is taken
    with pytest.raises(GitError) as refused:
        asked.changes()
    assert str(refused.value).startswith("'origin/nope' names no commit in this repository; ")


def _alive(pid: int) -> bool:
    """Whether process *pid* runs (a zombie, killed and waiting for its parent to reap it, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _hanging_git(folder: Path) -> Path:
    """A ``git`` in *folder* that notes its process id in *folder*/started and hangs (a slow file system, a huge
    work tree): the file it notes in."""
    started = folder / "started"
    folder.mkdir()
    (folder / "git").write_text(f"#!/bin/sh\necho $$ >> {started}\nexec sleep 60\n", encoding="utf-8")
    (folder / "git").chmod(0o755)
    return started


def _started(started: Path) -> List[int]:
    """The process ids a :func:`_hanging_git` noted, once one is noted (within 30 s)."""
    import time

    deadline = time.monotonic() + 30
    while not (started.exists() and started.read_text(encoding="utf-8").endswith("\n")) \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    return [int(line) for line in started.read_text(encoding="utf-8").split()]


def _ended(pids: Sequence[int]) -> List[int]:
    """The processes of *pids* that still run after up to 30 s (a bound for a loaded machine, not a timing the
    test measures: a process that ends returns at once); each is killed then."""
    import signal
    import time

    deadline = time.monotonic() + 30
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.02)
    running = [pid for pid in pids if _alive(pid)]
    for pid in running:
        os.kill(pid, signal.SIGKILL)
    return running


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc to tell a process runs")
def test_a_check_interrupted_while_git_runs_leaves_no_git_running(repo: Path, tmp_path: Path) -> None:
    # The git questions run in a thread from the start; Ctrl-C interrupts the command's thread only. The check
    # ends as an interrupted one did when it asked git in its own thread, and stops its git as that did.
    import signal
    import subprocess

    started = _hanging_git(tmp_path / "bin")
    env = {**os.environ, **GIT_ENV, "PATH": f"{started.parent}{os.pathsep}{os.environ['PATH']}"}
    process = subprocess.Popen(modelspec_argv("check", "--root", str(repo), "--changed-since", "main"), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        pids = _started(started)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
    finally:  # a check that did not end is ended and waited for: no other test sees its process
        process.kill()
        process.communicate()
    assert (process.returncode, stdout, stderr) == (1, "", "\nAborted!\n")
    assert _ended(pids) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc to tell a process runs")
def test_questions_stopped_stop_their_git_and_start_no_other(repo: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # What a command ending before it takes the answers does as it exits (a refusal raised first, Ctrl-C).
    started = _hanging_git(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{started.parent}{os.pathsep}{os.environ['PATH']}")
    asked = ChangesAsked(repo, "main")
    pids = _started(started)
    asked.stop()
    with pytest.raises(GitError) as refused:  # the first question killed, the next never asked
        asked.changes()
    assert str(refused.value) == "git was stopped: modelspec is exiting"
    assert (len(pids), _ended(pids), _started(started)) == (1, [], pids)


def test_a_run_with_no_specs_says_so_before_what_git_refuses(repo: Path) -> None:
    shutil.rmtree(repo / "specs")
    (repo / "specs").mkdir()
    result = run(repo, "check", "--changed-since", "origin/nope")
    assert result.exit_code == 2
    assert f"no spec files (*.yaml, *.yml) in {repo / 'specs'}" in result.stderr
    assert "origin/nope" not in result.stderr


@pytest.mark.parametrize("ref", ["main..HEAD", "HEAD^@", "main^!"])
def test_a_ref_naming_more_than_one_commit_is_refused(repo: Path, ref: str) -> None:
    # git names a commit for each of them when asked without --verify: asked all at once, they are asked again
    # one at a time, which refuses them as before
    result = check_changed(repo, ref)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        f"Error: {ref!r} names no commit in this repository; name a branch, tag or commit that exists here "
        "(git branch -a lists them), and in CI fetch it first, e.g. git fetch origin main\n"))


def test_a_ref_as_a_tag_or_an_ancestor_is_compared_as_its_commit(repo: Path) -> None:
    git(repo, "tag", "v1")
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    assert {ref: checked_files(check_changed(repo, ref).stdout) for ref in ("v1", "HEAD~0", "main")} == {
        "v1": [DEEPSEEK], "HEAD~0": [DEEPSEEK], "main": [DEEPSEEK]}


def test_a_ref_at_head_s_commit_is_its_own_merge_base_and_git_is_not_asked_it(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.catalogue import git as git_changes

    asked: List[str] = []
    real = git_changes._run_git
    monkeypatch.setattr(git_changes, "_run_git", lambda cwd, args, *rest: asked.append(args[0]) or real(cwd, args, *rest))
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    head = git(repo, "rev-parse", "HEAD").strip()
    for ref, merge_bases in (("HEAD", 0), ("main", 0), (head, 0), ("HEAD~0", 0)):
        asked.clear()
        changes = changes_since(repo, ref)
        assert (changes.base, asked.count("merge-base")) == (head, merge_bases), ref
    commit_all(repo, "a second commit")
    asked.clear()
    assert changes_since(repo, "main~1").base == head and asked.count("merge-base") == 1  # an ancestor: asked


@pytest.mark.parametrize("ref", ["--output=x", "-x", "--", "-"])
def test_an_option_like_ref_is_refused_before_git_sees_it(repo: Path, ref: str) -> None:
    before = sorted(path.name for path in repo.iterdir())
    result = run(repo, "check", f"--changed-since={ref}")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        f"Error: {ref!r} looks like an option, not a git revision, and is refused so git cannot read it as one; "
        "name a branch, tag or commit, e.g. origin/main\n"))
    assert sorted(path.name for path in repo.iterdir()) == before


def test_an_empty_ref_is_refused(repo: Path) -> None:
    result = run(repo, "check", "--changed-since=")
    assert (result.exit_code, result.stderr) == (
        2, "Error: the git revision is empty; name a branch, tag or commit, e.g. origin/main\n")


def _shallow_clone(tmp_path: Path) -> Path:
    """A depth-1 clone of a repository whose ``main`` and ``feature`` diverged after their first commit."""
    source = git_repo(tmp_path / "source")
    git(source, "checkout", "-q", "-b", "feature")
    edit(source / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    commit_all(source, "feature")
    git(source, "checkout", "-q", "main")
    edit(source / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    commit_all(source, "main moved on")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-single-branch", "--branch", "feature",
        (source / ".git").as_uri(), str(clone))
    return clone


def test_a_shallow_clone_without_the_merge_base_is_refused_with_the_fix(tmp_path: Path) -> None:
    clone = _shallow_clone(tmp_path)
    result = check_changed(clone, "origin/main")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        "Error: 'origin/main' and HEAD have no merge base in this shallow clone: its history stops before they meet; "
        "fetch the history: git fetch --unshallow (in GitHub Actions, actions/checkout with fetch-depth: 0), "
        "then run again\n"))


def test_a_shallow_clone_lacking_the_ref_says_so(tmp_path: Path) -> None:
    clone = _shallow_clone(tmp_path)
    result = check_changed(clone, "origin/release")
    assert (result.exit_code, result.stderr) == (2, (
        "Error: 'origin/release' names no commit in this repository; name a branch, tag or commit that exists here "
        "(git branch -a lists them), and in CI fetch it first, e.g. git fetch origin main; this clone is shallow, "
        "so it may lack 'origin/release': fetch the history: git fetch --unshallow (in GitHub Actions, "
        "actions/checkout with fetch-depth: 0)\n"))


def test_a_deep_enough_clone_works(tmp_path: Path) -> None:
    clone = _shallow_clone(tmp_path)
    git(clone, "fetch", "-q", "--unshallow")
    result = check_changed(clone, "origin/main")
    assert (result.exit_code, checked_files(result.stdout)) == (0, [DEEPSEEK])


def test_merge_base_of_tells_whether_the_ref_moved_on(repo: Path) -> None:
    first = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    commit_all(repo, "feature")
    assert merge_base_of(repo, "main") == (first, True)
    git(repo, "checkout", "-q", "main")
    edit(repo / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    commit_all(repo, "main moved on")
    assert merge_base_of(repo, "main", "feature") == (first, False)
    assert merge_base_of(repo, "feature", "main") == (first, False)
    assert merge_base_of(repo, "main") == (git(repo, "rev-parse", "main").strip(), True)


def test_unrelated_histories_are_refused(repo: Path) -> None:
    git(repo, "checkout", "-q", "--orphan", "other")
    commit_all(repo, "unrelated")
    result = check_changed(repo)
    assert (result.exit_code, result.stderr) == (2, (
        "Error: 'main' and HEAD share no history (they have no merge base); compare with a revision this branch "
        "grew from, e.g. origin/main\n"))


def test_a_head_without_a_commit_is_refused(repo: Path) -> None:
    git(repo, "checkout", "-q", "--orphan", "empty")
    result = check_changed(repo)
    assert (result.exit_code, result.stderr) == (
        2, "Error: HEAD has no commit yet; commit first, then compare with a revision\n")


def test_a_folder_outside_git_is_refused(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "plain")
    result = check_changed(root)
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {root} is not in a git repository; --changed-since, diff and regen --commit need one\n")


@pytest.mark.parametrize("args", [[], ["--changed-since", "HEAD"]])
def test_a_gate_never_imports_gitpython(repo: Path, args: Sequence[str]) -> None:
    # --changed-since runs git's read-only commands itself; GitPython is for regen --commit and diff.
    import subprocess
    import sys

    path = repo / "specs" / "llama" / "llama-3.1-8b.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    code = ("import sys; from click.testing import CliRunner; from pipeline.cli import main; "
            f"result = CliRunner().invoke(main, ['check', '--root', {str(repo)!r}, *{list(args)!r}]); "
            "print(result.exit_code, 'git' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "0 False\n"


@pytest.mark.parametrize("args", [["check", "--changed-since", "main"], ["diff", "main"], ["regen", "--commit"]])
def test_a_repository_git_refuses_is_refused_in_git_s_words(repo: Path, args: Sequence[str]) -> None:
    # GitPython opens it without asking git; git then refuses every command (as it does a repository not in
    # safe.directory): said once, exit 2, never a traceback nor "not in a git repository".
    git(repo, "config", "core.repositoryformatversion", "99")
    result = run(repo, *args)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"Error: git refuses the repository holding {repo}: Expected git repo version <= 1, found 99\n")


def test_a_bare_repository_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (bare / "specs").mkdir()
    shutil.copyfile(make_repo(tmp_path / "plain") / "specs" / "llama" / "llama-3.1-8b.yaml", bare / "specs" / "a.yaml")
    result = check_changed(bare)
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {bare} is in a bare git repository, which has no work tree to compare\n")


# ---- select_specs alone --------------------------------------------------------------------------------------------

FACTS: Dict[str, SpecFacts] = {
    "specs/a.yaml": SpecFacts("llama", False),
    "specs/b.yaml": SpecFacts("deepseek_v3", False),
    "specs/c.yaml": SpecFacts("qwen3_5_moe", True),
    "specs/d.yaml": SpecFacts(None, False),
}
UNTOLD = "op profiles changed and its arch cannot be told"


@pytest.mark.parametrize("files, expected, removed", [
    ((FileChange("modified", "specs/a.yaml"),), {"specs/a.yaml": "modified"}, ()),
    ((FileChange("added", "specs/a.yaml"),), {"specs/a.yaml": "added"}, ()),
    ((FileChange("renamed", "specs/a.yaml", "specs/old/a.yaml"),), {"specs/a.yaml": "renamed from specs/old/a.yaml"},
     ()),
    ((FileChange("deleted", "specs/gone.yaml"),), {}, ("specs/gone.yaml",)),
    ((FileChange("deleted", "docs/gone.yaml"),), {}, ()),
    ((FileChange("deleted", "specs/notes.txt"),), {}, ()),
    ((FileChange("modified", "op_profiles/deepseek_v3.yaml"),),
     {"specs/b.yaml": "op profile deepseek_v3 changed", "specs/d.yaml": UNTOLD},
     ()),
    ((FileChange("deleted", "op_profiles/llama.yaml"),),
     {"specs/a.yaml": "op profile llama changed", "specs/d.yaml": UNTOLD},
     ()),
    ((FileChange("renamed", "op_profiles/llama2.yaml", "op_profiles/llama.yaml"),),
     {"specs/a.yaml": "op profile llama changed", "specs/d.yaml": UNTOLD},
     ()),
    ((FileChange("modified", "op_profiles/vision.yaml"),),
     {"specs/c.yaml": "vision profile changed", "specs/d.yaml": UNTOLD},
     ()),
    ((FileChange("modified", "op_profiles/README.md"),), {}, ()),
    ((FileChange("modified", "op_profiles/old/llama.yaml"),), {}, ()),
    ((FileChange("modified", "schemas/op-profile.schema.json"), FileChange("modified", "specs/a.yaml")),
     {"specs/a.yaml": "modified", **{path: "schemas/op-profile.schema.json changed"
                                     for path in ("specs/b.yaml", "specs/c.yaml", "specs/d.yaml")}},
     ()),
    ((FileChange("added", "pipeline/new_rule.py"),),
     {path: "pipeline/new_rule.py changed" for path in FACTS}, ()),
])
def test_select_specs(files, expected: Dict[str, str], removed) -> None:
    asked = []

    def facts(path: str) -> SpecFacts:
        asked.append(path)
        return FACTS[path]

    # the rule folders of modelspec's own checkout
    selection = select_specs(Changes("main", "0" * 40, files), sorted(FACTS), facts, "op_profiles/",
                             rules=("pipeline/", "schemas/"))
    assert (dict(selection.reasons), selection.specs, selection.removed) == (expected, tuple(sorted(expected)),
                                                                            removed)


def test_a_spec_repository_s_own_pipeline_folder_is_no_rule() -> None:
    """A user's repository: modelspec is installed, so its pipeline/ and schemas/ are just files."""
    files = (FileChange("added", "pipeline/new_rule.py"), FileChange("modified", "schemas/op-profile.schema.json"))
    selection = select_specs(Changes("main", "0" * 40, files), sorted(FACTS), FACTS.__getitem__, "op_profiles/")
    assert selection.specs == ()
    pinned = select_specs(Changes("main", "0" * 40, ()), sorted(FACTS), FACTS.__getitem__, "op_profiles/",
                          rules_changed=".pre-commit-config.yaml pins modelspec anew")
    assert dict(pinned.reasons) == {path: ".pre-commit-config.yaml pins modelspec anew" for path in FACTS}


def test_the_rule_folders_are_the_running_modelspec_s_own() -> None:
    from pipeline.commands.git_options import rule_folders
    from pipeline.check.repo import SpecRepo

    assert rule_folders(SpecRepo(Path(__file__).resolve().parents[1])) == ["pipeline/", "schemas/"]
    assert rule_folders(SpecRepo(Path(__file__).resolve().parent / "data")) == []


def test_select_specs_reads_no_spec_when_no_profile_changed() -> None:
    def facts(path: str) -> SpecFacts:
        raise AssertionError(f"read {path}")

    selection = select_specs(Changes("main", "0" * 40, (FileChange("modified", "specs/a.yaml"),)), sorted(FACTS),
                             facts, "op_profiles/")
    assert selection.specs == ("specs/a.yaml",)


def test_bundled_profiles_are_not_a_repository_change() -> None:
    selection = select_specs(Changes("main", "0" * 40, (FileChange("modified", "op_profiles/llama.yaml"),)),
                             sorted(FACTS), FACTS.__getitem__, None)
    assert selection.specs == ()


@pytest.mark.parametrize("selection_args, expected", [
    ((("specs/a.yaml",), {"specs/a.yaml": "modified"}, (), 1),
     ["changed since main (merge base 0123456789ab): 1 of 1 spec (1 modified)"]),
    (((), {}, ("specs/x.yaml", "specs/y.yaml"), 2),
     ["changed since main (merge base 0123456789ab): 0 of 2 specs", "removed since main: specs/x.yaml (not checked)",
      "removed since main: specs/y.yaml (not checked)"]),
    ((("specs/a.yaml", "specs/b.yaml"), {"specs/a.yaml": "renamed from specs/z.yaml", "specs/b.yaml": "added"}, (), 5),
     ["changed since main (merge base 0123456789ab): 2 of 5 specs (1 added; 1 renamed)"]),
])
def test_selection_summary(selection_args, expected: Sequence[str]) -> None:
    from pipeline.catalogue.git import Selection

    specs, reasons, removed, candidates = selection_args
    selection = Selection("main", "0123456789abcdef" + "0" * 24, specs, reasons, removed, candidates)
    assert selection.summary() == expected


def test_changes_since_names_each_status(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    (repo / QWEN).unlink()
    (repo / "specs" / "new.yaml").write_text("name: new\n", encoding="utf-8")
    git(repo, "mv", LLAMA, "specs/llama/renamed.yaml")
    shutil.copy(repo / "op_profiles" / "llama.yaml", repo / "op_profiles" / "copy.yaml")
    changes = changes_since(repo, "main")
    assert changes.base == git(repo, "rev-parse", "main").strip()
    assert changes.files == (
        FileChange("added", "op_profiles/copy.yaml"),
        FileChange("modified", DEEPSEEK),
        FileChange("renamed", "specs/llama/renamed.yaml", LLAMA),
        FileChange("added", "specs/new.yaml"),
        FileChange("deleted", QWEN),
    )


# ---- every report states the run's scope ---------------------------------------------------------------------------


def test_a_clean_changed_only_run_states_its_scope_in_every_report(repo: Path) -> None:
    (repo / QWEN).unlink()
    base = git(repo, "merge-base", "main", "HEAD").strip()
    scope = f"changed since main (merge base {base[:12]}): 0 of 2 specs, 1 removed ({QWEN})"
    markdown = run(repo, "check", "--changed-since", "main", "--format", "markdown").stdout
    assert markdown == f"### ✅ modelspec check passed\n\nAll clean: {scope}; 0 files checked, no problems.\n"
    text = run(repo, "check", "--changed-since", "main").stdout
    assert text == f"{scope}; 0 files checked, no problems\n"
    document = json.loads(check_changed(repo).stdout)
    assert document["scope"] == {"changed_since": "main", "merge_base": base, "specs_checked": 0, "specs_total": 2,
                                 "removed": [QWEN]}
    sarif = json.loads(run(repo, "check", "--changed-since", "main", "--format", "sarif").stdout)
    assert sarif["runs"][0]["properties"]["scope"] == scope
    from junitparser import JUnitXml

    junit = JUnitXml.fromstring(run(repo, "check", "--changed-since", "main", "--format", "junit").stdout)
    assert [(suite.name, suite.tests, [(p.name, p.value) for p in suite.properties()]) for suite in junit] == [
        ("modelspec --changed-since", 0, [("scope", scope)])]


def test_a_run_without_changed_since_states_what_it_checked(repo: Path) -> None:
    document = json.loads(run(repo, "check", "--format", "json").stdout)
    assert document["scope"] == {"changed_since": None, "merge_base": None, "specs_checked": 3, "specs_total": 3,
                                 "removed": []}
