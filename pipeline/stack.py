"""The layer stack: which kind of layer sits where, as data.

A model's stack is a tuple of :class:`~pipeline.model.LayerGroup`, runs of
consecutive layers of one kind of its op profile, body first and MTP layers
last. A spec may state it in ``layers``; otherwise :func:`derive_layers` builds
it from fields every config already carries, by these rules (the reference
cost model's, which its per-family hooks used to encode):

- ``layer_types`` names each body layer's kind, when the profile has those
  kinds (Qwen3.5 alternates ``linear_attention`` and ``full_attention``);
- a profile with ``dense`` and ``moe`` kinds runs ``first_k_dense_replace``
  dense layers, then MoE layers (DeepSeek-V3: 3 dense, 58 MoE);
- a profile with ``encoder`` and ``decoder`` kinds runs half of each (t5);
- any other model runs the profile's ``default`` kind throughout;
- the ``mtp_depth`` MTP layers repeat the kind of the last body layer.

A vision tower's stack is the same, of kinds of the ``vision`` profile: one
group of its default kind unless the tower states ``layers``.

:func:`resolve_layers` checks a stack against its profile and returns a
:class:`LayerStack` with every kind resolved. What the reference only logged
(a ``layer_types`` name the profile lacks; a ``layer_types`` list longer than
the body) is returned as warnings on the stack, for the report to show. The
rules that need the resolved stack to judge a spec costable live here too: a
kind with a dense feed-forward needs ``intermediate_size``, a MoE kind needs
``num_experts`` (whose width the model IR then checks), a linear kind needs
the ``linear_*`` dimensions, a sliding kind needs ``sliding_window``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.model import (LINEAR_FIELDS, LayerGroup, ModelSpec, ModelSpecError, OpCounts, SpecIssue,
                            VisionSpec, refuse)
from pipeline.op_profiles import VISION_ARCH, LayerKind, OpProfile, OpProfiles, load_op_profiles
from pipeline.problems import FieldPath, dotted

CODES: Dict[str, str] = {
    "stack.layer-types-short": "layer_types lists fewer layers than num_hidden_layers.",
    "stack.layer-types-long": "layer_types lists more layers than num_hidden_layers; the rest are ignored.",
    "stack.layer-types-unknown": "layer_types names kinds the op profile lacks; the stack is derived by the "
                                 "profile's other rules instead.",
    "stack.unknown-kind": "A group of layers names a kind the op profile lacks.",
    "stack.odd-encoder-decoder": "An encoder-decoder stack derived from num_hidden_layers needs an even count.",
    "stack.no-default": "The op profile has several kinds and no default, and no rule gives the body a kind.",
    "stack.mtp-kind": "The MTP layers have no body layer whose kind they could repeat.",
    "stack.linear-dims": "The stack has linear-attention layers but the spec declares no linear_* dimensions.",
    "stack.dense-without-intermediate": "The stack has a layer kind with a dense feed-forward but the spec "
                                        "declares no intermediate_size.",
    "stack.sliding-without-window": "The stack has a sliding-attention kind but the spec declares no "
                                    "sliding_window.",
    "stack.mla-without-ranks": "The stack has a multi-head latent attention kind but the spec lacks one of "
                               "kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim.",
    "stack.field-without-kind": "The spec declares a field (experts, MLA ranks) that no kind of its stack reads, "
                                "so a cost model would silently ignore it.",
    "stack.moe-without-experts": "The stack has a layer kind with a routed-expert feed-forward but the spec "
                                 "declares no num_experts.",
}

# Each spec field of a gated-DeltaNet layer, and the dimension it sets.
_LINEAR_DIMS = tuple(zip(LINEAR_FIELDS, ("num_key_heads", "key_head_dim", "num_value_heads", "value_head_dim",
                                         "conv_kernel_dim")))


@dataclass(frozen=True)
class LinearAttentionDims:
    """The dimensions a gated-DeltaNet (linear attention) layer is priced on, as Qwen3-Next and Qwen3.5 state them.

    Attributes:
        num_key_heads: Query/key heads (``linear_num_key_heads``).
        key_head_dim: Width of one key head, channels (``linear_key_head_dim``).
        num_value_heads: Value heads (``linear_num_value_heads``).
        value_head_dim: Width of one value head, channels (``linear_value_head_dim``).
        conv_kernel_dim: Taps of the short causal convolution (``linear_conv_kernel_dim``).
    """

    num_key_heads: int
    key_head_dim: int
    num_value_heads: int
    value_head_dim: int
    conv_kernel_dim: int

    @classmethod
    def from_fields(cls, values: Mapping[str, Any]) -> Optional["LinearAttentionDims"]:
        """Build the dimensions from the ``linear_*`` entries of *values*, or ``None`` if none is set.

        Raises:
            ModelSpecError: ``spec.linear-partial`` if some are set but not
                all, ``spec.not-positive`` for one that is not a positive integer.
        """
        found = {name: values.get(name) for name in LINEAR_FIELDS}
        if all(value is None for value in found.values()):
            return None
        missing = [name for name, value in found.items() if value is None]
        if missing:
            raise refuse((missing[0],), "spec.linear-partial",
                         f"linear attention is missing {missing}; declare all of {list(LINEAR_FIELDS)}")
        bad = [name for name, value in found.items()
               if isinstance(value, bool) or not isinstance(value, int) or value <= 0]
        if bad:
            raise ModelSpecError([SpecIssue((name,), "spec.not-positive",
                                            f"{name} must be a positive whole number, got {found[name]!r}")
                                  for name in bad])
        return cls(**{dim: found[name] for name, dim in _LINEAR_DIMS})


@dataclass(frozen=True)
class StackGroup:
    """A group of a resolved stack: ``count`` consecutive layers of one resolved kind.

    Attributes:
        kind: The kind as the profile defines it (with a spec's declared ops applied).
        count: Number of layers, positive.
        mtp: Whether these are MTP layers after the body.
    """

    kind: LayerKind
    count: int
    mtp: bool = False


@dataclass(frozen=True)
class LayerStack:
    """A model's (or a tower's) layer stack, checked against its profile.

    Attributes:
        arch: The profile the kinds come from.
        groups: The groups in model order, body first and MTP layers last.
        linear: The linear-attention dimensions, when a kind of the stack is linear.
        warnings: What the stack's derivation ignored (a ``layer_types`` name
            the profile lacks, layer_types beyond the body); not part of equality.
    """

    arch: str
    groups: Tuple[StackGroup, ...]
    linear: Optional[LinearAttentionDims] = None
    warnings: Tuple[SpecIssue, ...] = field(default=(), compare=False)

    def kinds(self) -> Tuple[LayerKind, ...]:
        """The kind of every layer, in model order (``len`` is the layer count, MTP included)."""
        return tuple(group.kind for group in self.groups for _ in range(group.count))

    def distinct_kinds(self) -> Tuple[LayerKind, ...]:
        """Each kind the stack uses once, in order of first use."""
        seen: Dict[str, LayerKind] = {}
        for group in self.groups:
            seen.setdefault(group.kind.name, group.kind)
        return tuple(seen.values())

    def to_layers(self) -> Tuple[LayerGroup, ...]:
        """The stack in its serialised form, the groups of ``ModelSpec.layers``."""
        return tuple(LayerGroup(group.kind.name, group.count, group.mtp) for group in self.groups)


def _run_lengths(kinds: Sequence[str]) -> Tuple[LayerGroup, ...]:
    """Group a sequence of kind names into runs: ``[a, a, b]`` is ``(a 2, b 1)``."""
    runs: List[List[Any]] = []
    for kind in kinds:
        if runs and runs[-1][0] == kind:
            runs[-1][1] += 1
        else:
            runs.append([kind, 1])
    return tuple(LayerGroup(kind, count) for kind, count in runs)


def _body_from_layer_types(profile: OpProfile, num_layers: int, layer_types: Sequence[str],
                           warnings: List[SpecIssue]) -> Optional[Tuple[LayerGroup, ...]]:
    """The body ``layer_types`` names, or ``None`` (with a warning) if the profile lacks its kinds.

    Raises:
        ModelSpecError: ``stack.layer-types-short`` if it lists fewer layers than the body.
    """
    if len(layer_types) < num_layers:
        raise refuse(("layer_types",), "stack.layer-types-short",
                     f"layer_types lists {len(layer_types)} layers, but num_hidden_layers is {num_layers}; "
                     "list one type per body layer")
    if len(layer_types) > num_layers:
        warnings.append(SpecIssue(("layer_types",), "stack.layer-types-long",
                                  f"layer_types lists {len(layer_types)} layers, but num_hidden_layers is "
                                  f"{num_layers}; the last {len(layer_types) - num_layers} are ignored"))
    kinds = list(layer_types[:num_layers])
    unknown = sorted(set(kinds) - set(profile.layer_kinds))
    if unknown:
        warnings.append(SpecIssue(("layer_types",), "stack.layer-types-unknown",
                                  f"layer_types names {unknown}, which op profile {profile.arch!r} does not have "
                                  f"(its kinds are {sorted(profile.layer_kinds)}); the stack is derived from "
                                  "the profile's other rules instead"))
        return None
    return _run_lengths(kinds)


def _structural_body(profile: OpProfile, num_layers: int, first_k_dense: int) -> Tuple[LayerGroup, ...]:
    """The body the profile's kinds imply: dense then MoE, two halves, or the default kind throughout.

    Raises:
        ModelSpecError: ``stack.odd-encoder-decoder`` or ``stack.no-default``.
    """
    names = set(profile.layer_kinds)
    if {"dense", "moe"} <= names:
        dense = min(max(first_k_dense, 0), num_layers)
        return tuple(group for group in (LayerGroup("dense", dense), LayerGroup("moe", num_layers - dense))
                     if group.count)
    if {"encoder", "decoder"} <= names:
        if num_layers % 2:
            raise refuse(("num_hidden_layers",), "stack.odd-encoder-decoder",
                         f"an encoder-decoder stack splits num_hidden_layers in halves, but it is {num_layers}; "
                         "state the halves in layers")
        half = num_layers // 2
        return (LayerGroup("encoder", half), LayerGroup("decoder", half)) if half else ()
    if profile.default is None:
        raise refuse(("layers",), "stack.no-default",
                     f"op profile {profile.arch!r} has several kinds {sorted(names)} and names no default; "
                     "state the stack in layers")
    return (LayerGroup(profile.default, num_layers),) if num_layers else ()


def derive_layers(profile: OpProfile, num_layers: int, mtp_depth: int = 0,
                  layer_types: Optional[Sequence[str]] = None, first_k_dense: int = 0,
                  warnings: Optional[List[SpecIssue]] = None) -> Tuple[LayerGroup, ...]:
    """Build the stack a config implies when it does not state one (the rules of the module docstring).

    Args:
        profile: The model's op profile, which names the kinds.
        num_layers: Body layers (``num_hidden_layers``).
        mtp_depth: MTP layers after the body.
        layer_types: Per-layer kind names, as a hybrid config lists them.
        first_k_dense: Leading dense layers of a dense-then-MoE family (``first_k_dense_replace``).
        warnings: A list that receives what the derivation ignored.

    Returns:
        The groups in model order, body first and MTP layers last.

    Raises:
        ModelSpecError: If ``layer_types`` lists fewer layers than the body,
            or no rule gives the body or the MTP layers a kind.
    """
    warnings = [] if warnings is None else warnings
    body = _body_from_layer_types(profile, num_layers, layer_types, warnings) if layer_types else None
    if body is None:
        body = _structural_body(profile, num_layers, first_k_dense)
    if not mtp_depth:
        return body
    last = body[-1].kind if body else profile.default
    if last is None:
        raise refuse(("mtp_depth",), "stack.mtp-kind",
                     f"op profile {profile.arch!r} gives the MTP layers no kind: there is no body layer and no "
                     "default; state the stack in layers")
    return body + (LayerGroup(last, mtp_depth, mtp=True),)


def resolve_kinds(profile: OpProfile, ops: Optional[Mapping[str, OpCounts]] = None) -> Dict[str, LayerKind]:
    """Return the profile's kinds by name, a spec's declared *ops* replacing their counts.

    Raises:
        ModelSpecError: ``stack.ops-kind`` if *ops* names a kind the profile lacks.
    """
    counts = profile.op_counts(ops)
    return {name: LayerKind(name, counts[name], kind.attention, kind.ffn)
            for name, kind in profile.layer_kinds.items()}


def resolve_layers(arch: str, layers: Sequence[LayerGroup], ops: Optional[Mapping[str, OpCounts]] = None,
                   linear: Optional[LinearAttentionDims] = None, profiles: Optional[OpProfiles] = None,
                   where: FieldPath = ("layers",)) -> LayerStack:
    """Check a stack against its profile and resolve each group's kind.

    Args:
        arch: The op profile.
        layers: The groups, in model order.
        ops: Declared op counts that replace the profile's.
        linear: The model's linear-attention dimensions, if it declares them.
        profiles: The profiles to resolve against (default: the bundled ones).
        where: The field path of *layers*, for messages.

    Returns:
        The stack with every kind resolved; ``linear`` kept only when a kind is linear.

    Raises:
        ModelSpecError: ``stack.unknown-kind`` for every group naming a kind
            the profile lacks, ``stack.linear-dims`` when a linear kind has no
            dimensions, ``stack.unknown-arch``, ``stack.ops-kind``.
    """
    profiles = profiles or load_op_profiles()
    kinds = resolve_kinds(profiles.get(arch), ops)
    issues = [SpecIssue(where + (index, "kind"), "stack.unknown-kind",
                        f"{dotted(where + (index,))} names kind {group.kind!r}, but op profile {arch!r} has "
                        f"{sorted(kinds)}")
              for index, group in enumerate(layers) if group.kind not in kinds]
    if issues:
        raise ModelSpecError(issues)
    groups = tuple(StackGroup(kinds[group.kind], group.count, group.mtp) for group in layers)
    needs_linear = any(group.kind.attention == "linear" for group in groups)
    if needs_linear and linear is None:
        raise refuse(where, "stack.linear-dims",
                     f"op profile {arch!r} prices linear-attention layers, but the model declares none of "
                     f"{', '.join(LINEAR_FIELDS)}")
    return LayerStack(arch, groups, linear if needs_linear else None)


def spec_arch(spec: ModelSpec, profiles: Optional[OpProfiles] = None) -> str:
    """Return the spec's arch: stated, or inferred from its name by the profiles' ``match`` patterns.

    Raises:
        ModelSpecError: ``stack.no-arch`` or ``stack.ambiguous-arch``.
    """
    return spec.arch or (profiles or load_op_profiles()).infer_arch(spec.name)


def spec_layer_stack(spec: ModelSpec, profiles: Optional[OpProfiles] = None) -> LayerStack:
    """Return a spec's stack, as it states it or as its fields imply, checked against its profile.

    Raises:
        ModelSpecError: If the spec's arch cannot be found or inferred, its
            stack does not fit its profile, or a kind of the stack needs a
            width the spec does not declare (``stack.dense-without-intermediate``,
            ``stack.moe-without-experts``, ``stack.sliding-without-window``).
    """
    profiles = profiles or load_op_profiles()
    arch = spec_arch(spec, profiles)
    linear = LinearAttentionDims.from_fields({name: getattr(spec, name) for name in LINEAR_FIELDS})
    warnings: List[SpecIssue] = []
    layers = spec.layers
    if layers is None:
        layers = derive_layers(profiles.get(arch), spec.num_hidden_layers, spec.mtp_depth or 0,
                               layer_types=spec.layer_types, first_k_dense=spec.first_k_dense_replace or 0,
                               warnings=warnings)
    stack = resolve_layers(arch, layers, spec.ops, linear, profiles)
    _check_widths(spec, stack)
    return LayerStack(stack.arch, stack.groups, stack.linear, tuple(warnings))


@dataclass(frozen=True)
class _FlavourFields:
    """Spec fields that a layer flavour needs, and that mean nothing without it.

    Attributes:
        attribute: ``"attention"`` or ``"ffn"``, the :class:`LayerKind` attribute.
        flavour: Its value, e.g. ``"moe"``.
        required: Fields a stack with the flavour cannot be priced without.
        missing_code: The code when one of them is absent.
        remedy: What to declare, for the message.
        meaningful: Fields that state something only a kind of this flavour uses.
    """

    attribute: str
    flavour: str
    required: Tuple[str, ...]
    missing_code: str
    remedy: str
    meaningful: Tuple[str, ...]


# What each flavour needs, and what only it reads (the cost model prices a dense
# feed-forward at intermediate_size, routed experts at num_experts and their
# width, MLA at its ranks, a sliding window at sliding_window).
_FLAVOUR_FIELDS = (
    _FlavourFields("ffn", "dense", ("intermediate_size",), "stack.dense-without-intermediate",
                   "the dense width", ()),
    _FlavourFields("ffn", "moe", ("num_experts",), "stack.moe-without-experts", "the number of routed experts",
                   ("num_experts", "num_experts_per_tok", "moe_intermediate_size")),
    _FlavourFields("attention", "mla", ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"),
                   "stack.mla-without-ranks", "the rank or per-head width of the latent attention",
                   ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")),
    _FlavourFields("attention", "sliding", ("sliding_window",), "stack.sliding-without-window",
                   "the window in tokens", ()),
)

_FLAVOUR_WORDS = {"dense": "a dense feed-forward", "moe": "routed experts", "mla": "multi-head latent attention",
                  "sliding": "sliding-window attention"}


def _check_widths(spec: ModelSpec, stack: LayerStack) -> None:
    """Refuse a stack whose kinds need a field the spec does not declare, or a field no kind of it reads.

    Raises:
        ModelSpecError: ``stack.dense-without-intermediate``, ``stack.moe-without-experts``,
            ``stack.mla-without-ranks``, ``stack.sliding-without-window``, ``stack.field-without-kind``.
    """
    kinds = stack.distinct_kinds()
    issues = []
    for rule in _FLAVOUR_FIELDS:
        having = [kind.name for kind in kinds if getattr(kind, rule.attribute) == rule.flavour]
        words = _FLAVOUR_WORDS[rule.flavour]
        if having:
            issues += [SpecIssue((name,), rule.missing_code,
                                 f"the stack has layers of kind {having} with {words}, but {name} is not "
                                 f"declared; declare {rule.remedy}")
                       for name in rule.required if getattr(spec, name) is None]
        else:
            issues += [SpecIssue((name,), "stack.field-without-kind",
                                 f"{name} is declared, but no layer of the stack has {words} (its kinds are "
                                 f"{[kind.name for kind in kinds]}); state an arch or layers whose kinds have it, "
                                 f"or leave {name} out")
                       for name in rule.meaningful if getattr(spec, name) is not None]
    if issues:
        raise ModelSpecError(issues)


def tower_layer_stack(vision: VisionSpec, profiles: Optional[OpProfiles] = None) -> LayerStack:
    """Return a vision tower's stack: as it states it, or one group of the vision profile's default kind.

    Raises:
        ModelSpecError: If the tower names a kind the vision profile lacks, or
            there is no vision profile.
    """
    profiles = profiles or load_op_profiles()
    layers = vision.layers
    if layers is None:
        layers = derive_layers(profiles.get(VISION_ARCH), vision.num_hidden_layers)
    return resolve_layers(VISION_ARCH, layers, profiles=profiles, where=("vision", "layers"))
