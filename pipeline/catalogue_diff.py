"""What a change does to the catalogue, told as resolved stacks rather than YAML lines.

A reviewer of a spec change wants to know what moved for the cost models:
``deepseek-v3: moe 58 -> 57; MTP 1 -> 2``, not that line 14 of a YAML file
changed. This module compares two catalogues of artifact documents
(:mod:`pipeline.artifacts`), matched by model name, and renders the result as
text (the terminal, a commit message) or Markdown (a pull-request comment).

What counts as a move, in the order it is told for each model: the arch; the
number of body layers of each kind and of MTP layers, then, if the counts
agree but the sequence does not, that the stack was reordered; each kind's
attention and feed-forward flavour and op counts; the linear-attention
dimensions; the derived widths; the vision tower's stack and kinds; and the
spec's path. The digest is not a move: it changes with any byte of the spec,
a comment included, and says nothing a reviewer can act on.

A spec that does not resolve on one side is listed as such, not as a model
added or removed: a broken spec must not read as a deleted one.
:func:`load_catalogue` builds a catalogue from a spec repository's folder
(the working tree, or a revision exported by :mod:`pipeline.git_changes`);
everything else here is pure.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.artifacts import WIDTHS
from pipeline.repo import SpecRepo

#: The linear-attention dimensions compared, in the order they are told.
_LINEAR = ("num_key_heads", "key_head_dim", "num_value_heads", "value_head_dim", "conv_kernel_dim")


@dataclass(frozen=True)
class Catalogue:
    """One side of a comparison: every model's artifact document, and the specs that did not resolve.

    Attributes:
        label: How reports name this side, e.g. ``origin/main`` or ``working tree``.
        models: Artifact documents by model name.
        failing: Spec paths that gave no document, each with why (e.g. ``fails modelspec check``).
    """

    label: str
    models: Mapping[str, Mapping[str, Any]]
    failing: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelChange:
    """What moved for one model present on both sides.

    Attributes:
        name: The model's name.
        moves: Each move as ``(what, before, after)``, e.g. ``("moe", 58, 57)``; a
            move that is an event has no *after*: ``("vision tower", "added", None)``
            (see :func:`move_text`).
    """

    name: str
    moves: Tuple[Tuple[str, Any, Any], ...]


@dataclass(frozen=True)
class CatalogueDiff:
    """The comparison of two catalogues.

    Attributes:
        base: The base side's label.
        head: The head side's label.
        added: ``(name, one-line summary)`` of each model only the head has, by name.
        removed: ``(name, one-line summary)`` of each model only the base has, by name.
        changed: Each model present on both sides whose stack moved, by name.
        unchanged: How many models are present on both sides and did not move.
        failing: ``(side label, spec path, why)`` for each spec that did not resolve on a side.
    """

    base: str
    head: str
    added: Tuple[Tuple[str, str], ...]
    removed: Tuple[Tuple[str, str], ...]
    changed: Tuple[ModelChange, ...]
    unchanged: int
    failing: Tuple[Tuple[str, str, str], ...] = ()

    @property
    def empty(self) -> bool:
        """Whether no model was added, removed or changed."""
        return not (self.added or self.removed or self.changed)


def _body_counts(groups: Sequence[Mapping[str, Any]]) -> Dict[str, int]:
    """Body layers per kind, kinds in order of first use."""
    counts: Dict[str, int] = {}
    for group in groups:
        if not group["mtp"]:
            counts[group["kind"]] = counts.get(group["kind"], 0) + group["count"]
    return counts


def _stack_moves(before: Mapping[str, Any], after: Mapping[str, Any], prefix: str) -> List[Tuple[str, Any, Any]]:
    """Moves of a stack (a model's or a tower's): layers per kind, MTP layers, order, each kind's flavours and ops."""
    moves: List[Tuple[str, Any, Any]] = []
    old, new = _body_counts(before["groups"]), _body_counts(after["groups"])
    for kind in list(new) + [kind for kind in old if kind not in new]:
        if old.get(kind, 0) != new.get(kind, 0):
            moves.append((f"{prefix}{kind}", old.get(kind, 0), new.get(kind, 0)))
    if before["layers"]["mtp"] != after["layers"]["mtp"]:
        moves.append((f"{prefix}MTP", before["layers"]["mtp"], after["layers"]["mtp"]))
    if not moves and list(before["groups"]) != list(after["groups"]):
        moves.append((f"{prefix}layer stack", "reordered", None))
    for kind in after["kinds"]:
        if kind not in before["kinds"]:
            continue
        old_kind, new_kind = before["kinds"][kind], after["kinds"][kind]
        for flavour in ("attention", "ffn"):
            if old_kind[flavour] != new_kind[flavour]:
                moves.append((f"{prefix}{kind}.{flavour}", old_kind[flavour], new_kind[flavour]))
        for op, count in new_kind["ops"].items():
            if old_kind["ops"].get(op) != count:
                moves.append((f"{prefix}{kind}.{op}", old_kind["ops"].get(op), count))
    return moves


def _linear_moves(before: Optional[Mapping[str, Any]],
                  after: Optional[Mapping[str, Any]]) -> List[Tuple[str, Any, Any]]:
    """Moves of the linear-attention dimensions."""
    if before is None or after is None:
        return [] if before == after else [("linear_attention", "added" if before is None else "removed", None)]
    return [(f"linear_attention.{dim}", before[dim], after[dim]) for dim in _LINEAR if before[dim] != after[dim]]


def _tower_moves(before: Optional[Mapping[str, Any]], after: Optional[Mapping[str, Any]]) -> List[Tuple[str, Any, Any]]:
    """Moves of the vision tower."""
    if before is None or after is None:
        if before == after:
            return []
        return [("vision tower", "added", None)] if before is None else [("vision tower", "removed", None)]
    return _stack_moves(before, after, "vision ")


def model_moves(before: Mapping[str, Any], after: Mapping[str, Any]) -> Tuple[Tuple[str, Any, Any], ...]:
    """Every move between two artifact documents of one model, in the order of the module docstring."""
    moves: List[Tuple[str, Any, Any]] = []
    if before["arch"] != after["arch"]:
        moves.append(("arch", before["arch"], after["arch"]))
    moves.extend(_stack_moves(before, after, ""))
    moves.extend(_linear_moves(before["linear_attention"], after["linear_attention"]))
    moves.extend((width, before["widths"][width], after["widths"][width]) for width in WIDTHS
                 if before["widths"][width] != after["widths"][width])
    moves.extend(_tower_moves(before["vision"], after["vision"]))
    if before["path"] != after["path"]:
        moves.append(("path", before["path"], after["path"]))
    return tuple(moves)


def model_summary(document: Mapping[str, Any]) -> str:
    """One line about a model: ``deepseek_v3, 61 layers + 1 MTP, vision tower of 27 layers``."""
    layers = document["layers"]
    text = f"{document['arch']}, {layers['body']} layers"
    if layers["mtp"]:
        text += f" + {layers['mtp']} MTP"
    if document["vision"] is not None:
        text += f", vision tower of {document['vision']['layers']['body']} layers"
    return text


def diff_catalogues(base: Catalogue, head: Catalogue) -> CatalogueDiff:
    """Compare two catalogues by model name.

    A model only one side has is added or removed, unless its spec path is
    among the other side's failing specs: then it is only listed as failing.
    """
    head_failing, base_failing = set(head.failing), set(base.failing)
    added = tuple((name, model_summary(doc)) for name, doc in sorted(head.models.items())
                  if name not in base.models and doc["path"] not in base_failing)
    removed = tuple((name, model_summary(doc)) for name, doc in sorted(base.models.items())
                    if name not in head.models and doc["path"] not in head_failing)
    changed, unchanged = [], 0
    for name in sorted(set(base.models) & set(head.models)):
        moves = model_moves(base.models[name], head.models[name])
        if moves:
            changed.append(ModelChange(name, moves))
        else:
            unchanged += 1
    failing = tuple((side.label, path, why) for side in (base, head) for path, why in sorted(side.failing.items()))
    return CatalogueDiff(base.label, head.label, added, removed, tuple(changed), unchanged, failing)


def move_text(move: Tuple[str, Any, Any], arrow: str = "->") -> str:
    """``moe 58 -> 57``; a move without an *after* (``("vision tower", "added", None)``) is ``vision tower added``."""
    what, before, after = move
    if after is None:
        return f"{what} {before}"
    return f"{what} {'none' if before is None else before} {arrow} {after}"


def _counts(diff: CatalogueDiff) -> str:
    """``1 added, 1 removed, 2 changed, 3 unchanged``."""
    return (f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed, "
            f"{diff.unchanged} unchanged")


def render_text(diff: CatalogueDiff) -> str:
    """The comparison as plain text lines, ending in a newline: a headline, then one line per model."""
    lines = [f"resolved stacks {diff.base} -> {diff.head}: {_counts(diff)}"]
    lines.extend(f"added {name}: {summary}" for name, summary in diff.added)
    lines.extend(f"removed {name}: {summary}" for name, summary in diff.removed)
    lines.extend(f"{change.name}: {'; '.join(move_text(move) for move in change.moves)}" for change in diff.changed)
    lines.extend(f"does not resolve at {label}: {path} ({why})" for label, path, why in diff.failing)
    return "\n".join(lines) + "\n"


def _code(text: str, in_table: bool = True) -> str:
    """*text* as a Markdown code span, whatever backticks it holds; in a table cell its pipes are escaped."""
    runs = re.findall(r"`+", text)
    fence = "`" * (max(map(len, runs), default=0) + 1)
    padded = f" {text} " if runs else text
    span = f"{fence}{padded}{fence}"
    return span.replace("|", "\\|") if in_table else span


def _cell(text: str) -> str:
    """*text* safe in a Markdown table cell: HTML escaped, pipes escaped."""
    return html.escape(text, quote=False).replace("|", "\\|")


def render_markdown(diff: CatalogueDiff) -> str:
    """The comparison as GitHub-flavoured Markdown for a pull-request comment, ending in a newline."""
    lines = [f"### Resolved stacks: {_code(diff.base, False)} → {_code(diff.head, False)}", ""]
    if diff.empty:
        lines.append(f"No model's resolved stack changed ({diff.unchanged} unchanged).")
    else:
        lines.extend([f"{_counts(diff)}.", "", "| model | what moved |", "| --- | --- |"])
        lines.extend(f"| {_code(name)} | added: {_cell(summary)} |" for name, summary in diff.added)
        lines.extend(f"| {_code(name)} | removed: {_cell(summary)} |" for name, summary in diff.removed)
        lines.extend(f"| {_code(change.name)} | {_cell('; '.join(move_text(m, '→') for m in change.moves))} |"
                     for change in diff.changed)
    if diff.failing:
        lines.append("")
        lines.extend(f"- :warning: {_code(path, False)} does not resolve at {_code(label, False)}: {_cell(why)}"
                     for label, path, why in diff.failing)
    return "\n".join(lines) + "\n"


def load_catalogue(repo: SpecRepo, label: str) -> Catalogue:
    """Check and resolve every spec of *repo* into a :class:`Catalogue` named *label*.

    A spec that fails check, whose stack does not resolve, or whose name an
    earlier spec (by path) already has, is listed as failing with why.

    Raises:
        OpProfileError: If the repository's op profiles are broken.
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.op_profiles import load_op_profiles
    from pipeline.regen import resolve_specs
    from pipeline.runner import find_spec_files

    files = find_spec_files([repo.specs]) if repo.specs.is_dir() else []
    models: Dict[str, Mapping[str, Any]] = {}
    failing: Dict[str, str] = {}
    for item in resolve_specs(repo, files, load_op_profiles(repo.profiles)):
        if item.document is None:
            failing[item.path] = "fails modelspec check" if item.errors else "its layer stack does not resolve"
        elif item.document["name"] in models:
            failing[item.path] = f"its name is also {models[item.document['name']]['path']}'s"
        else:
            models[item.document["name"]] = item.document
    return Catalogue(label, models, failing)
