"""Benchmark: the strict loader against a plain ``yaml.load`` on a realistic spec.

Prints microseconds per file for ``pipeline.spec.yaml_source.load_bytes`` and for
``yaml.load(..., Loader=CSafeLoader)`` (the fastest lenient load PyYAML offers)
on a DeepSeek-V3-like spec of about 40 keys, and their ratio; then the same
with the pure-Python parser, the fallback when PyYAML has no libyaml; then
``dump`` against ``yaml.dump`` with the same base dumper. The target is a
ratio of about 2 or less. Run:
``.venv/bin/python bench/bench_yaml_source.py``.
"""

from __future__ import annotations

import timeit
from typing import Callable

import yaml

from pipeline.spec import yaml_source

# A DeepSeek-V3-like spec (from its published config.json), with a stated
# layer stack, a vision tower and per-kind op counts, as a catalogue entry has.
SPEC = b"""\
# DeepSeek-V3 (671B total, 37B active), from deepseek-ai/DeepSeek-V3 config.json
name: deepseek-v3
arch: deepseek_v3
hidden_size: 7168
num_hidden_layers: 61
num_attention_heads: 128
num_key_value_heads: 128
vocab_size: 129280
intermediate_size: 18432
max_position_embeddings: 163840
num_experts: 256
num_experts_per_tok: 8
num_shared_experts: 1
moe_intermediate_size: 2048
first_k_dense_replace: 3
mtp_depth: 1
kv_lora_rank: 512
q_lora_rank: 1536
qk_rope_head_dim: 64
qk_nope_head_dim: 128
v_head_dim: 128
tie_word_embeddings: false
qk_norm: false
qkv_bias: false
o_bias: false
mlp_bias: false
norm_bias: false
layer_norms: 2
torch_dtype: bfloat16
rms_norm_eps: 1.0e-06
rope_theta: 10000
routed_scaling_factor: 2.5
scoring_func: sigmoid
topk_method: noaux_tc
n_group: 8
topk_group: 4
norm_topk_prob: true
hidden_act: silu
rope_scaling:
  type: yarn
  factor: 40
  beta_fast: 32
  beta_slow: 1
  mscale: 1.0
  mscale_all_dim: 1.0
  original_max_position_embeddings: 4096
layers:
- kind: dense
  count: 3
- kind: moe
  count: 58
- kind: moe
  count: 1
  mtp: true
ops:
  dense: {attMM: 4, attBMM: 2, ffMM: 3, softmax: 1, dropout: 0, normOp: 2, gather: 0, headCast: 1, ffAct: 1, linrec: 0}
  moe: {attMM: 4, attBMM: 2, ffMM: 3, softmax: 2, dropout: 0, normOp: 2, gather: 0, headCast: 1, ffAct: 1, linrec: 0}
quantization:
  quant_method: fp8
  fmt: e4m3
  activation_scheme: dynamic
  weight_block_size: [128, 128]
"""

ROUNDS = 2000


def per_file_us(run: Callable[[], object]) -> float:
    """Best-of-5 microseconds per call of *run*."""
    return min(timeit.repeat(run, number=ROUNDS, repeat=5)) / ROUNDS * 1e6


def compare(label: str, loader: type) -> None:
    """Time both loads with *loader* as the parser and print one line."""
    default, yaml_source._LOADER = yaml_source._LOADER, loader
    try:
        doc = yaml_source.load_bytes(SPEC, "deepseek-v3.yaml")
        assert not doc.problems and doc.data == yaml.load(SPEC, Loader=loader), doc.problems
        ours = per_file_us(lambda: yaml_source.load_bytes(SPEC, "deepseek-v3.yaml"))
    finally:
        yaml_source._LOADER = default
    plain = per_file_us(lambda: yaml.load(SPEC, Loader=loader))
    print(f"{label:<25} load_bytes {ours:8.1f} us   yaml.load {plain:8.1f} us   ratio {ours / plain:4.2f}")


def main() -> None:
    keys = len(yaml.load(SPEC, Loader=yaml.SafeLoader))
    print(f"spec: {len(SPEC)} bytes, {keys} top-level keys; best of 5 x {ROUNDS} loads")
    if yaml.__with_libyaml__:
        compare("libyaml (CSafeLoader)", yaml.CSafeLoader)
    compare("pure Python (SafeLoader)", yaml.SafeLoader)
    data = yaml_source.load_bytes(SPEC, "deepseek-v3.yaml").data
    dumper = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper
    ours = per_file_us(lambda: yaml_source.dump(data))
    plain = per_file_us(lambda: yaml.dump(data, Dumper=dumper, sort_keys=False))
    print(f"{'dump (' + dumper.__name__ + ')':<25} dump       {ours:8.1f} us   yaml.dump {plain:8.1f} us   "
          f"ratio {ours / plain:4.2f}")


if __name__ == "__main__":
    main()
