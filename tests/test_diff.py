"""``modelspec diff``: golden text and Markdown on a two-commit repository, and every kind of move alone."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import pytest

from pipeline.catalogue_diff import (Catalogue, CatalogueDiff, ModelChange, diff_catalogues, model_moves,
                                     move_text, render_markdown, render_text)
from spec_repos import commit_all, edit, git, git_repo, run

DEEPSEEK = "specs/deepseek/deepseek-v3.yaml"
LLAMA = "specs/llama/llama-3.1-8b.yaml"
QWEN = "specs/qwen/qwen3.5-35b-a3b.yaml"

LLAMA_70B = """\
name: llama-3.1-70b
hidden_size: 8192
num_hidden_layers: 80
num_attention_heads: 64
num_key_value_heads: 8
vocab_size: 128256
intermediate_size: 28672
"""


@pytest.fixture
def two_commits(tmp_path: Path) -> Path:
    """A repository with two tagged commits.

    ``v1`` is the fixture; ``v2`` has DeepSeek with one MoE layer fewer and
    two MTP layers, Qwen without its shared expert, the Llama 8B gone, a
    Llama 70B added, and a broken spec.
    """
    root = git_repo(tmp_path / "repo")
    git(root, "tag", "v1")
    edit(root / DEEPSEEK, "num_hidden_layers: 61", "num_hidden_layers: 60")
    edit(root / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    edit(root / QWEN, "num_shared_experts: 1", "num_shared_experts: 0")
    (root / LLAMA).unlink()
    (root / "specs" / "llama" / "llama-3.1-70b.yaml").write_text(LLAMA_70B, encoding="utf-8")
    (root / "specs" / "broken.yaml").write_text("name: broken\nhidden_size: 0\n", encoding="utf-8")
    commit_all(root, "v2")
    git(root, "tag", "v2")
    return root


def test_diff_text_golden(two_commits: Path, golden: Callable[[str, str], None]) -> None:
    result = run(two_commits, "diff", "v1", "v2")
    assert result.exit_code == 0
    golden("diff.txt", result.stdout)
    assert "deepseek-v3: moe 58 -> 57; MTP 1 -> 2\n" in result.stdout
    assert "qwen3.5-35b-a3b: shared_expert_width 512 -> 0\n" in result.stdout


def test_diff_markdown_golden(two_commits: Path, golden: Callable[[str, str], None]) -> None:
    result = run(two_commits, "diff", "v1", "v2", "--format", "markdown")
    assert result.exit_code == 0
    golden("diff.md", result.stdout)


def test_diff_defaults_to_the_working_tree(two_commits: Path) -> None:
    edit(two_commits / DEEPSEEK, "mtp_depth: 2", "mtp_depth: 3")
    result = run(two_commits, "diff", "v2")
    assert (result.exit_code, result.stdout) == (0, (
        "resolved stacks v2 -> working tree: 0 added, 0 removed, 1 changed, 2 unchanged\n"
        "deepseek-v3: MTP 2 -> 3\n"
        "does not resolve at v2: specs/broken.yaml (fails modelspec check)\n"
        "does not resolve at working tree: specs/broken.yaml (fails modelspec check)\n"))


def test_diff_of_a_revision_with_itself_is_empty(two_commits: Path) -> None:
    (two_commits / "specs" / "broken.yaml").unlink()
    commit_all(two_commits, "no broken spec")
    result = run(two_commits, "diff", "HEAD", "--exit-code", "--format", "markdown")
    assert (result.exit_code, result.stdout) == (0, (
        "### Resolved stacks: `HEAD` → `working tree`\n\nNo model's resolved stack changed (3 unchanged).\n"))


def test_exit_code_flag_reports_a_change(two_commits: Path) -> None:
    assert run(two_commits, "diff", "v1", "v2", "--exit-code").exit_code == 1
    assert run(two_commits, "diff", "v1", "v2").exit_code == 0


@pytest.mark.parametrize("args, message", [
    (["nope"], "Error: 'nope' names no commit in this repository; name a branch, tag or commit that exists here "
               "(git branch -a lists them), and in CI fetch it first, e.g. git fetch origin main\n"),
    (["v1", "nope"], "Error: 'nope' names no commit in this repository; name a branch, tag or commit that exists "
                     "here (git branch -a lists them), and in CI fetch it first, e.g. git fetch origin main\n"),
    (["--", "--output=x"], "Error: '--output=x' looks like an option, not a git revision, and is refused so git "
                           "cannot read it as one; name a branch, tag or commit, e.g. origin/main\n"),
    (["v1", "--", "-p"], "Error: '-p' looks like an option, not a git revision, and is refused so git cannot read it "
                         "as one; name a branch, tag or commit, e.g. origin/main\n"),
])
def test_a_bad_revision_is_refused(two_commits: Path, args, message: str) -> None:
    result = run(two_commits, "diff", *args)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message)


def test_broken_profiles_at_a_revision_are_told_by_revision(two_commits: Path) -> None:
    edit(two_commits / "op_profiles" / "llama.yaml", "arch: llama", "arch: lama")
    commit_all(two_commits, "broken profile")
    result = run(two_commits, "diff", "HEAD", "v2")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "HEAD:op_profiles/llama.yaml:16:7: error [profile.arch-stem] arch is 'lama' but the file is llama.yaml; "
        "write arch: llama",
        "modelspec: the op profiles at HEAD are broken; fix them before comparing"]


# ---- every move alone ------------------------------------------------------------------------------------------------

OPS = {"attMM": 4, "attBMM": 2, "ffMM": 3, "softmax": 1, "dropout": 1, "normOp": 2, "gather": 4, "headCast": 1,
       "ffAct": 1, "linrec": 0}


def _group(kind: str, count: int, mtp: bool = False, attention: str = "full", ffn: str = "dense") -> Dict[str, Any]:
    return {"kind": kind, "count": count, "mtp": mtp, "attention": attention, "ffn": ffn}


BASE: Dict[str, Any] = {
    "name": "m", "path": "specs/m.yaml", "arch": "x", "digest": "sha256:" + "0" * 64,
    "groups": [_group("dense", 3), _group("moe", 10, ffn="moe"), _group("moe", 1, mtp=True, ffn="moe")],
    "kinds": {"dense": {"attention": "full", "ffn": "dense", "ops": OPS},
              "moe": {"attention": "full", "ffn": "moe", "ops": {**OPS, "ffMM": 7}}},
    "layers": {"body": 13, "mtp": 1},
    "linear_attention": None,
    "widths": {"effective_head_dim": 128, "attention_width": 4096, "routed_expert_width": 512,
               "shared_expert_width": 512},
    "vision": None,
}
TOWER = {"arch": "vision", "groups": [_group("encoder", 27)], "kinds": {"encoder": {"attention": "full",
                                                                                   "ffn": "dense", "ops": OPS}},
         "layers": {"body": 27, "mtp": 0}}
LINEAR = {"num_key_heads": 16, "key_head_dim": 128, "num_value_heads": 32, "value_head_dim": 128, "conv_kernel_dim": 4}


def _with(**changes: Any) -> Dict[str, Any]:
    document = copy.deepcopy(BASE)
    document.update(changes)
    return document


@pytest.mark.parametrize("before, after, expected", [
    (BASE, _with(digest="sha256:" + "1" * 64), ()),
    (BASE, _with(arch="y"), (("arch", "x", "y"),)),
    (BASE, _with(groups=[_group("dense", 2), _group("moe", 11, ffn="moe"), _group("moe", 1, mtp=True, ffn="moe")]),
     (("dense", 3, 2), ("moe", 10, 11))),
    (BASE, _with(groups=[_group("moe", 13, ffn="moe"), _group("moe", 1, mtp=True, ffn="moe")],
                 kinds={"moe": BASE["kinds"]["moe"]}),
     (("moe", 10, 13), ("dense", 3, 0))),
    (BASE, _with(groups=BASE["groups"][:2], layers={"body": 13, "mtp": 0}), (("MTP", 1, 0),)),
    (BASE, _with(groups=[_group("moe", 10, ffn="moe"), _group("dense", 3), _group("moe", 1, mtp=True, ffn="moe")]),
     (("layer stack", "reordered", None),)),
    (BASE, _with(kinds={**BASE["kinds"], "moe": {"attention": "mla", "ffn": "moe", "ops": {**OPS, "ffMM": 8}}}),
     (("moe.attention", "full", "mla"), ("moe.ffMM", 7, 8))),
    (BASE, _with(linear_attention=LINEAR), (("linear_attention", "added", None),)),
    (_with(linear_attention=LINEAR), BASE, (("linear_attention", "removed", None),)),
    (_with(linear_attention=LINEAR), _with(linear_attention={**LINEAR, "num_value_heads": 16}),
     (("linear_attention.num_value_heads", 32, 16),)),
    (BASE, _with(widths={**BASE["widths"], "shared_expert_width": 0, "effective_head_dim": 256}),
     (("effective_head_dim", 128, 256), ("shared_expert_width", 512, 0))),
    (BASE, _with(vision=TOWER), (("vision tower", "added", None),)),
    (_with(vision=TOWER), BASE, (("vision tower", "removed", None),)),
    (_with(vision=TOWER), _with(vision={**TOWER, "groups": [_group("encoder", 32)],
                                        "layers": {"body": 32, "mtp": 0},
                                        "kinds": {"encoder": {"attention": "full", "ffn": "dense",
                                                              "ops": {**OPS, "ffMM": 2}}}}),
     (("vision encoder", 27, 32), ("vision encoder.ffMM", 3, 2))),
    (BASE, _with(path="specs/n/m.yaml"), (("path", "specs/m.yaml", "specs/n/m.yaml"),)),
], ids=["digest-only", "arch", "counts", "kind-gone", "mtp", "reordered", "flavour-and-ops", "linear-added",
        "linear-removed", "linear-dim", "widths", "tower-added", "tower-removed", "tower-stack", "path"])
def test_model_moves(before: Dict[str, Any], after: Dict[str, Any], expected: Tuple) -> None:
    assert model_moves(before, after) == expected


@pytest.mark.parametrize("move, arrow, expected", [
    (("moe", 58, 57), "->", "moe 58 -> 57"),
    (("moe", 58, 57), "→", "moe 58 → 57"),
    (("vision tower", "added", None), "->", "vision tower added"),
    (("moe.ffMM", None, 8), "->", "moe.ffMM none -> 8"),
])
def test_move_text(move, arrow: str, expected: str) -> None:
    assert move_text(move, arrow) == expected


def test_a_model_failing_on_one_side_is_not_added_or_removed() -> None:
    base = Catalogue("a", {"m": BASE})
    head = Catalogue("b", {}, {"specs/m.yaml": "fails modelspec check"})
    assert diff_catalogues(base, head) == CatalogueDiff("a", "b", (), (), (), 0,
                                                        (("b", "specs/m.yaml", "fails modelspec check"),))


def test_markdown_escapes_what_would_break_a_table() -> None:
    diff = CatalogueDiff("main|x", "<head>", (("a|`b`", "x, 1 layers"),), (), (ModelChange("c", (("k|", 1, 2),)),),
                         0, (("<head>", "specs/`x`.yaml", "a <b>"),))
    assert render_markdown(diff) == (
        "### Resolved stacks: `main|x` → `<head>`\n"
        "\n"
        "1 added, 0 removed, 1 changed, 0 unchanged.\n"
        "\n"
        "| model | what moved |\n"
        "| --- | --- |\n"
        "| `` a\\|`b` `` | added: x, 1 layers |\n"
        "| `c` | k\\| 1 → 2 |\n"
        "\n"
        "- :warning: `` specs/`x`.yaml `` does not resolve at `<head>`: a &lt;b&gt;\n")


def test_text_lists_added_removed_changed_then_failing() -> None:
    diff = CatalogueDiff("a", "b", (("n", "x, 2 layers"),), (("o", "y, 3 layers"),),
                         (ModelChange("m", (("moe", 1, 2), ("MTP", 0, 1))),), 4, (("a", "specs/z.yaml", "why"),))
    assert render_text(diff) == ("resolved stacks a -> b: 1 added, 1 removed, 1 changed, 4 unchanged\n"
                                 "added n: x, 2 layers\n"
                                 "removed o: y, 3 layers\n"
                                 "m: moe 1 -> 2; MTP 0 -> 1\n"
                                 "does not resolve at a: specs/z.yaml (why)\n")
