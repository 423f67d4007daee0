"""The FLOPs and KV-cache figures against the reference: FlopCounterMode over transformers' own forward.

For every priced family (each arch the catalogue has a model of, its first model by name), the model is built
from its catalogue config (tests/data/configs/) on the meta device, with eager attention and the experts'
``batched_mm`` path (sdpa's fused attention and the default grouped-matmul experts are not priced by torch
2.13's counter; the eager expert loop asks ``nonzero`` of routing values, which the meta device does not have:
``batched_mm`` runs the same top-k expert matmuls, one ``bmm`` per token and expert), and one forward of S tokens
(batch 1, the cache on; with cross-attention layers, mllama's, one image's projected tower states too, the tokens
flops.py prices them over) runs under ``torch.utils.flop_counter.FlopCounterMode``. At S = 1, 128 and 1,024 the
counter's total must equal the ``dense`` forward of pipeline/pricing/flops.py exactly, and the elements of the
cache the forward returns must equal the KV-cache and state bytes over the dtype's bytes. Marked ``reference``
and skipped without torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict

import pytest

pytestmark = pytest.mark.reference

try:
    import torch  # noqa: F401  # pylint: disable=unused-import
    import transformers  # noqa: F401  # pylint: disable=unused-import
except ImportError:
    pytest.skip("the reference extra (torch 2.13.0, transformers 5.24.0) is not installed: "
                "pip install -e '.[reference]'", allow_module_level=True)

from pipeline.check.runner import check_file  # noqa: E402
from pipeline.importer.config_json import import_config  # noqa: E402
from pipeline.pricing.flops import dtype_bytes, image_tokens, model_flops  # noqa: E402
from pipeline.pricing.op_profiles import load_op_profiles  # noqa: E402
from pipeline.pricing.stack import spec_layer_stack  # noqa: E402
from pipeline.reference.census import flop_census  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROFILES = load_op_profiles(ROOT / "op_profiles")


def _first_of_each_arch() -> Dict[str, Path]:
    """The first catalogue spec by name of each arch whose config the tests hold."""
    chosen: Dict[str, Path] = {}
    for path in sorted((ROOT / "specs").rglob("*.yaml"), key=lambda p: p.name):
        checked = check_file(path, str(path.relative_to(ROOT)), PROFILES)
        config = ROOT / "tests" / "data" / "configs" / f"{checked.spec.name}.json"
        if checked.stack is not None and config.is_file():
            chosen.setdefault(checked.stack.arch, path)
    return chosen


#: Archs whose reference forward the meta device cannot run, and why.
CANNOT_RUN = {"dbrx": "DbrxExperts loops over torch.nonzero of its expert mask, which the meta device cannot "
                      "evaluate (transformers 5.24.0 gives it no batched_mm experts path)"}
FAMILIES = {arch: path for arch, path in _first_of_each_arch().items() if arch not in CANNOT_RUN}


def test_every_priced_family_is_compared() -> None:
    # The families the catalogue holds no checkpoint of are held by the differential suite alone; dbrx's forward
    # cannot run on the meta device (CANNOT_RUN); vision is the towers' profile, whose tokens are not the text's.
    assert (len(FAMILIES), sorted(set(PROFILES.profiles) - set(FAMILIES))) == (40, [
        "apertus", "bamba", "bloom", "cohere2", "dbrx", "dots1", "falcon", "gemma", "gemma2", "glm", "glm4", "glm4v",
        "glm4v_moe", "gpt_neox", "gptj", "granitemoe", "helium", "hunyuan_v1_dense", "idefics3", "llava", "mamba2",
        "ministral", "mt5", "nemotron", "olmo", "olmoe", "opt", "qwen2_moe", "seed_oss", "smolvlm", "stablelm",
        "vision"])


#: Families whose multimodal class cannot run a text-only forward at transformers 5.24.0, so the reference runs its
#: language model alone (the same text forward): the class it is built as, and why.
TEXT_ONLY = {"llama4": ("Llama4ForCausalLM", "Llama4ForConditionalGeneration.forward reads image_outputs from its "
                                             "language model's MoeCausalLMOutputWithPast, which has none: "
                                             "AttributeError")}


def _eager_idle_experts(arch: str, checked, seq_len: int) -> int:
    """FLOPs the eager reference spends on experts a token is not routed to: Llama 4's Llama4TextMoe.forward hands
    Llama4TextExperts every token once per expert (hidden_states.repeat(num_experts, 1), scaled by router scores
    that are 0 off the top-k), whose bmm runs all num_local_experts; the pricing counts a token's top-k experts
    only (docs/flops.md). 0 for every other family."""
    if arch != "llama4":
        return 0
    spec = checked.spec
    per_expert = 3 * spec.hidden_size * spec.moe_intermediate_size
    moe_layers = sum(group.count for group in checked.stack.groups if group.kind.ffn == "moe")
    return 2 * seq_len * moe_layers * (spec.num_experts - spec.num_experts_per_tok) * per_expert


#: Families whose catalogue config names a headless class, which computes no logits: the class with the head the
#: profile prices, which the reference runs instead, and why.
HEADED = {"bart": ("BartForConditionalGeneration", "bart-large's architectures names BartModel, which holds no "
                                                   "lm_head (tied, it adds no parameter, but its logits are a matmul)")}


def _reference_config(arch: str, config: Dict) -> Dict:
    """The config the reference runs: the family's text_config alone for a :data:`TEXT_ONLY` family, the class with
    the head for a :data:`HEADED` one."""
    if arch in HEADED:
        return {**config, "architectures": [HEADED[arch][0]]}
    if arch not in TEXT_ONLY:
        return config
    return {**config["text_config"], "architectures": [TEXT_ONLY[arch][0]]}


#: Families with no attention layer: their FLOPs are linear in S, so S = 1 and 128 pin them, and their eager
#: selective scan loops over the tokens in Python (FalconMamba at S = 1,024 took 118 s of the 120 s limit).
LINEAR_IN_S = ("falcon_mamba", "mamba")
CASES = [(arch, seq_len) for arch in sorted(FAMILIES) for seq_len in (1, 128, 1024)
         if not (seq_len == 1024 and arch in LINEAR_IN_S)]


@pytest.mark.parametrize("arch, seq_len", CASES)
def test_dense_flops_and_the_cache_equal_the_reference(arch: str, seq_len: int) -> None:
    path = FAMILIES[arch]
    checked = check_file(path, str(path.relative_to(ROOT)), PROFILES)
    config = json.loads((ROOT / "tests" / "data" / "configs" / f"{checked.spec.name}.json").read_text())
    ours = model_flops(checked.spec, PROFILES.get(arch), checked.stack, seq_len)
    # a cross-attention layer (mllama) attends to one image at its most tiles, as flops.py prices it: the forward
    # hands the text model that many tokens of projected tower states (without them it skips those layers)
    cross = image_tokens(checked.spec) if any(g.kind.attention == "cross" for g in checked.stack.groups) else 0
    reference = flop_census(_reference_config(arch, config), seq_len, cross_tokens=cross)
    assert (checked.spec.name, ours.forward("dense") + _eager_idle_experts(arch, checked, seq_len)) == (
        checked.spec.name, reference.flops)
    assert ours.kv_bytes() / dtype_bytes(checked.spec) == reference.cache_elements


#: StableLM has no catalogue model: a StableLM 2 12B-shaped config (tests/test_reference.py's, written from the
#: model's sizes) with per-head q/k LayerNorms, whose FLOPs are the matmuls', the norms adding none.
STABLELM_2_12B_SHAPED = {"model_type": "stablelm", "architectures": ["StableLmForCausalLM"], "vocab_size": 100352,
                         "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 40,
                         "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 4096,
                         "hidden_act": "silu", "layer_norm_eps": 1e-05, "partial_rotary_factor": 0.25,
                         "use_qkv_bias": False, "tie_word_embeddings": False, "qk_layernorm": True}


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("seq_len", [1, 128, 1024])
def test_stablelm_with_per_head_norms_flops_and_cache_equal_the_reference(parallel: bool, seq_len: int) -> None:
    config = {**STABLELM_2_12B_SHAPED, "use_parallel_residual": parallel}
    spec = import_config(config, PROFILES, fallback_name="stablelm-2-12b-shaped").spec
    stack = spec_layer_stack(spec, PROFILES)
    assert [group.kind.name for group in stack.groups] == [
        "full_attention_parallel_qk_norm" if parallel else "full_attention_qk_norm"]
    ours = model_flops(spec, PROFILES.get("stablelm"), stack, seq_len)
    reference = flop_census(config, seq_len)
    assert ours.forward("dense") == reference.flops
    assert ours.kv_bytes() / dtype_bytes(spec) == reference.cache_elements
