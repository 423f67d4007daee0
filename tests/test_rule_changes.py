"""Rule changes (issue 25, items 2 and 4): ``modelspec diff`` opens with the rule files a change brings, under the
banner "this pull request changes the rules", each op profile per tensor and op count; the configuration is a rule.

A spec repository's own op profile that is not the bundled one is said to be so (``gate.own-profile``), and
``check --changed-since`` names it beside its specs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from pipeline.catalogue.rule_changes import BANNER, RULE_PATHS, RuleChange, render_markdown, rule_changes
from pipeline.check.gate import profile_moves
from tests.spec_repos import commit_all, edit, git_repo, run

LLAMA = "specs/llama/llama-3.1-8b.yaml"


def _rule_changing_pr(tmp_path: Path) -> Path:
    """The fixture on ``main``, then a branch that invents a tensor and an op in its llama profile, drops the
    vision profile's source, adds a modelspec.toml excluding a folder, and touches a workflow."""
    repo = git_repo(tmp_path / "repo")
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "pr.yml").write_text("name: pr\n", encoding="utf-8")
    commit_all(repo, "a workflow")
    (repo / "op_profiles" / "llama.yaml").write_text(
        (repo / "op_profiles" / "llama.yaml").read_text(encoding="utf-8").replace("attMM: 4", "attMM: 5"),
        encoding="utf-8")
    with (repo / "op_profiles" / "llama.yaml").open("a", encoding="utf-8") as handle:
        handle.write("# a comment\n")
    (repo / "modelspec.toml").write_text('exclude = ["specs/acme/*"]\n', encoding="utf-8")
    (repo / ".github" / "workflows" / "pr.yml").write_text("name: pull request\n", encoding="utf-8")
    commit_all(repo, "the rules, changed")
    return repo


def test_the_comment_of_a_rule_changing_pull_request_opens_with_the_banner(
        tmp_path: Path, golden: Callable[[str, str], None]) -> None:
    repo = _rule_changing_pr(tmp_path)
    result = run(repo, "diff", "main~1", "HEAD", "--format", "markdown")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"**{BANNER}**: ")
    golden("rule-changes.md", result.stdout)


def test_the_text_diff_lists_the_rule_files_first(tmp_path: Path) -> None:
    repo = _rule_changing_pr(tmp_path)
    result = run(repo, "diff", "main~1", "HEAD")
    head = result.stdout.split("\n\n")[0]
    assert head.splitlines()[0] == "this pull request changes the rules:"
    assert "  modelspec.toml (configuration, added)" in head
    assert "  .github/workflows/pr.yml (workflow, modified)" in head


def test_a_diff_that_changes_no_rule_has_no_banner(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    edit(repo / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    commit_all(repo, "a spec")
    result = run(repo, "diff", "main~1", "HEAD", "--format", "markdown")
    assert result.stdout.startswith("### Resolved stacks: ")
    assert rule_changes(repo, "main~1", "HEAD") == ()


def test_the_configuration_is_a_rule_change(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "modelspec.toml").write_text('specs = ["specs/llama"]\n', encoding="utf-8")  # uncommitted: the working tree
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n", encoding="utf-8")
    assert rule_changes(repo, "HEAD", None) == (RuleChange("added", ".pre-commit-config.yaml", "configuration"),
                                              RuleChange("added", "modelspec.toml", "configuration"))


def test_an_own_profile_that_is_not_the_bundled_one_is_said_to_be_so(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    edit(repo / "op_profiles" / "llama.yaml", "attMM: 4", "attMM: 5")
    bundled = tmp_path / "bundled"
    bundled.mkdir()
    (bundled / "llama.yaml").write_bytes((repo / "op_profiles" / "llama.yaml").read_bytes())
    assert [change.kind for change in rule_changes(repo, "HEAD", None, bundled)] == ["op profile"]
    (bundled / "llama.yaml").write_text("arch: llama\n", encoding="utf-8")
    assert [change.kind for change in rule_changes(repo, "HEAD", None, bundled)] == [
        "op profile of the repository's own, not the one modelspec bundles (gate.own-profile)"]


def test_an_invented_tensor_in_a_pull_request_s_own_profile_is_named_by_check(tmp_path: Path) -> None:
    # The attack of issue 25: a copy of the bundled profile with one invented tensor keeps a stated total true.
    repo = git_repo(tmp_path / "repo")
    edit(repo / "op_profiles" / "llama.yaml", "attMM: 4", "attMM: 5")
    result = run(repo, "check", "--changed-since", "main", "--strict", "--format", "json")
    assert result.exit_code == 1
    files = {item["file"]: item["problems"] for item in json.loads(result.stdout)["files"]}
    [problem] = files["op_profiles/llama.yaml"]
    assert (problem["code"], problem["severity"], problem["line"], problem["column"]) == \
        ("gate.own-profile", "warning", 1, 1)
    assert problem["message"].startswith("op_profiles/llama.yaml is not the profile modelspec 0.1.0 bundles (")


def test_profile_moves_per_tensor_and_op_count() -> None:
    before = {"arch": "x", "layer_kinds": {"dense": {"ops": {"attMM": 4, "ffMM": 3},
                                                     "weights": [{"role": "q", "name": "q.weight", "shape": ["h", "h"]}]}},
              "model_weights": [{"role": "head", "name": "lm_head.weight", "shape": ["v", "h"]}]}
    after = {"arch": "x", "layer_kinds": {"dense": {"ops": {"attMM": 5},
                                                    "weights": [{"role": "q", "name": "q.weight", "shape": ["h", "2 * h"]},
                                                                {"role": "extra", "name": "x.weight", "shape": ["h"]}]},
                                          "moe": {"ops": {"ffMM": 1}}},
             "model_weights": [], "match": ["x-*"]}
    assert profile_moves(before, after) == (
        "dense op attMM 4 → 5", "dense op ffMM 3 → 0",
        "dense tensor extra added: x.weight [h]", "dense tensor q shape ['h', 'h'] → ['h', '2 * h']",
        "layer kind moe added", "moe op ffMM 0 → 1",
        "model tensor head removed: lm_head.weight [v, h]", "match changed")
    assert profile_moves(before, before) == ()


def test_the_rule_paths_are_the_ones_the_issue_names_and_the_configuration() -> None:
    assert RULE_PATHS == ("pipeline/", "schemas/", "op_profiles/", "pyproject.toml", "modelspec.toml",
                          ".pre-commit-config.yaml", ".ci/", ".github/")


def test_markdown_escapes_a_path_a_pull_request_chooses() -> None:
    text = render_markdown([RuleChange("added", "op_profiles/a|b`.yaml", "op profile", ("x <b> y",))])
    assert "| `` op_profiles/a\\|b`.yaml `` | op profile, added | x \\<b\\> y |" in text


def test_the_readme_s_codeowners_example_names_every_rule_path() -> None:
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- codeowners -->\n```\n(.*?)```\n<!-- /codeowners -->", readme, re.S)
    assert block is not None
    owned = [line.split()[0] for line in block.group(1).splitlines() if line and not line.startswith("#")]
    assert owned == ["/" + path for path in RULE_PATHS]
