"""Parameter accounting: how many parameters a spec's model holds, and where, from its weight inventories.

The counts follow from the inventories (:mod:`pipeline.pricing.weights`) of the
resolved stack's kinds, the profile's model-level weights (embedding,
position tables, final norms, head), its MTP extras and its vision tower's
weights. Nothing is estimated: every tensor is listed in an op profile with
the modelling code it comes from, and ``tests/test_parameters.py`` checks the
counts of every catalogue model against transformers' own, to the parameter.

Conventions, those of the reference counts (``tests/data/oracle/README.md``):

- ``total`` is every parameter the model holds without its MTP layers, a tied
  head counted once (as the embedding); ``mtp`` is apart, as DeepSeek's card
  counts 671B main model plus 14B MTP module.
- ``active`` is ``total`` less the routed experts, plus ``num_experts_per_tok``
  of them: per token, the embedding, head, shared experts, routers and towers
  count fully.
- ``flops_per_token`` is the forward pass's matmul FLOPs per token, 2 per
  active matmul weight of the body plus the output projection (tied or not),
  the attention scores (QK^T, AV: they grow with the sequence, not the
  weights) and the tower (its tokens are not the text's) apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.spec.problems import FieldPath
from pipeline.pricing.weights import (FFN_PARTS, LAYER_PARTS, MAX_SIZE, SYMBOLS, TOWER_SYMBOLS, Tensor, Unpriced, Weight,
                              environment, NONE, layer_sums, resolve, sizes)

if TYPE_CHECKING:
    from pipeline.spec.model import ModelSpec, VisionSpec
    from pipeline.pricing.op_profiles import OpProfile
    from pipeline.pricing.stack import LayerStack

#: Spec fields read as 0 when absent (as the stack rules and ``shared_expert_width`` read them).
_ZERO_WHEN_ABSENT = ("num_shared_experts",)


@dataclass(frozen=True)
class GroupParameters:
    """The parameters of one group of a stack: ``count`` layers of ``kind``.

    Attributes:
        kind: The layer kind.
        count: Layers in the group.
        mtp: Whether these are MTP layers (counted in ``mtp``, not ``total``).
        parts: ``{part: parameters}`` over the whole group, for each of
            :data:`~pipeline.pricing.weights.LAYER_PARTS` (0 where the kind has none).
        active: What a token passes through: the parts, routed experts at
            ``num_experts_per_tok`` of ``num_experts``.
    """

    kind: str
    count: int
    mtp: bool
    parts: Mapping[str, int]
    active: int

    @property
    def total(self) -> int:
        """Every parameter of the group."""
        return sum(self.parts.values())

    @property
    def mlp(self) -> int:
        """The feed-forward parameters: a dense MLP's, or a MoE block's router, experts and shared expert."""
        return sum(self.parts[part] for part in FFN_PARTS)

    def to_dict(self) -> Dict[str, Any]:
        """The group as the artifact's ``parameters.groups`` holds it."""
        return {"kind": self.kind, "count": self.count, "mtp": self.mtp, "total": self.total,
                "active": self.active, "attention": self.parts["attention"], "mlp": self.mlp,
                **{part: self.parts[part] for part in LAYER_PARTS if part not in ("attention", "mlp")},
                "dense_mlp": self.parts["mlp"]}


@dataclass(frozen=True)
class ParameterCounts:
    """Where a model's parameters are.

    Attributes:
        total: Every parameter, MTP layers apart.
        active: Parameters a token passes through (routed experts at top-k).
        embedding: The input token embedding.
        position: Learned position tables (GPT-2's ``wpe``).
        head: The output projection; 0 when tied to the embedding (its bias, when it has one, counts).
        final_norm: The norm(s) after the last layer (both stacks' for T5).
        other: Model-level tensors in no other bucket (RoBERTa's masked-LM head transform).
        vision: The vision tower with its projector (0 without one).
        projector: The part of ``vision`` that maps the tower into the text width.
        mtp: The MTP layers with their own extras (not in ``total``).
        flops_per_token: Forward matmul FLOPs per text token (see the module docstring).
        groups: Per stack group, body and MTP.
        tower_groups: Per group of the tower's stack.
    """

    total: int
    active: int
    embedding: int
    position: int
    head: int
    final_norm: int
    other: int
    vision: int
    projector: int
    mtp: int
    flops_per_token: int
    groups: Tuple[GroupParameters, ...]
    tower_groups: Tuple[GroupParameters, ...] = ()

    @property
    def layers(self) -> int:
        """The body layers' parameters."""
        return sum(group.total for group in self.groups if not group.mtp)

    def to_dict(self) -> Dict[str, Any]:
        """The counts as the artifact's ``parameters`` block holds them."""
        return {"total": self.total, "active": self.active, "embedding": self.embedding,
                "position": self.position, "head": self.head, "final_norm": self.final_norm, "other": self.other,
                "layers": self.layers, "vision": self.vision, "projector": self.projector, "mtp": self.mtp,
                "flops_per_token": self.flops_per_token,
                "groups": [group.to_dict() for group in self.groups],
                "tower_groups": [group.to_dict() for group in self.tower_groups]}


def model_symbols(spec: "ModelSpec") -> Dict[str, Any]:
    """The values a model inventory's expressions read (:data:`~pipeline.pricing.weights.SYMBOLS`); ``None``: unstated.

    Returned as :func:`~pipeline.pricing.weights.environment` builds it, ready to evaluate shapes in.
    """
    symbols = {name: getattr(spec, name) for name in SYMBOLS}
    symbols["vision"] = spec.vision is not None
    symbols["head_dim"] = spec.effective_head_dim
    symbols["num_key_value_heads"] = spec.num_key_value_heads or spec.num_attention_heads
    symbols["moe_intermediate_size"] = spec.routed_expert_width or None
    symbols["shared_expert_intermediate_size"] = spec.shared_expert_width or None
    for name in _ZERO_WHEN_ABSENT:
        if symbols[name] is None:
            symbols[name] = 0
    return environment(symbols)


def tower_symbols(tower: "VisionSpec", text_hidden_size: int) -> Dict[str, Any]:
    """The values a tower inventory's expressions read (:data:`~pipeline.pricing.weights.TOWER_SYMBOLS`)."""
    symbols = {name: getattr(tower, name, None) for name in TOWER_SYMBOLS}
    symbols["head_dim"] = tower.hidden_size // tower.num_attention_heads
    symbols["text_hidden_size"] = text_hidden_size
    return environment(symbols)


def layer_tensors(kind: Any, symbols: Mapping[str, Any], where: str = "") -> List[Tensor]:
    """The tensors one layer of *kind* (a resolved :class:`~pipeline.pricing.op_profiles.LayerKind`) holds.

    Raises:
        Unpriced: If the kind states no weights, or they read a field the spec leaves out.
    """
    if not kind.weights:
        raise Unpriced(None, f"the op profile states no weights for kind {kind.name!r}{where}")
    try:
        return resolve(kind.weights, symbols)
    except Unpriced as missing:
        raise Unpriced(missing.field, f"kind {kind.name!r}{where}: {missing.reason}") from None


def _sizes(weights: Sequence[Weight], env: Mapping[str, Any], where: str) -> List[Tuple[str, str, int, bool]]:
    """:func:`~pipeline.pricing.weights.sizes` of *weights*, a missing field named with *where*.

    Raises:
        Unpriced: If there are no weights, or they read a field the spec leaves out.
    """
    if not weights:
        raise Unpriced(None, f"the op profile states no weights for {where}")
    try:
        return sizes(weights, env)
    except Unpriced as missing:
        raise Unpriced(missing.field, f"{where}: {missing.reason}") from None


@dataclass(frozen=True)
class _LayerSum:
    """One layer of a kind, summed: what every layer holds, what only the first of a run adds, and per token."""

    parts: Mapping[str, int]
    first: Mapping[str, int]
    active: int
    first_active: int
    matmul_active: int
    has_experts: bool

    @property
    def total(self) -> int:
        """Every parameter of one layer that is not the first of its run."""
        return sum(self.parts.values())

    @property
    def first_total(self) -> int:
        """What only the first layer of a run adds."""
        return sum(self.first.values())

    def group(self, kind: str, count: int, mtp: bool) -> GroupParameters:
        """The parameters of *count* consecutive layers of the kind."""
        return GroupParameters(kind, count, mtp, {part: value * count + self.first[part]
                                                  for part, value in self.parts.items()},
                               self.active * count + self.first_active)


def _layer_sum(tensors: Sequence[Tuple[str, str, int, bool]], experts: int, top_k: int) -> _LayerSum:
    """Sum one layer's tensors by part; a routed expert's tensor counts *experts* times, *top_k* times active."""
    parts = dict.fromkeys(LAYER_PARTS, 0)
    first = dict.fromkeys(LAYER_PARTS, 0)
    active = first_active = matmul = 0
    for part, per, params, is_matmul in tensors:
        if per == "first_layer":
            first[part] += params
            first_active += params
            continue
        parts[part] += params * (experts if per == "expert" else 1)
        used = params * (top_k if per == "expert" else 1)
        active += used
        matmul += used if is_matmul else 0
    return _LayerSum(parts, first, active, first_active, matmul, any(t[1] == "expert" for t in tensors))


def _layer_sums(spec: "ModelSpec", stack: "LayerStack", symbols: Mapping[str, Any]) -> Dict[str, _LayerSum]:
    """Each kind of *stack* summed once, by name.

    Raises:
        Unpriced: If a kind's inventory is missing or reads a field the spec leaves out, or it holds
            routed experts and the spec no top-k.
    """
    experts, top_k = spec.num_experts or 0, spec.num_experts_per_tok or 0
    sums: Dict[str, _LayerSum] = {}
    for kind in stack.distinct_kinds():
        sums[kind.name] = _layer_sum(_sizes(kind.weights, symbols, f"kind {kind.name!r}"), experts, top_k)
        if sums[kind.name].has_experts and not (experts and top_k):
            raise Unpriced("num_experts_per_tok", f"kind {kind.name!r} holds routed experts, so its count needs "
                                                  "num_experts and num_experts_per_tok")
    return sums


def count_totals(spec: "ModelSpec", profile: "OpProfile", stack: "LayerStack",
                 tower: Optional["LayerStack"] = None) -> Tuple[int, int]:
    """``(total, active)`` of :func:`count_parameters`, without its breakdown: what ``check`` compares.

    Raises:
        Unpriced: As :func:`count_parameters`.
    """
    symbols = model_symbols(spec)
    experts, top_k = spec.num_experts or 0, spec.num_experts_per_tok or 0
    sums: Dict[str, Tuple[int, int, int]] = {}
    for kind in stack.distinct_kinds():
        found = layer_sums(kind.weights, symbols)
        if found is None or (found[1] and not (experts and top_k)):
            # the full path names what is missing, or (a layer's sum above MAX_SIZE, no tensor alone) counts it
            counts = count_parameters(spec, profile, stack, tower)
            return counts.total, counts.active
        sums[kind.name] = found
    total = active = 0
    for group in stack.groups:
        if not group.mtp:
            layer, expert, first = sums[group.kind.name]
            total += (layer + experts * expert) * group.count + first
            active += (layer + top_k * expert) * group.count + first
    outside = sum(params for _, _, params, _ in sizes(profile.model_weights, symbols))
    if tower is not None and spec.vision is not None:
        outside += _tower_total(spec, profile, tower)
    return _bounded(total + outside), active + outside


def _bounded(total: int) -> int:
    """*total*, when a model can hold it (at most :data:`~pipeline.pricing.weights.MAX_SIZE`).

    Raises:
        Unpriced: Beyond that: no count is ever an integer too long to print.
    """
    if total > MAX_SIZE:
        raise Unpriced(None, "the spec's fields count more than 2^63 - 1 parameters; no model holds that: a width "
                             "or a count of the spec is wrong")
    return total


def _tower_total(spec: "ModelSpec", profile: "OpProfile", tower: "LayerStack") -> int:
    """The tower with its projector, as :func:`_tower` counts it, from one evaluation per tower kind."""
    symbols = tower_symbols(spec.vision, spec.hidden_size)
    sums = {kind.name: layer_sums(profile.vision_kinds.get(kind.name, NONE), symbols) for kind in tower.distinct_kinds()}
    rest = layer_sums(profile.vision_weights, symbols)
    if rest is None or None in sums.values():  # the full path names what is missing
        return _tower(spec, profile, tower)[0]
    return sum(sums[group.kind.name][0] * group.count + sums[group.kind.name][2] for group in tower.groups) + \
        rest[0] + rest[2]


def count_parameters(spec: "ModelSpec", profile: "OpProfile", stack: "LayerStack",
                     tower: Optional["LayerStack"] = None) -> ParameterCounts:
    """Count a spec's parameters from its resolved stack (and tower stack) and its profile's inventories.

    Args:
        spec: The model.
        profile: Its op profile, whose ``model_weights``, ``mtp_weights`` and
            ``vision`` inventory price what is not a body layer.
        stack: Its resolved stack (kinds carry their ``weights``).
        tower: The vision tower's resolved stack, when the model has one; its
            kinds' weights are the family's (``profile.vision_kinds``), its
            ops the vision profile's.

    Raises:
        Unpriced: If an inventory is missing or reads a field the spec leaves out.
    """
    symbols = model_symbols(spec)
    sums = _layer_sums(spec, stack, symbols)
    groups = tuple(sums[group.kind.name].group(group.kind.name, group.count, group.mtp) for group in stack.groups)
    flops = 2 * sum(group.count * sums[group.kind.name].matmul_active for group in stack.groups if not group.mtp)
    flops += 2 * spec.vocab_size * spec.hidden_size
    model = _by_part(sizes(profile.model_weights, symbols))
    mtp_layers = sum(group.count for group in stack.groups if group.mtp)
    mtp_extra = mtp_layers * sum(params for _, _, params, _ in sizes(profile.mtp_weights, symbols)) \
        if mtp_layers else 0
    vision = projector = 0
    tower_groups: Tuple[GroupParameters, ...] = ()
    if tower is not None and spec.vision is not None:
        vision, projector, tower_groups = _tower(spec, profile, tower)
    outside = sum(model.values()) + vision
    _bounded(sum(g.total for g in groups) + outside + mtp_extra)
    return ParameterCounts(
        total=sum(g.total for g in groups if not g.mtp) + outside,
        active=sum(g.active for g in groups if not g.mtp) + outside,
        embedding=model.get("embedding", 0), position=model.get("position", 0), head=model.get("head", 0),
        final_norm=model.get("final_norm", 0), other=model.get("other", 0), vision=vision, projector=projector,
        mtp=sum(g.total for g in groups if g.mtp) + mtp_extra, flops_per_token=flops, groups=groups,
        tower_groups=tower_groups)


def _by_part(tensors: Sequence[Tuple[str, str, int, bool]]) -> Dict[str, int]:
    """``{part: parameters}`` of model-level tensors."""
    parts: Dict[str, int] = {}
    for part, _, params, _ in tensors:
        parts[part] = parts.get(part, 0) + params
    return parts


def _tower(spec: "ModelSpec", profile: "OpProfile", tower: "LayerStack") -> Tuple[int, int, Tuple[GroupParameters, ...]]:
    """``(vision, projector, groups)``: the tower with its projector, the projector alone, the tower's groups."""
    if not profile.vision_weights and not profile.vision_kinds:
        raise Unpriced(None, f"the op profile {profile.arch!r} states no weights for its vision tower")
    symbols = tower_symbols(spec.vision, spec.hidden_size)
    groups = []
    for group in tower.groups:
        try:
            tensors = _sizes(profile.vision_kinds.get(group.kind.name, NONE), symbols,
                             f"tower kind {group.kind.name!r} of op profile {profile.arch!r}")
        except Unpriced as missing:
            raise Unpriced(missing.field and f"vision.{missing.field}", missing.reason) from None
        groups.append(_layer_sum(tensors, 0, 0).group(group.kind.name, group.count, False))
    try:
        rest = _by_part(sizes(profile.vision_weights, symbols))
    except Unpriced as missing:
        raise Unpriced(f"vision.{missing.field}", f"the vision tower: {missing.reason}") from None
    projector = rest.get("projector", 0)
    return sum(g.total for g in groups) + sum(rest.values()), projector, tuple(groups)


CODES: Dict[str, str] = {
    "params.total-mismatch": "parameters.total, the model's published count, differs from what the op profile's "
                             "weight inventories count for the spec's fields: a width or a count of the spec is "
                             "not the model's, or the stated figure is.",
    "params.active-mismatch": "parameters.active differs from the counted parameters a token passes through (routed "
                              "experts at num_experts_per_tok of num_experts).",
    "params.mtp-mismatch": "parameters.mtp differs from the counted parameters of the MTP layers (mtp_depth) with "
                           "their own extras: an MTP layer was dropped or added, or the stated figure is wrong.",
    "params.vision-mismatch": "parameters.vision differs from the counted parameters of the vision tower with its "
                              "projector: the tower was dropped or reshaped, or the stated figure is wrong.",
    "params.part-unstated": "parameters is stated but leaves out a priced part the model has (active for a MoE "
                            "model, mtp for MTP layers, vision for a tower), so a change to that part would pass "
                            "unseen; state it (modelspec import writes every part).",
    "params.unpriced": "parameters is stated but the spec cannot be counted: it has no arch and no op profile "
                       "matches its name, its profile states no weights for a kind, or an inventory reads a field "
                       "the spec leaves out.",
    "params.uncounted": "The spec cannot be counted and states no parameters: a cost model reading it gets no "
                        "parameter count, and nothing pins its size. A warning no configuration or inline ignore "
                        "silences (--strict makes it fail the run): make the spec countable, or state its figure.",
}

#: The parts a stated count pins, with the code of a mismatch in each.
STATED_PARTS = (("total", "params.total-mismatch"), ("active", "params.active-mismatch"),
                ("mtp", "params.mtp-mismatch"), ("vision", "params.vision-mismatch"))


def _billions(value: int) -> str:
    """``671026404352`` -> ``671.03B``; a value under 0.01B in full digits (``6,400``), which the rounding would
    show as ``0.00B``."""
    return f"{value / 1e9:.2f}B" if abs(value) >= 10_000_000 else f"{value:,}"


def _grouped(groups: Sequence[GroupParameters], label: str, exact: bool = False,
             active: bool = False) -> List[Tuple[int, str]]:
    """``(parameters, "moe layers 58 × 11.51B")`` of *groups*, equal ones (one kind, one size a layer) summed
    wherever they stand in the stack; a size a layer is given in full digits where its rounding would read the
    same as another of its kind's (``moe layers 3 × 1,290,000,000, moe layers 55 × 1,290,010,112``), and
    everywhere when *exact*. The size is what a token passes through when *active*."""
    merged: Dict[Tuple[str, int], int] = {}
    for group in groups:
        key = (group.kind, (group.active if active else group.total) // group.count)
        merged[key] = merged.get(key, 0) + group.count
    rounded: Dict[Tuple[str, str], int] = {}
    for kind, each in merged:
        rounded[(kind, _billions(each))] = rounded.get((kind, _billions(each)), 0) + 1
    return [(each * count, f"{kind} {label} {count} × "
                           f"{f'{each:,}' if exact or rounded[(kind, _billions(each))] > 1 else _billions(each)}")
            for (kind, each), count in merged.items()]


def _billions_or_digits(value: int, exact: bool) -> str:
    """``0.93B``, or ``926,679,040`` when *exact*."""
    return f"{value:,}" if exact else _billions(value)


def breakdown(counts: ParameterCounts, exact: bool = False, active: bool = False) -> str:
    """Where the counted parameters are, largest first: ``moe layers 58 × 11.51B, embedding 0.93B, ...``; every
    figure in full digits when *exact* (a difference the rounding to 0.01B would hide); the layers' share a token
    passes through when *active*."""
    pieces = _grouped([group for group in counts.groups if not group.mtp], "layers", exact, active)
    pieces += [(value, f"{name} {_billions_or_digits(value, exact)}") for name, value in
               (("embedding", counts.embedding), ("head", counts.head), ("position", counts.position),
                ("final norm", counts.final_norm), ("vision", counts.vision), ("other", counts.other)) if value]
    return ", ".join(text for _, text in sorted(pieces, key=lambda piece: -piece[0]))


def _part_breakdown(key: str, counts: ParameterCounts, exact: bool = False) -> str:
    """Where the counted parameters of the stated part *key* are (:func:`breakdown` for the total and active)."""
    if key == "mtp":
        pieces = [text for _, text in _grouped([group for group in counts.groups if group.mtp], "MTP layers", exact)]
        extras = counts.mtp - sum(group.total for group in counts.groups if group.mtp)
        return ", ".join(pieces + ([f"MTP extras {_billions_or_digits(extras, exact)}"] if extras else [])) or \
            "no MTP layer"
    if key == "vision":
        pieces = [text for _, text in _grouped(counts.tower_groups, "tower layers", exact)]
        rest = counts.vision - sum(group.total for group in counts.tower_groups)
        return ", ".join(pieces + ([f"tower outside its layers {_billions_or_digits(rest, exact)}"] if rest
                                   else [])) or "no vision tower"
    return breakdown(counts, exact, active=key == "active")


#: A difference smaller than this hides in a breakdown rounded to 0.01B: the breakdown is then given in digits.
_ROUNDING = 5_000_000


def counted_parts(spec: "ModelSpec", counts: ParameterCounts) -> Dict[str, Optional[int]]:
    """``{part: counted}`` of every part of :data:`STATED_PARTS`; ``None`` for a part the model does not have
    (``active`` of a dense model, ``mtp`` without MTP layers, ``vision`` without a tower), which it need not state."""
    has_mtp = any(group.mtp for group in counts.groups)
    return {"total": counts.total, "active": counts.active if spec.is_moe else None,
            "mtp": counts.mtp if has_mtp else None, "vision": counts.vision if spec.vision is not None else None}


def stated_issues(spec: "ModelSpec", counts: ParameterCounts) -> List[Tuple[FieldPath, str, str]]:
    """``(field path, code, message)`` for each stated figure of ``spec.parameters`` the count contradicts, and for
    each part the model has that it leaves out."""
    stated = spec.parameters
    found = []
    parts = counted_parts(spec, counts)
    counted_of = {"total": counts.total, "active": counts.active, "mtp": counts.mtp, "vision": counts.vision}
    for key, code in STATED_PARTS:
        value, counted = getattr(stated, key), counted_of[key]
        if value is None and parts[key] is not None:
            found.append((("parameters",), "params.part-unstated",
                          f"parameters states no {key}, but the spec's fields count {counted:,} "
                          f"({_part_breakdown(key, counts)}); "
                          f"state {key}: {counted} (modelspec import writes it), so a change to it fails check"))
        if value is None or value == counted:
            continue
        exact = abs(counted - value) < _ROUNDING
        found.append((("parameters", key), code,
                      f"parameters.{key} states {value:,} but the spec's fields count {counted:,} "
                      f"({counted - value:+,}); counted: {_part_breakdown(key, counts, exact)}. Correct the field "
                      "that is not the model's, or the stated figure"))
    return found


def stated_holds(spec: "ModelSpec", totals: Tuple[int, int]) -> bool:
    """Whether ``spec.parameters`` surely holds, from ``(total, active)`` alone: it states neither ``mtp`` nor
    ``vision`` and the model has no tower (an MTP layer is known only to the full count), and the total and active
    stated are the counted ones. ``False`` means: count in full (:func:`stated_issues`)."""
    stated = spec.parameters
    return stated is not None and stated.mtp is None and stated.vision is None and spec.vision is None and \
        not spec.mtp_depth and stated.total == totals[0] and \
        (stated.active == totals[1] if spec.is_moe else stated.active in (None, totals[1]))


def layer_breakdown(spec: "ModelSpec", stack: "LayerStack") -> Tuple[Dict[str, int], ...]:
    """Every layer's parameters by part (:data:`~pipeline.pricing.weights.LAYER_PARTS`), in model order, MTP layers last.

    A routed expert's tensors count ``num_experts`` times; a ``first_layer``
    tensor only in the first layer of its group.

    Raises:
        Unpriced: As :func:`count_parameters`.
    """
    symbols = model_symbols(spec)
    experts = spec.num_experts or 0
    layers = []
    for group in stack.groups:
        tensors = layer_tensors(group.kind, symbols)
        for index in range(group.count):
            parts = dict.fromkeys(LAYER_PARTS, 0)
            for tensor in tensors:
                if tensor.per == "first_layer" and index:
                    continue
                parts[tensor.part] += tensor.params * (experts if tensor.per == "expert" else 1)
            layers.append(parts)
    return tuple(layers)
