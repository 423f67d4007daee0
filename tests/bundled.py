"""The bundled op profiles and model types, as the messages that list them spell them.

One place for the tests that assert a message naming every family (an unknown arch, an unknown model type), so
that adding a family changes one list here, checked against the folder by
``test_op_profiles.py::test_the_bundled_folder_is_the_default``.
"""

from __future__ import annotations

#: Every bundled profile's arch, sorted (``vision`` among them).
ARCHS = ("apertus", "bamba", "bart", "bloom", "cohere", "cohere2", "dbrx", "deepseek_v2", "deepseek_v3", "dots1",
         "ernie4_5", "exaone4", "falcon", "falcon_mamba", "gemma", "gemma2", "gemma3", "glm", "glm4", "glm4v",
         "glm4v_moe", "gpt2", "gpt_bigcode", "gpt_neox", "gpt_oss", "gptj", "granite", "granitemoe", "helium",
         "hunyuan_v1_dense", "idefics3", "llama", "llama4", "llava", "mamba", "mamba2", "minimax_m2", "ministral",
         "mistral", "mistral3", "mixtral", "mllama", "mt5", "nemotron", "nemotron_h", "olmo", "olmo2", "olmo3", "olmoe",
         "opt", "phi", "phi3", "phimoe", "qwen2", "qwen2_5_vl", "qwen2_moe", "qwen2_vl", "qwen3", "qwen3_5",
         "qwen3_5_moe", "qwen3_moe", "qwen3_next", "qwen3_vl", "qwen3_vl_moe", "roberta", "seed_oss", "smollm3",
         "smolvlm", "stablelm", "starcoder2", "t5", "vision")

#: The archs a spec may state: every bundled one but the vision towers'.
LANGUAGE_ARCHS = tuple(arch for arch in ARCHS if arch != "vision")

#: Every model type a bundled profile prices, sorted.
MODEL_TYPES = ("apertus", "bamba", "bart", "bloom", "cohere", "cohere2", "dbrx", "deepseek_v2", "deepseek_v3", "dots1",
               "ernie4_5", "exaone4", "falcon", "falcon_mamba", "gemma", "gemma2", "gemma3", "gemma3_text", "glm",
               "glm4", "glm4v", "glm4v_moe", "glm4v_moe_text", "glm4v_text", "gpt2", "gpt_bigcode", "gpt_neox",
               "gpt_oss", "gptj", "granite", "granitemoe", "helium", "hunyuan_v1_dense", "idefics3", "kimi_k2", "llama",
               "llama4", "llama4_text", "llava", "mamba", "mamba2", "minimax_m2", "ministral", "mistral", "mistral3",
               "mixtral", "mllama", "mt5", "nemotron", "nemotron_h", "olmo", "olmo2", "olmo3", "olmoe", "opt", "phi",
               "phi3", "phimoe", "qwen2", "qwen2_5_vl", "qwen2_5_vl_text", "qwen2_moe", "qwen2_vl", "qwen2_vl_text",
               "qwen3", "qwen3_5", "qwen3_5_moe", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_moe", "qwen3_next",
               "qwen3_vl", "qwen3_vl_moe", "qwen3_vl_moe_text", "qwen3_vl_text", "roberta", "seed_oss", "smollm3",
               "smolvlm", "stablelm", "starcoder2", "t5")

#: How many specs the catalogue (``specs/``) holds: the tests that count its files, rows and names read it here, so
#: a model added changes one number, checked against the folder by
#: ``test_catalogue.py::test_the_catalogue_count_is_the_folders``.
CATALOGUE_SPECS = 53
