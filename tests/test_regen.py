"""``modelspec regen``: what it writes, keeps and removes, --check, --commit, the lock, safety, kills, determinism."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Set

import filelock
import pytest

from pipeline.catalogue.artifacts import render
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.catalogue.regen import Existing, apply_plan, plan, read_resolved, resolve_specs
from pipeline.check.repo import find_repo
from spec_repos import SPECS, commit_all, edit, git, git_repo, make_repo, modelspec_argv, run, tree

ARTIFACTS = ("deepseek-v3.json", "llama-3.1-8b.json", "qwen3.5-35b-a3b.json")
DEEPSEEK = "specs/deepseek/deepseek-v3.yaml"
LLAMA = "specs/llama/llama-3.1-8b.yaml"
QWEN = "specs/qwen/qwen3.5-35b-a3b.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The fixture repository, regenerated once."""
    root = make_repo(tmp_path / "repo")
    assert run(root, "regen").exit_code == 0
    return root


def index_of(root: Path) -> List[Dict]:
    """The entries of ``resolved/index.json``."""
    return json.loads((root / "resolved" / "index.json").read_text(encoding="utf-8"))["artifacts"]


def test_regen_writes_one_artifact_per_spec_and_the_index(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    result = run(root, "regen")
    assert (result.exit_code, result.stdout) == (0, (
        "wrote resolved/deepseek-v3.json\n"
        "wrote resolved/llama-3.1-8b.json\n"
        "wrote resolved/qwen3.5-35b-a3b.json\n"
        "wrote resolved/index.json\n"
        "regen: 4 files written, 0 removed, 0 unchanged in resolved/\n"))
    assert sorted(tree(root / "resolved")) == sorted([".regen.lock", *ARTIFACTS, "index.json"])
    assert [(entry["file"], entry["path"], entry["current"]) for entry in index_of(root)] == [
        ("deepseek-v3.json", DEEPSEEK, True), ("llama-3.1-8b.json", LLAMA, True), ("qwen3.5-35b-a3b.json", QWEN, True)]
    for entry in index_of(root):
        artifact = json.loads((root / "resolved" / entry["file"]).read_text(encoding="utf-8"))
        assert (artifact["name"], artifact["digest"]) == (entry["name"], entry["digest"])


def test_a_second_run_changes_nothing(repo: Path) -> None:
    before = {path: (repo / "resolved" / path).stat().st_mtime_ns for path in ARTIFACTS}
    result = run(repo, "regen")
    assert (result.exit_code, result.stdout) == (0, "regen: resolved/ is up to date (3 artifacts)\n")
    assert {path: (repo / "resolved" / path).stat().st_mtime_ns for path in ARTIFACTS} == before


def test_check_passes_on_a_fresh_tree(repo: Path) -> None:
    result = run(repo, "regen", "--check")
    assert (result.exit_code, result.stdout) == (0, "resolved/ is up to date (3 artifacts and the index)\n")


def test_check_names_the_artifact_of_a_changed_spec_and_writes_nothing(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    before = tree(repo / "resolved")
    result = run(repo, "regen", "--check")
    assert (result.exit_code, result.stdout) == (1, (
        "resolved/deepseek-v3.json:1:1: error [regen.stale] resolved/deepseek-v3.json is out of date "
        "(from specs/deepseek/deepseek-v3.yaml); run modelspec regen\n"
        "resolved/index.json:1:1: error [regen.stale] resolved/index.json is out of date; run modelspec regen\n"
        "resolved/ is out of date (2 stale); run modelspec regen\n"))
    assert tree(repo / "resolved") == before


def test_check_names_missing_and_orphaned_artifacts(repo: Path) -> None:
    (repo / "resolved" / "llama-3.1-8b.json").unlink()
    edit(repo / QWEN, "name: qwen3.5-35b-a3b", "name: qwen3.5-35b-a3b-instruct")
    result = run(repo, "regen", "--check")
    assert (result.exit_code, result.stdout) == (1, (
        "resolved/index.json:1:1: error [regen.stale] resolved/index.json is out of date; run modelspec regen\n"
        "resolved/llama-3.1-8b.json:1:1: error [regen.missing] resolved/llama-3.1-8b.json is missing "
        "(from specs/llama/llama-3.1-8b.yaml); run modelspec regen\n"
        "resolved/qwen3.5-35b-a3b-instruct.json:1:1: error [regen.missing] resolved/qwen3.5-35b-a3b-instruct.json "
        "is missing (from specs/qwen/qwen3.5-35b-a3b.yaml); run modelspec regen\n"
        "resolved/qwen3.5-35b-a3b.json:1:1: error [regen.orphaned] resolved/qwen3.5-35b-a3b.json is orphaned: its "
        "spec specs/qwen/qwen3.5-35b-a3b.yaml now has the name 'qwen3.5-35b-a3b-instruct' "
        "(resolved/qwen3.5-35b-a3b-instruct.json); run modelspec regen to remove it\n"
        "resolved/ is out of date (2 missing, 1 orphaned, 1 stale); run modelspec regen\n"))


def test_check_on_a_repository_never_regenerated(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    result = run(root, "regen", "--check")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "resolved/ is out of date (4 missing); run modelspec regen"
    assert not (root / "resolved").exists()


def test_a_deleted_spec_removes_its_artifact(repo: Path) -> None:
    (repo / LLAMA).unlink()
    result = run(repo, "regen")
    assert (result.exit_code, result.stdout) == (0, (
        "wrote resolved/index.json\n"
        "removed resolved/llama-3.1-8b.json (its spec specs/llama/llama-3.1-8b.yaml is gone)\n"
        "regen: 1 file written, 1 removed, 2 unchanged in resolved/\n"))
    assert sorted(tree(repo / "resolved")) == [".regen.lock", "deepseek-v3.json", "index.json",
                                                "qwen3.5-35b-a3b.json"]


def test_a_renamed_model_replaces_its_artifact(repo: Path) -> None:
    edit(repo / LLAMA, "name: llama-3.1-8b", "name: llama-3.1-8b-instruct")
    result = run(repo, "regen")
    assert result.stdout == ("wrote resolved/llama-3.1-8b-instruct.json\n"
                             "wrote resolved/index.json\n"
                             "removed resolved/llama-3.1-8b.json (its spec specs/llama/llama-3.1-8b.yaml now has the "
                             "name 'llama-3.1-8b-instruct' (resolved/llama-3.1-8b-instruct.json))\n"
                             "regen: 2 files written, 1 removed, 2 unchanged in resolved/\n")


def test_a_moved_spec_file_rewrites_its_artifact_with_the_new_path(repo: Path) -> None:
    (repo / "specs" / "meta").mkdir()
    (repo / LLAMA).rename(repo / "specs" / "meta" / "llama-3.1-8b.yaml")
    result = run(repo, "regen")
    assert result.stdout == ("wrote resolved/llama-3.1-8b.json\nwrote resolved/index.json\n"
                             "regen: 2 files written, 0 removed, 2 unchanged in resolved/\n")
    assert [entry["path"] for entry in index_of(repo)] == [DEEPSEEK, "specs/meta/llama-3.1-8b.yaml", QWEN]


def test_a_failing_spec_keeps_its_artifact_and_stays_in_the_index(repo: Path) -> None:
    old = (repo / "resolved" / "deepseek-v3.json").read_bytes()
    edit(repo / DEEPSEEK, "num_experts_per_tok: 8", "num_experts_per_tok: 512")
    result = run(repo, "regen")
    assert (result.exit_code, result.stdout) == (1, (
        "wrote resolved/index.json\n"
        "specs/deepseek/deepseek-v3.yaml:12:22: error [regen.spec-fails] fails modelspec check (1 error, the first "
        "[spec.experts-per-tok-above] at line 12); its artifact resolved/deepseek-v3.json is kept from an earlier "
        "run; run modelspec check specs/deepseek/deepseek-v3.yaml\n"
        "regen: 1 file written, 0 removed, 3 unchanged in resolved/; 1 problem above that regen cannot fix: each "
        "line says what to do\n"))
    assert (repo / "resolved" / "deepseek-v3.json").read_bytes() == old
    assert [(entry["file"], entry["current"]) for entry in index_of(repo)] == [
        ("deepseek-v3.json", False), ("llama-3.1-8b.json", True), ("qwen3.5-35b-a3b.json", True)]
    check = run(repo, "regen", "--check")
    # resolved/ is what regen leaves; what is left to do is the spec's fix, which regen cannot make.
    assert (check.exit_code, check.stdout.splitlines()[-1]) == (
        1, "1 problem modelspec regen cannot fix (1 spec-fails): fix what each line above says, then run "
           "modelspec regen")


def test_a_failing_spec_without_an_artifact_is_reported(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "specs" / "broken.yaml").write_text("name: broken\nhidden_size: 12\n", encoding="utf-8")
    result = run(root, "regen")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-2:] == [
        "specs/broken.yaml:1:1: error [regen.spec-fails] fails modelspec check (3 errors, the first "
        "[schema.required] at line 1); it has no artifact; run modelspec check specs/broken.yaml",
        "regen: 4 files written, 0 removed, 0 unchanged in resolved/; 1 problem above that regen cannot fix: each "
        "line says what to do"]
    assert "broken.json" not in tree(root / "resolved")


def test_a_spec_whose_stack_does_not_resolve_is_reported(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    edit(root / LLAMA, "name: llama-3.1-8b", "name: my-model")
    result = run(root, "regen")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-2].startswith(
        "specs/llama/llama-3.1-8b.yaml:2:7: error [regen.no-stack] its layer stack does not resolve ([stack.no-arch] "
        "no arch is stated and no op profile's match pattern fits the name 'my-model'")
    assert result.stdout.splitlines()[-2].endswith("; it has no artifact")


@pytest.mark.parametrize("name", ["../../x", "../x", "a/b", ".hidden", "index", "x y", "/etc/passwd", "..",
                                  "resolved/../../x"])
def test_an_unsafe_name_is_refused_and_nothing_is_written_outside_resolved(tmp_path: Path, name: str) -> None:
    root = make_repo(tmp_path / "work" / "repo")
    edit(root / DEEPSEEK, "name: deepseek-v3", f"name: {json.dumps(name)}")
    outside = ("/resolved/", "/.modelspec_cache/")  # the cache is regen's own too
    before = {path: data for path, data in tree(tmp_path).items() if not any(part in path for part in outside)}
    result = run(root, "regen")
    assert result.exit_code == 1
    # check refuses the name first (the schema's pattern), so regen keeps the spec out as failing
    code = "schema.enum" if name == "index" else "schema.pattern"
    assert (f"specs/deepseek/deepseek-v3.yaml:2:7: error [regen.spec-fails] fails modelspec check (1 error, the "
            f"first [{code}] at line 2)") in result.stdout
    assert {path: data for path, data in tree(tmp_path).items() if not any(part in path for part in outside)} \
        == before
    assert sorted(tree(root / "resolved")) == [".regen.lock", "index.json", "llama-3.1-8b.json",
                                               "qwen3.5-35b-a3b.json"]


@pytest.mark.parametrize("other_name", ["llama-3.1-8b", "LLAMA-3.1-8B"])
def test_two_specs_with_one_name_are_both_refused(tmp_path: Path, other_name: str) -> None:
    root = make_repo(tmp_path / "repo")
    text = (root / LLAMA).read_text(encoding="utf-8").replace("name: llama-3.1-8b", f"name: {other_name}")
    (root / "specs" / "llama" / "copy.yaml").write_text(text, encoding="utf-8")
    result = run(root, "regen")
    assert result.exit_code == 1
    assert [line for line in result.stdout.splitlines() if "duplicate-name" in line] == [
        f"specs/llama/copy.yaml:2:7: error [regen.duplicate-name] name {other_name!r} is also the name of "
        "specs/llama/llama-3.1-8b.yaml; one artifact file cannot serve two specs, so neither is written: give each "
        "model its own name",
        "specs/llama/llama-3.1-8b.yaml:2:7: error [regen.duplicate-name] name 'llama-3.1-8b' is also the name of "
        "specs/llama/copy.yaml; one artifact file cannot serve two specs, so neither is written: give each model "
        "its own name"]
    assert sorted(tree(root / "resolved")) == [".regen.lock", "deepseek-v3.json", "index.json",
                                                "qwen3.5-35b-a3b.json"]


def test_a_new_spec_cannot_take_the_name_of_a_kept_artifact(repo: Path) -> None:
    edit(repo / LLAMA, "num_key_value_heads: 8", "num_key_value_heads: 7")
    copy = repo / "specs" / "copy.yaml"
    copy.write_text((repo / DEEPSEEK).read_text(encoding="utf-8").replace("deepseek-v3", "llama-3.1-8b"),
                    encoding="utf-8")
    result = run(repo, "regen")
    assert result.exit_code == 1
    assert "specs/copy.yaml:2:7: error [regen.duplicate-name] name 'llama-3.1-8b' is the name of " \
           "specs/llama/llama-3.1-8b.yaml's artifact resolved/llama-3.1-8b.json; give each model its own name" \
        in result.stdout.splitlines()
    assert json.loads((repo / "resolved" / "llama-3.1-8b.json").read_text())["path"] == LLAMA


def test_a_file_regen_did_not_write_is_never_overwritten_or_removed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "resolved").mkdir()
    (root / "resolved" / "llama-3.1-8b.json").write_text('{"hand": "written"}\n', encoding="utf-8")
    (root / "resolved" / "notes.json").write_text('{"generator": "a person"}\n', encoding="utf-8")
    (root / "resolved" / "README.md").write_text("artifacts\n", encoding="utf-8")
    result = run(root, "regen")
    assert result.exit_code == 1
    assert ("resolved/llama-3.1-8b.json:1:1: error [regen.not-generated] resolved/llama-3.1-8b.json was not written "
            "by modelspec regen, so the artifact of specs/llama/llama-3.1-8b.yaml is not written over it; move that "
            "file out of resolved/ or rename the model") in result.stdout.splitlines()
    files = tree(root / "resolved")
    assert (files["llama-3.1-8b.json"], files["notes.json"], files["README.md"]) == (
        b'{"hand": "written"}\n', b'{"generator": "a person"}\n', b"artifacts\n")


@pytest.mark.parametrize("file, text, why", [
    # A copy of an artifact under another name: its spec is there, and it is no artifact of regen's.
    ("llama-backup.json", None, "its name 'llama-3.1-8b' is not its file name (that would be llama-3.1-8b.json)"),
    ("mine.json", '{"generator": "modelspec regen"}\n', "it states no format_version"),
    ("mine.json", '{"generator": "modelspec regen", "format_version": 4, "name": "mine"}\n',
     "it is not an artifact of format 4 ('path' is a required property at /)"),
    # of an earlier format, only the members every format has are asked for
    ("mine.json", '{"generator": "modelspec regen", "format_version": 2, "name": "mine"}\n',
     "it lacks the name, path or digest every artifact has"),
], ids=["copy", "mark-only", "mark-and-name", "earlier-format-mark-and-name"])
def test_a_file_that_only_looks_generated_is_left_alone_and_fails_the_check(repo: Path, file: str, text,
                                                                             why: str) -> None:
    copy = repo / "resolved" / file
    copy.write_text(text or (repo / "resolved" / "llama-3.1-8b.json").read_text(encoding="utf-8"), encoding="utf-8")
    before = copy.read_bytes()
    warning = (f"resolved/{file}:1:1: warning [regen.looks-generated] resolved/{file} carries the mark of modelspec "
               f"regen but is not an artifact it wrote: {why}; regen neither overwrites nor removes it, but a reader "
               "of resolved/ could take it for one: delete it or move it out of resolved/")
    stray = (f"resolved/{file}:1:1: error [regen.stray] resolved/{file} is not an artifact regen writes ({why}); "
             "anything reading resolved/ could take it for one: delete it, or move it out of resolved/")
    check = run(repo, "regen", "--check")  # regen leaves it, but the check fails on it: it is no artifact
    assert (check.exit_code, check.stdout) == (1, (
        f"{warning}\n{stray}\n1 problem modelspec regen cannot fix (1 stray): fix what each line above says, then run "
        "modelspec regen\n"))
    (repo / LLAMA).unlink()
    result = run(repo, "regen")
    assert (result.exit_code, result.stdout) == (0, (
        "wrote resolved/index.json\n"
        "removed resolved/llama-3.1-8b.json (its spec specs/llama/llama-3.1-8b.yaml is gone)\n"
        f"{warning}\n"
        "regen: 1 file written, 1 removed, 2 unchanged in resolved/; 1 warning above\n"))
    assert copy.read_bytes() == before


def test_an_artifact_of_an_earlier_format_is_replaced_and_an_orphan_of_one_removed(repo: Path) -> None:
    old = {"format_version": 1, "generator": "modelspec regen", "name": "llama-3.1-8b", "path": LLAMA,
           "digest": "sha256:" + "0" * 64, "widths": {"routed_expert_width": 14336}}
    (repo / "resolved" / "llama-3.1-8b.json").write_text(render(old), encoding="utf-8")
    (repo / "resolved" / "gone.json").write_text(render({**old, "name": "gone", "path": "specs/gone.yaml"}),
                                                 encoding="utf-8")
    result = run(repo, "regen")
    assert (result.exit_code, result.stdout) == (0, (
        "wrote resolved/llama-3.1-8b.json\n"
        "removed resolved/gone.json (its spec specs/gone.yaml is gone)\n"
        "regen: 1 file written, 1 removed, 3 unchanged in resolved/\n"))
    assert json.loads((repo / "resolved" / "llama-3.1-8b.json").read_text())["format_version"] == 4


def test_an_index_regen_did_not_write_is_not_written_over(repo: Path) -> None:
    (repo / "resolved" / "index.json").write_text('{"mine": true}\n', encoding="utf-8")
    message = ("resolved/index.json:1:1: error [regen.not-generated] resolved/index.json was not written by modelspec "
               "regen, so the index of the artifacts is not written over it; move that file out of resolved/")
    result = run(repo, "regen")
    assert (result.exit_code, result.stdout) == (1, (
        f"{message}\nregen: resolved/ is up to date (3 artifacts); 1 problem above that regen cannot fix: each line "
        "says what to do\n"))
    assert (repo / "resolved" / "index.json").read_text(encoding="utf-8") == '{"mine": true}\n'
    check = run(repo, "regen", "--check")
    assert (check.exit_code, check.stdout) == (1, (
        f"{message}\n1 problem modelspec regen cannot fix (1 not-generated): fix what each line above says, then "
        "run modelspec regen\n"))


def test_check_tells_drift_from_what_regen_cannot_fix(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    edit(repo / QWEN, "name: qwen3.5-35b-a3b", "name: llama-3.1-8b")
    result = run(repo, "regen", "--check")
    assert (result.exit_code, result.stdout.splitlines()[-2:]) == (1, [
        "resolved/ is out of date (2 stale); run modelspec regen",
        "2 problems modelspec regen cannot fix (2 duplicate-name): fix what each line above says, then run "
        "modelspec regen"])


def test_leftover_temporary_files_are_removed(repo: Path) -> None:
    (repo / "resolved" / ".deepseek-v3.json.abc123.tmp").write_text('{"half', encoding="utf-8")
    assert run(repo, "regen").exit_code == 0
    assert sorted(tree(repo / "resolved")) == sorted([".regen.lock", *ARTIFACTS, "index.json"])


def test_a_second_run_waits_for_the_lock_then_fails_clearly(repo: Path) -> None:
    with filelock.FileLock(str(repo / "resolved" / ".regen.lock")):
        result = run(repo, "regen", "--wait", "0")
    assert (result.exit_code, result.stderr) == (2, (
        f"Error: another modelspec regen holds {repo / 'resolved' / '.regen.lock'} and did not finish within 0 s; "
        "wait for it to finish, or give it longer with --wait SECONDS\n"))
    assert run(repo, "regen", "--wait", "0").exit_code == 0


def test_a_second_run_waits_while_the_lock_is_held(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    before = tree(repo / "resolved")
    lock = filelock.FileLock(str(repo / "resolved" / ".regen.lock"))
    with lock:
        process = subprocess.Popen(modelspec_argv("regen", "--root", str(repo), "--wait", "60"),
                                   stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        assert (process.poll(), tree(repo / "resolved")) == (None, before)
    stdout, _ = process.communicate(timeout=60)
    assert (process.returncode, stdout.splitlines()[0]) == (0, "wrote resolved/deepseek-v3.json")


def test_check_waits_for_a_running_regen_and_reads_what_it_leaves(repo: Path) -> None:
    edit(repo / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    stale = tree(repo / "resolved")
    lock = filelock.FileLock(str(repo / "resolved" / ".regen.lock"))
    with lock:
        process = subprocess.Popen(modelspec_argv("regen", "--root", str(repo), "--check", "--wait", "60"),
                                   stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        assert process.poll() is None
        # What a regen holding the lock would do: every file of the plan, then release.
        spec_repo = find_repo(repo)
        files = sorted((repo / "specs").rglob("*.yaml"))
        existing = read_resolved(repo / "resolved")
        target = plan(resolve_specs(spec_repo, files, load_op_profiles(spec_repo.profiles)),
                      [spec_repo.display(path) for path in files], existing)
        apply_plan(target, repo / "resolved", existing)
    stdout, _ = process.communicate(timeout=60)
    assert (process.returncode, stdout) == (0, "resolved/ is up to date (3 artifacts and the index)\n")
    assert tree(repo / "resolved") != stale


def test_check_gives_up_on_a_lock_held_past_wait(repo: Path) -> None:
    with filelock.FileLock(str(repo / "resolved" / ".regen.lock")):
        result = run(repo, "regen", "--check", "--wait", "0")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", (
        f"Error: another modelspec regen holds {repo / 'resolved' / '.regen.lock'} and did not finish within 0 s; "
        "wait for it to finish, or give it longer with --wait SECONDS\n"))


def test_a_symlinked_resolved_folder_is_refused(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    (root / "resolved").symlink_to(tmp_path / "elsewhere")
    result = run(root, "regen")
    assert (result.exit_code, result.stderr) == (2, (
        f"Error: {root / 'resolved'} is a symbolic link; regen writes only into a real folder, so replace the link "
        "with a folder\n"))
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_repository_without_specs_is_a_usage_error(tmp_path: Path) -> None:
    result = run(tmp_path, "regen")
    assert result.exit_code == 2
    assert f"{tmp_path / 'specs'} is not a folder; regen resolves the specs under specs/" in result.stderr


def test_commit_outside_git_is_refused(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "plain")
    result = run(root, "regen", "--commit")
    assert (result.exit_code, result.stderr) == (
        2, f"Error: {root} is not in a git repository; --changed-since, diff and regen --commit need one\n")
    assert not (root / "resolved").exists()


def test_check_and_commit_are_exclusive(repo: Path) -> None:
    result = run(repo, "regen", "--check", "--commit")
    assert result.exit_code == 2
    assert "--check writes nothing, so it cannot --commit; use one of them" in result.stderr


def test_plan_keeps_the_current_flag_of_specs_not_resolved_this_run() -> None:
    kept = {"path": "specs/a.yaml", "name": "a", "digest": "sha256:" + "0" * 64, "generator": "modelspec regen"}
    index = {"generator": "modelspec regen", "artifacts": [{"file": "a.json", "current": False}]}
    existing = {"a.json": Existing("a.json", render(kept), kept),
                "index.json": Existing("index.json", render(index), index)}
    target = plan([], ["specs/a.yaml"], existing)
    assert json.loads(target.files["index.json"])["artifacts"] == [
        {"name": "a", "file": "a.json", "path": "specs/a.yaml", "digest": "sha256:" + "0" * 64, "current": False}]
    assert (target.files["a.json"], target.orphans, target.problems) == (render(kept), {}, ())


OLD_ARTIFACT = {"format_version": 1, "generator": "modelspec regen", "name": "a", "path": "specs/a.yaml",
                "digest": "sha256:" + "0" * 64}


def test_read_resolved_ignores_hidden_files_and_other_suffixes_and_keeps_links_as_foreign(tmp_path: Path) -> None:
    folder = tmp_path / "resolved"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(OLD_ARTIFACT), encoding="utf-8")
    (folder / "b.json").write_bytes(b"\xff\xfe")
    (folder / "c.json").write_text("{not json", encoding="utf-8")
    (folder / ".d.json").write_text("{}", encoding="utf-8")
    (folder / "e.txt").write_text("{}", encoding="utf-8")
    (folder / "f.json").symlink_to(folder / "a.json")
    (folder / "g.json").write_text(json.dumps({**OLD_ARTIFACT, "name": "g"}), encoding="utf-8")
    (folder / "h.json").write_text(json.dumps(OLD_ARTIFACT), encoding="utf-8")
    found = read_resolved(folder)
    assert [(item.file, item.spec_path, item.text is None, item.imitation, item.not_a_file)
            for item in found.values()] == [
        ("a.json", "specs/a.yaml", False, None, None), ("b.json", None, True, None, None),
        ("c.json", None, False, None, None), ("f.json", None, True, None, "a symbolic link"),
        ("g.json", "specs/a.yaml", False, None, None),
        ("h.json", None, False, "its name 'a' is not its file name (that would be a.json)", None)]


# ---- --changed-since and --commit, in real git repositories -------------------------------------------------------


def test_changed_since_regenerates_only_what_changed_and_orphans_a_deleted_spec(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "repo")
    assert run(root, "regen").exit_code == 0
    commit_all(root, "artifacts")
    edit(root / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    git(root, "rm", "-q", LLAMA)
    result = run(root, "regen", "--changed-since", "main")
    base = git(root, "rev-parse", "main").strip()
    assert (result.exit_code, result.stderr, result.stdout) == (0, (
        f"changed since main (merge base {base[:12]}): 1 of 2 specs (1 modified)\n"
        "removed since main: specs/llama/llama-3.1-8b.yaml (not checked)\n"), (
        "wrote resolved/deepseek-v3.json\n"
        "wrote resolved/index.json\n"
        "removed resolved/llama-3.1-8b.json (its spec specs/llama/llama-3.1-8b.yaml is gone)\n"
        "regen: 2 files written, 1 removed, 1 unchanged in resolved/\n"))
    assert run(root, "regen", "--check").exit_code == 0


def test_commit_commits_only_resolved_with_a_message_of_what_changed(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "repo")
    assert run(root, "regen", "--commit").exit_code == 0
    edit(root / DEEPSEEK, "num_hidden_layers: 61", "num_hidden_layers: 60")
    edit(root / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    (root / LLAMA).unlink()
    commit_all(root, "specs")
    (root / "untracked.txt").write_text("left alone\n", encoding="utf-8")
    result = run(root, "regen", "--commit")
    head = git(root, "rev-parse", "HEAD").strip()
    assert (result.exit_code, result.stdout.splitlines()[-1]) == (
        0, f"committed {head[:12]}: resolved: regenerate artifacts (1 updated, 1 removed)")
    assert git(root, "log", "-1", "--format=%B") == (
        "resolved: regenerate artifacts (1 updated, 1 removed)\n\n"
        "updated resolved/deepseek-v3.json\n"
        "updated resolved/index.json\n"
        "removed resolved/llama-3.1-8b.json\n\n"
        "removed llama-3.1-8b: llama, 32 layers\n"
        "deepseek-v3: moe 58 -> 57; MTP 1 -> 2; num_hidden_layers 61 -> 60; mtp_depth 1 -> 2\n\n")
    assert git(root, "show", "--name-status", "--format=", "HEAD") == (
        "M\tresolved/deepseek-v3.json\nM\tresolved/index.json\nD\tresolved/llama-3.1-8b.json\n")
    assert git(root, "status", "--porcelain") == "?? untracked.txt\n"


def _format_1(document: Dict[str, Any]) -> Dict[str, Any]:
    """*document* as format 1 wrote it: no spec facts, no parameters or weights, a dense model's expert widths set."""
    return {**{key: value for key, value in _format_2(document).items() if key != "spec"}, "format_version": 1,
            "widths": {**document["widths"], "routed_expert_width": 14336, "shared_expert_width": 0}}


def _format_2(document: Dict[str, Any]) -> Dict[str, Any]:
    """*document* as format 2 wrote it: no parameters, no weights, of the model or of any kind."""
    return {**{key: value for key, value in document.items() if key not in ("parameters", "weights")},
            "format_version": 2,
            "kinds": {name: {key: value for key, value in kind.items() if key != "weights"}
                      for name, kind in document["kinds"].items()}}


@pytest.mark.parametrize("version, earlier", [(1, _format_1), (2, _format_2)], ids=["format-1", "format-2"])
def test_the_commit_that_upgrades_the_format_says_so(tmp_path: Path, version: int,
                                                     earlier: Callable[[Dict[str, Any]], Dict[str, Any]]) -> None:
    root = git_repo(tmp_path / "repo")
    assert run(root, "regen", "--commit").exit_code == 0
    path = root / "resolved" / "llama-3.1-8b.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(render(earlier(document)), encoding="utf-8")
    commit_all(root, f"an artifact of format {version}")
    result = run(root, "regen", "--commit")
    assert (result.exit_code, git(root, "log", "-1", "--format=%B")) == (0, (
        "resolved: regenerate artifacts (1 updated)\n\n"
        "updated resolved/llama-3.1-8b.json\n\n"
        f"llama-3.1-8b: format_version {version} -> 4\n\n"))
    assert json.loads(path.read_text(encoding="utf-8")) == document


def test_the_first_commit_adds_every_artifact(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "repo")
    result = run(root, "regen", "--commit")
    assert result.exit_code == 0
    assert git(root, "log", "-1", "--format=%B").splitlines()[:7] == [
        "resolved: regenerate artifacts (3 added)", "",
        "added resolved/deepseek-v3.json", "added resolved/index.json", "added resolved/llama-3.1-8b.json",
        "added resolved/qwen3.5-35b-a3b.json", ""]


def test_commit_makes_no_commit_when_nothing_changed(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "repo")
    assert run(root, "regen", "--commit").exit_code == 0
    head = git(root, "rev-parse", "HEAD")
    result = run(root, "regen", "--commit")
    assert (result.exit_code, result.stdout) == (0, (
        "regen: resolved/ is up to date (3 artifacts)\n"
        "regen --commit: nothing to commit, resolved/ matches HEAD\n"))
    assert git(root, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("stage_it", [False, True], ids=["unstaged", "staged"])
def test_commit_refuses_when_other_files_are_modified(tmp_path: Path, stage_it: bool) -> None:
    root = git_repo(tmp_path / "repo")
    edit(root / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    if stage_it:
        git(root, "add", DEEPSEEK)
    head = git(root, "rev-parse", "HEAD")
    result = run(root, "regen", "--commit")
    assert (result.exit_code, result.stderr) == (2, (
        "Error: regen --commit refused, nothing was written: --commit commits resolved/ alone, but other files are "
        "modified: specs/deepseek/deepseek-v3.yaml; commit or stash them first\n"))
    assert (git(root, "rev-parse", "HEAD"), (root / "resolved").exists()) == (head, False)


# ---- killed at random moments ---------------------------------------------------------------------------------------

VARIANTS = 40


def _write_variants(root: Path, layers_offset: int) -> None:
    """Write the Llama variants: *layers_offset* switches between two versions of every spec, and one's name."""
    text = (root / LLAMA).read_text(encoding="utf-8")
    for number in range(VARIANTS):
        name = f"llama-3.1-8b-v{number}" if number or not layers_offset else "llama-3.1-8b-renamed"
        (root / "specs" / "llama" / f"v{number}.yaml").write_text(
            text.replace("name: llama-3.1-8b", f"name: {name}").replace(
                "num_hidden_layers: 32", f"num_hidden_layers: {number + 1 + layers_offset}"), encoding="utf-8")


def _regen_tree(root: Path) -> Dict[str, bytes]:
    """The artifacts a completed regen writes for the specs as they are (the lock file left out)."""
    subprocess.run(modelspec_argv("regen", "--root", str(root)), check=True, capture_output=True)
    return {path: data for path, data in tree(root / "resolved").items() if not path.startswith(".")}


def test_regen_killed_at_random_moments_leaves_every_file_old_or_new(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    _write_variants(root, 0)
    old = _regen_tree(root)
    _write_variants(root, 1)
    new = _regen_tree(root)
    _write_variants(root, 0)
    assert _regen_tree(root) == old
    allowed: Dict[str, Set[bytes]] = {}
    for version in (old, new):
        for path, data in version.items():
            allowed.setdefault(path, set()).add(data)
    chance = random.Random(20250101)
    state = 0
    for run_number in range(16):
        state = 1 - state
        _write_variants(root, state)
        process = subprocess.Popen(modelspec_argv("regen", "--root", str(root)), stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL)
        if run_number % 2:
            # Half the runs die at any moment: importing, checking, holding the lock.
            time.sleep(chance.uniform(0, 0.5))
        else:
            # The others die while writing: after the first file is written.
            process.stdout.readline()
            time.sleep(chance.uniform(0, 0.02))
        process.send_signal(signal.SIGKILL)
        process.communicate()
        for path, data in tree(root / "resolved").items():
            if path == ".regen.lock" or (path.startswith(".") and path.endswith(".tmp")):
                continue  # the lock, or a temporary file a killed run was writing (the next run removes it)
            assert data in allowed[path], f"{path} is neither its old nor its new content after run {run_number}"
            json.loads(data)
    assert _regen_tree(root) == (new if state else old)
    assert [path for path in tree(root / "resolved") if path.endswith(".tmp")] == []


def test_two_runs_with_different_hash_seeds_and_file_orders_are_byte_identical(tmp_path: Path) -> None:
    trees = []
    for seed, order in (("1", sorted), ("4242", lambda paths: sorted(paths, reverse=True))):
        root = tmp_path / f"repo-{seed}"
        make_repo(root)
        texts = {path: (root / path).read_bytes() for path in SPECS}
        for path in SPECS:
            (root / path).unlink()
        for path in order(SPECS):
            (root / path).write_bytes(texts[path])
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(modelspec_argv("regen", "--root", str(root)), check=True, capture_output=True, env=env)
        trees.append({path: data for path, data in tree(root / "resolved").items() if path != ".regen.lock"})
    assert trees[0] == trees[1]
    assert sorted(trees[0]) == sorted([*ARTIFACTS, "index.json"])


@pytest.mark.parametrize("file, text, why", [
    ("x.json", '{"name": "x", "widths": {"hidden_size": 771}}\n', "it carries no generator mark, or is not JSON"),
    ("notes.json", "not json\n", "it carries no generator mark, or is not JSON"),
    ("llama-3.1-8b-copy.json", None, "its name 'llama-3.1-8b' is not its file name (that would be llama-3.1-8b.json)"),
], ids=["invented-widths", "not-json", "wrong-name"])
def test_regen_check_fails_on_any_file_in_resolved_it_would_not_write(repo: Path, file: str, text, why: str) -> None:
    # The red team's made-up artifact: regen --check exited 0 and the PR comment said no stack changed.
    (repo / "resolved" / file).write_text(text or (repo / "resolved" / "llama-3.1-8b.json").read_text(
        encoding="utf-8"), encoding="utf-8")
    check = run(repo, "regen", "--check")
    assert check.exit_code == 1
    assert (f"resolved/{file}:1:1: error [regen.stray] resolved/{file} is not an artifact regen writes ({why}); "
            "anything reading resolved/ could take it for one: delete it, or move it out of resolved/"
            ) in check.stdout.splitlines()


def test_invented_content_under_an_artifacts_own_name_fails_the_check(repo: Path) -> None:
    artifact = repo / "resolved" / "llama-3.1-8b.json"
    document = json.loads(artifact.read_text(encoding="utf-8"))
    document["widths"]["attention_width"] = 771
    artifact.write_text(render(document), encoding="utf-8")
    check = run(repo, "regen", "--check")
    assert check.exit_code == 1
    assert check.stdout.splitlines()[0] == ("resolved/llama-3.1-8b.json:1:1: error [regen.stale] resolved/"
                                            "llama-3.1-8b.json is out of date (from specs/llama/llama-3.1-8b.yaml); "
                                            "run modelspec regen")
