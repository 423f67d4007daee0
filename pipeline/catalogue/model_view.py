"""What ``show --format json`` prints of one checked spec: its resolved stack, kinds, op totals, widths, tower
and parameter counts, as data (:func:`show_view`).

The text diagram (:func:`pipeline.catalogue.views.render_show`) is drawn from this view, so the two cannot
disagree; it lives apart because building a view needs the pricing modules, which ``show``'s recorded views do not.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional

from pipeline.pricing.flops import CONVENTIONS, DEFAULT_SEQ_LENS, model_flops
from pipeline.pricing.op_profiles import OpProfile
from pipeline.pricing.parameters import Unpriced, count_parameters
from pipeline.pricing.stack import LayerStack
from pipeline.spec.model import ModelSpec, VisionSpec

# The MLA ranks a stack with mla attention is priced on, in the order the view lists them.
_MLA_FIELDS = ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
# The tower's widths the view gives.
_TOWER_WIDTHS = ("hidden_size", "intermediate_size", "out_hidden_size", "patch_size", "spatial_merge_size",
                 "num_position_embeddings")


def _groups(stack: LayerStack) -> List[Dict[str, Any]]:
    rows, first = [], 0
    for group in stack.groups:
        rows.append({"first": first, "last": first + group.count - 1, "kind": group.kind.name, "count": group.count,
                     "mtp": group.mtp})
        first += group.count
    return rows


def _kinds(stack: LayerStack) -> Dict[str, Dict[str, Any]]:
    return {kind.name: {"attention": kind.attention, "ffn": kind.ffn, "ops": kind.ops.to_dict()}
            for kind in stack.distinct_kinds()}


def _op_totals(stack: LayerStack) -> Dict[str, int]:
    """Each op's calls over the whole stack per forward pass: a kind's count times its layers, summed."""
    totals: Dict[str, int] = {}
    for group in stack.groups:
        for op, count in group.kind.ops.to_dict().items():
            totals[op] = totals.get(op, 0) + count * group.count
    return totals


def _stack_view(stack: LayerStack) -> Dict[str, Any]:
    return {"arch": stack.arch, "groups": _groups(stack), "kinds": _kinds(stack), "op_totals": _op_totals(stack)}


def _tower_view(vision: VisionSpec, tower: LayerStack) -> Dict[str, Any]:
    return {"name": vision.name, "layers": vision.num_hidden_layers, "num_attention_heads": vision.num_attention_heads,
            **_stack_view(tower), "widths": {key: getattr(vision, key) for key in _TOWER_WIDTHS}}


def parameters_view(spec: ModelSpec, stack: LayerStack, tower: Optional[LayerStack],
                    profile: OpProfile) -> Dict[str, Any]:
    """The spec's parameter counts as the artifact states them, or ``{"unpriced": why}``."""
    try:
        return count_parameters(spec, profile, stack, tower).to_dict()
    except Unpriced as missing:
        return {"unpriced": missing.reason}


#: The sequence length ``show`` states FLOPs and KV bytes at unless ``--seq-len`` says another.
SHOW_SEQ_LEN = DEFAULT_SEQ_LENS[-1]


def flops_view(spec: ModelSpec, stack: LayerStack, profile: OpProfile, parameters: Dict[str, Any],
               seq_len: int) -> Dict[str, Any]:
    """FLOPs of one forward over *seq_len* tokens under both conventions, per kind, and the bytes; or
    ``{"unpriced": why}``."""
    if "unpriced" in parameters:
        return {"unpriced": parameters["unpriced"]}
    try:
        figures = model_flops(spec, profile, stack, seq_len, parameters["total"])
    except Unpriced as missing:
        return {"unpriced": missing.reason}
    by_kind: Dict[str, Dict[str, Any]] = {}
    for group in figures.groups:
        row = by_kind.setdefault(group.kind + (" (MTP)" if group.mtp else ""), {
            "attention": group.attention, "layers": 0, "weights": 0, "attention_dense": 0, "attention_causal": 0,
            "kv_bytes_per_token": 0, "state_bytes": 0})
        for key, value in (("layers", group.count), ("weights", group.weights), ("attention_dense", group.dense),
                           ("attention_causal", group.causal), ("kv_bytes_per_token", group.kv_per_token),
                           ("state_bytes", group.state)):
            row[key] += value
    return {"seq_len": seq_len, **{f"forward_{c}": figures.forward(c) for c in CONVENTIONS},
            **{f"per_token_{c}": figures.per_token(c) for c in CONVENTIONS},
            **{f"training_{c}": figures.training(c) for c in CONVENTIONS},
            "head": figures.head, "mtp_dense": figures.mtp("dense"), "dtype": figures.dtype,
            "weight_bytes": figures.weight_bytes, "kv_bytes_per_token": figures.kv_per_token(),
            "kv_cache_bytes": figures.kv_bytes(), "state_bytes": figures.state_bytes(), "kinds": by_kind}


def show_view(spec: ModelSpec, stack: LayerStack, tower: Optional[LayerStack], file: str,
              profile: OpProfile, seq_len: int = SHOW_SEQ_LEN) -> Dict[str, Any]:
    """The resolved view of one checked spec, as ``show --format json`` prints it.

    Args:
        spec: The spec.
        stack: Its resolved stack.
        tower: Its tower's resolved stack, when it has a tower.
        file: The spec file, as reports show it.

    Returns:
        ``name``, ``file``, ``arch``; ``layers`` (``body``, ``mtp``);
        ``groups`` (``first``, ``last``, ``kind``, ``count``, ``mtp``);
        ``kinds`` (``attention``, ``ffn``, ``ops``); ``op_totals``; ``heads``;
        ``experts`` (or ``None`` for a dense model); ``sliding_window``;
        ``mla`` (when a kind's attention is mla); ``linear`` (the
        gated-DeltaNet dimensions); ``widths`` (channels: ``hidden_size``,
        ``intermediate_size`` — ``None`` when not declared —
        ``effective_head_dim``, ``attention_width``, ``routed_expert_width``,
        ``shared_expert_width``); ``tower`` (or ``None``); ``parameters``
        (:func:`parameters_view`); ``flops`` at *seq_len* tokens (:func:`flops_view`).
    """
    has_mla = any(kind.attention == "mla" for kind in stack.distinct_kinds())
    parameters = parameters_view(spec, stack, tower, profile)
    return {
        "name": spec.name,
        "file": file,
        "arch": stack.arch,
        "layers": {"body": spec.num_hidden_layers, "mtp": spec.mtp_depth or 0},
        **_stack_view(stack),
        "heads": {"attention": spec.num_attention_heads, "key_value": spec.num_key_value_heads},
        "experts": ({"routed": spec.num_experts, "per_token": spec.num_experts_per_tok,
                     "shared": spec.num_shared_experts} if spec.num_experts else None),
        "sliding_window": spec.sliding_window,
        "mla": {key: getattr(spec, key) for key in _MLA_FIELDS} if has_mla else None,
        "linear": dataclasses.asdict(stack.linear) if stack.linear is not None else None,
        "widths": {"hidden_size": spec.hidden_size, "intermediate_size": spec.intermediate_size,
                   "effective_head_dim": spec.effective_head_dim, "attention_width": spec.attention_width,
                   "routed_expert_width": spec.routed_expert_width, "shared_expert_width": spec.shared_expert_width},
        "tower": _tower_view(spec.vision, tower) if spec.vision is not None and tower is not None else None,
        "parameters": parameters,
        "flops": flops_view(spec, stack, profile, parameters, seq_len),
    }
