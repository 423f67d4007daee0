"""The reference implementation's census: every parameter transformers builds for a config, on the meta device.

The optional ``reference`` extra (torch 2.13.0, transformers 5.24.0, pinned)
is the judge of every weight inventory: this package (this module, and
:mod:`pipeline.reference.draft` built on it) is the only one that imports
them, and only ``modelspec reference`` and the differential tests import it,
so the core package and ``modelspec check`` never load torch.

:func:`census` builds a config as transformers does (``AutoConfig.for_model``
of its ``model_type``; the class its ``architectures`` names, else the
causal-LM, seq-to-seq, image-text-to-text or masked-LM class the Auto
mappings give) under ``torch.device("meta")``: no weights are allocated and
nothing is downloaded (``HF_HUB_OFFLINE``). It returns, as plain data (a :class:`~pipeline.pricing.judge.Census`), every
unique ``nn.Parameter`` (a tensor tied to another counted once, under its
first name), the layer stacks (each outermost ``nn.ModuleList``), which
tensors are the input embedding and the output head, which are routed
experts (transformers 5 fuses them into one ``*Experts`` module per layer,
experts first) and the top-k a token routes to. :mod:`pipeline.pricing.judge`
compares that with the inventories; nothing here knows a family.

:func:`flop_census` runs one forward of a config's model on the meta device
under ``torch.utils.flop_counter.FlopCounterMode`` (eager attention, the
experts' ``batched_mm`` path) and returns its FLOPs and the elements of the
cache it leaves, which ``tests/test_flops_reference.py`` holds
:mod:`pipeline.pricing.flops` to.

A ``quantization_config`` is dropped (the counts are of the unquantised
layout, as the catalogue's) and ``auto_map`` is never followed: the
reference is transformers' own code.
"""

from __future__ import annotations

import contextlib
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import warnings  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple  # noqa: E402

import torch  # noqa: E402
import transformers  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers import AutoConfig  # noqa: E402
from transformers import initialization  # noqa: E402

from pipeline.pricing.judge import Census  # noqa: E402

transformers.logging.set_verbosity_error()

#: The Auto classes tried, in order, for a config whose ``architectures`` names no transformers class.
_AUTO_CLASSES = ("AutoModelForCausalLM", "AutoModelForSeq2SeqLM", "AutoModelForImageTextToText",
                 "AutoModelForMaskedLM")

#: Config keys the build leaves out: what they describe is not in the unquantised layout, or not transformers' code.
_DROPPED = ("quantization_config", "auto_map")

VERSIONS = f"transformers {transformers.__version__}, torch {torch.__version__}"


class BuildError(ValueError):
    """transformers cannot build the config (its message says why)."""


def config_object(config: Mapping[str, Any], model_type: Optional[str] = None) -> Any:
    """transformers' config object for *config* (its ``model_type``, or *model_type* when given).

    A model type transformers does not know (``kimi_k2``, a checkpoint's own name) is read as the model type of
    the transformers class its ``architectures`` names, as the checkpoint's card says it is built.

    Raises:
        BuildError: If transformers has no such model type or its config class refuses the values.
    """
    values = {key: value for key, value in config.items() if key not in _DROPPED and key != "model_type"}
    chosen = model_type or read_as(config)
    if not isinstance(chosen, str):
        raise BuildError("the config states no model_type (a string), so transformers cannot pick a class")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return AutoConfig.for_model(chosen, **values)
    except Exception as error:  # noqa: BLE001  # ok: any refusal of the reference's config class is its answer
        raise BuildError(f"transformers {transformers.__version__} cannot read the config as model_type "
                             f"{chosen!r}: {error}") from None


def read_as(config: Mapping[str, Any]) -> Any:
    """The model type transformers reads *config* as: its own, or, when transformers does not know it, that of
    the first class of ``architectures`` transformers has."""
    stated = config.get("model_type")
    if not isinstance(stated, str) or stated in transformers.CONFIG_MAPPING:
        return stated
    for name in config.get("architectures") or ():
        cls = getattr(transformers, str(name), None)
        config_class = getattr(cls, "config_class", None)
        if isinstance(getattr(config_class, "model_type", None), str) and config_class.model_type:
            return config_class.model_type
    return stated


def model_class(config: Any) -> Any:
    """The class transformers builds *config* with: the one ``architectures`` names, else an Auto mapping's
    (image-text-to-text first for a config with a ``vision_config``, seq-to-seq first for an encoder-decoder).

    Raises:
        BuildError: If no class of transformers builds the config.
    """
    for name in getattr(config, "architectures", None) or ():
        cls = getattr(transformers, str(name), None)
        if isinstance(cls, type) and isinstance(config, getattr(cls, "config_class", None) or ()):
            return cls
    autos = _AUTO_CLASSES
    if getattr(config, "vision_config", None) is not None:  # a VLM: its causal-LM class takes the text config only
        autos = ("AutoModelForImageTextToText",) + autos
    if getattr(config, "is_encoder_decoder", False):  # BART's causal-LM class is its decoder alone (BartForCausalLM)
        autos = ("AutoModelForSeq2SeqLM",) + autos
    for auto in autos:
        mapping = getattr(transformers, auto)._model_mapping  # pylint: disable=protected-access
        if type(config) in mapping:
            return mapping[type(config)]
    raise BuildError(f"transformers {transformers.__version__} has no causal-LM, seq-to-seq, "
                         f"image-text-to-text or masked-LM class for {type(config).__name__}")


def census(config: Mapping[str, Any], model_type: Optional[str] = None) -> Census:
    """Build *config* with transformers on the meta device and list its parameters.

    Args:
        config: A parsed ``config.json``.
        model_type: The transformers model type to read it as, instead of its own (``--arch``).

    Raises:
        BuildError: If transformers cannot read or build the config.
    """
    built = config_object(config, model_type)
    cls = model_class(built)
    try:
        with warnings.catch_warnings(), torch.device("meta"), _no_initialisers():
            warnings.simplefilter("ignore")
            model = cls(built)
    except Exception as error:  # noqa: BLE001  # ok: any failure to build is the reference's answer
        raise BuildError(f"transformers {transformers.__version__} cannot build {cls.__name__} from the "
                             f"config: {type(error).__name__}: {error}") from None
    names: Dict[int, str] = {}
    tensors: Dict[str, Tuple[int, ...]] = {}
    for name, parameter in model.named_parameters():
        names[id(parameter)] = name
        tensors[name] = tuple(parameter.shape)
    head = _head(model, names)
    return Census(cls.__name__, built.model_type, tensors, _stacks(model),
                  _owned(model.get_input_embeddings(), names, ()), head, _routed(model), _top_k(built),
                  _vision(model, built, names, head), _experts(model), cls is _base_model_class(built))


def _base_model_class(config: Any) -> Any:
    """The headless base model class of *config* (``AutoModel``'s: ``MambaModel``), or ``None``. Not
    ``PreTrainedModel.base_model``, which is the model itself wherever ``base_model_prefix`` names no attribute
    (``T5ForConditionalGeneration``'s ``transformer``)."""
    mapping = transformers.AutoModel._model_mapping  # pylint: disable=protected-access
    return mapping[type(config)] if type(config) in mapping else None


@contextlib.contextmanager
def _no_initialisers() -> Iterator[None]:
    """Torch's initialisers (``torch.nn.init.kaiming_uniform_`` and the rest transformers patches when it loads a
    checkpoint: ``transformers.initialization``) made no-ops while a model is built on the meta device, where
    they write no value anyway: half the build time. Unlike transformers' ``no_init_weights``, the model's own
    ``init_weights`` still runs, so its weights are tied as any build ties them."""
    patched = [(module, name, getattr(module, name)) for module in map(sys.modules.get,
                                                                        initialization.TORCH_MODULES_TO_PATCH)
               if module is not None for name in initialization.TORCH_INIT_FUNCTIONS if hasattr(module, name)]
    try:
        for module, name, _ in patched:
            setattr(module, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for module, name, original in patched:
            setattr(module, name, original)


def _stacks(model: Any) -> Tuple[Tuple[str, int], ...]:
    """``(prefix, length)`` of each outermost non-empty ``nn.ModuleList`` of *model*."""
    found: list = []
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) and name and \
                not any(name.startswith(prefix + ".") for prefix, _ in found):
            found.append((name, len(module)))
    return tuple(found)


def _owned(module: Any, names: Mapping[int, str], taken: Tuple[str, ...]) -> Tuple[str, ...]:
    """The names of *module*'s parameters, leaving out those in *taken* (a tied weight)."""
    if module is None:
        return ()
    return tuple(names[id(p)] for p in module.parameters() if id(p) in names and names[id(p)] not in taken)


def _head(model: Any, names: Mapping[int, str]) -> Tuple[str, ...]:
    """The output head's own parameters: none of a tied weight, its bias when it has one."""
    try:
        head = model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return ()
    return _owned(head, names, _owned(model.get_input_embeddings(), names, ()))


def _routed(model: Any) -> Tuple[str, ...]:
    """The parameters of every fused ``*Experts`` module (transformers 5's routed experts)."""
    return tuple(f"{name}.{param}" for name, module in model.named_modules() if type(module).__name__.endswith(
        "Experts") for param, _ in module.named_parameters())


def _experts(model: Any) -> int:
    """The routed experts of the first fused ``*Experts`` module, by its ``num_experts`` (0 when it has none)."""
    counts = (getattr(module, "num_experts", None) for module in model.modules()
              if type(module).__name__.endswith("Experts"))
    return next((count for count in counts if isinstance(count, int) and not isinstance(count, bool)), 0)


def _vision(model: Any, config: Any, names: Mapping[int, str], head: Tuple[str, ...]) -> Tuple[str, ...]:
    """Every parameter outside the language model (the module built from the text config) and the head, for
    a config with a ``vision_config``; ``()`` otherwise."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    if getattr(config, "vision_config", None) is None or text is config:
        return ()
    inside = {id(p) for module in model.modules() if module is not model and getattr(module, "config", None) is text
              for p in module.parameters()}
    return tuple(name for key, name in names.items() if key not in inside and name not in head)


#: The names a config class gives the experts a token routes to (DBRX's ffn_config keeps ``moe_top_k``).
_TOP_K_KEYS = ("num_experts_per_tok", "moe_top_k")


def _top_k(config: Any) -> int:
    """``num_experts_per_tok`` of the text config, or of a sub-config it nests under another name (DBRX's
    ``ffn_config.moe_top_k``); 0 when none states one."""
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    holders = [text] + [getattr(text, name, None) for name in sorted(getattr(text, "sub_configs", None) or {})]
    for holder in holders:
        for key in _TOP_K_KEYS:
            value = getattr(holder, key, None)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return 0


@dataclass(frozen=True)
class FlopCensus:
    """What ``FlopCounterMode`` counts over one forward of ``seq_len`` tokens, and the cache it leaves.

    Attributes:
        seq_len: Tokens in the forward (batch 1).
        flops: Every FLOP the counter prices (matmuls, convolutions; a FMA is 2), the whole model.
        cache_elements: Elements the returned cache holds (keys, values, recurrent and conv states), all layers.
    """

    seq_len: int
    flops: int
    cache_elements: int


def flop_census(config: Mapping[str, Any], seq_len: int, model_type: Optional[str] = None,
                cross_tokens: int = 0) -> FlopCensus:
    """Run one forward of *seq_len* tokens of *config*'s model on the meta device under ``FlopCounterMode``.

    With *cross_tokens*, the forward also hands the text model that many tokens of tower states to cross-attend
    to (``cross_attention_states``, text-width, as MllamaModel passes the projected tower output; the tower itself
    does not run): a cross-attention layer with none is skipped (modeling_mllama.py MllamaTextModel.forward).

    Attention is transformers' eager path and the experts its eager loop: the counter prices neither sdpa's
    fused kernel nor the grouped-matmul experts (torch 2.13). Nothing is allocated: shapes flow, values do not.

    Raises:
        BuildError: If transformers cannot read, build or run the config.
    """
    built = config_object(config, model_type)
    cls = model_class(built)
    try:
        with warnings.catch_warnings(), torch.device("meta"), _no_initialisers():
            warnings.simplefilter("ignore")
            model = cls._from_config(built, attn_implementation="eager",  # pylint: disable=protected-access
                                     experts_implementation="batched_mm")
            ids = torch.zeros((1, seq_len), dtype=torch.long)
            inputs = {"input_ids": ids, **({"use_cache": True} if _caches(model) else {}),
                      **({"decoder_input_ids": ids} if built.is_encoder_decoder else {})}
            if cross_tokens:
                width = getattr(getattr(built, "text_config", built), "hidden_size")
                inputs["cross_attention_states"] = torch.zeros((1, cross_tokens, width), dtype=model.dtype)
            with FlopCounterMode(display=False) as counter, torch.no_grad():
                output = model(**inputs)
    except Exception as error:  # noqa: BLE001  # ok: any failure to run is the reference's answer
        raise BuildError(f"transformers {transformers.__version__} cannot run {cls.__name__} on the meta device: "
                         f"{type(error).__name__}: {error}") from None
    return FlopCensus(seq_len, int(counter.get_total_flops()), _cache_elements(getattr(output, "past_key_values", None)))


def _caches(model: Any) -> bool:
    """Whether *model* generates with a cache (a decoder: not an encoder-only masked LM)."""
    return bool(getattr(model.config, "is_decoder", False) or getattr(model, "can_generate", lambda: False)())


def _cache_elements(cache: Any) -> int:
    """Elements of every tensor a returned cache holds (its layers' keys and values, or a hybrid's states)."""
    if cache is None:
        return 0
    tensors = []
    for layer in getattr(cache, "layers", ()) or ():
        for value in vars(layer).values():
            held = value.values() if isinstance(value, dict) else (value,)  # a linear layer's states, by index
            tensors += [item for item in held if isinstance(item, torch.Tensor)]
    for name in ("self_attention_cache", "cross_attention_cache"):
        inner = getattr(cache, name, None)
        if inner is not None:
            return sum(_cache_elements(getattr(cache, n)) for n in ("self_attention_cache", "cross_attention_cache"))
    return sum(t.numel() for t in tensors if t.dim())
