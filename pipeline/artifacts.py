"""The resolved-stack artifact: what a downstream cost model reads instead of a raw spec.

One artifact per spec that passes ``check``: its name, path and arch; the
groups of its layer stack in model order, each with its kind, count, MTP
flag, attention and feed-forward flavour; each kind's op counts; the
linear-attention dimensions; the vision tower's stack; the derived widths
(``effective_head_dim``, ``attention_width``, ``routed_expert_width``,
``shared_expert_width``); and a digest of its inputs. ``resolved/index.json``
lists every artifact with its digest. The shapes are
``schemas/resolved-stack.schema.json`` (the index is its ``$defs/index``).

Decisions, and why:

- **JSON, not YAML.** Every downstream cost model reads JSON with its
  language's standard library, without a YAML dependency or YAML's
  ambiguities, and ``json.dumps(sort_keys=True, indent=2)`` of plain dicts,
  lists, strings, integers and booleans is byte-deterministic: no hash
  order, no timestamps, no float formatting (every value here is an integer,
  a string, a boolean or ``null``). Lists keep model order; object keys are
  sorted.
- **The digest covers exactly the inputs the document is computed from**: the
  artifact format version (:data:`FORMAT_VERSION`), the spec's path as the
  artifact records it, the spec file's bytes, its op profile file's bytes,
  and the vision profile's bytes when it has a tower. Not modelspec's
  version and not a time: two runs on the same inputs give the same digest.
  The path is an input because the artifact states it: a spec moved to
  another folder gives a different artifact, so it must give a different
  digest. Each input is framed by its label and length before it is hashed
  (SHA-256), so no two different input sets hash the same bytes.
- **A generator mark** (``"generator": "modelspec regen"``) in every artifact
  is how ``regen`` tells a file it wrote from one a person put in
  ``resolved/``: it removes or overwrites only files that carry it.
- Absent is not zero: a model without linear attention or a tower has
  ``null`` there, never an empty record.

This module is pure: it builds documents from a
:class:`~pipeline.runner.CheckedSpec` and bytes it is given, and renders them
as text; reading and writing files is :mod:`pipeline.regen`'s.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.runner import CheckedSpec
from pipeline.stack import LayerStack

#: The artifact format's version: raised when a key is removed or changes
#: meaning; part of every digest, so a format change makes every artifact stale.
FORMAT_VERSION = 1

#: The mark that says a file in ``resolved/`` was written by ``modelspec regen``.
GENERATOR = "modelspec regen"

#: The file ``regen`` writes beside the artifacts, listing them.
INDEX_FILE = "index.json"

#: The suffix of an artifact file: ``resolved/<name>.json``.
ARTIFACT_SUFFIX = ".json"

#: A spec name that may name a file: letters, digits, ``.``, ``_`` and ``-``, not starting with a dot.
SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")

#: The longest name that still makes a file name most file systems accept (255 bytes with ``.json``).
MAX_NAME_LENGTH = 255 - len(ARTIFACT_SUFFIX)

#: The derived widths an artifact records, each a :class:`~pipeline.model.ModelSpec` property.
WIDTHS = ("effective_head_dim", "attention_width", "routed_expert_width", "shared_expert_width")


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


def _stack_document(stack: LayerStack) -> Dict[str, Any]:
    """A stack's groups (model order), layer totals and used kinds."""
    return {
        "groups": [{"kind": group.kind.name, "count": group.count, "mtp": group.mtp,
                    "attention": group.kind.attention, "ffn": group.kind.ffn} for group in stack.groups],
        "kinds": {kind.name: {"attention": kind.attention, "ffn": kind.ffn, "ops": kind.ops.to_dict()}
                  for kind in stack.distinct_kinds()},
        "layers": {"body": sum(group.count for group in stack.groups if not group.mtp),
                   "mtp": sum(group.count for group in stack.groups if group.mtp)},
    }


def build_artifact(checked: CheckedSpec, inputs: ArtifactInputs) -> Dict[str, Any]:
    """Return the artifact document of a spec whose stack resolved.

    Args:
        checked: The spec's check, with ``spec`` and ``stack`` set (and
            ``tower`` when the spec has a vision tower).
        inputs: The bytes it was computed from, for the digest.

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
        "widths": {width: getattr(spec, width) for width in WIDTHS},
        "vision": None if checked.tower is None else {"arch": checked.tower.arch, **_stack_document(checked.tower)},
    }
    document.update(_stack_document(stack))
    return document


def render(document: Mapping[str, Any]) -> str:
    """Return *document* as the exact text written to disk: sorted keys, two-space indent, ASCII, final newline."""
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=True) + "\n"


def is_generated(document: Any) -> bool:
    """Whether a parsed JSON value is an artifact ``regen`` wrote: an object carrying :data:`GENERATOR`."""
    return isinstance(document, dict) and document.get("generator") == GENERATOR


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
