"""Parameter counts of every catalogue model, equal to the reference implementation's, to the parameter.

``tests/data/oracle/<model>.json`` holds, for each catalogue model, where its
parameters are as transformers 5.24.0 builds it from the same ``config.json``
on the meta device (``tests/data/oracle/README.md`` gives every field and its
traps: no MTP layers built, router correction biases are buffers, T5's tied
head). These tests hold the counts modelspec derives from the op profiles'
weight inventories to those numbers exactly: the totals, every layer's
attention, MLP and norms, and every tensor's name and shape.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import yaml

from click.testing import CliRunner, Result

from pipeline.catalogue.diff import model_moves
from pipeline.cli import main
from pipeline.spec.model import ModelSpec
from pipeline.spec.yaml_source import load_bytes
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.pricing.parameters import (Unpriced, count_parameters, count_totals, layer_breakdown, layer_tensors,
                                         model_symbols, stated_holds, tower_symbols)
from pipeline.check.runner import check_document, check_file
from pipeline.pricing.stack import LayerStack
from pipeline.pricing.weights import (FFN_PARTS, NONE, TOWER_SYMBOLS, WeightFormatError, compile_expression,
                                      environment, layer_sums, parse_condition, parse_weights, resolve, sizes)

ROOT = Path(__file__).resolve().parent.parent
ORACLE = Path(__file__).parent / "data" / "oracle"
PROFILES = load_op_profiles(ROOT / "op_profiles")
#: Catalogue models the shared oracle has no file for (their configs come from other public repositories).
WITHOUT_ORACLE: List[str] = ["ernie-4.5-0.3b-base", "falcon-mamba-7b", "llama-3.2-1b-instruct", "mamba-130m-hf",
                              "olmo-3.1-32b-instruct", "phi-4", "qwen2.5-32b-instruct", "qwen3-32b", "smollm3-3b"]
ALL_SPECS = sorted((ROOT / "specs").glob("*/*.yaml"))
#: The catalogue specs with a reference breakdown (``tests/data/oracle/<name>.json``, copied from the shared
#: oracle or built in its format); the others, models found in public repositories that the shared oracle has no
#: file for, are judged tensor by tensor against transformers itself (tests/test_reference.py, every spec).
SPECS = [path for path in ALL_SPECS if (ORACLE / f"{path.stem}.json").exists()]


def run_cli(*args: str) -> Result:
    """``modelspec args`` in-process."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def resolved(path: Path) -> Tuple[ModelSpec, LayerStack, Any]:
    """The checked catalogue spec at *path*: its spec, stack and tower stack."""
    item = check_file(path, str(path.relative_to(ROOT)), PROFILES)
    assert item.spec is not None and item.stack is not None, item.result.problems
    return item.spec, item.stack, item.tower


def counts_of(path: Path):
    """The parameter counts of the catalogue spec at *path*."""
    spec, stack, tower = resolved(path)
    return count_parameters(spec, PROFILES.get(stack.arch), stack, tower)


def oracle(path: Path) -> Dict[str, Any]:
    """The reference counts of the catalogue spec at *path* (the oracle file of its name)."""
    return json.loads((ORACLE / f"{path.stem}.json").read_text(encoding="utf-8"))


def expand(ranges: str) -> List[int]:
    """``"0-2,4"`` -> ``[0, 1, 2, 4]``."""
    out: List[int] = []
    for part in ranges.split(","):
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def oracle_layers(reference: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The reference's breakdown of every layer in modelspec's stack order: T5's encoder blocks, then its decoder's."""
    layers: List[Dict[str, Any]] = []
    for groups in reference.get("encoder_layer_groups", {}).values():
        by_index = {index: group for group in groups for index in expand(group["layers"])}
        layers.extend(by_index[index] for index in sorted(by_index))
    return layers + sorted(reference.get("layers_detail", ()), key=lambda layer: layer["index"])


def oracle_groups(reference: Dict[str, Any]) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """``(first layer in modelspec's stack order, group)`` for every layer group of the reference."""
    offset = 0
    for groups in reference.get("encoder_layer_groups", {}).values():
        for group in groups:
            yield expand(group["layers"])[0], group
        offset += sum(group["count"] for group in groups)
    for group in reference["layer_groups"]:
        yield offset + expand(group["layers"])[0], group


#: Whether a tower's patch embedding (a convolution) has a bias, by the reference's ``model_type``: for the
#: models whose reference folds the projector into ``vision`` (Qwen's ``visual.merger`` lives in ``model.visual``),
#: the projector is ``vision`` less the tower's blocks and its embeddings (transformers: ``Qwen2VisionPatchEmbed``
#: and Qwen2.5-VL's have ``bias=False``, ``Qwen3_5VisionPatchEmbed`` ``bias=True``).
PATCH_BIAS = {"qwen2_vl": False, "qwen2_5_vl": False, "qwen3_5": True, "qwen3_5_moe": True, "qwen3_vl": True,
              "qwen3_vl_moe": True}
#: The reference's stacks of the vision region that are no tower blocks but a projector's: Qwen3-VL's deepstack
#: mergers (``model.visual.deepstack_merger_list``, one patch merger per deepstack index), the projector here.
PROJECTOR_STACKS = ("model.visual.deepstack_merger_list",)


def tower_blocks(reference: Dict[str, Any]) -> int:
    """The reference's tower blocks: its stacks of the vision region but the projector's."""
    return sum(stack["params"] for prefix, stack in reference["stacks"].items()
               if stack["region"] == "vision" and prefix not in PROJECTOR_STACKS)


def tower_embeddings(spec: ModelSpec, bias: bool) -> int:
    """A Qwen tower's parameters outside its blocks and its merger: the patch embedding (a convolution over
    in_channels x temporal_patch_size x patch_size^2 into the tower's width) and the learnt position table."""
    vision = spec.vision
    kernel = vision.in_channels * (vision.temporal_patch_size or 1) * vision.patch_size ** 2
    return vision.hidden_size * (kernel + bias + (vision.num_position_embeddings or 0))


def reference_projector(spec: ModelSpec, reference: Dict[str, Any]) -> int:
    """The projector's parameters by the reference: its own figure, or (where it folds the projector into
    ``vision``) ``vision`` less the tower's blocks (its ``stacks``' vision region) and embeddings."""
    if reference["projector"] or not reference["vision"]:
        return reference["projector"]
    return reference["vision"] - tower_blocks(reference) - tower_embeddings(spec, PATCH_BIAS[reference["model_type"]])


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.stem)
def test_the_totals_are_the_reference_implementations(path: Path) -> None:
    counts, reference = counts_of(path), oracle(path)
    spec, stack, _ = resolved(path)
    mtp_layers = sum(group.count for group in stack.groups if group.mtp)
    assert {"total": counts.total, "active": counts.active, "embedding": counts.embedding, "head": counts.head,
            "final_norm": counts.final_norm, "position": counts.position, "vision": counts.vision,
            "projector": counts.projector, "other": counts.other, "layers": counts.layers,
            "tower_layers": sum(group.total for group in counts.tower_groups),
            "mtp": counts.mtp if not mtp_layers else 0} == {
        "total": reference["total"], "active": reference["active"], "embedding": reference["embedding"],
        "head": reference["head"], "final_norm": reference["final_norm"],
        # GPT-2's wpe and RoBERTa's position and token-type tables are the reference's embedding_other; a tower's
        # projector is part of vision here, and apart in the reference unless it folds it in (reference_projector).
        "position": reference["embedding_other"], "vision": reference["vision"] + reference["projector"],
        "projector": reference_projector(spec, reference), "other": reference["other"],
        "layers": reference["layers"] + reference["encoder_layers"],
        "tower_layers": tower_blocks(reference),
        # transformers builds no MTP layer (the reference's mtp is 0 for every model): a model without MTP layers
        # counts 0, one with them is held to its stated figure (test_fast_paths) and DeepSeek's own (below).
        "mtp": reference["mtp"]}
    assert reference["mtp"] == 0 and (counts.mtp > 0) == (mtp_layers > 0)


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.stem)
def test_every_layer_is_the_reference_implementations(path: Path) -> None:
    spec, stack, _ = resolved(path)
    body = [parts for parts, group in zip(layer_breakdown(spec, stack),
                                          [g for g in stack.groups for _ in range(g.count)]) if not group.mtp]
    mine = [{"total": sum(parts.values()), "attention": parts["attention"],
             "mlp": sum(parts[part] for part in FFN_PARTS), "norms": parts["norms"],
             **({"router": parts["router"], "routed_experts": parts["routed_experts"],
                 "shared_experts": parts["shared_experts"], "shared_expert_gate": parts["shared_expert_gate"]}
                if parts["routed_experts"] else {})} for parts in body]
    theirs = [{key: layer[key] for key in ("total", "attention", "mlp", "norms", "router", "routed_experts",
                                           "shared_experts", "shared_expert_gate") if key in layer}
              for layer in oracle_layers(oracle(path))]
    # Where the reference could not tell a layer's tensors apart (RoBERTa's post-norm block: its classifier leaves
    # intermediate, output and their LayerNorm as "other", and takes attention.output.LayerNorm into attention),
    # the layer is held to its total alone. Mllama's cross-attention layers hold their two tanh gates
    # (cross_attn_attn_gate, cross_attn_mlp_gate) outside both modules, the reference's "other" (2), which
    # modelspec counts with the branch each gate scales: those layers too are held to their totals.
    unsorted = [index for index, layer in enumerate(oracle_layers(oracle(path))) if layer["other"]]
    for index in unsorted:
        mine[index], theirs[index] = {"total": mine[index]["total"]}, {"total": theirs[index]["total"]}
    assert mine == theirs
    assert path.stem in ("all-roberta-large-v1-resaved", "llama-3.2-11b-vision-instruct") or not unsorted


def _as_held(tensor: Any, experts: Any) -> list:
    """A tensor's shape as the reference holds it: a routed expert's with ``num_experts`` leading, or its rows
    times ``num_experts`` (``stacked: rows``, DBRX's w1)."""
    if tensor.per != "expert":
        return list(tensor.shape)
    if tensor.stacked == "rows":
        return [experts * tensor.shape[0], *tensor.shape[1:]]
    return [experts, *tensor.shape]


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.stem)
def test_every_tensor_has_the_reference_implementations_name_and_shape(path: Path) -> None:
    spec, stack, _ = resolved(path)
    kinds = [(group.kind, index == 0) for group in stack.groups for index in range(group.count)]
    symbols = model_symbols(spec)
    for first, group in oracle_groups(oracle(path)):
        kind, first_of_run = kinds[first]
        mine = {tensor.name: _as_held(tensor, spec.num_experts)
                for tensor in layer_tensors(kind, symbols) if tensor.per != "first_layer" or first_of_run}
        assert mine == group["param_shapes"], f"layers {group['layers']}"


def test_the_specs_without_a_reference_breakdown_are_named() -> None:
    assert [path.stem for path in ALL_SPECS if path not in SPECS] == WITHOUT_ORACLE


def test_deepseek_v3s_mtp_layer_is_counted_apart_from_deepseeks_own_figures() -> None:
    counts = counts_of(ROOT / "specs/deepseek/deepseek-v3.yaml")
    # The MTP layer: one MoE decoder layer (11,507,286,016) plus enorm, hnorm, shared_head.norm (3 x 7,168) and
    # eh_proj (7,168 x 14,336 = 102,760,448), as DeepSeek's checkpoint layer 61 and vLLM's
    # DeepSeekMultiTokenPredictorLayer hold them.
    assert (counts.total, counts.mtp) == (671_026_404_352, 11_610_067_968)
    # The card's 685B is the checkpoint: the main model, the MTP layer, the MTP layer's own copies of the embedding
    # and the head (2 x 926,679,040), the router correction biases (buffers, 59 x 256) and the FP8 block scales
    # (about 41M, not counted here). 684.49B + 0.04B of scales is what the card rounds to 685B.
    checkpoint = counts.total + counts.mtp + 2 * counts.embedding + 59 * 256
    assert checkpoint == 684_489_845_504
    assert 684.4e9 < checkpoint < 685.5e9


def by_name(name: str):
    """The counts of the catalogue spec *name*."""
    return counts_of(next(path for path in SPECS if path.stem == name))


def test_the_counts_agree_with_the_published_figures() -> None:
    """Each card's figure, with the convention that card counts by (they differ, and say so)."""
    # Llama 2 (Meta's card and paper, Table 1 footnote): 6,738,415,616, exactly.
    assert by_name("llama-2-7b").total == 6_738_415_616
    # DeepSeek-V3 card: 671B total, 37B activated; its activated figure leaves out the input embedding.
    deepseek = by_name("deepseek-v3")
    assert (round(deepseek.total / 1e9), round((deepseek.active - deepseek.embedding) / 1e9)) == (671, 37)
    # Mixtral of Experts (Mistral AI): 46.7B total, 12.9B active per token.
    mixtral = by_name("mixtral-8x7b")
    assert (round(mixtral.total / 1e9, 1), round(mixtral.active / 1e9, 1)) == (46.7, 12.9)
    # Qwen3-30B-A3B card: 30.5B total, 29.9B non-embedding (embedding and head left out), 3.3B activated (3.35B,
    # written with one decimal cut off).
    qwen = by_name("qwen3-30b-a3b")
    assert (round(qwen.total / 1e9, 1), round((qwen.total - qwen.embedding - qwen.head) / 1e9, 1),
            int(qwen.active / 1e8) / 10) == (30.5, 29.9, 3.3)
    # Kimi K2 card: 1T total, 32B activated (the embedding left out, as DeepSeek's card, whose code it runs).
    kimi = by_name("kimi-k2-instruct")
    assert (round(kimi.total / 1e12, 1), round((kimi.active - kimi.embedding) / 1e9)) == (1.0, 32)


def test_every_bundled_family_states_its_inventories() -> None:
    assert [arch for arch, profile in PROFILES.profiles.items()
            if arch != "vision" and not (profile.model_weights and all(kind.weights for kind in
                                                                       profile.layer_kinds.values()))] == []
    assert [arch for arch, profile in PROFILES.profiles.items()
            if profile.family and profile.family.tower and not profile.vision_kinds] == []


def test_every_catalogue_spec_states_its_counted_parameters() -> None:
    for path in SPECS:
        spec, _, _ = resolved(path)
        counts = counts_of(path)
        assert spec.parameters is not None, path
        assert (spec.parameters.total, spec.parameters.active) == \
            (counts.total, counts.active if spec.is_moe else None), path


def test_a_changed_width_fails_check_with_both_numbers(tmp_path: Path) -> None:
    spec = (ROOT / "specs/deepseek/deepseek-v3.yaml").read_text(encoding="utf-8")
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "deepseek-v3.yaml").write_text(
        spec.replace("moe_intermediate_size: 2048", "moe_intermediate_size: 2000"), encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path))
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if "params.total-mismatch" in line)
    assert line == (
        "specs/deepseek-v3.yaml:37:10: error [params.total-mismatch] parameters.total states 671,026,404,352 but "
        "the spec's fields count 655,640,550,400 (-15,385,853,952); counted: moe layers 58 × 11.24B, dense layers "
        "3 × 0.58B, embedding 0.93B, head 0.93B, final norm 7,168. Correct the field that is not the model's, or the stated figure")
    assert "params.active-mismatch" in result.output and "37,013,478,400" in result.output


def test_a_stated_count_that_cannot_be_checked_is_refused(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "m.yaml").write_text(
        "name: llama-x\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n"
        "intermediate_size: 128\narch: llama\nparameters:\n  total: 1000\n", encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path))
    assert result.exit_code == 1
    assert ("specs/m.yaml:9:3: error [params.unpriced] parameters is stated but cannot be checked: kind "
            "'full_attention': whether it holds some tensors depends on qkv_bias, which the spec does not state"
            ) in result.output


def test_llama_3_1_8b_flops_per_token_are_twice_its_matmul_weights() -> None:
    counts = counts_of(ROOT / "specs/llama/llama-3.1-8b.yaml")
    # Body matmuls: 32 x (q 4096^2 + k, v 2 x 1024 x 4096 + o 4096^2 + MLP 3 x 14336 x 4096) = 6,979,321,856;
    # the head 128,256 x 4,096 = 525,336,576.
    assert counts.flops_per_token == 2 * (6_979_321_856 + 525_336_576)


@pytest.mark.parametrize("text, message", [
    ("hidden_size ** 2", "'hidden_size ** 2' uses Pow; a dimension takes + - * // and parentheses only"),
    ("hidden_sise", "'hidden_sise' names 'hidden_sise', which is not one of"),
    ("2.5 * hidden_size", "'2.5 * hidden_size' holds 2.5; constants are whole numbers"),
    ("open('x')", "\"open('x')\" holds \"'\"; a dimension is written with field names, whole numbers, + - * // "
                  "and parentheses, nothing else"),
    ("open(x)", "'open(x)' uses Call; a dimension takes + - * // and parentheses only"),
    ("hidden_size *", "'hidden_size *' is not an expression: write e.g. num_attention_heads * head_dim"),
])
def test_a_shape_expression_outside_integer_arithmetic_is_refused(text: str, message: str) -> None:
    with pytest.raises(WeightFormatError) as caught:
        compile_expression(text, ("w",), ("hidden_size",))
    assert str(caught.value).startswith(message)


def test_a_condition_is_a_flag_or_not_a_flag() -> None:
    assert parse_condition("not tie_word_embeddings", (), ("tie_word_embeddings",)).holds(
        {"tie_word_embeddings": False})
    with pytest.raises(WeightFormatError):
        parse_condition("qkv_bias and o_bias", (), ("qkv_bias", "o_bias"))


def test_an_unstated_field_an_inventory_reads_is_named() -> None:
    spec = ModelSpec.from_dict({"name": "llama-x", "hidden_size": 64, "num_hidden_layers": 2,
                                "num_attention_heads": 4, "vocab_size": 100, "arch": "llama"}, strict=False)
    kind = PROFILES.get("llama").layer_kinds["full_attention"]
    with pytest.raises(Unpriced) as caught:
        layer_tensors(kind, {**model_symbols(spec), "qkv_bias": False, "o_bias": False, "mlp_bias": False,
                             "norm_bias": False})
    assert caught.value.field == "intermediate_size"


def test_show_prints_the_totals() -> None:
    result = run_cli("show", "deepseek-v3", "--root", str(ROOT))
    assert result.exit_code == 0
    assert "671,026,404,352 parameters, 37,552,282,624 active; MTP 1 layer, 11,610,067,968" in result.output


def test_diff_tells_parameter_moves() -> None:
    before = json.loads((ROOT / "resolved/deepseek-v3.json").read_text(encoding="utf-8"))
    after = json.loads(json.dumps(before))
    after["parameters"].update(total=660_300_000_000, active=37_552_282_000)
    moves = [move.text() for move in model_moves(before, after)]
    assert moves == ["total 671.0B -> 660.3B", "active 37,552,282,624 -> 37,552,282,000"]
    after["parameters"] = {"unpriced": "the op profile states no weights for kind 'moe'"}
    assert [move.text() for move in model_moves(before, after)] == ["parameters 671.0B -> none"]


def test_a_width_that_resolves_to_nothing_is_unstated_not_zero() -> None:
    spec, _, _ = resolved(ROOT / "specs" / "qwen" / "qwen3-30b-a3b.yaml")
    assert model_symbols(spec)["moe_intermediate_size"] == spec.moe_intermediate_size > 0
    bare = dataclasses.replace(spec, moe_intermediate_size=None, intermediate_size=None,
                               shared_expert_intermediate_size=None)
    assert (bare.routed_expert_width, bare.shared_expert_width) == (0, 0)
    symbols = model_symbols(bare)
    assert (symbols["moe_intermediate_size"], symbols["shared_expert_intermediate_size"]) == (None, None)
    assert symbols["num_shared_experts"] == 0  # read as 0 when absent, as the stack rules read it


def test_a_tower_inventory_reads_the_towers_head_width() -> None:
    spec, _, _ = resolved(ROOT / "specs" / "qwen" / "qwen2-vl-2b-instruct-awq.yaml")
    inventory = parse_weights([{"role": "q", "name": "q.weight", "shape": ["head_dim", "text_hidden_size"],
                                "part": "projector"}], ("vision",), TOWER_SYMBOLS, ("projector",))
    symbols = tower_symbols(spec.vision, spec.hidden_size)
    assert symbols["head_dim"] == 1280 // 16 == spec.vision.hidden_size // spec.vision.num_attention_heads
    assert sizes(inventory, symbols) == [("projector", "layer", 80 * 1536, True)]


_DEEPSTACK = [{"role": "merger.norm", "name": "deepstack.{i}.norm.weight", "shape": ["hidden_size * 4"],
               "part": "projector", "bias": True, "copies": "num_deepstack_mergers"}]


def test_a_tensor_held_copies_times_is_named_once_per_index_and_counted_that_often() -> None:
    inventory = parse_weights(_DEEPSTACK, ("vision",), TOWER_SYMBOLS, ("projector",))
    symbols = {"hidden_size": 8, "num_deepstack_mergers": 3}
    assert sizes(inventory, symbols) == [("projector", "layer", 3 * 32, False), ("projector", "layer", 3 * 32, False)]
    assert [(t.name, t.shape) for t in resolve(inventory, symbols)] == [
        ("deepstack.0.norm.weight", (32,)), ("deepstack.0.norm.bias", (32,)), ("deepstack.1.norm.weight", (32,)),
        ("deepstack.1.norm.bias", (32,)), ("deepstack.2.norm.weight", (32,)), ("deepstack.2.norm.bias", (32,))]
    assert (sizes(inventory, {**symbols, "num_deepstack_mergers": 0}),
            resolve(inventory, {**symbols, "num_deepstack_mergers": 0})) == ([], [])
    with pytest.raises(Unpriced) as caught:
        resolve(inventory, {"hidden_size": 8, "num_deepstack_mergers": None})
    assert (caught.value.field, caught.value.reason) == (
        "num_deepstack_mergers", "its inventory holds deepstack.{i}.norm.weight once per num_deepstack_mergers, "
                                 "which the spec does not state")


#: StableLmLayerNormPerHead's q_layernorm and k_layernorm: one [head_dim] weight per query head, per key/value head.
_PER_HEAD = [{"role": "q_norm", "name": "self_attn.q_layernorm.norms.{i}.weight", "shape": ["head_dim"],
              "part": "attention", "copies": "num_attention_heads", "when": "qk_norm"},
             {"role": "k_norm", "name": "self_attn.k_layernorm.norms.{i}.weight", "shape": ["head_dim"],
              "part": "attention", "copies": "num_key_value_heads", "when": "qk_norm"}]


def test_a_layer_tensor_held_once_per_head_is_counted_per_query_and_per_key_value_head() -> None:
    inventory = parse_weights(_PER_HEAD, ("layer_kinds", "full_attention_qk_norm", "weights"))
    symbols = {"head_dim": 4, "num_attention_heads": 3, "num_key_value_heads": 2, "qk_norm": True}
    assert sizes(inventory, symbols) == [("attention", "layer", 3 * 4, False), ("attention", "layer", 2 * 4, False)]
    assert layer_sums(inventory, environment(symbols)) == (5 * 4, 0, 0)
    assert [tensor.name for tensor in resolve(inventory, symbols)] == [
        "self_attn.q_layernorm.norms.0.weight", "self_attn.q_layernorm.norms.1.weight",
        "self_attn.q_layernorm.norms.2.weight", "self_attn.k_layernorm.norms.0.weight",
        "self_attn.k_layernorm.norms.1.weight"]
    assert (sizes(inventory, {**symbols, "qk_norm": False}), resolve(inventory, {**symbols, "qk_norm": False})) == (
        [], [])
    with pytest.raises(WeightFormatError) as caught:  # a flag is no count of copies
        parse_weights([{**_PER_HEAD[0], "copies": "qk_norm"}], ("layer_kinds", "k", "weights"))
    message = "copies 'qk_norm' is not a count of ['hidden_size', "
    assert (caught.value.path, str(caught.value)[:len(message)]) == (("layer_kinds", "k", "weights", 0, "copies"),
                                                                     message)


@pytest.mark.parametrize("change, path, message", [
    ({"copies": "pooling_head"}, ("vision", 0, "copies"), "copies 'pooling_head' is not a count of ['hidden_size', "),
    ({"copies": None}, ("vision", 0, "name"), "'deepstack.{i}.norm.weight': a tensor held `copies` times names each "
                                              "copy's index {i}"),
    ({"name": "deepstack.norm.weight"}, ("vision", 0, "name"), "'deepstack.norm.weight': a tensor held `copies` "
                                                               "times names each copy's index {i}"),
])
def test_copies_name_a_count_and_the_name_its_index(change: Dict[str, Any], path: Tuple[Any, ...],
                                                    message: str) -> None:
    entry = {key: value for key, value in {**_DEEPSTACK[0], **change}.items() if value is not None}
    with pytest.raises(WeightFormatError) as caught:
        parse_weights([entry], ("vision",), TOWER_SYMBOLS, ("projector",))
    assert (caught.value.path, str(caught.value)[:len(message)]) == (path, message)


def test_a_kind_without_weights_is_unpriced_by_name() -> None:
    spec, stack, _ = resolved(ROOT / "specs" / "llama" / "llama-3.1-8b.yaml")
    kind = dataclasses.replace(stack.groups[0].kind, weights=NONE)
    with pytest.raises(Unpriced) as raised:
        layer_tensors(kind, model_symbols(spec), " of the test")
    assert (raised.value.field, raised.value.reason) == (
        None, "the op profile states no weights for kind 'full_attention' of the test")


def test_a_layer_summing_past_2_63_with_no_tensor_past_it_is_unpriced_by_both_paths() -> None:
    # 3 MLP tensors of 4096 x 3 * 2^49 (each below 2^63 - 1, their sum above): the compiled sums give up, and the
    # fast path falls back to the full count, which refuses the total (it used to unpack None: a crash).
    spec, stack, tower = resolved(ROOT / "specs" / "llama" / "llama-3.1-8b.yaml")
    huge = dataclasses.replace(spec, intermediate_size=3 << 49)
    for count in (count_totals, count_parameters):
        with pytest.raises(Unpriced) as raised:
            count(huge, PROFILES.get(stack.arch), stack, tower)
        assert (raised.value.field, raised.value.reason) == (
            None, "the spec's fields count more than 2^63 - 1 parameters; no model holds that: a width or a count "
                  "of the spec is wrong")


def test_routed_experts_without_a_top_k_are_unpriced_by_name() -> None:
    spec, stack, tower = resolved(ROOT / "specs" / "qwen" / "qwen3-30b-a3b.yaml")
    bare = dataclasses.replace(spec, num_experts_per_tok=None)
    for count in (count_totals, count_parameters):
        with pytest.raises(Unpriced) as raised:
            count(bare, PROFILES.get(stack.arch), stack, tower)
        assert raised.value.field == "num_experts_per_tok"
        assert raised.value.reason.endswith("holds routed experts, so its count needs num_experts and "
                                            "num_experts_per_tok")


def test_a_total_past_2_63_of_tensors_below_it_is_unpriced() -> None:
    # an untied embedding and head of 2^50 x 4096 = 2^62 each: no tensor, and no layer, is past 2^63 - 1; the
    # model is, and both paths refuse it
    spec, stack, tower = resolved(ROOT / "specs" / "llama" / "llama-3.1-8b.yaml")
    huge = dataclasses.replace(spec, vocab_size=1 << 50)
    for count in (count_totals, count_parameters):
        with pytest.raises(Unpriced) as raised:
            count(huge, PROFILES.get(stack.arch), stack, tower)
        assert raised.value.field is None and raised.value.reason.startswith("the spec's fields count more than")


def test_the_stated_figures_hold_only_when_they_are_the_counted_ones() -> None:
    spec, stack, tower = resolved(ROOT / "specs" / "llama" / "llama-3.1-8b.yaml")
    totals = count_totals(spec, PROFILES.get(stack.arch), stack, tower)
    assert totals == (8_030_261_248, 8_030_261_248) and stated_holds(spec, totals)
    assert not stated_holds(spec, (totals[0] + 1, totals[1]))
    assert not stated_holds(dataclasses.replace(spec, parameters=None), totals)


def test_an_mtp_mismatch_names_each_mtp_layers_share() -> None:
    # two MTP layers where DeepSeek-V3 has one: the stated mtp is half the count, and the message counts per layer
    data = yaml.safe_load((ROOT / "specs" / "deepseek" / "deepseek-v3.yaml").read_text(encoding="utf-8"))
    data["mtp_depth"] = 2
    checked = check_document(load_bytes(json.dumps(data).encode(), "x.yaml"), PROFILES)
    assert [(problem.code, problem.message) for problem in checked.result.problems] == [(
        "params.mtp-mismatch",
        "parameters.mtp states 11,610,067,968 but the spec's fields count 23,220,135,936 (+11,610,067,968); "
        "counted: moe MTP layers 2 × 11.51B, MTP extras 0.21B. Correct the field that is not the model's, or the "
        "stated figure")]
def _mismatch(tmp_path: Path, source: str, old: str, new: str) -> str:
    """The ``params.total-mismatch`` line of a check of *source* with *old* written *new*."""
    (tmp_path / "specs").mkdir(exist_ok=True)
    path = ROOT / source
    (tmp_path / "specs" / path.name).write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path), "--no-cache")
    return next(line for line in result.output.splitlines() if "params.total-mismatch" in line)


def test_a_mismatch_groups_equal_groups_wherever_they_stand(tmp_path: Path) -> None:
    # Nemotron-H interleaves 23 MoE, 23 Mamba and 6 attention layers: one entry per kind, not 52
    line = _mismatch(tmp_path, "specs/nemotron/nemotron-3-nano-30b-a3b.yaml", "moe_intermediate_size: 1856",
                     "moe_intermediate_size: 1800")
    assert line.split("counted: ")[1] == (
        "moe layers 23 × 1.26B, mamba layers 23 × 0.04B, embedding 0.35B, head 0.35B, attention layers 6 × 0.02B, final norm 2,688. "
        "Correct the field that is not the model's, or the stated figure")


def test_a_mismatch_rounding_would_hide_is_broken_down_in_digits(tmp_path: Path) -> None:
    line = _mismatch(tmp_path, "specs/nemotron/nemotron-3-nano-30b-a3b.yaml", "  total: 31577937344",
                     "  total: 31577938344")
    assert line.split("count ")[1] == (
        "31,577,937,344 (-1,000); counted: moe layers 23 × 1,297,468,032, mamba layers 23 × 38,744,896, "
        "embedding 352,321,536, head 352,321,536, attention layers 6 × 23,399,040, final norm 2,688. Correct the field that is not "
        "the model's, or the stated figure")


def test_a_bias_on_a_weight_tying_leaves_out_is_refused() -> None:
    """Tying shares the weight only (transformers 5.24.0 ``_tied_weights_keys``: ``lm_head.weight``); PhiMoE's
    ``lm_head.bias`` stands when tied, so the inventory lists it apart, and a ``bias`` beside ``when:
    not tie_word_embeddings`` (which dropped it with the weight) is refused at load."""
    entry = {"role": "head", "name": "lm_head.weight", "part": "head", "shape": ["vocab_size", "hidden_size"],
             "when": "not tie_word_embeddings", "bias": "head_bias"}
    with pytest.raises(WeightFormatError) as caught:
        parse_weights([entry], ("model_weights",))
    assert caught.value.path == ("model_weights", 0, "bias")
    assert "tying shares the weight only" in str(caught.value)
    parse_weights([{key: value for key, value in entry.items() if key != "bias"},
                   {"role": "head.bias", "name": "lm_head.bias", "part": "head", "shape": ["vocab_size"],
                    "when": "head_bias"}], ("model_weights",))
