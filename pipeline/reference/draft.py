"""A draft op profile for a family the catalogue does not price, written by the reference for a maintainer to review.

``modelspec reference --draft MODEL_TYPE [CONFIG.json]`` asks transformers
(the ``reference`` extra) what a family is, instead of a maintainer reading
its modelling code from scratch:

- **the import section's keys**: every parameter of the config class's
  ``__init__`` and every ``attribute_map`` alias, each marked *mapped* (the
  shared key table of :mod:`pipeline.pricing.config_keys` names the spec
  field it feeds), *ignored* (the table's reason) or *to decide*;
- **each layer kind's weight inventory**: the config is built
  (:mod:`pipeline.reference.census`) a few times with its widths set to
  distinct values, and every dimension of every tensor is solved for the
  product or sum of spec fields (times a small constant) that gives it in
  every build. A dimension no such expression explains is left as a question,
  never guessed. Layers with the same tensors and expressions are one kind;
- **the model's own tensors** (embedding, position tables, final norm, head,
  tower, projector), the same way;
- **a vision tower** (a config with a ``vision_config``): its widths are
  drawn anew in each build as the text config's are (the tower fields of
  :data:`TOWER_WIDTHS`, each under the spelling its class reads), and its
  blocks' and its own tensors are solved over the tower's fields (with
  ``head_dim``, its width over its heads, and ``text_hidden_size``, the
  language model's width), under the draft's ``vision`` section;
- **the op counts** of each kind, from one forward of the config on the meta
  device under a ``TorchDispatchMode``: every aten op a layer issued (matmuls,
  batched matmuls, softmax, activations, dropout, casts) and every norm
  module it called, each with the module that issued it, so that the
  maintainer can cite the code line.

The draft's ``draft`` key lists its open questions: an op profile that still
holds it is refused when profiles load (``profile.draft``), so a draft never
prices a model before someone has answered them.
"""

from __future__ import annotations

import inspect
import itertools
import json
import random
import re
import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import torch
import transformers
from torch.utils._python_dispatch import TorchDispatchMode

from pipeline.pricing.config_keys import IGNORED, shared_keys, shared_tower_keys
from pipeline.reference.census import BuildError, census, config_object, model_class

#: The spec fields whose values the builds vary: the widths a tensor's shape can depend on.
WIDTHS = ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size",
          "num_experts", "moe_intermediate_size", "shared_expert_intermediate_size", "max_position_embeddings",
          "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
          "linear_num_key_heads", "linear_key_head_dim", "linear_num_value_heads", "linear_value_head_dim",
          "linear_conv_kernel_dim", "num_shared_experts", "relative_attention_num_buckets", "type_vocab_size",
          "ssm_state_size", "ssm_conv_kernel", "ssm_expand", "ssm_num_heads", "ssm_n_groups", "ssm_dt_rank")

#: Config keys that spell a width another way, beside the class's ``attribute_map`` (which transformers applies).
_SPELLINGS = {"num_shared_experts": ("n_shared_experts",), "num_experts": ("n_routed_experts", "num_local_experts"),
              "intermediate_size": ("n_inner", "d_ff", "ffn_dim"), "hidden_size": ("d_model", "n_embd"),
              "num_attention_heads": ("n_head", "num_heads"), "max_position_embeddings": ("n_positions",),
              "ssm_state_size": ("state_size", "mamba_d_state"), "ssm_conv_kernel": ("conv_kernel", "mamba_d_conv"),
              "ssm_expand": ("expand", "mamba_expand"), "ssm_num_heads": ("mamba_n_heads",),
              "ssm_n_groups": ("n_groups", "mamba_n_groups"), "ssm_dt_rank": ("time_step_rank", "mamba_dt_rank")}

#: The tower fields the builds vary (:data:`~pipeline.pricing.weights.TOWER_SYMBOLS`' widths), read from the config
#: keys the shared tower table maps to them (``num_heads`` and ``num_attention_heads``, ``num_channels`` and
#: ``in_channels``), and ``image_size``, whose square over the patch is SigLIP's position table.
TOWER_WIDTHS = ("hidden_size", "intermediate_size", "num_attention_heads", "out_hidden_size", "patch_size",
                "spatial_merge_size", "temporal_patch_size", "in_channels", "num_position_embeddings")

#: The tower fields drawn small and distinct (heads, kernel sides, channels): a product of them stays unique.
_TOWER_SMALL = ("num_attention_heads", "patch_size", "spatial_merge_size", "temporal_patch_size", "in_channels")

#: Widths that count modules rather than size them: drawn small.
_COUNTS = ("num_experts", "num_shared_experts", "linear_conv_kernel_dim", "ssm_conv_kernel", "ssm_expand",
           "ssm_n_groups")

#: How many builds a dimension must be explained in: distinct draws make a chance match all but impossible.
BUILDS = 3

#: The constants an expression may carry (GPT-2's fused c_attn is 3 × hidden_size).
_FACTORS = (1, 2, 3, 4)

#: The tokens of the traced forward.
_TOKENS = 4


class DraftError(ValueError):
    """transformers cannot build the family, or knows no such model type."""


@dataclass(frozen=True)
class Tensor:
    """One tensor of a draft: its name (relative to its layer), its part, and each dimension's expression (an
    expression over spec fields, or ``None`` for a dimension no expression explains)."""

    name: str
    part: str
    shape: Tuple[Optional[str], ...]
    values: Tuple[int, ...]
    hints: Tuple[str, ...] = ()
    tower: bool = False


@dataclass(frozen=True)
class Kind:
    """A layer kind: its name, the stack it sits in, its layer indexes, its tensors and the ops one layer issued;
    ``tower`` for a stack of the vision tower (its shapes over the tower's fields)."""

    name: str
    stack: str
    layers: Tuple[int, ...]
    tensors: Tuple[Tensor, ...]
    ops: Tuple[Tuple[str, str, int], ...]
    tower: bool = False


@dataclass(frozen=True)
class Draft:
    """A family's draft profile: the keys, the kinds, the model's own tensors and the open questions."""

    model_type: str
    model_class: str
    keys: Tuple[Tuple[str, str, str], ...]
    kinds: Tuple[Kind, ...]
    model_tensors: Tuple[Tensor, ...]
    questions: Tuple[str, ...]


def draft(model_type: str, config: Optional[Mapping[str, Any]] = None, seed: int = 0) -> Draft:
    """The draft profile of *model_type*, built from *config* (else the config class's defaults).

    Raises:
        DraftError: If transformers has no such model type or cannot build it.
    """
    if model_type not in transformers.CONFIG_MAPPING:
        raise DraftError(f"transformers {transformers.__version__} has no model type {model_type!r}")
    base = dict(config or transformers.CONFIG_MAPPING[model_type]().to_diff_dict())
    base["model_type"] = model_type
    try:
        reference = config_object(base)
    except BuildError as error:
        raise DraftError(str(error)) from None
    text = reference.get_text_config() if hasattr(reference, "get_text_config") else reference
    nest = "text_config" if text is not reference else None  # a composite config: the language model's widths
    if nest is not None and not isinstance(base.get(nest), dict):
        base[nest] = text.to_diff_dict()
    fields = _varied_fields(type(text), text)
    vision = getattr(reference, "vision_config", None)
    tower = _tower_fields(vision) if vision is not None else {}
    if tower and not isinstance(base.get("vision_config"), dict):
        base["vision_config"] = vision.to_diff_dict()
    builds = _builds(base, fields, nest, random.Random(seed), tower)
    unvaried = _unvaried(reference, {f"{nest}.{key}" if nest else key for key in fields.values()} |
                         {f"vision_config.{key}" for key in tower.values()})
    solver = _Solver([values for values, _ in builds], unvaried)
    tower_solver = _Solver([_tower_values(values) for values, _ in builds], unvaried, repeat=True) if tower else None
    kinds, model_tensors = _inventory(builds, solver, reference, tower_solver)
    ops = _traced_ops(base)
    kinds = tuple(Kind(k.name, k.stack, k.layers, k.tensors, ops.get(f"{k.stack}.{k.layers[0]}", ()), k.tower)
                  for k in kinds)
    return Draft(model_type, builds[0][1].model_class, tuple(_keys(type(reference))), kinds, model_tensors,
                 tuple(_questions(kinds, model_tensors, reference)))


def _questions(kinds: Sequence[Kind], model_tensors: Sequence[Tensor], reference: Any) -> List[str]:
    """The draft's open questions: each dimension no expression explains, each key no rule reads, each kind."""
    questions = [f"{where}: dimension {index} ({tensor.values[index]:,} in the first build) is no product or sum of "
                 f"spec fields{tensor.hints[index]}; name the field (or the config key) it comes from"
                 for where, tensor in _all_tensors(kinds, model_tensors)
                 for index, expression in enumerate(tensor.shape) if expression is None]
    questions += [f"import.{key}: mapped, ignored or refused? (the config class reads it; no shared rule does)"
                  for key, status, _ in _keys(type(reference)) if status == "decide"]
    questions += [f"{_kind_path(kind)}: check the kind's name (layer_types' spelling, else dense/moe), give "
                  "its attention and ffn flavours, and name the ops in profile terms (gather by "
                  "op_profiles/README.md's rule)" for kind in kinds if not kind.tower]
    questions += [f"{_kind_path(kind)}: check the kind's name (a kind of op_profiles/vision.yaml, whose op counts "
                  "price it, or a part of the tower's own weights)" for kind in kinds if kind.tower]
    return questions


def _kind_path(kind: Kind) -> str:
    return f"vision.layer_kinds.{kind.name}" if kind.tower else f"layer_kinds.{kind.name}"


def _all_tensors(kinds: Sequence[Kind], model_tensors: Sequence[Tensor]) -> Iterator[Tuple[str, Tensor]]:
    for kind in kinds:
        for tensor in kind.tensors:
            yield f"{_kind_path(kind)}.{tensor.name}", tensor
    for tensor in model_tensors:
        yield f"{'vision.weights' if tensor.tower else 'model_weights'}.{tensor.name}", tensor


# ---- keys ---------------------------------------------------------------------------------------

def _keys(cls: Any) -> List[Tuple[str, str, str]]:
    """``(key, status, what)`` for each parameter of *cls*'s ``__init__`` and each ``attribute_map`` alias:
    ``mapped`` (to the spec fields), ``ignored`` (the reason) or ``decide``."""
    names = [name for name in inspect.signature(cls.__init__).parameters if name not in ("self", "kwargs")]
    names += [alias for alias in getattr(cls, "attribute_map", {}) if alias not in names]
    rules = shared_keys()
    found = []
    for name in names:
        target = getattr(cls, "attribute_map", {}).get(name, name)
        rule = rules.get(name) or rules.get(target)
        if rule is not None:
            found.append((name, "mapped", " ".join(rule.fields) or rule.transform))
        elif name in IGNORED or target in IGNORED:
            found.append((name, "ignored", IGNORED.get(name) or IGNORED[target]))
        else:
            found.append((name, "decide", ""))
    return found


# ---- builds -------------------------------------------------------------------------------------

def _varied_fields(cls: Any, reference: Any) -> Dict[str, str]:
    """``{spec field: config key}`` for each width the class reads (under its own name or an alias)."""
    params = set(inspect.signature(cls.__init__).parameters) | set(reference.to_dict())  # a kwarg it keeps counts
    attribute_map = getattr(cls, "attribute_map", {})
    found = {}
    for field in WIDTHS:
        spellings = (field, *_SPELLINGS.get(field, ()))
        key = next((name for name in spellings if name in params or attribute_map.get(name) in params), None)
        if key is not None and isinstance(getattr(reference, key, None), int):
            found[field] = key
    return found


def _draw(rng: random.Random, fields: Mapping[str, str], base: Mapping[str, Any]) -> Dict[str, int]:
    """Distinct even values for *fields*, with the heads a multiple of the KV heads, and the width heads × head_dim
    when the class derives head_dim from it."""
    values: Dict[str, int] = {}
    pool = rng.sample(range(6, 200, 2), len(fields) + 4)
    for field, value in zip(fields, pool):
        values[field] = value
    small = rng.sample([2, 3, 5, 7], 2)
    if "num_attention_heads" in values:
        kv = small[0] if "num_key_value_heads" in values else 1
        values["num_attention_heads"] = kv * small[1]
        if "num_key_value_heads" in values:
            values["num_key_value_heads"] = kv
    for field in _COUNTS:
        if field in values:
            values[field] = rng.randint(2, 9)
    if "head_dim" not in fields and "num_attention_heads" in values and "hidden_size" in values:
        values["hidden_size"] = values["num_attention_heads"] * rng.choice(range(4, 40, 2))
    if "vocab_size" in values:
        ids = [base.get(name) for name in ("pad_token_id", "bos_token_id", "eos_token_id")]
        values["vocab_size"] = max([i for i in ids if isinstance(i, int)] + [0]) + 1 + rng.randint(1, 500)
    return values


def _tower_fields(vision: Any) -> Dict[str, str]:
    """``{tower field: vision_config key}`` for each of :data:`TOWER_WIDTHS` the tower's class reads as a whole
    number (under a spelling the shared tower table maps to it), and ``image_size`` beside a ``patch_size``."""
    stated = vision.to_dict()
    found: Dict[str, str] = {}
    for key, rule in shared_tower_keys().items():
        name = rule.fields[0].removeprefix("vision.") if rule.fields else ""
        if rule.transform == "copy" and name in TOWER_WIDTHS and name not in found and type(stated.get(key)) is int:
            found[name] = key
    if type(stated.get("image_size")) is int and "patch_size" in found and "num_position_embeddings" not in found:
        found["image_size"] = "image_size"
    return found


def _draw_tower(rng: random.Random, fields: Mapping[str, str]) -> Dict[str, int]:
    """Distinct values for the tower's *fields*: the heads, kernel sides and channels small primes, the width
    heads × an even head width, the other widths even; ``image_size`` a multiple of the patch."""
    values: Dict[str, int] = {}
    small = iter(rng.sample([2, 3, 5, 7, 11, 13], len(_TOWER_SMALL)))
    for field in _TOWER_SMALL:
        value = next(small)
        if field in fields:
            values[field] = value
    wide = iter(rng.sample(range(20, 400, 2), len(fields) + 1))
    for field in fields:
        values.setdefault(field, next(wide))
    if "num_attention_heads" in values and "hidden_size" in values:
        values["hidden_size"] = values["num_attention_heads"] * rng.choice(range(8, 48, 4))
    if "image_size" in values:
        values["image_size"] = values["patch_size"] * rng.randint(2, 6)
    return values


def _tower_values(values: Mapping[str, int]) -> Dict[str, int]:
    """A build's tower fields (drawn under ``vision.``), its head width and the text model's width: what a tower
    shape is solved over (:data:`~pipeline.pricing.weights.TOWER_SYMBOLS`)."""
    tower = {key[len("vision."):]: value for key, value in values.items() if key.startswith("vision.")}
    if "image_size" in tower:
        tower["num_position_embeddings"] = (tower.pop("image_size") // tower["patch_size"]) ** 2
    if "num_attention_heads" in tower and "hidden_size" in tower:
        tower["head_dim"] = tower["hidden_size"] // tower["num_attention_heads"]
    if "hidden_size" in values:
        tower["text_hidden_size"] = values["hidden_size"]
    return tower


@dataclass(frozen=True)
class _Build:
    model_class: str
    tensors: Mapping[str, Tuple[int, ...]]
    stacks: Tuple[Tuple[str, int], ...]


def _builds(base: Mapping[str, Any], fields: Mapping[str, str], nest: Optional[str], rng: random.Random,
            tower: Mapping[str, str]) -> List[Tuple[Dict[str, int], _Build]]:
    """:data:`BUILDS` builds of *base* with *fields* (of its *nest* sub-config when given) and the *tower*'s fields
    (of its ``vision_config``) drawn anew each time (a draw transformers refuses is drawn again), each with the
    spec-field values it was built with (a tower's under ``vision.``)."""
    found = []
    last = "no draw was tried"
    for _ in range(BUILDS * 20):
        inner = base[nest] if nest else base
        values = _draw(rng, fields, inner)
        drawn = {**_without_spellings(inner, fields, _type_of(base, nest)),
                 **{fields[field]: value for field, value in values.items()}}
        config = {**base, nest: drawn} if nest else drawn
        towered = _draw_tower(rng, tower) if tower else {}
        if tower:
            config = {**config, "vision_config": {**base["vision_config"],
                                                  **{tower[field]: value for field, value in towered.items()}}}
        try:
            counted = census(config)
        except BuildError as error:
            last = str(error)
            continue
        built = config_object(config)
        text = built.get_text_config() if hasattr(built, "get_text_config") else built
        values = {**values, **_derived(text, values), **{f"vision.{key}": value for key, value in towered.items()}}
        found.append((values, _Build(counted.model_class, counted.tensors, counted.stacks)))
        if len(found) == BUILDS:
            return found
    raise DraftError(f"transformers builds no draw of {base['model_type']}'s widths: {last}")


def _type_of(base: Mapping[str, Any], nest: Optional[str]) -> Any:
    """The config class of *base* (of its *nest* sub-config when given)."""
    config = config_object(base)
    return type(getattr(config, nest)) if nest else type(config)


def _without_spellings(base: Mapping[str, Any], fields: Mapping[str, str], cls: Any) -> Dict[str, Any]:
    """*base* without any other spelling of a varied key (an ``attribute_map`` alias, a :data:`_SPELLINGS` name):
    a config stating ``num_experts`` beside the class's ``num_local_experts`` would set it back."""
    aliases = {alias for alias, target in getattr(cls, "attribute_map", {}).items() if target in fields.values()}
    spelled = {name for field in fields for name in (field, *_SPELLINGS.get(field, ()))}
    return {key: value for key, value in base.items() if key not in aliases | spelled}


def _derived(text: Any, values: Mapping[str, int]) -> Dict[str, int]:
    """The head_dim a class derives (hidden_size // num_attention_heads) when it reads none."""
    if "head_dim" in values or not values.get("num_attention_heads") or "hidden_size" not in values:
        return {}
    stated = getattr(text, "head_dim", None)
    return {"head_dim": stated if isinstance(stated, int) else values["hidden_size"] // values["num_attention_heads"]}


# ---- expressions --------------------------------------------------------------------------------

class _Solver:
    """Finds the simplest expression over spec fields equal to a dimension in every build."""

    def __init__(self, builds: Sequence[Mapping[str, int]], unvaried: Mapping[int, Sequence[str]],
                 repeat: bool = False) -> None:
        """With *repeat*, a product may take a field twice (a tower's ``hidden_size * spatial_merge_size *
        spatial_merge_size``: the merged patches' width)."""
        self.unvaried = unvaried
        names = sorted(set.intersection(*(set(b) for b in builds)))
        terms = []
        combinations = itertools.combinations_with_replacement if repeat else itertools.combinations
        for size in (1, 2, 3):
            for combo in combinations(names, size):
                terms.append((" * ".join(combo), tuple(_product(b, combo) for b in builds)))
        self._terms = terms
        self._index: Dict[Tuple[int, ...], str] = {}
        for factor in _FACTORS:
            for text, values in terms:
                key = tuple(factor * v for v in values)
                self._index.setdefault(key, text if factor == 1 else f"{factor} * {text}")

    def solve(self, dims: Tuple[int, ...]) -> Optional[str]:
        """The expression for a dimension whose value in build *i* is ``dims[i]``, else ``None``. A number the builds
        never moved is written only when it is 1 (``Linear(hidden_size, 1)``): any other may be a config value no
        build varied (a tower's width, a kernel size), so it is a question."""
        if len(set(dims)) == 1:
            return "1" if dims[0] == 1 else None
        if dims in self._index:
            return self._index[dims]
        for text, values in self._terms:
            if text.count(" * ") > 1:
                continue
            for factor in _FACTORS:
                rest = tuple(d - factor * v for d, v in zip(dims, values))
                if min(rest) > 0 and rest in self._index:
                    return f"{text if factor == 1 else f'{factor} * {text}'} + {self._index[rest]}"
        return None

    def hint(self, dims: Tuple[int, ...]) -> str:
        """What a question about an unexplained dimension adds: the unvaried config keys it equals."""
        if len(set(dims)) != 1:
            return ""
        keys = self.unvaried.get(dims[0], ())
        return f" (it never moved, and equals the config's {', '.join(keys)})" if keys else \
            " (it never moved: the code's own number, or a config value the builds do not vary)"


def _unvaried(reference: Any, varied: Any) -> Dict[int, List[str]]:
    """``{value: [config keys]}`` of the whole-number config values no build varies (*varied*: the dotted keys the
    builds draw, ``text_config.hidden_size`` in a composite config)."""
    found: Dict[int, List[str]] = {}
    for key, value in _flat(reference.to_dict()):
        if type(value) is int and value > 1 and key not in varied and not key.endswith("_token_id"):
            found.setdefault(value, []).append(key)
    return found


def _flat(data: Mapping[str, Any], prefix: str = "") -> Iterator[Tuple[str, Any]]:
    """``(dotted key, value)`` of *data* and its nested mappings (a composite config's sub-configs)."""
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def _product(values: Mapping[str, int], names: Sequence[str]) -> int:
    out = 1
    for name in names:
        out *= values[name]
    return out


# ---- inventory ----------------------------------------------------------------------------------

#: A layer tensor's part by the modules on its path, innermost rule first: experts, the shared expert and the
#: router inside a block, else the block the first module names, else a norm of the layer's own.
_PARTS = (("shared_expert", "shared_experts"), ("experts", "routed_experts"), ("router", "router"),
          ("gate", "router"))
_WITHIN = ("shared_expert", "experts")
_BLOCKS = (("norm", "norms"), ("ln_", "norms"), ("attn", "attention"), ("attention", "attention"),
           ("mixer", "attention"), ("mlp", "mlp"),
           ("feed_forward", "mlp"), ("ffn", "mlp"), ("moe", "mlp"))

_MODEL_PARTS = (("embed_tokens", "embedding"), ("wte", "embedding"), ("embed_positions", "position"),
                ("wpe", "position"), ("lm_head", "head"), ("vision", "vision"), ("visual", "vision"),
                ("projector", "vision"), ("merger", "vision"), ("connector", "vision"), ("norm", "final_norm"),
                ("ln_f", "final_norm"))

#: A tower tensor's part: the projector's (a patch merger, a multimodal projector, a connector), else the tower's.
_TOWER_PARTS = (("merger", "projector"), ("projector", "projector"), ("connector", "projector"))

#: The stacks of a vision tower (``model.visual.blocks``, ``model.vision_tower.vision_model.encoder.layers``).
_TOWER_STACKS = ("visual", "vision")


def _part(name: str, table: Sequence[Tuple[str, str]], fallback: str) -> str:
    return next((part for marker, part in table if marker in name), fallback)


def _layer_part(name: str) -> str:
    """The part of the layer tensor *name* (``self_attn.q_norm.weight`` is attention's, ``input_layernorm.weight``
    a norm)."""
    modules = name.split(".")[:-1]
    inner = next((part for module in modules[1:] for marker, part in _PARTS if module == marker
                  or marker in _WITHIN and marker in module), None)
    return inner or _part(modules[0] if modules else name, _BLOCKS, "other")


def _inventory(builds: Sequence[Tuple[Mapping[str, int], _Build]], solver: _Solver, reference: Any,
               tower: Optional[_Solver] = None) -> Tuple[Tuple[Kind, ...], Tuple[Tensor, ...]]:
    """The layer kinds (layers of equal tensors and expressions) and the model's own tensors; with a *tower*
    solver, a tower's stacks and tensors are solved over the tower's fields."""
    first = builds[0][1]
    kinds, inside = _layers(builds, solver, tower)
    text = reference.get_text_config() if hasattr(reference, "get_text_config") else reference
    named = _named(kinds, list(getattr(text, "layer_types", None) or []))
    outside = tuple(_model_tensor(name, [b.tensors[name] for _, b in builds], solver, tower)
                    for name in first.tensors if name not in inside)
    return named, outside


def _model_tensor(name: str, shapes: Sequence[Tuple[int, ...]], solver: _Solver,
                  tower: Optional[_Solver]) -> Tensor:
    """A tensor outside the layers; a tower's (with a *tower* solver) solved over the tower's fields."""
    part = _part(name, _MODEL_PARTS, "other")
    if tower is None or part != "vision":
        return _tensor(name, shapes, solver, part)
    found = _tensor(name, shapes, tower, _part(name, _TOWER_PARTS, "tower"))
    return Tensor(found.name, found.part, found.shape, found.values, found.hints, tower=True)


def _is_tower(prefix: str) -> bool:
    """Whether the stack *prefix* is a vision tower's (``model.visual.blocks``)."""
    return any(marker in prefix for marker in _TOWER_STACKS)


_Layers = Dict[Tuple[str, Tuple[Tensor, ...]], List[int]]


def _layers(builds: Sequence[Tuple[Mapping[str, int], _Build]], solver: _Solver,
            tower: Optional[_Solver] = None) -> Tuple[_Layers, set]:
    """``{(stack, tensors): layer indexes}`` over every stack of the first build (a tower's stack solved by the
    *tower* solver), and the names of the tensors inside a layer."""
    first = builds[0][1]
    kinds: _Layers = {}
    inside = set()
    for prefix, length in first.stacks:
        stack_solver = tower if tower is not None and _is_tower(prefix) else solver
        for index in range(length):
            head = f"{prefix}.{index}."
            names = sorted(name for name in first.tensors if name.startswith(head))
            inside.update(names)
            tensors = tuple(_tensor(name[len(head):], [b.tensors[name] for _, b in builds], stack_solver,
                                    _layer_part(name[len(head):])) for name in names)
            kinds.setdefault((prefix, tensors), []).append(index)
    return kinds, inside


def _named(kinds: _Layers, layer_types: Sequence[str]) -> Tuple[Kind, ...]:
    """Each group of equal layers as a kind, named by ``layer_types`` where its layers agree, else by
    :func:`_kind_name`; a name taken twice gets a number."""
    named: List[Kind] = []
    for (prefix, tensors), layers in kinds.items():
        spelled = sorted({layer_types[i] for i in layers if i < len(layer_types)}) if prefix.endswith("layers") else []
        tower = _is_tower(prefix)
        name = spelled[0] if len(spelled) == 1 else "encoder" if tower else \
            _kind_name(tensors, [t for (p, t) in kinds if p == prefix])
        taken = sum(1 for kind in named if kind.name == name or kind.name.startswith(name + "_"))
        named.append(Kind(name if not taken else f"{name}_{taken + 1}", prefix, tuple(layers), tensors, (), tower))
    return tuple(named)


def _kind_name(tensors: Sequence[Tensor], stack: Sequence[Sequence[Tensor]]) -> str:
    """op_profiles/README.md's names for a stack without ``layer_types``: ``moe`` for layers with routed experts,
    ``dense`` beside them, ``full_attention`` for a stack of one shape."""
    if any(tensor.part == "routed_experts" for tensor in tensors):
        return "moe"
    if len(stack) > 1 and any(t.part == "routed_experts" for other in stack for t in other):
        return "dense"
    return "full_attention" if len(stack) == 1 else "kind"


def _tensor(name: str, shapes: Sequence[Tuple[int, ...]], solver: _Solver, part: str) -> Tensor:
    if len({len(shape) for shape in shapes}) != 1:
        return Tensor(name, part, tuple(None for _ in shapes[0]), shapes[0],
                      tuple(" (its rank changes between builds)" for _ in shapes[0]))
    dims = [tuple(shape[i] for shape in shapes) for i in range(len(shapes[0]))]
    return Tensor(name, part, tuple(solver.solve(d) for d in dims), shapes[0], tuple(solver.hint(d) for d in dims))


# ---- ops ----------------------------------------------------------------------------------------

#: aten ops the draft reports, by what the op profiles call them (op_profiles/README.md).
_ATEN = {"mm": "matmul", "addmm": "matmul", "bmm": "batched matmul", "baddbmm": "batched matmul",
         "_softmax": "softmax", "softmax": "softmax", "native_dropout": "dropout", "dropout": "dropout",
         "bernoulli_": "dropout",  # a dropout on the meta device: bernoulli_, div_, mul
         "silu": "activation", "gelu": "activation", "relu": "activation", "tanh": "activation",
         "sigmoid": "activation", "_to_copy": "cast"}


class _Recorder(TorchDispatchMode):
    """Counts the reported aten ops under the innermost module running."""

    def __init__(self, where: List[str]) -> None:
        super().__init__()
        self.where = where
        self.counts: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
        name = func.overloadpacket.__name__
        if name in _ATEN and self.where:
            self.counts[(self.where[-1], f"aten.{name} ({_ATEN[name]})")] += 1
        return func(*args, **(kwargs or {}))


def _traced_ops(base: Mapping[str, Any]) -> Dict[str, Tuple[Tuple[str, str, int], ...]]:
    """``{layer path: ((module, op, count), ...)}`` from one forward of *base* on the meta device (training mode,
    eager attention, so every dropout and the eager scores run); ``{}`` when the forward fails on meta."""
    # A dropout of p = 0 and a cast to the dtype a tensor has issue no aten op: trace with every dropout at 0.1, in
    # bfloat16, so each call site shows (op_profiles/README.md counts them whatever their values).
    try:
        stated = config_object(base).to_dict()
        built = config_object({**base, **{key: 0.1 for key, value in stated.items()
                                          if "drop" in key and isinstance(value, float)}})
        built._attn_implementation = "eager"  # pylint: disable=protected-access
        with warnings.catch_warnings(), torch.device("meta"):
            warnings.simplefilter("ignore")
            model = model_class(built)(built).to(torch.bfloat16)
    except Exception:  # noqa: BLE001  # ok: the inventory stands without the ops; the draft says so
        return {}
    where: List[str] = []
    norms: Counter = Counter()
    hooks = []
    for path, module in model.named_modules():
        hooks.append(module.register_forward_pre_hook(lambda m, a, p=path: where.append(p)))
        hooks.append(module.register_forward_hook(lambda m, a, o: _drop(where)))
        if "norm" in type(module).__name__.lower():
            hooks.append(module.register_forward_pre_hook(lambda m, a, p=path: norms.update([p])))
    recorder = _Recorder(where)
    model.train()
    try:
        with warnings.catch_warnings(), recorder:
            warnings.simplefilter("ignore")
            model(input_ids=torch.zeros((1, _TOKENS), dtype=torch.long, device="meta"))
    except Exception:  # noqa: BLE001  # ok: a forward that needs real values (images, data-dependent control flow)
        return {}
    finally:
        for hook in hooks:
            hook.remove()
    by_layer: Dict[str, List[Tuple[str, str, int]]] = {}
    for (module, op), count in sorted(recorder.counts.items()):
        _file_under(by_layer, module, op, count)
    for module, count in sorted(norms.items()):
        _file_under(by_layer, module, "norm module call", count)
    return {layer: tuple(ops) for layer, ops in by_layer.items()}


def _drop(where: List[str]) -> None:
    """Leave the innermost module (a forward hook must return ``None``, or it replaces the module's output)."""
    where.pop()


def _file_under(by_layer: Dict[str, List[Tuple[str, str, int]]], module: str, op: str, count: int) -> None:
    """File a count under the layer (``model.layers.3``) whose module issued it; a count outside a layer is not a
    kind's."""
    match = re.match(r"(.*?\.\d+)(?:\.(.*))?$", module)
    if match is None:
        return
    layer, inner = match.groups()
    by_layer.setdefault(layer, []).append((inner or "(the layer)", op, count))


# ---- rendering ----------------------------------------------------------------------------------

def render(result: Draft) -> str:
    """The draft as op-profile YAML: what the reference told, with its open questions under ``draft``."""
    q = json.dumps
    lines = [f"# A DRAFT op profile for model_type {result.model_type}, written by modelspec reference --draft",
             f"# from {result.model_class} at transformers {transformers.__version__}, torch {torch.__version__}.",
             "# Review every line against the modelling code, cite it, answer each question under draft, then delete",
             "# the draft key: an op profile holding it is refused (profile.draft).",
             "draft:"]
    lines += [f"  - {q(question)}" for question in result.questions] or ["  []"]
    lines += [f"arch: {result.model_type}", f"model_types: [{result.model_type}]", "import:", "  keys:"]
    for key, status, what in result.keys:
        lines.append(f"    # {key}: {status}" + (f" ({what})" if what else ""))
    lines.append("layer_kinds:")
    for kind in result.kinds:
        if not kind.tower:
            lines += _kind_lines(kind, "  ")
    lines.append("model_weights:")
    lines += [f"  - {_entry(tensor)}" for tensor in result.model_tensors if not tensor.tower]
    if any(kind.tower for kind in result.kinds) or any(tensor.tower for tensor in result.model_tensors):
        lines += ["vision:", "  # the tower: shapes over its fields, head_dim (its width over its heads) and "
                             "text_hidden_size", "  weights:"]
        lines += [f"    - {_entry(tensor)}" for tensor in result.model_tensors if tensor.tower]
        lines.append("  layer_kinds:")
        for kind in result.kinds:
            if kind.tower:
                lines += _kind_lines(kind, "    ")
    return "\n".join(lines) + "\n"


def _kind_lines(kind: Kind, indent: str) -> List[str]:
    """A kind's lines of the draft, at *indent*: its stack and layers, its traced ops, its weights."""
    lines = [f"{indent}{kind.name}:", f"{indent}  # {kind.stack}, layers {_ranges(kind.layers)}", f"{indent}  ops:"]
    lines += [f"{indent}    # {op} x{count}: {module}" for module, op, count in kind.ops] or \
        [f"{indent}    # no forward traced on the meta device: count the ops from the modelling code"]
    lines.append(f"{indent}  weights:")
    lines += [f"{indent}    - {_entry(tensor)}" for tensor in kind.tensors]
    return lines


def _entry(tensor: Tensor) -> str:
    role = tensor.name.rsplit(".", 2)[-2] if tensor.name.count(".") else tensor.name
    shape = ", ".join(expression if expression is not None else json.dumps(f"? {value}")
                      for expression, value in zip(tensor.shape, tensor.values))
    return f"{{role: {role}, name: {tensor.name}, part: {tensor.part}, shape: [{shape}]}}"


def _ranges(layers: Sequence[int]) -> str:
    spans = []
    for _, run in itertools.groupby(enumerate(layers), lambda pair: pair[1] - pair[0]):
        items = [layer for _, layer in run]
        spans.append(str(items[0]) if len(items) == 1 else f"{items[0]}-{items[-1]}")
    return ", ".join(spans)
