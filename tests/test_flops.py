"""FLOPs at a sequence length and KV/state bytes per kind (pipeline/pricing/flops.py), with the numbers.

Each flavour is compared with a full-attention model of the same widths (the same spec, every layer of its
profile's full-attention kind): a sliding window keeps the dense count and shrinks the causal one and the cache,
MLA caches its latent instead of per-head keys and values, linear attention and state-space layers trade a
quadratic score matrix and a growing cache for a scan linear in the sequence and a constant state.
The reference itself (FlopCounterMode) is tests/test_flops_reference.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Tuple

import pytest
from click.testing import CliRunner

from pipeline.catalogue.site import flops_segments
from pipeline.cli import main
from pipeline.check.runner import check_file
from pipeline.pricing.flops import ModelFlops, artifact_seq_lens, causal_pairs, model_flops
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.pricing.stack import LayerStack, StackGroup, spec_layer_stack
from pipeline.spec.model import ModelSpec

ROOT = Path(__file__).resolve().parents[1]
PROFILES = load_op_profiles(ROOT / "op_profiles")


def priced(relative: str, seq_len: int = 4096, full: str = "") -> Tuple[ModelFlops, "object"]:
    """The catalogue spec's figures at *seq_len*; with *full*, every layer made that kind of its profile."""
    checked = check_file(ROOT / relative, relative, PROFILES)
    stack = checked.stack
    if full:
        kind = next(group.kind for group in stack.groups if group.kind.name == full)
        stack = LayerStack(stack.arch, tuple(StackGroup(kind, g.count, g.mtp) for g in stack.groups), stack.linear)
    return model_flops(checked.spec, PROFILES.get(stack.arch), stack, seq_len), checked.spec


def test_a_sliding_window_keeps_the_dense_count_and_shrinks_the_causal_one_and_the_cache() -> None:
    # gemma-3-27b: 52 sliding layers (window 1024) and 10 full, against 62 full layers of the same widths.
    ours, spec = priced("specs/gemma/gemma-3-27b.yaml")
    full, _ = priced("specs/gemma/gemma-3-27b.yaml", full="full_attention")
    per_pair = 2 * 32 * (128 + 128)  # 2 FLOPs x heads x (d_qk + d_v) per (query, key) pair
    assert spec.sliding_window == 1024
    assert ours.attention("dense") == full.attention("dense") == 62 * 4096 * 4096 * per_pair == 17_042_430_230_528
    assert causal_pairs(4096, 1024) == 1024 * 1025 // 2 + 3072 * 1024 == 3_670_528
    assert ours.attention("causal") == (52 * 3_670_528 + 10 * 4096 * 4097 // 2) * per_pair == 4_501_897_478_144
    assert full.attention("causal") == 62 * 4096 * 4097 // 2 * per_pair == 8_523_295_490_048
    # The cache: 2 x 16 KV heads x 128 x 2 bytes = 8,192 bytes per token per layer, a sliding layer at most 1,023.
    assert ours.kv_per_token() == full.kv_per_token() == 62 * 8192 == 507_904
    assert ours.kv_bytes() == (52 * 1023 + 10 * 4096) * 8192 == 771_325_952
    assert full.kv_bytes() == 62 * 4096 * 8192 == 2_080_374_784
    assert ours.kv_bytes(131_072) == (52 * 1023 + 10 * 131_072) * 8192 == 11_173_199_872


def test_mla_caches_its_latent_and_runs_the_scores_of_its_per_head_widths() -> None:
    # deepseek-v3: 61 MLA layers, 128 heads, d_qk = 128 nope + 64 rope, d_v = 128; cached: 512 latent + 64 rope.
    ours, _ = priced("specs/deepseek/deepseek-v3.yaml")
    per_pair = 2 * 128 * (192 + 128)
    assert ours.attention("dense") == 61 * 4096 * 4096 * per_pair == 83_837_761_617_920
    assert ours.attention("causal") == 61 * 4096 * 4097 // 2 * per_pair == 41_929_114_910_720
    assert ours.kv_per_token() == 61 * (512 + 64) * 2 == 70_272
    # Multi-head attention of the same widths would cache each head's key and value: 71 times as much.
    mha = 61 * 128 * (192 + 128) * 2
    assert (mha, mha // ours.kv_per_token()) == (4_997_120, 71)
    assert ours.kv_bytes() == 70_272 * 4096 == 287_834_112
    # The MTP layer, apart from the forward: its matmuls per token over the sequence, and its scores.
    one, _ = priced("specs/deepseek/deepseek-v3.yaml", seq_len=1)
    assert ours.mtp("dense") == 4096 * (one.mtp("dense") - per_pair) + 4096 * 4096 * per_pair == 7_010_997_239_808


def test_gated_deltanet_trades_the_score_matrix_for_a_scan_and_a_constant_state() -> None:
    # qwen3-next-80b-a3b: 36 gated-DeltaNet layers and 12 full, against 48 full layers of the same widths.
    ours, _ = priced("specs/qwen/qwen3-next-80b-a3b.yaml")
    full, _ = priced("specs/qwen/qwen3-next-80b-a3b.yaml", full="full_attention")
    assert (ours.attention("dense"), full.attention("dense")) == (4_003_990_339_584, 13_194_139_533_312)
    assert (ours.attention("causal"), full.attention("causal")) == (2_240_973_373_440, 6_598_680_379_392)
    # Only the 12 full layers cache per token: 2 x 2 KV heads x 256 x 2 bytes each; the 36 linear layers hold
    # 32 heads x 128 x 128 of state and 8,192 conv channels x 4 taps, at 2 bytes, whatever the length.
    assert ours.kv_per_token() == 12 * 2 * 2 * 256 * 2 == 24_576
    assert full.kv_per_token() == 48 * 2 * 2 * 256 * 2 == 98_304
    assert ours.state_bytes() == 36 * (32 * 128 * 128 + 8192 * 4) * 2 == 40_108_032
    assert (ours.kv_bytes(), full.kv_bytes()) == (24_576 * 4096 + 40_108_032, 98_304 * 4096)
    # Doubling the sequence doubles a linear layer's scan (its conv's kernel - 1 taps of padding are counted once)
    # and quadruples a full layer's scores.
    longer, _ = priced("specs/qwen/qwen3-next-80b-a3b.yaml", seq_len=8192)
    linear = ours.groups[0].dense // ours.groups[0].count
    assert longer.groups[0].dense // longer.groups[0].count - 2 * linear == -2 * 8192 * 4 * 3
    assert longer.groups[-2].dense == 4 * ours.groups[-2].dense


def test_a_state_space_hybrid_holds_a_constant_state_and_a_small_cache() -> None:
    # nemotron-3-nano-30b-a3b: 23 Mamba2 mixers, 6 attention, 23 MoE blocks; made all attention, 52 layers.
    ours, _ = priced("specs/nemotron/nemotron-3-nano-30b-a3b.yaml")
    full, _ = priced("specs/nemotron/nemotron-3-nano-30b-a3b.yaml", full="attention")
    assert (ours.attention("dense"), full.attention("dense")) == (2_174_086_266_880, 14_293_651_161_088)
    assert (ours.attention("causal"), full.attention("causal")) == (1_189_901_221_888, 7_148_570_411_008)
    # 6 attention layers of 2 KV heads x 128 x 2 x 2 bytes; a MoE block caches nothing.
    assert ours.kv_per_token() == 6 * 2 * 2 * 128 * 2 == 6_144
    assert full.kv_per_token() == 52 * 2 * 2 * 128 * 2 == 53_248
    # 64 heads x 64 x 128 of SSM state and 6,144 conv channels x 4 taps per Mamba2 mixer, at 2 bytes.
    assert ours.state_bytes() == 23 * (64 * 64 * 128 + 6144 * 4) * 2 == 25_247_744


def test_a_cross_attention_layer_attends_to_one_image_at_its_most_tiles_and_caches_it_once() -> None:
    # llama-3.2-11b-vision-instruct: 32 self-attention and 8 cross-attention layers; made all self-attention, 40.
    ours, spec = priced("specs/llama/llama-3.2-11b-vision-instruct.yaml")
    full, _ = priced("specs/llama/llama-3.2-11b-vision-instruct.yaml", full="full_attention")
    image = 4 * 1601  # max_num_tiles x (560 // 14) ** 2 + 1 patches and class token per tile
    per_pair = 2 * 32 * (128 + 128)  # 32 heads, scores and weighted sums over head width 128
    cross = [group for group in ours.groups if group.attention == "cross"]
    assert [(group.count, group.dense, group.causal) for group in cross] == [(1, 4096 * image * per_pair,
                                                                              4096 * image * per_pair)] * 8
    assert ours.attention("dense") == 32 * 4096 * 4096 * per_pair + 8 * 4096 * image * per_pair \
        == 12_234_214_342_656
    assert full.attention("dense") == 40 * 4096 * 4096 * per_pair == 10_995_116_277_760
    # the text's keys and values in the 32 self-attention layers (8 KV heads x 128 x 2 x 2 bytes); the image's, once
    # per sequence, in the 8 cross-attention layers
    assert (ours.kv_per_token(), full.kv_per_token()) == (32 * 8 * 128 * 2 * 2, 40 * 8 * 128 * 2 * 2)
    assert ours.state_bytes() == 8 * 2 * 8 * 128 * image * 2 == 209_846_272
    assert spec.vision.max_num_tiles * spec.vision.num_position_embeddings == image
    # its q_proj, o_proj and MLP over the text's 4,096 tokens, its k_proj and v_proj (1,024 x 4,096 each) once over
    # the image's
    text = 2 * 4096 * 4096 + 3 * 14336 * 4096
    assert [group.weights for group in cross] == [2 * (4096 * text + image * 2 * 1024 * 4096)] * 8


@pytest.mark.parametrize("relative, expected", [
    ("specs/llama/llama-3.1-8b.yaml", (1, 4096, 131072)),
    ("specs/gpt2/gpt2.yaml", (1, 1024, 4096)),
])
def test_an_artifact_states_one_and_4096_tokens_and_the_longest_context(relative: str, expected: tuple) -> None:
    checked = check_file(ROOT / relative, relative, PROFILES)
    assert artifact_seq_lens(checked.spec) == expected


def test_training_is_three_forwards_and_per_token_the_sequence_divided() -> None:
    ours, _ = priced("specs/llama/llama-3.1-8b.yaml", seq_len=128)
    assert ours.forward("dense") == 1_929_782_493_184  # FlopCounterMode's figure (tests/test_flops_reference.py)
    assert ours.training("dense") == 3 * 1_929_782_493_184
    assert ours.per_token("dense") == 1_929_782_493_184 // 128 == 15_076_425_728
    with pytest.raises(ValueError, match="a sequence length is at least 1 token, got 0"):
        priced("specs/llama/llama-3.1-8b.yaml", seq_len=0)


def test_the_site_draws_a_flops_bar_per_kind_beside_the_parameter_bar() -> None:
    document = json.loads((ROOT / "resolved" / "gemma-3-27b.json").read_text(encoding="utf-8"))
    segments = flops_segments(document["flops"], {"sliding_attention": "#111111", "full_attention": "#222222"})
    assert [(s["label"], s["count"], s["colour"], s["opacity"]) for s in segments] == [
        ("sliding_attention matmuls", 52 * 2 * 4096 * 412_876_800, "#111111", "1"),
        ("sliding_attention attention", 52 * 4096 * 4096 * 2 * 32 * 256, "#111111", "0.55"),
        ("full_attention matmuls", 10 * 2 * 4096 * 412_876_800, "#222222", "1"),
        ("full_attention attention", 10 * 4096 * 4096 * 2 * 32 * 256, "#222222", "0.55"),
        ("head", 2 * 4096 * 262_208 * 5376, "#59a14f", "1")]
    assert sum(s["count"] for s in segments) == 58_176_733_184 * 4096
    assert flops_segments({"unpriced": "no weights"}, {}) is None


def test_show_states_the_flops_at_the_sequence_length_asked_for() -> None:
    result = CliRunner().invoke(main, ["show", "gpt2", "--seq-len", "128", "--format", "json", "--root", str(ROOT),
                                       "--no-cache"])
    flops = json.loads(result.output)["flops"]
    # FlopCounterMode's figure for gpt2 at 128 tokens (tests/test_flops_reference.py), float32 bytes.
    assert (result.exit_code, flops["seq_len"], flops["forward_dense"], flops["kv_cache_bytes"]) == \
        (0, 128, 32_228_179_968, 128 * 73_728)
    assert flops["training_dense"] == 3 * 32_228_179_968
    assert flops["kinds"]["full_attention"]["attention_causal"] == 12 * 128 * 129 // 2 * 2 * 12 * 128


def test_a_selective_scan_reads_its_state_once_per_token_and_holds_a_constant_state() -> None:
    # mamba-130m-hf: 24 Mamba 1 mixers of 1536 channels, state 16, conv 4 (FlopCounterMode over transformers'
    # forward gives the same totals: tests/test_flops_reference.py).
    one, spec = priced("specs/mamba/mamba-130m-hf.yaml", 1)
    many, _ = priced("specs/mamba/mamba-130m-hf.yaml", 128)
    scan, conv = 2 * 1536 * 16, 2 * 1536 * 4
    assert (one.attention("dense"), one.attention("causal")) == (24 * (scan + conv * 7),) * 2
    assert many.attention("dense") == many.attention("causal") == 24 * (128 * scan + conv * 131)
    assert (one.forward("dense"), many.forward("dense")) == (259_780_608, 33_026_310_144)
    assert one.state_bytes() == many.kv_bytes() == 24 * (1536 * 16 + 1536 * 4) * 4  # float32, no per-token cache
    assert one.groups[0].attention == "ssm"


def test_an_ssd_scan_runs_per_head_in_chunks_of_its_state_and_head_widths() -> None:
    spec = ModelSpec.from_dict({"name": "m2", "arch": "mamba2", "hidden_size": 64, "num_hidden_layers": 2,
                                "num_attention_heads": 1, "vocab_size": 100, "norm_bias": False, "tie_word_embeddings": False,
                                "ssm_state_size": 16, "ssm_conv_kernel": 4, "ssm_expand": 2, "ssm_num_heads": 8,
                                "ssm_n_groups": 2})
    figures = model_flops(spec, PROFILES.get("mamba2"), spec_layer_stack(spec, PROFILES), 1)
    # one chunk of 256 per head of state 16 and width 128 / 8 = 16; a conv over 128 + 2 * 2 * 16 channels
    head = 2 * 256 * 256 * (16 + 16) + 4 * 256 * 16 * 16 + 2 * 2 ** 2 * 16 * 16
    causal = 2 * (256 * 257 // 2) * (16 + 16) + 4 * 256 * 16 * 16 + 2 * 3 * 16 * 16
    conv = 2 * 192 * 4 * 7
    assert (figures.attention("dense"), figures.attention("causal")) == (2 * (8 * head + conv), 2 * (8 * causal + conv))
    assert figures.state_bytes() == 2 * (128 * 16 + 192 * 4) * 2  # bfloat16
