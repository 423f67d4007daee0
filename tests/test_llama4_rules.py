"""Llama 4's import rules and chunked attention: the rope_layers and moe_layers layouts, the text model's tie, the
class-token tower, and the chunked span the FLOPs count (torch-free; the differential suite holds the family to
transformers, tests/test_reference.py)."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

import pytest

from pipeline.importer.config_json import ConfigImportError, import_config
from pipeline.pricing.flops import chunked_pairs, model_flops
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.pricing.stack import spec_layer_stack

PROFILES = load_op_profiles()
TEXT = {"model_type": "llama4_text", "hidden_size": 16, "intermediate_size": 8, "intermediate_size_mlp": 24,
        "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8,
        "vocab_size": 64, "num_local_experts": 3, "num_experts_per_tok": 1}


def _layers(**keys: Any) -> Tuple[List[Tuple[str, int]], Dict[str, Any]]:
    spec = import_config({**TEXT, **keys}, PROFILES, fallback_name="t").spec
    stack = spec_layer_stack(spec, PROFILES)
    return [(group.kind.name, group.count) for group in stack.groups], {
        "chunk": spec.attention_chunk_size, "qk_norm": spec.qk_norm, "tie": spec.tie_word_embeddings}


def test_the_class_defaults_chunk_the_rope_layers_and_leave_every_fourth_full() -> None:
    assert _layers() == ([("chunked_attention_qk_norm_moe", 3), ("full_attention_moe", 1)],
                         {"chunk": 8192, "qk_norm": True, "tie": False})


def test_no_rope_layers_and_a_null_chunk_make_full_layers_the_rope_ones_with_the_l2_norm() -> None:
    assert _layers(no_rope_layers=[0, 1, 1, 0], attention_chunk_size=None) == (
        [("full_attention_moe", 1), ("full_attention_qk_norm_moe", 2), ("full_attention_moe", 1)],
        {"chunk": None, "qk_norm": True, "tie": False})


def test_interleave_moe_layer_step_puts_moe_on_every_other_layer() -> None:
    assert _layers(interleave_moe_layer_step=2, no_rope_layer_interval=2)[0] == [
        ("chunked_attention_qk_norm_dense", 1), ("full_attention_moe", 1), ("chunked_attention_qk_norm_dense", 1),
        ("full_attention_moe", 1)]


def test_stated_moe_layers_win_over_the_step_and_use_qk_norm_false_drops_the_norm_kinds() -> None:
    assert _layers(moe_layers=[], interleave_moe_layer_step=2, use_qk_norm=False) == (
        [("chunked_attention_dense", 3), ("full_attention_dense", 1)], {"chunk": 8192, "qk_norm": False, "tie": False})


def test_a_stated_layer_type_keeps_its_layer_s_rope() -> None:
    assert _layers(layer_types=["full_attention", "chunked_attention", "chunked_attention", "chunked_attention"],
                   attention_chunk_size=16)[0] == [
        ("full_attention_qk_norm_moe", 1), ("chunked_attention_qk_norm_moe", 2), ("chunked_attention_moe", 1)]


def test_chunked_layers_without_a_chunk_size_are_refused() -> None:
    with pytest.raises(ConfigImportError) as caught:
        import_config({**TEXT, "layer_types": ["chunked_attention"] * 4, "attention_chunk_size": None}, PROFILES,
                      fallback_name="t")
    assert [(issue.path, issue.code, issue.message) for issue in caught.value.issues] == [
        (("layer_types",), "import.missing",
         "the stack has chunked_attention layers but attention_chunk_size is null; state it")]


def test_the_text_config_ties_the_head_whatever_the_top_level_says() -> None:
    config = {"model_type": "llama4", "tie_word_embeddings": True, "text_config": {**TEXT, "tie_word_embeddings": False},
              "vision_config": {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1,
                                "intermediate_size": 16, "image_size": 16, "patch_size": 4}}
    spec = import_config(config, PROFILES, fallback_name="t").spec
    assert (spec.tie_word_embeddings, spec.vision.num_position_embeddings, spec.vision.out_hidden_size,
            [(group.kind, group.count) for group in spec.vision.layers]) == (False, 17, 7680, [("uncast_encoder", 1)])


def test_a_chunk_keeps_its_own_triangle() -> None:
    assert (chunked_pairs(10, 4), chunked_pairs(3, 4), chunked_pairs(8, 4)) == (10 + 10 + 3, 6, 20)


def test_a_chunked_layer_caches_the_chunk_but_one_and_counts_its_pairs() -> None:
    spec = import_config({**TEXT, "num_hidden_layers": 1, "attention_chunk_size": 4}, PROFILES,
                         fallback_name="t").spec
    flops = model_flops(spec, PROFILES.get("llama4"), spec_layer_stack(spec, PROFILES), 10)
    group = flops.groups[0]
    per_pair = 2 * 2 * (8 + 8)  # 2 FLOPs x heads x (d_qk + d_v)
    assert (group.kind, group.attention, group.kv_window, group.dense - 100 * per_pair,
            group.causal - 23 * per_pair) == ("chunked_attention_qk_norm_moe", "chunked", 3, 0, 0)
