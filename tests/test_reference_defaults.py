"""The default config of every priced model type, in both forms transformers 5.24.0 saves it, imports exactly.

``tests/data/defaults/<model_type>.saved.json`` is ``AutoConfig.for_model(t).save_pretrained()`` (the diff against
``PreTrainedConfig``'s defaults) and ``<model_type>.full.json`` its full ``to_dict()``, both written by
``bench/reference_defaults.py``. Each must import with no unknown key and count as transformers does: the numbers
below were measured from transformers 5.24.0 (torch 2.13.0, CPU), the class ``AutoModelForCausalLM`` (for a
config with a ``vision_config``, ``AutoModelForImageTextToText``; T5, BART ``AutoModelForSeq2SeqLM``; RoBERTa
``AutoModelForCausalLM``'s ``RobertaForCausalLM``) built on the meta device, unique parameters counted. No torch is
needed here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.importer.config_json import import_config
from pipeline.pricing.op_profiles import load_op_profiles

DEFAULTS = Path(__file__).parent / "data" / "defaults"

#: transformers 5.24.0's parameter count of each model type's default config.
REFERENCE = {
    "bart": 406_291_456, "bloom": 16_156_544, "cohere": 34_980_831_232, "deepseek_v3": 671_026_404_352, "exaone4": 9_429_069_824, "falcon": 6_921_720_704, "gemma3": 2_723_312_896,
    "gemma3_text": 2_628_658_432, "gpt2": 124_439_808, "gpt_bigcode": 111_446_784, "gpt_neox": 20_554_567_680, "gptj": 6_050_882_784, "gpt_oss": 116_829_156_672, "granite": 6_738_415_616,
    "llama": 6_738_415_616, "minimax_m2": 228_689_748_992, "mistral": 7_241_732_096, "mistral3": 23_340_272_640,
    "mixtral": 46_702_792_704, "mt5": 172_119_424, "nemotron_h": 1_968_355_712, "olmo2": 6_888_624_128, "opt": 125_239_296, "phi": 1_418_270_720,
    "phi3": 3_821_079_552, "qwen2": 12_049_846_272, "qwen2_5_vl": 75_789_228_800, "qwen2_vl": 73_381_962_752,
    "qwen3": 12_049_461_248, "qwen3_5": 9_407_453_936, "qwen3_5_moe": 35_114_261_360,
    "qwen3_5_moe_text": 34_660_610_688, "qwen3_5_text": 8_953_803_264, "qwen3_moe": 15_350_731_776,
    "qwen3_next": 79_674_391_296, "roberta": 124_696_665, "starcoder2": 3_030_371_328, "t5": 60_506_624,
    "seed_oss": 28_921_040_896, "olmo": 6_888_095_744,
    "qwen3_vl": 12_616_410_352, "qwen3_vl_moe": 14_052_070_640, "glm4v": 10_292_777_472, "idefics3": 6_909_685_760,
    "smolvlm": 6_909_685_760, "mllama": 10_642_941_475,
    # Qwen3-VL's and GLM-4V's text configs, as Qwen2-VL's: AutoModel builds the text model alone, and modelspec adds
    # the lm_head the VLM holds, untied for qwen3_vl_text, glm4v_text and glm4v_moe_text (vocab_size x
    # hidden_size), tied for qwen3_vl_moe_text (Qwen3VLMoeTextConfig(tie_word_embeddings=True)).
    "qwen3_vl_text": 11_427_131_392 + 151_936 * 4_096, "glm4v_text": 8_779_522_048 + 151_552 * 4_096,
    "qwen3_vl_moe_text": 13_173_956_608,
    "glm4v_moe": 104_372_866_880, "glm4v_moe_text": 102_860_135_744 + 151_424 * 4_096,  # untied, as glm4v_text
    # deepseek_v2 is left out: DeepseekV2Config's num_experts_per_tok defaults to None, so its defaults route to no
    # expert and the importer refuses them (stack.moe-without-experts), though transformers builds the model
    # (38,612,307,968 parameters).
    # transformers 5.24.0 has no causal-LM class for the Qwen2-VL and Qwen2.5-VL text configs: AutoModel builds
    # Qwen2VLTextModel / Qwen2_5_VLTextModel (71,460,495,360), and modelspec prices the language model with the
    # untied lm_head Qwen2VLForConditionalGeneration adds to it (vocab_size 152064 x hidden_size 8192).
    "qwen2_vl_text": 71_460_495_360 + 152_064 * 8_192, "qwen2_5_vl_text": 71_460_495_360 + 152_064 * 8_192,
}

FILES = sorted(DEFAULTS.glob("*.json"))


def test_every_priced_model_type_has_both_forms():
    assert sorted(path.name for path in FILES) == sorted(f"{t}.{form}.json" for t in REFERENCE
                                                         for form in ("full", "saved"))


@pytest.mark.parametrize("path", FILES, ids=[path.name for path in FILES])
def test_a_default_config_imports_and_counts_as_the_reference(path):
    config = json.loads(path.read_text(encoding="utf-8"))
    imported = import_config(config, load_op_profiles(), fallback_name=path.stem)
    assert imported.unknown == () and imported.spec.import_gaps is None
    assert imported.spec.parameters.total == REFERENCE[path.name.split(".")[0]]
