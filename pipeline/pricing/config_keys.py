"""The keys every family's config shares, as the importer reads them: one row per key, with the spec field it
feeds and the transformers code that reads it, and the keys read but pricing nothing, with the reason.

A family's import section (:mod:`pipeline.pricing.families`) adds its own keys to these; an op profile is
checked against them when it loads (:mod:`pipeline.pricing.op_profiles`), so the table lives in the pricing
layer, below the importer (:mod:`pipeline.importer.config_json`) that applies it.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping, Tuple

from pipeline.pricing.families import KeyRule


def _row(key: str, fields: str, transform: str = "copy", source: str = "", expect: Any = None) -> KeyRule:
    return KeyRule(key, tuple(fields.split()) if fields else (), transform, source, expect)


_HF = "huggingface/transformers src/transformers/models/"

#: The keys the importer reads from the top level and ``text_config``, one row each.
KEYS: Tuple[KeyRule, ...] = (
    _row("model_type", "arch", "model_type",
         "the op profile whose model_types lists it (op_profiles/*.yaml)"),
    _row("_name_or_path", "name", "name", "the checkpoint's hub id; its last part, lower-cased, unless --name"),
    _row("hidden_size", "hidden_size"),
    _row("num_hidden_layers", "num_hidden_layers"),
    _row("num_attention_heads", "num_attention_heads"),
    _row("vocab_size", "vocab_size"),
    _row("num_key_value_heads", "num_key_value_heads"),
    _row("head_dim", "head_dim"),
    _row("intermediate_size", "intermediate_size"),
    _row("max_position_embeddings", "max_position_embeddings"),
    _row("num_experts", "num_experts"),
    _row("num_experts_per_tok", "num_experts_per_tok"),
    _row("moe_intermediate_size", "moe_intermediate_size"),
    _row("shared_expert_intermediate_size", "shared_expert_intermediate_size"),
    _row("first_k_dense_replace", "first_k_dense_replace"),
    _row("num_nextn_predict_layers", "mtp_depth", source="DeepSeek-V3's MTP modules after the body"),
    _row("mtp_num_hidden_layers", "mtp_depth", source="Qwen3.5's MTP layers after the body"),
    _row("kv_lora_rank", "kv_lora_rank"),
    _row("q_lora_rank", "q_lora_rank"),
    _row("qk_rope_head_dim", "qk_rope_head_dim"),
    _row("qk_nope_head_dim", "qk_nope_head_dim"),
    _row("v_head_dim", "v_head_dim"),
    _row("attn_output_gate", "attn_output_gate"),
    _row("tie_word_embeddings", "tie_word_embeddings"),
    _row("attention_bias", "qkv_bias o_bias", "both",
         _HF + "llama, qwen3, gemma3, gpt_oss, qwen3_next: q/k/v/o_proj bias=config.attention_bias; DeepSeek: "
               "q_a_proj, kv_a_proj_with_mqa and o_proj"),
    _row("mlp_bias", "mlp_bias", source=_HF + "llama/modeling_llama.py LlamaMLP: bias=config.mlp_bias"),
    _row("torch_dtype", "torch_dtype", "dtype", "the dtype named without the torch. prefix an old save may write"),
    _row("dtype", "torch_dtype", "dtype", "transformers >= 4.56 writes dtype where older versions wrote torch_dtype"),
    _row("linear_num_key_heads", "linear_num_key_heads"),
    _row("linear_key_head_dim", "linear_key_head_dim"),
    _row("linear_num_value_heads", "linear_num_value_heads"),
    _row("linear_value_head_dim", "linear_value_head_dim"),
    _row("linear_conv_kernel_dim", "linear_conv_kernel_dim"),
    _row("layer_types", "layer_types", "rule", "written as stated when the op profile names its kinds so"),
    _row("full_attention_interval", "layer_types", "rule",
         _HF + "qwen3_next/configuration_qwen3_next.py: linear_attention unless (i + 1) % interval == 0"),
    _row("attn_layer_indices", "layer_types", "rule",
         _HF + "bamba/configuration_bamba.py: full_attention at the listed layers, a Mamba2 mixer elsewhere"),
    _row("sliding_window_pattern", "layer_types", "rule",
         _HF + "gemma3/configuration_gemma3.py: sliding_attention unless (i + 1) % pattern == 0"),
    _row("_sliding_window_pattern", "layer_types", "rule", "Gemma3TextConfig's later name for sliding_window_pattern"),
    _row("no_rope_layers", "layer_types", "rule",
         _HF + "smollm3/configuration_smollm3.py: sliding_attention where no_rope_layers[i] == 0, with use_sliding_window"),
    _row("no_rope_layer_interval", "layer_types", "rule",
         _HF + "smollm3/configuration_smollm3.py: no_rope_layers is 0 where (i + 1) % interval == 0"),
    _row("sliding_window", "sliding_window", "rule", "written when a layer of the stack slides"),
    _row("use_sliding_window", "sliding_window", "rule",
         _HF + "qwen2/configuration_qwen2.py: sliding_window = sliding_window if use_sliding_window else None"),
    _row("max_window_layers", "layer_types", "rule",
         _HF + "qwen2/configuration_qwen2.py: sliding_attention from layer max_window_layers on"),
    _row("attention_chunk_size", "attention_chunk_size", "rule",
         _HF + "llama4/configuration_llama4.py: chunked_attention on the RoPE layers when set; written when a layer "
               "of the stack attends in chunks"),
    _row("no_rope_layers", "layers", "rule",
         _HF + "llama4/modeling_llama4.py Llama4TextAttention: use_rope = no_rope_layers[layer_idx], the L2 "
               "qk_norm on RoPE layers only"),
    _row("no_rope_layer_interval", "layers", "rule",
         _HF + "llama4/configuration_llama4.py: a NoPE layer where (i + 1) % interval == 0 without no_rope_layers"),
    _row("moe_layers", "layers", "rule",
         _HF + "llama4/modeling_llama4.py Llama4TextDecoderLayer: Llama4TextMoe at the layers it lists"),
    _row("interleave_moe_layer_step", "layers", "rule",
         _HF + "llama4/configuration_llama4.py: moe_layers = range(step - 1, num_hidden_layers, step) without "
               "moe_layers"),
    _row("decoder_sparse_step", "layers", "rule",
         _HF + "qwen3_moe/modeling_qwen3_moe.py Qwen3MoeDecoderLayer: MoE unless in mlp_only_layers, where "
               "(layer_idx + 1) % decoder_sparse_step == 0"),
    _row("mlp_only_layers", "layers", "rule", _HF + "qwen3_moe/modeling_qwen3_moe.py Qwen3MoeDecoderLayer"),
    _row("num_layers", "num_hidden_layers layers", "rule",
         "T5's encoder blocks; num_hidden_layers is encoder plus decoder, and halves of another size are stated "
         "as layers"),
    _row("num_decoder_layers", "num_hidden_layers layers", "rule",
         _HF + "t5/configuration_t5.py: num_decoder_layers if not None else num_layers"),
    _row("encoder_layers", "num_hidden_layers layers", "rule",
         "BART's encoder layers (" + _HF + "bart/modeling_bart.py BartEncoder); num_hidden_layers is encoder plus "
         "decoder, and stacks of another size are stated as layers"),
    _row("decoder_layers", "num_hidden_layers layers", "rule",
         _HF + "bart/modeling_bart.py BartDecoder: config.decoder_layers BartDecoderLayer"),
    _row("relative_attention_num_buckets", "relative_attention_num_buckets",
         source=_HF + "t5/modeling_t5.py T5Attention: relative_attention_bias = nn.Embedding(num_buckets, n_heads)"),
    _row("is_encoder_decoder", "", "encoder_decoder",
         "true for T5 and BART only: the other profiles price decoder-only stacks"),
    _row("cross_attention_layers", "layers", "rule",
         _HF + "mllama/modeling_mllama.py MllamaTextModel: MllamaCrossAttentionDecoderLayer at the listed layers, "
               "MllamaSelfAttentionDecoderLayer elsewhere"),
    _row("text_config", "", "nested", "the language model's keys, read as if stated at the top level"),
    _row("vision_config", "vision", "nested", "the tower, mapped by VISION_KEYS"),
)

#: The keys the importer reads from ``vision_config``.
VISION_KEYS: Tuple[KeyRule, ...] = (
    _row("hidden_size", "vision.hidden_size"),
    _row("depth", "vision.num_hidden_layers", source=_HF + "qwen2_5_vl, qwen3_5 vision configs: the tower's blocks"),
    _row("num_hidden_layers", "vision.num_hidden_layers"),
    _row("num_heads", "vision.num_attention_heads", source=_HF + "qwen2_5_vl, qwen3_5 vision configs: heads per block"),
    _row("num_attention_heads", "vision.num_attention_heads"),
    _row("intermediate_size", "vision.intermediate_size"),
    _row("out_hidden_size", "vision.out_hidden_size"),
    _row("patch_size", "vision.patch_size"),
    _row("spatial_merge_size", "vision.spatial_merge_size"),
    _row("in_channels", "vision.in_channels"),
    _row("num_channels", "vision.in_channels",
         source=_HF + "siglip/configuration_siglip.py SiglipVisionConfig: the patch embedding's input channels"),
    _row("temporal_patch_size", "vision.temporal_patch_size"),
    _row("num_position_embeddings", "vision.num_position_embeddings"),
    _row("image_size", "vision.num_position_embeddings", "rule",
         _HF + "siglip/modeling_siglip.py SiglipVisionEmbeddings: num_positions = (image_size // patch_size) ** 2"),
    _row("mlp_ratio", "vision.intermediate_size", "rule",
         _HF + "qwen2_vl/modeling_qwen2_vl.py Qwen2VLVisionBlock: VisionMlp(hidden_dim=int(config.embed_dim * "
               "config.mlp_ratio))"),
    _row("fullatt_block_indexes", "vision.layers", "rule",
         _HF + "qwen2_5_vl/modeling_qwen2_5_vl.py: full attention at these blocks, windowed attention elsewhere"),
    _row("deepstack_visual_indexes", "vision.num_deepstack_mergers", "rule",
         _HF + "qwen3_vl/modeling_qwen3_vl.py Qwen3VLVisionModel: one deepstack patch merger per index"),
    _row("supported_aspect_ratios", "vision.num_aspect_ratios", "rule",
         _HF + "mllama/modeling_mllama.py MllamaPrecomputedAspectRatioEmbedding: max_aspect_ratio_id + 1 rows, "
               "max_aspect_ratio_id = len(supported_aspect_ratios)"),
    _row("num_global_layers", "vision.num_hidden_layers vision.layers", "rule",
         _HF + "mllama/modeling_mllama.py MllamaVisionModel: global_transformer of num_global_layers gated blocks "
               "after the num_hidden_layers of transformer"),
)

_TOKEN_ID = "a token id; it names a token, it sizes nothing"
_ROPE = "rotary position encoding; no op of the ten prices RoPE (op_profiles/README.md)"
_DROPOUT = "a dropout probability; a dropout call is counted whatever its probability (op_profiles/README.md)"
_ACTIVATION = "which activation function the MLP calls; ffAct counts the call, whatever the function"
_ROUTING = "routing arithmetic after the router's scores, which no op prices (op_profiles/README.md)"
_EPS = "a norm's epsilon, a numerical constant"
_INIT = "the initialisation scale of the weights, which a trained checkpoint no longer has"
_LOSS = "the auxiliary load-balancing loss, a training objective, not a layer's op"

_OUTPUT = "what forward returns beside the logits; the same layers run"
_LABELS = "a sequence-classification head's labels (PreTrainedConfig's fine-tuning keys), not the language model's"
# The generation settings PreTrainedConfig.__post_init__ pops and drops (GenerationConfig's defaults:
# transformers 5.24.0 configuration_utils.py: for parameter_name in
# GenerationConfig._get_default_generation_params(): kwargs.pop(parameter_name, None)).
_GENERATION = ("assistant_confidence_threshold", "assistant_lookbehind", "bad_words_ids", "begin_suppress_tokens",
               "diversity_penalty", "do_sample", "early_stopping", "encoder_no_repeat_ngram_size",
               "encoder_repetition_penalty", "epsilon_cutoff", "eta_cutoff", "exponential_decay_length_penalty",
               "forced_bos_token_id", "forced_eos_token_id", "length_penalty", "max_length", "min_length",
               "no_repeat_ngram_size", "num_assistant_tokens", "num_assistant_tokens_schedule", "num_beam_groups",
               "num_beams", "num_return_sequences", "output_scores", "remove_invalid_values", "repetition_penalty",
               "return_dict_in_generate", "suppress_tokens", "target_lookbehind", "temperature", "top_k", "top_p",
               "typical_p")

# PreTrainedConfig's own fields and what its to_dict writes beside them (transformers 5.24.0
# configuration_utils.py PreTrainedConfig, __post_init__, to_dict), which every config, its text_config and its
# vision_config may state, and which change nothing a cost model prices.
_PRETRAINED: Mapping[str, str] = MappingProxyType({
    "architectures": "the class names transformers loads; model_type picks the op profile",
    "transformers_version": "the transformers release that saved the file",
    "output_hidden_states": _OUTPUT,
    "output_attentions": _OUTPUT,
    "return_dict": _OUTPUT,
    "chunk_size_feed_forward": "apply_chunking_to_forward runs the feed-forward over chunks of the sequence; an op "
                               "run piece by piece counts once (op_profiles/README.md)",
    "id2label": _LABELS,
    "label2id": _LABELS,
    "num_labels": _LABELS,
    "problem_type": _LABELS,
    **{key: "a generation setting, which PreTrainedConfig.__post_init__ drops" for key in _GENERATION},
    # What transformers 4.x's PretrainedConfig.to_dict wrote and 5.24.0's PreTrainedConfig no longer declares:
    # __post_init__ sets each as a plain attribute, which no priced family's modelling code reads (gpt2, roberta
    # and t5 declare is_decoder or add_cross_attention themselves, and their profiles read them).
    **{key: "a key transformers 4.x's PretrainedConfig wrote; 5.24.0 keeps it as a plain attribute no priced "
            "family's modelling code reads" for key in (
                "torchscript", "use_bfloat16", "tf_legacy_loss", "pruned_heads", "tie_encoder_decoder",
                "cross_attention_hidden_size", "finetuning_task", "tokenizer_class", "prefix", "sep_token_id",
                "is_decoder", "add_cross_attention")},
})

#: The top-level and ``text_config`` keys that do not change what a cost model prices.
IGNORED: Mapping[str, str] = MappingProxyType({
    **_PRETRAINED,
    "auto_map": "where the hub's own modelling code lives; model_type picks the op profile",
    "use_cache": "whether inference keeps a key/value cache",
    "output_past": "T5's old name for use_cache",
    "initializer_range": _INIT,
    "initializer_factor": _INIT,
    "rms_norm_eps": _EPS,
    "layer_norm_epsilon": _EPS,
    "layer_norm_eps": _EPS,
    "bos_token_id": _TOKEN_ID,
    "eos_token_id": _TOKEN_ID,
    "pad_token_id": _TOKEN_ID,
    "decoder_start_token_id": _TOKEN_ID,
    "image_token_id": _TOKEN_ID,
    "image_token_index": _TOKEN_ID,
    "video_token_id": _TOKEN_ID,
    "vision_start_token_id": _TOKEN_ID,
    "vision_end_token_id": _TOKEN_ID,
    "vision_token_id": _TOKEN_ID,
    "boi_token_index": _TOKEN_ID,
    "boi_token_id": _TOKEN_ID,
    "eoi_token_id": _TOKEN_ID,
    "eoi_token_index": _TOKEN_ID,
    "rope_theta": _ROPE,
    "rope_scaling": _ROPE,
    "rope_parameters": _ROPE,
    "partial_rotary_factor": _ROPE,
    "rope_local_base_freq": _ROPE,
    "initial_context_length": _ROPE + " (gpt-oss's YaRN original context)",
    "attention_dropout": _DROPOUT,
    "attn_pdrop": _DROPOUT,
    "resid_pdrop": _DROPOUT,
    "embd_pdrop": _DROPOUT,
    "dropout_rate": _DROPOUT,
    "hidden_act": _ACTIVATION,
    "hidden_activation": _ACTIVATION,
    "activation_function": _ACTIVATION,
    "swiglu_limit": "the clamp of gpt-oss's GLU, a constant inside the activation ffAct counts",
    "router_aux_loss_coef": _LOSS,
    "aux_loss_alpha": _LOSS,
    "seq_aux": _LOSS,
    "output_router_logits": "whether the router's logits are returned for the auxiliary loss",
    "router_jitter_noise": "Mixtral's training-time noise on the router input, an elementwise multiply",
    "norm_topk_prob": _ROUTING,
    "routed_scaling_factor": _ROUTING,
    "topk_method": _ROUTING,
    "n_group": _ROUTING,
    "topk_group": _ROUTING,
    "scoring_func": "the router's normalisation (softmax or sigmoid); softmax counts it whatever its formula "
                    "(op_profiles/README.md)",
    "ep_size": "DeepSeek's expert-parallel degree, a run's strategy",
    "pretraining_tp": "Llama's slicing of matmuls to replay pretraining's tensor parallelism; the same math",
    "quantization_config": "how the published weights are quantised for serving (fp8 blocks, mxfp4); a training "
                           "run's precision is its execution spec's",
    "mamba_ssm_dtype": "the dtype a serving engine keeps the recurrent state in",
    "query_pre_attn_scalar": "Gemma's scale of the attention scores, a scalar multiply",
    "scale_attn_weights": "GPT-2's scale of the attention scores, a scalar multiply",
    "scale_attn_by_inverse_layer_idx": "GPT-2's per-layer scale of the attention scores, a scalar multiply",
    "attn_logit_softcapping": "a tanh cap of the attention scores, which no op prices (op_profiles/gemma3.yaml)",
    "final_logit_softcapping": "a tanh cap of the output logits, outside the layers",
    "cache_implementation": "the key/value cache class generate() uses",
    "mm_tokens_per_image": "visual tokens per image after Gemma 3's pooling; a tower's sequence length is an input "
                           "(vision.max_position_embeddings), not a checkpoint fact",
    "n_ctx": "GPT-2's legacy context length, which GPT2Config keeps but the model does not read",
    "relative_attention_max_distance": "the span T5's relative position buckets cover",
    "summary_type": "GPT2DoubleHeadsModel's sequence-summary head, not part of the language model",
    "summary_use_proj": "GPT2DoubleHeadsModel's sequence-summary head, not part of the language model",
    "summary_activation": "GPT2DoubleHeadsModel's sequence-summary head, not part of the language model",
    "summary_proj_to_labels": "GPT2DoubleHeadsModel's sequence-summary head, not part of the language model",
    "summary_first_dropout": "GPT2DoubleHeadsModel's sequence-summary head, not part of the language model",
    "task_specific_params": "generation settings for pipelines (beam counts, prefixes)",
})

#: The ``vision_config`` keys that do not change what a cost model prices.
VISION_IGNORED: Mapping[str, str] = MappingProxyType({
    **_PRETRAINED,
    "_name_or_path": "the tower config's own checkpoint name, which a composite config's save writes; the top-level "
                     "name names the spec",
    "dtype": "the tower config's own copy of the checkpoint's dtype; the top-level dtype is the spec's",
    "torch_dtype": "the tower config's own copy of the checkpoint's dtype; the top-level dtype is the spec's",
    "rope_parameters": "the tower's rotary position encoding; " + _ROPE,
    "is_encoder_decoder": "PreTrainedConfig's flag, false for every tower; the top-level one picks the layout",
    "model_type": "the tower's config class; the top-level model_type picks the tower's rule",
    "hidden_act": _ACTIVATION,
    "initializer_range": _INIT,
    "layer_norm_eps": _EPS,
    "attention_dropout": _DROPOUT,
    "in_chans": "an early name of in_channels that Qwen2_5_VLVisionConfig does not read (its in_channels "
                "defaults to 3)",
    "spatial_patch_size": "an early copy of patch_size that Qwen2_5_VLVisionConfig does not read",
    "tokens_per_second": "the time step of Qwen2.5-VL's multimodal RoPE; " + _ROPE,
    "window_size": "the side, in pixels, of a Qwen2.5-VL attention window; no tower field states it, so a "
                   "window_encoder block is priced by its kind",
})

_VISION_RULES: Mapping[str, KeyRule] = MappingProxyType({rule.key: rule for rule in VISION_KEYS})
_RULES: Mapping[str, KeyRule] = MappingProxyType({rule.key: rule for rule in KEYS})


def shared_keys() -> Mapping[str, KeyRule]:
    """The importer's shared key table by key: what a family's ``defaults`` may give besides its own ``keys``."""
    return _RULES


def shared_tower_keys() -> Mapping[str, KeyRule]:
    """The importer's shared ``vision_config`` key table by key: what a family's ``vision_defaults`` may give."""
    return _VISION_RULES
