"""Hugging Face ``config.json`` to model spec: the importer's mapping, as data.

A catalogue is worth what its numbers are worth, so every spec of it is
produced from the model's published config by this one mapping, and the
mapping is written as tables a reviewer can read row by row:

- :data:`KEYS` has one :class:`~pipeline.pricing.families.KeyRule` per Hugging Face
  key the families share: the spec field it sets, the transform (a name of
  :data:`TRANSFORMS`) and, for a renamed, derived or rule-read key, where
  the rule comes from. :data:`VISION_KEYS` is the same for ``vision_config``.
- :data:`IGNORED` and :data:`VISION_IGNORED` are the reviewed keys that do
  not change what a cost model prices, each with its one-line reason.
- Everything one family's modelling code decides is data, the ``import``
  section of its op profile (:mod:`pipeline.pricing.families`): how its layers'
  attention and feed-forward are laid out (a name of
  :data:`ATTENTION_RULES`, :data:`FFN_RULES`, :data:`TOWER_RULES`), the
  facts its modelling code hard-codes (``qk_norm``, a Qwen MoE's one gated
  shared expert, GPT-2's biases), its config class's defaults for the keys
  a config may leave out (GPT-2's absent ``n_inner`` is ``4 * hidden_size``),
  its own key names (GPT-2's ``n_embd``), and the keys it reads but prices
  nothing by, or does not read. ``model_type`` picks the profile that lists
  it; ``arch`` names the profile only for a model type no profile lists (a
  fine-tune's own name), read as that profile's family: a model type that a
  profile prices keeps its own family's rules.

Every key of a config, at the top level, in ``text_config`` (read as if it
stood at the top level) and in ``vision_config``, is either read by a row or
listed as ignored; any other key (a ``text_config`` or ``vision_config``
nested inside ``text_config`` among them: the nestings are read at the top
level only) stops the import by name (or, with ``allow_unknown``, is
returned in :attr:`ImportedSpec.unknown`). A NaN or an infinity (which the
command's reader keeps) is refused only in a key a rule reads, by name: an
ignored key may hold one (Mamba's ``time_step_limit``). A model type no
profile prices is refused saying whether transformers implements it
natively (a profile can be drafted) or only the checkpoint's own code does
(:mod:`pipeline.importer.transformers_types`, shipped data), and a config
whose ``architectures`` names a transformers class of another model type
is refused naming both. Where two keys, or a key and the
modelling code, give one field different values, the import stops naming
both: refuse rather than default. Every spec field remembers the config key
it came from (:meth:`ImportedSpec.source`), so a refusal of the spec, here
or by a later check, is shown at that key.

The layer stack is derived per layer, as the modelling code builds its
layers (``layer_types`` as stated; Qwen3-Next's from
``full_attention_interval``; Gemma 3's sliding pattern; DeepSeek's
``first_k_dense_replace``; Qwen-MoE's
``decoder_sparse_step``/``mlp_only_layers``; T5's halves), then compared
with what :func:`pipeline.pricing.stack.derive_layers` resolves from the written
fields: ``layers`` is written only when the rules alone would resolve the
wrong stack. This module is pure: mappings in, a mapping out, no I/O.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.importer.transformers_types import transformers_types
from pipeline.pricing.config_keys import _RULES, _VISION_RULES, IGNORED, KEYS, VISION_IGNORED
from pipeline.pricing.families import (COPY, EQUALS, FLAG, MAX_ITEMS, REFUSE_MATCHING, Expression, Family, KeyRule,
                                       NotIn, Variant)
from pipeline.pricing.op_profiles import OpProfile, OpProfiles
from pipeline.pricing.parameters import ParameterCounts, Unpriced, count_parameters, counted_parts
from pipeline.pricing.stack import derive_layers, fields_without_kind, spec_layer_stack, tower_layer_stack
from pipeline.spec.model import LayerGroup, ModelSpec, ModelSpecError, StatedParameters

CODES: Dict[str, str] = {
    "import.json": "The config file cannot be read as strict JSON: larger than 1 MiB, not UTF-8, a syntax error, "
                   "nesting deeper than 64 levels, a key stated twice in one object, NaN, an infinity or a number "
                   "of more than 4000 characters (refused by the command's reader, before any mapping).",
    "import.not-a-mapping": "The config, its text_config or its vision_config is not a JSON object.",
    "import.no-model-type": "The config states no model_type (MiniCPM3's names only remote code), so no op profile "
                            "can be picked.",
    "import.unknown-model-type": "No op profile with an import section prices the config's model_type, which "
                                 "transformers 5.24.0 implements natively: a profile can be drafted from the reference "
                                 "(modelspec reference --draft).",
    "import.remote-code": "No op profile prices the config's model_type and transformers 5.24.0 does not know it: "
                          "only the checkpoint's own modelling code implements it (an auto_map: baichuan, chatglm, "
                          "RefinedWebModel), which no op profile can cite.",
    "import.architectures": "The config's architectures names a transformers class of another model type than its "
                            "model_type (which transformers builds whatever architectures says), so the config names "
                            "two models.",
    "import.arch": "--arch names another op profile than the one that prices the config's model_type (--arch is "
                   "for a model type no profile lists), or a profile whose model types the importer has no rules "
                   "for.",
    "import.unknown-key": "A config key the importer neither maps nor lists as not changing what a cost model "
                          "prices.",
    "import.both-levels": "A key stated at the top level and in text_config with different values.",
    "import.conflict": "Two keys, or a key and the model type's modelling code, give one spec field different "
                       "values.",
    "import.missing": "A key a layer rule of the model type needs is not stated.",
    "import.value": "A key's value is not of the kind its rule reads (an integer, a list of layer indexes, ...), or "
                    "a key a rule reads holds a NaN or an infinity.",
    "import.unsupported": "The config states a structure the op profile or the spec cannot express.",
}

#: A key's place in a config: ``("text_config", "layer_types")``.
KeyPath = Tuple[str, ...]


@dataclass(frozen=True)
class ImportIssue:
    """One reason a config cannot be imported.

    Attributes:
        path: The config key it is about (``()`` for the config itself).
        code: A code of :data:`CODES`, or the model IR's code when the mapped
            spec is refused (``spec.kv-heads-divide``).
        message: What is wrong and what to do instead.
    """

    path: KeyPath
    code: str
    message: str


class ConfigImportError(ValueError):
    """A config the importer refuses; :attr:`issues` holds every reason found."""

    def __init__(self, issues: Sequence[ImportIssue]):
        self.issues: Tuple[ImportIssue, ...] = tuple(issues)
        super().__init__("; ".join(issue.message for issue in self.issues))


# ---- families ------------------------------------------------------------------

def family_names(profiles: OpProfiles) -> List[str]:
    """The model types a config can be imported as: those of every profile with an ``import`` section, sorted."""
    return sorted(name for profile in profiles.profiles.values() if profile.family is not None
                  for name in profile.model_types)


# ---- reading a config ------------------------------------------------------------

_MISSING = object()


def _same(left: Any, right: Any) -> bool:
    """Whether two JSON values are the same value of the same type (``1`` is not ``true`` or ``1.0``)."""
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


def _show(value: Any) -> str:
    """A JSON value as a config spells it."""
    return json.dumps(value)


# The JSON type of a value, as a message names it.
_JSON_TYPES = ((bool, "a boolean"), (dict, "an object"), (list, "an array"), (str, "a string"), (int, "a number"),
               (float, "a number"))


def _json_type(value: Any) -> str:
    """The JSON type of *value* (``"an array"``), for a message that must not repeat a value of any size."""
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "null")


def _dotted(path: KeyPath) -> str:
    return ".".join(path)


@dataclass(frozen=True)
class _Stated:
    """A value a config states (or its config class defaults), and where."""

    value: Any
    path: KeyPath
    default: bool = False
    computed: str = ""

    @property
    def origin(self) -> str:
        if not self.default:
            return _dotted(self.path)
        value = f"{self.computed}, " if self.computed else ""
        return f"{self.path[-1]} (not stated: {value}its config class's default)"


class _Fields:
    """The spec fields being built, each with where its value came from, refusing contradictions."""

    def __init__(self, issues: List[ImportIssue]) -> None:
        self.values: Dict[str, Any] = {}
        self.origins: Dict[str, str] = {}
        self.paths: Dict[str, KeyPath] = {}
        self.fixed: Dict[str, str] = {}
        self.issues = issues

    def fix(self, name: str, value: Any, model_type: str) -> None:
        """Set field *name* as the modelling code of *model_type* hard-codes it."""
        self.values[name] = value
        self.origins[name] = self.fixed[name] = f"the modelling code of model_type {model_type!r}"
        self.paths[name] = ()

    def put(self, name: str, value: Any, origin: str, path: KeyPath) -> None:
        """Set field *name*, or record ``import.conflict`` if another source gave it another value."""
        if value is None:
            return
        if name in self.values and not _same(self.values[name], value):
            if name in self.fixed:
                message = (f"{origin} makes {name} {_show(value)}, but {self.fixed[name]} fixes it at "
                           f"{_show(self.values[name])}; the model has no such choice, so correct or remove it")
            else:
                message = (f"{name} is {_show(self.values[name])} from {self.origins[name]} but {_show(value)} "
                           f"from {origin}; state one value")
            self.issues.append(ImportIssue(path, "import.conflict", message))
            return
        if name in self.fixed:
            self.origins[name], self.paths[name] = origin, path
            del self.fixed[name]
            return
        if name not in self.values:
            self.values[name] = value
            self.origins[name] = origin
            self.paths[name] = path


class _Context:
    """One import's state: the merged keys, the family and its profile, the fields, the issues.

    ``type_name`` is the family's first model type, as messages name it.
    """

    def __init__(self, keys: Dict[str, _Stated], profile: OpProfile) -> None:
        self.keys = keys
        self.profile = profile
        self.family: Family = profile.family
        self.type_name = profile.model_types[0]
        self.issues: List[ImportIssue] = []
        self.fields = _Fields(self.issues)

    def refuse(self, path: KeyPath, code: str, message: str) -> None:
        self.issues.append(ImportIssue(path, code, message))

    def value(self, key: str, default: Any = None) -> Any:
        stated = self.keys.get(key)
        return default if stated is None or stated.value is None else stated.value

    def path(self, key: str) -> KeyPath:
        stated = self.keys.get(key)
        return stated.path if stated is not None else ()

    def integer(self, key: str, minimum: int, needed_for: str) -> Optional[int]:
        """The integer *key* states (else the family's default for it), at least *minimum*; ``None`` after
        recording why not."""
        value = self.value(key, _MISSING)
        if value is _MISSING:
            value = self.family.defaults.get(key, _MISSING)
        if value is _MISSING:
            self.refuse((), "import.missing", f"{key} is not stated, and {needed_for} needs it; state it")
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.refuse(self.path(key), "import.value",
                        f"{key} must be an integer of at least {minimum}, got {_show(value)}")
            return None
        return value

    def indexes(self, key: str, path: KeyPath, value: Any, limit: int) -> Optional[List[int]]:
        """*value* as a list of layer indexes below *limit*; ``None`` after recording why not."""
        if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < limit
                                              for i in value):
            self.refuse(path, "import.value",
                        f"{key} must list layer indexes from 0 to {limit - 1}, got {_show(value)}")
            return None
        return value


# ---- transforms: one key's value to fields ---------------------------------------

def _named(rule: KeyRule, stated: _Stated, ctx: _Context) -> Tuple[Any, str]:
    """*stated*'s value and origin, a string of the rule's ``named`` values read as the number its config class
    computes (run after the other keys, so an expression reads the fields they mapped: Mamba's ``time_step_rank:
    "auto"``, ``(hidden_size + 15) // 16``)."""
    value = stated.value
    if not isinstance(value, str) or value not in rule.named:
        return value, stated.origin
    number = rule.named[value]
    if isinstance(number, Expression):
        computed = number.evaluate(ctx.fields.values)
        return (value if computed is None else computed), f"{stated.origin} ({_show(value)}: {number.text})"
    return number, f"{stated.origin} ({_show(value)}: {number})"


def _copy(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    value, origin = _named(rule, stated, ctx)
    ctx.fields.put(rule.fields[0], value, origin, stated.path)


def _dtype(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    value = stated.value
    ctx.fields.put("torch_dtype", value.removeprefix("torch.") if isinstance(value, str) else value,
                   stated.origin, stated.path)


def _both(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    value, origin = _named(rule, stated, ctx)
    for name in rule.fields:
        ctx.fields.put(name, value, origin, stated.path)


def _require(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    if stated.value is not None and not _same(stated.value, rule.expect):
        ctx.refuse(stated.path, "import.unsupported",
                   f"{_dotted(stated.path)} is {_show(stated.value)}: {rule.source}; only "
                   f"{_show(rule.expect)} is imported")


def _refuse_matching(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    value = stated.value
    if value is not None and (not isinstance(value, str) or re.match(rule.expect, value)):
        ctx.refuse(stated.path, "import.unsupported",
                   f"{_dotted(stated.path)} is {_show(value)}: {rule.source}; state arch and ops for such a model")


def _flag(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    """A true-or-false key that gives its field one of two values (run after the other keys, so an expression
    reads the fields they mapped: GPTBigCode's ``multi_query: false`` is ``num_attention_heads`` key/value heads)."""
    if stated.value is None and (stated.default or rule.key not in ctx.family.null_false):
        return
    if stated.value is not None and not isinstance(stated.value, bool):
        ctx.refuse(stated.path, "import.value", f"{_dotted(stated.path)} must be true or false, got "
                                                f"{_show(stated.value)}")
        return
    value = rule.expect[0] if stated.value else rule.expect[1]  # a null of null_false is false
    if isinstance(value, Expression):
        value = value.evaluate(ctx.fields.values)
    origin = f"{stated.origin} ({rule.source})"
    for name in rule.fields:
        ctx.fields.put(name, value, origin, stated.path)


def _equals(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    """A key whose only priced value is a spec field's (run after the other keys set it): OPT's
    ``word_embed_proj_dim`` other than ``hidden_size`` builds project_in and project_out."""
    field_value = ctx.fields.values.get(rule.expect)
    if stated.value is not None and field_value is not None and not _same(stated.value, field_value):
        ctx.refuse(stated.path, "import.unsupported",
                   f"{_dotted(stated.path)} is {_show(stated.value)}, not {rule.expect} ({_show(field_value)}): "
                   f"{rule.source}; only {rule.expect} is imported")


def _max_items(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    """A key whose scalar value sizes nothing but whose list value sizes a tensor by its length, past the most
    items the profile prices (LLaVA's ``vision_feature_layer``: linear_1 reads the tower's width times the layers
    listed)."""
    value = stated.value
    if isinstance(value, list) and len(value) > rule.expect:
        ctx.refuse(stated.path, "import.unsupported",
                   f"{_dotted(stated.path)} lists {len(value)} values: {rule.source}; at most {rule.expect} is "
                   "imported")


def _encoder_decoder(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    """``is_encoder_decoder`` must say what the family is. A stated null is false: PretrainedConfig keeps it, and
    what reads the flag (generation, the reference's choice of a causal-LM head) then takes an encoder-decoder for a
    decoder-only model (BartConfig: BartForCausalLM, the decoder alone)."""
    expected = ctx.family.attention == "encoder_decoder"
    if stated.value is None and not stated.default and expected:
        ctx.refuse(stated.path, "import.unsupported",
                   f"is_encoder_decoder is null, which its config class keeps and reads as false, but model_type "
                   f"{ctx.type_name!r} is an encoder-decoder; state true, or leave the key out")
    elif stated.value is not None and stated.value is not expected:
        ctx.refuse(stated.path, "import.unsupported",
                   f"is_encoder_decoder is {_show(stated.value)}, but model_type "
                   f"{ctx.type_name!r} is {'an encoder-decoder' if expected else 'decoder-only'}; "
                   f"{rule.source}")


def _read_by_rule(rule: KeyRule, stated: _Stated, ctx: _Context) -> None:
    """A key read elsewhere: by a layer or tower rule, or by the import itself (model_type, the name, the nesting)."""


_Transform = Callable[[KeyRule, _Stated, _Context], None]

#: The transforms :data:`KEYS` and :data:`VISION_KEYS` name.
TRANSFORMS: Mapping[str, _Transform] = MappingProxyType({
    "copy": _copy,
    "dtype": _dtype,
    "both": _both,
    "require": _require,
    REFUSE_MATCHING: _refuse_matching,
    FLAG: _flag,
    EQUALS: _equals,
    MAX_ITEMS: _max_items,
    "encoder_decoder": _encoder_decoder,
    "rule": _read_by_rule,
    "model_type": _read_by_rule,
    "name": _read_by_rule,
    "nested": _read_by_rule,
})


# ---- layer rules: each body layer's attention and feed-forward -----------------

#: The most layers (body or tower) a layer rule walks one by one. The rules
#: build a list per layer; real models have a few hundred at most, so a larger
#: count is a wrong config, refused before it costs memory.
MAX_LAYERS = 100_000

# The attention flavours of an op profile kind that a layer type names.
_FLAVOURS = {"full_attention": ("full", "mla"), "sliding_attention": ("sliding",), "linear_attention": ("linear",),
             "mamba": ("ssm",),
             "chunked_attention": ("chunked",), "cross_attention": ("cross",)}


def _window(ctx: _Context, gated: bool) -> Optional[_Stated]:
    """The sliding window the config gives, ``None`` when there is none (or ``use_sliding_window`` is off)."""
    window = ctx.keys.get("sliding_window")
    if window is None or window.value is None or (gated and ctx.value("use_sliding_window", False) is not True):
        return None
    return window


def _no_window(ctx: _Context, source: str) -> None:
    """Refuse a window for a family whose attention never slides (a key its config class does not read, listed
    as unread, is a leftover that changes nothing; one it reads but its modelling code never does is ignored)."""
    window = ctx.keys.get("sliding_window")
    listed = set(ctx.family.unread) | set(ctx.family.ignored)
    if window is not None and window.value is not None and "sliding_window" not in listed:
        ctx.refuse(window.path, "import.unsupported",
                   f"sliding_window is {_show(window.value)}, but {source} never slides; leave it out")
    if "use_sliding_window" not in ctx.family.unread and ctx.value("use_sliding_window", False) is not False:
        ctx.refuse(ctx.path("use_sliding_window"), "import.unsupported",
                   f"use_sliding_window is {_show(ctx.value('use_sliding_window'))}, but {source} never slides")


def _attention_full(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    _no_window(ctx, f"model_type {ctx.type_name!r}'s attention")
    return ["full_attention"] * count, None


def _attention_ssm(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """Every layer a state-space mixer (Mamba, Mamba2): a ``mamba`` layer, none attends or slides."""
    _no_window(ctx, f"model_type {ctx.type_name!r}'s state-space mixer")
    return ["mamba"] * count, None


def _attention_indices(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """Softmax attention at the layers attn_layer_indices lists, a state-space mixer (``mamba``) at every other
    (Bamba's ``layers_block_type``); no index listed: every layer a mixer."""
    _no_window(ctx, f"model_type {ctx.type_name!r}'s attention")
    listed = ctx.indexes("attn_layer_indices", ctx.path("attn_layer_indices"),
                         ctx.value("attn_layer_indices") or [], count)
    if listed is None:
        return None, None
    return ["full_attention" if index in listed else "mamba" for index in range(count)], None


#: MllamaTextConfig.__post_init__'s cross_attention_layers when None (transformers 5.24.0 configuration_mllama.py).
_MLLAMA_CROSS_LAYERS = (3, 8, 13, 18, 23, 28, 33, 38)


def _attention_cross_layers(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """Cross-attention (``cross_attention``: the text attends to the tower's states, no self-attention) at the
    layers cross_attention_layers lists, self-attention (``full_attention``) at every other (transformers 5.24.0
    modeling_mllama.py MllamaTextModel: ``MllamaCrossAttentionDecoderLayer if layer_idx in
    cross_attention_layers``); none slides."""
    _no_window(ctx, f"model_type {ctx.type_name!r}'s attention")
    stated = ctx.value("cross_attention_layers")
    key = "cross_attention_layers" + (" (not stated: its config class's default)" if stated is None else "")
    listed = ctx.indexes(key, ctx.path("cross_attention_layers"),
                         list(_MLLAMA_CROSS_LAYERS) if stated is None else stated, count)
    if listed is None:
        return None, None
    return ["cross_attention" if index in listed else "full_attention" for index in range(count)], None


def _attention_window_layers(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    window = _window(ctx, gated=True)
    first = ctx.integer("max_window_layers", 0, "use_sliding_window") if window is not None else count
    if first is None:
        return None, window
    return ["sliding_attention" if index >= first else "full_attention" for index in range(count)], window


def _attention_alternate_window_layers(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """Qwen2-MoE: with use_sliding_window, sliding at every other layer (0, 2, 4, ...) below max_window_layers
    (transformers 5.24.0 configuration_qwen2_moe.py Qwen2MoeConfig.__post_init__: ``bool((i + 1) % 2) and i <
    self.max_window_layers and self.use_sliding_window``), full attention elsewhere."""
    window = _window(ctx, gated=True)
    below = ctx.integer("max_window_layers", 0, "use_sliding_window") if window is not None else 0
    if below is None:
        return None, window
    return ["sliding_attention" if (index + 1) % 2 and index < below else "full_attention"
            for index in range(count)], window


def _attention_window_from_layer(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """dots1: sliding from layer max_window_layers on whenever a window is set, with no use_sliding_window to gate
    it (transformers 5.24.0 configuration_dots1.py Dots1Config.__post_init__: ``sliding_attention if
    self.sliding_window is not None and i >= self.max_window_layers``); a window or a layer the config leaves out is
    its config class's default."""
    window = _window(ctx, gated=False)
    default = ctx.family.defaults.get("sliding_window")
    if window is None and "sliding_window" not in ctx.keys and isinstance(default, int):
        window = _Stated(default, ("sliding_window",), default=True)
    first = ctx.integer("max_window_layers", 0, "a sliding_window") if window is not None else count
    if first is None:
        return None, window
    return ["sliding_attention" if index >= first else "full_attention" for index in range(count)], window


def _attention_window_all(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    window = _window(ctx, gated=False)
    return ["sliding_attention" if window is not None else "full_attention"] * count, window


def _attention_window_all_if_enabled(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    window = _window(ctx, gated=True)
    return ["sliding_attention" if window is not None else "full_attention"] * count, window


def _every(ctx: _Context, count: int, keys: Sequence[str], other: str) -> Optional[List[str]]:
    """``other`` at every layer, and ``full_attention`` at each (i + 1) % n == 0, n from the first of *keys* stated
    (else, without layer_types, from the family's default for the first key: Qwen3NextConfig's 4). A key the
    family lists as unread is never read: its default is the modelling code's fixed period (OLMo 3's 4)."""
    stated = [key for key in keys if key not in ctx.family.unread and ctx.value(key) is not None]
    default = ctx.family.defaults.get(keys[0])
    if not stated and ctx.value("layer_types") is None and isinstance(default, int) and default > 0:
        return [other if (index + 1) % default else "full_attention" for index in range(count)]
    if not stated:
        if ctx.value("layer_types") is None:
            ctx.refuse((), "import.missing", f"neither layer_types nor {' nor '.join(keys)} is stated, so the "
                                             f"{other} and full_attention layers are unknown; state layer_types")
        return None
    periods = {key: ctx.integer(key, 1, "the layer types") for key in stated}
    if None in periods.values():
        return None
    if len(set(periods.values())) > 1:
        ctx.refuse(ctx.path(stated[-1]), "import.conflict",
                   " but ".join(f"{key} is {value}" for key, value in periods.items()) + "; state one")
        return None
    period = periods[stated[0]]
    return [other if (index + 1) % period else "full_attention" for index in range(count)]


def _attention_interval(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    _no_window(ctx, f"model_type {ctx.type_name!r}'s attention")
    return _every(ctx, count, ("full_attention_interval",), "linear_attention"), None


def _attention_sliding_pattern(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """Gemma 3: transformers 5.24.0 configuration_gemma3.py Gemma3TextConfig.__post_init__ builds layer_types, when
    they are not stated, from ``kwargs.get("sliding_window_pattern", 6)``; the ``_sliding_window_pattern`` it
    stores (and to_dict writes) is never read back."""
    return _every(ctx, count, ("sliding_window_pattern",), "sliding_attention"), _window(ctx, gated=False)


def _attention_alternate(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    types = ["sliding_attention" if (index + 1) % 2 else "full_attention" for index in range(count)]
    return types, _window(ctx, gated=False)


def _no_rope_flags(ctx: _Context, count: int) -> Optional[List[int]]:
    """Each layer's ``no_rope_layers`` flag (1: RoPE, 0: none), as stated, else 1 except at each
    (i + 1) % no_rope_layer_interval == 0 (the interval as stated, else the family's default)."""
    stated = ctx.value("no_rope_layers")
    if stated is None:
        interval = ctx.value("no_rope_layer_interval", ctx.family.defaults.get("no_rope_layer_interval"))
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
            ctx.refuse(ctx.path("no_rope_layer_interval"), "import.value",
                       f"no_rope_layer_interval must be an integer of at least 1, got {_show(interval)}")
            return None
        return [int((index + 1) % interval != 0) for index in range(count)]
    if not isinstance(stated, list) or len(stated) < count or any(flag not in (0, 1) for flag in stated):
        ctx.refuse(ctx.path("no_rope_layers"), "import.value",
                   f"no_rope_layers must list a 0 or 1 for each of the {count} layers, got {_show(stated)}")
        return None
    return [int(flag) for flag in stated[:count]]


def _attention_no_rope_window(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """SmolLM3: transformers 5.24.0 configuration_smollm3.py SmolLM3Config.__post_init__ builds layer_types, when
    they are not stated, as sliding_attention at each layer without RoPE (``no_rope_layers[i] == 0``) when
    ``use_sliding_window`` and ``sliding_window`` are set, full_attention everywhere else. A stated layer_types'
    sliding_attention layers slide by ``sliding_window`` alone: SmolLM3Model.forward gives them
    create_sliding_window_causal_mask, which reads config.sliding_window, whatever use_sliding_window says."""
    if ctx.value("layer_types") is not None:
        return None, _window(ctx, gated=False)
    window = _window(ctx, gated=True)
    if window is None:
        return ["full_attention"] * count, None
    flags = _no_rope_flags(ctx, count)
    if flags is None:
        return None, window
    return ["full_attention" if flag else "sliding_attention" for flag in flags], window


def _attention_stated(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """The layer types as ``layer_types`` states them (EXAONE 4), the window from ``sliding_window``."""
    if ctx.value("layer_types") is None:
        ctx.refuse((), "import.missing", f"model_type {ctx.type_name!r} takes each layer's attention from "
                                         "layer_types, which is not stated; state layer_types")
    return None, _window(ctx, gated=False)


def _pattern_list(ctx: _Context) -> Optional[_Stated]:
    """The first of the family's pattern list keys the config states (NemotronH's ``layers_block_type``)."""
    return next((ctx.keys[key] for key in ctx.family.pattern_lists if ctx.value(key) is not None), None)


def _pattern_length(ctx: _Context) -> Optional[int]:
    """How many body layers the stated pattern (a list key, else the pattern key) lays out; ``None`` for none."""
    stated = _pattern_list(ctx) or ctx.keys.get(ctx.family.pattern_key)
    value = stated.value if stated is not None else None
    return len(value) if isinstance(value, (list, str)) and value else None


def _listed_types(ctx: _Context, stated: _Stated, count: int, refuse: bool) -> Optional[List[str]]:
    """Each body layer's kind, named by the list key *stated* (``linear_attention``, ``moe``, ...)."""
    names, value = ctx.family.pattern_names, stated.value
    if isinstance(value, list) and len(value) == count and all(isinstance(n, str) and n in names for n in value):
        return [names[name] for name in value]
    if refuse:
        ctx.refuse(stated.path, "import.value",
                   f"{_dotted(stated.path)} must list {count} layer types (num_hidden_layers), each one of "
                   f"{', '.join(sorted(names))}, got {_show(value)}")
    return None


def _pattern_types(ctx: _Context, count: int, refuse: bool = True) -> Optional[List[str]]:
    """Each body layer's kind: named by a list key of the family (NemotronH's ``layers_block_type``, which
    NemotronHConfig reads before the pattern), else one character of its pattern key each (Nemotron-H's
    ``hybrid_override_pattern``: M mamba, * attention, E moe, - mlp); ``None`` after recording why not (with
    *refuse*; the feed-forward rule reads the same key again, and says nothing twice)."""
    listed = _pattern_list(ctx)
    if listed is not None:
        return _listed_types(ctx, listed, count, refuse)
    key, kinds = ctx.family.pattern_key, ctx.family.pattern_kinds
    value = ctx.value(key)
    if not refuse:
        valid = isinstance(value, str) and len(value) == count and all(char in kinds for char in value)
        return [kinds[char] for char in value] if valid else None
    if value is None:
        ctx.refuse((), "import.missing", f"{key} is not stated, and model_type {ctx.type_name!r} lays out its "
                                         f"layers by it; state it")
        return None
    if not isinstance(value, str) or len(value) != count or any(char not in kinds for char in value):
        ctx.refuse(ctx.path(key), "import.value",
                   f"{key} must be {count} characters (num_hidden_layers), each one of "
                   f"{', '.join(repr(char) for char in kinds)}, got {_show(value)}")
        return None
    return [kinds[char] for char in value]


def _attention_pattern(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    _no_window(ctx, f"model_type {ctx.type_name!r}'s attention")
    return _pattern_types(ctx, count), None


def _rope_flags(ctx: _Context, count: int) -> Optional[List[bool]]:
    """Llama 4: whether each layer applies RoPE, from ``no_rope_layers`` (1: RoPE), else a NoPE layer at each
    (i + 1) % no_rope_layer_interval == 0 (transformers 5.24.0 Llama4TextConfig.__post_init__, which takes an
    empty list as not stated)."""
    listed = ctx.value("no_rope_layers")
    if listed:
        if not isinstance(listed, list) or len(listed) < count or any(
                isinstance(flag, bool) or flag not in (0, 1) for flag in listed):
            ctx.refuse(ctx.path("no_rope_layers"), "import.value",
                       f"no_rope_layers must list a 0 or 1 for each of the {count} layers, got {_show(listed)}")
            return None
        return [flag == 1 for flag in listed[:count]]
    interval = ctx.integer("no_rope_layer_interval", 1, "the NoPE layers") if "no_rope_layer_interval" in ctx.keys \
        else ctx.family.defaults.get("no_rope_layer_interval")
    if interval is None:
        return None
    return [(index + 1) % interval != 0 for index in range(count)]


def _attention_rope_layers(ctx: _Context, count: int) -> Tuple[Optional[List[str]], Optional[_Stated]]:
    """Llama 4: each layer's attention as layer_types states it, else chunked_attention on the RoPE layers when
    attention_chunk_size is set and full_attention elsewhere; a RoPE layer's type gains ``_qk_norm`` (its
    Llama4TextL2Norm on q and k, built with use_qk_norm, which a variant undoes), so that its kind is the
    profile's ``<type>_qk_norm_<ffn>``."""
    _no_window(ctx, f"model_type {ctx.type_name!r}'s attention")
    rope = _rope_flags(ctx, count)
    chunk = ctx.keys.get("attention_chunk_size")  # a stated null attends in no chunks; left out, the class's default
    if chunk is None and ctx.family.defaults.get("attention_chunk_size") is not None:
        chunk = _Stated(ctx.family.defaults["attention_chunk_size"], ("attention_chunk_size",), default=True)
    chunked = chunk is not None and chunk.value is not None
    types = _stated_types(ctx, ctx.keys.get("layer_types"), None, count)
    if rope is None or (types is None and ctx.value("layer_types") is not None):
        return None, None
    if types is None:
        types = ["chunked_attention" if flag and chunked else "full_attention" for flag in rope]
    if "chunked_attention" in types[:count]:
        if not chunked:
            ctx.refuse(ctx.path("layer_types"), "import.missing", "the stack has chunked_attention layers but "
                                                                  "attention_chunk_size is null; state it")
            return None, None
        ctx.fields.put("attention_chunk_size", chunk.value, chunk.origin, chunk.path)
    return [name + ("_qk_norm" if flag else "") for name, flag in zip(types[:count], rope)], None


_AttentionRule = Callable[[_Context, int], Tuple[Optional[List[str]], Optional[_Stated]]]

#: How each family picks a body layer's attention: ``(layer types, the window)`` for *count* layers.
ATTENTION_RULES: Mapping[str, _AttentionRule] = MappingProxyType({
    "full": _attention_full,
    "window_layers": _attention_window_layers,
    "window_all": _attention_window_all,
    "window_all_if_enabled": _attention_window_all_if_enabled,
    "interval": _attention_interval,
    "sliding_pattern": _attention_sliding_pattern,
    "alternate": _attention_alternate,
    "encoder_decoder": _attention_full,
    "stated": _attention_stated,
    "pattern": _attention_pattern,
    "no_rope_window": _attention_no_rope_window,
    "alternate_window_layers": _attention_alternate_window_layers,
    "ssm": _attention_ssm,
    "rope_layers": _attention_rope_layers,
    "indices": _attention_indices,
    "window_from_layer": _attention_window_from_layer,
    "cross_layers": _attention_cross_layers,
})


def _ffn_dense(ctx: _Context, count: int) -> Optional[List[str]]:
    return ["dense"] * count


def _ffn_moe(ctx: _Context, count: int) -> Optional[List[str]]:
    return ["moe"] * count


def _ffn_none(ctx: _Context, count: int) -> Optional[List[str]]:
    """No layer has a feed-forward: the mixer is the layer (Mamba's single-mixer blocks)."""
    return ["none"] * count


def _ffn_per_kind(ctx: _Context, count: int) -> Optional[List[str]]:
    """Each layer's feed-forward as its kind states it (a pattern layout names the kinds)."""
    kinds = _pattern_types(ctx, count, refuse=False) if ctx.family.pattern_key else None
    if kinds is None:
        return None
    return [ctx.profile.layer_kinds[kind].ffn if kind in ctx.profile.layer_kinds else "none" for kind in kinds]


def _ffn_first_k(ctx: _Context, count: int) -> Optional[List[str]]:
    """DeepSeek-V3: dense below first_k_dense_replace (stated, or its config class's default), MoE from there."""
    if ctx.fields.values.get("num_experts") is None:
        return ["dense"] * count
    first = ctx.fields.values.get("first_k_dense_replace")
    if first is None:
        ctx.refuse((), "import.missing", "first_k_dense_replace is not stated, and the dense-then-MoE layer rule "
                                         "needs it; state it")
        return None
    if isinstance(first, bool) or not isinstance(first, int) or first < 0:
        ctx.refuse(ctx.fields.paths.get("first_k_dense_replace", ()), "import.value",
                   f"first_k_dense_replace must be an integer of at least 0, got {_show(first)}")
        return None
    return ["moe" if index >= first else "dense" for index in range(count)]


def _ffn_sparse_step(ctx: _Context, count: int) -> Optional[List[str]]:
    experts = ctx.fields.values.get("num_experts")
    if not isinstance(experts, int) or experts <= 0:
        return ["dense"] * count
    step = ctx.integer("decoder_sparse_step", 1, "the MoE layer rule")
    dense = ctx.indexes("mlp_only_layers", ctx.path("mlp_only_layers"), ctx.value("mlp_only_layers", []), count)
    if step is None or dense is None:
        return None
    return ["moe" if index not in dense and (index + 1) % step == 0 else "dense" for index in range(count)]


def _ffn_moe_layers(ctx: _Context, count: int) -> Optional[List[str]]:
    """Llama 4: MoE at the layers moe_layers lists, else at range(step - 1, count, step) for
    interleave_moe_layer_step (transformers 5.24.0 Llama4TextConfig.__post_init__), dense elsewhere."""
    if ctx.value("moe_layers") is not None:
        listed = ctx.indexes("moe_layers", ctx.path("moe_layers"), ctx.value("moe_layers"), count)
    else:
        step = ctx.integer("interleave_moe_layer_step", 1, "the MoE layer rule") \
            if "interleave_moe_layer_step" in ctx.keys else ctx.family.defaults.get("interleave_moe_layer_step", 1)
        listed = None if step is None else list(range(step - 1, count, step))
    if listed is None:
        return None
    return ["moe" if index in listed else "dense" for index in range(count)]


#: How each family picks a body layer's feed-forward (``dense`` or ``moe``) for *count* layers.
FFN_RULES: Mapping[str, Callable[[_Context, int], Optional[List[str]]]] = MappingProxyType({
    "dense": _ffn_dense,
    "moe": _ffn_moe,
    "first_k": _ffn_first_k,
    "sparse_step": _ffn_sparse_step,
    "per_kind": _ffn_per_kind,
    "none": _ffn_none,
    "moe_layers": _ffn_moe_layers,
})

# The rule keys each rule reads; a rule key a config states for a family whose
# rules do not read it must hold its neutral value (absent, or the value that
# changes nothing), so that no stated structure is silently dropped.
_RULE_KEYS: Mapping[str, Tuple[str, ...]] = MappingProxyType({
    "full": ("sliding_window", "use_sliding_window"),
    "window_layers": ("sliding_window", "use_sliding_window", "max_window_layers"),
    "alternate_window_layers": ("sliding_window", "use_sliding_window", "max_window_layers"),
    "window_from_layer": ("sliding_window", "max_window_layers"),
    "window_all": ("sliding_window",),
    "window_all_if_enabled": ("sliding_window", "use_sliding_window"),
    "interval": ("sliding_window", "use_sliding_window", "full_attention_interval"),
    "sliding_pattern": ("sliding_window", "sliding_window_pattern"),
    "alternate": ("sliding_window",),
    "encoder_decoder": ("sliding_window", "use_sliding_window", "num_layers", "num_decoder_layers", "encoder_layers",
                        "decoder_layers"),
    "stated": ("sliding_window",),
    "pattern": ("sliding_window", "use_sliding_window"),
    "no_rope_window": ("sliding_window", "use_sliding_window", "no_rope_layers", "no_rope_layer_interval"),
    "ssm": ("sliding_window", "use_sliding_window"),
    "indices": ("sliding_window", "use_sliding_window", "attn_layer_indices"),
    "cross_layers": ("sliding_window", "use_sliding_window", "cross_attention_layers"),
    "sparse_step": ("decoder_sparse_step", "mlp_only_layers"),
    "rope_layers": ("attention_chunk_size", "no_rope_layers", "no_rope_layer_interval"),
    "moe_layers": ("moe_layers", "interleave_moe_layer_step"),
})
_ANY = object()  # a rule key that changes nothing at any value
_NEUTRAL: Mapping[str, Any] = MappingProxyType({
    "use_sliding_window": False, "max_window_layers": _ANY, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "cross_attention_layers": [],
})


def _check_unread_rule_keys(ctx: _Context) -> None:
    """Refuse a rule key the family's rules do not read unless it holds its neutral value."""
    family = ctx.family
    read = set(_RULE_KEYS.get(family.attention, ())) | set(_RULE_KEYS.get(family.ffn, ()))
    listed = set(family.ignored) | set(family.unread)
    for key in sorted(set(k for keys in _RULE_KEYS.values() for k in keys) - read - listed):
        stated = ctx.keys.get(key)
        if stated is None or stated.value is None:
            continue
        neutral = _NEUTRAL.get(key, _MISSING)
        if neutral is _ANY or (neutral is not _MISSING and _same(stated.value, neutral)):
            continue
        ctx.refuse(stated.path, "import.unsupported",
                   f"{_dotted(stated.path)} is {_show(stated.value)}, but model_type {ctx.type_name!r} does not "
                   f"read it ({family.source}); remove it, or import the config as the family that reads it")


def _kind(profile: OpProfile, layer_type: str, ffn: str) -> Optional[str]:
    """The profile's kind for a layer of *layer_type* attention and *ffn* feed-forward, or ``None``.

    A profile names its kinds as layer types (``full_attention``), as
    feed-forwards (``dense``, ``moe``) or as both (``chunked_attention_moe``,
    Llama 4's); the kind's flavours must match.
    A layer whose flavours the kind of that name does not have is the one
    kind of the profile that has both (Qwen3-Next's dense layers are
    ``linear_attention_dense``, Qwen3-MoE's windowed ones ``sliding_moe``).
    """
    kinds = profile.layer_kinds
    flavours = _FLAVOURS.get(layer_type, ())
    if layer_type in kinds and kinds[layer_type].ffn == ffn:
        return layer_type
    if f"{layer_type}_{ffn}" in kinds and kinds[f"{layer_type}_{ffn}"].ffn == ffn:
        return f"{layer_type}_{ffn}"  # a kind per layer type and feed-forward (Llama 4's chunked_attention_moe)
    if ffn in kinds and kinds[ffn].attention in flavours:
        return ffn
    fits = [name for name, kind in kinds.items() if kind.ffn == ffn and kind.attention in flavours]
    return fits[0] if len(fits) == 1 else None


def _run_lengths(kinds: Sequence[str]) -> List[LayerGroup]:
    groups: List[LayerGroup] = []
    for kind in kinds:
        if groups and groups[-1].kind == kind:
            groups[-1] = LayerGroup(kind, groups[-1].count + 1)
        else:
            groups.append(LayerGroup(kind, 1))
    return groups


def _culprit(ctx: _Context, ffn_mismatch: bool) -> KeyPath:
    """The stated key that gave a layer the part its profile has no kind for: a feed-forward or an attention key."""
    family = ctx.family
    keys = _RULE_KEYS.get(family.ffn, ()) if ffn_mismatch else ("layer_types",) + _RULE_KEYS.get(family.attention, ())
    for key in keys:
        stated = ctx.keys.get(key)
        neutral = _NEUTRAL.get(key, _MISSING)
        if stated is None or stated.value is None or neutral is _ANY:
            continue
        if neutral is _MISSING or not _same(stated.value, neutral):
            return stated.path
    return ()


def _body_kinds(ctx: _Context, types: Sequence[str], ffns: Sequence[str]) -> Optional[List[str]]:
    """Each body layer's kind of the profile, or ``None`` after recording the first layer it has none for."""
    kinds = [_kind(ctx.profile, layer_type, ffn) for layer_type, ffn in zip(types, ffns)]
    if None not in kinds:
        return kinds
    first = kinds.index(None)
    offered = ", ".join(f"{name} ({kind.attention}/{kind.ffn})" for name, kind in ctx.profile.layer_kinds.items())
    ctx.refuse(_culprit(ctx, ffn_mismatch=types[first] in ctx.profile.layer_kinds), "import.unsupported",
               f"layer {first} is a {types[first]} layer with a {ffns[first]} feed-forward, which op profile "
               f"{ctx.profile.arch!r} has no kind for (its kinds: {offered}); state arch and layers for such a model")
    return None


def _derives(ctx: _Context, layers: Sequence[LayerGroup], layer_types: Optional[Sequence[str]]) -> bool:
    """Whether the stack rules resolve exactly *layers* from the fields written."""
    values = ctx.fields.values
    first_k_dense = values.get("first_k_dense_replace") or 0
    if isinstance(first_k_dense, bool) or not isinstance(first_k_dense, int):
        return False  # copied as stated: the spec's own check refuses it, located, once layers are written
    try:
        derived = derive_layers(ctx.profile, values["num_hidden_layers"], values.get("mtp_depth") or 0,
                                layer_types=layer_types, first_k_dense=first_k_dense)
    except ModelSpecError:
        return False
    return list(derived) == list(layers)


def _write_stack(ctx: _Context, kinds: List[str], types: Sequence[str], stated: Optional[_Stated]) -> None:
    """Write layer_types and, when the rules alone would resolve another stack, layers."""
    mtp = ctx.fields.values.get("mtp_depth") or 0
    layers = _run_lengths(kinds) + ([LayerGroup(kinds[-1], mtp, mtp=True)] if mtp and kinds else [])
    names_kinds = all(name in ctx.profile.layer_kinds for name in types)
    layer_types = list(types) if names_kinds and (stated is not None or not _derives(ctx, layers, None)) else None
    if _derives(ctx, layers, layer_types):
        if layer_types is not None:
            origin = stated.origin if stated is not None else f"model_type {ctx.type_name!r}'s layer rule"
            ctx.fields.put("layer_types", layer_types, origin, stated.path if stated else ())
        return
    ctx.fields.put("layers", [group.to_dict() for group in layers],
                   f"model_type {ctx.type_name!r}'s layer rule", stated.path if stated else ())


def _variant_kinds(ctx: _Context) -> Optional[Dict[str, str]]:
    """The kinds the family's variants rename (``{}`` for none), or ``None`` after refusing stated keys that
    disagree (T5's ``feed_forward_proj: relu`` beside ``is_gated_act: true``). Variants compose in the order the
    profile lists them: NemotronH's ``use_conv_bias: false`` makes a mamba block ``mamba_no_conv_bias``, and
    ``use_bias: true`` then makes that ``mamba_proj_bias_no_conv_bias``."""
    renames: Dict[str, str] = {}
    for variant in ctx.family.variants:
        stated = [(key, ctx.keys[key]) for key in variant.when if key in ctx.keys] or _variant_defaults(ctx, variant)
        verdicts = {key: variant.when[key].holds(item.value) for key, item in stated}
        if len(set(verdicts.values())) > 1:
            ctx.refuse(stated[-1][1].path, "import.conflict",
                       " but ".join(f"{key} is {_show(item.value)}" for key, item in stated) +
                       f": they disagree on the layers {variant.source} builds; state one")
            return None
        if any(verdicts.values()):  # each applied variant renames the kinds the ones before it gave
            renames = {kind: variant.kinds.get(renames.get(kind, kind), renames.get(kind, kind))
                       for kind in ctx.profile.layer_kinds}
    return renames


def _variant_defaults(ctx: _Context, variant: Variant) -> List[Tuple[str, _Stated]]:
    """A variant's keys as the config class defaults them, for a config that states none of them: GPT-NeoX's
    ``use_parallel_residual`` is true unless a config says otherwise, so its layers are the parallel kind."""
    defaults = ctx.family.defaults
    return [(key, _Stated(defaults[key], (key,), default=True)) for key in variant.when
            if key in defaults and not isinstance(defaults[key], Expression)]


#: The keys an encoder-decoder config class counts its stacks' layers by, per naming: T5's (a decoder left out has
#: the encoder's count, transformers 5.24.0 T5Config: ``num_decoder_layers if not None else num_layers``) and
#: BART's (a decoder left out has BartConfig's default, the family's ``defaults``).
ENCODER_DECODER_KEYS: Tuple[Tuple[str, str], ...] = (("num_layers", "num_decoder_layers"),
                                                     ("encoder_layers", "decoder_layers"))


def _encoder_decoder_keys(family: Family) -> Tuple[str, str]:
    """The encoder's and the decoder's layer-count keys of *family*: the first naming its config class reads."""
    return next((pair for pair in ENCODER_DECODER_KEYS if family.shared is not None and pair[0] in family.shared),
                ENCODER_DECODER_KEYS[0])


def _encoder_count(ctx: _Context, key: str) -> Optional[int]:
    """The encoder's layers: *key*, or ``num_hidden_layers``, which T5Config's and BartConfig's attribute_map make
    the same attribute (transformers 5.24.0: ``num_hidden_layers -> num_layers``, ``-> encoder_layers``; a stated
    alias wins in the class, so the two stated apart are refused), not the spec's num_hidden_layers (encoder plus
    decoder)."""
    alias = ctx.keys.get("num_hidden_layers")
    if alias is None or alias.value is None:
        return ctx.integer(key, 1, "an encoder-decoder stack")
    if ctx.fields.paths.get("num_hidden_layers") == alias.path:  # the shared row copied it: it is not the sum
        for table in (ctx.fields.values, ctx.fields.origins, ctx.fields.paths):
            table.pop("num_hidden_layers", None)
    named = ctx.keys.get(key)
    if named is not None and named.value is not None and not _same(named.value, alias.value):
        ctx.refuse(alias.path, "import.conflict",
                   f"{_dotted(alias.path)} is {_show(alias.value)} but {_dotted(named.path)} is "
                   f"{_show(named.value)}: model_type {ctx.type_name!r}'s config class reads num_hidden_layers as "
                   f"{key} (attribute_map), the encoder's layers; state one")
        return None
    return ctx.integer("num_hidden_layers", 1, "an encoder-decoder stack")


def _encoder_decoder_stack(ctx: _Context) -> None:
    """T5, BART: encoder blocks then decoder blocks (of a variant's kinds, T5 v1.1's gated ones); num_hidden_layers
    is their sum."""
    encoder_key, decoder_key = _encoder_decoder_keys(ctx.family)
    encoder = _encoder_count(ctx, encoder_key)
    decoder = ctx.value(decoder_key)
    if decoder is not None or decoder_key in ctx.family.defaults:
        decoder = ctx.integer(decoder_key, 1, "an encoder-decoder stack")
    else:
        decoder = encoder
    renames = _variant_kinds(ctx)
    if encoder is None or decoder is None or renames is None:
        return
    path = ctx.path(encoder_key) or ctx.path("num_hidden_layers")
    origin = f"{encoder_key} + {decoder_key}"
    ctx.fields.put("num_hidden_layers", encoder + decoder, origin, path)
    if encoder != decoder or renames:
        ctx.fields.put("layers", [{"kind": renames.get("encoder", "encoder"), "count": encoder},
                                  {"kind": renames.get("decoder", "decoder"), "count": decoder}],
                       f"{encoder_key}, {decoder_key}", path)


def _stack(ctx: _Context) -> None:
    """Derive the body's kinds and write layer_types, layers and sliding_window as the rules need."""
    family = ctx.family
    _check_unread_rule_keys(ctx)
    if family.attention == "encoder_decoder":
        _no_window(ctx, f"model_type {ctx.type_name!r}'s attention")
        _encoder_decoder_stack(ctx)
        return
    if family.attention == "pattern" and "num_hidden_layers" not in ctx.fields.values:
        length = _pattern_length(ctx)  # NemotronHConfig.num_hidden_layers: len(layers_block_type)
        if length is not None:
            stated = _pattern_list(ctx) or ctx.keys[family.pattern_key]
            ctx.fields.put("num_hidden_layers", length, f"the length of {_dotted(stated.path)}", stated.path)
    count = ctx.fields.values.get("num_hidden_layers")
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        return  # the model IR refuses it by name
    if count > MAX_LAYERS:
        ctx.refuse(ctx.fields.paths.get("num_hidden_layers", ()), "import.value",
                   f"{ctx.fields.origins['num_hidden_layers']} is {count}, more layers than the importer walks "
                   f"({MAX_LAYERS}); check the config")
        return
    derived, window = ATTENTION_RULES[family.attention](ctx, count)
    stated = _stated_layer_types(ctx)
    types = _stated_types(ctx, stated, derived, count)
    ffns = FFN_RULES[family.ffn](ctx, count)
    if types is None or ffns is None:
        return
    if "sliding_attention" in types[:count]:
        if window is None:
            ctx.refuse(ctx.path("layer_types"), "import.missing",
                       "the stack has sliding_attention layers but no sliding window is in effect; state "
                       "sliding_window" + (" and use_sliding_window: true" if "use_sliding_window" in
                                           _RULE_KEYS.get(family.attention, ()) else ""))
            return
        ctx.fields.put("sliding_window", window.value, window.origin, window.path)
    kinds = _body_kinds(ctx, types[:count], ffns)
    renames = _variant_kinds(ctx)
    if kinds is not None and renames is not None:
        body = [renames.get(kind, kind) for kind in kinds]
        _write_stack(ctx, body, types if stated is not None else types[:count], stated)
        _drop_fields_without_kind(ctx, body)


def _stated_layer_types(ctx: _Context) -> Optional[_Stated]:
    """The stated layer_types the stack takes as stated: none when a pattern list reads them (NemotronH) or the
    rope_layers rule does (Llama 4: a RoPE layer's type names its kind with ``_qk_norm``)."""
    family = ctx.family
    if "layer_types" in family.pattern_lists or family.attention == "rope_layers":
        return None
    return ctx.keys.get("layer_types")


def _drop_fields_without_kind(ctx: _Context, body: Sequence[str]) -> None:
    """Leave out the fields no kind of the body reads (Qwen3.5's linear_* when layer_types lists no
    linear_attention layer, Qwen3-MoE's experts when every layer is in mlp_only_layers): the config's class reads
    the keys, but the model it describes builds nothing of them (``stack.field-without-kind``)."""
    for name in fields_without_kind([ctx.profile.layer_kinds[kind] for kind in set(body)]):
        for table in (ctx.fields.values, ctx.fields.origins, ctx.fields.paths, ctx.fields.fixed):
            table.pop(name, None)


def _stated_types(ctx: _Context, stated: Optional[_Stated], derived: Optional[List[str]],
                  count: int) -> Optional[List[str]]:
    """The layer types: as stated, else as derived. A stated list wins over a period that would derive others, as
    in every config class that has one (transformers 5.24.0 Gemma3TextConfig, Qwen3NextConfig, Qwen3_5TextConfig
    ``__post_init__``: the period builds layer_types only ``if self.layer_types is None``)."""
    if stated is None or stated.value is None:
        return derived
    value = stated.value
    if not isinstance(value, list) or not value or not all(isinstance(name, str) for name in value):
        ctx.refuse(stated.path, "import.value", f"layer_types must list layer type names, got {_show(value)}")
        return None
    if len(value) < count:
        ctx.refuse(stated.path, "import.value", f"layer_types lists {len(value)} layers, but num_hidden_layers is "
                                                f"{count}; list one type per body layer")
        return None
    return value


# ---- the vision tower --------------------------------------------------------------

def _tower_encoder(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    return None


#: Qwen2VLVisionConfig(mlp_ratio=4) (transformers 5.24.0 configuration_qwen2_vl.py).
_QWEN2_VL_MLP_RATIO = 4


def _tower_ratio_encoder(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """Qwen2-VL: every block an encoder whose VisionMlp is ``int(config.embed_dim * config.mlp_ratio)`` wide
    (transformers 5.24.0 modeling_qwen2_vl.py Qwen2VLVisionBlock), mlp_ratio 4 when not stated."""
    stated = tower.get("mlp_ratio")
    ratio = _QWEN2_VL_MLP_RATIO if stated is None or stated.value is None else stated.value
    width = fields.values.get("hidden_size")
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0:
        ctx.refuse(stated.path, "import.value", f"{_dotted(stated.path)} must be a positive number, got "
                                                f"{_show(ratio)}")
        return
    if isinstance(width, int) and not isinstance(width, bool):
        default = "" if stated is not None else "not stated: its config class's default "
        origin = f"int(embed_dim * mlp_ratio), mlp_ratio {default}{ratio}"
        fields.put("intermediate_size", int(width * ratio), origin,
                   stated.path if stated is not None else fields.paths.get("hidden_size", ()))


def _tower_siglip(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """SigLIP: a learned position embedding per patch of a square image."""
    _patch_positions(ctx, tower, fields, 0)


def _tower_class_token(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """CLIP: a learned position embedding per patch of a square image and one for the class token
    (transformers 5.24.0 modeling_clip.py CLIPVisionEmbeddings: num_positions = num_patches + 1)."""
    _patch_positions(ctx, tower, fields, 1)


def _tower_uncast_class_token(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """Llama 4: positions as CLIP's (Llama4VisionModel: num_patches = (image_size // patch_size) ** 2 + 1), every
    block an uncast_encoder (vision_eager_attention_forward's softmax casts nothing back)."""
    _patch_positions(ctx, tower, fields, 1)
    depth = fields.values.get("num_hidden_layers")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0:
        fields.put("layers", [{"kind": "uncast_encoder", "count": depth}], fields.origins["num_hidden_layers"],
                   fields.paths["num_hidden_layers"])


def _patch_positions(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields, extra: int) -> None:
    """``num_position_embeddings``: (image_size // patch_size) ** 2 patches and *extra* more (a class token); an
    image_size the tower leaves out is its config class's (the family's ``vision_defaults``: Llama4VisionConfig's
    448), as for any other tower key."""
    image = tower.get("image_size")
    if image is None and "image_size" in ctx.family.vision_defaults:
        image = _Stated(ctx.family.vision_defaults["image_size"], ("vision_config", "image_size"), default=True)
    patch = fields.values.get("patch_size")
    if image is None or image.value is None:
        return
    if isinstance(image.value, bool) or not isinstance(image.value, int) or not isinstance(patch, int) or patch <= 0:
        ctx.refuse(image.path, "import.value",
                   f"image_size and patch_size must be positive integers, got {_show(image.value)} and {_show(patch)}")
        return
    fields.put("num_position_embeddings", (image.value // patch) ** 2 + extra,
               "(image_size // patch_size) ** 2" + (f" + {extra}" if extra else ""), image.path)


def _tower_window_blocks(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """Qwen2.5-VL: windowed blocks, full attention at fullatt_block_indexes."""
    depth = fields.values.get("num_hidden_layers")
    full = tower.get("fullatt_block_indexes")
    if full is None or full.value is None:
        ctx.refuse(("vision_config",), "import.missing",
                   "a Qwen2.5-VL tower needs fullatt_block_indexes, the blocks of full attention; state it")
        return
    if isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0:
        return  # the model IR refuses it by name
    if depth > MAX_LAYERS:
        ctx.refuse(fields.paths["num_hidden_layers"], "import.value",
                   f"{fields.origins['num_hidden_layers']} is {depth}, more layers than the importer walks "
                   f"({MAX_LAYERS}); check the config")
        return
    indexes = ctx.indexes("fullatt_block_indexes", full.path, full.value, depth)
    if indexes is None:
        return
    kinds = ["gated_encoder" if index in indexes else "window_encoder" for index in range(depth)]
    fields.put("layers", [group.to_dict() for group in _run_lengths(kinds)], full.origin, full.path)


def _tower_gated_blocks(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """Pixtral: every block a gated_encoder (RMSNorm, full attention, gated SiLU MLP)."""
    depth = fields.values.get("num_hidden_layers")
    if isinstance(depth, int) and not isinstance(depth, bool) and depth > 0:
        fields.put("layers", [{"kind": "gated_encoder", "count": depth}], fields.origins["num_hidden_layers"],
                   fields.paths["num_hidden_layers"])


def _tower_gated_patch_grid(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """GLM-4V: every block a gated_encoder (RMSNorm, full attention, gated SiLU MLP), and a learned position per
    patch of a square image, as SigLIP's ((image_size // patch_size) ** 2)."""
    _tower_siglip(ctx, tower, fields)
    _tower_gated_blocks(ctx, tower, fields)


#: Qwen3VLVisionConfig(deepstack_visual_indexes=(8, 16, 24)) (transformers 5.24.0 configuration_qwen3_vl.py).
_QWEN3_VL_DEEPSTACK = (8, 16, 24)


def _tower_deepstack(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """Qwen3-VL: encoder blocks, and one deepstack patch merger per entry of ``deepstack_visual_indexes``
    (transformers 5.24.0 modeling_qwen3_vl.py Qwen3VLVisionModel: ``deepstack_merger_list`` of
    ``len(config.deepstack_visual_indexes)`` mergers, built whatever the indexes are), (8, 16, 24) when not stated."""
    stated = tower.get("deepstack_visual_indexes")
    if stated is None or stated.value is None:
        fields.put("num_deepstack_mergers", len(_QWEN3_VL_DEEPSTACK),
                   f"len(deepstack_visual_indexes), not stated: its config class's default {list(_QWEN3_VL_DEEPSTACK)}",
                   fields.paths.get("num_hidden_layers", ()))
        return
    value = stated.value
    if not isinstance(value, list) or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in value):
        ctx.refuse(stated.path, "import.value",
                   f"{_dotted(stated.path)} must list block indexes (whole numbers from 0), got {_show(value)}")
        return
    fields.put("num_deepstack_mergers", len(value), f"len({stated.origin})", stated.path)


#: MllamaVisionConfig's defaults (transformers 5.24.0 configuration_mllama.py): num_global_layers=8, and
#: supported_aspect_ratios [[1, 1], [1, 2], [1, 3], [1, 4], [2, 1], [2, 2], [3, 1], [4, 1]] when None (8 ratios).
_MLLAMA_GLOBAL_LAYERS = 8
_MLLAMA_ASPECT_RATIOS = 8


def _tower_tiled(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields) -> None:
    """Mllama: positions as CLIP's and a tile table per aspect ratio (MllamaPrecomputedPositionEmbedding:
    num_patches = (image_size // patch_size) ** 2 + 1), ``num_aspect_ratios`` the rows of the tile tables
    (``max_aspect_ratio_id = len(supported_aspect_ratios)``, one row more for padding), and two stacks: the local
    ``transformer`` of num_hidden_layers encoder blocks, then the ``global_transformer`` of num_global_layers
    global_encoder blocks (MllamaVisionEncoder(is_gated=True): gate_attn, gate_ffn); the tower's
    num_hidden_layers is both (transformers 5.24.0 modeling_mllama.py MllamaVisionModel)."""
    _patch_positions(ctx, tower, fields, 1)
    ratios = tower.get("supported_aspect_ratios")
    if ratios is None or ratios.value is None:
        fields.put("num_aspect_ratios", _MLLAMA_ASPECT_RATIOS, "len(supported_aspect_ratios), not stated: its "
                   "config class's default of 8 ratios", fields.paths.get("hidden_size", ()))
    elif not isinstance(ratios.value, list) or not ratios.value:
        ctx.refuse(ratios.path, "import.value",
                   f"{_dotted(ratios.path)} must list [width, height] tile ratios, got {_show(ratios.value)}")
    else:
        fields.put("num_aspect_ratios", len(ratios.value), f"len({ratios.origin})", ratios.path)
    depth = fields.values.get("num_hidden_layers")
    stated = tower.get("num_global_layers")
    wide = _MLLAMA_GLOBAL_LAYERS if stated is None or stated.value is None else stated.value
    if isinstance(wide, bool) or not isinstance(wide, int) or wide < 0:
        ctx.refuse(stated.path, "import.value",
                   f"{_dotted(stated.path)} must be a whole number of at least 0, got {_show(wide)}")
        return
    if isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0:
        return  # the model IR refuses it by name
    if depth + wide > MAX_LAYERS:
        ctx.refuse(fields.paths["num_hidden_layers"], "import.value",
                   f"the tower's {depth + wide} blocks are more layers than the importer walks ({MAX_LAYERS}); "
                   "check the config")
        return
    origin = fields.origins["num_hidden_layers"]
    global_origin = stated.origin if stated is not None and stated.value is not None else \
        f"num_global_layers, not stated: its config class's default {_MLLAMA_GLOBAL_LAYERS}"
    path = stated.path if stated is not None else fields.paths["num_hidden_layers"]
    groups = [{"kind": "encoder", "count": depth}] + ([{"kind": "global_encoder", "count": wide}] if wide else [])
    fields.values["num_hidden_layers"] = depth + wide  # the tower's blocks: both stacks'
    fields.origins["num_hidden_layers"] = f"{origin} + {global_origin}"
    fields.put("layers", groups, f"{origin}, then {global_origin}", path)


#: How each family's tower picks its blocks' kinds (of ``op_profiles/vision.yaml``).
TOWER_RULES: Mapping[str, Callable[[_Context, Mapping[str, _Stated], _Fields], None]] = MappingProxyType({
    "encoder": _tower_encoder,
    "ratio_encoder": _tower_ratio_encoder,
    "siglip": _tower_siglip,
    "class_token": _tower_class_token,
    "uncast_class_token": _tower_uncast_class_token,
    "window_blocks": _tower_window_blocks,
    "gated_blocks": _tower_gated_blocks,
    "deepstack": _tower_deepstack,
    "gated_patch_grid": _tower_gated_patch_grid,
    "tiled": _tower_tiled,
})
_TOWER_KEYS: Mapping[str, Tuple[str, ...]] = MappingProxyType({
    "siglip": ("image_size",), "class_token": ("image_size",), "uncast_class_token": ("image_size",),
    "window_blocks": ("fullatt_block_indexes",), "ratio_encoder": ("mlp_ratio",),
    "deepstack": ("deepstack_visual_indexes",), "gated_patch_grid": ("image_size",),
    "tiled": ("image_size", "supported_aspect_ratios", "num_global_layers")})



def _vision(ctx: _Context, stated: _Stated, unknown: List[KeyPath]) -> None:
    """Map ``vision_config`` to the ``vision`` field."""
    family = ctx.family
    config = stated.value
    if not isinstance(config, Mapping):
        ctx.refuse(stated.path, "import.not-a-mapping",
                   f"vision_config must be an object, got {_json_type(config)}")
        return
    if family.tower is None:
        ctx.refuse(stated.path, "import.unsupported",
                   f"model_type {ctx.type_name!r} has no vision tower rule, so its vision_config cannot be "
                   "priced; import the language model's config alone")
        return
    tower = {key: _Stated(value, stated.path + (key,)) for key, value in config.items()}
    fields = _Fields(ctx.issues)
    for key, item in list(tower.items()):
        _apply_tower_key(ctx, tower, fields, key, item, unknown)
    _apply_tower_defaults(ctx, tower, fields, stated)
    TOWER_RULES[family.tower](ctx, tower, fields)
    ctx.fields.put("vision", fields.values, "vision_config", stated.path)
    for name, origin in fields.origins.items():
        ctx.fields.origins[f"vision.{name}"] = origin
        ctx.fields.paths[f"vision.{name}"] = fields.paths[name]


def _apply_tower_key(ctx: _Context, tower: Dict[str, _Stated], fields: _Fields, key: str, item: _Stated,
                     unknown: List[KeyPath]) -> None:
    """Run the rule of one ``vision_config`` key (or list it in *unknown*)."""
    family = ctx.family
    if key in family.vision_ignored:
        return
    rule = family.vision_keys.get(key) or (_VISION_RULES.get(key) if _reads_tower(family, key) else None)
    if rule is None:
        if key not in VISION_IGNORED:
            unknown.append(item.path)
        return
    if _refuse_non_finite(ctx, item):
        del tower[key]
        return
    if rule.transform == "rule" and key not in _TOWER_KEYS.get(family.tower, ()):
        if item.value is not None:
            ctx.refuse(item.path, "import.unsupported",
                       f"{_dotted(item.path)} is read only by another family's tower ({rule.source}); remove it")
        return
    if rule.transform in ("copy", "both"):
        for name in rule.fields:
            fields.put(name.removeprefix("vision."), item.value, item.origin, item.path)
    else:
        TRANSFORMS[rule.transform](rule, item, ctx)


def _apply_tower_defaults(ctx: _Context, tower: Mapping[str, _Stated], fields: _Fields, stated: _Stated) -> None:
    """The tower defaults for keys ``vision_config`` leaves out, then the family's top-level keys (or their
    defaults) that set a tower field. A default whose key the tower rule computes from (``image_size``, read by
    :func:`_patch_positions`) is left to that rule: it is not the field's value."""
    family = ctx.family
    for key, value in family.vision_defaults.items():
        rule = family.vision_keys.get(key) or _VISION_RULES[key]
        if (key in tower and tower[key].value is not None) or rule.transform == "rule":
            continue
        computed = ""
        if isinstance(value, Expression):
            value, computed = value.evaluate(fields.values), value.text
        default = _Stated(value, stated.path + (key,), default=True, computed=computed)
        for name in rule.fields:
            fields.put(name.removeprefix("vision."), default.value, default.origin, stated.path)
    for key, rule in family.keys.items():  # a top-level key of the family that sets a tower field, or its default
        item = ctx.keys.get(key)
        if item is None and key in family.defaults:
            item = _Stated(family.defaults[key], (key,), default=True)
        if item is not None and rule.fields and rule.fields[0].startswith("vision."):
            for name in rule.fields:
                fields.put(name.removeprefix("vision."), item.value, item.origin, item.path)


# ---- the import ----------------------------------------------------------------------

# The nestings, read at the top level only: a text_config inside text_config is a key no row reads.
_TOP_LEVEL_ONLY = frozenset(rule.key for rule in KEYS if rule.transform == "nested")


@dataclass(frozen=True)
class ImportedSpec:
    """A config mapped to a spec.

    Attributes:
        spec: The spec, validated by the model IR.
        data: ``spec.to_dict()``: the mapping a spec file states, in schema order.
        unknown: The config keys neither mapped nor ignored (only with ``allow_unknown``).
        origins: Each spec field (``vision.`` fields dotted) to where its
            value came from, as a message names it (``n_embd``, ``--name``).
        paths: Each spec field to the config key it came from (``()`` for
            one the modelling code fixes, a default or ``--name``).
    """

    spec: ModelSpec
    data: Mapping[str, Any]
    unknown: Tuple[KeyPath, ...]
    origins: Mapping[str, str]
    paths: Mapping[str, KeyPath]

    def source(self, path: Sequence[Any]) -> Tuple[KeyPath, str]:
        """Where the spec field at *path* (``("vision", "hidden_size")``) came from.

        Returns:
            ``(config key path, note)``: the key (``()`` when no config key
            gave it) and, when the field came from a key of another name,
            `` (from <origin>)`` to append to a message about the field.
        """
        return _source(self.origins, self.paths, path)


def _source(origins: Mapping[str, str], paths: Mapping[str, KeyPath], path: Sequence[Any]) -> Tuple[KeyPath, str]:
    """The config key a spec field came from and the note naming it (see :meth:`ImportedSpec.source`)."""
    field_name = ".".join(str(part) for part in path[:2] if isinstance(part, str))
    top = str(path[0]) if path else ""
    origin = origins.get(field_name) or origins.get(top)
    key_path = paths.get(field_name) or paths.get(top) or ()
    note = f" (from {origin})" if origin and origin != top and origin != field_name else ""
    return key_path, note


def _merge(config: Mapping[str, Any], issues: List[ImportIssue], top_level: frozenset = frozenset(),
           either: frozenset = frozenset(),
           text_level: frozenset = frozenset()) -> Tuple[Dict[str, _Stated], List[_Stated], List[KeyPath]]:
    """The top-level and text_config keys as one mapping, the model types stated (top level first), and the
    nestings stated inside text_config (keys no row reads there); a text_config key of *top_level* (the
    family's ``top_level``: the wrapper decides it) is left out, as is its ``architectures`` (transformers builds
    the wrapper's class from the top-level config; a full to_dict save states null there), one of *either* (its ``either_level``)
    stated at both levels is the level that says true, when one does, and a top-level key of *text_level* (its
    ``text_level``: the text model decides it) is left out when the config has a text_config."""
    text = config.get("text_config")
    keys = {key: _Stated(value, (key,)) for key, value in config.items()
            if key != "text_config" and not (key in text_level and isinstance(text, Mapping))}
    types = [keys["model_type"]] if "model_type" in keys else []
    if text is None:
        return keys, types, []
    if not isinstance(text, Mapping):
        issues.append(ImportIssue(("text_config",), "import.not-a-mapping",
                                  f"text_config must be an object, got {_json_type(text)}"))
        return keys, types, []
    misplaced: List[KeyPath] = []
    for key, value in text.items():
        if key == "model_type":
            types.append(_Stated(value, ("text_config", key)))
            continue
        if key in _TOP_LEVEL_ONLY:
            misplaced.append(("text_config", key))
            continue
        if key in top_level or key == "architectures":
            continue  # the wrapper's class is built from the top-level config; a text_config's names no built class
        if key in either and key in keys:
            if value is True and keys[key].value is not True:
                keys[key] = _Stated(value, ("text_config", key))
            continue
        if key in keys and not _same(keys[key].value, value):
            issues.append(ImportIssue(("text_config", key), "import.both-levels",
                                      f"{key} is {_show(keys[key].value)} at the top level but {_show(value)} in "
                                      f"text_config; state it once"))
        keys.setdefault(key, _Stated(value, ("text_config", key)))
    return keys, types, misplaced


def _priced_by(name: Any, profiles: OpProfiles) -> Optional[OpProfile]:
    """The op profile whose ``model_types`` lists *name*; ``None`` when none does (or *name* is not a string)."""
    if not isinstance(name, str):
        return None
    try:
        return profiles.for_model_type(name)
    except ModelSpecError:
        return None


def _remote_code(keys: Mapping[str, _Stated]) -> str:
    """The class a config's ``auto_map`` loads from the checkpoint's own code (``""`` for none), as named in a
    message."""
    stated = keys.get("auto_map")
    classes = stated.value if stated is not None and isinstance(stated.value, Mapping) else {}
    for name in ("AutoModelForCausalLM", "AutoModel", "AutoConfig"):
        if isinstance(classes.get(name), str):
            return f"auto_map {name}: {classes[name]}"
    return "auto_map" if stated is not None else ""


def _pick(keys: Mapping[str, _Stated], types: Sequence[_Stated], profiles: OpProfiles, arch: Optional[str],
          issues: List[ImportIssue]) -> Optional[OpProfile]:
    """The family's op profile: the one that prices the model type, or *arch*.

    A text_config model type must be a text model of the top-level one (the
    same profile); under *arch*, one no profile prices is taken as arch's.
    """
    if not types:
        remote = _remote_code(keys)
        if remote:
            message = (f"the config states no model_type and its modelling code is the checkpoint's own ({remote}), "
                       "so no op profile can be picked or cite that code; modelspec imports the model types whose "
                       "modelling code ships with transformers")
        else:
            message = ("the config states no model_type, so no op profile can be picked; state the Hugging Face "
                       "model_type")
        issues.append(ImportIssue((), "import.no-model-type", message))
        return None
    if arch is None:
        profile = _pick_by_type(types[0], keys, profiles, issues)
    else:
        profile = _pick_by_arch(types, profiles, arch, issues)
    if profile is None:
        return None
    for stated in types[1:]:
        other = _priced_by(stated.value, profiles)
        if stated.value in profile.family.text_model_types:
            continue  # a multimodal family whose text model is another family's (mistral3's mistral)
        if other is not profile and (arch is None or other is not None):
            issues.append(ImportIssue(stated.path, "import.both-levels",
                                      f"text_config's model_type {_show(stated.value)} is not a text model of "
                                      f"{_show(types[0].value)}"))
            return None
    other = _other_model(keys, types) or _task_head(keys, profile)
    if other is not None:
        issues.append(other)
        return None
    return profile


def _headless(keys: Mapping[str, _Stated], counts: Optional[ParameterCounts]) -> Optional[ImportIssue]:
    """The refusal of a config whose ``architectures`` names a headless base model (``LlamaModel``, not
    ``GPT2LMHeadModel``) while the profile's head holds parameters: transformers builds no ``lm_head`` (nor its
    bias) for it, so the count would hold tensors the checkpoint has not. A tied head without a bias holds none
    (bart-large's ``BartModel``), and imports as the generative model's count. ``None`` when no such class is
    named, or the spec's *counts* cannot be made (check names why)."""
    stated = keys.get("architectures")
    if stated is None or not isinstance(stated.value, list) or counts is None or not counts.head:
        return None
    named = [name for name in stated.value
             if isinstance(name, str) and name.endswith("Model") and not name.endswith(("LMHeadModel", "AutoModel"))]
    if not named:
        return None
    head = counts.head
    return ImportIssue(stated.path, "import.unsupported",
                       f"architectures names {named[0]}, a headless base model: transformers builds it without the "
                       f"output head the op profile prices ({head:,} parameters here); name the generative class "
                       "(or leave architectures out) for that model's count")


#: The endings of transformers' task-head class names (``LlamaForSequenceClassification``, ``T5EncoderModel``):
#: a class that swaps the language-model head the op profiles inventory (``lm_head``, a masked-LM head) for a
#: classifier (``score``, ``qa_outputs``, RoBERTa's ``classifier`` and ``pooler``) or drops a stack.
TASK_HEADS = ("ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering", "ForMultipleChoice",
              "EncoderModel")


def _task_head(keys: Mapping[str, _Stated], profile: OpProfile) -> Optional[ImportIssue]:
    """The refusal of a config whose ``architectures`` names a task-head class (:data:`TASK_HEADS`; for an
    encoder-decoder family, its ``ForCausalLM`` class too: ``BartForCausalLM`` is the decoder alone), whose tensors
    are not the generative model's a profile prices; ``None`` when it names none."""
    stated = keys.get("architectures")
    if stated is None or not isinstance(stated.value, list):
        return None
    heads = TASK_HEADS + (("ForCausalLM",) if profile.family.attention == "encoder_decoder" else ())
    for class_name in stated.value:
        if isinstance(class_name, str) and class_name.endswith(heads):
            return ImportIssue(stated.path, "import.unsupported",
                               f"architectures names {class_name}, a task head (transformers builds it with a "
                               "classifier, or without a stack, in place of the language-model head); the op "
                               "profiles price the generative model's tensors only, so name its class (or leave "
                               "architectures out) for that model's count")
    return None


def _other_model(keys: Mapping[str, _Stated], types: Sequence[_Stated]) -> Optional[ImportIssue]:
    """The refusal of a config whose ``architectures`` names a transformers class of another model type than the
    one it states, which transformers implements (``None`` when it names none such).

    transformers builds a config as its model type's own class whatever ``architectures`` says (the Auto classes
    pick by the config's class), so the two keys name two models, and the weights are of one of them: refuse
    rather than price either. A model type transformers does not know is read by ``--arch`` (Kimi K2's).
    """
    known = transformers_types()
    stated = keys.get("architectures")
    if not known.implements(types[0].value) or stated is None or not isinstance(stated.value, list):
        return None
    for class_name in stated.value:
        owners = known.types_of(class_name)
        if owners and not any(model_type.value in owners for model_type in types):
            builds = " or ".join(known.classes[types[0].value]) or "no class"
            return ImportIssue(stated.path, "import.architectures",
                               f"architectures names {class_name}, transformers {known.version}'s class of "
                               f"model_type {' and '.join(map(_show, owners))}, but model_type is "
                               f"{_show(types[0].value)}, which transformers builds as its own class ({builds}) "
                               "whatever architectures says; the config names two models, so correct the one "
                               "its weights are not")
    return None


def _pick_by_type(stated: _Stated, keys: Mapping[str, _Stated], profiles: OpProfiles,
                  issues: List[ImportIssue]) -> Optional[OpProfile]:
    """The profile of the model type *stated*; ``None`` after recording that none prices it."""
    if not isinstance(stated.value, str):
        issues.append(ImportIssue(stated.path, "import.value",
                                  f"model_type must be a string naming the Hugging Face model type, got "
                                  f"{_json_type(stated.value)}"))
        return None
    profile = _priced_by(stated.value, profiles)
    if profile is not None and profile.family is None:
        issues.append(ImportIssue(stated.path, "import.unknown-model-type",
                                  f"op profile {profile.arch!r} prices model_type {_show(stated.value)} but has no "
                                  "import section, so no config is imported as it; add one (README: Add a family)"))
        return None
    if profile is not None:
        return profile
    issues.append(_unpriced(stated, keys, profiles))
    return None


def _unpriced(stated: _Stated, keys: Mapping[str, _Stated], profiles: OpProfiles) -> ImportIssue:
    """The refusal of a model type no profile prices: transformers implements it natively (a profile can be
    drafted), or only the checkpoint's own code does (its auto_map, or a model type transformers does not know)."""
    name = _show(stated.value)
    missing = "".join(f"; its {_dotted(keys[key].path)} is {_show(keys[key].value)}: {rule.source}"
                      for key, rule in _RULES.items() if rule.transform == "require" and key in keys
                      and keys[key].value is not None and not _same(keys[key].value, rule.expect))
    known = transformers_types()
    if known.implements(stated.value):
        return ImportIssue(stated.path, "import.unknown-model-type",
                           f"no op profile prices model_type {name}{missing}; transformers {known.version} "
                           f"implements {stated.value} natively; draft a profile: modelspec reference --draft "
                           f"{stated.value} config.json")
    remote = _remote_code(keys)
    loads = f", and the config loads the checkpoint's own modelling code ({remote})" if remote else ""
    return ImportIssue(stated.path, "import.remote-code",
                       f"no op profile prices model_type {name}{loads}; transformers {known.version} does not "
                       f"know {name}: only the hub repository's own code implements it; modelspec prices what "
                       f"transformers implements{_read_as(keys, profiles)}")


def _read_as(keys: Mapping[str, _Stated], profiles: OpProfiles) -> str:
    """For a model type of the checkpoint's own (Kimi K2's ``kimi_k2``): the ``--arch`` that reads it as the
    priced model type of a transformers class its ``architectures`` names, else what ``--arch`` is for."""
    stated = keys.get("architectures")
    for class_name in stated.value if stated is not None and isinstance(stated.value, list) else ():
        for model_type in transformers_types().types_of(class_name):
            profile = _priced_by(model_type, profiles)
            if profile is not None and profile.family is not None:
                return (f"; its architectures names {class_name}, transformers' class of model_type "
                        f"{_show(model_type)}: import it as that family with --arch {profile.arch}")
    return ("; a model of a priced family under a model_type of its own is imported with --arch and that "
            "family's op profile")


def _pick_by_arch(types: Sequence[_Stated], profiles: OpProfiles, arch: str,
                  issues: List[ImportIssue]) -> Optional[OpProfile]:
    """The profile *arch*, for a model type no other profile prices.

    ``--arch`` reads a config whose model type no profile lists (a
    fine-tune's own name) as arch's family; a model type another profile
    prices is refused naming both, since arch's layer rules and fixed facts
    would then override what the model's own modelling code does.
    """
    try:
        profile = profiles.get(arch)
    except ModelSpecError as error:
        issues.append(ImportIssue((), "import.unknown-model-type", str(error)))
        return None
    for stated in types:
        other = _priced_by(stated.value, profiles)
        if other is not None and other.arch != arch:
            issues.append(ImportIssue(stated.path, "import.arch",
                                      f"model_type {_show(stated.value)} is priced by op profile {other.arch!r}, not "
                                      f"by --arch {arch!r}; leave out --arch, which is for a model type no op "
                                      "profile lists"))
            return None
    if profile.family is None:
        issues.append(ImportIssue((), "import.arch",
                                  f"op profile {arch!r} lists no model type the importer has rules for "
                                  f"({', '.join(profile.model_types) or 'none'}), so a config cannot be read as its "
                                  "family; pick a language model's op profile"))
        return None
    return profile


def _put_name(ctx: _Context, name: Optional[str], fallback: str) -> None:
    """Set ``name``: *name* (``--name``), else the last part of ``_name_or_path``, lower-cased, else *fallback*."""
    stated = ctx.keys.get("_name_or_path")
    if name is not None:
        ctx.fields.put("name", name, "--name", ())
    elif stated is not None and isinstance(stated.value, str) and stated.value.strip("/"):
        ctx.fields.put("name", stated.value.rstrip("/").rsplit("/", 1)[-1].lower(), stated.origin, stated.path)
    else:
        ctx.fields.put("name", fallback, "the config file's name", ())


def import_config(config: Any, profiles: OpProfiles, *, fallback_name: str, name: Optional[str] = None,
                  arch: Optional[str] = None, allow_unknown: bool = False) -> ImportedSpec:
    """Map a Hugging Face config to a spec.

    Args:
        config: The parsed ``config.json``.
        profiles: The op profiles; the profile is the one whose
            ``model_types`` lists the config's ``model_type``.
        fallback_name: The spec's name when neither *name* nor the config's
            ``_name_or_path`` gives one (the command passes the file's stem).
        name: The spec's name, overriding ``_name_or_path`` (an empty one
            is refused by the model IR, not replaced).
        arch: The op profile for a config whose ``model_type`` no profile
            lists (a fine-tune's own name): the config is read as the family
            of arch's model types. Refused (``import.arch``) when another
            profile prices the model type.
        allow_unknown: Return unknown keys in :attr:`ImportedSpec.unknown`
            instead of refusing them.

    Returns:
        The spec, its mapping and the unknown keys. A spec whose import
        dropped keys (*allow_unknown*) or read a model type as *arch*'s
        family states them in ``import_gaps`` and no ``parameters``: its
        count would vouch for what was not read.

    Raises:
        ConfigImportError: With every issue found: unknown keys (unless
            *allow_unknown*), keys at both levels, conflicts, an unknown
            model type or *arch*, an *arch* the model type contradicts, a
            structure no profile prices, or the model IR's refusals of the
            mapped spec (each at the key it came from).
    """
    if not isinstance(config, Mapping):
        raise ConfigImportError([ImportIssue((), "import.not-a-mapping",
                                             f"a config is a JSON object, got {_json_type(config)}")])
    issues: List[ImportIssue] = []
    keys, types, misplaced = _merge(config, issues)
    picked: List[ImportIssue] = []
    profile = _pick(keys, types, profiles, arch, picked)
    if profile is None:
        raise ConfigImportError(picked)  # the one reason; a key's problems mean nothing without a family
    if profile.family.top_level or profile.family.either_level or profile.family.text_level:
        issues = []
        keys, types, misplaced = _merge(config, issues, frozenset(profile.family.top_level),
                                        frozenset(profile.family.either_level), frozenset(profile.family.text_level))
    issues.extend(picked)
    keys = _unnest(keys, profile.family.nested_keys)
    ctx = _Context(keys, profile)
    ctx.issues.extend(issues)
    unknown = _apply_keys(ctx) + misplaced
    _refuse_default_tower(ctx)
    _refuse_unrunnable(ctx)
    _stack(ctx)
    _put_name(ctx, name, fallback_name)
    ctx.fields.put("arch", ctx.profile.arch, "model_type" if arch is None else "--arch", ctx.path("model_type"))
    if unknown and not allow_unknown:
        ctx.issues.extend(ImportIssue(path, "import.unknown-key", _unknown_message(ctx, path)) for path in unknown)
    if ctx.issues:
        raise ConfigImportError(ctx.issues)
    gaps = _gaps(unknown, types, profile)
    if gaps:
        ctx.fields.put("import_gaps", gaps, "--allow-unknown" if unknown else "--arch", ())
    spec = _spec(ctx)
    counts = _counted(spec, profiles)
    if counts is not None and not gaps:
        spec = replace(spec, parameters=StatedParameters(**counted_parts(spec, counts)))
    headless = _headless(keys, counts)
    if headless is not None:
        raise ConfigImportError([headless])
    return ImportedSpec(spec, spec.to_dict(), tuple(unknown), MappingProxyType(dict(ctx.fields.origins)),
                        MappingProxyType(dict(ctx.fields.paths)))


def _unnest(keys: Dict[str, _Stated], nested: frozenset) -> Dict[str, _Stated]:
    """*keys* with each object of *nested* replaced by its keys, each read by its dotted path (DBRX's
    ``attn_config: {kv_n_heads: 8}`` as ``attn_config.kv_n_heads``), so that every key inside it is mapped,
    listed or unknown like a top-level one; a nested key that is not an object stays as stated. The nested
    object's own PreTrainedConfig keys (its ``model_type``, ``architectures``, ``id2label``, ...: a sub-config is a
    PreTrainedConfig, and ``to_dict`` writes them) name and size nothing, and are left out."""
    flat: Dict[str, _Stated] = {}
    for key, stated in keys.items():
        if key in nested and isinstance(stated.value, Mapping):
            flat.update((f"{key}.{inner}", _Stated(value, stated.path + (inner,)))
                        for inner, value in stated.value.items() if inner not in IGNORED and inner not in _EVERY_CLASS)
        else:
            flat[key] = stated
    return flat


def _gaps(unknown: Sequence[KeyPath], types: Sequence[_Stated], profile: OpProfile) -> Dict[str, Any]:
    """The spec's ``import_gaps``: the keys dropped, and a model type read as *profile*'s family (``--arch``);
    ``{}`` when the import vouches for everything it read."""
    gaps: Dict[str, Any] = {}
    if unknown:
        gaps["dropped"] = [_dotted(path) for path in unknown]
    foreign = [stated.value for stated in types if isinstance(stated.value, str)
               and stated.value not in profile.model_types and stated.value not in profile.family.text_model_types]
    if foreign:
        gaps["model_type"] = foreign[0]
    return gaps


def _apply_keys(ctx: _Context) -> List[KeyPath]:
    """Set the family's fixed facts, run every stated key's rule, then the defaults; return the unknown keys.

    A key the family lists as ignored or unread is skipped; a read key whose
    value holds a NaN or an infinity is refused and dropped, so no rule reads it.
    An ``equals`` key runs last, stated or defaulted (:func:`_compares`): the field it is held to may be set by a
    key the config leaves out (BART's ``decoder_ffn_dim: 2048`` beside the default ``encoder_ffn_dim`` 4096).
    """
    family = ctx.family
    unknown: List[KeyPath] = []
    for field_name, value in family.fixed.items():
        ctx.fields.fix(field_name, value, ctx.type_name)
    stated_keys = sorted(ctx.keys.items(), key=lambda item: _is_flag(family, item[0]))
    for key, stated in stated_keys:
        if not _compares(family, key):
            _apply_stated(ctx, key, stated, unknown)
    _apply_defaults(ctx)
    for key, stated in stated_keys:
        if _compares(family, key):
            _apply_stated(ctx, key, stated, unknown)
    return unknown


def _compares(family: Family, key: str) -> bool:
    """Whether *key*'s rule only compares its value with a field other keys set (``equals``)."""
    rule = family.keys.get(key) or _RULES.get(key)
    return rule is not None and rule.transform == EQUALS


def _refuse_default_tower(ctx: _Context) -> None:
    """Refuse a config of a family with a vision tower that leaves ``vision_config`` out: its config class then
    builds its default tower (``Qwen2VLConfig.__post_init__``: ``Qwen2VLVisionConfig()`` when it is None, hundreds
    of millions of parameters), which nothing in the config states. A text model's type builds none: the profile's
    model types after its first (the first is the wrapper's, whose config class holds ``vision_config``:
    ``Gemma3Config``'s ``gemma3`` against ``Gemma3TextConfig``'s ``gemma3_text``), and the family's
    ``text_model_types``."""
    stated_type = ctx.value("model_type", ctx.type_name)
    text_only = stated_type in ctx.family.text_model_types or (stated_type in ctx.profile.model_types
                                                               and stated_type != ctx.type_name)
    if ctx.family.tower is None or "vision_config" in ctx.keys or text_only:
        return
    ctx.refuse(("vision_config",), "import.missing",
               f"model_type {str(stated_type)!r} builds a vision tower, and for a config that leaves vision_config out "
               "transformers builds its config class's default tower, which nothing here states; state "
               "vision_config as the checkpoint's config.json does")


def _refuse_unrunnable(ctx: _Context) -> None:
    """Refuse a config holding every value of one of the family's :class:`~pipeline.pricing.families.Unrunnable`
    combinations (as stated, else as defaulted), naming each key and the code whose forward fails: its
    parameters could be counted, but a cost model would plan for a model that cannot run."""
    for rule in ctx.family.unrunnable:
        values = {key: _as_read(ctx, key) for key in rule.when}
        if not all(_holds(values[key], condition) for key, condition in rule.when.items()):
            continue
        stated = [key for key in rule.when if ctx.value(key) is not None]
        told = ", ".join(f"{key} {_show(values[key])}{'' if key in stated else ' (its default)'}"
                         for key in rule.when)
        ctx.refuse(ctx.path(stated[0]) if stated else (), "import.unsupported",
                   f"{told}: {rule.source}; transformers builds such a model but cannot run it, so it is not "
                   "imported")


def _holds(value: Any, condition: Any) -> bool:
    """Whether a config *value* meets an :class:`~pipeline.pricing.families.Unrunnable` condition."""
    if isinstance(condition, NotIn):
        return not any(_same(value, other) for other in condition.values)
    return _same(value, condition)


def _applies(ctx: _Context, rule: KeyRule) -> bool:
    """Whether *rule* is in force: it names no ``if_any``, or one of those keys holds its value, as the config states
    it or, left out, as the family defaults it."""
    if not rule.if_any:
        return True
    return any(_same(_as_read(ctx, key), value) for key, value in rule.if_any.items())


def _as_read(ctx: _Context, key: str) -> Any:
    """*key*'s value as its config class reads it: as stated; a stated null of ``null_false`` as false; else the
    family's default (``None`` without one)."""
    stated = ctx.keys.get(key)
    if stated is not None and stated.value is None and key in ctx.family.null_false:
        return False
    return ctx.value(key, ctx.family.defaults.get(key))


def _is_flag(family: Family, key: str) -> bool:
    """Whether *key* is one of *family*'s ``flag``, ``equals`` or ``named`` keys, which read the fields the others
    set."""
    rule = family.keys.get(key)
    return rule is not None and (rule.transform in (FLAG, EQUALS) or bool(rule.named))


def _apply_stated(ctx: _Context, key: str, stated: _Stated, unknown: List[KeyPath]) -> None:
    """Run the rule of one stated key (or list it in *unknown*)."""
    family = ctx.family
    if key in family.unread or key in family.ignored or key == family.pattern_key or key in family.pattern_lists:
        return  # the pattern keys are read by the pattern layout
    rule = family.keys.get(key) or _RULES.get(key)
    if rule is not None and key not in family.keys and not _reads(family, key):
        unknown.append(stated.path)
        del ctx.keys[key]  # a key its config class does not read: no layer rule reads it either
        return
    if rule is None:
        if key not in IGNORED and key not in family.variant_keys:  # a variant's key is read by the stack
            unknown.append(stated.path)
        return
    if _refuse_non_finite(ctx, stated):
        del ctx.keys[key]
    elif not _applies(ctx, rule):
        return  # read, but the keys its if_any names say the modelling code does not use it
    elif rule.fields[:1] and rule.fields[0].startswith("vision."):
        if "vision_config" not in ctx.keys and stated.value is not None:
            ctx.refuse(stated.path, "import.unsupported",
                       f"{_dotted(stated.path)} sets the vision tower's {rule.fields[0]}, but the config states "
                       "no vision_config; state the tower, or leave the key out")
    elif key == "vision_config":
        _vision(ctx, stated, unknown)
    else:
        TRANSFORMS[rule.transform](rule, stated, ctx)


def _apply_defaults(ctx: _Context) -> None:
    """Run the rule of each family default whose key the config leaves out, the ``equals`` ones last
    (:func:`_compares`)."""
    family = ctx.family
    for key, value in sorted(family.defaults.items(), key=lambda item: _compares(family, item[0])):
        rule = family.keys.get(key) or _RULES.get(key)
        if rule is None or not _applies(ctx, rule):
            continue  # a variant's key (its default is read by the stack: _variant_defaults), or a rule not in force
        if ctx.value(key) is not None or _alias_stated(ctx, key, rule) or _null_selects_variant(family, ctx, key):
            continue
        if (key in family.null_unset or key in family.null_false) and key in ctx.keys:
            continue  # stated null: computed as a spec without the field (null_unset), or false (null_false)
        computed = ""
        if isinstance(value, Expression):
            value, computed = value.evaluate(ctx.fields.values), value.text
            if value is None:
                continue  # a field it reads is missing or wrong; the model IR names that field
        if rule.fields[:1] and rule.fields[0].startswith("vision."):
            continue  # a tower field's default: the tower's mapping applies it (_vision)
        TRANSFORMS[rule.transform](rule, _Stated(value, (key,), default=True, computed=computed), ctx)


def _alias_stated(ctx: _Context, key: str, rule: KeyRule) -> bool:
    """Whether another stated key of the family sets the field *key*'s default would (Qwen3-MoE's
    ``num_local_experts``, its attribute_map alias of ``num_experts``): the class's default is then not used."""
    if rule.transform != COPY:
        return False  # a flag's default is no alias's (GPTBigCode's multi_query true makes the KV heads 1)
    for other, stated in ctx.keys.items():
        other_rule = ctx.family.keys.get(other) or _RULES.get(other)
        if (other != key and stated.value is not None and other_rule is not None and rule.fields
                and other_rule.fields[:1] == rule.fields[:1] and other_rule.transform == COPY
                and _applies(ctx, other_rule)):
            return True
    return False


def _null_selects_variant(family: Family, ctx: _Context, key: str) -> bool:
    """Whether *key* is stated as null and a variant of *family* is chosen by that null (DeepSeek-V2's
    ``q_lora_rank: null``, whose class default is 1536): the null is the model's value, not a key left out."""
    stated = ctx.keys.get(key)
    return stated is not None and stated.value is None and any(
        key in variant.when and variant.when[key].holds(None) for variant in family.variants)


# The shared rows every config class reads: PreTrainedConfig's own fields and what the import itself reads.
_EVERY_CLASS = frozenset({"model_type", "_name_or_path", "torch_dtype", "dtype", "is_encoder_decoder", "text_config",
                          "vision_config"})


def _reads(family: Family, key: str) -> bool:
    """Whether a shared mapped *key* is one *family*'s config class reads (all of them for a family with no
    ``shared`` list): a key its class neither declares nor its code reads maps nothing, whatever its name."""
    return (family.shared is None or key in family.shared or key in family.code_reads or key in _EVERY_CLASS
            or key in family.defaults or key in family.variant_keys)


def _reads_tower(family: Family, key: str) -> bool:
    """Whether a shared mapped tower *key* is one *family*'s tower config class reads (as :func:`_reads`)."""
    return family.vision_shared is None or key in family.vision_shared or key in family.vision_defaults


def _non_finite(value: Any) -> bool:
    """Whether a JSON value is or holds a NaN or an infinity (which a config's reader keeps as floats)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, Mapping):
        return any(_non_finite(item) for item in value.values())
    if isinstance(value, list):
        return any(_non_finite(item) for item in value)
    return False


def _refuse_non_finite(ctx: _Context, stated: _Stated) -> bool:
    """Refuse a read key whose value holds a NaN or an infinity (a nesting's keys are checked key by key)."""
    if isinstance(stated.value, Mapping) or not _non_finite(stated.value):
        return False
    ctx.refuse(stated.path, "import.value",
               f"{_dotted(stated.path)} is {_show(stated.value)}; a key the importer reads states finite numbers")
    return True


def _known_keys(family: Family, tower: bool) -> List[str]:
    """Every key a config of *family* may state (in its ``vision_config``, with *tower*), for a did-you-mean."""
    if tower:
        return sorted(set(_VISION_RULES) | set(VISION_IGNORED) | set(family.vision_keys) | set(family.vision_ignored))
    return sorted(set(_RULES) | set(IGNORED) | set(family.keys) | set(family.ignored) | set(family.unread))


def _unknown_message(ctx: _Context, path: KeyPath) -> str:
    """What to do about the unknown key *path*: a near miss, or state it in the family's YAML, or --allow-unknown."""
    if path[:1] == ("text_config",) and path[-1] in _TOP_LEVEL_ONLY:
        return (f"{_dotted(path)} is nested inside text_config, where the importer does not read it; state it at the "
                "top level, or pass --allow-unknown to import without it")
    tower = path[0] == "vision_config"
    if path[-1] in (_VISION_RULES if tower else _RULES):
        section = "vision_shared" if tower else "shared"
        return (f"{_dotted(path)} is not a key model_type {ctx.type_name!r}'s config class reads (import.{section} "
                f"in op_profiles/{ctx.profile.arch}.yaml does not list it), so it sizes nothing there; if the "
                "modelling code reads it all the same, list it under import.code_reads with the line that does, "
                "else under import.unread with why, or pass --allow-unknown to import without it")
    close = difflib.get_close_matches(path[-1], _known_keys(ctx.family, tower), n=1)
    hint = f"did you mean {close[0]!r}? If not, " if close else ""
    section, mapped = ("vision_ignored", "vision_keys") if tower else ("ignored", "keys")
    return (f"{_dotted(path)} is a key the importer does not know for model_type {ctx.type_name!r}; {hint}list it "
            f"under import.{section} in op_profiles/{ctx.profile.arch}.yaml with why it changes nothing a cost model "
            f"prices (or map it under import.{mapped}), or pass --allow-unknown to import without it")


def _counted(spec: ModelSpec, profiles: OpProfiles) -> Optional[ParameterCounts]:
    """The imported spec's parameter counts, or ``None`` when its stack or its count cannot be resolved (``check``
    says why). A spec imported without gaps states them, every priced part it has (``active`` for a MoE model,
    ``mtp`` for MTP layers, ``vision`` for a tower), so a later edit that changes the model's size or drops a part
    fails ``check``."""
    try:
        stack = spec_layer_stack(spec, profiles)
        tower = tower_layer_stack(spec.vision, profiles) if spec.vision else None
        return count_parameters(spec, profiles.get(stack.arch), stack, tower)
    except (ModelSpecError, Unpriced):
        return None


def _spec(ctx: _Context) -> ModelSpec:
    """Build the spec, turning the model IR's refusals into issues at the keys the fields came from."""
    try:
        return ModelSpec.from_dict(ctx.fields.values)
    except ModelSpecError as error:
        issues = []
        for issue in error.issues:
            path, note = _source(ctx.fields.origins, ctx.fields.paths, issue.path)
            issues.append(ImportIssue(path, issue.code, issue.message + note))
        raise ConfigImportError(issues) from None
