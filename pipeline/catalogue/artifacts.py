"""The resolved-stack artifact: what a downstream cost model reads instead of a raw spec.

One artifact per spec that passes ``check``: its name, path and arch; the
spec's own facts (``spec``: every field :meth:`~pipeline.spec.model.ModelSpec.to_dict`
gives, so a cost model needs nothing else: expert counts, key/value heads,
MLA ranks, vocabulary, the tower's widths, biases and flags); the groups of
its layer stack in model order, each with its kind, count, MTP flag,
attention and feed-forward flavour; each kind's op counts and weight
inventory (every tensor with its role, transformers name, shape, part and
multiplicity: a cost model prices every matmul from it); the model's own
tensors (embedding, position tables, final norms, head) and the MTP layers'
extras (``weights``); the parameter counts (``parameters``: total, active,
embedding, head, vision, MTP, FLOPs per token and per group, from
:mod:`pipeline.pricing.parameters`); the FLOPs at 1, 4,096 and
``max_position_embeddings`` tokens under the ``dense`` and ``causal``
conventions with the KV-cache, state and weight bytes (``flops``, from
:mod:`pipeline.pricing.flops`); the linear-attention dimensions; the vision
tower's stack and tensors; the derived widths (``effective_head_dim``,
``attention_width``, ``routed_expert_width``, ``shared_expert_width``); and a
digest of its inputs. ``resolved/index.json``
lists every artifact with its digest. The shapes are
``schemas/resolved-stack.schema.json`` (the index is its ``$defs/index``; the
spec facts are ``schemas/model-spec.schema.json``).

Decisions, and why:

- **JSON, not YAML.** Every downstream cost model reads JSON with its
  language's standard library, without a YAML dependency or YAML's
  ambiguities, and ``json.dumps(sort_keys=True, indent=2)`` of plain dicts,
  lists, strings, numbers and booleans is byte-deterministic: no hash order,
  no timestamps, and a float (a census's bytes per token,
  ``ffn_dim_multiplier``) is written as Python's shortest round-trip
  ``repr``, the same on every platform. Lists keep model order; object keys
  are sorted.
- **The digest covers exactly the inputs the document is computed from**: the
  artifact format version (:data:`FORMAT_VERSION`), the spec's path as the
  artifact records it, the spec file's bytes, its op profile file's bytes,
  and the vision profile's bytes when it has a tower. Not modelspec's
  version and not a time: two runs on the same inputs give the same digest.
  The path is an input because the artifact states it: a spec moved to
  another folder gives a different artifact, so it must give a different
  digest. Each input is framed by its label and length before it is hashed
  (SHA-256), so no two different input sets hash the same bytes.
- **Derived widths only where they mean something.** The model IR's
  ``routed_expert_width`` falls back to ``intermediate_size`` (right for
  Mixtral's experts), so for a dense model it would state an expert width
  the model does not have, and a diff would report it moving. The artifact
  states ``routed_expert_width`` only for a model with routed experts
  (:attr:`~pipeline.spec.model.ModelSpec.is_moe`) and ``shared_expert_width``
  only for one with shared experts, ``null`` otherwise; the IR's reads are
  unchanged.
- **What regen wrote, it can tell** (:func:`generated_problem`): a file in
  ``resolved/`` is one of its artifacts only when it carries the generator
  mark (``"generator": "modelspec regen"``), its file name is its ``name``
  plus ``.json``, and it has the artifact's whole shape (the schema, for the
  current format; the members every format has, for an earlier one, so an
  upgrade still replaces its own old files). A copy (``gpt2-backup.json``)
  or a hand-made file with the mark is not, and ``regen`` neither
  overwrites nor removes it.
- Absent is not zero: a model without linear attention, a tower or experts
  has ``null`` there, never an empty record or a zero.

This module is pure: it builds documents from a
:class:`~pipeline.check.runner.CheckedSpec` and bytes it is given, and renders them
as text; reading and writing files is :mod:`pipeline.catalogue.regen`'s.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import rapidjson

from pipeline.spec.model import ModelSpec
from pipeline.pricing.op_profiles import LayerKind, OpProfile
from pipeline.pricing.flops import flops_document
from pipeline.pricing.parameters import count_parameters, model_symbols, tower_symbols
from pipeline.check.repo import ARTIFACT_SUFFIX
from pipeline.check.runner import CheckedSpec
from pipeline.pricing.stack import LayerStack
from pipeline.pricing.weights import NONE, Unpriced, Weight, resolve
from pipeline.spec.resources import schema_path
from pipeline.spec.schema_pass import best_error

#: The artifact format's version: raised when a key is removed or changes
#: meaning; part of every digest, so a format change makes every artifact stale.
#: Version 2 added the spec's facts (``spec``) and made the expert widths
#: ``null`` for a model without such experts. Version 4 added ``flops`` (FLOPs at 1, 4,096 and
#: ``max_position_embeddings`` tokens under both conventions, KV-cache, state and weight bytes).
FORMAT_VERSION = 4

#: The mark that says a file in ``resolved/`` was written by ``modelspec regen``.
GENERATOR = "modelspec regen"

#: The file ``regen`` writes beside the artifacts, listing them.
INDEX_FILE = "index.json"

#: A spec name that may name a file: letters, digits, ``.``, ``_`` and ``-``, not starting with a dot.
SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")

#: The longest name that still makes a file name most file systems accept (255 bytes with ``.json``).
MAX_NAME_LENGTH = 255 - len(ARTIFACT_SUFFIX)

#: The derived widths an artifact records, each a :class:`~pipeline.spec.model.ModelSpec` property.
WIDTHS = ("effective_head_dim", "attention_width", "routed_expert_width", "shared_expert_width")

#: The schemas an artifact is validated against: its own, and the model spec's (its ``spec`` member).
SCHEMA_FILES = ("resolved-stack.schema.json", "model-spec.schema.json")

#: The resolved-stack schema's ``$id``.
SCHEMA_ID = "urn:modelspec:schemas:resolved-stack"


@dataclass(frozen=True)
class ArtifactInputs:
    """Everything an artifact is computed from besides the checked spec, as bytes.

    Attributes:
        path: The spec's path as the artifact records it (root-relative, ``/``-separated).
        spec: The spec file's bytes.
        profile: The bytes of the op profile file of the spec's arch.
        vision_profile: The bytes of the vision profile file, when the spec has a tower; else ``None``.
    """

    path: str
    spec: bytes
    profile: bytes
    vision_profile: Optional[bytes] = None

    def digest(self) -> str:
        """Return ``"sha256:<64 hex digits>"`` over the format version and every input.

        Each input is framed by its label and length (``b"spec 412\\n"``, then
        the 412 bytes), so no two different sets of inputs hash the same bytes.
        """
        parts: List[Tuple[str, bytes]] = [("format", str(FORMAT_VERSION).encode()),
                                          ("path", self.path.encode("utf-8")),
                                          ("spec", self.spec), ("profile", self.profile)]
        if self.vision_profile is not None:
            parts.append(("vision-profile", self.vision_profile))
        hasher = hashlib.sha256()
        for label, data in parts:
            hasher.update(f"{label} {len(data)}\n".encode())
            hasher.update(data)
        return f"sha256:{hasher.hexdigest()}"


def name_problem(name: str) -> Optional[str]:
    """Return why *name* cannot name an artifact file, or ``None`` if it can.

    A name can when it matches :data:`SAFE_NAME` (so it is one plain path
    component, never ``..``, a separator or a hidden file), is at most
    :data:`MAX_NAME_LENGTH` characters, and is not ``index`` (the index's file).
    """
    if not SAFE_NAME.fullmatch(name):
        return (f"name {name!r} cannot name the artifact file resolved/<name>.json: a name is letters, digits, "
                "'.', '_' and '-', not starting with a dot; rename the model, e.g. deepseek-v3")
    if len(name) > MAX_NAME_LENGTH:
        return (f"name is {len(name)} characters long; resolved/<name>.json must stay a file name of at most 255 "
                f"bytes, so shorten it to at most {MAX_NAME_LENGTH}")
    if name + ARTIFACT_SUFFIX == INDEX_FILE:
        return f"name {name!r} would write resolved/{INDEX_FILE}, the artifacts' index; rename the model"
    return None


def artifact_file(name: str) -> str:
    """The artifact's file name for a spec named *name*: ``<name>.json``.

    Raises:
        ValueError: If *name* cannot name a file (:func:`name_problem`).
    """
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    return name + ARTIFACT_SUFFIX


def widths(spec: ModelSpec) -> Dict[str, Optional[int]]:
    """The derived widths an artifact states, in channels, by name (:data:`WIDTHS`).

    ``effective_head_dim`` and ``attention_width`` are the IR's reads as they
    are (for an MLA stack the attention is priced by the MLA ranks of the spec
    facts, not by these). ``routed_expert_width`` is ``None`` unless the model
    has routed experts (:attr:`~pipeline.spec.model.ModelSpec.is_moe`), and
    ``shared_expert_width`` is ``None`` unless it has shared experts
    (``num_shared_experts`` above 0): the IR's fallback to the dense width
    would otherwise state an expert width for a model without experts.
    """
    return {
        "effective_head_dim": spec.effective_head_dim,
        "attention_width": spec.attention_width,
        "routed_expert_width": spec.routed_expert_width if spec.is_moe else None,
        "shared_expert_width": spec.shared_expert_width if spec.num_shared_experts else None,
    }


def _tensors(weights: Sequence[Weight], symbols: Optional[Mapping[str, Any]]) -> Optional[List[Dict[str, Any]]]:
    """The inventory resolved against *symbols* as plain records; ``None`` when the spec cannot be counted."""
    if symbols is None or not weights:
        return None
    try:
        return [tensor.to_dict() for tensor in resolve(weights, symbols)]
    except Unpriced:
        return None


def _stack_document(stack: LayerStack, weights_of: Callable[[LayerKind], Sequence[Weight]],
                    symbols: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    """A stack's groups (model order), layer totals and used kinds with their resolved weights."""
    return {
        "groups": [{"kind": group.kind.name, "count": group.count, "mtp": group.mtp,
                    "attention": group.kind.attention, "ffn": group.kind.ffn} for group in stack.groups],
        "kinds": {kind.name: {"attention": kind.attention, "ffn": kind.ffn, "ops": kind.ops.to_dict(),
                              "weights": _tensors(weights_of(kind), symbols)}
                  for kind in stack.distinct_kinds()},
        "layers": {"body": sum(group.count for group in stack.groups if not group.mtp),
                   "mtp": sum(group.count for group in stack.groups if group.mtp)},
    }


def build_artifact(checked: CheckedSpec, inputs: ArtifactInputs, profile: OpProfile) -> Dict[str, Any]:
    """Return the artifact document of a spec whose stack resolved.

    Args:
        checked: The spec's check, with ``spec`` and ``stack`` set (and
            ``tower`` when the spec has a vision tower).
        inputs: The bytes it was computed from, for the digest.
        profile: The op profile of the spec's arch, whose inventories give
            the ``parameters`` block and each kind's ``weights`` (``null``
            where the spec cannot be counted: ``parameters.unpriced`` says why).

    Returns:
        A mapping of plain JSON values, as ``schemas/resolved-stack.schema.json`` describes.

    Raises:
        ValueError: If the check produced no spec or no stack, or a tower
            without its profile's bytes: the caller must only pass a spec that resolved.
    """
    spec, stack = checked.spec, checked.stack
    if spec is None or stack is None:
        raise ValueError(f"{inputs.path}: no resolved stack to build an artifact from")
    if (checked.tower is None) != (inputs.vision_profile is None):
        raise ValueError(f"{inputs.path}: a tower's artifact needs the vision profile's bytes, and only a tower's")
    linear = stack.linear
    document: Dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "generator": GENERATOR,
        "name": spec.name,
        "path": inputs.path,
        "arch": stack.arch,
        "digest": inputs.digest(),
        "linear_attention": None if linear is None else {
            "num_key_heads": linear.num_key_heads, "key_head_dim": linear.key_head_dim,
            "num_value_heads": linear.num_value_heads, "value_head_dim": linear.value_head_dim,
            "conv_kernel_dim": linear.conv_kernel_dim},
        "spec": spec.to_dict(),
        "widths": widths(spec),
        "parameters": _parameters(checked, profile),
    }
    document["flops"] = _flops(checked, profile, document["parameters"])
    symbols = model_symbols(spec)
    if checked.tower is None:
        document["vision"] = None
    else:
        tower_symbols_ = tower_symbols(spec.vision, spec.hidden_size)
        document["vision"] = {
            "arch": checked.tower.arch,
            **_stack_document(checked.tower, lambda kind: profile.vision_kinds.get(kind.name, NONE), tower_symbols_),
            "weights": _tensors(profile.vision_weights, tower_symbols_)}
    document.update(_stack_document(stack, lambda kind: kind.weights, symbols))
    document["weights"] = {"model": _tensors(profile.model_weights, symbols),
                           "mtp": _tensors(profile.mtp_weights, symbols) if any(group.mtp for group in stack.groups) else None}
    return document


def _parameters(checked: CheckedSpec, profile: OpProfile) -> Dict[str, Any]:
    """The ``parameters`` block: the counts, or ``{"unpriced": why}``."""
    try:
        return count_parameters(checked.spec, profile, checked.stack, checked.tower).to_dict()
    except Unpriced as missing:
        return {"unpriced": missing.reason}


def _flops(checked: CheckedSpec, profile: OpProfile, parameters: Mapping[str, Any]) -> Dict[str, Any]:
    """The ``flops`` block (:func:`~pipeline.pricing.flops.flops_document`), or ``{"unpriced": why}``."""
    if "unpriced" in parameters:
        return {"unpriced": parameters["unpriced"]}
    try:
        return flops_document(checked.spec, profile, checked.stack, checked.tower, parameters["total"])
    except Unpriced as missing:
        return {"unpriced": missing.reason}


def render(document: Mapping[str, Any]) -> str:
    """Return *document* as the exact text written to disk: sorted keys, two-space indent, ASCII, final newline.

    That text is ``json.dumps(document, sort_keys=True, indent=2, ensure_ascii=True) + "\\n"``
    (:func:`render_slow`), byte for byte; but Python 3.11's C encoder cannot indent, so ``indent=2`` runs the
    pure-Python one, about 1 ms an artifact (10 s for 10,000). So python-rapidjson (C++, about 0.13 ms) writes it
    first, told to refuse what the standard library's encoder would not take as it is (bytes, any mapping but a
    dict, any sequence but a list: :data:`_RAPIDJSON_STRICT`); it writes integers of any size, floats as
    ``float.__repr__`` and ``NaN`` as the standard library does. It escapes differently only where a string holds
    a character outside printable ASCII (``\\u001F`` for ``\\u001f``, DEL and non-ASCII unescaped), so a text
    with an escape or such a character, like anything it refused, takes :func:`render_slow`.
    """
    try:
        text = rapidjson.dumps(document, **_RAPIDJSON_STRICT)
    except (TypeError, ValueError, UnicodeError):
        return render_slow(document)
    if not text.isascii() or "\\u" in text or "\x7f" in text:
        return render_slow(document)
    return text + "\n"


def render_slow(document: Any) -> str:
    """:func:`render` by the standard library's pure-Python encoder (what :func:`render` is held to)."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


#: python-rapidjson as :func:`render` calls it: ``json.dumps(indent=2, sort_keys=True)``'s layout, non-ASCII left
#: as it is (so :func:`render` sees it), and a type the standard library's encoder would refuse or convert (a
#: tuple, a dict or list of a type of its own, bytes) refused rather than written in a way of its own.
_RAPIDJSON_STRICT = {"indent": 2, "sort_keys": True, "ensure_ascii": False, "bytes_mode": rapidjson.BM_NONE,
                     "iterable_mode": rapidjson.IM_ONLY_LISTS, "mapping_mode": rapidjson.MM_ONLY_DICTS}


def carries_mark(document: Any) -> bool:
    """Whether a parsed JSON value is an object carrying :data:`GENERATOR` (regen's, or a copy of one)."""
    return isinstance(document, dict) and document.get("generator") == GENERATOR


@functools.lru_cache(maxsize=None)
def _validator(pointer: str) -> Any:
    """A draft 2020-12 validator of the resolved-stack schema at *pointer* (``""`` or ``"/$defs/index"``), built once.

    The model-spec schema is in its registry, for the artifact's ``spec`` member.
    """
    # pylint: disable=import-outside-toplevel
    import jsonschema
    from referencing import Registry, Resource

    schemas = [json.loads(schema_path(name).read_text(encoding="utf-8")) for name in SCHEMA_FILES]
    registry = Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in schemas)
    return jsonschema.Draft202012Validator({"$ref": f"{SCHEMA_ID}#{pointer}"}, registry=registry)


def _shape_problem(document: Mapping[str, Any], pointer: str) -> Optional[str]:
    """Why *document* is not of the current format's shape at *pointer*, or ``None``: the first error, located."""
    error = best_error(_validator(pointer).iter_errors(document))
    if error is None:
        return None
    where = "".join(f"/{part}" for part in error.absolute_path) or "/"
    return f"it is not an artifact of format {FORMAT_VERSION} ({error.message} at {where})"


def _header_problem(file: str, document: Mapping[str, Any]) -> Optional[str]:
    """Why *document* lacks the members every artifact format has (``name``, ``path``, ``digest``), or ``None``."""
    if file == INDEX_FILE:
        return None if isinstance(document.get("artifacts"), list) else "it lists no artifacts"
    name, path, digest = (document.get(key) for key in ("name", "path", "digest"))
    if not (isinstance(name, str) and isinstance(path, str) and path and isinstance(digest, str)):
        return "it lacks the name, path or digest every artifact has"
    return None


def generated_problem(file: str, document: Any) -> Optional[str]:
    """Why the file *file* of ``resolved/``, parsed as *document*, is not one ``regen`` wrote; ``None`` if it is.

    regen wrote it when it is an object carrying :data:`GENERATOR` with an
    integer ``format_version`` of at least 1, and: for ``index.json``, the
    index's shape (``$defs/index``); for any other file, a file name that is
    its ``name`` plus ``.json`` and the artifact's shape. The shape is the
    schema's for the current :data:`FORMAT_VERSION`, and for another version
    only the members every format has, so a format change still replaces
    regen's own older files.

    Returns:
        ``None``, or a clause for a message, e.g. ``"its name 'gpt2' is not
        its file name (that would be gpt2.json)"``.
    """
    if not carries_mark(document):
        return "it does not carry the mark of modelspec regen"
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        return "it states no format_version"
    if file != INDEX_FILE:
        name = document.get("name")
        if not isinstance(name, str):
            return "it states no name"
        if file != name + ARTIFACT_SUFFIX:
            return f"its name {name!r} is not its file name (that would be {name + ARTIFACT_SUFFIX})"
    if version != FORMAT_VERSION:
        return _header_problem(file, document)
    return _shape_problem(document, "/$defs/index" if file == INDEX_FILE else "")


def is_generated(file: str, document: Any) -> bool:
    """Whether the file *file* of ``resolved/``, parsed as *document*, is regen's (:func:`generated_problem`)."""
    return generated_problem(file, document) is None


@dataclass(frozen=True)
class IndexEntry:
    """One line of ``resolved/index.json``.

    Attributes:
        name: The model's name.
        file: The artifact's file name inside ``resolved/``.
        path: The spec the artifact was built from.
        digest: The artifact's digest.
        current: ``False`` when the spec fails ``check`` now and the artifact
            is kept from an earlier run.
    """

    name: str
    file: str
    path: str
    digest: str
    current: bool = True


def build_index(entries: Sequence[IndexEntry]) -> Dict[str, Any]:
    """Return the index document: every artifact, sorted by file name."""
    return {
        "format_version": FORMAT_VERSION,
        "generator": GENERATOR,
        "artifacts": [{"name": entry.name, "file": entry.file, "path": entry.path, "digest": entry.digest,
                       "current": entry.current}
                      for entry in sorted(entries, key=lambda entry: entry.file)],
    }
