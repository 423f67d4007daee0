"""The judge: a spec's weight inventories against the reference's census, tensor by tensor and count by count.

:mod:`pipeline.reference.census` lists what transformers builds for a config as a
:class:`Census` (every unique parameter, its layer stacks, embedding, head,
routed experts, and a VLM's parameters outside its language model); this
module lists what ``modelspec import`` of the same config gives (the spec's
resolved stack, each layer's inventory, the model's and the tower's tensors)
under the reference's names, and compares the two. It imports no
torch: the census is plain data.

Naming. An inventory names a layer's tensor relative to the layer
(``self_attn.q_proj.weight``); the full name is the reference's stack prefix,
the layer's index in that stack and the relative name
(``model.layers.3.self_attn.q_proj.weight``). The body's layers fill the
reference stacks whose first layer holds a tensor of the body's kinds, in the
reference's order (T5: ``encoder.block``, then ``decoder.block``); the tower's
layers the stack whose first layer shares the most names with the tower's
kinds. Model-level tensors are named in full (a VLM family's ``model.language_model.*``
is ``model.*`` when the reference builds its text config alone, a causal LM
without a tower); a tower's own tensors relative
to the model holding the tower (``visual.merger.ln_q.weight`` is
``model.visual.merger.ln_q.weight``), so they match the one reference name
that ends with theirs. A routed expert's tensor is one expert's shape; the
reference holds all experts in one tensor, ``[num_experts, ...]``.

Counts compared: total, active (routed experts at top-k of them), embedding,
head, layers, each layer group, routed experts, the tower with its projector
(the reference's: every parameter of a VLM outside its language model and head),
and the rest outside the layers (final norms, position tables, other); the
modelspec side of each is the figure :func:`pipeline.pricing.parameters.count_parameters`
gives, the one ``show`` and ``check`` use. transformers builds no MTP layer:
the body is compared, MTP layers are counted apart and only reported.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from pipeline.pricing.parameters import ParameterCounts, count_parameters, model_symbols, tower_symbols
from pipeline.pricing.stack import spec_layer_stack, tower_layer_stack
from pipeline.pricing.weights import NONE, Tensor, resolve

if TYPE_CHECKING:
    from pipeline.spec.model import ModelSpec
    from pipeline.pricing.op_profiles import OpProfiles

Shape = Tuple[int, ...]


@dataclass(frozen=True)
class Census:
    """What the reference builds for one config.

    Attributes:
        model_class: The class built (``Qwen3MoeForCausalLM``).
        model_type: The model type its config was read as (``deepseek_v3`` for a ``kimi_k2`` config).
        tensors: ``{name: shape}`` of every unique parameter, in the model's order.
        stacks: ``(prefix, length)`` of each outermost ``nn.ModuleList`` (``("model.layers", 48)``).
        embedding: The input embedding's parameter names.
        head: The output head's parameter names not shared with the embedding (a tied head's bias).
        routed: The routed experts' parameter names (each of shape ``[num_experts, ...]``).
        top_k: The experts a token routes to (``num_experts_per_tok``); 0 without routed experts.
        vision: For a config with a ``vision_config``, every parameter outside the language model and the
            head: the tower with its projector.
        experts: The routed experts a layer holds, as its ``*Experts`` module says (``num_experts``); 0 to read
            it from the first routed tensor's leading dimension (DBRX stacks its experts' rows in one dimension).
        headless: Whether the class built is the headless base model (``architectures: [MambaModel]``,
            ``AutoModel``'s class of the config), whose tensors are the generation class's without the first part
            of their names, the attribute that class holds it under (``backbone.``, ``transformer.``, ``model.``;
            a VLM's ``model.visual.``).
    """

    model_class: str
    model_type: str
    tensors: Mapping[str, Tuple[int, ...]]
    stacks: Tuple[Tuple[str, int], ...]
    embedding: Tuple[str, ...]
    head: Tuple[str, ...]
    routed: Tuple[str, ...]
    top_k: int
    vision: Tuple[str, ...] = ()
    experts: int = 0
    headless: bool = False


@dataclass(frozen=True)
class TensorRow:
    """A tensor the two sides disagree on; *layers* collapses the same row over several layers.

    Attributes:
        name: The tensor's name, ``{i}`` standing for the layer index when *layers* is not empty.
        layers: The layer indexes the row holds for (empty for a model-level tensor).
        reference: Its shape in the reference; ``None`` when the reference has no such tensor.
        modelspec: Its shape in the inventory; ``None`` when the inventory has none.
        part: The inventory's part for it (``""`` when the inventory has none).
    """

    name: str
    layers: Tuple[int, ...]
    reference: Optional[Shape]
    modelspec: Optional[Shape]
    part: str


@dataclass(frozen=True)
class CountRow:
    """One count of both sides: ``what`` (``total``, ``layers 0-3 (moe)``), the reference's, modelspec's."""

    what: str
    reference: int
    modelspec: int

    @property
    def equal(self) -> bool:
        """Whether both sides count the same."""
        return self.reference == self.modelspec


@dataclass(frozen=True)
class Verdict:
    """The comparison of one config.

    Attributes:
        model_class: The reference class built.
        tensors: Every tensor the sides disagree on (missing, extra, another shape).
        counts: Every count compared, equal or not.
        mtp: ``(layers, parameters)`` of the spec's MTP layers, which the reference does not build.
    """

    model_class: str
    tensors: Tuple[TensorRow, ...]
    counts: Tuple[CountRow, ...]
    mtp: Tuple[int, int]

    @property
    def equal(self) -> bool:
        """Whether every tensor and every count agree."""
        return not self.tensors and all(row.equal for row in self.counts)

    @property
    def counted_differently(self) -> bool:
        """Whether a count differs (a misprice); a renamed tensor of the same size alone is not one."""
        return not all(row.equal for row in self.counts)

    def count(self, what: str) -> CountRow:
        """The count row named *what* (``total``)."""
        return next(row for row in self.counts if row.what == what)


@dataclass(frozen=True)
class _Side:
    """The inventory's tensors by full name (shape, part), and where the reference holds the body's layers.

    Attributes:
        tensors: ``{full name: (shape, part)}``.
        places: ``(stack prefix, index)`` of each reference body layer, in body order (the inventory's
            layers fill them in that order).
    """

    tensors: Mapping[str, Tuple[Shape, str]]
    places: Tuple[Tuple[str, int], ...]


def judge(spec: "ModelSpec", profiles: "OpProfiles", census: Census) -> Verdict:
    """Compare the spec's inventories with the reference's *census* of the same config.

    Raises:
        ModelSpecError: If the spec's stack cannot be resolved.
        Unpriced: If an inventory reads a field the spec leaves out.
    """
    stack = spec_layer_stack(spec, profiles)
    profile = profiles.get(stack.arch)
    tower = tower_layer_stack(spec.vision, profiles) if spec.vision else None
    counts = count_parameters(spec, profile, stack, tower)
    symbols = model_symbols(spec)
    experts = spec.num_experts or 0
    body = [_layer(group.kind.weights, symbols, experts, index == 0)
            for group in stack.groups if not group.mtp for index in range(group.count)]
    tower_layers: List[List[Tensor]] = []
    tower_own: List[Tensor] = []
    if tower is not None:
        tower_env = tower_symbols(spec.vision, spec.hidden_size)
        tower_layers = [_layer(profile.vision_kinds.get(group.kind.name, NONE), tower_env, 0, index == 0)
                        for group in tower.groups for index in range(group.count)]
        tower_own = resolve(profile.vision_weights, tower_env)
    side = _named(census, body, tower_layers, resolve(profile.model_weights, symbols), tower_own)
    rows = _tensor_rows(census, side)
    mtp_layers = sum(group.count for group in stack.groups if group.mtp)
    return Verdict(census.model_class, rows, _count_rows(census, side, counts), (mtp_layers, counts.mtp))


def _layer(weights: Iterable, symbols: Mapping, experts: int, first: bool) -> List[Tensor]:
    """One layer's tensors, a routed expert's with its ``num_experts`` leading (or, ``stacked: rows``, its first
    dimension times ``num_experts``: DBRX's w1); ``first_layer`` ones in the first."""
    tensors = []
    for tensor in resolve(weights, symbols):
        if tensor.per == "first_layer" and not first:
            continue
        if tensor.per == "expert":
            shape = ((experts * tensor.shape[0],) + tensor.shape[1:] if tensor.stacked == "rows"
                     else (experts,) + tensor.shape)
            tensor = Tensor(tensor.role, tensor.name, shape, tensor.part, tensor.per, tensor.op)
        tensors.append(tensor)
    return tensors


def _first_layer_names(census: Census, prefix: str) -> set:
    """The relative names of layer 0 of the reference stack *prefix*."""
    start = prefix + ".0."
    return {name[len(start):] for name in census.tensors if name.startswith(start)}


def _assign(census: Census, body: Sequence[List[Tensor]],
            tower: Sequence[List[Tensor]]) -> Tuple[Tuple[Tuple[str, int], ...], Tuple[Tuple[str, int], ...]]:
    """``(prefix, index)`` of each reference tower layer and of each reference body layer, in order.

    The tower's layers fill the stack whose first layer shares the most names with the tower's kinds; a tower
    held in several stacks of the reference's vision part (Mllama's ``transformer`` then
    ``global_transformer``) fills each of them that shares names, in the reference's order. The body's layers
    fill the other stacks whose first layer shares names with the body's kinds."""
    stacks = list(census.stacks)
    tower_stacks: List[Tuple[str, int]] = []
    if tower:
        names = {t.name for layer in tower for t in layer}
        vision = set(census.vision)
        held = [(prefix, length) for prefix, length in stacks if _first_layer_names(census, prefix) & names
                and any(name.startswith(prefix + ".0.") for name in vision)]
        best = max(((len(_first_layer_names(census, prefix) & names), prefix, length) for prefix, length in stacks),
                   default=(0, "", 0))
        tower_stacks = held if len(held) > 1 else [best[1:]] if best[0] else []
        stacks = [entry for entry in stacks if entry not in tower_stacks]
    body_names = {t.name for layer in body for t in layer}
    tower_places = tuple((prefix, index) for prefix, length in tower_stacks for index in range(length))
    return tower_places, tuple((prefix, index) for prefix, length in stacks
                               if _first_layer_names(census, prefix) & body_names for index in range(length))


def _named(census: Census, body: Sequence[List[Tensor]], tower: Sequence[List[Tensor]],
           model: Sequence[Tensor], tower_own: Sequence[Tensor]) -> _Side:
    """The inventory's tensors under the reference's full names; a layer the reference lacks under
    ``(no reference layer)`` or ``(no reference tower)``."""
    tower_places, places = _assign(census, body, tower)
    tensors: Dict[str, Tuple[Shape, str]] = {}
    for position, layer in enumerate(body):
        prefix, index = places[position] if position < len(places) else ("(no reference layer)", position)
        for tensor in layer:
            tensors[f"{prefix}.{index}.{tensor.name}"] = (tensor.shape, tensor.part)
    for position, layer in enumerate(tower):
        prefix, index = tower_places[position] if position < len(tower_places) else \
            ((tower_places[0][0] if tower_places else "(no reference tower)"), position)
        for tensor in layer:
            tensors[f"{prefix}.{index}.{tensor.name}"] = (tensor.shape, tensor.part)
    for tensor in model:
        tensors[_model_name(census, tensor.name)] = (tensor.shape, tensor.part)
    for tensor in tower_own:
        tensors[_held_name(census, tensor.name)] = (tensor.shape, tensor.part)
    return _Side(tensors, places)


#: Where a VLM holds its language model, and what a text-only build names it: ``Gemma3Model.language_model``,
#: ``Qwen3_5Model.language_model`` (the text model: ``model.``), or Llama 4's whole causal LM
#: (``Llama4ForConditionalGeneration.language_model``, a ``Llama4ForCausalLM``: the model itself).
_LANGUAGE_MODELS = (("model.language_model.", "model."), ("language_model.", ""))


def _model_name(census: Census, name: str) -> str:
    """The reference's name for a model-level tensor: its own, except that a profile naming the VLM's language
    model (``model.language_model.embed_tokens.weight``, ``language_model.lm_head.weight``) names, in a text-only
    build, the causal-LM class's (``model.embed_tokens.weight``: ``Gemma3ForCausalLM.model`` is the text model
    itself; ``lm_head.weight``). A build is text-only when the reference holds no vision part
    (:attr:`Census.vision` is empty). In a build of the headless base model (:attr:`Census.headless`), a name the
    reference holds only without its first part is that one (``BartModel``: ``shared.weight`` for
    ``model.shared.weight``; ``MambaModel``: ``embeddings.weight`` for ``backbone.embeddings.weight``)."""
    headless = _headless_name(census, name)
    if headless is not None:
        return headless
    if census.vision:
        return name
    for prefix, text_only in _LANGUAGE_MODELS:
        if name.startswith(prefix):
            text_name = text_only + name[len(prefix):]
            return _headless_name(census, text_name) or text_name  # a headless text model (Gemma3TextModel)
    return name


def _headless_name(census: Census, name: str) -> Optional[str]:
    """*name* without its first part (where a generation class holds its base model) when the reference, a build
    of the headless base model (:attr:`Census.headless`), holds it only so; else ``None``."""
    if not census.headless or name in census.tensors:
        return None
    stripped = name.partition(".")[2]
    return stripped if stripped in census.tensors else None


def _held_name(census: Census, name: str) -> str:
    """The reference's name for a tower tensor named relative to the model holding it (itself when none or many),
    or in full (``model.visual.merger.norm.weight``: in a headless build, ``visual.merger.norm.weight``)."""
    if name in census.tensors:
        return name
    headless = _headless_name(census, name)
    if headless is not None:
        return headless
    found = [full for full in census.tensors if full.endswith("." + name)]
    return found[0] if len(found) == 1 else name


_INDEX = re.compile(r"^(?P<prefix>.*?)\.(?P<index>\d+)\.(?P<rest>.*)$")


def _tensor_rows(census: Census, side: _Side) -> Tuple[TensorRow, ...]:
    """Every tensor the sides disagree on, the same difference over several layers as one row."""
    stacks = {prefix for prefix, _ in census.stacks} | {"(no reference layer)", "(no reference tower)"}
    grouped: Dict[Tuple[str, Optional[Shape], Optional[Shape], str], List[int]] = {}
    for name in list(census.tensors) + [n for n in side.tensors if n not in census.tensors]:
        reference = census.tensors.get(name)
        shape, part = side.tensors.get(name, (None, ""))
        if reference == shape:
            continue
        template, index = _template(name, stacks)
        grouped.setdefault((template, reference, shape, part), []).append(index)
    return tuple(TensorRow(template, tuple(i for i in indexes if i >= 0), reference, shape, part)
                 for (template, reference, shape, part), indexes in grouped.items())


def _template(name: str, stacks: set) -> Tuple[str, int]:
    """``model.layers.3.mlp.x`` -> ``("model.layers.{i}.mlp.x", 3)`` for a stack's tensor; else ``(name, -1)``."""
    for prefix in stacks:
        start = prefix + "."
        if name.startswith(start):
            index, _, rest = name[len(start):].partition(".")
            if index.isdigit():
                return f"{start}{{i}}.{rest}", int(index)
    return name, -1


def _ref_sum(census: Census, names: Iterable[str]) -> int:
    return sum(math.prod(census.tensors[name]) for name in names if name in census.tensors)


def _span(indexes: Sequence[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2,5``."""
    runs: List[List[int]] = []
    for index in sorted(indexes):
        if runs and index == runs[-1][1] + 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _count_rows(census: Census, side: _Side, counts: ParameterCounts) -> Tuple[CountRow, ...]:
    """Every count of both sides."""
    total = sum(math.prod(shape) for shape in census.tensors.values())
    routed = _ref_sum(census, census.routed)
    experts = census.experts or (census.tensors[census.routed[0]][0] if census.routed else 1)
    active = total - routed + routed // experts * census.top_k
    ref_layer = _reference_layers(census, side)
    embedding = _ref_sum(census, census.embedding)
    head = _ref_sum(census, census.head)
    vision = _ref_sum(census, census.vision)
    layers = sum(ref_layer.values())
    rows = [CountRow("total", total, counts.total), CountRow("active", active, counts.active),
            CountRow("embedding", embedding, counts.embedding), CountRow("head", head, counts.head),
            CountRow("layers", layers, counts.layers),
            CountRow("routed experts", routed, sum(g.parts["routed_experts"] for g in counts.groups if not g.mtp)),
            CountRow("vision tower and projector", vision, counts.vision),
            CountRow("final norms, positions, other", total - embedding - head - layers - vision,
                     counts.final_norm + counts.position + counts.other)]
    start = 0
    for group in counts.groups:
        if group.mtp:
            continue
        indexes = range(start, start + group.count)
        rows.append(CountRow(f"layers {_span(indexes)} ({group.kind})", sum(ref_layer.get(i, 0) for i in indexes),
                             group.total))
        start += group.count
    return tuple(rows)


def _reference_layers(census: Census, side: _Side) -> Dict[int, int]:
    """The reference's parameters per body layer, by the layer's place in the body."""
    place = {where: position for position, where in enumerate(side.places)}
    sums = dict.fromkeys(range(len(side.places)), 0)
    for name, shape in census.tensors.items():
        match = _INDEX.match(name)
        if match and (match["prefix"], int(match["index"])) in place:
            sums[place[(match["prefix"], int(match["index"]))]] += math.prod(shape)
    return sums


def _shape(shape: Optional[Shape]) -> str:
    """``(1152, 3, 14, 14)`` -> ``1152x3x14x14``; ``-`` for no tensor."""
    return "-" if shape is None else "x".join(map(str, shape)) or "scalar"


def _table(rows: Sequence[Sequence[str]], right: Sequence[int]) -> List[str]:
    """Rows as aligned text columns, the columns in *right* right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
                             for i, cell in enumerate(row)).rstrip() for row in rows]


def summary(verdict: Verdict, what: str) -> str:
    """The one line of an equal verdict: *what* equals the reference, its total, MTP apart."""
    layers, params = verdict.mtp
    mtp = f"; MTP {layers} layer{'s' * (layers != 1)}, {params:,} parameters apart (transformers builds none)" \
        if layers else ""
    return (f"{what}: equal to the reference ({verdict.model_class}), tensor by tensor: "
            f"{verdict.count('total').modelspec:,} parameters{mtp}")


def render(verdict: Verdict, what: str) -> str:
    """The tables of a verdict that differs: each tensor the sides disagree on, then each count that differs."""
    lines = [f"{what}: differs from the reference ({verdict.model_class})"]
    if verdict.tensors:
        rows = [("tensor", "layers", "reference", "modelspec", "part")]
        rows += [(row.name, _span(row.layers) or "-", _shape(row.reference), _shape(row.modelspec), row.part or "-")
                 for row in verdict.tensors]
        lines += ["", *_table(rows, ())]
    differing = [row for row in verdict.counts if not row.equal]
    if differing:
        rows = [("count", "reference", "modelspec", "difference")]
        rows += [(row.what, f"{row.reference:,}", f"{row.modelspec:,}", f"{row.modelspec - row.reference:+,}")
                 for row in differing]
        lines += ["", *_table(rows, (1, 2, 3))]
    return "\n".join(lines) + "\n"
