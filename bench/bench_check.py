"""Benchmark: ``modelspec check`` (all five passes) against ``check-jsonschema`` (one schema pass).

Generates N valid, varied specs (dense, MoE with shared experts and MTP, hybrid
linear/full attention with a vision tower), then times, in one run, on the same
files:

- ``check-jsonschema --schemafile schemas/model-spec.schema.json FILES``
- ``modelspec check DIR`` with ``--jobs 1`` and with the default (every core, for a large run)
- ``modelspec --help`` (start-up cost)

Each command runs ``--repeat`` times; the best wall time is reported, with the
ratio modelspec / check-jsonschema (target: at most 0.5). Needs
``check-jsonschema`` on PATH (``pip install check-jsonschema``).

Usage: ``python bench/bench_check.py [--sizes 1000 10000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "model-spec.schema.json"

DENSE = """\
name: dense-{i}
arch: llama
hidden_size: {hidden}
num_hidden_layers: {layers}
num_attention_heads: 32
vocab_size: 128256
num_key_value_heads: 8
intermediate_size: {ffn}
max_position_embeddings: 131072
tie_word_embeddings: false
qkv_bias: false
mlp_bias: false
torch_dtype: bfloat16
"""

MOE = """\
name: moe-{i}
arch: deepseek_v3
hidden_size: 7168
num_hidden_layers: {layers}
num_attention_heads: 128
vocab_size: 129280
num_key_value_heads: 128
intermediate_size: 18432
max_position_embeddings: 163840
num_experts: 256
num_experts_per_tok: 8
num_shared_experts: 1
moe_intermediate_size: {ffn}
first_k_dense_replace: 3
mtp_depth: 1
kv_lora_rank: 512
q_lora_rank: 1536
qk_rope_head_dim: 64
qk_nope_head_dim: 128
v_head_dim: 128
tie_word_embeddings: false
qkv_bias: false
torch_dtype: bfloat16
"""

HYBRID = """\
name: hybrid-{i}
arch: qwen3_5_moe
hidden_size: 2048
num_hidden_layers: 8
num_attention_heads: 16
vocab_size: 248320
num_key_value_heads: 2
head_dim: 256
max_position_embeddings: 262144
num_experts: 256
num_experts_per_tok: 8
num_shared_experts: 1
moe_intermediate_size: {ffn}
shared_expert_intermediate_size: 512
mtp_depth: 1
attn_output_gate: true
tie_word_embeddings: false
qk_norm: true
shared_expert_gate: true
torch_dtype: bfloat16
linear_num_key_heads: 16
linear_key_head_dim: 128
linear_num_value_heads: 32
linear_value_head_dim: 128
linear_conv_kernel_dim: 4
layer_types:
- linear_attention
- linear_attention
- linear_attention
- full_attention
- linear_attention
- linear_attention
- linear_attention
- full_attention
vision:
  hidden_size: 1152
  num_hidden_layers: 27
  num_attention_heads: 16
  intermediate_size: 4304
  out_hidden_size: 2048
  patch_size: 16
  spatial_merge_size: 2
  num_position_embeddings: 2304
"""


def generate(folder: Path, count: int) -> None:
    """Write *count* valid specs into *folder*, cycling through the three shapes."""
    templates = (DENSE, MOE, HYBRID)
    for i in range(count):
        text = templates[i % 3].format(i=i, hidden=4096 + 64 * (i % 7), layers=32 + i % 30, ffn=512 + 64 * (i % 9))
        (folder / f"spec-{i:05d}.yaml").write_text(text, encoding="utf-8")


def best_time(command: list[str], cwd: Path, repeat: int) -> float:
    """The best wall time of *repeat* runs of *command*, in seconds; fails loudly on a non-zero exit."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command[:3])} ... exited {done.returncode}:\n{done.stderr[-2000:]}")
    return min(times)


def main() -> None:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    modelspec = shutil.which("modelspec") or str(Path(sys.executable).parent / "modelspec")
    cjs = shutil.which("check-jsonschema") or str(Path(sys.executable).parent / "check-jsonschema")
    with tempfile.TemporaryDirectory() as scratch:
        scratch_path = Path(scratch)
        (scratch_path / ".git").mkdir()  # make the scratch folder its own repository root
        help_time = best_time([modelspec, "--help"], scratch_path, max(args.repeat, 5))
        print(f"modelspec --help: {help_time * 1000:.0f} ms")
        print(f"{'files':>7} {'check-jsonschema':>17} {'modelspec -j1':>14} {'ratio':>6} {'default jobs':>14} "
              f"{'ratio':>6} {'us/spec -j1':>12}")
        for size in args.sizes:
            folder = scratch_path / f"specs-{size}"
            folder.mkdir()
            generate(folder, size)
            files = sorted(str(p) for p in folder.iterdir())
            reference = best_time([cjs, "--schemafile", str(SCHEMA), *files], scratch_path, args.repeat)
            one = best_time([modelspec, "check", "-q", "--jobs", "1", str(folder)], scratch_path, args.repeat)
            two = best_time([modelspec, "check", "-q", str(folder)], scratch_path, args.repeat)
            print(f"{size:>7} {reference:>16.2f}s {one:>13.2f}s {one / reference:>6.2f} {two:>13.2f}s "
                  f"{two / reference:>6.2f} {one / size * 1e6:>12.0f}")


if __name__ == "__main__":
    main()
