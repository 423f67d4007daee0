"""The judge (pipeline/pricing/judge.py) on a census written by hand: what it names, compares and prints.

The census is the one transformers 5.24.0 builds for the tiny Llama config
below (LlamaForCausalLM, src/transformers/models/llama/modeling_llama.py:
embed_tokens, per layer q/k/v/o_proj, gate/up/down_proj, two RMSNorms, the
final norm, lm_head), written out so the judge is tested without torch.
"""

from __future__ import annotations

from dataclasses import replace

from pipeline.importer.config_json import import_config
from pipeline.pricing.judge import Census, CountRow, TensorRow, judge, render, summary
from pipeline.pricing.op_profiles import load_op_profiles

PROFILES = load_op_profiles()
CONFIG = {"model_type": "llama", "vocab_size": 10, "hidden_size": 8, "intermediate_size": 16,
          "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "tie_word_embeddings": False}
LAYER = {"self_attn.q_proj.weight": (8, 8), "self_attn.k_proj.weight": (4, 8), "self_attn.v_proj.weight": (4, 8),
         "self_attn.o_proj.weight": (8, 8), "mlp.gate_proj.weight": (16, 8), "mlp.up_proj.weight": (16, 8),
         "mlp.down_proj.weight": (8, 16), "input_layernorm.weight": (8,), "post_attention_layernorm.weight": (8,)}
TENSORS = {"model.embed_tokens.weight": (10, 8),
           **{f"model.layers.{i}.{name}": shape for i in range(2) for name, shape in LAYER.items()},
           "model.norm.weight": (8,), "lm_head.weight": (10, 8)}
CENSUS = Census("LlamaForCausalLM", "llama", TENSORS, (("model.layers", 2),), ("model.embed_tokens.weight",),
                ("lm_head.weight",), (), 0)


def _spec(**changes: object):
    return import_config({**CONFIG, **changes}, PROFILES, fallback_name="tiny").spec


def test_the_inventories_of_the_same_config_equal_the_census() -> None:
    verdict = judge(_spec(), PROFILES, CENSUS)
    assert verdict.equal
    assert verdict.count("total") == CountRow("total", 1352, 1352)
    assert [row.what for row in verdict.counts] == [
        "total", "active", "embedding", "head", "layers", "routed experts", "vision tower and projector",
        "final norms, positions, other", "layers 0-1 (full_attention)"]
    assert summary(verdict, "tiny.json") == ("tiny.json: equal to the reference (LlamaForCausalLM), tensor by "
                                             "tensor: 1,352 parameters")


def test_a_wrong_width_is_every_tensor_it_shapes_in_every_layer_and_the_counts() -> None:
    verdict = judge(_spec(intermediate_size=12), PROFILES, CENSUS)
    assert not verdict.equal and verdict.counted_differently
    assert verdict.tensors == (
        TensorRow("model.layers.{i}.mlp.gate_proj.weight", (0, 1), (16, 8), (12, 8), "mlp"),
        TensorRow("model.layers.{i}.mlp.up_proj.weight", (0, 1), (16, 8), (12, 8), "mlp"),
        TensorRow("model.layers.{i}.mlp.down_proj.weight", (0, 1), (8, 16), (8, 12), "mlp"))
    assert render(verdict, "tiny.json") == (
        "tiny.json: differs from the reference (LlamaForCausalLM)\n"
        "\n"
        "  tensor                                 layers  reference  modelspec  part\n"
        "  model.layers.{i}.mlp.gate_proj.weight  0-1     16x8       12x8       mlp\n"
        "  model.layers.{i}.mlp.up_proj.weight    0-1     16x8       12x8       mlp\n"
        "  model.layers.{i}.mlp.down_proj.weight  0-1     8x16       8x12       mlp\n"
        "\n"
        "  count                        reference  modelspec  difference\n"
        "  total                            1,352      1,160        -192\n"
        "  active                           1,352      1,160        -192\n"
        "  layers                           1,184        992        -192\n"
        "  layers 0-1 (full_attention)      1,184        992        -192\n")


def test_a_tensor_only_the_reference_holds_is_named_with_its_layers() -> None:
    census = replace(CENSUS, tensors={**TENSORS, "model.layers.1.self_attn.q_norm.weight": (4,)})
    verdict = judge(_spec(), PROFILES, census)
    assert verdict.tensors == (TensorRow("model.layers.{i}.self_attn.q_norm.weight", (1,), (4,), None, ""),)
    assert [row for row in verdict.counts if not row.equal] == [
        CountRow("total", 1356, 1352), CountRow("active", 1356, 1352), CountRow("layers", 1188, 1184),
        CountRow("layers 0-1 (full_attention)", 1188, 1184)]


def test_a_tied_head_is_the_embedding_counted_once() -> None:
    tensors = {name: shape for name, shape in TENSORS.items() if name != "lm_head.weight"}
    verdict = judge(_spec(tie_word_embeddings=True), PROFILES, replace(CENSUS, tensors=tensors, head=()))
    assert verdict.equal and verdict.count("head") == CountRow("head", 0, 0)


def test_a_layer_the_reference_does_not_build_is_placed_apart() -> None:
    tensors = {name: shape for name, shape in TENSORS.items() if not name.startswith("model.layers.1.")}
    verdict = judge(_spec(), PROFILES, replace(CENSUS, tensors=tensors, stacks=(("model.layers", 1),)))
    assert verdict.tensors[0] == TensorRow("(no reference layer).{i}.self_attn.q_proj.weight", (1,), None, (8, 8),
                                           "attention")
    assert CountRow("layers", 592, 1184) in verdict.counts
