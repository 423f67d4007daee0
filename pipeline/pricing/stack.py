"""The layer stack: which kind of layer sits where, as data.

A model's stack is a tuple of :class:`~pipeline.spec.model.LayerGroup`, runs of
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
the body) is returned as warnings on the stack, for the report to show; when
the profile's other rules then refuse the body too, those warnings are raised
with the refusal, since they are its cause.

The rules that need the resolved stack to judge a spec costable live here
too, as tables. What each flavour needs and what only it reads: a kind with a
dense feed-forward needs ``intermediate_size``, a MoE kind ``num_experts``
(whose width the model IR then checks), a linear kind the ``linear_*``
dimensions, a sliding kind ``sliding_window``; and a field that states
something only a flavour reads (experts, shared experts, MLA ranks, a window,
DeltaNet dimensions) is refused on a stack without it, since a cost model
would ignore it without a word. What each kind's counts assume (its profile's
``assumes``): a spec that states otherwise, say a shared expert the counts
lack or ``qk_norm`` the counts were not read with, is refused unless it
declares its own ``ops`` for the kind. A vision tower gets the same rules,
for the fields a tower has.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from pipeline.spec.model import (LINEAR_FIELDS, SSM_FIELDS, LayerGroup, ModelSpec, ModelSpecError, OpCounts,
                            SpecIssue, VisionSpec, refuse)
from pipeline.pricing.op_profiles import (ABSENT_PRICED_AS, STATED, VISION_ARCH, Assumption, LayerKind, OpProfile,
                                  OpProfiles, load_op_profiles)
from pipeline.spec.problems import FieldPath, dotted, near_misses

CODES: Dict[str, str] = {
    "stack.layer-types-short": "layer_types lists fewer layers than num_hidden_layers.",
    "stack.layer-types-long": "layer_types lists more layers than num_hidden_layers; the rest are ignored.",
    "stack.layer-types-unknown": "layer_types names a kind the op profile lacks (reported once per name, at its "
                                 "first entry, with the closest kind); the stack is derived by the profile's "
                                 "other rules instead, and when they refuse the body too this comes with the "
                                 "refusal.",
    "stack.unknown-kind": "A group of layers names a kind the op profile lacks.",
    "stack.odd-encoder-decoder": "An encoder-decoder stack derived from num_hidden_layers needs an even count.",
    "stack.no-default": "The op profile has several kinds and no default, and no rule gives the body a kind.",
    "stack.mtp-kind": "The MTP layers have no body layer whose kind they could repeat.",
    "stack.linear-dims": "The stack has linear-attention layers but the spec declares no linear_* dimensions.",
    "stack.dense-without-intermediate": "The stack has a layer kind with a dense feed-forward but the spec "
                                        "declares no intermediate_size.",
    "stack.sliding-without-window": "The stack has a sliding-attention kind but the spec declares no "
                                    "sliding_window.",
    "stack.ssm-without-state": "The stack has a state-space (ssm) kind but the spec lacks ssm_state_size or "
                               "ssm_conv_kernel.",
    "stack.chunked-without-size": "The stack has a chunked-attention kind but the spec declares no "
                                  "attention_chunk_size.",
    "stack.mla-without-ranks": "The stack has a multi-head latent attention kind but the spec lacks one of "
                               "kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim.",
    "stack.field-without-kind": "The spec declares a field that no kind of its stack reads (routed or shared "
                                "experts, MLA ranks, a sliding window, linear_* dimensions), or "
                                "first_k_dense_replace for a profile without dense and moe kinds, so a cost model "
                                "would silently ignore it.",
    "stack.profile-assumes": "The spec states a value (or leaves out a field) that contradicts what the op "
                             "profile's counts for a kind of its stack assume (assumes: qk_norm, shared experts, "
                             "q_lora_rank, ...), so those counts do not describe its layers.",
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
    """The body ``layer_types`` names, or ``None`` (with a warning per unknown name) if the profile lacks its kinds.

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
    first_use: Dict[str, int] = {}
    for index, name in enumerate(kinds):
        if name not in profile.layer_kinds:
            first_use.setdefault(name, index)
    warnings.extend(_unknown_layer_type(profile, name, index) for name, index in first_use.items())
    return None if first_use else _run_lengths(kinds)


def _unknown_layer_type(profile: OpProfile, name: str, index: int) -> SpecIssue:
    """The warning for a ``layer_types`` name the profile lacks, at its first entry, with the closest kind."""
    close = near_misses(name, profile.layer_kinds)
    hint = f": did you mean {close[0]!r}? Its" if close else ". Its"
    return SpecIssue(("layer_types", index), "stack.layer-types-unknown",
                     f"layer_types[{index}] names {name!r}, which op profile {profile.arch!r} does not have{hint} "
                     f"kinds are {sorted(profile.layer_kinds)}; the stack is derived from the profile's other "
                     "rules instead")


#: The kinds of a profile whose body the dense-then-MoE rule splits by ``first_k_dense_replace``.
_DENSE_THEN_MOE = frozenset({"dense", "moe"})


def _structural_body(profile: OpProfile, num_layers: int, first_k_dense: int, where: FieldPath,
                     fix: str) -> Tuple[LayerGroup, ...]:
    """The body the profile's kinds imply: dense then MoE, two halves, or the default kind throughout.

    Raises:
        ModelSpecError: ``stack.odd-encoder-decoder``, or ``stack.no-default``
            at *where*, saying *fix*.
    """
    names = set(profile.layer_kinds)
    if _DENSE_THEN_MOE <= names:
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
        raise refuse(where, "stack.no-default",
                     f"op profile {profile.arch!r} has several kinds {sorted(names)} and names no default; {fix}")
    return (LayerGroup(profile.default, num_layers),) if num_layers else ()


def derive_layers(profile: OpProfile, num_layers: int, mtp_depth: int = 0,
                  layer_types: Optional[Sequence[str]] = None, first_k_dense: int = 0,
                  warnings: Optional[List[SpecIssue]] = None, where: FieldPath = ("arch",)) -> Tuple[LayerGroup, ...]:
    """Build the stack a config implies when it does not state one (the rules of the module docstring).

    Args:
        profile: The model's op profile, which names the kinds.
        num_layers: Body layers (``num_hidden_layers``).
        mtp_depth: MTP layers after the body.
        layer_types: Per-layer kind names, as a hybrid config lists them.
        first_k_dense: Leading dense layers of a dense-then-MoE family (``first_k_dense_replace``).
        warnings: A list that receives what the derivation ignored.
        where: The field that picked the profile (``arch``, or ``name`` when
            the arch is inferred from it), where ``stack.no-default`` is
            reported when no ``layer_types`` were given.

    Returns:
        The groups in model order, body first and MTP layers last.

    Raises:
        ModelSpecError: If ``layer_types`` lists fewer layers than the body,
            or no rule gives the body or the MTP layers a kind. *warnings*
            has what this call gathered even then: a ``layer_types`` name the
            profile lacks is often why the other rules were asked.
    """
    warnings = [] if warnings is None else warnings
    body = _body_from_layer_types(profile, num_layers, layer_types, warnings) if layer_types else None
    if body is None:
        refused_at, fix = where, "state the stack in layers"
        if layer_types:
            refused_at, fix = ("layer_types",), "name the profile's kinds in layer_types, or state the stack in layers"
        body = _structural_body(profile, num_layers, first_k_dense, refused_at, fix)
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

    A kind whose counts the spec declares assumes nothing of it: what the
    profile's counts assumed went with them.

    Raises:
        ModelSpecError: ``stack.ops-kind`` if *ops* names a kind the profile lacks.
    """
    counts = profile.op_counts(ops)
    declared = set(ops or {})
    return {name: replace(kind, ops=counts[name], assumes=() if name in declared else kind.assumes)
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
        where: The field path of *layers* when the spec states them, else
            of the field the stack was derived from (``layer_types``, ``arch``),
            where ``stack.linear-dims`` is reported.

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
            stack does not fit its profile, a kind of the stack needs a width
            the spec does not declare (``stack.dense-without-intermediate``,
            ``stack.moe-without-experts``, ``stack.sliding-without-window``,
            ``stack.mla-without-ranks``), the spec declares a field no rule or
            kind of it reads (``stack.field-without-kind``), or it contradicts
            what a kind's counts assume (``stack.profile-assumes``); every
            problem of the last three kinds at once. The error's
            ``warnings`` hold what the derivation ignored on the way (a
            ``layer_types`` name the profile lacks is often the cause).
    """
    profiles = profiles or load_op_profiles()
    arch = spec_arch(spec, profiles)
    warnings: List[SpecIssue] = []
    try:
        stack = _checked_stack(spec, profiles, arch, warnings)
    except ModelSpecError as error:
        raise ModelSpecError(error.issues, warnings) from None
    return LayerStack(stack.arch, stack.groups, stack.linear, tuple(warnings))


def _checked_stack(spec: ModelSpec, profiles: OpProfiles, arch: str, warnings: List[SpecIssue]) -> LayerStack:
    """The body of :func:`spec_layer_stack`: derive, resolve and judge the stack, gathering *warnings*."""
    profile = profiles.get(arch)
    picked_by = ("arch",) if spec.arch else ("name",)
    linear = LinearAttentionDims.from_fields({name: getattr(spec, name) for name in LINEAR_FIELDS})
    layers = spec.layers
    if layers is None:
        layers = derive_layers(profile, spec.num_hidden_layers, spec.mtp_depth or 0,
                               layer_types=spec.layer_types, first_k_dense=spec.first_k_dense_replace or 0,
                               warnings=warnings, where=picked_by)
    source = ("layers",) if spec.layers is not None else ("layer_types",) if spec.layer_types else picked_by
    stack = resolve_layers(arch, layers, spec.ops, linear, profiles, where=source)
    issues = (_width_issues(spec, stack.distinct_kinds(), ()) + _unread_first_k_dense(spec, profile)
              + _assumption_issues(spec, stack.distinct_kinds(), arch, (), picked_by))
    if issues:
        raise ModelSpecError(issues)
    return stack


@dataclass(frozen=True)
class _FlavourFields:
    """Spec fields that a layer flavour needs, and that mean nothing without it.

    Attributes:
        attribute: ``"attention"`` or ``"ffn"``, the :class:`LayerKind` attribute.
        flavour: Its value, e.g. ``"moe"``.
        words: The flavour in a message, e.g. ``"routed experts"``.
        meaningful: Fields that state something only a kind of this flavour
            uses; 0 and false state nothing (no shared expert, no gate).
        required: Fields a stack with the flavour cannot be priced without.
        missing_code: The code when one of them is absent.
        remedy: What to declare, for the message.
    """

    attribute: str
    flavour: str
    words: str
    meaningful: Tuple[str, ...]
    required: Tuple[str, ...] = ()
    missing_code: str = ""
    remedy: str = ""


# What each flavour needs, and what only it reads (the cost model prices a dense
# feed-forward at intermediate_size, routed and shared experts at their counts
# and widths, MLA at its ranks, a sliding window at sliding_window, gated
# DeltaNet at the linear_* dimensions, a state-space mixer at the ssm_* ones).
# A linear kind's dimensions are required by resolve_layers, which keeps them on the stack.
_FLAVOUR_FIELDS = (
    _FlavourFields("ffn", "dense", "a dense feed-forward", (), ("intermediate_size",),
                   "stack.dense-without-intermediate", "the dense width"),
    _FlavourFields("ffn", "moe", "routed experts",
                   ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "num_shared_experts",
                    "shared_expert_intermediate_size", "shared_expert_gate", "moe_latent_size"),
                   ("num_experts", "num_experts_per_tok"), "stack.moe-without-experts",
                   "how many routed experts there are and how many each token is sent to"),
    _FlavourFields("attention", "mla", "multi-head latent attention",
                   ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"),
                   ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"),
                   "stack.mla-without-ranks", "the rank or per-head width of the latent attention"),
    _FlavourFields("attention", "sliding", "sliding-window attention", ("sliding_window",), ("sliding_window",),
                   "stack.sliding-without-window", "the window in tokens"),
    _FlavourFields("attention", "chunked", "chunked attention", ("attention_chunk_size",), ("attention_chunk_size",),
                   "stack.chunked-without-size", "the chunk in tokens"),
    _FlavourFields("attention", "linear", "linear attention", LINEAR_FIELDS),
    _FlavourFields("attention", "ssm", "a state-space mixer", SSM_FIELDS,
                   ("ssm_state_size", "ssm_conv_kernel"), "stack.ssm-without-state",
                   "the state per channel and the conv taps of the state-space mixer"),
)

#: A model spec or a vision tower: what the stack rules read fields from.
_Record = Union[ModelSpec, VisionSpec]


def fields_without_kind(kinds: Sequence[LayerKind]) -> Tuple[str, ...]:
    """The spec fields only a flavour none of *kinds* has reads (a stack of them declaring one is
    ``stack.field-without-kind``): the linear_* widths of a stack with no linear layer, the experts of one with no
    MoE layer. The importer leaves them out: the model the config describes builds no tensor of them."""
    return tuple(name for rule in _FLAVOUR_FIELDS
                 if all(getattr(kind, rule.attribute) != rule.flavour for kind in kinds) for name in rule.meaningful)


def _width_issues(record: _Record, kinds: Sequence[LayerKind], prefix: FieldPath) -> List[SpecIssue]:
    """The fields *kinds* need that *record* does not declare, and the fields it declares that none of them reads.

    Only the fields *record* has are judged (a tower has no experts), each at
    *prefix* + its name: ``stack.dense-without-intermediate``,
    ``stack.moe-without-experts``, ``stack.mla-without-ranks``,
    ``stack.sliding-without-window``, ``stack.field-without-kind``.
    """
    names = [kind.name for kind in kinds]
    issues = []
    for rule in _FLAVOUR_FIELDS:
        having = [kind.name for kind in kinds if getattr(kind, rule.attribute) == rule.flavour]
        if having:
            issues += [SpecIssue(prefix + (name,), rule.missing_code,
                                 f"the stack has layers of kind {having} with {rule.words}, but "
                                 f"{dotted(prefix + (name,))} is not declared; declare {rule.remedy}")
                       for name in rule.required if hasattr(record, name) and getattr(record, name) is None]
        else:
            issues += [SpecIssue(prefix + (name,), "stack.field-without-kind",
                                 f"{dotted(prefix + (name,))} is declared, but no layer of the stack has "
                                 f"{rule.words} (its kinds are {names}); state an arch or layers whose kinds have "
                                 f"it, or leave {name} out")
                       for name in rule.meaningful if getattr(record, name, None)]
    return issues


def _unread_first_k_dense(spec: ModelSpec, profile: OpProfile) -> List[SpecIssue]:
    """``stack.field-without-kind`` for a ``first_k_dense_replace`` that no stack rule of *profile* reads.

    Only the dense-then-MoE rule reads it, for a profile with ``dense`` and
    ``moe`` kinds; 0 states nothing (no leading dense layer).
    """
    if not spec.first_k_dense_replace or _DENSE_THEN_MOE <= set(profile.layer_kinds):
        return []
    return [SpecIssue(("first_k_dense_replace",), "stack.field-without-kind",
                      f"first_k_dense_replace is declared, but op profile {profile.arch!r} has no 'dense' and "
                      f"'moe' kinds for it to split the body into (its kinds are {sorted(profile.layer_kinds)}), "
                      "so no stack rule reads it; state an arch whose profile has them, or layers, or leave "
                      "first_k_dense_replace out")]


def _assumption_issues(record: _Record, kinds: Sequence[LayerKind], arch: str, prefix: FieldPath,
                       picked_by: FieldPath) -> List[SpecIssue]:
    """``stack.profile-assumes`` for each field of *record* that contradicts what *kinds*' counts assume.

    One issue per field and assumed value, naming every kind that assumes
    it; at the field when *record* states it, else at *picked_by* (the field
    that chose the profile), since an absent field has no line of its own.
    """
    broken: Dict[Tuple[str, Any], List[str]] = {}
    for kind in kinds:
        for assumption in kind.assumes:
            if not assumption.holds_for(getattr(record, assumption.field)):
                broken.setdefault((assumption.field, assumption.value), []).append(kind.name)
    return [_assumption_issue(record, Assumption(name, value), having, arch, prefix, picked_by)
            for (name, value), having in broken.items()]


def _assumption_issue(record: _Record, assumption: Assumption, kinds: List[str], arch: str, prefix: FieldPath,
                      picked_by: FieldPath) -> SpecIssue:
    """The refusal of *record*'s value of the assumed field, saying what the counts assume and what to do."""
    path = prefix + (assumption.field,)
    name = dotted(path)
    stated = getattr(record, assumption.field)
    if assumption.value == STATED:
        assumed = f"with {name} stated"
    else:
        assumed = f"for {name}: {_yaml_scalar(assumption.value)}"
    if stated is not None:
        found = f"this spec states {name}: {_yaml_scalar(stated)}"
    elif assumption.field in ABSENT_PRICED_AS:
        found = f"this spec leaves {name} out, which is priced as {ABSENT_PRICED_AS[assumption.field]}"
    else:
        found = f"this spec leaves {name} out"
    if prefix:
        remedy = (f"a tower that differs there runs other ops; state {dotted(prefix + ('layers',))} with kinds of "
                  f"op profile {arch!r} whose counts fit it")
    else:
        remedy = ("a model that differs there runs other ops and needs its own; use an arch whose counts fit it, or "
                  f"state {' and '.join(f'ops.{kind}' for kind in kinds)} with the model's own counts")
    return SpecIssue(path if stated is not None else picked_by, "stack.profile-assumes",
                     f"op profile {arch!r} counts the ops of kind {kinds} {assumed}, but {found}: {remedy}")


def _yaml_scalar(value: Any) -> str:
    """A flag or count as a spec file writes it: ``true``, ``false``, ``2``."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def tower_layer_stack(vision: VisionSpec, profiles: Optional[OpProfiles] = None) -> LayerStack:
    """Return a vision tower's stack: as it states it, or one group of the vision profile's default kind.

    The tower is judged by the body's rules, for the fields a tower has: a
    kind with a dense feed-forward needs ``vision.intermediate_size``, and a
    tower field that contradicts a kind's ``assumes`` is refused.

    Raises:
        ModelSpecError: If the tower names a kind the vision profile lacks,
            there is no vision profile, ``stack.dense-without-intermediate``,
            ``stack.field-without-kind`` or ``stack.profile-assumes``.
    """
    profiles = profiles or load_op_profiles()
    where = ("vision",)
    layers = vision.layers
    if layers is None:
        layers = derive_layers(profiles.get(VISION_ARCH), vision.num_hidden_layers, where=where)
    stack = resolve_layers(VISION_ARCH, layers, profiles=profiles,
                           where=where + ("layers",) if vision.layers is not None else where)
    kinds = stack.distinct_kinds()
    issues = _width_issues(vision, kinds, where) + _assumption_issues(vision, kinds, VISION_ARCH, where, where)
    if issues:
        raise ModelSpecError(issues)
    return stack
