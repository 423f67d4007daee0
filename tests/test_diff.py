"""``modelspec diff``: golden text and Markdown on a two-commit repository, the merge base, every spec fact a cost
model reads, a spec that stops resolving, and every kind of move alone."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable, Dict, Tuple

import pytest

from pipeline.catalogue.diff import (Catalogue, CatalogueDiff, ModelChange, Move, diff_catalogues, model_moves,
                                     render_markdown, render_text)
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


#: Why the fixture's broken spec does not resolve: its first problem, and how many more.
BROKEN_WHY = ("(fails modelspec check: line 1: [schema.required] num_attention_heads is required and not stated "
              "(and 3 more))")


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
    edit(root / QWEN, "shared_expert_intermediate_size: 512", "shared_expert_intermediate_size: 1024")
    (root / LLAMA).unlink()
    (root / "specs" / "llama" / "llama-3.1-70b.yaml").write_text(LLAMA_70B, encoding="utf-8")
    (root / "specs" / "broken.yaml").write_text("name: broken\nhidden_size: 0\n", encoding="utf-8")
    commit_all(root, "v2")
    git(root, "tag", "v2")
    return root


def merge_base(root: Path, base: str, head: str = "HEAD") -> str:
    """The first 12 digits of the merge base of *base* and *head*."""
    return git(root, "merge-base", base, head).strip()[:12]


def test_diff_text_golden(two_commits: Path, golden: Callable[[str, str], None]) -> None:
    result = run(two_commits, "diff", "v1", "v2")
    assert result.exit_code == 0
    golden("diff.txt", result.stdout)
    # v1 is the merge base of v1 and v2 itself, so the heading names it as given.
    assert result.stdout.splitlines()[0].startswith("resolved stacks v1 -> v2: ")
    assert "deepseek-v3: moe 58 -> 57; MTP 1 -> 2; num_hidden_layers 61 -> 60; mtp_depth 1 -> 2\n" in result.stdout
    assert "qwen3.5-35b-a3b: shared_expert_width 512 -> 1024; shared_expert_intermediate_size 512 -> 1024\n" \
        in result.stdout


def test_diff_markdown_golden(two_commits: Path, golden: Callable[[str, str], None]) -> None:
    result = run(two_commits, "diff", "v1", "v2", "--format", "markdown")
    assert result.exit_code == 0
    golden("diff.md", result.stdout)


def test_diff_defaults_to_the_working_tree(two_commits: Path) -> None:
    edit(two_commits / DEEPSEEK, "mtp_depth: 2", "mtp_depth: 3")
    result = run(two_commits, "diff", "v2")
    assert (result.exit_code, result.stdout) == (0, (
        "resolved stacks v2 -> working tree: 0 added, 0 removed, 1 changed, 2 unchanged\n"
        "deepseek-v3: MTP 2 -> 3; mtp_depth 2 -> 3\n"
        "does not resolve at v2: specs/broken.yaml %s\n"
        "does not resolve at working tree: specs/broken.yaml %s\n" % (BROKEN_WHY, BROKEN_WHY)))


def test_diff_of_a_revision_with_itself_is_empty(two_commits: Path) -> None:
    (two_commits / "specs" / "broken.yaml").unlink()
    commit_all(two_commits, "no broken spec")
    result = run(two_commits, "diff", "HEAD", "--exit-code", "--format", "markdown")
    assert (result.exit_code, result.stdout) == (0, (
        "### Resolved stacks: `HEAD` → `working tree`\n\n"
        "No model's resolved stack changed (3 unchanged).\n"))


def test_exit_code_flag_reports_a_change(two_commits: Path) -> None:
    assert run(two_commits, "diff", "v1", "v2", "--exit-code").exit_code == 1
    assert run(two_commits, "diff", "v1", "v2").exit_code == 0


@pytest.fixture
def diverged(tmp_path: Path) -> Path:
    """A repository whose ``feature`` branch (checked out) changed DeepSeek after ``main`` moved on with Llama."""
    root = git_repo(tmp_path / "repo")
    git(root, "checkout", "-q", "-b", "feature")
    edit(root / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    commit_all(root, "feature: a second MTP layer")
    git(root, "checkout", "-q", "main")
    edit(root / LLAMA, "num_key_value_heads: 8", "num_key_value_heads: 4")
    commit_all(root, "main moved on")
    git(root, "checkout", "-q", "feature")
    return root


@pytest.mark.parametrize("args", [["main"], ["main", "HEAD"], ["main", "feature"]],
                         ids=["working-tree", "head", "named-head"])
def test_diff_compares_with_the_merge_base_not_what_landed_on_base_since(diverged: Path, args) -> None:
    result = run(diverged, "diff", *args, "--exit-code")
    head = args[1] if len(args) > 1 else "working tree"
    assert (result.exit_code, result.stdout) == (1, (
        f"resolved stacks merge base {merge_base(diverged, 'main')} of main and {args[1] if len(args) > 1 else 'HEAD'}"
        f" -> {head}: 0 added, 0 removed, 1 changed, 2 unchanged\n"
        "deepseek-v3: MTP 1 -> 2; mtp_depth 1 -> 2\n"))


def test_the_change_names_the_commit_its_revision_names_beside_the_merge_base(diverged: Path) -> None:
    # what the heading's label is decided by, said by the git process that found the merge base: no other is asked
    from pipeline.catalogue.git import ChangesAsked, commit_of

    changes = ChangesAsked(diverged, "main").changes()
    assert changes.ref_commit == commit_of(diverged, "main") != changes.base
    assert changes.base[:12] == merge_base(diverged, "main")


def test_no_merge_base_compares_with_base_itself(diverged: Path) -> None:
    result = run(diverged, "diff", "main", "feature", "--no-merge-base")
    assert (result.exit_code, result.stdout) == (0, (
        "resolved stacks main -> feature: 0 added, 0 removed, 2 changed, 1 unchanged\n"
        "deepseek-v3: MTP 1 -> 2; mtp_depth 1 -> 2\n"
        "llama-3.1-8b: num_key_value_heads 4 -> 8\n"))


def test_a_base_behind_head_is_named_as_given(diverged: Path) -> None:
    result = run(diverged, "diff", "feature~1", "feature")
    assert result.stdout.splitlines()[0] == (
        "resolved stacks feature~1 -> feature: 0 added, 0 removed, 1 changed, 2 unchanged")


def test_unrelated_histories_have_no_merge_base(two_commits: Path) -> None:
    git(two_commits, "checkout", "-q", "--orphan", "other")
    commit_all(two_commits, "unrelated")
    result = run(two_commits, "diff", "v1", "other")
    assert (result.exit_code, result.stderr) == (2, (
        "Error: 'v1' and 'other' share no history (they have no merge base); compare with a revision 'other' grew "
        "from, e.g. origin/main\n"))
    assert run(two_commits, "diff", "v1", "other", "--no-merge-base").exit_code == 0


# ---- what a cost model prices, by field name ----------------------------------------------------------------------


@pytest.mark.parametrize("path, old, new, line", [
    (DEEPSEEK, "num_experts: 256", "num_experts: 128", "deepseek-v3: num_experts 256 -> 128"),
    (DEEPSEEK, "num_experts_per_tok: 8", "num_experts_per_tok: 4", "deepseek-v3: num_experts_per_tok 8 -> 4"),
    (DEEPSEEK, "kv_lora_rank: 512", "kv_lora_rank: 256", "deepseek-v3: kv_lora_rank 512 -> 256"),
    (DEEPSEEK, "moe_intermediate_size: 2048", "moe_intermediate_size: 1024",
     "deepseek-v3: routed_expert_width 2048 -> 1024; shared_expert_width 2048 -> 1024; "
     "moe_intermediate_size 2048 -> 1024"),
    (LLAMA, "num_key_value_heads: 8", "num_key_value_heads: 1", "llama-3.1-8b: num_key_value_heads 8 -> 1"),
    (LLAMA, "vocab_size: 128256", "vocab_size: 128000", "llama-3.1-8b: vocab_size 128256 -> 128000"),
    # A dense model has no expert width to move: only the fact moves.
    (LLAMA, "intermediate_size: 14336", "intermediate_size: 1433", "llama-3.1-8b: intermediate_size 14336 -> 1433"),
    (LLAMA, "torch_dtype: bfloat16", "torch_dtype: bfloat16\nqkv_bias: true",
     "llama-3.1-8b: qkv_bias none -> true"),
    (LLAMA, "max_position_embeddings: 131072\n", "", "llama-3.1-8b: max_position_embeddings 131072 -> none"),
    (QWEN, "  hidden_size: 1152", "  hidden_size: 1280", "qwen3.5-35b-a3b: vision.hidden_size 1152 -> 1280"),
    (QWEN, "attn_output_gate: true", "attn_output_gate: false", "qwen3.5-35b-a3b: attn_output_gate true -> false"),
    (QWEN, "linear_num_value_heads: 32", "linear_num_value_heads: 16",
     "qwen3.5-35b-a3b: linear_num_value_heads 32 -> 16"),
    (QWEN, "  - full_attention\nvision:", "  - linear_attention\nvision:",
     "qwen3.5-35b-a3b: linear_attention 30 -> 31; full_attention 10 -> 9; layer_types[39] full_attention -> "
     "linear_attention"),
], ids=["num_experts", "experts-per-token", "kv_lora_rank", "moe-width", "kv-heads", "vocab", "dense-width",
        "flag-added", "field-removed", "tower-width", "output-gate", "linear-dim", "layer-type"])
def test_every_changed_fact_is_told_by_name(tmp_path: Path, path: str, old: str, new: str, line: str) -> None:
    root = git_repo(tmp_path / "repo")
    edit(root / path, old, new)
    result = run(root, "diff", "main", "--exit-code")
    assert (result.exit_code, result.stdout.splitlines()[1:]) == (1, [line])
    assert result.stdout.splitlines()[0].endswith("-> working tree: 0 added, 0 removed, 1 changed, 2 unchanged")


def test_a_spec_that_stops_resolving_is_a_change(tmp_path: Path) -> None:
    root = git_repo(tmp_path / "repo")
    edit(root / DEEPSEEK, "num_experts_per_tok: 8", "num_experts_per_tok: 512")
    result = run(root, "diff", "main", "--exit-code")
    base = "main"
    assert (result.exit_code, result.stdout) == (1, (
        f"resolved stacks {base} -> working tree: 0 added, 0 removed, 0 changed, 2 unchanged, 1 newly failing\n"
        f"does not resolve at working tree: {DEEPSEEK} (fails modelspec check: line 12: [spec.experts-per-tok-above] "
        "num_experts_per_tok (512) is larger than num_experts (256); a token cannot be routed to more experts than "
        "there are)\n"))
    markdown = run(root, "diff", "main", "--format", "markdown")
    assert markdown.stdout == (
        f"### Resolved stacks: `{base}` → `working tree`\n\n"
        "0 added, 0 removed, 0 changed, 2 unchanged, 1 newly failing.\n\n"
        f"- :warning: `{DEEPSEEK}` does not resolve at `working tree`: fails modelspec check: line 12: "
        "\\[spec.experts-per-tok-above\\] num\\_experts\\_per\\_tok (512) is larger than num\\_experts (256); a token "
        "cannot be routed to more experts than there are\n")


def test_a_spec_that_resolves_again_is_a_change(two_commits: Path) -> None:
    (two_commits / "specs" / "broken.yaml").unlink()
    result = run(two_commits, "diff", "v2", "--exit-code")
    assert (result.exit_code, result.stdout.splitlines()[0].split(": ", 1)[1]) == (
        1, "0 added, 0 removed, 0 changed, 3 unchanged, 1 no longer failing")


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
    result = run(two_commits, "diff", "v2", "HEAD")
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


SPEC: Dict[str, Any] = {"name": "m", "hidden_size": 4096, "num_hidden_layers": 13, "num_attention_heads": 32,
                        "vocab_size": 32000, "num_experts": 64, "moe_intermediate_size": 512, "mtp_depth": 1,
                        "arch": "x"}
#: An artifact's flops block, as far as a diff reads it.
FLOPS: Dict[str, Any] = {"at": [{"seq_len": 4096, "per_token_dense": 17_160_000_000,
                                 "per_token_causal": 16_080_000_000}],
                         "kv_bytes_per_token": 131_072, "state_bytes": 0}
BASE: Dict[str, Any] = {
    "format_version": 4, "name": "m", "path": "specs/m.yaml", "arch": "x", "digest": "sha256:" + "0" * 64,
    "groups": [_group("dense", 3), _group("moe", 10, ffn="moe"), _group("moe", 1, mtp=True, ffn="moe")],
    "kinds": {"dense": {"attention": "full", "ffn": "dense", "ops": OPS, "weights": None},
              "moe": {"attention": "full", "ffn": "moe", "ops": {**OPS, "ffMM": 7}, "weights": None}},
    "layers": {"body": 13, "mtp": 1},
    # the counts a diff tells (the block holds more: pipeline.pricing.parameters)
    "parameters": {"total": 16_013_852_672, "active": 2_885_681_152, "mtp": 1_153_433_600, "vision": 0},
    "weights": {"model": None, "mtp": None},
    "linear_attention": None,
    "spec": SPEC,
    "widths": {"effective_head_dim": 128, "attention_width": 4096, "routed_expert_width": 512,
               "shared_expert_width": 512},
    "vision": None,
}
TOWER = {"arch": "vision", "groups": [_group("encoder", 27)], "kinds": {"encoder": {"attention": "full",
                                                                                   "ffn": "dense", "ops": OPS}},
         "layers": {"body": 27, "mtp": 0}}
TOWER_SPEC = {"hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16, "name": "vision"}


def _with(**changes: Any) -> Dict[str, Any]:
    document = copy.deepcopy(BASE)
    document.update(changes)
    return document


def _spec(**changes: Any) -> Dict[str, Any]:
    """BASE with these spec facts changed (``None`` removes one)."""
    spec = {key: value for key, value in {**SPEC, **changes}.items() if value is not None}
    return _with(spec=spec)


@pytest.mark.parametrize("before, after, expected", [
    (BASE, _with(digest="sha256:" + "1" * 64), ()),
    (BASE, _with(arch="y"), (Move("arch", "x", "y"),)),
    (BASE, _with(groups=[_group("dense", 2), _group("moe", 11, ffn="moe"), _group("moe", 1, mtp=True, ffn="moe")]),
     (Move("dense", 3, 2), Move("moe", 10, 11))),
    (BASE, _with(groups=[_group("moe", 13, ffn="moe"), _group("moe", 1, mtp=True, ffn="moe")],
                 kinds={"moe": BASE["kinds"]["moe"]}),
     (Move("moe", 10, 13), Move("dense", 3, 0))),
    (BASE, _with(groups=BASE["groups"][:2], layers={"body": 13, "mtp": 0}), (Move("MTP", 1, 0),)),
    (BASE, _with(groups=[_group("moe", 10, ffn="moe"), _group("dense", 3), _group("moe", 1, mtp=True, ffn="moe")]),
     (Move("layer stack", event="reordered"),)),
    (BASE, _with(kinds={**BASE["kinds"], "moe": {"attention": "mla", "ffn": "moe", "ops": {**OPS, "ffMM": 8}}}),
     (Move("moe.attention", "full", "mla"), Move("moe.ffMM", 7, 8))),
    (BASE, _with(widths={**BASE["widths"], "shared_expert_width": None, "effective_head_dim": 256}),
     (Move("effective_head_dim", 128, 256), Move("shared_expert_width", 512, None))),
    (_with(vision=TOWER), _with(vision={**TOWER, "groups": [_group("encoder", 32)],
                                        "layers": {"body": 32, "mtp": 0},
                                        "kinds": {"encoder": {"attention": "full", "ffn": "dense",
                                                              "ops": {**OPS, "ffMM": 2}}}}),
     (Move("vision encoder", 27, 32), Move("vision encoder.ffMM", 3, 2))),
    (BASE, _with(path="specs/n/m.yaml"), (Move("path", "specs/m.yaml", "specs/n/m.yaml"),)),
    # The spec's facts, by field path, in the spec's field order.
    (BASE, _spec(vocab_size=32768, num_experts=32), (Move("vocab_size", 32000, 32768), Move("num_experts", 64, 32))),
    (BASE, _spec(qkv_bias=True), (Move("qkv_bias", None, True),)),
    (_spec(qkv_bias=False), _spec(qkv_bias=True), (Move("qkv_bias", False, True),)),
    (BASE, _spec(mtp_depth=None), (Move("mtp_depth", 1, None),)),
    (BASE, _spec(ffn_dim_multiplier=1.3), (Move("ffn_dim_multiplier", None, 1.3),)),
    # A stated arch that moves is told once.
    (BASE, {**_spec(arch="y"), "arch": "y"}, (Move("arch", "x", "y"),)),
    (BASE, _spec(vision=TOWER_SPEC), (Move("vision", event="added"),)),
    (_spec(vision=TOWER_SPEC), BASE, (Move("vision", event="removed"),)),
    (_spec(vision=TOWER_SPEC), _spec(vision={**TOWER_SPEC, "hidden_size": 1280, "patch_size": 14}),
     (Move("vision.hidden_size", 1152, 1280), Move("vision.patch_size", None, 14))),
    (_spec(layers=[{"kind": "dense", "count": 3}, {"kind": "moe", "count": 10}]),
     _spec(layers=[{"kind": "dense", "count": 2}, {"kind": "moe", "count": 11}]),
     (Move("layers[0].count", 3, 2), Move("layers[1].count", 10, 11))),
    (_spec(layer_types=["a", "b"]), _spec(layer_types=["a", "b", "b"]),
     (Move("layer_types", "2 entries", "3 entries"),)),
    (_spec(ops={"moe": {**OPS, "ffMM": 7}}), _spec(ops={"moe": {**OPS, "ffMM": 8, "gather": 2}}),
     (Move("ops.moe.ffMM", 7, 8), Move("ops.moe.gather", 4, 2))),
    (BASE, _spec(activations={"moe": {"saved": 1.5}}), (Move("activations", event="added"),)),
    (_spec(activations={"moe": {"saved": 1.5}}), _spec(activations={"moe": {"saved": 1.5}, "dense": {"saved": 2}}),
     (Move("activations.dense", event="added"),)),
    # A flag is not a number: true is not 1, and 1.0 is not 1.
    (_spec(layer_norms=1), _spec(layer_norms=True), (Move("layer_norms", 1, True),)),
    (_spec(ffn_dim_multiplier=1), _spec(ffn_dim_multiplier=1.0), (Move("ffn_dim_multiplier", 1, 1.0),)),
    # Across format versions, only what both formats mean alike.
    ({**_with(format_version=1, widths={"routed_expert_width": 4096}), "spec": None}, BASE,
     (Move("format_version", 1, 4),)),
    ({key: value for key, value in _with(format_version=2).items() if key not in ("parameters", "weights")}, BASE,
     (Move("format_version", 2, 4),)),
    # The parameter counts, rounded where that shows the move, exact where it would not.
    (BASE, _with(parameters={**BASE["parameters"], "total": 15_013_852_672, "mtp": 1_153_433_601}),
     (Move("total", "16.0B", "15.0B"), Move("mtp", "1,153,433,600", "1,153,433,601"))),
    (BASE, _with(parameters={"unpriced": "the op profile states no weights for kind 'moe'"}),
     (Move("parameters", "16.0B", None),)),
    # A FLOPs or KV-cache move is a move: the figure at 4k rounded where that shows it, the bytes exact.
    (_with(flops=FLOPS), _with(flops={**FLOPS, "at": [{**FLOPS["at"][0], "per_token_dense": 18_010_000_000}],
                                      "kv_bytes_per_token": 65_536}),
     (Move("flops/token@4k", "17.16G", "18.01G"), Move("kv_bytes_per_token", "131,072", "65,536"))),
    (_with(flops=FLOPS), _with(flops={**FLOPS, "at": [{**FLOPS["at"][0], "per_token_causal": 16_080_000_001}]}),
     (Move("flops/token@4k causal", "16,080,000,000", "16,080,000,001"),)),
    (_with(flops=FLOPS), _with(flops={"unpriced": "no weights"}), (Move("flops", "priced", None),)),
], ids=["digest-only", "arch", "counts", "kind-gone", "mtp", "reordered", "flavour-and-ops", "widths",
        "tower-stack", "path", "facts", "flag-added", "flag-flipped", "fact-removed", "float", "arch-once",
        "tower-added", "tower-removed", "tower-facts", "stated-layers", "list-length", "op-override",
        "record-added", "kind-record-added", "flag-not-number", "float-not-int", "format-version",
        "format-2", "parameters", "parameters-unpriced", "flops", "flops-exact", "flops-unpriced"])
def test_model_moves(before: Dict[str, Any], after: Dict[str, Any], expected: Tuple) -> None:
    assert model_moves(before, after) == expected


@pytest.mark.parametrize("move, arrow, expected", [
    (Move("moe", 58, 57), "->", "moe 58 -> 57"),
    (Move("moe", 58, 57), "→", "moe 58 → 57"),
    (Move("vision", event="added"), "->", "vision added"),
    (Move("moe.ffMM", None, 8), "->", "moe.ffMM none -> 8"),
    (Move("shared_expert_width", 512, None), "->", "shared_expert_width 512 -> none"),
    (Move("qkv_bias", False, True), "->", "qkv_bias false -> true"),
    (Move("ffn_dim_multiplier", 1.3, 1.0), "->", "ffn_dim_multiplier 1.3 -> 1.0"),
])
def test_move_text(move: Move, arrow: str, expected: str) -> None:
    assert move.text(arrow) == expected


def test_a_model_failing_on_one_side_is_not_added_or_removed() -> None:
    base = Catalogue("a", {"m": BASE})
    head = Catalogue("b", {}, {"specs/m.yaml": "fails modelspec check"})
    assert diff_catalogues(base, head) == CatalogueDiff("a", "b", (), (), (), 0,
                                                        (("b", "specs/m.yaml", "fails modelspec check"),),
                                                        ("specs/m.yaml",), ())
    assert diff_catalogues(head, base) == CatalogueDiff("b", "a", (), (), (), 0,
                                                        (("b", "specs/m.yaml", "fails modelspec check"),),
                                                        (), ("specs/m.yaml",))


@pytest.mark.parametrize("base_failing, head_failing, empty", [
    ({}, {}, True),
    ({"specs/x.yaml": "fails modelspec check"}, {"specs/x.yaml": "its layer stack does not resolve"}, True),
    ({}, {"specs/x.yaml": "fails modelspec check"}, False),
    ({"specs/x.yaml": "fails modelspec check"}, {}, False),
], ids=["none", "both-sides", "newly", "no-longer"])
def test_a_spec_failing_on_one_side_only_is_a_change(base_failing, head_failing, empty: bool) -> None:
    diff = diff_catalogues(Catalogue("a", {"m": BASE}, base_failing), Catalogue("b", {"m": BASE}, head_failing))
    assert (diff.empty, diff.unchanged) == (empty, 1)


def test_markdown_escapes_what_would_break_a_table() -> None:
    diff = CatalogueDiff("main|x", "<head>", (("a|`b`", "x, 1 layers"),), (), (ModelChange("c", (Move("k|", 1, 2),)),),
                         0, (("<head>", "specs/`x`.yaml", "a <b>"),), ("specs/`x`.yaml",))
    assert render_markdown(diff) == (
        "### Resolved stacks: `main|x` → `<head>`\n"
        "\n"
        "1 added, 0 removed, 1 changed, 0 unchanged, 1 newly failing.\n"
        "\n"
        "| model | what moved |\n"
        "| --- | --- |\n"
        "| `` a\\|`b` `` | added: x, 1 layers |\n"
        "| `c` | k\\| 1 → 2 |\n"
        "\n"
        "- :warning: `` specs/`x`.yaml `` does not resolve at `<head>`: a \\<b\\>\n")


def test_text_lists_added_removed_changed_then_failing() -> None:
    diff = CatalogueDiff("a", "b", (("n", "x, 2 layers"),), (("o", "y, 3 layers"),),
                         (ModelChange("m", (Move("moe", 1, 2), Move("MTP", 0, 1), Move("vision", event="added"))),), 4,
                         (("a", "specs/z.yaml", "why"),), (), ("specs/z.yaml",))
    assert render_text(diff) == ("resolved stacks a -> b: 1 added, 1 removed, 1 changed, 4 unchanged, "
                                 "1 no longer failing\n"
                                 "added n: x, 2 layers\n"
                                 "removed o: y, 3 layers\n"
                                 "m: moe 1 -> 2; MTP 0 -> 1; vision added\n"
                                 "does not resolve at a: specs/z.yaml (why)\n")


def test_diff_json_is_valid_against_its_schema_and_says_what_the_text_says(two_commits: Path,
                                                                            golden: Callable[[str, str], None]) -> None:
    import json

    import jsonschema

    result = run(two_commits, "diff", "v1", "v2", "--format", "json")
    assert result.exit_code == 0
    golden("diff.json", result.stdout)
    document = json.loads(result.stdout)
    schema = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "catalogue-diff.schema.json")
                        .read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(document)
    text = run(two_commits, "diff", "v1", "v2").stdout
    for change in document["changed"]:
        for move in change["moves"]:
            assert move["what"] in text
    assert (document["base"], document["head"], document["empty"]) == ("v1", "v2", False)


def test_the_specs_a_change_left_alone_are_resolved_once_for_both_sides(two_commits: Path, resolved: list) -> None:
    edit(two_commits / DEEPSEEK, "mtp_depth: 2", "mtp_depth: 3")
    specs = sorted(path.relative_to(two_commits).as_posix() for path in (two_commits / "specs").rglob("*.yaml"))
    result = run(two_commits, "diff", "v2")
    assert (result.exit_code, result.stdout.splitlines()[1]) == (0, "deepseek-v3: MTP 2 -> 3; mtp_depth 2 -> 3")
    # the specs the change left alone once (no artifact cache knows them yet), then the edited one on each side
    assert resolved == [spec for spec in specs if spec != DEEPSEEK] + [DEEPSEEK, DEEPSEEK]


def test_a_profile_changed_between_the_sides_has_every_spec_resolved_on_both(two_commits: Path,
                                                                            resolved: list) -> None:
    profile = two_commits / "op_profiles" / "llama.yaml"
    profile.write_text(profile.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    specs = sorted(path.relative_to(two_commits).as_posix() for path in (two_commits / "specs").rglob("*.yaml"))
    result = run(two_commits, "diff", "v2")
    rules, _, stacks = result.stdout.partition("\n\n")  # the profile is a rule file: listed first (issue 25)
    assert rules.splitlines()[:2] == ["this pull request changes the rules:", "  op_profiles/llama.yaml (op profile "
                                      "of the repository's own, not the one modelspec bundles (gate.own-profile), "
                                      "modified)"]
    assert (result.exit_code, stacks.splitlines()[0]) == (
        0, "resolved stacks v2 -> working tree: 0 added, 0 removed, 0 changed, 3 unchanged")
    assert resolved == specs + specs
