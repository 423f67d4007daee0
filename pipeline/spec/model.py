"""The model IR: a typed, serialisable description of an architecture.

A :class:`ModelSpec` states the facts about a model that hold whatever strategy
it is trained under: its widths, head counts, experts, layer stack and, when a
census measured them, its activations. Parallel-training cost models read
these fields; a wrong or missing one is a wrong plan for every accelerator of
a run, so the IR follows two rules (from the reference cost model's model IR,
learned on Qwen3.5-35B-A3B, which reached its cost model with the MTP layer
dropped, the shared expert priced at width zero and half its attention
parameters missing, all silently):

- **Absent is not zero.** Every optional field defaults to ``None``: a width
  nothing supplied is told apart from a width declared ``0``.
- **Refuse rather than default.** A spec whose fields are of the wrong type or
  contradict each other is refused when it is parsed, by field path, with the
  fix in the message, instead of resolving to a number that is wrong later.

This module is deliberately stricter than that reference: an integer field
refuses ``true``, ``12.5``, ``4096.0`` and ``"12"`` (the reference coerced them);
a float refuses NaN and infinities; a vision tower refuses a key it does not
know; and parsing and :meth:`ModelSpec.validate` report *every* independent
problem of a spec in one :class:`ModelSpecError`, each a :class:`SpecIssue`
with its field path and stable code, so the check pass can locate each one in
the YAML file.

The strategy half of a run (parallel degrees, recompute, precision) is not a
model fact: such a key is refused like any unknown key, and a run's precision
keys are named with where a run's precision belongs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from pipeline.spec.problems import FieldPath, dotted

T = TypeVar("T")

CODES: Dict[str, str] = {
    "spec.not-a-mapping": "A spec, a vision tower, an op-count table or an activations record must be a mapping.",
    "spec.unknown-key": "A key the model spec does not define; a run's strategy and precision belong elsewhere.",
    "spec.required": "A required field is missing: a spec needs hidden_size, num_hidden_layers, "
                     "num_attention_heads and vocab_size; a tower needs hidden_size, num_hidden_layers and "
                     "num_attention_heads.",
    "spec.not-integer": "An integer field holds a boolean, a float (even 4096.0) or a string; write the integer.",
    "spec.too-large": "An integer field holds a number beyond 2**63 - 1 in size, larger than any count or width.",
    "spec.not-number": "A number field holds a boolean or a string; write the number.",
    "spec.not-finite": "A number field holds NaN, an infinity or an integer beyond a float's range; a finite "
                       "number is required.",
    "spec.not-boolean": "A flag holds something other than true or false.",
    "spec.not-string": "A name field holds something other than a string.",
    "spec.dtype": "torch_dtype names none of the dtypes a checkpoint's weights are saved in (bfloat16, float16, float32, ...).",
    "spec.not-a-list": "A list field (layers, layer_types) holds something other than a non-empty list.",
    "spec.negative": "A count or size is negative.",
    "spec.not-positive": "A field that must be positive is zero or negative.",
    "spec.share-above-one": "A share of FLOPs is above 1.",
    "spec.kv-heads-divide": "num_attention_heads is not a multiple of num_key_value_heads.",
    "spec.head-dim-divide": "head_dim is not declared and hidden_size is not a multiple of num_attention_heads.",
    "spec.vision-head-divide": "A vision tower's hidden_size is not a multiple of its num_attention_heads; a tower "
                               "states no head_dim, so its head width must derive from them.",
    "spec.experts-per-tok-without-experts": "num_experts_per_tok is set but num_experts is not.",
    "spec.experts-per-tok-above": "num_experts_per_tok is larger than num_experts.",
    "spec.first-k-dense-above": "first_k_dense_replace is larger than num_hidden_layers.",
    "spec.moe-width": "Routed experts are declared but no feed-forward width resolves for them.",
    "spec.shared-expert-width": "Shared experts are declared but no feed-forward width resolves for them.",
    "spec.shared-without-count": "A shared expert's width or gate is stated but num_shared_experts is not (or 0).",
    "spec.linear-partial": "Some linear_* (gated DeltaNet) fields are stated but not all five.",
    "spec.layer-kind": "A layer group does not name its kind, or op counts or activations are keyed by "
                       "something other than a kind's name.",
    "spec.layer-count": "A layer group's count is zero; leave the group out instead.",
    "spec.mtp-order": "A body layer group follows an MTP group; MTP layers come last.",
    "spec.body-layer-count": "The body groups of layers do not add up to num_hidden_layers.",
    "spec.mtp-layer-count": "The MTP groups of layers do not add up to mtp_depth.",
    "spec.vision-mtp": "A vision tower's layers mark MTP layers; a tower has none.",
    "spec.op-unknown": "An op-count table names an op that is not one of the ten.",
    "spec.op-missing": "An op-count table leaves an op out; declare 0 for an op the layer does not run.",
    "spec.activations-pair": "An activations record states one field of a pair without the other.",
    "spec.activations-kind": "activations names a kind that no group of layers has.",
    "spec.active-above-total": "parameters.active is larger than parameters.total.",
    "spec.vision-above-total": "parameters.vision, the tower with its projector, is larger than parameters.total, "
                               "which holds it.",
    "spec.import-gaps": "A warning while the spec states import_gaps: modelspec import dropped config keys it did not "
                        "know (--allow-unknown), or read the config's model_type as another family's (--arch), so "
                        "nothing vouches that its layers are the model's; compare it with the reference (modelspec "
                        "reference) and remove import_gaps once they agree.",
    "spec.import-gaps-empty": "import_gaps states neither dropped keys nor a model_type.",
}


@dataclass(frozen=True)
class SpecIssue:
    """One reason a spec is refused.

    Attributes:
        path: The field path, e.g. ``("layers", 2, "count")``; ``()`` for the spec itself.
        code: A stable code of :data:`CODES`.
        message: What is wrong and what to write instead.
    """

    path: FieldPath
    code: str
    message: str


class ModelSpecError(ValueError):
    """A model spec is missing a required fact, holds a wrong type, or contradicts itself.

    Raised at parse time, by field path, so a producer learns what it failed to
    supply instead of a consumer inheriting a zero. One error carries every
    independent problem found, in :attr:`issues`; ``str(error)`` joins their
    messages.
    """

    def __init__(self, issues: SpecIssue | Sequence[SpecIssue], warnings: Sequence[SpecIssue] = ()):
        self.issues: Tuple[SpecIssue, ...] = (issues,) if isinstance(issues, SpecIssue) else tuple(issues)
        #: What was noticed on the way to the refusal and only warned about
        #: (a ``layer_types`` name the op profile lacks); not part of ``str()``.
        self.warnings: Tuple[SpecIssue, ...] = tuple(warnings)
        super().__init__("; ".join(issue.message for issue in self.issues))


def refuse(path: FieldPath, code: str, message: str) -> ModelSpecError:
    """Return a :class:`ModelSpecError` with one issue, for ``raise refuse(...)``."""
    return ModelSpecError(SpecIssue(tuple(path), code, message))


class _Issues:
    """Collects the issues of independent checks, so one bad field never hides another."""

    def __init__(self) -> None:
        self.found: List[SpecIssue] = []

    def take(self, parse: Callable[..., T], *args: Any) -> Optional[T]:
        """Return ``parse(*args)``, or ``None`` after recording the issues it raised."""
        try:
            return parse(*args)
        except ModelSpecError as error:
            self.found.extend(error.issues)
            return None

    def add(self, path: FieldPath, code: str, message: str) -> None:
        """Record one issue."""
        self.found.append(SpecIssue(tuple(path), code, message))

    def raise_if_any(self) -> None:
        """Raise one :class:`ModelSpecError` carrying every recorded issue.

        Raises:
            ModelSpecError: If any issue was recorded.
        """
        if self.found:
            raise ModelSpecError(self.found)


# ---- scalar coercers: each refuses by field path, never converts silently ----

#: The largest size an integer field holds, a signed 64-bit integer's: far above
#: any count or width, and small enough that every message can print it (Python
#: prints no integer of more than 4300 digits, CVE-2020-10735).
INT_LIMIT = 2**63 - 1


def _show(value: Any) -> str:
    """Render a value a spec holds for a message: its ``repr``, or its type when Python will not print it.

    A YAML hex literal of a few thousand digits is an integer beyond what
    ``repr`` prints; a message must never be the thing that crashes.
    """
    try:
        return repr(value)
    except (ValueError, RecursionError):
        return f"a value too large to print ({type(value).__name__})"


def _integer(value: Any, path: FieldPath) -> Optional[int]:
    """Return *value* as an ``int`` (``None`` stays ``None``), refusing anything that is not one.

    Raises:
        ModelSpecError: ``spec.not-integer`` for a bool, a float (integral or
            not) or a string; ``spec.not-finite`` for NaN or an infinity;
            ``spec.too-large`` beyond :data:`INT_LIMIT` either side of 0.
    """
    if value is None or (type(value) is int and abs(value) <= INT_LIMIT):
        return value
    raise _not_an_integer(value, path)


def _not_an_integer(value: Any, path: FieldPath) -> ModelSpecError:
    """The refusal of a value that is not an integer within :data:`INT_LIMIT`, saying what to write."""
    name = dotted(path)
    if isinstance(value, bool):
        return refuse(path, "spec.not-integer",
                      f"{name} must be a whole number, got {str(value).lower()}; a count is not true or false")
    if isinstance(value, int):
        return refuse(path, "spec.too-large", f"{name} is an integer of {value.bit_length()} bits; "
                                              "no count or width is beyond 2**63 - 1")
    if isinstance(value, float):
        if not math.isfinite(value):
            return refuse(path, "spec.not-finite", f"{name} must be a finite whole number, got {value!r}")
        if value.is_integer():
            return refuse(path, "spec.not-integer",
                          f"{name} must be an integer, got the float {value!r}; write {int(value)}")
        return refuse(path, "spec.not-integer", f"{name} must be a whole number, got {value!r}")
    whole = _whole_number_text(value)
    if whole is not None:
        return refuse(path, "spec.not-integer",
                      f"{name} must be an integer, got the string {value!r}; write {whole} without quotes")
    return refuse(path, "spec.not-integer", f"{name} must be an integer, got {_show(value)}")


def _whole_number_text(value: Any) -> Optional[int]:
    """Return the integer a string spells (``" 12"`` is 12), or ``None`` for anything else.

    ``int()`` itself decides, so a text that only looks numeric (``"²"``,
    ``"+-1"``) or that Python will not convert (more than 4300 digits) is not one.
    """
    if not isinstance(value, str):
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _count(value: Any, path: FieldPath) -> Optional[int]:
    """Return a non-negative ``int`` (``None`` stays ``None``).

    Raises:
        ModelSpecError: As :func:`_integer`, or ``spec.negative``.
    """
    count = _integer(value, path)
    if count is not None and count < 0:
        raise refuse(path, "spec.negative", f"{dotted(path)} must not be negative, got {count}")
    return count


def _number(value: Any, path: FieldPath) -> Optional[float]:
    """Return *value* as a finite ``float`` (``None`` stays ``None``).

    Raises:
        ModelSpecError: ``spec.not-number`` for a bool or a string,
            ``spec.not-finite`` for NaN, an infinity or an integer beyond a
            float's range.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise refuse(path, "spec.not-number", f"{dotted(path)} must be a number, got {_show(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise refuse(path, "spec.not-finite", f"{dotted(path)} is an integer beyond a float's range "
                                              "(about 1.8e308); a finite number is required") from None
    if not math.isfinite(number):
        raise refuse(path, "spec.not-finite", f"{dotted(path)} must be a finite number, got {value!r}")
    return number


def _positive_number(value: Any, path: FieldPath) -> Optional[float]:
    """Return a positive finite ``float``: a multiplier of a width, which at 0 or below leaves no width.

    Raises:
        ModelSpecError: As :func:`_number`, or ``spec.not-positive``.
    """
    number = _number(value, path)
    if number is not None and number <= 0:
        raise refuse(path, "spec.not-positive", f"{dotted(path)} must be positive, got {number!r}")
    return number


def _size(value: Any, path: FieldPath) -> Optional[float]:
    """Return a non-negative finite ``float``: bytes per token.

    Raises:
        ModelSpecError: As :func:`_number`, or ``spec.negative``.
    """
    size = _number(value, path)
    if size is not None and size < 0:
        raise refuse(path, "spec.negative", f"{dotted(path)}: bytes per token cannot be negative, got {size!r}")
    return size


def _flag(value: Any, path: FieldPath) -> Optional[bool]:
    """Return *value* if it is a ``bool`` (or ``None``).

    Raises:
        ModelSpecError: ``spec.not-boolean`` otherwise.
    """
    if value is None or isinstance(value, bool):
        return value
    raise refuse(path, "spec.not-boolean", f"{dotted(path)} must be true or false, got {_show(value)}")


def _text(value: Any, path: FieldPath) -> Optional[str]:
    """Return *value* if it is a non-empty ``str`` (or ``None``).

    Raises:
        ModelSpecError: ``spec.not-string`` otherwise.
    """
    if value is None or (isinstance(value, str) and value):
        return value
    raise refuse(path, "spec.not-string", f"{dotted(path)} must be a non-empty string, got {_show(value)}")


def _mapping(value: Any, path: FieldPath, what: str) -> Mapping[Any, Any]:
    """Return *value* if it is a mapping.

    Raises:
        ModelSpecError: ``spec.not-a-mapping``, naming *what* it should map.
    """
    if isinstance(value, Mapping):
        return value
    name = dotted(path) or "a model spec"
    raise refuse(path, "spec.not-a-mapping", f"{name} must be a mapping of {what}, got {_show(value)}")


def _unknown_keys(data: Mapping[Any, Any], known: Iterable[str], path: FieldPath, issues: _Issues,
                  explain: Callable[[Any], str], code: str = "spec.unknown-key") -> None:
    """Record *code* for every key of *data* not in *known*, with the message ``explain(key)``."""
    known = set(known)
    for key in data:
        if key not in known:
            issues.add(path + (key,), code, explain(key))


# ---- OpCounts -----------------------------------------------------------------

@dataclass(frozen=True)
class OpCounts:
    """How many times one layer of a kind runs each op the cost model prices, per forward pass.

    The cost models price a layer as a count times a per-op cost; this is the
    count half, declared as data per layer *kind* (an encoder-decoder, or a
    stack mixing linear and full attention, runs different ops in different
    layers). Every op is required: a count left out would be priced as zero,
    so a layer that does not run an op declares ``0``. Parameter casts are not
    counted: whether parameters are cast depends on optimizer sharding, which
    is strategy, so a consumer derives them from ``attMM`` and ``ffMM``.

    The field names are the op names of the cost model's op vector, spelled as
    op profiles and census records spell them. Each count is a number of calls
    per layer per forward pass (a count, not FLOPs).
    """

    # pylint: disable=invalid-name
    attMM: int      # attention projections (q, k, v, o, MLA's down/up projections)
    attBMM: int     # attention batched matmuls: QK^T and AV
    ffMM: int       # feed-forward projections, e.g. 3 for a gated MLP
    softmax: int    # attention's and a router's softmax
    dropout: int    # dropout calls, active in training
    normOp: int     # norms: pre-norms, per-head q/k norms, MLA's latent norms
    gather: int     # tensor-parallel gathers
    headCast: int   # casts of the per-head score tensor
    ffAct: int      # feed-forward activation functions
    linrec: int     # linear-attention state updates (gated DeltaNet's delta rule)
    # pylint: enable=invalid-name

    @classmethod
    def names(cls) -> Tuple[str, ...]:
        """The ten op names, in declaration order."""
        return tuple(spec_field.name for spec_field in fields(cls))

    @classmethod
    def from_dict(cls, data: Any, where: FieldPath = ("ops",)) -> "OpCounts":
        """Build the vector from ``{op name: count}``, one entry per op.

        Args:
            data: The mapping, e.g. ``{"attMM": 4, "attBMM": 2, ...}``.
            where: The field path of the mapping, for messages.

        Raises:
            ModelSpecError: ``spec.not-a-mapping``, ``spec.op-unknown``,
                ``spec.op-missing``, or a count that is not a non-negative
                integer; every problem of the table at once.
        """
        data = _mapping(data, where, "op names to counts")
        names = cls.names()
        issues = _Issues()
        _unknown_keys(data, names, where, issues,
                      lambda key: f"{dotted(where)} declares unknown op {_show(key)}; the ops are {list(names)}",
                      code="spec.op-unknown")
        missing = [name for name in names if name not in data]
        if missing:
            issues.add(where, "spec.op-missing",
                       f"{dotted(where)} is missing counts for {missing}; declare 0 for an op the layer does not run")
        counts = {name: issues.take(_count, data[name], where + (name,)) for name in names if name in data}
        for name, value in counts.items():
            if value is None and data[name] is None:
                issues.add(where + (name,), "spec.op-missing",
                           f"{dotted(where + (name,))} is null; declare 0 for an op the layer does not run")
        issues.raise_if_any()
        return cls(**counts)

    def to_dict(self) -> Dict[str, int]:
        """Return ``{op name: count}`` in declaration order."""
        return {name: getattr(self, name) for name in self.names()}


def ops_from_dict(data: Any, where: FieldPath = ("ops",)) -> Dict[str, OpCounts]:
    """Parse ``{layer kind: {op: count}}``, the serialised form of :attr:`ModelSpec.ops`.

    Raises:
        ModelSpecError: If *data* is not a non-empty mapping, or any kind's
            table is refused by :meth:`OpCounts.from_dict` (all of them reported).
    """
    data = _mapping(data, where, "layer kinds to their op counts")
    if not data:
        raise refuse(where, "spec.not-a-mapping",
                     f"{dotted(where)} must map at least one layer kind to its op counts; leave it out instead")
    return _per_kind(data, where, OpCounts.from_dict)


def _per_kind(data: Mapping[Any, Any], where: FieldPath, parse: Callable[[Any, FieldPath], T]) -> Dict[str, T]:
    """Parse ``{layer kind: record}`` with ``parse(record, path)``, refusing a key that is no kind's name.

    Raises:
        ModelSpecError: ``spec.layer-kind`` for a key that is not a non-empty
            string (``1:`` would otherwise silently become the kind ``"1"``),
            and every record's problems, all at once.
    """
    issues = _Issues()
    parsed: Dict[str, T] = {}
    for kind, record in data.items():
        if isinstance(kind, str) and kind:
            parsed[kind] = issues.take(parse, record, where + (kind,))
        else:
            issues.add(where + (kind,), "spec.layer-kind",
                       f"{dotted(where)} is keyed by {_show(kind)}, which is not a layer kind's name; "
                       "write the kind as text")
    issues.raise_if_any()
    return parsed


# ---- LayerGroup -----------------------------------------------------------------

_GROUP_KEYS = ("kind", "count", "mtp")


@dataclass(frozen=True)
class LayerGroup:
    """Consecutive layers of one kind, in model order.

    A model's stack is a tuple of groups: DeepSeek-V3 is 3 ``dense`` layers,
    58 ``moe`` layers and 1 MTP ``moe`` layer; Qwen3.5 alternates groups of
    ``linear_attention`` and ``full_attention`` layers. ``kind`` names a kind of
    the model's op profile; ``count`` is a number of layers (positive); MTP
    (multi-token prediction) layers are body-shaped layers after the body,
    marked so that nothing has to count them from the end.
    """

    kind: str
    count: int
    mtp: bool = False

    @classmethod
    def from_dict(cls, data: Any, where: FieldPath = ("layers", 0)) -> "LayerGroup":
        """Build a group from ``{kind, count, mtp}``, refusing anything else.

        Raises:
            ModelSpecError: An unknown key, a missing kind, a count that is not
                a positive integer (``spec.layer-count`` for 0), or an ``mtp``
                that is not a boolean; every problem of the group at once.
        """
        data = _mapping(data, where, "kind, count and mtp")
        issues = _Issues()
        _unknown_keys(data, _GROUP_KEYS, where, issues,
                      lambda key: f"{dotted(where)} declares unknown key {_show(key)}; the keys are kind, count, mtp")
        kind = data.get("kind")
        if not isinstance(kind, str) or not kind:
            issues.add(where + ("kind",), "spec.layer-kind",
                       f"{dotted(where + ('kind',))} must name a layer kind of the op profile, got {_show(kind)}")
        if data.get("count") is None:
            issues.add(where + ("count",), "spec.required", f"{dotted(where + ('count',))} is required")
        count = issues.take(_count, data.get("count"), where + ("count",))
        if count == 0:
            issues.add(where + ("count",), "spec.layer-count",
                       f"{dotted(where + ('count',))} must be positive; leave out a group with no layers")
        mtp = issues.take(_flag, data.get("mtp", False), where + ("mtp",))
        issues.raise_if_any()
        return cls(kind=kind, count=count, mtp=bool(mtp))

    def to_dict(self) -> Dict[str, Any]:
        """Return ``{kind, count}``, plus ``mtp: true`` only for an MTP group."""
        out: Dict[str, Any] = {"kind": self.kind, "count": self.count}
        if self.mtp:
            out["mtp"] = True
        return out


def layers_from_list(data: Any, where: FieldPath = ("layers",)) -> Tuple[LayerGroup, ...]:
    """Parse a non-empty list of groups, the serialised form of :attr:`ModelSpec.layers`.

    Raises:
        ModelSpecError: ``spec.not-a-list``, or every group's problems.
    """
    if not isinstance(data, (list, tuple)) or not data:
        raise refuse(where, "spec.not-a-list",
                     f"{dotted(where)} must list at least one group of {{kind, count}}, got {_show(data)}")
    issues = _Issues()
    groups = tuple(issues.take(LayerGroup.from_dict, group, where + (index,)) for index, group in enumerate(data))
    issues.raise_if_any()
    return groups


def check_layer_counts(layers: Sequence[LayerGroup], num_layers: int, mtp_depth: int,
                       where: FieldPath = ("layers",)) -> None:
    """Raise unless *layers* covers exactly the body and then the MTP layers.

    Args:
        layers: The groups, in model order.
        num_layers: The number of body layers the model declares (``num_hidden_layers``).
        mtp_depth: The number of MTP layers it declares.
        where: The field path the groups were read from, for messages.

    Raises:
        ModelSpecError: ``spec.mtp-order`` for each body group after an MTP
            group, ``spec.body-layer-count`` and ``spec.mtp-layer-count`` when
            a part does not sum to its declared count.
    """
    issues = _Issues()
    seen_mtp = False
    for index, group in enumerate(layers):
        if seen_mtp and not group.mtp:
            issues.add(where + (index,), "spec.mtp-order",
                       f"{dotted(where + (index,))} is a body group after an MTP group; MTP layers come last")
        seen_mtp = seen_mtp or group.mtp
    body = sum(group.count for group in layers if not group.mtp)
    mtp = sum(group.count for group in layers if group.mtp)
    if body != num_layers:
        issues.add(where, "spec.body-layer-count",
                   f"{dotted(where)} lists {body} body layers, but num_hidden_layers is {num_layers}")
    if mtp != mtp_depth:
        issues.add(where, "spec.mtp-layer-count",
                   f"{dotted(where)} lists {mtp} MTP layers, but mtp_depth is {mtp_depth}")
    issues.raise_if_any()


# ---- KindActivations --------------------------------------------------------------

# The record's fields a census states in pairs, whole or not at all: what a layer
# keeps under selective activation checkpointing (and its TP part), the shares of
# its matmul FLOPs that recompute, and what it keeps per op (and its TP part).
_PAIRS = (("selective", "selective_tp"), ("selective_attention_mm", "selective_ffn_mm"), ("ops", "ops_tp"))
_SHARES = _PAIRS[1]
_BY_OP = _PAIRS[2]
_ACTIVATION_REQUIRED = ("saved", "saved_tp", "working", "working_tp", "seq_length")


@dataclass(frozen=True)
class KindActivations:
    """What one layer of a kind keeps for its backward, and the most its backward holds, per token.

    Sizes are bytes per token at micro-batch 1, as a census measures them on one
    layer at ``seq_length`` tokens: ``saved``/``working`` is the part no
    tensor-parallel rank splits, ``saved_tp``/``working_tp`` the part it splits
    (a layer at TP 2 holds half of it). The backward's working set leaves out
    parameters and their gradients. ``selective``/``selective_tp`` are what the
    layer keeps under selective activation checkpointing;
    ``selective_attention_mm``/``selective_ffn_mm`` the shares (0 to 1) of the
    FLOPs of its attention projections and of its other matmuls that recompute;
    ``ops``/``ops_tp`` map each op of :class:`OpCounts` (and ``other``, for the
    layer's own code) to the bytes per token it keeps, the two parts of
    ``saved``/``saved_tp``. Each pair is stated whole or not at all.
    """

    saved: float
    saved_tp: float
    working: float
    working_tp: float
    seq_length: int
    selective: Optional[float] = None
    selective_tp: Optional[float] = None
    selective_attention_mm: Optional[float] = None
    selective_ffn_mm: Optional[float] = None
    ops: Optional[Mapping[str, float]] = None
    ops_tp: Optional[Mapping[str, float]] = None

    @classmethod
    def from_dict(cls, data: Any, where: FieldPath = ("output_activations",)) -> "KindActivations":
        """Build a record, refusing an unknown or missing key, a half pair, a negative size or a share above 1.

        Raises:
            ModelSpecError: Every problem of the record at once.
        """
        data = _mapping(data, where, "the activations record's fields to their values")
        names = tuple(spec_field.name for spec_field in fields(cls))
        issues = _Issues()
        _unknown_keys(data, names, where, issues,
                      lambda key: f"{dotted(where)} declares unknown key {_show(key)}; the keys are {list(names)}")
        for name in _ACTIVATION_REQUIRED:
            if data.get(name) is None:
                issues.add(where + (name,), "spec.required", f"{dotted(where + (name,))} is required")
        for pair in _PAIRS:
            if len({data.get(name) is None for name in pair}) > 1:
                issues.add(where, "spec.activations-pair",
                           f"{dotted(where)} states one of {list(pair)} without the other; state both or neither")
        values: Dict[str, Any] = {}
        for name in names:
            if name not in data:
                continue
            path = where + (name,)
            if name == "seq_length":
                values[name] = issues.take(_positive, data[name], path)
            elif name in _BY_OP:
                values[name] = None if data[name] is None else issues.take(_op_bytes, data[name], path)
            elif name in _SHARES:
                values[name] = issues.take(_share, data[name], path)
            else:
                values[name] = issues.take(_size, data[name], path)
        issues.raise_if_any()
        return cls(**values)

    def to_dict(self) -> Dict[str, Any]:
        """Return the record as a plain mapping, unstated fields omitted."""
        out: Dict[str, Any] = {}
        for spec_field in fields(self):
            value = getattr(self, spec_field.name)
            if value is not None:
                out[spec_field.name] = dict(value) if spec_field.name in _BY_OP else value
        return out


def _share(value: Any, path: FieldPath) -> Optional[float]:
    """Return a share of FLOPs, a finite ``float`` from 0 to 1 (``None`` stays ``None``).

    Raises:
        ModelSpecError: As :func:`_number`, ``spec.negative`` below 0 or
            ``spec.share-above-one`` above 1.
    """
    share = _number(value, path)
    if share is not None and share < 0:
        raise refuse(path, "spec.negative", f"{dotted(path)} is a share of FLOPs and cannot be negative, got {share!r}")
    if share is not None and share > 1:
        raise refuse(path, "spec.share-above-one",
                     f"{dotted(path)} is a share of FLOPs and cannot exceed 1, got {share!r}")
    return share


def _positive(value: Any, path: FieldPath) -> Optional[int]:
    """Return a positive ``int``.

    Raises:
        ModelSpecError: As :func:`_integer`, or ``spec.not-positive``.
    """
    number = _integer(value, path)
    if number is not None and number <= 0:
        raise refuse(path, "spec.not-positive", f"{dotted(path)} must be positive, got {number}")
    return number


def _op_bytes(data: Any, where: FieldPath) -> Dict[str, float]:
    """Parse ``{op: bytes per token}`` over the ops of :class:`OpCounts` and ``other``.

    Raises:
        ModelSpecError: An op that is not one of them, or a size that is not a
            non-negative finite number.
    """
    known = OpCounts.names() + ("other",)
    data = _mapping(data, where, f"ops of {list(known)} to bytes per token")
    issues = _Issues()
    _unknown_keys(data, known, where, issues,
                  lambda key: f"{dotted(where)} names unknown op {_show(key)}; the ops are {list(known)}",
                  code="spec.op-unknown")
    sizes = {str(op): issues.take(_size, size, where + (op,)) for op, size in data.items() if op in known}
    issues.raise_if_any()
    return sizes


def activations_from_dict(data: Any, where: FieldPath = ("activations",)) -> Dict[str, KindActivations]:
    """Parse a spec's ``activations``: ``{layer kind: KindActivations record}``.

    Raises:
        ModelSpecError: If *data* is not a mapping, or any record is refused
            (every record's problems at once).
    """
    data = _mapping(data, where, "layer kinds to their activations records")
    return _per_kind(data, where, KindActivations.from_dict)


# ---- VisionSpec -------------------------------------------------------------------

_TOWER_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads")


@dataclass(frozen=True)
class VisionSpec:
    """The vision tower of a multimodal model.

    Nested under ``vision`` rather than flattened with a prefix, so a consumer
    can ask whether there is a tower at all. Widths are channels, counts are
    layers and heads. ``max_position_embeddings`` is the encoder's sequence
    length in merged visual tokens, which depends on the images a dataset
    serves and is therefore an input, not a property of the checkpoint.
    ``pooling_head`` says whether an attention-pooling head follows the
    blocks (SigLIP's ``vision_use_head``); ``projector_bias`` whether the projector's linears hold biases
    (Mistral 3's ``multimodal_projector_bias``); ``num_deepstack_mergers`` how many deepstack patch mergers feed
    blocks' outputs to the language model (Qwen3-VL's ``deepstack_visual_indexes``; 0 or more);
    ``projector_input_dim`` and ``projector_output_dim`` the widths of an adapter MLP between the blocks and the
    projector (Llama 4's pixel-shuffle ``vision_adapter``); ``max_num_tiles`` and ``num_aspect_ratios`` the tiles an
    image is cut into at most and the aspect ratios the tower's tile tables have rows for (Mllama's
    ``max_num_tiles`` and ``len(supported_aspect_ratios)``). ``layers`` is the tower's stack, groups of kinds of
    the ``vision`` op profile; without it the tower is one group of the profile's default kind.
    """

    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    name: str = "vision"
    intermediate_size: Optional[int] = None
    out_hidden_size: Optional[int] = None
    projector_input_dim: Optional[int] = None
    projector_output_dim: Optional[int] = None
    patch_size: Optional[int] = None
    in_channels: Optional[int] = None
    temporal_patch_size: Optional[int] = None
    spatial_merge_size: Optional[int] = None
    num_position_embeddings: Optional[int] = None
    num_deepstack_mergers: Optional[int] = None
    max_num_tiles: Optional[int] = None
    num_aspect_ratios: Optional[int] = None
    max_position_embeddings: Optional[int] = None
    pooling_head: Optional[bool] = None
    projector_bias: Optional[bool] = None
    layers: Optional[Tuple[LayerGroup, ...]] = None

    @classmethod
    def keys(cls) -> Tuple[str, ...]:
        """The keys a tower states, in serialisation order."""
        return tuple(spec_field.name for spec_field in fields(cls))

    @classmethod
    def from_dict(cls, data: Any, where: FieldPath = ("vision",)) -> "VisionSpec":
        """Build a tower, refusing an unknown key (the reference dropped it: a dropped key is lost data).

        Raises:
            ModelSpecError: Every problem of the tower at once: unknown keys,
                missing required fields, values of the wrong type.
        """
        data = _mapping(data, where, "the tower's fields to their values")
        issues = _Issues()
        keys = cls.keys()
        _unknown_keys(data, keys, where, issues,
                      lambda key: f"{dotted(where)} declares unknown key {_show(key)}; a tower states {list(keys)}")
        values: Dict[str, Any] = {}
        for key in keys:
            if data.get(key) is None:
                continue
            path = where + (key,)
            if key == "name":
                values[key] = issues.take(_text, data[key], path)
            elif key == "layers":
                values[key] = issues.take(layers_from_list, data[key], path)
            elif key in ("pooling_head", "projector_bias"):
                values[key] = issues.take(_flag, data[key], path)
            elif key == "num_deepstack_mergers":
                values[key] = issues.take(_count, data[key], path)
            else:
                values[key] = issues.take(_positive, data[key], path)
        for key in _TOWER_REQUIRED:
            if data.get(key) is None:
                issues.add(where + (key,), "spec.required", f"{dotted(where + (key,))} is required")
        issues.raise_if_any()
        return cls(**values)

    def problems(self, where: FieldPath = ("vision",)) -> List[SpecIssue]:
        """Return why the tower cannot be costed: non-positive required fields, heads that do not split the
        width, MTP groups, a stack that does not add up."""
        issues = _Issues()
        for key in _TOWER_REQUIRED:
            if getattr(self, key) <= 0:
                issues.add(where + (key,), "spec.not-positive",
                           f"{dotted(where + (key,))} must be positive, got {getattr(self, key)}")
        if self.hidden_size > 0 and self.num_attention_heads > 0 and self.hidden_size % self.num_attention_heads:
            issues.add(where + ("num_attention_heads",), "spec.vision-head-divide",
                       f"{dotted(where + ('hidden_size',))} ({self.hidden_size}) is not a multiple of "
                       f"{dotted(where + ('num_attention_heads',))} ({self.num_attention_heads}), so no head width "
                       "derives from them (a tower states no head_dim); state the tower's head count as its "
                       "vision_config gives it")
        if self.layers is not None:
            for index, group in enumerate(self.layers):
                if group.mtp:
                    issues.add(where + ("layers", index, "mtp"), "spec.vision-mtp",
                               f"{dotted(where + ('layers', index))} marks MTP layers; a tower has none")
            # The MTP groups are refused above; counting them again as MTP layers
            # against a depth a tower does not have would report one fault twice.
            body = tuple(group for group in self.layers if not group.mtp)
            issues.take(check_layer_counts, body, self.num_hidden_layers, 0, where + ("layers",))
        return issues.found

    def validate(self) -> "VisionSpec":
        """Return *self* if the tower can be costed.

        Raises:
            ModelSpecError: With every issue of :meth:`problems`.
        """
        found = self.problems()
        if found:
            raise ModelSpecError(found)
        return self

    def to_dict(self) -> Dict[str, Any]:
        """Return the tower as a plain mapping, unset fields omitted."""
        out: Dict[str, Any] = {}
        for key in self.keys():
            value = getattr(self, key)
            if value is not None:
                out[key] = [group.to_dict() for group in value] if key == "layers" else value
        return out


# ---- ModelSpec --------------------------------------------------------------------

@dataclass(frozen=True)
class StatedParameters:
    """A model's published parameter count, as its card or paper states it, part by priced part.

    ``check`` counts the spec's parameters from its profile's weight
    inventories and refuses a spec whose count differs in any part stated, and
    one that leaves out a part its model has (an MoE model's ``active``, an
    MTP layer's ``mtp``, a tower's ``vision``): so an edit that changes the
    model's size, drops its MTP layer or its tower, without changing these
    figures fails the gate.

    Attributes:
        total: Every parameter, MTP layers apart, a tied head counted once.
        active: Parameters a token passes through, routed experts at top-k
            (a MoE model's "activated" figure); absent for a dense model,
            whose active count is its total.
        mtp: The MTP layers with their own extras, apart from ``total``;
            absent for a model without MTP layers.
        vision: The vision tower with its projector, inside ``total``; absent
            for a model without a tower.
    """

    total: int
    active: Optional[int] = None
    mtp: Optional[int] = None
    vision: Optional[int] = None

    #: The parts a record states, in the order a spec file writes them.
    KEYS = ("total", "active", "mtp", "vision")

    @classmethod
    def from_dict(cls, data: Any, where: FieldPath = ("parameters",)) -> "StatedParameters":
        """Build the record, refusing unknown keys, a missing total, and an active count or a tower above the total.

        Raises:
            ModelSpecError: Every problem of the record at once.
        """
        data = _mapping(data, where, "total (and active, mtp, vision, for the parts a model has) to parameter counts")
        issues = _Issues()
        _unknown_keys(data, cls.KEYS, where, issues,
                      lambda key: f"{dotted(where)} declares unknown key {_show(key)}; it states "
                                  f"{', '.join(cls.KEYS[:-1])} and {cls.KEYS[-1]}")
        values = {key: issues.take(_positive, data[key], where + (key,))
                  for key in cls.KEYS if data.get(key) is not None}
        if "total" not in values and data.get("total") is None:
            issues.add(where + ("total",), "spec.required", f"{dotted(where + ('total',))} is required")
        for key, what in (("active", "a token cannot pass through more parameters than the model has"),
                          ("vision", "the tower is part of the total")):
            if values.get("total") and values.get(key) and values[key] > values["total"]:
                issues.add(where + (key,), f"spec.{key}-above-total",
                           f"{dotted(where + (key,))} is {values[key]:,}, above the total of "
                           f"{values['total']:,}; {what}")
        issues.raise_if_any()
        return cls(**values)

    def to_dict(self) -> Dict[str, int]:
        """The record as a spec file states it; an absent part is left out."""
        return {key: getattr(self, key) for key in self.KEYS if getattr(self, key) is not None}


@dataclass(frozen=True)
class ImportGaps:
    """What ``modelspec import`` could not vouch for when it wrote the spec.

    A config imported with ``--allow-unknown`` loses the keys no rule reads,
    and one imported with ``--arch`` is read as another family than its own
    model type: either way the spec may leave out a block the dropped keys
    described, so the importer writes no ``parameters`` figure, and ``check``
    warns (``spec.import-gaps``) for as long as the spec states this record.

    Attributes:
        dropped: The config keys the import left out, dotted (``text_config.frobnicate``).
        model_type: The config's own model type, read as the spec's ``arch`` (``--arch``).
    """

    dropped: Tuple[str, ...] = ()
    model_type: Optional[str] = None

    @classmethod
    def from_dict(cls, data: Any, where: FieldPath = ("import_gaps",)) -> "ImportGaps":
        """Build the record, refusing unknown keys, a list that is not of key names, and an empty record.

        Raises:
            ModelSpecError: Every problem of the record at once.
        """
        data = _mapping(data, where, "dropped (the config keys left out) and model_type (the config's own)")
        issues = _Issues()
        _unknown_keys(data, ("dropped", "model_type"), where, issues,
                      lambda key: f"{dotted(where)} declares unknown key {_show(key)}; it states dropped and "
                                  "model_type")
        dropped = data.get("dropped") or []
        if not isinstance(dropped, list) or not all(isinstance(key, str) and key for key in dropped):
            issues.add(where + ("dropped",), "spec.not-string",
                       f"{dotted(where + ('dropped',))} must list config key names, got {_show(dropped)}")
            dropped = []
        model_type = issues.take(_text, data.get("model_type"), where + ("model_type",))
        if not dropped and model_type is None and not issues.found:
            issues.add(where, "spec.import-gaps-empty",
                       f"{dotted(where)} states neither dropped keys nor a model_type; remove it")
        issues.raise_if_any()
        return cls(tuple(dropped), model_type)

    def to_dict(self) -> Dict[str, Any]:
        """The record as a spec file states it, empty parts left out."""
        return {**({"dropped": list(self.dropped)} if self.dropped else {}),
                **({"model_type": self.model_type} if self.model_type is not None else {})}

    def warning(self, where: FieldPath = ("import_gaps",)) -> SpecIssue:
        """The ``spec.import-gaps`` warning ``check`` reports while the spec states the record."""
        gaps = []
        if self.dropped:
            gaps.append(f"dropped the config keys {', '.join(self.dropped)} (--allow-unknown)")
        if self.model_type is not None:
            gaps.append(f"read model_type {self.model_type!r} as another family's (--arch)")
        return SpecIssue(where, "spec.import-gaps",
                         f"modelspec import {' and '.join(gaps)}, so nothing vouches that this spec's layers are "
                         "the model's; compare it with the reference (modelspec reference), then remove "
                         "import_gaps")


# The keys that state a run's precision, not the model's: refused like any
# unknown key, but named with the place a run's precision is read from.
RUN_PRECISION_KEYS = ("compute_dtype", "param_init_type")
_RUN_PRECISION_HINT = ("{key} states a run's precision, not a model fact; a run takes its precision from its "
                       "execution spec (fsdp_config.mix_precision.param_dtype, else model_init_dtype), and the "
                       "model states only the dtype its checkpoint is saved in, as torch_dtype")

_REQUIRED = ("hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size")
_FLAGS = ("attn_output_gate", "tie_word_embeddings", "qk_norm", "qkv_bias", "o_bias", "mlp_bias", "norm_bias",
          "head_bias", "shared_expert_gate")
_NUMBERS = ("ffn_dim_multiplier",)
# The counts for which 0 is a real value: no shared expert, no leading dense layer, no MTP layer.
_ZERO_ALLOWED = ("num_shared_experts", "first_k_dense_replace", "mtp_depth")
# The spec fields of a gated-DeltaNet (linear attention) layer, stated all or none.
LINEAR_FIELDS = ("linear_num_key_heads", "linear_key_head_dim", "linear_num_value_heads",
                 "linear_value_head_dim", "linear_conv_kernel_dim")
# The spec fields of a state-space (Mamba, Mamba2) mixer: the state per channel, the conv taps, the mixer's width
# over hidden_size or in channels, Mamba2's heads and B/C groups, Mamba 1's rank of the time-step projection.
SSM_FIELDS = ("ssm_state_size", "ssm_conv_kernel", "ssm_expand", "ssm_intermediate_size", "ssm_num_heads", "ssm_n_groups",
              "ssm_dt_rank")


def unknown_key_message(key: Any) -> str:
    """The message for a top-level key a model spec does not define.

    A run's precision key (:data:`RUN_PRECISION_KEYS`) gets the place a run's
    precision belongs; any other key is told that a spec states the model only.
    """
    if key in RUN_PRECISION_KEYS:
        return f"unknown model spec key {_show(key)}: " + _RUN_PRECISION_HINT.format(key=key)
    return (f"unknown model spec key {_show(key)}: a model spec states the model only (its fields are in the schema, "
            "schemas/model-spec.schema.json), and a run's strategy, such as its parallel degrees or recompute, "
            "belongs in its execution spec")


@dataclass(frozen=True)
class ModelSpec:
    """What is being trained, independent of how it is parallelised.

    The four required fields (``hidden_size``, ``num_hidden_layers``,
    ``num_attention_heads``, ``vocab_size``) are the ones every cost path reads;
    the rest are optional because a dense model genuinely has no expert count,
    and ``None`` says so without claiming the count is zero. Names follow the
    Hugging Face ``config.json`` keys. Widths are channels (elements per
    token), counts are layers, heads or experts.

    Attributes:
        arch: The op profile that prices the model (``op_profiles/<arch>.yaml``);
            inferred from ``name`` when absent.
        ops: Per-kind op counts replacing the profile's own; kinds must be the profile's.
        layers: The layer stack, groups of the profile's kinds, body first and
            MTP layers last; derived from ``layer_types``,
            ``first_k_dense_replace`` and ``mtp_depth`` when absent.
        layer_types: Each body layer's kind, as a hybrid config lists them
            (Qwen3.5's ``linear_attention``/``full_attention``).
        mtp_depth: Multi-token-prediction layers after the body
            (DeepSeek-V3's ``num_nextn_predict_layers``, Qwen3.5's ``mtp_num_hidden_layers``).
        head_dim: Per-head width when it is not ``hidden_size / num_attention_heads``.
        qk_norm: Whether attention normalises each head's queries and keys (Qwen3's ``q_norm``/``k_norm``).
        attn_output_gate: Whether the query projection also produces an output
            gate, doubling its width (Qwen3.5).
        qkv_bias, o_bias, mlp_bias, norm_bias: Whether those projections or norms hold a bias.
        head_bias: Whether the output head (lm_head) holds a bias (PhiMoE's lm_head_bias).
        layer_norms: How many norms a layer holds, per-head q/k norms apart.
        shared_expert_gate: Whether a MoE layer gates its shared expert's output (Qwen2-MoE).
        moe_latent_size: The width routed experts work in when a MoE block projects into a latent space and
            back around them (NemotronH's fc1_latent_proj, fc2_latent_proj); absent: the experts read hidden_size.
        sliding_window: Tokens a sliding-attention layer attends to.
        attention_chunk_size: Tokens of the chunks a chunked-attention layer attends within (Llama 4's
            ``attention_chunk_size``: each query sees the keys of its own chunk, up to itself).
        type_vocab_size: Rows of an encoder's token-type (segment) embedding
            table (RoBERTa's ``token_type_embeddings``).
        relative_attention_num_buckets: Rows of T5's relative-attention bias
            table (one per distance bucket, a column per head).
        parameters: The model's published parameter count (:class:`StatedParameters`),
            which ``check`` holds the counted one to.
        import_gaps: What the import that wrote the spec could not vouch for
            (:class:`ImportGaps`); ``check`` warns while it is stated.
        torch_dtype: The dtype the checkpoint's weights are saved in (``bfloat16``), without ``torch.``.
        linear_*: Gated DeltaNet dimensions for the layers a linear kind prices (:data:`LINEAR_FIELDS`).
        ssm_*: State-space mixer dimensions for the layers an ssm kind prices (:data:`SSM_FIELDS`): ``ssm_state_size``
            (N, the state per channel), ``ssm_conv_kernel`` (the depthwise conv's taps), ``ssm_expand`` (the
            mixer's width is ``ssm_expand * hidden_size``) or ``ssm_intermediate_size`` (its width in channels, when
            the family reads one: Mamba 1 honours a stated ``intermediate_size``), ``ssm_num_heads`` and ``ssm_n_groups`` (Mamba2's heads
            and its groups of B and C), ``ssm_dt_rank`` (Mamba 1's time-step rank, x_proj to dt_proj).
        activations: Per-kind census records (:class:`KindActivations`); the
            memory model prices a layer of a kind stated here with them.
        output_activations: The same record for the output layer (final norm, output projection, loss).
        vision: The vision tower, if any.
    """

    name: str
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    vocab_size: int

    num_key_value_heads: Optional[int] = None
    head_dim: Optional[int] = None
    intermediate_size: Optional[int] = None
    max_position_embeddings: Optional[int] = None

    num_experts: Optional[int] = None
    num_experts_per_tok: Optional[int] = None
    num_shared_experts: Optional[int] = None
    moe_intermediate_size: Optional[int] = None
    shared_expert_intermediate_size: Optional[int] = None
    moe_latent_size: Optional[int] = None
    first_k_dense_replace: Optional[int] = None

    mtp_depth: Optional[int] = None

    multiple_of: Optional[int] = None
    ffn_dim_multiplier: Optional[float] = None
    kv_lora_rank: Optional[int] = None
    q_lora_rank: Optional[int] = None
    qk_rope_head_dim: Optional[int] = None
    qk_nope_head_dim: Optional[int] = None
    v_head_dim: Optional[int] = None
    attn_output_gate: Optional[bool] = None
    tie_word_embeddings: Optional[bool] = None
    qk_norm: Optional[bool] = None
    qkv_bias: Optional[bool] = None
    o_bias: Optional[bool] = None
    mlp_bias: Optional[bool] = None
    norm_bias: Optional[bool] = None
    head_bias: Optional[bool] = None
    layer_norms: Optional[int] = None
    shared_expert_gate: Optional[bool] = None
    sliding_window: Optional[int] = None
    attention_chunk_size: Optional[int] = None
    relative_attention_num_buckets: Optional[int] = None
    type_vocab_size: Optional[int] = None
    torch_dtype: Optional[str] = None

    linear_num_key_heads: Optional[int] = None
    linear_key_head_dim: Optional[int] = None
    linear_num_value_heads: Optional[int] = None
    linear_value_head_dim: Optional[int] = None
    linear_conv_kernel_dim: Optional[int] = None

    ssm_state_size: Optional[int] = None
    ssm_conv_kernel: Optional[int] = None
    ssm_expand: Optional[int] = None
    ssm_intermediate_size: Optional[int] = None
    ssm_num_heads: Optional[int] = None
    ssm_n_groups: Optional[int] = None
    ssm_dt_rank: Optional[int] = None

    parameters: Optional[StatedParameters] = None
    import_gaps: Optional[ImportGaps] = None

    arch: Optional[str] = None
    ops: Optional[Dict[str, OpCounts]] = None
    layers: Optional[Tuple[LayerGroup, ...]] = None
    layer_types: Optional[Tuple[str, ...]] = None
    activations: Optional[Dict[str, KindActivations]] = None
    output_activations: Optional[KindActivations] = None

    vision: Optional[VisionSpec] = None

    # ---- derived reads -------------------------------------------------

    @property
    def effective_head_dim(self) -> int:
        """Per-head width in channels: ``head_dim`` when declared, else ``hidden_size // num_attention_heads``.

        Costing attention as ``hidden_size x hidden_size`` is right only when
        the two agree; Qwen3.5-35B-A3B declares ``head_dim: 256`` against
        ``hidden_size 2048 / 16 heads = 128``, so deriving it would lose half
        the projection parameters.
        """
        if self.head_dim:
            return self.head_dim
        return self.hidden_size // self.num_attention_heads

    @property
    def attention_width(self) -> int:
        """Width of the query projection in channels: ``num_attention_heads * effective_head_dim``."""
        return self.num_attention_heads * self.effective_head_dim

    @property
    def is_moe(self) -> bool:
        """Whether the model routes tokens among more than one expert (``num_experts > 1``)."""
        return bool(self.num_experts and self.num_experts > 1)

    @property
    def routed_expert_width(self) -> int:
        """Feed-forward width of one routed expert in channels, ``0`` when none resolves.

        ``moe_intermediate_size`` when declared, else ``intermediate_size``:
        Mixtral's config runs its experts at the dense width and declares no
        ``moe_intermediate_size`` (transformers ``MixtralBlockSparseTop2MLP``
        uses ``config.intermediate_size``), so the fallback is real, not a guess.
        """
        return self.moe_intermediate_size or self.intermediate_size or 0

    @property
    def shared_expert_width(self) -> int:
        """Feed-forward width of one shared expert in channels, ``0`` when there is none.

        ``shared_expert_intermediate_size`` when declared, else the routed
        width. An all-MoE config (Qwen3.5-35B-A3B) declares no dense
        ``intermediate_size`` at all, which is what once priced this at zero.
        """
        if not self.num_shared_experts:
            return 0
        return self.shared_expert_intermediate_size or self.routed_expert_width

    # ---- validation ----------------------------------------------------

    def problems(self) -> List[SpecIssue]:
        """Return every reason the spec is incoherent or cannot be costed, each by field path.

        The rules: the required fields are positive; ``num_attention_heads`` is a
        multiple of ``num_key_value_heads``; ``num_experts_per_tok`` needs
        ``num_experts`` and is at most it; ``first_k_dense_replace`` is at most
        ``num_hidden_layers``; routed and shared experts resolve a width; the
        ``linear_*`` fields are stated all or none; ``layers`` covers the body
        and the MTP layers; ``activations`` names kinds of ``layers``; the tower
        can be costed. The stack-dependent rules (kinds of the op profile, a
        dense kind needing ``intermediate_size``) are :mod:`pipeline.pricing.stack`'s.
        """
        issues = _Issues()
        for key in _REQUIRED:
            if getattr(self, key) <= 0:
                issues.add((key,), "spec.not-positive", f"{key} is required and must be positive, "
                                                        f"got {getattr(self, key)}")
        self._check_heads(issues)
        self._check_experts(issues)
        self._check_linear(issues)
        if self.layers is not None:
            issues.take(check_layer_counts, self.layers, self.num_hidden_layers, self.mtp_depth or 0)
        stated = sorted(set(self.activations or {}) - {group.kind for group in self.layers or ()})
        for kind in stated:
            issues.add(("activations", kind), "spec.activations-kind",
                       f"activations.{kind} is a kind no group of layers has; state layers with that kind, "
                       "or leave the record out")
        if self.vision is not None:
            issues.found.extend(self.vision.problems())
        return issues.found

    def _check_heads(self, issues: _Issues) -> None:
        """Record head counts that do not divide: query heads by key/value heads, the width by the heads."""
        if (self.head_dim is None and self.hidden_size > 0 and self.num_attention_heads > 0
                and self.hidden_size % self.num_attention_heads):
            issues.add(("num_attention_heads",), "spec.head-dim-divide",
                       f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                       f"({self.num_attention_heads}), so no head width derives from them; declare head_dim")
        kv_heads = self.num_key_value_heads
        if kv_heads and self.num_attention_heads > 0 and self.num_attention_heads % kv_heads:
            issues.add(("num_key_value_heads",), "spec.kv-heads-divide",
                       f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                       f"num_key_value_heads ({kv_heads}); each key/value head serves a whole group of query heads")

    def _check_experts(self, issues: _Issues) -> None:
        """Record expert counts and widths that contradict each other or leave a width unresolved."""
        if self.num_experts_per_tok is not None:
            if not self.num_experts:
                issues.add(("num_experts_per_tok",), "spec.experts-per-tok-without-experts",
                           f"num_experts_per_tok ({self.num_experts_per_tok}) is set but num_experts is not; "
                           "declare num_experts, or leave num_experts_per_tok out for a dense model")
            elif self.num_experts_per_tok > self.num_experts:
                issues.add(("num_experts_per_tok",), "spec.experts-per-tok-above",
                           f"num_experts_per_tok ({self.num_experts_per_tok}) is larger than num_experts "
                           f"({self.num_experts}); a token cannot be routed to more experts than there are")
        if self.first_k_dense_replace is not None and self.first_k_dense_replace > self.num_hidden_layers:
            issues.add(("first_k_dense_replace",), "spec.first-k-dense-above",
                       f"first_k_dense_replace ({self.first_k_dense_replace}) is larger than num_hidden_layers "
                       f"({self.num_hidden_layers})")
        if self.is_moe and not self.routed_expert_width:
            issues.add(("num_experts",), "spec.moe-width",
                       f"no feed-forward width resolves for {self.num_experts} routed experts; declare "
                       "moe_intermediate_size, or intermediate_size if the experts run at the dense width")
        shared_facts = [key for key in ("shared_expert_intermediate_size", "shared_expert_gate")
                        if getattr(self, key)]
        if shared_facts and not self.num_shared_experts:
            issues.add((shared_facts[0],), "spec.shared-without-count",
                       f"{' and '.join(shared_facts)} {'describe' if len(shared_facts) > 1 else 'describes'} a "
                       "shared expert, but num_shared_experts is "
                       f"{self.num_shared_experts if self.num_shared_experts is not None else 'not stated'}; declare "
                       "num_shared_experts, or leave them out")
        if self.num_shared_experts and not self.shared_expert_width:
            issues.add(("num_shared_experts",), "spec.shared-expert-width",
                       "num_shared_experts is set but no width resolves for it; declare "
                       "shared_expert_intermediate_size or moe_intermediate_size")

    def _check_linear(self, issues: _Issues) -> None:
        """Record a partly stated set of gated-DeltaNet dimensions."""
        stated = [key for key in LINEAR_FIELDS if getattr(self, key) is not None]
        if stated and len(stated) < len(LINEAR_FIELDS):
            missing = [key for key in LINEAR_FIELDS if key not in stated]
            issues.add((stated[0],), "spec.linear-partial",
                       f"linear attention states {stated} but not {missing}; declare all of {list(LINEAR_FIELDS)}")

    def validate(self) -> "ModelSpec":
        """Return *self* if the spec is coherent, so a producer can ``return spec.validate()``.

        Raises:
            ModelSpecError: With every issue of :meth:`problems`.
        """
        found = self.problems()
        if found:
            raise ModelSpecError(found)
        return self

    # ---- serialised form -----------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """Return the spec as a plain mapping, ready for YAML, in field order.

        Unset fields are omitted rather than written as ``null``, so a
        hand-written file and a dumped one look alike and "not declared" is
        never mistaken for "declared empty".
        """
        out: Dict[str, Any] = {}
        for key in MODEL_KEYS_ORDERED:
            value = getattr(self, key)
            if value is None:
                continue
            if key == "ops" or key == "activations":
                value = {kind: record.to_dict() for kind, record in value.items()}
            elif key == "layers":
                value = [group.to_dict() for group in value]
            elif key == "layer_types":
                value = list(value)
            elif key in ("output_activations", "vision", "parameters", "import_gaps"):
                value = value.to_dict()
            out[key] = value
        return out

    @classmethod
    def from_dict(cls, data: Any, strict: bool = True) -> "ModelSpec":
        """Build a spec from a mapping (a parsed YAML file, or what a producer assembled).

        ``null`` is the same as leaving a key out; ``name`` defaults to
        ``"custom"``; ``torch_dtype`` drops a ``torch.`` prefix.

        Args:
            data: The mapping. :func:`model_fields` takes a model's keys from a
                mapping that also states the run.
            strict: Validate before returning. Only a test building a
                deliberately partial spec passes ``False``.

        Raises:
            ModelSpecError: With every problem at once: unknown keys, missing
                required fields, values of the wrong type, and (when *strict*)
                every issue of :meth:`problems`.
        """
        data = _mapping(data, (), "field names to values")
        issues = _Issues()
        _unknown_keys(data, MODEL_KEYS, (), issues, unknown_key_message)
        values: Dict[str, Any] = {}
        for key in MODEL_KEYS_ORDERED:
            if data.get(key) is not None:
                values[key] = issues.take(_FIELD_PARSERS.get(key, _positive), data[key], (key,))
        for key in _REQUIRED:
            if data.get(key) is None:
                issues.add((key,), "spec.required", f"{key} is required and was not supplied")
        issues.raise_if_any()
        values.setdefault("name", "custom")
        spec = cls(**values)
        return spec.validate() if strict else spec


#: The dtypes a checkpoint's weights can be saved in, by torch name: those a safetensors file holds
#: (safetensors' ``torch.py``, ``_TYPES``). The schema's ``torch_dtype`` enum lists the same names.
CHECKPOINT_DTYPES = ("bfloat16", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu",
                     "float4_e2m1fn_x2", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                     "bool")


def _dtype(value: Any, path: FieldPath) -> Optional[str]:
    """Return a dtype name without its ``torch.`` prefix (``torch.bfloat16`` is ``bfloat16``).

    Raises:
        ModelSpecError: ``spec.not-string`` for a non-string; ``spec.dtype``
            for a text that is none of :data:`CHECKPOINT_DTYPES` once the
            prefix is dropped (``bf16``, ``torch.torch.bfloat16``).
    """
    text = _text(value, path)
    if text is None:
        return None
    dtype = text.removeprefix("torch.")
    if dtype not in CHECKPOINT_DTYPES:
        raise refuse(path, "spec.dtype", f"{dotted(path)} must be one of {', '.join(CHECKPOINT_DTYPES)}, "
                                         f"got {_show(value)}")
    return dtype


def _layer_types(value: Any, path: FieldPath) -> Tuple[str, ...]:
    """Return a non-empty list of layer type names as a tuple.

    Raises:
        ModelSpecError: ``spec.not-a-list`` or ``spec.not-string`` for an entry.
    """
    if not isinstance(value, (list, tuple)) or not value:
        raise refuse(path, "spec.not-a-list", f"{dotted(path)} must list layer type names, got {_show(value)}")
    issues = _Issues()
    names = tuple(issues.take(_text, kind, path + (index,)) for index, kind in enumerate(value))
    for index, kind in enumerate(value):
        if kind is None:  # an entry is a kind's name: null here is no layer, not an absent field
            issues.add(path + (index,), "spec.not-string", f"{dotted(path + (index,))} must name a layer kind, "
                                                           "got null; list one kind per body layer")
    issues.raise_if_any()
    return names


# How each field is parsed; a field not named here is a positive integer (a
# width, head or expert count stated as 0 is the silent zero this IR refuses).
# The required fields are integers whose sign validate() judges, as the reference does.
_FIELD_PARSERS: Dict[str, Callable[[Any, FieldPath], Any]] = {
    **{key: _integer for key in _REQUIRED},
    **{key: _count for key in _ZERO_ALLOWED},
    **{key: _flag for key in _FLAGS},
    **{key: _positive_number for key in _NUMBERS},
    "name": _text,
    "arch": _text,
    "torch_dtype": _dtype,
    "ops": ops_from_dict,
    "layers": layers_from_list,
    "layer_types": _layer_types,
    "activations": activations_from_dict,
    "output_activations": KindActivations.from_dict,
    "vision": VisionSpec.from_dict,
    "parameters": lambda value, path: StatedParameters.from_dict(value, path),
    "import_gaps": lambda value, path: ImportGaps.from_dict(value, path),
}

#: The keys a model spec states, in serialisation (and schema) order.
MODEL_KEYS_ORDERED: Tuple[str, ...] = tuple(spec_field.name for spec_field in fields(ModelSpec))
#: The keys a model spec states.
MODEL_KEYS = frozenset(MODEL_KEYS_ORDERED)


def model_fields(data: Mapping[str, Any]) -> Dict[str, Any]:
    """Return the entries of *data* that a model spec reads, for a mapping that states the model and the run together."""
    return {key: value for key, value in data.items() if key in MODEL_KEYS}
