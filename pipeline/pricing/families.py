"""A family's import rules, as data: the ``import`` section of its op profile.

Everything ``modelspec import`` knows about one architecture family that its
``config.json`` does not say lives in the family's op profile,
``op_profiles/<arch>.yaml``, under ``import``, beside the op counts it is
read with (schema: ``$defs/family`` of ``schemas/op-profile.schema.json``)::

    import:
      source: the modelling code and config class these rules come from
      layout: {attention: window_layers, ffn: dense}  # how its layers are laid out
      fixed: {qk_norm: true, mlp_bias: false}          # facts its modelling code hard-codes
      defaults: {attention_bias: false}                # its config class's defaults for left-out keys
      keys:                                            # keys of its config class's own naming
        n_embd: {field: hidden_size, source: configuration_gpt2.py attribute_map}
      ignored: {logit_scale: a scalar multiply of the logits}   # read, but priced by no field
      unread: {attention_bias: the biases are hard-coded}       # not read by its config class at all
      shared: [hidden_size, rms_norm_eps]              # its class's keys the importer's shared tables read
      code_reads: {head_dim: getattr(config, "head_dim", ...)}  # undeclared, read by its modelling code
      top_level: {tie_word_embeddings: the wrapper's model ties}  # read at the top level only, not in text_config
      either_level: {tie_word_embeddings: a true text_config value is forwarded}  # true when either level says true
      text_level: {tie_word_embeddings: the wrapper's causal LM ties by the text config}  # text_config's only
      variants:                                        # kinds a key's value swaps in (T5 v1.1's gated MLP)
        - {when: {feed_forward_proj: {match: "^gated-"}}, kinds: {encoder: gated_encoder}, source: ...}

A family is one mapping, not a code path: a new family whose layers fit the
existing layouts (the names :mod:`pipeline.importer.config_json` defines in
``ATTENTION_RULES``, ``FFN_RULES`` and ``TOWER_RULES``, which the schema
enumerates) is one YAML file. This module turns a checked section into a
frozen :class:`Family` and names what the schema cannot check
(:func:`family_problems`): that ``fixed`` and ``keys`` name spec fields,
that a default's key is one a rule reads, that an expression names spec
fields. It does not read configs; :mod:`pipeline.importer.config_json` does.

Why in the op profile rather than a file of its own: ``model_types`` already
picks the profile, so a family's layout and the layer kinds it lays out are
then checked against each other in one file, and adding a family stays one
file (a profile without an ``import`` section prices specs, but no config is
imported as it).
"""

from __future__ import annotations

import ast
import functools
import re
import typing
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.spec.model import ModelSpec, VisionSpec
from pipeline.spec.problems import FieldPath

#: What a config key becomes, by transform name (see ``pipeline.importer.config_json.TRANSFORMS``).
COPY, BOTH, REQUIRE, REFUSE_MATCHING, FLAG, EQUALS = "copy", "both", "require", "refuse_matching", "flag", "equals"
MAX_ITEMS = "max_items"

_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Name, ast.Load,
                  ast.Constant)


@dataclass(frozen=True)
class KeyRule:
    """How one Hugging Face key becomes spec fields.

    Attributes:
        key: The config key.
        fields: The spec fields it sets (``vision.`` fields for a tower key).
        transform: The name of its transform in ``pipeline.importer.config_json.TRANSFORMS``.
        source: Where the rule comes from (a config class's ``attribute_map``,
            a modelling class); empty for a key copied under its own name.
        expect: For ``require``: the only value the modelling the profiles
            price accepts; for ``refuse_matching``: the regular expression a
            refused value matches; for ``flag``: ``(if_true, if_false)``, the
            value (a whole number or an :class:`Expression`) the field takes
            for each value of a true-or-false key (GPTBigCode's ``multi_query``:
            one key/value head, or one per query head); for ``equals``: the spec
            field the key's value must equal (OPT's ``word_embed_proj_dim``:
            ``hidden_size``, or the model has projections no kind prices); for
            ``max_items``: the most items a list value may hold (LLaVA's
            ``vision_feature_layer``: a list of more layers widens the
            projector's linear_1, which no tower field states).
        if_any: Other config keys and values: the rule runs only when one of
            them holds that value (as stated, else as the family defaults it),
            and the key is read but sets nothing otherwise (Falcon's
            ``num_kv_heads`` counts only with ``new_decoder_architecture`` or
            without ``multi_query``); empty, the rule always runs.
        named: For ``copy`` and ``both``: string values the config class
            computes a number from, each with that number (a whole number or an
            :class:`Expression`, read after the other keys): Mamba's
            ``time_step_rank: "auto"`` is ``(hidden_size + 15) // 16``
            (``MambaConfig.__post_init__``: ``math.ceil(hidden_size / 16)``).
    """

    key: str
    fields: Tuple[str, ...]
    transform: str
    source: str = ""
    expect: Any = None
    if_any: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    named: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class Expression:
    """A default computed from spec fields already mapped: ``4 * hidden_size``.

    Attributes:
        text: The expression as the profile writes it: whole numbers, spec
            field names, ``+ - * //`` and parentheses.
        names: The spec fields it reads.
    """

    text: str
    names: Tuple[str, ...]

    def evaluate(self, fields: Mapping[str, Any]) -> Optional[int]:
        """The value over *fields*; ``None`` when a field it reads is not a whole number there."""
        values = {name: fields.get(name) for name in self.names}
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values.values()):
            return None
        return _evaluate(ast.parse(self.text, mode="eval").body, values)


def _evaluate(node: ast.AST, values: Mapping[str, int]) -> int:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    left, right = _evaluate(node.left, values), _evaluate(node.right, values)
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, ast.Mult):
        return left * right
    return left // right if right else 0


def compile_expression(text: str) -> Expression:
    """Parse *text* as an :class:`Expression`.

    Raises:
        ValueError: For text that is not ``+ - * //`` over names and whole numbers.
    """
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError(f"{text!r} is not an expression; write whole numbers and spec fields joined by "
                         "+ - * // and parentheses") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES) or (isinstance(node, ast.Constant) and (
                isinstance(node.value, bool) or not isinstance(node.value, int))):
            raise ValueError(f"{text!r} may use only whole numbers, spec fields, + - * // and parentheses")
    names = tuple(sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}))
    return Expression(text, names)


@dataclass(frozen=True)
class Condition:
    """What a stated config key must hold for a :class:`Variant` to apply.

    Attributes:
        match: A regular expression a string value matches (``^gated-``), or ``None``.
        equals: The JSON value it equals (``true``, ``null``) when :attr:`match` is ``None``.
        stated: Whether any value but null meets it (``{stated: true}``), whatever :attr:`equals` says.
    """

    match: Optional[str]
    equals: Any = None
    stated: bool = False

    def holds(self, value: Any) -> bool:
        """Whether a stated *value* meets the condition (``1`` is not ``true``; with :attr:`stated`, any value but
        null: NemotronH's ``moe_latent_size``)."""
        if self.stated:
            return value is not None
        if self.match is not None:
            return isinstance(value, str) and re.search(self.match, value) is not None
        return type(value) is type(self.equals) and value == self.equals


@dataclass(frozen=True)
class Variant:
    """Layer kinds a family's modelling code swaps in when a config key says so.

    T5's ``feed_forward_proj: gated-gelu`` (or ``is_gated_act: true``)
    builds ``T5DenseGatedActDense`` in every block, whose counts are another
    kind's; DeepSeek-V3's ``q_lora_rank: null`` projects the query with one
    matrix. The importer renames each body layer's kind by :attr:`kinds` when
    a stated key of :attr:`when` meets its condition, and refuses a config
    whose stated keys disagree.

    Attributes:
        source: The modelling code that builds the other layers.
        when: The config keys, each with the condition that selects the variant.
        kinds: ``{kind: the kind it becomes}``.
    """

    source: str
    when: Mapping[str, Condition]
    kinds: Mapping[str, str]


@dataclass(frozen=True)
class NotIn:
    """An :class:`Unrunnable` condition: the key holds none of :attr:`values` (JSON values, ``None`` for null)."""

    values: Tuple[Any, ...]


@dataclass(frozen=True)
class Unrunnable:
    """Config values its modelling code builds a model of but cannot run: a config holding all of them is refused
    by name rather than priced (Falcon's ``new_decoder_architecture: true`` without ``parallel_attn``: the
    decoder layer's forward reads ``ln_attn``, which it never built).

    Attributes:
        when: The config keys, each with the value it holds (as stated, else as the family defaults it), or a
            :class:`NotIn` of the values it does not hold.
        source: The modelling code whose forward fails there.
    """

    when: Mapping[str, Any]
    source: str


@dataclass(frozen=True)
class Family:
    """What an architecture family's modelling code decides that its config does not say.

    Attributes:
        source: The modelling code and config class the rules come from.
        attention: How each body layer's attention is chosen, a key of
            ``pipeline.importer.config_json.ATTENTION_RULES``.
        ffn: How each body layer's feed-forward is chosen, a key of ``FFN_RULES``.
        tower: How a vision tower's blocks are chosen, a key of ``TOWER_RULES``;
            ``None`` when the family has no tower.
        fixed: Spec facts the modelling code hard-codes; a config key that
            says otherwise is refused.
        defaults: The config class's defaults for config keys a config may
            leave out (or state as null), applied as if stated: a JSON value,
            or an :class:`Expression` over the spec fields mapped so far.
        keys: The family's own key rules, by key: its config class's names
            for spec fields, and the values it refuses; they take precedence
            over the importer's shared table.
        ignored: Keys its config class reads that change nothing a cost model
            prices, each with why.
        unread: Keys its config class does not read, each with why; a config
            states them only as leftovers, and a shared rule for them is not run.
        vision_keys: Its tower config's own key rules, by key (``vision.``
            fields), before the importer's shared tower table.
        vision_ignored: Its tower config's keys that change nothing a cost
            model prices, each with why.
        vision_defaults: Its tower config class's defaults for ``vision_config``
            keys a config leaves out, as :attr:`defaults` (an expression reads
            the tower's fields).
        pattern_key: For the ``pattern`` layout: the config key whose
            characters name each layer's kind (``hybrid_override_pattern``).
        pattern_kinds: The layer kind each of its characters names.
        pattern_lists: Config keys that list each layer's type by name instead
            (NemotronH's ``layers_block_type``), read before the pattern key.
        pattern_names: The layer kind each name of such a list names.
        text_model_types: The model types its ``text_config`` may state that
            another profile prices (Mistral 3's text model is a ``mistral``):
            read with this family's rules all the same.
        top_level: Keys the multimodal wrapper's config decides, each with
            why: read at the top level (or from :attr:`defaults`) only, and
            ignored where ``text_config`` states them (Gemma 3's and Mistral
            3's ``tie_word_embeddings``: the wrapper's model ties its head by
            its own config).
        either_level: Keys the wrapper's config sets true when either level
            states true, each with why: a ``text_config`` true and a top-level
            false (or the reverse) is true, not a conflict (Qwen2-VL's
            ``tie_word_embeddings``: ``Qwen2VLConfig.__post_init__`` forwards a
            true ``text_config`` value to the outer config).
        text_level: Keys the text model's config decides, each with why: read from ``text_config`` (or
            :attr:`defaults`) only, and ignored where the top level of a config with a ``text_config`` states them
            (Llama 4's ``tie_word_embeddings``: ``Llama4ForConditionalGeneration`` holds a ``Llama4ForCausalLM``
            built from the text config, which ties its own head).
        variants: The kinds its code swaps in by a key's value (:class:`Variant`).
        shared: Its config class's keys that the importer's shared tables map
            or ignore; ``None`` when the section lists none (every shared key
            is then read). A shared mapped key outside :attr:`shared`,
            :attr:`code_reads` and its own sections is one its class does not
            read, so a config stating it is refused as unknown.
        code_reads: Keys its class does not declare that its modelling code
            reads all the same (``getattr(config, "head_dim", ...)``), each
            with the line that does.
        vision_shared: The same as :attr:`shared` for its tower's config class.
        unrunnable: The combinations of config values its code builds but cannot run (:class:`Unrunnable`).
        null_false: True-or-false keys whose stated null its config class keeps and its code reads as false
            (Falcon's ``multi_query``: ``not self.multi_query``), each with why: a stated null is false, not the
            default.
    """

    source: str
    attention: str
    ffn: str
    tower: Optional[str]
    fixed: Mapping[str, Any]
    defaults: Mapping[str, Any]
    keys: Mapping[str, KeyRule]
    ignored: Mapping[str, str]
    unread: Mapping[str, str]
    vision_keys: Mapping[str, KeyRule]
    vision_ignored: Mapping[str, str]
    text_model_types: Tuple[str, ...] = ()
    vision_defaults: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    pattern_key: str = ""
    pattern_kinds: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    pattern_lists: Tuple[str, ...] = ()
    pattern_names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    top_level: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    either_level: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    text_level: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    variants: Tuple[Variant, ...] = ()
    shared: Optional[frozenset] = None
    code_reads: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    null_unset: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    null_false: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    vision_shared: Optional[frozenset] = None
    unrunnable: Tuple[Unrunnable, ...] = ()

    @property
    def nested_keys(self) -> frozenset:
        """The top-level keys whose values the section reads key by key, by dotted paths (DBRX's ``attn_config``
        in ``attn_config.kv_n_heads``): every name of :attr:`keys`, :attr:`ignored`, :attr:`unread` and
        :attr:`defaults` before its first dot."""
        names = set(self.keys) | set(self.ignored) | set(self.unread) | set(self.defaults)
        return frozenset(name.split(".", 1)[0] for name in names if "." in name)

    @property
    def variant_keys(self) -> frozenset:
        """The config keys a variant reads."""
        return frozenset(key for variant in self.variants for key in variant.when)


def _variant(data: Mapping[str, Any]) -> Variant:
    """A checked ``variants`` entry as a :class:`Variant`."""
    when = {key: Condition(entry.get("match"), entry.get("equals"), entry.get("stated", False))
            for key, entry in data["when"].items()}
    return Variant(data["source"], MappingProxyType(when), MappingProxyType(dict(data["kinds"])))


def _key_rule(key: str, entry: Mapping[str, Any], prefix: str = "") -> KeyRule:
    """A checked ``keys`` entry as a :class:`KeyRule` (*prefix* ``vision.`` for a tower key's fields)."""
    source = entry["source"]
    if "require" in entry:
        return KeyRule(key, (), REQUIRE, source, entry["require"])
    if "refuse_matching" in entry:
        return KeyRule(key, (), REFUSE_MATCHING, source, entry["refuse_matching"])
    if "equals" in entry:
        return KeyRule(key, (), EQUALS, source, entry["equals"])
    if MAX_ITEMS in entry:
        return KeyRule(key, (), MAX_ITEMS, source, entry[MAX_ITEMS])
    fields = tuple(prefix + name for name in _fields(entry))
    if_any = MappingProxyType(dict(entry.get("if_any", {})))
    if "if_true" in entry:
        return KeyRule(key, fields, FLAG, source, (_value(entry["if_true"]), _value(entry["if_false"])), if_any)
    named = MappingProxyType({value: _value(number) for value, number in entry.get("named", {}).items()})
    return KeyRule(key, fields, COPY if len(fields) == 1 else BOTH, source, if_any=if_any, named=named)


def _value(value: Any) -> Any:
    """A checked value or ``{expression: ...}`` (compiled)."""
    return compile_expression(value["expression"]) if isinstance(value, dict) else value


def _fields(entry: Mapping[str, Any]) -> Tuple[str, ...]:
    """The spec fields a ``keys`` entry sets: its ``field``, one name or a list of them."""
    named = entry.get("field", ())
    return (named,) if isinstance(named, str) else tuple(named)


def parse_family(data: Mapping[str, Any]) -> Family:
    """Build a :class:`Family` from a schema-checked ``import`` section with no :func:`family_problems`."""
    layout = data["layout"]
    defaults = _defaults(data.get("defaults", {}))
    return Family(
        source=data["source"],
        attention=layout["attention"],
        ffn=layout["ffn"],
        tower=layout.get("tower"),
        fixed=MappingProxyType(dict(data.get("fixed", {}))),
        defaults=MappingProxyType(defaults),
        keys=MappingProxyType({key: _key_rule(key, entry) for key, entry in data.get("keys", {}).items()}),
        ignored=MappingProxyType(dict(data.get("ignored", {}))),
        unread=MappingProxyType(dict(data.get("unread", {}))),
        vision_keys=MappingProxyType({key: _key_rule(key, entry, "vision.")
                                      for key, entry in data.get("vision_keys", {}).items()}),
        vision_ignored=MappingProxyType(dict(data.get("vision_ignored", {}))),
        text_model_types=tuple(data.get("text_model_types", ())),
        vision_defaults=MappingProxyType(_defaults(data.get("vision_defaults", {}))),
        pattern_key=data.get("pattern", {}).get("key", ""),
        pattern_kinds=MappingProxyType(dict(data.get("pattern", {}).get("kinds", {}))),
        pattern_lists=tuple(data.get("pattern", {}).get("list_keys", ())),
        pattern_names=MappingProxyType(dict(data.get("pattern", {}).get("names", {}))),
        top_level=MappingProxyType(dict(data.get("top_level", {}))),
        either_level=MappingProxyType(dict(data.get("either_level", {}))),
        text_level=MappingProxyType(dict(data.get("text_level", {}))),
        variants=tuple(_variant(entry) for entry in data.get("variants", ())),
        shared=frozenset(data["shared"]) if "shared" in data else None,
        code_reads=MappingProxyType(dict(data.get("code_reads", {}))),
        null_unset=MappingProxyType(dict(data.get("null_unset", {}))),
        null_false=MappingProxyType(dict(data.get("null_false", {}))),
        vision_shared=frozenset(data["vision_shared"]) if "vision_shared" in data else None,
        unrunnable=tuple(_unrunnable(entry) for entry in data.get("unrunnable", ())),
    )


def _unrunnable(data: Mapping[str, Any]) -> Unrunnable:
    """A checked ``unrunnable`` entry as an :class:`Unrunnable`."""
    when = {key: NotIn(tuple(value["not_in"])) if isinstance(value, dict) else value
            for key, value in data["when"].items()}
    return Unrunnable(MappingProxyType(when), data["source"])


def _defaults(data: Mapping[str, Any]) -> Dict[str, Any]:
    """A checked ``defaults`` mapping, each ``{expression: ...}`` compiled."""
    return {key: _value(value) for key, value in data.items()}


def family_problems(data: Mapping[str, Any], spec_fields: Mapping[str, type], shared_keys: Mapping[str, Any],
                    tower_fields: Mapping[str, type],
                    shared_tower_keys: Mapping[str, Any] = MappingProxyType({}),
                    kinds: Tuple[str, ...] = ()) -> List[Tuple[FieldPath, str]]:
    """What a schema-checked ``import`` section gets wrong that the schema cannot say.

    Args:
        data: The section.
        spec_fields: The model spec's fields, each with its type (``bool``,
            ``int``, ``str``, ...), for ``fixed`` and ``keys``.
        shared_keys: The keys the importer's shared table reads, for ``defaults``.
        tower_fields: The vision tower's fields, for ``vision_keys``.
        shared_tower_keys: The keys the importer's shared tower table reads, for ``vision_defaults``.
        kinds: The profile's layer kinds, which a variant renames from and to.

    Returns:
        ``(path under import, message)`` for each problem, in file order.
    """
    keys = data.get("keys", {})
    return [*_fixed_problems(data.get("fixed", {}), spec_fields),
            *_field_problems(keys, data.get("vision_keys", {}), spec_fields, tower_fields),
            *_mapped_twice(data),
            *_flag_problems(keys, spec_fields),
            *_variant_problems(data.get("variants", ()), kinds),
            *_unrunnable_problems(data),
            *[(("null_false", key), f"null_false names {key!r}, which is no true-or-false key of keys (if_true, "
                                    "if_false)")
              for key in data.get("null_false", {}) if "if_true" not in data.get("keys", {}).get(key, {})],
            *_default_problems("defaults", data.get("defaults", {}), {**shared_keys, **keys, **_variant_keys(data)},
                               spec_fields, "keys", "model spec"),
            *_default_problems("vision_defaults", data.get("vision_defaults", {}),
                               {**shared_tower_keys, **data.get("vision_keys", {})}, tower_fields, "vision_keys",
                               "vision tower")]


def _variant_keys(data: Mapping[str, Any]) -> Dict[str, Any]:
    """The config keys the section's variants read, which a default may give (GPT-NeoX's use_parallel_residual)."""
    return {key: None for variant in data.get("variants", ()) for key in variant["when"]}


def _fixed_problems(fixed: Mapping[str, Any], spec_fields: Mapping[str, type]) -> List[Tuple[FieldPath, str]]:
    """A ``fixed`` entry naming no spec field, or of the wrong type."""
    found: List[Tuple[FieldPath, str]] = []
    for name, value in fixed.items():
        kind = spec_fields.get(name)
        if kind is None:
            found.append((("fixed", name), f"fixed names {name!r}, which is no model spec field"))
        elif kind in (bool, int) and (type(value) is not kind):
            wanted = "true or false" if kind is bool else "a whole number"
            found.append((("fixed", name), f"fixed {name} must be {wanted}, not {value!r}"))
    return found


def _field_problems(keys: Mapping[str, Any], vision_keys: Mapping[str, Any], spec_fields: Mapping[str, type],
                    tower_fields: Mapping[str, type]) -> List[Tuple[FieldPath, str]]:
    """A ``keys`` or ``vision_keys`` entry mapping to a field its record does not have."""
    found: List[Tuple[FieldPath, str]] = []
    for key, entry in keys.items():
        if "equals" in entry and entry["equals"] not in spec_fields:
            found.append((("keys", key, "equals"), f"keys.{key} equals {entry['equals']!r}, which is no model spec field"))
        for name in _fields(entry):
            if name.startswith("vision.") and name.removeprefix("vision.") in tower_fields:
                continue  # a top-level key of the family that sets a tower field (Mistral 3's spatial_merge_size)
            if name not in spec_fields:
                found.append((("keys", key, "field"), f"keys.{key} maps to {name!r}, which is no model spec field"))
    for key, entry in vision_keys.items():
        for name in _fields(entry):
            if name not in tower_fields:
                found.append((("vision_keys", key, "field"),
                              f"vision_keys.{key} maps to {name!r}, which is no vision tower field"))
    return found


def _flag_problems(keys: Mapping[str, Any], spec_fields: Mapping[str, type]) -> List[Tuple[FieldPath, str]]:
    """A ``flag`` key's ``if_true`` or ``if_false`` expression (or a ``named`` value's) that is no expression over
    whole-number fields."""
    found: List[Tuple[FieldPath, str]] = []
    for key, entry in keys.items():
        branches = [((branch,), entry.get(branch)) for branch in ("if_true", "if_false")]
        branches += [(("named", name), value) for name, value in entry.get("named", {}).items()]
        for where, value in branches:
            if not isinstance(value, dict):
                continue
            branch = ".".join(where)
            try:
                expression = compile_expression(value["expression"])
            except ValueError as error:
                found.append((("keys", key, *where, "expression"), f"keys.{key}.{branch}: {error}"))
                continue
            unknown = [name for name in expression.names if spec_fields.get(name) is not int]
            if unknown:
                found.append((("keys", key, *where, "expression"),
                              f"keys.{key}.{branch}: {value['expression']!r} reads {', '.join(unknown)}, which is "
                              "no whole-number model spec field"))
    return found


def _mapped_twice(data: Mapping[str, Any]) -> List[Tuple[FieldPath, str]]:
    """A key both ignored (or unread) and mapped."""
    return [((section, key), f"{section}.{key} is also mapped under {mapped}; keep one")
            for section, mapped in (("ignored", "keys"), ("unread", "keys"), ("vision_ignored", "vision_keys"))
            for key in data.get(section, {}) if key in data.get(mapped, {})]


def _variant_problems(variants: Sequence[Mapping[str, Any]], kinds: Tuple[str, ...]) -> List[Tuple[FieldPath, str]]:
    """A variant renaming a kind the profile does not have, or matching with a bad regular expression."""
    found: List[Tuple[FieldPath, str]] = []
    for index, variant in enumerate(variants):
        for old, new in variant["kinds"].items():
            found += [(("variants", index, "kinds", old),
                       f"variants[{index}] names kind {name!r}, which is not one of the layer_kinds {sorted(kinds)}")
                      for name in (old, new) if name not in kinds]
        for key, condition in variant["when"].items():
            if "match" in condition:
                try:
                    re.compile(condition["match"])
                except re.error as error:
                    found.append((("variants", index, "when", key, "match"),
                                  f"variants[{index}].when.{key}.match is no regular expression: {error}"))
    return found


def _unrunnable_problems(data: Mapping[str, Any]) -> List[Tuple[FieldPath, str]]:
    """An ``unrunnable`` condition on a key the section names nowhere else (a misspelt key would never match), or
    on a key whose default is an expression (the condition compares values)."""
    named = {*data.get("keys", {}), *data.get("defaults", {}), *_variant_keys(data), *data.get("ignored", {}),
             *data.get("unread", {})}
    found: List[Tuple[FieldPath, str]] = []
    for index, entry in enumerate(data.get("unrunnable", ())):
        for key in entry["when"]:
            if key not in named:
                found.append((("unrunnable", index, "when", key),
                              f"unrunnable[{index}] reads {key!r}, which the section names nowhere else; name it "
                              "under keys, defaults, ignored or a variant first"))
            elif isinstance(data.get("defaults", {}).get(key), dict):
                found.append((("unrunnable", index, "when", key),
                              f"unrunnable[{index}] reads {key!r}, whose default is an expression; a condition "
                              "compares values"))
    return found


def _default_problems(section: str, defaults: Mapping[str, Any], read: Mapping[str, Any], fields: Mapping[str, type],
                      mapped: str, record: str) -> List[Tuple[FieldPath, str]]:
    """What a ``defaults`` (or ``vision_defaults``) section gets wrong: a key no rule reads, a bad expression."""
    found: List[Tuple[FieldPath, str]] = []
    for key, value in defaults.items():
        if key not in read:
            found.append(((section, key), f"{section} gives {key!r}, a key no rule reads; map it under {mapped} "
                                          "first"))
        if isinstance(value, dict):
            try:
                expression = compile_expression(value["expression"])
            except ValueError as error:
                found.append(((section, key, "expression"), f"{section}.{key}: {error}"))
                continue
            unknown = [name for name in expression.names if fields.get(name) is not int]
            if unknown:
                found.append(((section, key, "expression"),
                              f"{section}.{key}: {value['expression']!r} reads {', '.join(unknown)}, which is no "
                              f"whole-number {record} field"))
    return found


@functools.lru_cache(maxsize=None)
def spec_field_types(tower: bool = False) -> Mapping[str, type]:
    """The model spec's (with *tower*, the vision tower's) fields and their plain types (``Optional[int]`` is
    ``int``), for :func:`family_problems`; worked out once per process (``get_type_hints`` is slow, and every
    profile asks)."""
    types: Dict[str, type] = {}
    for name, hint in typing.get_type_hints(VisionSpec if tower else ModelSpec).items():
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)] or [hint]
        types[name] = args[0] if isinstance(args[0], type) else object
    return MappingProxyType(types)
