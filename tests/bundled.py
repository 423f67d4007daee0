"""The bundled op profiles and model types, as the messages that list them spell them.

One place for the tests that assert a message naming every family (an unknown arch, an unknown model type), so
that adding a family changes one list here, checked against the folder by
``test_op_profiles.py::test_the_bundled_folder_is_the_default``.
"""

from __future__ import annotations

#: Every bundled profile's arch, sorted (``vision`` among them).
ARCHS = ("cohere", "dbrx", "deepseek_v2", "deepseek_v3", "dots1", "exaone4", "gemma3", "gpt2", "gpt_oss", "granite", "granitemoe", "llama", "minimax_m2", "mistral",
         "mistral3", "mixtral", "nemotron_h", "olmo", "olmo2", "olmoe", "phi", "phi3", "phimoe", "qwen2", "qwen2_5_vl", "qwen2_moe", "qwen2_vl", "qwen3",
         "qwen3_5", "qwen3_5_moe", "qwen3_moe", "qwen3_next", "roberta", "seed_oss", "starcoder2", "t5", "vision")

#: The archs a spec may state: every bundled one but the vision towers'.
LANGUAGE_ARCHS = tuple(arch for arch in ARCHS if arch != "vision")

#: Every model type a bundled profile prices, sorted.
MODEL_TYPES = ("cohere", "dbrx", "deepseek_v2", "deepseek_v3", "dots1", "exaone4", "gemma3", "gemma3_text", "gpt2", "gpt_oss", "granite", "granitemoe", "kimi_k2",
               "llama", "minimax_m2", "mistral", "mistral3", "mixtral", "nemotron_h", "olmo", "olmo2", "olmoe", "phi", "phi3", "phimoe", "qwen2",
               "qwen2_5_vl", "qwen2_5_vl_text", "qwen2_moe", "qwen2_vl", "qwen2_vl_text", "qwen3", "qwen3_5", "qwen3_5_moe",
               "qwen3_5_moe_text", "qwen3_5_text", "qwen3_moe", "qwen3_next", "roberta", "seed_oss", "starcoder2", "t5")
