"""Seeded random valid configs of every priced family, for the differential suite (tests/test_reference.py).

A variant is drawn over the fields its config class reads (the parameters of
transformers' ``__init__`` for the family's config class, and its text and
vision sub-configs): layers, widths, heads, KV heads dividing the heads,
head_dim, experts, top-k, shared experts, dense-first layers, ties, biases,
layer patterns, MLA ranks, linear-attention and Mamba dimensions, tower
widths. It is built into transformers' config object and saved as
``save_pretrained`` writes it (``to_diff_dict``; half the time with the drawn
values written over it, as a hand-written config states them; naming the
class a catalogue config of the type names in ``architectures``), then kept only if
transformers builds a model from it and can run it: a *valid* variant. A config whose layer_types mark
sliding_attention layers while the class leaves no window (Qwen2Config's ``sliding_window = sliding_window if
use_sliding_window else None``) builds, but its forward raises (:func:`runs`), so it is no model a checkpoint
has. Sizes are small; on the meta device a build costs what its module count costs.

A quarter of the variants also carry one key another priced family reads and
this class does not (a ``moe_intermediate_size`` in Mixtral's config): the
class ignores it, so the importer must too, or refuse it.

Everything a draw reads comes from one ``random.Random(seed)`` per family, so
a seed replays a run. Imported only when torch is installed.
"""

from __future__ import annotations

import functools
import inspect
import json
import random
import warnings
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import transformers
from transformers import CONFIG_MAPPING, PretrainedConfig
from transformers.models.auto import modeling_auto

from pipeline.reference.census import BuildError, Census, census, model_class

#: The catalogue's source configs, one per spec.
CONFIGS = Path(__file__).resolve().parents[1] / "configs"

_GENERIC = frozenset(inspect.signature(PretrainedConfig.__init__).parameters)

#: Keys one priced family's class reads, offered to the classes that do not read them.
FOREIGN = {
    "moe_intermediate_size": lambda rng: rng.choice([24, 40]),
    "head_dim": lambda rng: rng.choice([8, 24]),
    "attention_bias": lambda rng: True,
    "mlp_bias": lambda rng: True,
    "moe_layer_freq": lambda rng: rng.choice([1, 2, 3]),
    "qk_norm": lambda rng: True,
    "n_shared_experts": lambda rng: 1,
}


def _params(cls: Any) -> List[str]:
    """The parameters of a config class's ``__init__``, without ``self``, ``kwargs`` and the generic ones."""
    return [name for name in inspect.signature(cls.__init__).parameters
            if name not in _GENERIC and name not in ("self", "kwargs", "text_config", "vision_config")]


def _first(params: Sequence[str], *names: str) -> Optional[str]:
    """The first of *names* the class reads."""
    return next((name for name in names if name in params), None)


def _divisors(value: int) -> List[int]:
    return [d for d in range(1, value + 1) if value % d == 0]


def _layer_types(rng: random.Random, default: Any, params: Sequence[str], count: int) -> Optional[List[str]]:
    """*count* layer types from those the class's default config uses (plus sliding attention when it reads a
    window), or ``None`` to leave them to the class."""
    stated = list(getattr(default, "layer_types", None) or getattr(default, "layers_block_type", None) or [])
    kinds = sorted(set(stated))
    if "sliding_window" in params and "full_attention" in kinds and "sliding_attention" not in kinds:
        kinds.append("sliding_attention")
    if not kinds:
        return None
    return [rng.choice(kinds) for _ in range(count)]


#: A Mamba2 mixer's keys: heads, head width, expansion, groups (Mamba2Config's, then Bamba's).
_MAMBA2_KEYS = (("num_heads", "head_dim", "expand", "n_groups"),
                ("mamba_n_heads", "mamba_d_head", "mamba_expand", "mamba_n_groups"))


def _mamba2_heads(rng: random.Random, out: Dict[str, Any], default: Any, width: int, keys: Sequence[str]) -> None:
    """Heads and head width of a Mamba2 mixer its config's validate_architecture accepts (heads * head width equal
    to expand * hidden_size), and groups of B and C that divide the heads."""
    heads_key, head_dim_key, expand_key, groups_key = keys
    inner = width * out.get(expand_key, getattr(default, expand_key))
    heads = rng.choice([d for d in _divisors(inner) if d <= 16])
    out.update({heads_key: heads, head_dim_key: inner // heads})
    if heads % out.get(groups_key, getattr(default, groups_key)):
        out[groups_key] = rng.choice(_divisors(heads)[:2])


def _stacks(rng: random.Random, out: Dict[str, Any], layers: int, heads: int) -> None:
    """An encoder-decoder's per-stack keys (BartConfig's): the encoder's layers (a quarter of the time by their
    attribute_map alias, num_hidden_layers), heads and width; the decoder's layers half the time, and its heads and
    width mostly the encoder's (the importer refuses others by name), sometimes not."""
    out["num_hidden_layers" if rng.random() < 0.25 else "encoder_layers"] = layers
    if rng.random() < 0.5:
        out["decoder_layers"] = rng.randint(1, 4)
    out["encoder_attention_heads"] = heads
    width = out.get("d_model", heads)
    out["decoder_attention_heads"] = heads if rng.random() < 0.85 else rng.choice(
        [d for d in _divisors(width) if d <= 16])
    ffn = rng.choice([16, 48, 100])
    out["encoder_ffn_dim"] = ffn
    out["decoder_ffn_dim"] = ffn if rng.random() < 0.85 else rng.choice([16, 48, 100])


def draw_text(rng: random.Random, cls: Any, default: Any) -> Dict[str, Any]:  # noqa: C901  # one table of knobs
    """One draw of a text config's fields (*cls* its class, *default* its default instance)."""
    params = _params(cls)
    out: Dict[str, Any] = {}
    layers = rng.randint(1, 6)
    heads = rng.choice([1, 2, 4, 8])
    head_dim = rng.choice([8, 16, 32])
    put = out.__setitem__
    name = _first(params, "num_hidden_layers", "num_layers", "n_layer", "n_layers")
    if name:
        put(name, layers)
    name = _first(params, "num_attention_heads", "num_heads", "n_head", "n_heads")
    if name:
        put(name, heads)
    width = _first(params, "hidden_size", "d_model", "n_embd")
    own_head_dim = _first(params, "head_dim", "d_kv")
    if width:
        put(width, rng.choice([32, 64, 96]) if own_head_dim and rng.random() < 0.4 else heads * head_dim)
    if own_head_dim and rng.random() < 0.7:
        put(own_head_dim, rng.choice([head_dim, 2 * head_dim]))
    if "num_key_value_heads" in params:  # always: the class's default need not divide the drawn heads
        put("num_key_value_heads", rng.choice(_divisors(heads)))
    name = _first(params, "intermediate_size", "d_ff", "n_inner")
    if name:
        put(name, None if name == "n_inner" and rng.random() < 0.4 else rng.choice([16, 48, 100]))
    if "vocab_size" in params:  # above the class's special token ids (Phi-3 pads with 32000)
        ids = [getattr(default, name, None) for name in ("pad_token_id", "bos_token_id", "eos_token_id")]
        floor = max([i for i in ids if isinstance(i, int)] + [0]) + 1
        put("vocab_size", max(floor, rng.choice([64, 100, 256])))
    experts = rng.randint(2, 8)
    name = _first(params, "num_experts", "num_local_experts", "n_routed_experts")
    if name:
        alias = [key for key, target in getattr(cls, "attribute_map", {}).items() if target == name]
        put(alias[0] if alias and rng.random() < 0.25 else name, experts)
        if "num_experts_per_tok" in params:
            put("num_experts_per_tok", rng.randint(1, experts))
    for name, choices in (("moe_intermediate_size", [8, 24, 40]), ("shared_expert_intermediate_size", [8, 24]),
                          ("moe_shared_expert_intermediate_size", [8, 24]), ("n_shared_experts", [0, 1, 2]),
                          ("decoder_sparse_step", [1, 2, 3]), ("q_lora_rank", [None, 16, 32]),
                          ("kv_lora_rank", [16, 32]), ("qk_rope_head_dim", [8, 16]), ("qk_nope_head_dim", [8, 16]),
                          ("v_head_dim", [8, 16, 32]), ("linear_num_key_heads", [1, 2]),
                          ("linear_key_head_dim", [8, 16]), ("linear_value_head_dim", [8, 16]),
                          ("linear_conv_kernel_dim", [2, 4]), ("mamba_num_heads", [2, 4, 8]),
                          ("mamba_head_dim", [8, 16]), ("ssm_state_size", [8, 16]), ("n_groups", [1, 2]),
                          ("conv_kernel", [2, 4]), ("relative_attention_num_buckets", [8, 32]),
                          ("type_vocab_size", [1, 2, 3]), ("max_position_embeddings", [64, 130]),
                          ("sliding_window", [16, 64]), ("sliding_window_pattern", [1, 2, 4]),
                          ("feed_forward_proj", ["relu", "gated-gelu"]), ("moe_latent_size", [None, None, 8]),
                          ("num_nextn_predict_layers", [0, 1]), ("mtp_num_hidden_layers", [0, 1]),
                          ("state_size", [4, 8, 16]), ("expand", [1, 2, 3]), ("time_step_rank", ["auto", 3, 8]),
                          ("interleave_moe_layer_step", [1, 2, 3]), ("no_rope_layer_interval", [1, 2, 4]),
                          ("attention_chunk_size", [None, 8, 16]),

                          ("mamba_d_state", [8, 16]), ("mamba_d_conv", [2, 4]), ("mamba_expand", [1, 2]),
                          ("mamba_n_groups", [1, 2])):
        if name in params and rng.random() < 0.8:
            put(name, rng.choice(choices))
    if {"expand", "time_step_rank"} <= set(params) and "num_heads" not in params and rng.random() < 0.3:
        put("intermediate_size", rng.choice([24, 40]))  # Mamba 1: a stated width replaces int(expand * hidden_size)
    for keys in _MAMBA2_KEYS:
        if set(keys) <= set(params) and width in out:  # Mamba2Config's and BambaConfig's check
            _mamba2_heads(rng, out, default, out[width], keys)
    if "attn_layer_indices" in params and rng.random() < 0.8:  # Bamba's attention layers
        put("attn_layer_indices", sorted(rng.sample(range(layers), rng.randint(0, layers))))
    if "cross_attention_layers" in params and rng.random() < 0.9:  # Mllama's cross-attention layers
        put("cross_attention_layers", sorted(rng.sample(range(layers), rng.randint(0, layers))))
    if "linear_num_value_heads" in params:
        put("linear_num_value_heads", out.get("linear_num_key_heads", 1) * rng.choice([1, 2]))
    for name in ("tie_word_embeddings", "attention_bias", "mlp_bias", "use_bias", "use_qk_norm", "qk_layernorm",
                 "use_sliding_window", "use_conv_bias", "mamba_proj_bias", "mamba_conv_bias", "use_bidirectional_attention",
                 "use_qkv_bias", "use_parallel_residual", "multi_query", "parallel_attn", "new_decoder_architecture",
                 "alibi", "bias", "enable_bias", "lm_head_bias"):
        if name in params and rng.random() < 0.7:
            put(name, rng.random() < 0.5)
    if "tie_word_embeddings" not in params and rng.random() < 0.5:  # a key any config may state (T5 overrides it)
        put("tie_word_embeddings", rng.random() < 0.5)
    if "num_kv_heads" in params and rng.random() < 0.7:  # Falcon's grouped heads (read with new_decoder_architecture)
        put("num_kv_heads", rng.choice(_divisors(heads)))
    if "num_ln_in_parallel_attn" in params and rng.random() < 0.3:
        put("num_ln_in_parallel_attn", rng.choice([1, 2]))
    if "n_group" in params:
        put("n_group", 1)
        put("topk_group", 1)
    if "first_k_dense_replace" in params:
        put("first_k_dense_replace", rng.randint(0, layers))
    if "max_window_layers" in params:
        put("max_window_layers", rng.randint(0, layers))
    if "num_decoder_layers" in params and rng.random() < 0.5:
        put("num_decoder_layers", rng.randint(1, 4))
    if {"encoder_layers", "decoder_layers"} <= set(params):  # BART: each stack's layers, heads and MLP width
        _stacks(rng, out, layers, heads)
    if "mlp_only_layers" in params and rng.random() < 0.3:
        put("mlp_only_layers", sorted(rng.sample(range(layers), rng.randint(1, layers))))
    name = _first(params, "layer_types", "layers_block_type")
    if name and (name == "layers_block_type" or rng.random() < 0.6):
        types = _layer_types(rng, default, params, layers)
        if types is not None:
            put(name, types)
    if rng.random() < 0.25:
        foreign = sorted(key for key in FOREIGN if key not in params and key not in out)
        if foreign:
            key = rng.choice(foreign)
            put(key, FOREIGN[key](rng))
    return out


def draw_vision(rng: random.Random, cls: Any, text_width: Optional[int]) -> Dict[str, Any]:
    """One draw of a vision tower's fields (*cls* its config class)."""
    params = _params(cls)
    out: Dict[str, Any] = {}
    heads = rng.choice([1, 2, 4])
    patch = rng.choice([2, 4])
    put = out.__setitem__
    name = _first(params, "num_hidden_layers", "depth")
    if name:
        put(name, rng.randint(1, 3))
    name = _first(params, "num_attention_heads", "num_heads", "attention_heads")
    if name:
        put(name, heads)
    name = _first(params, "hidden_size", "embed_dim")
    width = heads * rng.choice([8, 16])
    if name:
        put(name, width)
    if name == "embed_dim" and "hidden_size" in params:  # Qwen2-VL: hidden_size is the projector's output
        put("hidden_size", text_width or width)
    if "out_hidden_size" in params:
        put("out_hidden_size", text_width if text_width and rng.random() < 0.8 else width)
    if "head_dim" in params:
        put("head_dim", width // heads)
    for name, choices in (("intermediate_size", [16, 40]), ("mlp_ratio", [2, 4]), ("spatial_merge_size", [1, 2]),
                          ("temporal_patch_size", [1, 2]), ("num_position_embeddings", [16, 64])):
        if name in params and rng.random() < 0.8:
            put(name, rng.choice(choices))
    if "patch_size" in params:
        put("patch_size", patch)
    if "image_size" in params:
        put("image_size", patch * rng.choice([4, 8]))
    if "fullatt_block_indexes" in params:
        put("fullatt_block_indexes", sorted(rng.sample(range(out.get("depth", 1)), 1)))
    if "num_global_layers" in params:  # Mllama's tower: a gated global stack after the local one, tiles
        _draw_tiles(rng, out, width)
    return out


#: Every [width, height] tile grid of at most 4 tiles (MllamaVisionConfig's default supported_aspect_ratios).
_TILE_RATIOS = [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]]


def _draw_tiles(rng: random.Random, out: Dict[str, Any], width: int) -> None:
    """Mllama's tower knobs: the global stack's depth, the tiles and the aspect ratios (a subset of the grids of at
    most max_num_tiles tiles, as MllamaVisionConfig.validate_architecture asks of a max_num_tiles other than 4),
    the output width the projector reads, and the local blocks whose outputs it concatenates."""
    if rng.random() < 0.8:
        out["num_global_layers"] = rng.choice([0, 1, 2, 3])
    tiles = rng.choice([1, 2, 3, 4])
    if tiles != 4 or rng.random() < 0.5:
        fitting = [ratio for ratio in _TILE_RATIOS if ratio[0] * ratio[1] <= tiles]
        out["max_num_tiles"] = tiles
        out["supported_aspect_ratios"] = rng.sample(fitting, rng.randint(1, len(fitting)))
    if rng.random() < 0.8:
        out["vision_output_dim"] = width * rng.choice([1, 2, 3])
    depth = out.get("num_hidden_layers", 1)
    out["intermediate_layers_indices"] = sorted(rng.sample(range(depth), rng.randint(0, depth)))


#: The knobs of a nested sub-config (DBRX's attn_config, ffn_config): the keys its class reads, drawn.
_SUB_KNOBS = (("ffn_hidden_size", [8, 24, 40]), ("moe_num_experts", [2, 4, 8]), ("clip_qkv", [None, 8]))


@functools.lru_cache(maxsize=None)
def _stated_inside(model_type: str, name: str) -> Tuple[Tuple[str, Any], ...]:
    """What a catalogue config of *model_type* states inside its sub-config *name* (``configs/``)."""
    for path in sorted(CONFIGS.glob("*.json")):
        config = json.loads(path.read_text(encoding="utf-8"))
        if config.get("model_type") == model_type and isinstance(config.get(name), dict):
            return tuple(sorted(config[name].items()))
    return ()


def draw_sub(rng: random.Random, model_type: str, name: str, cls: Any, heads: Optional[int]) -> Dict[str, Any]:
    """One draw of the nested sub-config *name* (of class *cls*): the keys a catalogue config of the type states
    in it that its class does not declare (DBRX's attn_config.rope_theta, which DbrxAttention reads though
    DbrxAttentionConfig declares no such field; transformers 5.24.0 cannot build DBRX without it), and the knobs
    its class reads; its KV heads divide the model's *heads*, its top-k is at most its experts."""
    params = _params(cls)
    out = {key: value for key, value in _stated_inside(model_type, name) if key not in params and key not in _GENERIC}
    for key, choices in _SUB_KNOBS:
        if key in params and rng.random() < 0.8:
            out[key] = rng.choice(choices)
    if "kv_n_heads" in params and heads:
        out["kv_n_heads"] = rng.choice(_divisors(heads))
    if "moe_top_k" in params:
        out["moe_top_k"] = rng.randint(1, out.get("moe_num_experts", getattr(cls(), "moe_num_experts", 1)))
    return out


def draw(rng: random.Random, model_type: str) -> Dict[str, Any]:
    """The keyword arguments of one variant of *model_type*'s config class."""
    cls = CONFIG_MAPPING[model_type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = cls()
    text = getattr(default, "text_config", None)
    vision = getattr(default, "vision_config", None)
    if text is None:
        out = draw_text(rng, cls, default)
        heads = next((out[key] for key in ("num_attention_heads", "n_heads") if key in out),
                     getattr(default, "num_attention_heads", None))
        for name, sub in sorted(getattr(cls, "sub_configs", {}).items()):
            out[name] = draw_sub(rng, model_type, name, sub, heads)
        return out
    kwargs: Dict[str, Any] = {"text_config": {"model_type": text.model_type,
                                              **draw_text(rng, type(text), text)}}
    width = kwargs["text_config"].get("hidden_size")
    if vision is not None:
        kwargs["vision_config"] = {"model_type": vision.model_type, **draw_vision(rng, type(vision), width)}
    for name in _params(cls):
        if name in ("tie_word_embeddings", "multimodal_projector_bias") and rng.random() < 0.7:
            kwargs[name] = rng.random() < 0.5
        if name == "spatial_merge_size" and rng.random() < 0.7:
            kwargs[name] = rng.choice([1, 2])
        if name == "vision_feature_layer" and rng.random() < 0.3:  # LLaVA's: a list's length widens linear_1
            kwargs[name] = rng.choice([-1, -2, [-2], [-3, -1]])
    return kwargs


#: The Auto mappings of the classes with a head (the census's, pipeline.reference.census), by class name.
_HEADS = ("MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
          "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES", "MODEL_FOR_MASKED_LM_MAPPING_NAMES")


def _with_head(model_type: str, name: str) -> bool:
    """Whether the class *name* of *model_type* holds a head: not its headless base model (AutoModel's class and no
    head mapping's: ``BartModel``, which bart-large's config names; its variants are built with the seq-to-seq head
    the profile prices, ``BartForConditionalGeneration``)."""
    if modeling_auto.MODEL_MAPPING_NAMES.get(model_type) != name:
        return True
    return any(name == mapped for table in _HEADS for mapped in getattr(modeling_auto, table).values())


@functools.lru_cache(maxsize=None)
def architectures(model_type: str) -> Optional[Tuple[str, ...]]:
    """The ``architectures`` a catalogue config of *model_type* states (``configs/``), as a real config names its
    class (RoBERTa's masked-LM head, not the causal-LM one an Auto mapping picks first); ``None`` when none does,
    or when it names the headless base model (:func:`_with_head`)."""
    for path in sorted(CONFIGS.glob("*.json")):
        config = json.loads(path.read_text(encoding="utf-8"))
        if config.get("model_type") == model_type and config.get("architectures"):
            named = tuple(config["architectures"])
            return named if all(_with_head(model_type, name) for name in named) else None
    return None


def runs(config: PretrainedConfig) -> bool:
    """Whether transformers can run a model of *config* (and of its ``text_config``): a ``sliding_attention``
    layer with ``sliding_window`` None builds, but its forward raises (transformers 5.24.0 cache_utils.py
    DynamicSlidingWindowLayer: ``torch.tensor(self.sliding_window)``, TypeError; without a cache, masking_utils.py
    create_sliding_window_causal_mask: ValueError "Could not find a `sliding_window` argument in the config");
    likewise a ``chunked_attention`` layer with ``attention_chunk_size`` None (Llama 4: the cache's TypeError, and
    create_chunked_causal_mask's ValueError "Could not find an `attention_chunk_size` argument in the config")."""
    for nested in (config, getattr(config, "text_config", None)):
        types = getattr(nested, "layer_types", None) or ()
        if "sliding_attention" in types and getattr(nested, "sliding_window", None) is None:
            return False
        if "chunked_attention" in types and getattr(nested, "attention_chunk_size", None) is None:
            return False
    return True


def saved(model_type: str, kwargs: Dict[str, Any], stated: bool) -> Optional[Dict[str, Any]]:
    """The config ``save_pretrained`` writes for *kwargs* (``to_diff_dict``), or ``None`` when the class refuses
    it or transformers cannot run the model it describes (:func:`runs`).

    With *stated*, the drawn values are written over it, as a hand-written config states them: a value the
    class overrides (T5's tie) or leaves out of the diff (a default) then stands in the file as drawn.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            built = CONFIG_MAPPING[model_type](**kwargs)
        if not runs(built):
            return None
        config = built.to_diff_dict()
        if architectures(model_type):
            config["architectures"] = list(architectures(model_type))
    except Exception:  # noqa: BLE001  # ok: an invalid draw is drawn again
        return None
    if stated:
        for key, value in kwargs.items():
            if isinstance(value, dict) and isinstance(config.get(key), dict):
                config[key] = {**config[key], **value}
            else:
                config[key] = value
    return config


def variants(model_type: str, seed: int, count: int) -> Iterator[Tuple[Dict[str, Any], Census]]:
    """*count* valid variants of *model_type* (``(saved config, its census)``), drawn from *seed*.

    Raises:
        RuntimeError: If 20 draws in a row are invalid (the knobs no longer fit the class).
    """
    rng = random.Random(f"{seed}:{model_type}")
    made = misses = 0
    while made < count:
        config = saved(model_type, draw(rng, model_type), rng.random() < 0.5)
        try:
            built = census(config) if config is not None else None
        except BuildError:
            built = None
        if built is None:
            misses += 1
            if misses >= 20:
                raise RuntimeError(f"{model_type}: 20 invalid draws in a row; the knobs no longer fit its class")
            continue
        misses = 0
        made += 1
        yield config, built


def default_forms(model_type: str) -> List[Tuple[str, Dict[str, Any]]]:
    """The config class's defaults as ``save_pretrained`` writes them (diff form) and in full (``to_dict``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = CONFIG_MAPPING[model_type]()
        diff = default.to_diff_dict()
        if architectures(model_type):  # as a checkpoint's full save states it (a VLM's text_config: null)
            default.architectures = list(architectures(model_type))
        return [("defaults (diff form)", diff), ("defaults (full to_dict)", default.to_dict())]


def _builds(model_type: str) -> bool:
    """Whether transformers has a config class for *model_type* and a model class with a head for it."""
    if model_type not in CONFIG_MAPPING:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model_class(CONFIG_MAPPING[model_type]())
    except BuildError:
        return False
    return True


def buildable(model_types: Sequence[str]) -> Tuple[List[str], List[str]]:
    """``(model types transformers builds a model with a head for, those it does not)``: ``kimi_k2`` has no
    config class; ``qwen2_vl_text`` is only ever a VLM's text_config (no class puts a head on it alone)."""
    built = [t for t in model_types if _builds(t)]
    return built, [t for t in model_types if t not in built]


VERSION = transformers.__version__
