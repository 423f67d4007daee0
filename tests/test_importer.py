"""Tests of ``modelspec import`` and its mapping, :mod:`pipeline.importer.config_json`.

The catalogue is the importer's output: every config of ``tests/data/configs``
imported as ``catalogue.tsv`` says gives its committed spec byte for byte.
Every row of the key tables has a case of its own (a test fails when a row
has none), every ignored key is shown not to change the spec, and each
family record is checked against the op profiles. The refusals (an unknown
key, a key at both levels, a conflict with the modelling code, an unknown
model type, JSON that is not strict) are asserted as exact located lines.
"""

from __future__ import annotations

import copy
import json
import shutil
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.commands.import_ import MAX_BYTES, MAX_DEPTH, MAX_NUMBER_CHARS, read_config
from pipeline.pricing.config_keys import VISION_KEYS
from pipeline.importer.config_json import (
    CODES,
    IGNORED,
    KEYS,
    TRANSFORMS,
    VISION_IGNORED,
    ConfigImportError,
    import_config,
)
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.pricing.parameters import model_symbols
from pipeline.pricing.weights import resolve
from pipeline.spec.problems import Location
from budget import examples

from bundled import ARCHS, LANGUAGE_ARCHS

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
CONFIGS = DATA / "configs"
CASES = DATA / "cases"


def _catalogue() -> List[Tuple[str, str, str, str]]:
    """The rows of catalogue.tsv: (config file, spec path, name, source)."""
    lines = (CONFIGS / "catalogue.tsv").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines if line and not line.startswith("#")]


CATALOGUE = _catalogue()


def run(args: Sequence[str]):
    """Run ``modelspec ARGS``; stdout and stderr apart."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def imported(config: Mapping[str, Any], **options: Any) -> Dict[str, Any]:
    """The spec mapping *config* imports to."""
    return dict(import_config(config, load_op_profiles(), fallback_name="test", **options).data)


def refusals(config: Any, **options: Any) -> List[Tuple[Tuple[str, ...], str, str]]:
    """The ``(path, code, message)`` of each issue importing *config* raises."""
    with pytest.raises(ConfigImportError) as caught:
        import_config(config, load_op_profiles(), fallback_name="test", **options)
    return [(issue.path, issue.code, issue.message) for issue in caught.value.issues]


def not_read(path: str, model_type: str, arch: str = "", tower: bool = False) -> str:
    """The refusal of a shared key *path* that *model_type*'s config class does not read."""
    section = "vision_shared" if tower else "shared"
    return (f"{path} is not a key model_type {model_type!r}'s config class reads (import.{section} in "
            f"op_profiles/{arch or model_type}.yaml does not list it), so it sizes nothing there; if the modelling "
            "code reads it all the same, list it under import.code_reads with the line that does, else under "
            "import.unread with why, or pass --allow-unknown to import without it")


def with_(base: Mapping[str, Any], **changes: Any) -> Dict[str, Any]:
    """A copy of *base* with *changes*; a change to ``...`` removes the key."""
    config = copy.deepcopy(dict(base))
    for key, value in changes.items():
        if value is ...:
            config.pop(key)
        else:
            config[key] = value
    return config


# ---- the catalogue ------------------------------------------------------------------

def test_catalogue_table_covers_every_config_and_every_spec():
    assert sorted(row[0] for row in CATALOGUE) == sorted(p.name for p in CONFIGS.glob("*.json"))
    assert sorted(row[1] for row in CATALOGUE) == sorted(p.relative_to(ROOT).as_posix()
                                                         for p in (ROOT / "specs").rglob("*.yaml"))
    assert sorted(row[2] for row in CATALOGUE) == sorted(Path(row[1]).stem for row in CATALOGUE)


@pytest.mark.parametrize("config, spec, name, source", CATALOGUE, ids=[row[2] for row in CATALOGUE])
def test_import_gives_the_committed_spec_byte_for_byte(tmp_path, config, spec, name, source):
    (tmp_path / "schemas").mkdir()
    shutil.copy(ROOT / "schemas" / "model-spec.schema.json", tmp_path / "schemas")
    out = tmp_path / spec
    out.parent.mkdir(parents=True)
    result = run(["import", str(CONFIGS / config), "--name", name, "-o", str(out), "--source", source,
                  "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", f"wrote {spec}\n")
    assert out.read_bytes() == (ROOT / spec).read_bytes()


def test_import_writes_to_stdout_without_the_schema_line():
    result = run(["import", str(CONFIGS / "llama-3.1-8b.json"), "--root", str(ROOT)])
    committed = (ROOT / "specs" / "llama" / "llama-3.1-8b.yaml").read_text(encoding="utf-8").splitlines()
    expected = ["# imported by modelspec import from llama-3.1-8b.json", "# explain any hand edit in this header"]
    expected += committed[committed.index("---"):]
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines() == expected


# ---- one case per key row ------------------------------------------------------------

LLAMA = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
         "vocab_size": 100, "intermediate_size": 128}
MIXTRAL = {"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 4, "vocab_size": 100, "intermediate_size": 128, "num_local_experts": 4,
           "num_experts_per_tok": 2}
GPT_OSS = {"model_type": "gpt_oss", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 4, "vocab_size": 100, "intermediate_size": 32, "num_local_experts": 4,
           "num_experts_per_tok": 2,
           "sliding_window": 16}
QWEN2 = {"model_type": "qwen2", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
         "num_key_value_heads": 4, "vocab_size": 100, "intermediate_size": 128}
QWEN3_MOE = {"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
             "num_key_value_heads": 4, "vocab_size": 100, "num_experts": 8, "num_experts_per_tok": 2,
             "moe_intermediate_size": 32,
             "decoder_sparse_step": 1, "mlp_only_layers": []}
QWEN2_MOE = {"model_type": "qwen2_moe", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
             "num_key_value_heads": 4, "vocab_size": 100, "num_experts": 8, "num_experts_per_tok": 2,
             "moe_intermediate_size": 32,
             "shared_expert_intermediate_size": 48}
PHIMOE = {"model_type": "phimoe", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8,
          "vocab_size": 100, "intermediate_size": 32, "num_local_experts": 4}
DBRX = {"model_type": "dbrx", "d_model": 64, "n_layers": 2, "n_heads": 4, "vocab_size": 100,
        "attn_config": {"kv_n_heads": 2, "clip_qkv": 8, "rope_theta": 500000, "model_type": ""},
        "ffn_config": {"ffn_hidden_size": 32, "moe_num_experts": 4, "moe_top_k": 2, "model_type": ""}}
DOTS1 = {"model_type": "dots1", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
         "num_key_value_heads": 4, "vocab_size": 100, "intermediate_size": 48, "moe_intermediate_size": 16,
         "n_routed_experts": 4,
         "num_experts_per_tok": 2, "n_shared_experts": 1, "first_k_dense_replace": 1}
LINEAR = {"linear_num_key_heads": 2, "linear_key_head_dim": 16, "linear_num_value_heads": 4,
          "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4}
QWEN3_NEXT = {"model_type": "qwen3_next", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
              "num_key_value_heads": 4, "vocab_size": 100, "head_dim": 32, "num_experts": 8, "num_experts_per_tok": 2,
              "moe_intermediate_size": 32, "shared_expert_intermediate_size": 32, "decoder_sparse_step": 1,
              "mlp_only_layers": [], "full_attention_interval": 2, **LINEAR}
QWEN3_5 = {"model_type": "qwen3_5_text", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
           "vocab_size": 100, "head_dim": 32, "intermediate_size": 128,
           "layer_types": ["linear_attention", "full_attention"], **LINEAR}
DEEPSEEK = {"model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
            "num_key_value_heads": 4, "vocab_size": 100, "intermediate_size": 128, "moe_intermediate_size": 32,
            "n_routed_experts": 8,
            "num_experts_per_tok": 2, "first_k_dense_replace": 1, "moe_layer_freq": 1, "kv_lora_rank": 16,
            "q_lora_rank": 32, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16, "v_head_dim": 16}
GEMMA = {"model_type": "gemma3_text", "hidden_size": 64, "num_hidden_layers": 6, "num_attention_heads": 4,
         "vocab_size": 100, "head_dim": 16, "intermediate_size": 128, "sliding_window": 16,
         "sliding_window_pattern": 3}
STARCODER2 = {**LLAMA, "model_type": "starcoder2", "num_key_value_heads": 4, "intermediate_size": 128}
COHERE = {**LLAMA, "model_type": "cohere"}
PHI = {**LLAMA, "model_type": "phi"}
STABLELM = {**LLAMA, "model_type": "stablelm", "num_key_value_heads": 4}
SMOLLM3 = {**LLAMA, "model_type": "smollm3", "num_key_value_heads": 4, "num_hidden_layers": 8,
           "use_sliding_window": True, "sliding_window": 16}
ROBERTA = {**LLAMA, "model_type": "roberta"}
PIXTRAL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64,
           "patch_size": 14, "head_dim": 16, "image_size": 1540, "rope_theta": 10000.0, "model_type": "pixtral"}
MISTRAL3 = {"model_type": "mistral3", "text_config": {**LLAMA, "model_type": "mistral", "num_key_value_heads": 4},
            "vision_config": PIXTRAL}
MISTRAL3_TOWER = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "name": "vision",
                  "intermediate_size": 64, "patch_size": 14, "projector_bias": False,
                  "layers": [{"kind": "gated_encoder", "count": 2}]}
QWEN2_VL = {**QWEN2, "model_type": "qwen2_vl", "vision_config": {"hidden_size": 64, "embed_dim": 32}}
LLAMA4 = {"model_type": "llama4_text", "hidden_size": 16, "intermediate_size": 8, "intermediate_size_mlp": 24,
          "num_hidden_layers": 4, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 8, "vocab_size": 64,
          "num_local_experts": 3, "num_experts_per_tok": 1}
LLAMA4_VL = {"model_type": "llama4", "text_config": LLAMA4,
             "vision_config": {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1,
                               "intermediate_size": 16, "image_size": 16, "patch_size": 4, "vision_output_dim": 32,
                               "projector_input_dim": 12, "projector_output_dim": 32}}
_L4_CHUNKED, _L4_FULL = "chunked_attention_qk_norm_moe", "full_attention_moe"
NEMOTRON = {"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
            "num_key_value_heads": 4, "vocab_size": 100, "intermediate_size": 32, "hybrid_override_pattern": "ME*-",
            "n_routed_experts": 8,
            "n_shared_experts": 1, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
            "moe_shared_expert_intermediate_size": 48, "mamba_num_heads": 8, "mamba_head_dim": 16, "n_groups": 2,
            "ssm_state_size": 32, "conv_kernel": 4}
MAMBA = {"model_type": "mamba", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 100}
FALCON = {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
          "vocab_size": 100}
MAMBA2 = {"model_type": "mamba2", "hidden_size": 64, "num_hidden_layers": 2, "vocab_size": 100, "num_heads": 8,
          "head_dim": 16, "n_groups": 2}
BAMBA = {"model_type": "bamba", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
         "num_key_value_heads": 2, "vocab_size": 100, "intermediate_size": 96, "mamba_n_heads": 8, "mamba_d_head": 16}
GPT2 = {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100, "n_inner": None}
BIGCODE = {**GPT2, "model_type": "gpt_bigcode"}
FALCON = {"model_type": "falcon", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}
OPT = {"model_type": "opt", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
       "ffn_dim": 128}
BLOOM = {"model_type": "bloom", "n_embed": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100}
T5 = {"model_type": "t5", "d_model": 64, "num_layers": 2, "num_heads": 4, "vocab_size": 100, "d_ff": 128}
BART = {"model_type": "bart", "d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
        "decoder_attention_heads": 4, "vocab_size": 100, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128}
TOWER = {"hidden_size": 32, "depth": 4, "num_heads": 2, "intermediate_size": 64, "fullatt_block_indexes": [1, 3]}
QWEN2_5_VL = {**QWEN2, "model_type": "qwen2_5_vl", "vision_config": TOWER}
GLM4V = {"model_type": "glm4v", "text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                                                "vocab_size": 100},
         "vision_config": {"hidden_size": 32, "depth": 3, "num_heads": 2, "image_size": 56, "patch_size": 14}}
IDEFICS3 = {"model_type": "idefics3", "scale_factor": 4,
            "text_config": {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                            "vocab_size": 100, "intermediate_size": 128},
            "vision_config": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 64,
                              "patch_size": 16}}
QWEN3_VL = {"model_type": "qwen3_vl", "text_config": {"hidden_size": 64, "num_hidden_layers": 2,
                                                      "num_attention_heads": 4, "num_key_value_heads": 4,
                                                      "vocab_size": 100},
            "vision_config": {"hidden_size": 32, "depth": 4, "num_heads": 2, "deepstack_visual_indexes": [0, 2]}}
SIGLIP = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "image_size": 64, "patch_size": 16}
GEMMA_VL = {"model_type": "gemma3", "text_config": {**GEMMA}, "vision_config": SIGLIP}
MLLAMA_TOWER = {"hidden_size": 32, "num_hidden_layers": 2, "num_global_layers": 1, "attention_heads": 2,
                "intermediate_size": 64, "image_size": 32, "patch_size": 8, "max_num_tiles": 2,
                "supported_aspect_ratios": [[1, 1], [1, 2], [2, 1]], "vision_output_dim": 96}
MLLAMA = {"model_type": "mllama", "text_config": {"model_type": "mllama_text_model", "hidden_size": 64,
                                                  "num_hidden_layers": 3, "num_attention_heads": 4,
                                                  "num_key_value_heads": 2, "vocab_size": 100,
                                                  "intermediate_size": 128, "cross_attention_layers": [1]},
          "vision_config": MLLAMA_TOWER}
QWEN3_5_VL = {"model_type": "qwen3_5", "text_config": {**QWEN3_5, "model_type": "qwen3_5_text"},
              "vision_config": {"hidden_size": 32, "depth": 2, "num_heads": 2, "num_position_embeddings": 16}}

S, F, L = "sliding_attention", "full_attention", "linear_attention"

# (row key, config, the fields the spec states), or (row key, config, the exact issues); one or more per row.
KEY_CASES: List[Tuple[str, Dict[str, Any], Any]] = [
    ("model_type", LLAMA, {"arch": "llama", "qk_norm": False, "norm_bias": False}),
    ("_name_or_path", with_(LLAMA, _name_or_path="meta-llama/Llama-X-HF"), {"name": "llama-x-hf"}),
    ("hidden_size", LLAMA, {"hidden_size": 64}),
    ("num_hidden_layers", LLAMA, {"num_hidden_layers": 2}),
    ("num_attention_heads", LLAMA, {"num_attention_heads": 4}),
    ("vocab_size", LLAMA, {"vocab_size": 100}),
    ("num_key_value_heads", with_(LLAMA, num_key_value_heads=2), {"num_key_value_heads": 2}),
    ("head_dim", with_(LLAMA, head_dim=32), {"head_dim": 32}),
    ("intermediate_size", LLAMA, {"intermediate_size": 128}),
    ("max_position_embeddings", with_(LLAMA, max_position_embeddings=4096), {"max_position_embeddings": 4096}),
    ("num_experts", QWEN3_MOE, {"num_experts": 8, "num_shared_experts": 0}),
    ("n_routed_experts", DEEPSEEK, {"num_experts": 8}),
    # Idefics3Connector: scale_factor x scale_factor patches into one token (the tower's spatial_merge_size), 2 unstated
    ("scale_factor", IDEFICS3, {"vision": {**imported(IDEFICS3)["vision"], "spatial_merge_size": 4}}),
    ("scale_factor", with_(IDEFICS3, scale_factor=...), {"vision": {**imported(IDEFICS3)["vision"],
                                                                    "spatial_merge_size": 2}}),
    ("num_local_experts", MIXTRAL, {"num_experts": 4, "num_shared_experts": 0}),
    ("num_local_experts", {**{k: v for k, v in QWEN3_MOE.items() if k != "num_experts"}, "num_local_experts": 8},
     {"num_experts": 8, "num_shared_experts": 0}),
    ("num_local_experts", {**{k: v for k, v in DEEPSEEK.items() if k != "n_routed_experts"}, "num_local_experts": 8},
     {"num_experts": 8}),
    ("num_mtp_layers", with_(DEEPSEEK, num_mtp_layers=1), {"mtp_depth": 1}),
    ("num_experts_per_tok", MIXTRAL, {"num_experts_per_tok": 2}),
    ("experts_per_token", with_(GPT_OSS, experts_per_token=2), {"num_experts_per_tok": 2}),
    ("experts_per_token", with_(GPT_OSS, experts_per_token=3),
     [(("experts_per_token",), "import.conflict",
       "num_experts_per_tok is 2 from num_experts_per_tok but 3 from experts_per_token; state one value")]),
    ("n_shared_experts", with_(DEEPSEEK, n_shared_experts=1), {"num_shared_experts": 1, "shared_expert_gate": False}),
    ("moe_intermediate_size", QWEN3_MOE, {"moe_intermediate_size": 32}),
    ("shared_expert_intermediate_size", QWEN3_NEXT,
     {"shared_expert_intermediate_size": 32, "num_shared_experts": 1, "shared_expert_gate": True}),
    ("first_k_dense_replace", DEEPSEEK, {"first_k_dense_replace": 1}),
    ("num_nextn_predict_layers", with_(DEEPSEEK, num_nextn_predict_layers=1), {"mtp_depth": 1}),
    ("mtp_num_hidden_layers", with_(QWEN3_5, mtp_num_hidden_layers=1), {"mtp_depth": 1}),
    ("mtp_use_dedicated_embeddings", with_(QWEN3_5, mtp_use_dedicated_embeddings=False), {"arch": "qwen3_5"}),
    ("mtp_use_dedicated_embeddings", with_(QWEN3_5, mtp_use_dedicated_embeddings=True),
     [(("mtp_use_dedicated_embeddings",), "import.unsupported",
       "mtp_use_dedicated_embeddings is true: true gives the MTP layers an embedding table of their own, which an "
       "MTP layer (a repeat of the last body kind) does not price; only false is imported")]),
    ("kv_lora_rank", DEEPSEEK, {"kv_lora_rank": 16}),
    ("q_lora_rank", DEEPSEEK, {"q_lora_rank": 32}),
    ("qk_rope_head_dim", DEEPSEEK, {"qk_rope_head_dim": 8}),
    ("qk_nope_head_dim", DEEPSEEK, {"qk_nope_head_dim": 16}),
    ("v_head_dim", DEEPSEEK, {"v_head_dim": 16}),
    ("attn_output_gate", with_(QWEN3_5, attn_output_gate=True), {"attn_output_gate": True}),
    # Qwen3_5TextConfig does not read it: Qwen3_5Attention always gates
    ("attn_output_gate", with_(QWEN3_5, attn_output_gate=False), {"attn_output_gate": True}),
    ("tie_word_embeddings", with_(LLAMA, tie_word_embeddings=True), {"tie_word_embeddings": True}),
    ("tie_word_embeddings", LLAMA, {"tie_word_embeddings": False}),
    ("attention_bias", with_(LLAMA, attention_bias=True), {"qkv_bias": True, "o_bias": True}),
    ("attention_bias", with_(QWEN2, attention_bias=False), {"qkv_bias": True, "o_bias": False}),
    ("attention_bias", with_(LLAMA, model_type="seed_oss", num_key_value_heads=4, attention_bias=False),
     {"qkv_bias": False, "o_bias": False, "head_dim": 128}),
    ("attention_out_bias", with_(LLAMA, model_type="seed_oss", num_key_value_heads=4, attention_out_bias=True),
     {"qkv_bias": True, "o_bias": True, "head_dim": 128}),
    ("mlp_bias", with_(LLAMA, mlp_bias=True), {"mlp_bias": True}),
    ("torch_dtype", with_(LLAMA, torch_dtype="torch.bfloat16"), {"torch_dtype": "bfloat16"}),
    ("dtype", with_(LLAMA, dtype="bfloat16", torch_dtype="bfloat16"), {"torch_dtype": "bfloat16"}),
    ("linear_num_key_heads", QWEN3_NEXT, {"linear_num_key_heads": 2}),
    ("linear_key_head_dim", QWEN3_NEXT, {"linear_key_head_dim": 16}),
    ("linear_num_value_heads", QWEN3_NEXT, {"linear_num_value_heads": 4}),
    ("linear_value_head_dim", QWEN3_NEXT, {"linear_value_head_dim": 16}),
    ("linear_conv_kernel_dim", QWEN3_NEXT, {"linear_conv_kernel_dim": 4}),
    ("layer_types", with_(GPT_OSS, layer_types=[F, S]), {"layer_types": [F, S], "sliding_window": 16}),
    ("layer_types", with_(QWEN3_5, layer_types=[L]),
     [(("layer_types",), "import.value", "layer_types lists 1 layers, but num_hidden_layers is 2; list one type "
                                         "per body layer")]),
    ("full_attention_interval", QWEN3_NEXT, {"layer_types": [L, F, L, F]}),
    # Qwen3NextConfig.__post_init__ reads full_attention_interval only when layer_types is None: the list wins
    ("full_attention_interval", with_(QWEN3_NEXT, layer_types=[L, L, L, F]), {"layer_types": [L, L, L, F]}),
    ("sliding_window_pattern", GEMMA, {"layer_types": [S, S, F, S, S, F], "sliding_window": 16}),
    # Gemma3TextConfig.__post_init__ builds layer_types from kwargs.get("sliding_window_pattern", 6), never from the
    # _sliding_window_pattern it stores: transformers 5.24.0 builds [S, S, S, S, S, F] for this config
    ("_sliding_window_pattern", with_(GEMMA, sliding_window_pattern=..., _sliding_window_pattern=2),
     {"layer_types": [S, S, S, S, S, F]}),
    ("sliding_window_pattern", with_(GEMMA, layer_types=[F, S, S, S, S, S]), {"layer_types": [F, S, S, S, S, S]}),
    # SmolLM3Config.__post_init__: with use_sliding_window and sliding_window, the layers without RoPE slide: those
    # no_rope_layers marks 0, by default each (i + 1) % no_rope_layer_interval == 0 (4)
    ("no_rope_layer_interval", SMOLLM3, {"layer_types": [F, F, F, S, F, F, F, S], "sliding_window": 16}),
    ("no_rope_layer_interval", with_(SMOLLM3, no_rope_layer_interval=2), {"layer_types": [F, S, F, S, F, S, F, S]}),
    ("no_rope_layer_interval", with_(SMOLLM3, no_rope_layer_interval=0),
     [(("no_rope_layer_interval",), "import.value", "no_rope_layer_interval must be an integer of at least 1, got 0")]),
    ("no_rope_layers", with_(SMOLLM3, no_rope_layers=[0, 1, 1, 1, 1, 1, 1, 0]),
     {"layer_types": [S, F, F, F, F, F, F, S]}),
    ("no_rope_layers", with_(SMOLLM3, use_sliding_window=False, no_rope_layers=[0, 1, 1, 1, 1, 1, 1, 0]),
     {"arch": "smollm3", "sliding_window": None}),
    ("no_rope_layers", with_(SMOLLM3, no_rope_layers=[0, 1]),
     [(("no_rope_layers",), "import.value", "no_rope_layers must list a 0 or 1 for each of the 8 layers, got [0, 1]")]),
    # a stated sliding_attention layer gets create_sliding_window_causal_mask (config.sliding_window) whatever
    # use_sliding_window says (transformers 5.24.0 SmolLM3Model.forward)
    ("no_rope_layers", with_(SMOLLM3, use_sliding_window=False, num_hidden_layers=2, layer_types=[S, F]),
     {"layer_types": [S, F], "sliding_window": 16}),
    ("sliding_window", with_(MIXTRAL, sliding_window=16), {"layer_types": [S, S], "sliding_window": 16}),
    ("sliding_window", with_(MIXTRAL, sliding_window=None), {"num_experts": 4}),
    ("sliding_window", with_(LLAMA, sliding_window=16),
     [(("sliding_window",), "import.unknown-key", not_read("sliding_window", "llama"))]),
    ("use_sliding_window", with_(QWEN2, use_sliding_window=False, sliding_window=16), {"arch": "qwen2"}),
    ("use_sliding_window", with_(QWEN2, use_sliding_window=True, sliding_window=16, max_window_layers=2),
     {"layer_types": [F, F, S, S], "sliding_window": 16}),
    ("max_window_layers", with_(QWEN2, use_sliding_window=True, sliding_window=16, max_window_layers=3),
     {"layer_types": [F, F, F, S]}),
    ("max_window_layers", with_(QWEN2_MOE, use_sliding_window=True, sliding_window=16, max_window_layers=3),
     {"layers": [{"kind": "sliding_moe", "count": 1}, {"kind": "moe", "count": 1},  # layers 0, 2 slide
                 {"kind": "sliding_moe", "count": 1}, {"kind": "moe", "count": 1}], "sliding_window": 16}),
    ("max_window_layers", with_(QWEN2_MOE, use_sliding_window=True, sliding_window=16, max_window_layers=2),
     {"layers": [{"kind": "sliding_moe", "count": 1}, {"kind": "moe", "count": 3}]}),
    ("use_sliding_window", with_(QWEN2_MOE, sliding_window=16),  # Qwen2MoeConfig's sliding_window 0 without it
     {"layers": None, "sliding_window": None, "decoder_sparse_step": None}),
    ("lm_head_bias", with_(PHIMOE, lm_head_bias=True), {"head_bias": True, "norm_bias": True}),
    ("lm_head_bias", PHIMOE, {"head_bias": False, "num_experts": 4, "num_key_value_heads": 8}),  # the defaults
    ("d_model", DBRX, {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4}),
    ("n_heads", with_(DBRX, n_heads=...), {"num_attention_heads": 16}),  # DbrxConfig(n_heads=16)
    ("n_layers", with_(DBRX, n_layers=3), {"num_hidden_layers": 3}),
    ("max_seq_len", with_(DBRX, max_seq_len=4096), {"max_position_embeddings": 4096}),
    ("attn_config.kv_n_heads", DBRX, {"num_key_value_heads": 2}),  # read inside attn_config by its dotted path
    ("attn_config.kv_n_heads", with_(DBRX, attn_config={"rope_theta": 500000}), {"num_key_value_heads": 1}),
    ("attn_config.kv_n_heads", with_(DBRX, attn_config={"kv_n_heads": 2, "sliding": 1}),
     [(("attn_config", "sliding"), "import.unknown-key",
       "attn_config.sliding is a key the importer does not know for model_type 'dbrx'; did you mean "
       "'sliding_window'? If not, list it under import.ignored in op_profiles/dbrx.yaml with why it changes nothing "
       "a cost model prices (or map it under import.keys), or pass --allow-unknown to import without it")]),
    ("ffn_config.ffn_hidden_size", DBRX, {"moe_intermediate_size": 32, "num_shared_experts": 0}),
    ("ffn_config.moe_num_experts", DBRX, {"num_experts": 4}),
    ("ffn_config.moe_top_k", with_(DBRX, ffn_config={"moe_top_k": 3}),
     {"num_experts_per_tok": 3, "num_experts": 4, "moe_intermediate_size": 3584}),  # DbrxFFNConfig's defaults
    ("max_window_layers", with_(DOTS1, max_window_layers=2),  # sliding_window not stated: Dots1Config's 4096
     {"layers": [{"kind": "dense", "count": 1}, {"kind": "moe", "count": 1}, {"kind": "sliding_moe", "count": 2}],
      "sliding_window": 4096}),
    ("max_window_layers", with_(DOTS1, sliding_window=None, max_window_layers=2),  # no window: none slides
     {"layers": None, "sliding_window": None, "first_k_dense_replace": 1}),
    ("n_shared_experts", DOTS1, {"num_shared_experts": 1, "num_experts": 4, "qk_norm": True}),
    ("qkv_bias", with_(QWEN2_MOE, qkv_bias=False), {"qkv_bias": False, "o_bias": False}),
    ("decoder_sparse_step", with_(QWEN2_MOE, decoder_sparse_step=2, intermediate_size=128),  # default 1 if unstated
     {"layers": [{"kind": "dense", "count": 1}, {"kind": "moe", "count": 1}, {"kind": "dense", "count": 1},
                 {"kind": "moe", "count": 1}], "num_shared_experts": 1, "shared_expert_gate": True}),
    ("use_sliding_window", with_(QWEN3_MOE, use_sliding_window=True, sliding_window=16),  # every layer slides
     {"layers": [{"kind": "sliding_moe", "count": 4}], "sliding_window": 16}),
    ("num_experts", with_(QWEN3_MOE, num_experts=..., num_experts_per_tok=..., moe_intermediate_size=...),
     {"num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768}),  # Qwen3MoeConfig's defaults
    ("num_experts", with_(QWEN3_MOE, mlp_only_layers=[0, 1, 2, 3], intermediate_size=128),  # no MoE layer is built
     {"num_experts": None, "num_experts_per_tok": None, "moe_intermediate_size": None,
      "layers": [{"kind": "dense", "count": 4}]}),
    ("decoder_sparse_step", with_(QWEN3_MOE, decoder_sparse_step=2, intermediate_size=128),
     {"layers": [{"kind": "dense", "count": 1}, {"kind": "moe", "count": 1}, {"kind": "dense", "count": 1},
                 {"kind": "moe", "count": 1}]}),
    ("mlp_only_layers", with_(QWEN3_MOE, mlp_only_layers=[0], intermediate_size=128),
     {"layers": [{"kind": "dense", "count": 1}, {"kind": "moe", "count": 3}]}),
    ("mlp_only_layers", with_(QWEN3_NEXT, mlp_only_layers=[0], intermediate_size=128),  # Qwen3NextMLP at layer 0
     {"layers": [{"kind": "linear_attention_dense", "count": 1}, {"kind": "full_attention", "count": 1},
                 {"kind": "linear_attention", "count": 1}, {"kind": "full_attention", "count": 1},
                 {"kind": "full_attention", "count": 1, "mtp": True}]}),
    ("use_bias", STARCODER2, {"qkv_bias": True, "o_bias": True, "mlp_bias": True, "norm_bias": True,
                              "tie_word_embeddings": True}),
    ("use_bias", with_(STARCODER2, use_bias=False), {"qkv_bias": False, "o_bias": False, "mlp_bias": False}),
    ("use_qk_norm", COHERE, {"qk_norm": False, "norm_bias": False, "tie_word_embeddings": True}),
    ("use_qk_norm", with_(COHERE, use_qk_norm=True), {"qk_norm": True}),  # check then refuses the cohere counts
    ("qk_layernorm", with_(PHI, qk_layernorm=True), {"qk_norm": True}),
    ("qk_layernorm", PHI, {"qk_norm": False, "qkv_bias": True, "norm_bias": True}),
    ("use_qkv_bias", with_(STABLELM, use_qkv_bias=True), {"qkv_bias": True, "o_bias": False, "norm_bias": True}),
    ("use_qkv_bias", STABLELM, {"qkv_bias": False}),  # StableLmConfig(use_qkv_bias=False)
    # StableLmLayerNormPerHead: one LayerNorm per head, held as an inventory entry with copies
    ("qk_layernorm", with_(STABLELM, qk_layernorm=True), {"qk_norm": True}),
    ("qk_layernorm", STABLELM, {"qk_norm": False}),  # StableLmConfig(qk_layernorm=False)
    ("position_embedding_type", with_(ROBERTA, position_embedding_type="absolute"), {"arch": "roberta"}),
    ("position_embedding_type", with_(ROBERTA, position_embedding_type="relative_key"),
     [(("position_embedding_type",), "import.unsupported",
       'position_embedding_type is "relative_key": relative_key and relative_key_query add RobertaSelfAttention\'s '
       "distance_embedding and its einsum scores, which the roberta profile does not count; only \"absolute\" is "
       "imported")]),
    ("intermediate_size_mlp", with_(LLAMA4, interleave_moe_layer_step=4),  # Llama 4's dense layers' width
     {"intermediate_size": 24, "moe_intermediate_size": 8, "shared_expert_intermediate_size": 8}),
    ("attention_chunk_size", with_(LLAMA4, attention_chunk_size=32), {"attention_chunk_size": 32}),
    ("attention_chunk_size", with_(LLAMA4, attention_chunk_size=None),  # no chunks: full attention everywhere
     {"attention_chunk_size": None, "layers": [{"kind": "full_attention_qk_norm_moe", "count": 3},
                                               {"kind": _L4_FULL, "count": 1}]}),
    ("no_rope_layers", with_(LLAMA4, no_rope_layers=[0, 1, 0, 1]),
     {"layers": [{"kind": _L4_FULL, "count": 1}, {"kind": _L4_CHUNKED, "count": 1}, {"kind": _L4_FULL, "count": 1},
                 {"kind": _L4_CHUNKED, "count": 1}]}),
    ("no_rope_layer_interval", with_(LLAMA4, no_rope_layer_interval=2),
     {"layers": [{"kind": _L4_CHUNKED, "count": 1}, {"kind": _L4_FULL, "count": 1}, {"kind": _L4_CHUNKED, "count": 1},
                 {"kind": _L4_FULL, "count": 1}]}),
    ("interleave_moe_layer_step", with_(LLAMA4, interleave_moe_layer_step=2),
     {"layers": [{"kind": "chunked_attention_qk_norm_dense", "count": 1}, {"kind": _L4_CHUNKED, "count": 1},
                 {"kind": "chunked_attention_qk_norm_dense", "count": 1}, {"kind": _L4_FULL, "count": 1}]}),
    ("moe_layers", with_(LLAMA4, moe_layers=[3]),
     {"layers": [{"kind": "chunked_attention_qk_norm_dense", "count": 3}, {"kind": _L4_FULL, "count": 1}]}),
    ("moe_layers", with_(LLAMA4, moe_layers=[4]),
     [(("moe_layers",), "import.value", "moe_layers must list layer indexes from 0 to 3, got [4]")]),
    ("type_vocab_size", with_(ROBERTA, type_vocab_size=1), {"type_vocab_size": 1}),
    ("type_vocab_size", ROBERTA, {"type_vocab_size": 2}),  # RobertaConfig(type_vocab_size=2)
    ("spatial_merge_size", with_(MISTRAL3, spatial_merge_size=2),
     {"vision": {**MISTRAL3_TOWER, "spatial_merge_size": 2}}),
    # Mistral3MultiModalProjector: linear_1 and linear_2 bias=config.multimodal_projector_bias
    ("multimodal_projector_bias", with_(MISTRAL3, multimodal_projector_bias=True),
     {"vision": {**MISTRAL3_TOWER, "projector_bias": True}}),
    ("spatial_merge_size", with_(MISTRAL3, spatial_merge_size=2, vision_config=...),
     [(("spatial_merge_size",), "import.unsupported",
       "spatial_merge_size sets the vision tower's vision.spatial_merge_size, but the config states no vision_config; "
       "state the tower, or leave the key out"),
      (("vision_config",), "import.missing",
       "model_type 'mistral3' builds a vision tower, and for a config that leaves vision_config out transformers "
       "builds its config class's default tower, which nothing here states; state vision_config as the "
       "checkpoint's config.json does")]),
    ("multimodal_projector_bias", with_(MISTRAL3, multimodal_projector_bias=False), {"arch": "mistral3"}),
    # Mistral3MultiModalProjector's linear_1 reads vision_config.hidden_size times the layers a list names: one
    # layer (an integer, or a list of one) is the priced width, more are refused by name (max_items).
    ("vision_feature_layer", with_(MISTRAL3, vision_feature_layer=-2), {"vision": MISTRAL3_TOWER}),
    ("vision_feature_layer", with_(MISTRAL3, vision_feature_layer=[-1]), {"vision": MISTRAL3_TOWER}),
    ("vision_feature_layer", with_(MISTRAL3, vision_feature_layer=[-2, -1]),
     [(("vision_feature_layer",), "import.unsupported",
       "vision_feature_layer lists 2 values: huggingface/transformers src/transformers/models/mistral3/"
       "modeling_mistral3.py Mistral3MultiModalProjector: linear_1 = nn.Linear(vision_config.hidden_size * "
       "num_feature_layers, ...), num_feature_layers 1 for an integer (which tower layer the projector reads; every "
       "tower layer runs all the same), else len(vision_feature_layer), a width no tower field states (transformers "
       "5.24.0); at most 1 is imported")]),
    ("moe_shared_expert_intermediate_size", NEMOTRON,
     {"shared_expert_intermediate_size": 48, "num_shared_experts": 1}),
    ("mamba_num_heads", NEMOTRON, {"linear_num_value_heads": 8, "layer_types": ["mamba", "moe", "attention", "mlp"]}),
    ("mamba_head_dim", NEMOTRON, {"linear_value_head_dim": 16}),
    ("n_groups", NEMOTRON, {"linear_num_key_heads": 2}),
    ("ssm_state_size", NEMOTRON, {"linear_key_head_dim": 32}),
    ("conv_kernel", NEMOTRON, {"linear_conv_kernel_dim": 4}),
    ("moe_latent_size", with_(NEMOTRON, moe_latent_size=16),  # NemotronHMoE's fc1/fc2_latent_proj: kind moe_latent
     {"moe_latent_size": 16, "layers": [{"kind": "mamba", "count": 1}, {"kind": "moe_latent", "count": 1},
                                        {"kind": "attention", "count": 1}, {"kind": "mlp", "count": 1}]}),
    ("moe_latent_size", with_(NEMOTRON, moe_latent_size=16, hybrid_override_pattern="M*-M"),  # no MoE block
     {"moe_latent_size": None, "layer_types": ["mamba", "attention", "mlp", "mamba"]}),
    ("n_routed_experts", with_(NEMOTRON, hybrid_override_pattern="ME*"),
     [(("hybrid_override_pattern",), "import.value",
       "hybrid_override_pattern must be 4 characters (num_hidden_layers), each one of 'M', '*', 'E', '-', got "
       '"ME*"')]),
    ("state_size", MAMBA, {"ssm_state_size": 16, "num_attention_heads": 1, "layer_types": None, "layers": None}),
    ("state_size", MAMBA2, {"ssm_state_size": 128}),
    ("expand", with_(MAMBA, expand=3), {"ssm_expand": 3, "ssm_intermediate_size": 192}),  # the width's default
    ("expand", MAMBA2, {"ssm_expand": 2, "ssm_intermediate_size": None}),
    ("intermediate_size", with_(MAMBA, expand=3, intermediate_size=40),  # a stated width wins (falcon-mamba-7b)
     {"ssm_expand": 3, "ssm_intermediate_size": 40}),
    ("time_step_rank", MAMBA, {"ssm_dt_rank": 4}),  # "auto": math.ceil(hidden_size / 16)
    ("time_step_rank", with_(MAMBA, time_step_rank=7), {"ssm_dt_rank": 7}),
    # a stated "auto" is MambaConfig.__post_init__'s math.ceil(hidden_size / 16), read after hidden_size wherever it
    # stands: 40 / 16 rounds up to 3
    ("time_step_rank", {"time_step_rank": "auto", **with_(MAMBA, hidden_size=40)}, {"ssm_dt_rank": 3}),
    ("time_step_rank", {"time_step_rank": "auto", **with_(MAMBA, model_type="falcon_mamba", hidden_size=33)},
     {"ssm_dt_rank": 3, "arch": "falcon_mamba"}),
    ("time_step_rank", with_(MAMBA, time_step_rank="fast"),
     [(("time_step_rank",), "spec.not-integer", "ssm_dt_rank must be an integer, got 'fast' (from time_step_rank)")]),
    ("num_heads", MAMBA2, {"ssm_num_heads": 8, "ssm_n_groups": 2, "ssm_dt_rank": None}),
    ("n_groups", with_(MAMBA2, n_groups=4), {"ssm_n_groups": 4}),
    ("conv_kernel", with_(MAMBA, conv_kernel=2), {"ssm_conv_kernel": 2}),
    ("attn_layer_indices", with_(BAMBA, attn_layer_indices=[1, 3]),
     {"layer_types": ["mamba", "full_attention", "mamba", "full_attention"], "layers": None}),
    ("attn_layer_indices", BAMBA, {"layer_types": None, "layers": None, "ssm_num_heads": 8}),  # every layer a mixer
    ("attn_layer_indices", with_(BAMBA, attn_layer_indices=[4]),
     [(("attn_layer_indices",), "import.value", "attn_layer_indices must list layer indexes from 0 to 3, got [4]")]),
    ("mamba_d_state", BAMBA, {"ssm_state_size": 256}),
    ("mamba_d_conv", with_(BAMBA, mamba_d_conv=2), {"ssm_conv_kernel": 2}),
    ("mamba_expand", BAMBA, {"ssm_expand": 2}),
    ("mamba_n_heads", BAMBA, {"ssm_num_heads": 8}),
    ("mamba_n_groups", with_(BAMBA, mamba_n_groups=2), {"ssm_n_groups": 2}),
    ("n_embd", GPT2, {"hidden_size": 64}),
    ("n_layer", GPT2, {"num_hidden_layers": 2}),
    ("n_head", GPT2, {"num_attention_heads": 4}),
    ("n_inner", GPT2, {"intermediate_size": 256, "qkv_bias": True, "o_bias": True, "mlp_bias": True,
                       "norm_bias": True, "tie_word_embeddings": True}),
    ("n_inner", with_(GPT2, n_inner=100), {"intermediate_size": 100}),
    ("n_positions", with_(GPT2, n_positions=1024), {"max_position_embeddings": 1024}),
    ("multi_query", BIGCODE, {"num_key_value_heads": 1, "num_attention_heads": 4}),
    ("multi_query", with_(BIGCODE, multi_query=False), {"num_key_value_heads": 4}),
    # the expression reads n_head whatever the order the config states them in
    ("multi_query", {"multi_query": False, **BIGCODE}, {"num_key_value_heads": 4}),
    ("multi_query", with_(BIGCODE, multi_query=False, num_key_value_heads=4), {"num_key_value_heads": 4}),
    ("multi_query", with_(BIGCODE, multi_query=True, num_key_value_heads=4),
     [(("multi_query",), "import.conflict",
       "num_key_value_heads is 4 from num_key_value_heads but 1 from multi_query (GPTBigCodeAttention: kv_heads = "
       "1 if multi_query else num_heads; GPTBigCodeConfig.__post_init__ writes num_key_value_heads the same way "
       "(transformers 5.24.0)); state one value")]),
    # multi_query left out is GPTBigCodeConfig's true, whose __post_init__ writes 1 KV head over any stated number:
    # a stated 4 was read as an alias of the flag, so its default never ran (the omission probe)
    ("multi_query", with_(BIGCODE, num_key_value_heads=4),
     [(("multi_query",), "import.conflict",
       "num_key_value_heads is 4 from num_key_value_heads but 1 from multi_query (not stated: its config class's "
       "default) (GPTBigCodeAttention: kv_heads = 1 if multi_query else num_heads; GPTBigCodeConfig.__post_init__ "
       "writes num_key_value_heads the same way (transformers 5.24.0)); state one value")]),
    ("multi_query", with_(BIGCODE, num_key_value_heads=1), {"num_key_value_heads": 1}),
    # Falcon: multi_query counts only without new_decoder_architecture, num_kv_heads only with it or without multi_query
    ("multi_query", FALCON, {"num_key_value_heads": 1, "qkv_bias": False, "o_bias": False, "mlp_bias": False}),
    ("multi_query", with_(FALCON, multi_query=False), {"num_key_value_heads": 4}),
    ("num_kv_heads", with_(FALCON, num_kv_heads=4), {"num_key_value_heads": 1}),
    ("num_kv_heads", with_(FALCON, new_decoder_architecture=True, num_kv_heads=2),
     {"num_key_value_heads": 2, "layers": [{"kind": "parallel_attention_two_norms", "count": 2}]}),
    ("num_kv_heads", with_(FALCON, new_decoder_architecture=True), {"num_key_value_heads": 4}),
    ("ffn_hidden_size", with_(FALCON, ffn_hidden_size=96), {"intermediate_size": 96}),
    ("ffn_hidden_size", FALCON, {"intermediate_size": 256}),
    ("bias", with_(FALCON, bias=True), {"qkv_bias": True, "o_bias": True, "mlp_bias": True}),
    ("ffn_dim", OPT, {"intermediate_size": 128, "max_position_embeddings": None}),
    ("enable_bias", with_(OPT, enable_bias=False), {"qkv_bias": False, "o_bias": False, "mlp_bias": False}),
    ("word_embed_proj_dim", with_(OPT, word_embed_proj_dim=64), {"hidden_size": 64}),
    ("word_embed_proj_dim", with_(OPT, word_embed_proj_dim=32),
     [(("word_embed_proj_dim",), "import.unsupported",
       "word_embed_proj_dim is 32, not hidden_size (64): OPTDecoder builds project_in and project_out (nn.Linear, "
       "bias=False) and an embed_tokens of word_embed_proj_dim columns when it differs from hidden_size "
       "(transformers 5.24.0 modeling_opt.py, OPT-350m), which the opt profile does not price; only hidden_size is "
       "imported")]),
    ("do_layer_norm_before", with_(OPT, do_layer_norm_before=True), {"norm_bias": True}),
    ("do_layer_norm_before", with_(OPT, do_layer_norm_before=False),
     [(("do_layer_norm_before",), "import.unsupported",
       "do_layer_norm_before is false: false runs each LayerNorm after its residual (OPTDecoderLayer.forward) and "
       "builds no final_layer_norm (OPTDecoder, OPT-350m), which the opt profile does not price; only true is "
       "imported")]),
    ("_remove_final_layer_norm", with_(OPT, _remove_final_layer_norm=False), {"norm_bias": True}),
    ("layer_norm_elementwise_affine", with_(OPT, layer_norm_elementwise_affine=True), {"norm_bias": True}),
    ("n_embed", BLOOM, {"hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2}),
    ("n_embed", with_(FALCON, n_embed=64), {"hidden_size": 64}),
    ("multi_query", with_(BIGCODE, multi_query=1),
     [(("multi_query",), "import.value", "multi_query must be true or false, got 1")]),
    ("reorder_and_upcast_attn", with_(GPT2, reorder_and_upcast_attn=True),
     [(("reorder_and_upcast_attn",), "import.unsupported",
       "reorder_and_upcast_attn is true: true runs GPT2Attention._upcast_and_reordered_attn, not the _attn the "
       "gpt2 profile counts; only false is imported")]),
    ("add_cross_attention", with_(GPT2, add_cross_attention=False), {"arch": "gpt2"}),
    ("add_cross_attention", with_(ROBERTA, add_cross_attention=True),
     [(("add_cross_attention",), "import.unsupported",
       "add_cross_attention is true: true gives every RobertaLayer a crossattention (transformers 5.24.0 "
       "modeling_roberta.py), which the roberta profile does not price; only false is imported")]),
    ("d_model", T5, {"hidden_size": 64}),
    ("num_heads", T5, {"num_attention_heads": 4}),
    ("d_ff", T5, {"intermediate_size": 128}),
    ("d_kv", with_(T5, d_kv=16), {"head_dim": 16}),
    ("num_layers", T5, {"num_hidden_layers": 4, "tie_word_embeddings": True}),
    ("num_decoder_layers", with_(T5, num_decoder_layers=2), {"num_hidden_layers": 4}),
    ("num_decoder_layers", with_(T5, num_decoder_layers=1),
     {"num_hidden_layers": 3, "layers": [{"kind": "encoder", "count": 2}, {"kind": "decoder", "count": 1}]}),
    ("num_layers", with_(T5, num_hidden_layers=2), {"num_hidden_layers": 4}),  # T5Config's alias of num_layers
    ("num_layers", with_(T5, num_hidden_layers=3),
     [(("num_hidden_layers",), "import.conflict",
       "num_hidden_layers is 3 but num_layers is 2: model_type 't5''s config class reads num_hidden_layers as "
       "num_layers (attribute_map), the encoder's layers; state one")]),
    ("d_model", BART, {"hidden_size": 64, "qkv_bias": True, "o_bias": True, "mlp_bias": True, "norm_bias": True}),
    ("encoder_attention_heads", BART, {"num_attention_heads": 4}),
    ("encoder_ffn_dim", BART, {"intermediate_size": 128, "max_position_embeddings": 1024}),
    ("encoder_layers", BART, {"num_hidden_layers": 4, "layers": None, "tie_word_embeddings": True}),
    ("encoder_layers", with_(BART, encoder_layers=..., num_hidden_layers=3),  # BartConfig's alias of encoder_layers
     {"num_hidden_layers": 5, "layers": [{"kind": "encoder", "count": 3}, {"kind": "decoder", "count": 2}]}),
    ("decoder_layers", with_(BART, decoder_layers=1),
     {"num_hidden_layers": 3, "layers": [{"kind": "encoder", "count": 2}, {"kind": "decoder", "count": 1}]}),
    ("decoder_layers", with_(BART, decoder_layers=...),  # BartConfig(decoder_layers=12), not the encoder's
     {"num_hidden_layers": 14, "layers": [{"kind": "encoder", "count": 2}, {"kind": "decoder", "count": 12}]}),
    ("decoder_attention_heads", with_(BART, decoder_attention_heads=2),
     [(("decoder_attention_heads",), "import.unsupported",
       "decoder_attention_heads is 2, not num_attention_heads (4): BartDecoderLayer's self_attn and encoder_attn "
       "take config.decoder_attention_heads (transformers 5.24.0 modeling_bart.py), and the spec has one "
       "num_attention_heads, the encoder's; only num_attention_heads is imported")]),
    ("decoder_ffn_dim", with_(BART, decoder_ffn_dim=...),  # BartConfig(decoder_ffn_dim=4096)
     [(("decoder_ffn_dim",), "import.unsupported",
       "decoder_ffn_dim is 4096, not intermediate_size (128): BartDecoderLayer's fc1 is nn.Linear(embed_dim, "
       "config.decoder_ffn_dim) (transformers 5.24.0 modeling_bart.py), and the spec has one intermediate_size, "
       "the encoder's; only intermediate_size is imported")]),
    # an equals key is held to the field a left-out key's class default sets (BartConfig(encoder_ffn_dim=4096)):
    # modelspec priced 128 for the 4096-wide encoder, as the omission probe found
    ("decoder_ffn_dim", with_(BART, encoder_ffn_dim=...),
     [(("decoder_ffn_dim",), "import.unsupported",
       "decoder_ffn_dim is 128, not intermediate_size (4096): BartDecoderLayer's fc1 is nn.Linear(embed_dim, "
       "config.decoder_ffn_dim) (transformers 5.24.0 modeling_bart.py), and the spec has one intermediate_size, "
       "the encoder's; only intermediate_size is imported")]),
    ("decoder_attention_heads", with_(BART, encoder_attention_heads=...),
     [(("decoder_attention_heads",), "import.unsupported",
       "decoder_attention_heads is 4, not num_attention_heads (16): BartDecoderLayer's self_attn and encoder_attn "
       "take config.decoder_attention_heads (transformers 5.24.0 modeling_bart.py), and the spec has one "
       "num_attention_heads, the encoder's; only num_attention_heads is imported")]),
    ("relative_attention_num_buckets", with_(T5, relative_attention_num_buckets=32),
     {"relative_attention_num_buckets": 32}),
    ("relative_attention_num_buckets", with_(T5, relative_attention_num_buckets=0),
     [(("relative_attention_num_buckets",), "spec.not-positive",
       "relative_attention_num_buckets must be positive, got 0")]),
    ("is_encoder_decoder", with_(T5, is_encoder_decoder=True), {"arch": "t5"}),
    # BartConfig keeps a null, which reads as false: the reference built BartForCausalLM (the decoder alone),
    # 1,368,608 parameters where the encoder-decoder modelspec priced has 3,027,824 (the null probe)
    ("is_encoder_decoder", with_(BART, is_encoder_decoder=None),
     [(("is_encoder_decoder",), "import.unsupported",
       "is_encoder_decoder is null, which its config class keeps and reads as false, but model_type 'bart' is an "
       "encoder-decoder; state true, or leave the key out")]),
    ("is_encoder_decoder", with_(LLAMA, is_encoder_decoder=None), {"arch": "llama"}),
    # FalconConfig keeps a null multi_query and FalconAttention reads it by truth: a key/value head per query head
    # (null_false), where the default true gives one
    ("multi_query", with_(FALCON, multi_query=None), {"num_key_value_heads": 4}),
    ("multi_query", FALCON, {"num_key_value_heads": 1}),
    ("is_encoder_decoder", with_(LLAMA, is_encoder_decoder=True),
     [(("is_encoder_decoder",), "import.unsupported",
       "is_encoder_decoder is true, but model_type 'llama' is decoder-only; true for T5 and BART only: the other "
       "profiles price decoder-only stacks")]),
    ("cross_attention_layers", with_(LLAMA, cross_attention_layers=[]),
     [(("cross_attention_layers",), "import.unknown-key", not_read("cross_attention_layers", "llama"))]),
    # MllamaTextModel: a MllamaCrossAttentionDecoderLayer at each listed index, a self-attention layer elsewhere
    ("cross_attention_layers", MLLAMA, {"arch": "mllama", "layer_types": [F, "cross_attention", F]}),
    ("cross_attention_layers", with_(MLLAMA, text_config=with_(MLLAMA["text_config"], cross_attention_layers=[])),
     {"layer_types": [F, F, F]}),
    ("cross_attention_layers", with_(MLLAMA, text_config=with_(MLLAMA["text_config"], cross_attention_layers=[5])),
     [(("text_config", "cross_attention_layers"), "import.value",
       "cross_attention_layers must list layer indexes from 0 to 2, got [5]")]),
    # left out: MllamaTextConfig's [3, 8, ..., 38], past a 3-layer stack
    ("cross_attention_layers", with_(MLLAMA, text_config=with_(MLLAMA["text_config"], cross_attention_layers=...)),
     [((), "import.value", "cross_attention_layers (not stated: its config class's default) must list layer "
                           "indexes from 0 to 2, got [3, 8, 13, 18, 23, 28, 33, 38]")]),
    ("text_config", QWEN3_5_VL, {"arch": "qwen3_5", "hidden_size": 64, "layer_types": [L, F]}),
    # left out, the config class builds its default tower (Qwen2_5_VLVisionConfig()), which nothing states (the
    # omission probe: a drawn variant's 3,085,452,176 parameters priced as 2,427,024, without a tower)
    ("vision_config", with_(QWEN2_5_VL, vision_config=...),
     [(("vision_config",), "import.missing",
       "model_type 'qwen2_5_vl' builds a vision tower, and for a config that leaves vision_config out transformers "
       "builds its config class's default tower, which nothing here states; state vision_config as the "
       "checkpoint's config.json does")]),
    ("vision_config", LLAMA4, {"vision": None}),  # llama4_text: a text model, which builds no tower
    ("vision_config", QWEN2_5_VL, {"vision": {"hidden_size": 32, "num_hidden_layers": 4, "num_attention_heads": 2,
                                              "name": "vision", "intermediate_size": 64,
                                              "in_channels": 3, "temporal_patch_size": 2,
                                              "layers": [{"kind": "window_encoder", "count": 1},
                                                         {"kind": "gated_encoder", "count": 1},
                                                         {"kind": "window_encoder", "count": 1},
                                                         {"kind": "gated_encoder", "count": 1}]}}),
]

VISION_CASES: List[Tuple[str, Dict[str, Any], Any]] = [
    ("hidden_size", QWEN2_5_VL, {"hidden_size": 32}),
    ("vision_output_dim", LLAMA4_VL, {"out_hidden_size": 32}),
    ("projector_input_dim", LLAMA4_VL, {"projector_input_dim": 12}),
    ("projector_output_dim", LLAMA4_VL, {"projector_output_dim": 32}),
    ("depth", QWEN2_5_VL, {"num_hidden_layers": 4}),
    ("num_hidden_layers", GEMMA_VL, {"num_hidden_layers": 2}),
    ("num_heads", QWEN2_5_VL, {"num_attention_heads": 2}),
    ("num_attention_heads", GEMMA_VL, {"num_attention_heads": 2}),
    ("intermediate_size", QWEN2_5_VL, {"intermediate_size": 64}),
    ("out_hidden_size", with_(QWEN2_5_VL, vision_config=with_(TOWER, out_hidden_size=64)), {"out_hidden_size": 64}),
    ("patch_size", GEMMA_VL, {"patch_size": 16}),
    ("spatial_merge_size", with_(QWEN2_5_VL, vision_config=with_(TOWER, spatial_merge_size=2)),
     {"spatial_merge_size": 2}),
    ("in_channels", with_(QWEN2_5_VL, vision_config=with_(TOWER, in_channels=1)), {"in_channels": 1}),
    # left out, it is the tower config class's default (ModelType.tower_defaults)
    ("in_channels", QWEN2_5_VL, {"in_channels": 3}),
    ("in_channels", with_(QWEN2_5_VL, vision_config=with_(TOWER, in_channels=0)),
     [(("vision_config", "in_channels"), "spec.not-positive",
       "vision.in_channels must be positive, got 0 (from vision_config.in_channels)")]),
    ("num_channels", with_(GEMMA_VL, vision_config=with_(SIGLIP, num_channels=1)), {"in_channels": 1}),
    ("num_channels", GEMMA_VL, {"in_channels": 3, "temporal_patch_size": None}),
    # SiglipVisionConfig reads num_channels and image_size, not the in_channels and num_position_embeddings of
    # other towers
    ("num_channels", with_(GEMMA_VL, vision_config=with_(SIGLIP, num_channels=1, in_channels=3)),
     [(("vision_config", "in_channels"), "import.unknown-key",
       not_read("vision_config.in_channels", "gemma3", tower=True))]),
    ("temporal_patch_size", with_(QWEN2_5_VL, vision_config=with_(TOWER, temporal_patch_size=1)),
     {"temporal_patch_size": 1}),
    ("temporal_patch_size", QWEN3_5_VL, {"in_channels": 3, "temporal_patch_size": 2}),
    ("num_position_embeddings", QWEN3_5_VL, {"num_position_embeddings": 16}),
    ("image_size", GEMMA_VL, {"num_position_embeddings": 16}),
    # left out, Llama4VisionConfig(image_size=448): (448 // 4) ** 2 patches and the class token
    ("image_size", with_(LLAMA4_VL, vision_config=with_(LLAMA4_VL["vision_config"], image_size=...)),
     {"num_position_embeddings": 12545}),
    ("image_size", with_(GEMMA_VL, vision_config=with_(SIGLIP, num_position_embeddings=10)),
     [(("vision_config", "num_position_embeddings"), "import.unknown-key",
       not_read("vision_config.num_position_embeddings", "gemma3", tower=True))]),
    ("fullatt_block_indexes", with_(QWEN2_5_VL, vision_config=with_(TOWER, fullatt_block_indexes=[0, 1, 2, 3])),
     {"layers": [{"kind": "gated_encoder", "count": 4}]}),
    ("fullatt_block_indexes", with_(QWEN2_5_VL, vision_config=with_(TOWER, fullatt_block_indexes=[4])),
     [(("vision_config", "fullatt_block_indexes"), "import.value",
       "fullatt_block_indexes must list layer indexes from 0 to 3, got [4]")]),
    ("vision_use_head", with_(GEMMA_VL, vision_config=with_(SIGLIP, vision_use_head=False)), {"pooling_head": False}),
    ("vision_use_head", GEMMA_VL, {"pooling_head": True}),  # SiglipVisionConfig(vision_use_head=True)
    ("embed_dim", QWEN2_VL, {"hidden_size": 32, "out_hidden_size": 64, "intermediate_size": 128,
                             "num_hidden_layers": 32, "num_attention_heads": 16, "patch_size": 14}),
    ("embed_dim", with_(QWEN2_VL, vision_config={"hidden_size": 64}),
     {"hidden_size": 1280, "intermediate_size": 5120, "spatial_merge_size": 2}),
    ("mlp_ratio", with_(QWEN2_VL, vision_config={**QWEN2_VL["vision_config"], "mlp_ratio": 2}),
     {"hidden_size": 32, "intermediate_size": 64}),  # Qwen2VLVisionBlock: int(embed_dim * mlp_ratio)
    # Glm4vVisionAttention: qkv bias=config.attention_bias, which no tower field states: only false is imported
    ("attention_bias", with_(GLM4V, vision_config=with_(GLM4V["vision_config"], attention_bias=False)),
     {"num_position_embeddings": 16}),
    ("attention_bias", with_(GLM4V, vision_config=with_(GLM4V["vision_config"], attention_bias=True)),
     [(("vision_config", "attention_bias"), "import.unsupported",
       "vision_config.attention_bias is true: huggingface/transformers src/transformers/models/glm4v/modeling_glm4v.py "
       "Glm4vVisionAttention: qkv bias=config.attention_bias, which no tower field states (transformers 5.24.0; "
       "Glm4vVisionConfig(attention_bias=False), as GLM-4.1V's checkpoints); only false is imported")]),
    # Glm4vVisionModel: gated blocks, and SigLIP's position table of (image_size // patch_size) ** 2
    ("image_size", {"model_type": "glm4v", "text_config": {"hidden_size": 64, "num_hidden_layers": 2,
                                                           "num_attention_heads": 4, "vocab_size": 100},
                    "vision_config": {"hidden_size": 32, "depth": 3, "num_heads": 2, "image_size": 56,
                                      "patch_size": 14}},
     {"num_position_embeddings": 16, "layers": [{"kind": "gated_encoder", "count": 3}]}),
    # Qwen3VLVisionModel: one deepstack merger per index, built whatever the index (one past the depth too)
    ("deepstack_visual_indexes", QWEN3_VL, {"num_deepstack_mergers": 2, "layers": None}),
    ("deepstack_visual_indexes", with_(QWEN3_VL, vision_config=with_(QWEN3_VL["vision_config"],
                                                                     deepstack_visual_indexes=[9])),
     {"num_deepstack_mergers": 1}),
    ("deepstack_visual_indexes", with_(QWEN3_VL, vision_config=with_(QWEN3_VL["vision_config"],
                                                                     deepstack_visual_indexes=[])),
     {"num_deepstack_mergers": 0}),
    ("deepstack_visual_indexes", with_(QWEN3_VL, vision_config=with_(QWEN3_VL["vision_config"],
                                                                     deepstack_visual_indexes=...)),
     {"num_deepstack_mergers": 3}),  # Qwen3VLVisionConfig(deepstack_visual_indexes=(8, 16, 24))
    ("deepstack_visual_indexes", with_(QWEN3_VL, vision_config=with_(QWEN3_VL["vision_config"],
                                                                     deepstack_visual_indexes=[1, True])),
     [(("vision_config", "deepstack_visual_indexes"), "import.value",
       "vision_config.deepstack_visual_indexes must list block indexes (whole numbers from 0), got [1, true]")]),
    ("deepstack_visual_indexes", with_(QWEN3_5_VL, vision_config=with_(QWEN3_5_VL["vision_config"],
                                                                       deepstack_visual_indexes=[1])),
     {"num_deepstack_mergers": None}),  # Qwen3_5VisionConfig does not read it: vision_ignored
    # MllamaVisionModel: the local transformer's blocks, then the gated global_transformer's
    ("attention_heads", MLLAMA, {"num_attention_heads": 2}),
    ("num_global_layers", MLLAMA, {"num_hidden_layers": 3, "layers": [{"kind": "encoder", "count": 2},
                                                                      {"kind": "global_encoder", "count": 1}]}),
    ("num_global_layers", with_(MLLAMA, vision_config=with_(MLLAMA_TOWER, num_global_layers=0)),
     {"num_hidden_layers": 2, "layers": [{"kind": "encoder", "count": 2}]}),
    ("num_global_layers", with_(MLLAMA, vision_config=with_(MLLAMA_TOWER, num_global_layers=...)),
     {"num_hidden_layers": 10, "layers": [{"kind": "encoder", "count": 2},
                                          {"kind": "global_encoder", "count": 8}]}),  # MllamaVisionConfig's 8
    ("max_num_tiles", MLLAMA, {"max_num_tiles": 2, "num_position_embeddings": 17}),
    ("max_num_tiles", with_(MLLAMA, vision_config=with_(MLLAMA_TOWER, max_num_tiles=...)), {"max_num_tiles": 4}),
    ("supported_aspect_ratios", MLLAMA, {"num_aspect_ratios": 3}),
    ("supported_aspect_ratios", with_(MLLAMA, vision_config=with_(MLLAMA_TOWER, supported_aspect_ratios=...)),
     {"num_aspect_ratios": 8}),  # MllamaVisionConfig's 8 grids of at most 4 tiles
    ("supported_aspect_ratios", with_(MLLAMA, vision_config=with_(MLLAMA_TOWER, supported_aspect_ratios=[])),
     [(("vision_config", "supported_aspect_ratios"), "import.value",
       "vision_config.supported_aspect_ratios must list [width, height] tile ratios, got []")]),
]


def _expect(config: Dict[str, Any], expected: Any, part: str = "") -> None:
    if isinstance(expected, list):
        assert refusals(config) == expected
        return
    data = imported(config)
    data = data[part] if part else data
    assert {key: data.get(key) for key in expected} == expected


@pytest.mark.parametrize("key, config, expected", KEY_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(KEY_CASES)])
def test_key_row(key, config, expected):
    _expect(config, expected)


@pytest.mark.parametrize("key, config, expected", VISION_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(VISION_CASES)])
def test_vision_key_row(key, config, expected):
    _expect(config, expected, part="vision")


def _family_rules(section: str) -> List[Any]:
    """Every bundled family's own key rules of *section* (``keys`` or ``vision_keys``)."""
    return [rule for profile in load_op_profiles().profiles.values() if profile.family is not None
            for rule in getattr(profile.family, section).values()]


def test_every_key_row_has_a_case_and_a_known_transform():
    rows, vision_rows = list(KEYS) + _family_rules("keys"), list(VISION_KEYS) + _family_rules("vision_keys")
    assert sorted({case[0] for case in KEY_CASES}) == sorted({rule.key for rule in rows})
    assert sorted({case[0] for case in VISION_CASES}) == sorted({rule.key for rule in vision_rows})
    assert all(rule.transform in TRANSFORMS for rule in rows + vision_rows)
    assert all(rule.source for rule in rows + vision_rows if rule.transform != "copy" or rule.fields[0].split(".")[-1]
               != rule.key)


@pytest.mark.parametrize("key", sorted(IGNORED))
def test_an_ignored_key_changes_nothing(key):
    assert imported(with_(LLAMA, **{key: {"any": [1, "value"]}})) == imported(LLAMA)
    assert IGNORED[key] and "\n" not in IGNORED[key]


@pytest.mark.parametrize("key", sorted(VISION_IGNORED))
def test_an_ignored_vision_key_changes_nothing(key):
    assert imported(with_(QWEN2_5_VL, vision_config=with_(TOWER, **{key: 7}))) == imported(QWEN2_5_VL)
    assert VISION_IGNORED[key] and "\n" not in VISION_IGNORED[key]


def test_ignored_and_mapped_keys_do_not_overlap():
    assert not set(IGNORED) & {rule.key for rule in KEYS}
    assert not set(VISION_IGNORED) & {rule.key for rule in VISION_KEYS}


def test_every_profiled_model_type_has_a_family_and_every_default_a_rule():
    profiles = load_op_profiles().profiles.values()
    assert [profile.arch for profile in profiles if bool(profile.model_types) != (profile.family is not None)] == []
    for profile in profiles:
        if profile.family is not None:
            assert profile.family.source
            assert set(profile.family.defaults) <= ({rule.key for rule in KEYS} | set(profile.family.keys)
                                                    | profile.family.variant_keys)


# ---- variants: the kinds a key's value swaps in ---------------------------------------

GATED_T5 = [{"kind": "gated_encoder", "count": 2}, {"kind": "gated_decoder", "count": 2}]


@pytest.mark.parametrize("config, expected", [
    (with_(T5, feed_forward_proj="gated-gelu"), {"layers": GATED_T5, "intermediate_size": 128}),
    (with_(T5, feed_forward_proj="gated-silu", is_gated_act=True), {"layers": GATED_T5}),
    (with_(T5, is_gated_act=True), {"layers": GATED_T5}),
    (with_(T5, feed_forward_proj="relu", is_gated_act=False), {"layers": None, "num_hidden_layers": 4}),
    (with_(COHERE, use_qk_norm=True), {"layers": [{"kind": "full_attention_qk_norm", "count": 2}], "qk_norm": True}),
    (with_(PHI, qk_layernorm=True), {"layers": [{"kind": "full_attention_qk_norm", "count": 2}], "qk_norm": True}),
    (with_(DEEPSEEK, q_lora_rank=None), {"layers": [{"kind": "dense_q_proj", "count": 1},
                                                    {"kind": "moe_q_proj", "count": 3}], "q_lora_rank": None}),
    # StableLmDecoderLayer: no post_attention_layernorm with use_parallel_residual
    (with_(STABLELM, use_parallel_residual=True), {"layers": [{"kind": "full_attention_parallel", "count": 2}]}),
    (with_(STABLELM, use_parallel_residual=False), {"layers": None}),
    # StableLmAttention: q_layernorm, k_layernorm with qk_layernorm; the variants compose with the parallel block's
    (with_(STABLELM, qk_layernorm=True), {"layers": [{"kind": "full_attention_qk_norm", "count": 2}], "qk_norm": True}),
    (with_(STABLELM, qk_layernorm=True, use_parallel_residual=True),
     {"layers": [{"kind": "full_attention_parallel_qk_norm", "count": 2}], "qk_norm": True}),
    # ApertusMLP: XIELUActivation (alpha_p, alpha_n) only when hidden_act is "xielu", ApertusConfig's default
    (with_(LLAMA, model_type="apertus", hidden_act="silu"), {"layers": [{"kind": "full_attention_act", "count": 2}]}),
    (with_(LLAMA, model_type="apertus", hidden_act="xielu"), {"layers": None, "qk_norm": True}),
    (with_(LLAMA, model_type="apertus"), {"layers": None}),  # unstated: the default xielu
])
def test_a_variant_key_swaps_in_its_kinds(config, expected):
    _expect(config, expected)


NEMOTRON_LISTED = {key: value for key, value in NEMOTRON.items() if key not in ("hybrid_override_pattern",
                                                                              "num_hidden_layers")}


@pytest.mark.parametrize("key, names", [
    ("layers_block_type", ["linear_attention", "moe", "full_attention", "mlp"]),
    ("layer_types", ["mamba", "moe", "attention", "mlp"]),
])
def test_nemotron_h_reads_its_layers_from_a_list_and_counts_them(key, names):
    assert imported(with_(NEMOTRON_LISTED, **{key: names})) == imported(NEMOTRON)


def test_a_nemotron_h_layer_list_of_unknown_names_is_refused():
    assert refusals(with_(NEMOTRON_LISTED, layers_block_type=["mamba", "lstm"])) == [
        (("layers_block_type",), "import.value",
         "layers_block_type must list 2 layer types (num_hidden_layers), each one of attention, full_attention, "
         'linear_attention, mamba, mlp, moe, got ["mamba", "lstm"]')]


def test_a_period_left_out_is_its_config_class_default():
    """Qwen3NextConfig builds layer_types from kwargs.pop('full_attention_interval', 4) when none are stated."""
    assert imported(with_(QWEN3_NEXT, full_attention_interval=...))["layer_types"] == [L, L, L, F]
    assert imported(with_(QWEN3_NEXT, full_attention_interval=..., num_hidden_layers=2))["layer_types"] == [L, L]


def test_variant_keys_that_disagree_are_refused_naming_both():
    assert refusals(with_(T5, feed_forward_proj="relu", is_gated_act=True)) == [
        (("is_gated_act",), "import.conflict",
         'feed_forward_proj is "relu" but is_gated_act is true: they disagree on the layers transformers 5.24.0 '
         "configuration_t5.py T5Config.__post_init__: is_gated_act = feed_forward_proj.split('-')[0] == 'gated' (a "
         "stated is_gated_act is set after it); modeling_t5.py T5LayerFF: T5DenseGatedActDense if config.is_gated_act "
         "builds; state one")]


# ---- refusals ------------------------------------------------------------------------

def test_an_unknown_key_stops_the_import_by_name():
    config = with_(QWEN3_5_VL, text_config={**QWEN3_5_VL["text_config"], "frobnicate": 1}, wibble=2)
    message = ("{} is a key the importer does not know for model_type 'qwen3_5'; list it under import.ignored in "
               "op_profiles/qwen3_5.yaml with why it changes nothing a cost model prices (or map it under "
               "import.keys), or pass --allow-unknown to import without it")
    assert refusals(config) == [(("wibble",), "import.unknown-key", message.format("wibble")),
                                (("text_config", "frobnicate"), "import.unknown-key",
                                 message.format("text_config.frobnicate"))]


@pytest.mark.parametrize("config, path, hint", [
    (with_(LLAMA, hiden_size=64), ("hiden_size",), "did you mean 'hidden_size'? If not, "),
    (with_(GPT2, n_embed=64), ("n_embed",), "did you mean 'n_embd'? If not, "),
    (with_(LLAMA, rms_norm_epsilon=1e-5), ("rms_norm_epsilon",), "did you mean 'rms_norm_eps'? If not, "),
    (with_(LLAMA, frobnicate=1), ("frobnicate",), ""),
])
def test_an_unknown_key_near_a_known_one_gets_a_did_you_mean(config, path, hint):
    family = config["model_type"]
    assert refusals(config) == [
        (path, "import.unknown-key",
         f"{path[-1]} is a key the importer does not know for model_type {family!r}; {hint}list it under "
         f"import.ignored in op_profiles/{family}.yaml with why it changes nothing a cost model prices (or map it "
         "under import.keys), or pass --allow-unknown to import without it")]


def test_an_unknown_vision_key_names_the_tower_sections():
    assert refusals(with_(QWEN2_5_VL, vision_config=with_(TOWER, depht=4))) == [
        (("vision_config", "depht"), "import.unknown-key",
         "vision_config.depht is a key the importer does not know for model_type 'qwen2_5_vl'; did you mean 'depth'? "
         "If not, list it under import.vision_ignored in op_profiles/qwen2_5_vl.yaml with why it changes nothing a "
         "cost model prices (or map it under import.vision_keys), or pass --allow-unknown to import without it")]


def unvouched(data: Mapping[str, Any], **gaps: Any) -> Dict[str, Any]:
    """*data* as an import that could not vouch for it writes it: no parameters figure, and its import_gaps."""
    return {**{key: value for key, value in data.items() if key != "parameters"}, "import_gaps": gaps}


def test_allow_unknown_imports_and_returns_the_unknown_keys():
    config = with_(QWEN2_5_VL, vision_config=with_(TOWER, wibble=1), frobnicate=2)
    result = import_config(config, load_op_profiles(), fallback_name="x", allow_unknown=True)
    assert result.unknown == (("vision_config", "wibble"), ("frobnicate",))
    assert dict(result.data) == unvouched(imported(QWEN2_5_VL) | {"name": "x"},
                                          dropped=["vision_config.wibble", "frobnicate"])
    assert result.spec.parameters is None


def test_a_key_at_both_levels_with_different_values_names_both():
    config = with_(QWEN3_5_VL, vocab_size=120, text_config={**QWEN3_5_VL["text_config"], "vocab_size": 100})
    assert refusals(config) == [(("text_config", "vocab_size"), "import.both-levels",
                                 "vocab_size is 120 at the top level but 100 in text_config; state it once")]
    assert imported(with_(config, vocab_size=100))["vocab_size"] == 100


@pytest.mark.parametrize("changes, mamba", [
    ({"use_conv_bias": True, "use_bias": False}, "mamba"),  # NemotronHConfig's defaults
    ({"use_conv_bias": False}, "mamba_no_conv_bias"),
    ({"use_bias": True}, "mamba_proj_bias"),
    ({"use_bias": True, "use_conv_bias": False}, "mamba_proj_bias_no_conv_bias"),  # the variants compose
])
def test_nemotron_h_mamba_biases_pick_the_kind_that_holds_them(changes, mamba):
    data = imported(with_(NEMOTRON, **changes))
    kinds = data["layer_types"] if mamba == "mamba" else [group["kind"] for group in data["layers"]]
    assert kinds == [mamba, "moe", "attention", "mlp"]


def test_a_text_only_qwen3_5_names_its_embedding_and_norm_as_its_causal_lm_does():
    """Qwen3_5ForCausalLM (a qwen3_5_text config) holds model.embed_tokens and model.norm; the VLM's language model
    is model.language_model (the inventory's when: vision)."""
    profiles = load_op_profiles()
    names = {}
    for key, config in (("text", QWEN3_5), ("vlm", QWEN3_5_VL)):
        spec = import_config(config, profiles, fallback_name="x").spec
        names[key] = [t.name for t in resolve(profiles.get("qwen3_5").model_weights.weights, model_symbols(spec))]
    assert names == {"text": ["model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"],
                     "vlm": ["model.language_model.embed_tokens.weight", "model.language_model.norm.weight",
                             "lm_head.weight"]}


def test_a_qwen3_5_vlm_ties_by_its_top_level_config_whatever_text_config_says():
    """Qwen3_5ForConditionalGeneration ties by Qwen3_5Config's tie_word_embeddings (import.top_level)."""
    config = with_(QWEN3_5_VL, text_config={**QWEN3_5_VL["text_config"], "tie_word_embeddings": True})
    assert imported(with_(config, tie_word_embeddings=False))["tie_word_embeddings"] is False
    assert imported(with_(config, tie_word_embeddings=True))["tie_word_embeddings"] is True
    assert imported({key: value for key, value in config.items() if key != "tie_word_embeddings"})[
        "tie_word_embeddings"] is False  # Qwen3_5Config's default


@pytest.mark.parametrize("config, expected", [
    (with_(LLAMA, model_type="bert"),
     [(("model_type",), "import.unknown-model-type",
       'no op profile prices model_type "bert"; transformers 5.24.0 implements bert natively; draft a profile: '
       "modelspec reference --draft bert config.json")]),
    (with_(LLAMA, model_type=["llama"] * 1000),
     [(("model_type",), "import.value",
       "model_type must be a string naming the Hugging Face model type, got an array")]),
    (with_(LLAMA, model_type=...),
     [((), "import.no-model-type",
       "the config states no model_type, so no op profile can be picked; state the Hugging Face model_type")]),
    (with_(QWEN3_5_VL, text_config={**QWEN3_5_VL["text_config"], "model_type": "llama"}),
     [(("text_config", "model_type"), "import.both-levels",
       'text_config\'s model_type "llama" is not a text model of "qwen3_5"')]),
    (list(range(10_000)), [((), "import.not-a-mapping", "a config is a JSON object, got an array")]),
    ("{}", [((), "import.not-a-mapping", "a config is a JSON object, got a string")]),
    (1.5, [((), "import.not-a-mapping", "a config is a JSON object, got a number")]),
    (True, [((), "import.not-a-mapping", "a config is a JSON object, got a boolean")]),
    (None, [((), "import.not-a-mapping", "a config is a JSON object, got null")]),
    (with_(LLAMA, text_config=[1] * 1000),
     [(("text_config",), "import.not-a-mapping", "text_config must be an object, got an array")]),
    (with_(QWEN2_5_VL, vision_config="x" * 1000),
     [(("vision_config",), "import.not-a-mapping", "vision_config must be an object, got a string")]),
    (with_(LLAMA, vision_config={"depth": 1}),
     [(("vision_config",), "import.unsupported",
       "model_type 'llama' has no vision tower rule, so its vision_config cannot be priced; import the language "
       "model's config alone")]),
    (with_(QWEN3_MOE, decoder_sparse_step=...),
     [((), "import.missing", "decoder_sparse_step is not stated, and the MoE layer rule needs it; state it")]),
    (with_(QWEN3_MOE, mlp_only_layers=[9]),
     [(("mlp_only_layers",), "import.value", "mlp_only_layers must list layer indexes from 0 to 3, got [9]")]),
    (with_(LLAMA, decoder_sparse_step=2),  # LlamaConfig does not read it
     [(("decoder_sparse_step",), "import.unknown-key", not_read("decoder_sparse_step", "llama"))]),
    ({"model_type": "exaone4", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 100, "intermediate_size": 128, "layer_types": ["full_attention", "linear_attention"]},
     [(("layer_types",), "import.unsupported",
       "layer 1 is a linear_attention layer with a dense feed-forward, which op profile 'exaone4' has no kind for "
       "(its kinds: sliding_attention (sliding/dense), full_attention (full/dense)); state arch and layers for such "
       "a model")]),
    (with_(LLAMA, num_key_value_heads=3),
     [(("num_key_value_heads",), "spec.kv-heads-divide",
       "num_attention_heads (4) must be a multiple of num_key_value_heads (3); each key/value head serves a whole "
       "group of query heads")]),
    # Falcon models transformers builds but cannot run (FalconDecoderLayer.forward): unrunnable, refused by name
    (with_(FALCON, new_decoder_architecture=True, parallel_attn=False),
     [(("new_decoder_architecture",), "import.unsupported",
       "new_decoder_architecture true, parallel_attn false: transformers 5.24.0 modeling_falcon.py "
       "FalconDecoderLayer: without parallel_attn __init__ builds input_layernorm and post_attention_layernorm, but "
       "forward with new_decoder_architecture reads ln_attn (num_ln_in_parallel_attn 2, its value when null) or "
       "leaves mlp_layernorm_out unset (any other); transformers builds such a model but cannot run it, so it is "
       "not imported")]),
    (with_(FALCON, num_ln_in_parallel_attn=2),
     [(("num_ln_in_parallel_attn",), "import.unsupported",
       "new_decoder_architecture false (its default), parallel_attn true (its default), num_ln_in_parallel_attn 2: "
       "transformers 5.24.0 modeling_falcon.py FalconDecoderLayer: __init__ builds ln_attn and ln_mlp for "
       "num_ln_in_parallel_attn 2, but forward without new_decoder_architecture reads input_layernorm; "
       "transformers builds such a model but cannot run it, so it is not imported")]),
    (with_(GPT2, n_embd="64"),
     [(("n_embd",), "spec.not-integer",
       "hidden_size must be an integer, got the string '64'; write 64 without quotes (from n_embd)")]),
])
def test_refusals(config, expected):
    assert refusals(config) == expected


@pytest.mark.parametrize("config, arch, same_as, gaps", [
    (with_(LLAMA, model_type="my_llama"), "llama", LLAMA, {"model_type": "my_llama"}),
    (with_(QWEN3_5_VL, model_type="my_vl"), "qwen3_5", QWEN3_5_VL, {"model_type": "my_vl"}),
    (with_(QWEN3_5_VL, model_type="my_vl", text_config={**QWEN3_5_VL["text_config"], "model_type": "my_text"}),
     "qwen3_5", QWEN3_5_VL, {"model_type": "my_vl"}),
    (QWEN2, "qwen2", QWEN2, None),
])
def test_arch_reads_a_model_type_no_profile_lists_as_its_family(config, arch, same_as, gaps):
    """...and says so in import_gaps, writing no parameters figure: nothing vouches that the model is the family's."""
    expected = imported(same_as)
    assert imported(config, arch=arch) == (unvouched(expected, **gaps) if gaps else expected)


@pytest.mark.parametrize("config, arch, expected", [
    (QWEN2, "qwen3",
     [(("model_type",), "import.arch", 'model_type "qwen2" is priced by op profile \'qwen2\', not by --arch '
                                       "'qwen3'; leave out --arch, which is for a model type no op profile lists")]),
    (with_(QWEN3_5_VL, model_type="my_vl"), "llama",
     [(("text_config", "model_type"), "import.arch",
       'model_type "qwen3_5_text" is priced by op profile \'qwen3_5\', not by --arch \'llama\'; leave out --arch, '
       "which is for a model type no op profile lists")]),
    (with_(LLAMA, model_type="my_llama"), "vision",
     [((), "import.arch", "op profile 'vision' lists no model type the importer has rules for (none), so a config "
                          "cannot be read as its family; pick a language model's op profile")]),
    (QWEN2, "nope",
     [((), "import.unknown-model-type", f"arch 'nope' names no op profile; the profiles are {list(LANGUAGE_ARCHS)}")]),
])
def test_arch_is_refused_where_a_profile_prices_the_model_type(config, arch, expected):
    assert refusals(config, arch=arch) == expected


@pytest.mark.parametrize("nested", ["text_config", "vision_config"])
def test_a_nesting_inside_text_config_is_an_unknown_key(nested):
    config = with_(QWEN3_5_VL, text_config={**QWEN3_5_VL["text_config"], nested: {"hidden_size": 1}})
    assert refusals(config) == [(("text_config", nested), "import.unknown-key",
                                 f"text_config.{nested} is nested inside text_config, where the importer does not "
                                 "read it; state it at the top level, or pass --allow-unknown to import without it")]
    result = import_config(config, load_op_profiles(), fallback_name="test", allow_unknown=True)
    assert (result.unknown, dict(result.data)) == ((("text_config", nested),),
                                                   unvouched(imported(QWEN3_5_VL), dropped=[f"text_config.{nested}"]))


@pytest.mark.parametrize("options, expected", [
    ({"name": ""}, [((), "spec.not-string", "name must be a non-empty string, got '' (from --name)")]),
])
def test_an_empty_name_is_refused_not_replaced(options, expected):
    assert refusals(LLAMA, **options) == expected


@pytest.mark.parametrize("path, expected", [
    (("vocab_size",), (("vocab_size",), "")),
    (("intermediate_size",), (("n_inner",), " (from n_inner)")),
    (("hidden_size",), (("n_embd",), " (from n_embd)")),
    (("layers", 0, "kind"), ((), "")),
    (("name",), (("_name_or_path",), " (from _name_or_path)")),
    (("qk_norm",), ((), " (from the modelling code of model_type 'gpt2')")),
    ((), ((), "")),
])
def test_each_field_names_the_config_key_it_came_from(path, expected):
    result = import_config(with_(GPT2, _name_or_path="org/Tiny", n_inner=100), load_op_profiles(),
                           fallback_name="test")
    assert result.source(path) == expected


def test_codes_are_documented():
    assert all(code.startswith("import.") and text.endswith(".") for code, text in CODES.items())


# ---- the command -------------------------------------------------------------------

def _write(tmp_path: Path, config: Any, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def test_unknown_key_exits_1_located_and_writes_nothing(tmp_path):
    path = _write(tmp_path, with_(LLAMA, wibble=1))
    out = tmp_path / "out.yaml"
    result = run(["import", str(path), "-o", str(out), "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("config.json:8:3: error [import.unknown-key] wibble is a key the importer does not "
                             "know for model_type 'llama'; list it under import.ignored in op_profiles/llama.yaml "
                             "with why it changes nothing a cost model prices (or map it under import.keys), or pass "
                             "--allow-unknown to import without it\n")
    assert not out.exists()


def test_allow_unknown_lists_the_keys_as_warnings(tmp_path):
    path = _write(tmp_path, with_(LLAMA, wibble=1))
    result = run(["import", str(path), "--allow-unknown", "--root", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stderr == ("config.json:8:3: warning [import.unknown-key] wibble is not imported: the importer does "
                             "not know it\n"
                             "config.json:1:1: warning [spec.import-gaps] modelspec import dropped the config keys "
                             "wibble (--allow-unknown), so nothing vouches that this spec's layers are the model's; "
                             "compare it with the reference (modelspec reference), then remove import_gaps (from "
                             "--allow-unknown)\n")
    assert result.stdout.startswith("# imported by modelspec import from config.json\n# import_gaps: dropped the "
                                    "config keys wibble (--allow-unknown); no parameters\n# figure is written\n# "
                                    "explain any hand edit in this header\n---\nname: config\nhidden_size: 64\n")
    assert "\nparameters:" not in result.stdout and "\nimport_gaps:\n  dropped:\n    - wibble\n" in result.stdout


def test_check_warns_on_import_gaps_for_as_long_as_the_spec_states_them(tmp_path):
    (tmp_path / "schemas").mkdir()
    shutil.copy(ROOT / "schemas" / "model-spec.schema.json", tmp_path / "schemas")
    spec = tmp_path / "specs" / "ft.yaml"
    spec.parent.mkdir()
    path = _write(tmp_path, with_(LLAMA, model_type="my_llama_ft"))
    result = run(["import", str(path), "--arch", "llama", "-o", str(spec), "--root", str(tmp_path)])
    assert result.exit_code == 0 and "parameters:" not in spec.read_text(encoding="utf-8")
    warning = ("specs/ft.yaml:{line}:3: warning [spec.import-gaps] modelspec import read model_type 'my_llama_ft' as "
               "another family's (--arch), so nothing vouches that this spec's layers are the model's; compare it "
               "with the reference (modelspec reference), then remove import_gaps")
    checked = run(["check", str(spec), "--root", str(tmp_path)])
    line = spec.read_text(encoding="utf-8").splitlines().index("  model_type: my_llama_ft") + 1
    assert checked.exit_code == 0 and warning.format(line=line) in checked.stdout
    assert run(["check", "--strict", str(spec), "--root", str(tmp_path)]).exit_code == 1
    text = spec.read_text(encoding="utf-8").replace("import_gaps:\n  model_type: my_llama_ft\n", "")
    spec.write_text(text, encoding="utf-8")
    assert run(["check", "--strict", str(spec), "--root", str(tmp_path)]).exit_code == 0


def test_both_levels_differ_exits_1_at_the_text_config_key(tmp_path):
    config = with_(QWEN3_5_VL, vocab_size=99)
    path = _write(tmp_path, config)
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("config.json:8:5: error [import.both-levels] vocab_size is 99 at the top level but 100 "
                             "in text_config; state it once\n")


def test_output_is_not_overwritten_without_force(tmp_path):
    path = _write(tmp_path, LLAMA)
    out = tmp_path / "out.yaml"
    out.write_text("keep me\n", encoding="utf-8")
    result = run(["import", str(path), "-o", str(out), "--root", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.endswith(f"Error: {out} exists; pass --force to overwrite it\n")
    assert out.read_text(encoding="utf-8") == "keep me\n"
    result = run(["import", str(path), "-o", str(out), "--force", "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (0, "wrote out.yaml\n")
    assert out.read_text(encoding="utf-8").startswith("# imported by modelspec import from config.json\n")


def test_unknown_model_type_exits_1_saying_how_to_draft_it(tmp_path):
    path = _write(tmp_path, with_(LLAMA, model_type="bert"))
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (
        1, 'config.json:2:3: error [import.unknown-model-type] no op profile prices model_type "bert"; transformers '
           "5.24.0 implements bert natively; draft a profile: modelspec reference --draft bert config.json\n")


@pytest.mark.parametrize("args, message", [
    (["--arch", "nope"], "Invalid value for --arch: 'nope' names no op profile; the profiles are "
                         + ", ".join(ARCHS)),
    (["--source", "two\nlines"], "Invalid value for '--source': a source is one line of printable text; U+000A at "
                                     "character 4 is a control character or line break"),
])
def test_usage_errors_exit_2(tmp_path, args, message):
    path = _write(tmp_path, LLAMA)
    result = run(["import", str(path), "--root", str(tmp_path), *args])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: {message}"


@pytest.mark.parametrize("text, line", [
    ('{"model_type": "llama",\n "hidden_size": 64,\n}', "config.json:3:1: error [import.json] not valid JSON: "
                                                        "Expecting property name enclosed in double quotes"),
    ('{"model_type": "llama",\n "rope": {"a": 1,\n  "a": 2}}',
     "config.json:3:3: error [import.json] rope.a is stated twice in one object (first on line 2); keep one"),
    ("-Infinity", "config.json:1:1: error [import.json] the config is -Infinity; a config states finite numbers"),
    ('\ufeff[', "config.json:1:2: error [import.json] not valid JSON: Expecting value"),
    ("Infinity", "config.json:1:1: error [import.json] the config is Infinity; a config states finite numbers"),
    ('{"a": ' + "1" * 4001 + "}", "config.json:1:2: error [import.json] a is a number of 4001 characters; a config "
                                  "states numbers of at most 4000 characters"),
    ('{"a": [0.' + "1" * 4000 + "]}", "config.json:1:2: error [import.json] a.0 is a number of 4002 characters; a "
                                      "config states numbers of at most 4000 characters"),
    ("[" * 5000 + "]" * 5000, "config.json:1:65: error [import.json] nesting deeper than 64 levels; a config nests "
                              "a few, so check that this is the right file"),
    ('{"a":\n' + '{"b": ' * 64 + "1" + "}" * 65, "config.json:2:379: error [import.json] nesting deeper than 64 "
                                                 "levels; a config nests a few, so check that this is the right file"),
    ('["' + "[" * 100, "config.json:1:2: error [import.json] not valid JSON: Unterminated string starting at"),
])
def test_json_that_is_not_strict_is_refused_located(tmp_path, text, line):
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", line + "\n")


_FINITE = "a key the importer reads states finite numbers"


@pytest.mark.parametrize("key, value, line", [
    ("hidden_size", "NaN", f"config.json:3:2: error [import.value] hidden_size is NaN; {_FINITE}"),
    ("max_position_embeddings", "1e999", f"config.json:3:2: error [import.value] max_position_embeddings is Infinity; "
                                         f"{_FINITE}"),
    ("head_dim", '[16, -Infinity]', f"config.json:3:2: error [import.value] head_dim is [16, -Infinity]; {_FINITE}"),
])
def test_a_non_finite_number_is_refused_where_a_rule_reads_it_naming_the_key(tmp_path, key, value, line):
    path = tmp_path / "config.json"
    body = json.dumps(with_(LLAMA, model_type=..., **({key: ...} if key in LLAMA else {})))[1:-1]
    path.write_text(f'{{"model_type": "llama",\n{body},\n "{key}": {value}}}', encoding="utf-8")
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", line + "\n")


def test_a_non_finite_number_in_a_key_no_rule_reads_is_imported(tmp_path):
    # Mamba's time_step_limit is [0.0, Infinity] in real configs; a key that prices nothing may hold one
    path = tmp_path / "config.json"
    text = json.dumps(LLAMA)[:-1] + ', "rope_scaling": {"factor": Infinity}, "router_jitter_noise": NaN}'
    path.write_text(text, encoding="utf-8")
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (0, "")
    assert "Infinity" not in result.stdout and "NaN" not in result.stdout
    assert refusals(with_(LLAMA, wibble=float("nan")))[0][1] == "import.unknown-key"
    assert imported(with_(LLAMA, wibble=float("nan")), allow_unknown=True) == unvouched(imported(LLAMA),
                                                                                       dropped=["wibble"])


@pytest.mark.parametrize("text", ["[" * 64 + "]" * 64, '{"a": "' + "[{" * 1000 + '"}', '["\\"[[[[", 1]'])
def test_nesting_up_to_the_cap_and_brackets_in_strings_are_read(text):
    assert read_config(text.encode("utf-8"))[0] == json.loads(text)


def test_every_key_is_located_on_its_line_and_column():
    text = '{"a": 1,\n  "b": {"c": "x\\ny",\n\n "d": [{"e": 3}]}, "f": 0}'
    assert read_config(text.encode("utf-8"))[1] == {
        ("a",): Location(1, 2), ("b",): Location(2, 3), ("b", "c"): Location(2, 9), ("b", "d"): Location(4, 2),
        ("b", "d", 0, "e"): Location(4, 9), ("f",): Location(4, 20)}


def test_a_file_larger_than_the_cap_is_refused_without_reading_it_all(tmp_path):
    path = tmp_path / "config.json"
    with open(path, "wb") as handle:  # sparse: 300 MB that take no disk
        handle.truncate(300 * 2 ** 20)
    tracemalloc.start()
    try:
        result = run(["import", str(path), "--root", str(tmp_path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "config.json:1:1: error [import.json] the file is larger than 1 MiB (1048576 bytes); a config.json is "
               "a few kilobytes: check that this is the right file\n")
    assert peak < 16 * 2 ** 20


def test_a_file_of_exactly_the_cap_is_read(tmp_path):
    text = json.dumps(LLAMA)
    path = tmp_path / "config.json"
    path.write_text(text + " " * (MAX_BYTES - len(text)), encoding="utf-8")
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (0, "")


def test_the_code_table_states_the_reader_caps():
    assert f"larger than {MAX_BYTES // 2 ** 20} MiB" in CODES["import.json"]
    assert f"deeper than {MAX_DEPTH} levels" in CODES["import.json"]
    assert f"more than {MAX_NUMBER_CHARS} characters" in CODES["import.json"]


def test_bytes_that_are_not_utf8_are_refused(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b'{"a": "\xff"}')
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (1, "config.json:1:1: error [import.json] byte 7 is not UTF-8; save "
                                                    "the config as UTF-8\n")


_NOT_WRITTEN = "modelspec: the imported spec fails modelspec check; nothing was written"


@pytest.mark.parametrize("config, args, lines", [
    (with_(LLAMA, intermediate_size=...), [],
     ["config.json:1:1: error [stack.dense-without-intermediate] the stack has layers of kind ['full_attention'] "
      "with a dense feed-forward, but intermediate_size is not declared; declare the dense width"]),
    (with_(LLAMA, _name_or_path="org/a b"), [],
     ["config.json:8:3: error [schema.pattern] name must be letters, digits, '.', '_' and '-', not starting with '.' "
      "(it names the spec's artifact file), got 'a b' (from _name_or_path)"]),
    (LLAMA, ["--name", "a b"],
     ["config.json:1:1: error [schema.pattern] name must be letters, digits, '.', '_' and '-', not starting with '.' "
      "(it names the spec's artifact file), got 'a b' (from --name)"]),
])
def test_a_spec_that_fails_check_is_not_written_and_its_problems_are_at_the_config_keys(tmp_path, config, args,
                                                                                      lines):
    path = _write(tmp_path, config)
    out = tmp_path / "out.yaml"
    for output in (["-o", str(out)], []):
        result = run(["import", str(path), *output, *args, "--root", str(tmp_path)])
        assert (result.exit_code, result.stdout, result.stderr) == (1, "", "\n".join(lines + [_NOT_WRITTEN]) + "\n")
    assert not out.exists()


def test_arch_for_a_model_type_a_profile_prices_is_refused_naming_both():
    result = run(["import", str(CONFIGS / "qwen3-8b.json"), "--arch", "llama", "--root", str(ROOT)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("tests/data/configs/qwen3-8b.json:16:3: error [import.arch] model_type \"qwen3\" is "
                             "priced by op profile 'qwen3', not by --arch 'llama'; leave out --arch, which is for a "
                             "model type no op profile lists\n")


def test_help_says_what_arch_is_for():
    result = run(["import", "--help"])
    assert "--arch is for a model type no op profile lists, such as a fine-tune's own name: the config is read as " \
           "the named profile's family." in " ".join(result.stdout.split())


@pytest.mark.parametrize("output, message", [
    ("nope/out.yaml", "the folder nope does not exist; create it, or leave out -o to write the spec to stdout"),
    ("config.json/out.yaml", "config.json is not a folder; name a file in a folder, or leave out -o to write the "
                             "spec to stdout"),
])
def test_output_into_a_folder_that_is_not_there_is_refused_before_the_import(tmp_path, monkeypatch, output,
                                                                             message):
    _write(tmp_path, with_(LLAMA, wibble=1))  # an unknown key: the import would fail, but never runs
    monkeypatch.chdir(tmp_path)
    result = run(["import", "config.json", "-o", output, "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == f"Error: Invalid value for '-o' / '--output': {message}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


def test_output_through_a_symlink_is_refused_and_its_target_kept(tmp_path):
    # issue 25: import -o LINK --force wrote through the link; the write rule refuses it
    path = _write(tmp_path, LLAMA)
    (tmp_path / "real.yaml").write_text("old\n", encoding="utf-8")
    (tmp_path / "link.yaml").symlink_to("real.yaml")
    result = run(["import", str(path), "-o", str(tmp_path / "link.yaml"), "--force", "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (
        2, f"Error: cannot write {tmp_path}/link.yaml: {tmp_path}/link.yaml is a symbolic link; modelspec never "
           "writes through one (a checkout may carry a link to any file): remove the link, or write the file it "
           "names yourself\n")
    assert (tmp_path / "link.yaml").is_symlink()
    assert (tmp_path / "real.yaml").read_text(encoding="utf-8") == "old\n"


def test_output_dash_is_stdout(tmp_path, monkeypatch):
    _write(tmp_path, LLAMA)
    monkeypatch.chdir(tmp_path)
    plain = run(["import", "config.json", "--root", str(tmp_path)])
    dash = run(["import", "config.json", "-o", "-", "--root", str(tmp_path)])
    assert (dash.exit_code, dash.stdout, dash.stderr) == (0, plain.stdout, "")
    assert plain.stdout.startswith("# imported by modelspec import from config.json\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_name_is_a_usage_error(tmp_path, name):
    path = _write(tmp_path, LLAMA)
    result = run(["import", str(path), "--name", name, "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines()[-1] == ("Error: Invalid value for '--name': a name is not empty; leave out "
                                              "--name to take the config's own name")


def test_the_schema_line_points_at_the_repository_schema_from_the_output(tmp_path):
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "model-spec.schema.json").write_text("{}", encoding="utf-8")
    (tmp_path / "specs" / "a" / "b").mkdir(parents=True)
    path = _write(tmp_path, LLAMA)
    out = tmp_path / "specs" / "a" / "b" / "x.yaml"
    result = run(["import", str(path), "-o", str(out), "--source", "here", "--source", "there", "--root",
                  str(tmp_path)])
    assert result.exit_code == 0
    assert out.read_text(encoding="utf-8").splitlines()[:6] == [
        "# yaml-language-server: $schema=../../../schemas/model-spec.schema.json",
        "# source: here",
        "# source: there",
        "# imported by modelspec import from config.json",
        "# explain any hand edit in this header",
        "---"]


# ---- the cases ------------------------------------------------------------------------

def _case(tmp_path: Path, name: str) -> Dict[str, Any]:
    """Import a case through the command and return the spec it prints, loaded."""
    from pipeline.spec.yaml_source import load_bytes

    result = run(["import", str(next(CASES.glob(f"{name}-*.config.json"))), "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (0, "")
    return load_bytes(result.stdout.encode("utf-8"), "out").data


def test_c13_all_moe_config_invents_no_dense_layer_and_no_zero_width(tmp_path):
    data = _case(tmp_path, "c13")
    assert "intermediate_size" not in data and "layers" not in data
    assert {key: data[key] for key in ("arch", "num_experts", "moe_intermediate_size", "num_shared_experts")} == {
        "arch": "qwen3_moe", "num_experts": 128, "moe_intermediate_size": 768, "num_shared_experts": 0}
    assert 0 not in [value for value in data.values() if isinstance(value, int) and not isinstance(value, bool)
                     and value is not data["num_shared_experts"]]


def test_c14_nested_text_config_is_read_at_the_top_level(tmp_path):
    data = _case(tmp_path, "c14")
    assert {key: data[key] for key in ("hidden_size", "num_hidden_layers", "mtp_depth", "torch_dtype", "arch")} == {
        "hidden_size": 2048, "num_hidden_layers": 4, "mtp_depth": 1, "torch_dtype": "bfloat16", "arch": "qwen3_5_moe"}
    assert data["vision"] == {"hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16,
                              "name": "vision", "intermediate_size": 4304, "out_hidden_size": 2048, "patch_size": 16,
                              "in_channels": 3, "temporal_patch_size": 2, "spatial_merge_size": 2,
                              "num_position_embeddings": 2304}


def test_c15_dtype_is_torch_dtype(tmp_path):
    assert _case(tmp_path, "c15")["torch_dtype"] == "bfloat16"


# ---- any config at all -------------------------------------------------------------------

def test_a_layer_count_no_model_has_is_refused_before_it_costs_memory():
    assert refusals(with_(QWEN3_NEXT, num_hidden_layers=10 ** 30)) == [
        (("num_hidden_layers",), "import.value",
         "num_hidden_layers is 1000000000000000000000000000000, more layers than the importer walks (100000); check "
         "the config")]
    assert refusals(with_(QWEN2_5_VL, vision_config=with_(TOWER, depth=100_001))) == [
        (("vision_config", "depth"), "import.value",
         "vision_config.depth is 100001, more layers than the importer walks (100000); check the config")]


@pytest.mark.parametrize("config, expected", [
    # n_routed_experts left out: its config class's default (DeepseekV3Config(n_routed_experts=256), transformers
    # 5.24.0), so the dense-then-MoE rule reads it as it reads it beside a stated count
    pytest.param(with_(DEEPSEEK, n_routed_experts=..., first_k_dense_replace="1"), [
        (("first_k_dense_replace",), "import.value",
         'first_k_dense_replace must be an integer of at least 0, got "1"')], id="dense-string"),
    # a family whose config class never reads it
    pytest.param(with_(QWEN3_MOE, first_k_dense_replace=[1]), [
        (("first_k_dense_replace",), "import.unknown-key", not_read("first_k_dense_replace", "qwen3_moe"))],
                 id="qwen3_moe-list"),
    pytest.param(with_(DEEPSEEK, first_k_dense_replace="1"), [
        (("first_k_dense_replace",), "import.value",
         'first_k_dense_replace must be an integer of at least 0, got "1"')], id="moe-rule"),
])
def test_a_first_k_dense_replace_that_is_not_a_count_is_refused_not_crashed(config, expected):
    assert refusals(config) == expected


_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 2 ** 70), st.floats(allow_nan=False),
                    st.text(max_size=4), st.lists(st.integers(-1, 8), max_size=4),
                    st.sampled_from([[F], [S, F], [L, F], {}, {"a": 1}]))
_BASES = [json.loads(path.read_text(encoding="utf-8")) for path in sorted(CONFIGS.glob("*.json"))]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_BASES), st.data())
def test_any_config_is_imported_or_refused_never_crashed(base, data):
    config = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 4))):
        target = config
        nested = [key for key in ("text_config", "vision_config") if isinstance(config.get(key), dict)]
        if nested and data.draw(st.booleans()):
            target = config[data.draw(st.sampled_from(nested))]
        target[data.draw(st.sampled_from(sorted(target) + ["wibble"]))] = data.draw(_VALUES)
    try:
        import_config(config, load_op_profiles(), fallback_name="x", allow_unknown=data.draw(st.booleans()))
    except ConfigImportError as error:
        assert error.issues and all(issue.code in CODES or issue.code.startswith(("spec.", "stack."))
                                    for issue in error.issues)


def test_a_name_another_spec_states_is_refused_and_nothing_is_written(tmp_path):
    (tmp_path / "specs" / "llama").mkdir(parents=True)
    taken = tmp_path / "specs" / "llama" / "first.yaml"
    assert run(["import", str(CONFIGS / "llama-3.1-8b.json"), "--name", "llama-x", "-o", str(taken),
                "--root", str(tmp_path)]).exit_code == 0
    second = tmp_path / "specs" / "llama" / "second.yaml"
    result = run(["import", str(CONFIGS / "llama-3.1-8b.json"), "--name", "LLAMA-X", "-o", str(second),
                  "--root", str(tmp_path)])
    assert (result.exit_code, second.exists()) == (1, False)
    assert result.stderr == ("specs/llama/second.yaml: error [spec.duplicate-name] name 'LLAMA-X' is already the "
                             "name of specs/llama/first.yaml; choose another --name\n")
    # writing over the spec that holds the name is re-importing it, not taking it
    assert run(["import", str(CONFIGS / "llama-3.1-8b.json"), "--name", "llama-x", "-o", str(taken), "--force",
                "--root", str(tmp_path)]).exit_code == 0


# ---- families as data -------------------------------------------------------------------

REFUSED = CONFIGS / "refused"


def _remote(model_type: str, model_class: str) -> str:
    """The refusal of a config whose model type no profile prices and whose auto_map names its own code."""
    return (f'no op profile prices model_type "{model_type}", and the config loads the checkpoint\'s own modelling '
            f'code (auto_map AutoModelForCausalLM: {model_class}); transformers 5.24.0 does not know "{model_type}": '
            "only the hub repository's own code implements it; modelspec prices what transformers implements; a "
            "model of a priced family under a model_type of its own is imported with --arch and that family's op "
            "profile")


@pytest.mark.parametrize("config, line", [
    ("baichuan2-7b-chat.json",
     "18:3: error [import.remote-code] " + _remote("baichuan", "modeling_baichuan.BaichuanForCausalLM")),
    ("chatglm3-6b.json",
     "3:3: error [import.remote-code] " + _remote("chatglm", "modeling_chatglm.ChatGLMForConditionalGeneration")),
    ("falcon-7b-refinedweb.json",
     "23:3: error [import.remote-code] " + _remote("RefinedWebModel", "modelling_RW.RWForCausalLM")),
    ("minicpm3-4b.json",
     "1:1: error [import.no-model-type] the config states no model_type and its modelling code is the checkpoint's "
     "own (auto_map AutoModelForCausalLM: modeling_minicpm.MiniCPM3ForCausalLM), so no op profile can be picked or "
     "cite that code; modelspec imports the model types whose modelling code ships with transformers"),
])
def test_a_config_of_remote_code_is_refused_in_one_line_and_nothing_is_written(tmp_path, config, line):
    out = tmp_path / "out.yaml"
    result = run(["import", str(REFUSED / config), "-o", str(out), "--root", str(ROOT)])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"tests/data/configs/refused/{config}:{line}\n")
    assert not out.exists()


def test_a_model_type_transformers_implements_and_no_profile_prices_is_refused_saying_how_to_draft_it():
    result = run(["import", str(REFUSED / "xlstm-7b.json"), "--root", str(ROOT)])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", 'tests/data/configs/refused/xlstm-7b.json:29:3: error [import.unknown-model-type] no op profile '
               'prices model_type "xlstm"; transformers 5.24.0 implements xlstm natively; draft a profile: '
               "modelspec reference --draft xlstm config.json\n")


_NATIVE = ('no op profile prices model_type "xlstm"; transformers 5.24.0 implements xlstm natively; draft a '
           "profile: modelspec reference --draft xlstm config.json")
_OWN_CODE = ("transformers 5.24.0 does not know \"my_llama\": only the hub repository's own code implements it; "
             "modelspec prices what transformers implements; ")


@pytest.mark.parametrize("config, expected", [
    # an auto_map does not make a model type transformers implements "remote code" (DeepSeek-V2's, Phi-MoE's)
    (with_(LLAMA, model_type="xlstm", auto_map={"AutoModelForCausalLM": "modeling_xlstm.xLSTMForCausalLM"}),
     ("import.unknown-model-type", _NATIVE)),
    (with_(LLAMA, model_type="xlstm"), ("import.unknown-model-type", _NATIVE)),
    (with_(LLAMA, model_type="my_llama", auto_map={"AutoModelForCausalLM": "modeling_my.MyForCausalLM"}),
     ("import.remote-code", 'no op profile prices model_type "my_llama", and the config loads the checkpoint\'s own '
                            "modelling code (auto_map AutoModelForCausalLM: modeling_my.MyForCausalLM); " + _OWN_CODE
                            + "a model of a priced family under a model_type of its own is imported with --arch and "
                              "that family's op profile")),
    # a model type of its own whose architectures names a priced transformers class: the --arch that reads it
    (with_(LLAMA, model_type="my_llama", architectures=["MyForCausalLM", "MistralForCausalLM"]),
     ("import.remote-code", 'no op profile prices model_type "my_llama"; ' + _OWN_CODE + "its architectures names "
                            "MistralForCausalLM, transformers' class of model_type \"mistral\": import it as that "
                            "family with --arch mistral")),
])
def test_an_unpriced_model_type_is_refused_saying_whether_transformers_implements_it(config, expected):
    assert refusals(config) == [(("model_type",), *expected)]


def test_a_config_whose_architectures_names_another_model_type_is_refused_naming_both(tmp_path):
    """transformers builds a llama config as LlamaForCausalLM whatever architectures says (so does the reference,
    census.model_class): the config names two models, and modelspec prices neither."""
    path = _write(tmp_path, with_(LLAMA, architectures=["MistralForCausalLM"]))
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "config.json:8:3: error [import.architectures] architectures names MistralForCausalLM, transformers "
               '5.24.0\'s class of model_type "mistral", but model_type is "llama", which transformers builds as its '
               "own class (LlamaForCausalLM or LlamaModel) whatever architectures says; the config names two "
               "models, so correct the one its weights are not\n")


@pytest.mark.parametrize("config", [
    with_(LLAMA, architectures=["LlamaForCausalLM"]),
    with_(LLAMA, architectures=["Ernie4_5_ForCausalLM"]),  # a class of the checkpoint's own code: it names no type
])
def test_architectures_naming_the_model_types_class_or_no_transformers_class_is_read(config):
    assert imported(config) == imported(LLAMA)


def test_a_model_type_transformers_does_not_know_is_read_as_its_architectures_class_by_arch():
    """Kimi K2's case: model_type kimi_k2, architectures DeepseekV3ForCausalLM, read with --arch."""
    config = with_(LLAMA, model_type="my_llama", architectures=["MistralForCausalLM"])
    assert imported(config, arch="llama")["arch"] == "llama"


def test_a_family_is_added_by_one_yaml_file(tmp_path):
    """A copy of the llama profile under a new model type, in a repository's own op_profiles/: no Python."""
    profiles = tmp_path / "op_profiles"
    shutil.copytree(ROOT / "op_profiles", profiles)
    text = (profiles / "llama.yaml").read_text(encoding="utf-8")
    head, rest = text.split("model_types: [llama]\n")
    rest = rest[rest.index("default:"):]  # llama's match patterns stay llama's
    (profiles / "my_llama.yaml").write_text(head.replace("arch: llama", "arch: my_llama")
                                            + 'model_types: [my_llama]\nmatch: ["my-llama-*"]\n' + rest,
                                            encoding="utf-8")
    config = with_(LLAMA, model_type="my_llama", _name_or_path="org/My-Llama-7B", num_key_value_heads=2)
    path = _write(tmp_path, config)
    result = run(["import", str(path), "--root", str(tmp_path)])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout.splitlines()[3:] == [  # the import note (two lines) and ---
        "name: my-llama-7b", "hidden_size: 64", "num_hidden_layers: 2", "num_attention_heads: 4", "vocab_size: 100",
        "num_key_value_heads: 2", "intermediate_size: 128", "tie_word_embeddings: false", "qk_norm: false",
        "qkv_bias: false", "o_bias: false", "mlp_bias: false", "norm_bias: false", "parameters:", "  total: 86848",
        "arch: my_llama"]
    # the bundled importer does not know it
    assert run(["import", str(path), "--root", str(ROOT)]).exit_code == 1


def test_a_gpt2_config_that_leaves_out_n_inner_gets_four_times_the_width():
    """The original hub GPT-2 configs have no n_inner key: GPT2Block then uses 4 * hidden_size."""
    left_out = with_(GPT2, n_inner=...)
    assert imported(left_out) == imported(GPT2)
    assert imported(left_out)["intermediate_size"] == 256
    result = import_config(left_out, load_op_profiles(), fallback_name="test")
    assert result.origins["intermediate_size"] == "n_inner (not stated: 4 * hidden_size, its config class's default)"


def test_the_schema_names_exactly_the_importers_layouts():
    from pipeline.importer.config_json import ATTENTION_RULES, FFN_RULES, TOWER_RULES

    layout = json.loads((ROOT / "schemas" / "op-profile.schema.json").read_text(encoding="utf-8"))[
        "$defs"]["family"]["properties"]["layout"]["properties"]
    assert layout["attention"]["enum"] == list(ATTENTION_RULES)
    assert layout["ffn"]["enum"] == list(FFN_RULES)
    assert layout["tower"]["enum"] == list(TOWER_RULES)


def _descriptions_missing(schema: Any, path: str = "") -> List[str]:
    """The properties of *schema*, at any depth, that have no description."""
    missing = []
    if isinstance(schema, dict):
        for name, sub in schema.get("properties", {}).items():
            if "description" not in sub:
                missing.append(f"{path}.{name}")
        for key, sub in schema.items():
            missing += _descriptions_missing(sub, f"{path}.{key}")
    elif isinstance(schema, list):
        for index, sub in enumerate(schema):
            missing += _descriptions_missing(sub, f"{path}[{index}]")
    return missing


def test_every_property_of_the_family_schema_is_described():
    defs = json.loads((ROOT / "schemas" / "op-profile.schema.json").read_text(encoding="utf-8"))["$defs"]
    assert _descriptions_missing({"family": defs["family"], "familyKey": defs["familyKey"]}) == []


def test_a_config_of_a_family_not_yet_priced_is_refused_in_one_line(tmp_path: Path) -> None:
    config = tmp_path / "whisper.json"
    config.write_text('{\n  "model_type": "whisper",\n  "d_model": 64\n}\n', encoding="utf-8")
    result = run(["import", str(config), "--root", str(ROOT)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (f"{config}:2:3: error [import.unknown-model-type] no op profile prices model_type "
                             '"whisper"; transformers 5.24.0 implements whisper natively; draft a profile: '
                             "modelspec reference --draft whisper config.json\n")


@pytest.mark.parametrize("config, named", [
    (with_(LLAMA, architectures=["LlamaForSequenceClassification"]), "LlamaForSequenceClassification"),  # score
    (with_(LLAMA, architectures=["LlamaForTokenClassification"]), "LlamaForTokenClassification"),
    (with_(LLAMA, architectures=["LlamaForQuestionAnswering"]), "LlamaForQuestionAnswering"),  # qa_outputs
    (with_(T5, architectures=["T5EncoderModel"]), "T5EncoderModel"),  # the encoder stack alone
    (with_(BART, architectures=["BartForCausalLM"]), "BartForCausalLM"),  # an encoder-decoder's decoder alone
])
def test_architectures_naming_a_task_head_is_refused(config: Dict[str, Any], named: str) -> None:
    """transformers builds the class architectures names (so does the reference, census.model_class): a classifier
    in place of lm_head, or one stack, is not the generative model the profiles price (each counted wrong before:
    branch variants)."""
    [(path, code, message)] = refusals(config)
    assert (path, code) == (("architectures",), "import.unsupported")
    assert message.startswith(f"architectures names {named}, a task head")


def test_architectures_naming_the_headless_base_model_is_refused_only_when_the_head_holds_parameters() -> None:
    """LlamaModel builds no lm_head: an untied config counted its vocab_size x hidden_size too many; tied, the head
    holds nothing and the count is the generative model's (bart-large's BartModel); Phi's head keeps its bias when
    tied, which PhiModel does not build."""
    [(path, code, message)] = refusals(with_(LLAMA, architectures=["LlamaModel"], tie_word_embeddings=False))
    assert (path, code) == (("architectures",), "import.unsupported")
    assert message.startswith("architectures names LlamaModel, a headless base model: transformers builds it "
                              "without the output head the op profile prices (6,400 parameters here)")
    assert imported(with_(LLAMA, architectures=["LlamaModel"], tie_word_embeddings=True))["arch"] == "llama"
    assert refusals(with_(PHI, architectures=["PhiModel"], tie_word_embeddings=True))[0][2].startswith(
        "architectures names PhiModel, a headless base model")
