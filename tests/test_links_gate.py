"""Links in a pull request's specs (issue 25, item 5): ``--changed-since`` maps a changed link target back to its
spec, whatever the target is named, and ``diff`` follows links at a revision as ``check`` follows them on disk."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.catalogue.git import files_at
from tests.spec_repos import commit_all, edit, git, make_repo, run

DEEPSEEK = "specs/deepseek/deepseek-v3.yaml"
LLAMA = "specs/llama/llama-3.1-8b.yaml"


def _linked(tmp_path: Path, target: str) -> Path:
    """The fixture in git with DeepSeek's spec moved to *target* (root-relative) and a link left in its place."""
    root = make_repo(tmp_path / "repo")
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    (root / DEEPSEEK).rename(root / target)
    (root / DEEPSEEK).symlink_to(Path("..", "..", target))
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "deepseek's spec through a link")
    return root


def test_a_change_to_a_link_target_not_named_like_a_spec_selects_the_spec(tmp_path: Path) -> None:
    # the attack: only the link's target changes, and it is not named *.yaml, so no changed path was a spec's
    root = _linked(tmp_path, "vendor/deepseek-v3.spec")
    edit(root / "vendor" / "deepseek-v3.spec", "mtp_depth: 1", "mtp_depth: 2")
    result = run(root, "check", "--changed-since", "main", "--format", "json")
    assert [item["file"] for item in json.loads(result.stdout)["files"]] == [DEEPSEEK]
    base = git(root, "rev-parse", "main").strip()[:12]
    assert result.stderr == f"changed since main (merge base {base}): 1 of 3 specs (1 modified)\n"


def test_a_link_target_named_like_a_spec_outside_the_catalogue_selects_the_spec(tmp_path: Path) -> None:
    root = _linked(tmp_path, "vendor/deepseek-v3.yaml")
    edit(root / "vendor" / "deepseek-v3.yaml", "mtp_depth: 1", "mtp_depth: 2")
    result = run(root, "check", "--changed-since", "main", "--format", "json")
    assert [item["file"] for item in json.loads(result.stdout)["files"]] == [DEEPSEEK]


def test_diff_follows_a_spec_that_is_a_link(tmp_path: Path) -> None:
    root = _linked(tmp_path, "vendor/deepseek-v3.spec")
    assert DEEPSEEK in files_at(root, "HEAD", ["specs"])
    edit(root / "vendor" / "deepseek-v3.spec", "mtp_depth: 1", "mtp_depth: 2")
    commit_all(root, "two MTP layers, through the link")
    result = run(root, "diff", "main~1", "HEAD")
    assert "deepseek-v3: MTP 1 -> 2; mtp_depth 1 -> 2\n" in result.stdout
    assert "0 added, 0 removed, 1 changed" in result.stdout


def test_diff_follows_a_catalogue_folder_that_is_a_link(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "data").mkdir()
    (root / "specs").rename(root / "data" / "specs")
    (root / "specs").symlink_to(Path("data", "specs"))
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "the catalogue through a link")
    assert sorted(files_at(root, "HEAD", ["specs"])) == [DEEPSEEK, LLAMA, "specs/qwen/qwen3.5-35b-a3b.yaml"]
    edit(root / "data" / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    commit_all(root, "two MTP layers")
    assert "deepseek-v3: MTP 1 -> 2; mtp_depth 1 -> 2\n" in run(root, "diff", "main~1", "HEAD").stdout


def test_a_link_that_leaves_the_commit_or_loops_is_skipped(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "specs" / "out.yaml").symlink_to(Path("..", "..", "outside.yaml"))
    (root / "specs" / "abs.yaml").symlink_to("/etc/hostname")
    (root / "specs" / "loop").symlink_to("loop")
    (root / "specs" / "up").symlink_to("..")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "links that lead nowhere in the commit")
    found = files_at(root, "HEAD", ["specs"])
    assert not any(path.startswith(("specs/out", "specs/abs", "specs/loop")) for path in found)
    assert {DEEPSEEK, LLAMA} <= set(found)
    # specs/up -> .. leads to the top, whose specs/ is being walked: entered once, as check's walk does
    assert not any(path.startswith("specs/up/specs/") for path in found)
    assert "specs/up/op_profiles/llama.yaml" in found
