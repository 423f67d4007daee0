"""What a change does to the catalogue, told as resolved stacks and spec facts rather than YAML lines.

A reviewer of a spec change wants to know what moved for the cost models:
``deepseek-v3: moe 58 -> 57; MTP 1 -> 2``, ``deepseek-v3: num_experts 256 ->
128``, not that line 14 of a YAML file changed. This module compares two
catalogues of artifact documents (:mod:`pipeline.catalogue.artifacts`), matched by
model name, and renders the result as text (the terminal, a commit message)
or Markdown (a pull-request comment).

What counts as a move, in the order it is told for each model: the arch; the
number of body layers of each kind and of MTP layers, then, if the counts
agree but the sequence does not, that the stack was reordered; each kind's
attention and feed-forward flavour and op counts; the derived widths; the
parameter counts (``total 671.0B -> 660.3B``, then ``active``, ``mtp`` and
``vision``, exact where the rounded figures agree); the FLOPs per token at
4,096 tokens under both conventions and the KV-cache and state bytes
(``flops/token@4k 17.16G -> 18.01G``, ``kv_bytes_per_token 131,072 ->
65,536``); the vision tower's stack and kinds; every spec fact that changed, by its field
path (``num_key_value_heads 8 -> 1``, ``vision.hidden_size 1152 -> 1280``,
``layers[1].count 58 -> 57``; a record or list that appears or goes is
``vision added``, a list whose length changes ``layer_types 40 entries -> 48
entries``); and the spec's path. A fact told by a stack move already (a
stated ``arch``) is not told twice. The digest is not a move: it changes
with any byte of the spec, a comment included, and says nothing a reviewer
can act on. Two documents of different format versions (the commit that
upgrades ``resolved/``) are compared on what both formats mean alike: the
version, the stacks and the path.

A spec that does not resolve on one side is listed as such, not as a model
added or removed: a broken spec must not read as a deleted one. A spec that
newly fails to resolve, or no longer does, is a change.
:func:`load_catalogue` builds a catalogue from a spec repository's folder
(the working tree, or a revision exported by :mod:`pipeline.catalogue.git`), and
:func:`load_change` both sides of a change, resolving only the specs it touches;
everything else here is pure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from pipeline.cache import diff_memo
from pipeline.cache.artifacts import ArtifactCache
from pipeline.cache.results import ProfileCache, cache_keys
from pipeline.cache.stamps import content_digest
from pipeline.catalogue.artifacts import WIDTHS
from pipeline.catalogue.regen import Resolution, rebuild, resolve_specs
from pipeline.check.discovery import find_spec_files
from pipeline.check.repo import SpecRepo
from pipeline.check.verdict import read_spec_bytes
from pipeline.pricing.op_profiles import OpProfiles, load_op_profiles
from pipeline.spec.escape import markdown_code, markdown_text, printable
from pipeline.spec.model import MODEL_KEYS_ORDERED, KindActivations, LayerGroup, OpCounts, VisionSpec
from pipeline.spec.problems import FieldPath, dotted


def _fact_ranks() -> Dict[str, int]:
    """Each field name's rank among its siblings when facts are told.

    The model spec's field order, then the tower's, a layer group's, the
    ops' and an activations record's; a name already ranked keeps its rank.
    """
    ranks: Dict[str, int] = {}
    for name in (*MODEL_KEYS_ORDERED, *VisionSpec.keys(), *(f.name for f in fields(LayerGroup)), *OpCounts.names(),
                 *(f.name for f in fields(KindActivations))):
        ranks.setdefault(name, len(ranks))
    return ranks


#: The order spec facts are told in among siblings (:func:`_fact_ranks`); any
#: other key (a kind's name) after them, alphabetically.
_FACT_ORDER = _fact_ranks()


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
class Move:
    """One thing that moved for a model: a value that changed, or an event.

    Attributes:
        what: What moved: a layer kind (``moe``), ``MTP``, a kind's flavour or
            op (``moe.ffMM``), a derived width, a spec fact by its field path
            (``num_experts``, ``vision.hidden_size``), ``arch``, ``path``.
        before: The value before; ``None`` when it was absent.
        after: The value after; ``None`` when it is absent now.
        event: For an event, what happened (``added``, ``removed``,
            ``reordered``), and then *before* and *after* are ``None``.
        counts: For a parameter count, ``(before, after)`` as integers (*before* and *after* are the text a
            reader sees, ``671.0B``); the JSON document gives these.
    """

    what: str
    before: Any = None
    after: Any = None
    event: Optional[str] = None
    counts: Optional[Tuple[Optional[int], Optional[int]]] = field(default=None, compare=False)

    def text(self, arrow: str = "->") -> str:
        """``moe 58 -> 57``, ``qkv_bias false -> true``, ``moe.ffMM none -> 8``; an event is ``vision added``."""
        if self.event is not None:
            return f"{self.what} {self.event}"
        return f"{self.what} {_shown(self.before)} {arrow} {_shown(self.after)}"


def _shown(value: Any) -> str:
    """A value as a move tells it: ``none`` for absent, ``true``/``false`` for a flag, else as written."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class ModelChange:
    """What moved for one model present on both sides.

    Attributes:
        name: The model's name.
        moves: Each :class:`Move`, in the order of the module docstring.
    """

    name: str
    moves: Tuple[Move, ...]


@dataclass(frozen=True)
class CatalogueDiff:
    """The comparison of two catalogues.

    Attributes:
        base: The base side's label.
        head: The head side's label.
        added: ``(name, one-line summary)`` of each model only the head has, by name.
        removed: ``(name, one-line summary)`` of each model only the base has, by name.
        changed: Each model present on both sides whose stack or facts moved, by name.
        unchanged: How many models are present on both sides and did not move.
        failing: ``(side label, spec path, why)`` for each spec that did not resolve on a side.
        newly_failing: Spec paths that do not resolve at the head but did at the base, or were not there.
        no_longer_failing: Spec paths that did not resolve at the base and do at the head, or are gone.
    """

    base: str
    head: str
    added: Tuple[Tuple[str, str], ...]
    removed: Tuple[Tuple[str, str], ...]
    changed: Tuple[ModelChange, ...]
    unchanged: int
    failing: Tuple[Tuple[str, str, str], ...] = ()
    newly_failing: Tuple[str, ...] = ()
    no_longer_failing: Tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Whether nothing moved: no model added, removed or changed, and the same specs fail on both sides."""
        return not (self.added or self.removed or self.changed or self.newly_failing or self.no_longer_failing)


def _body_counts(groups: Sequence[Mapping[str, Any]]) -> Dict[str, int]:
    """Body layers per kind, kinds in order of first use."""
    counts: Dict[str, int] = {}
    for group in groups:
        if not group["mtp"]:
            counts[group["kind"]] = counts.get(group["kind"], 0) + group["count"]
    return counts


def _stack_moves(before: Mapping[str, Any], after: Mapping[str, Any], prefix: str) -> List[Move]:
    """Moves of a stack (a model's or a tower's): layers per kind, MTP layers, order, each kind's flavours and ops."""
    moves: List[Move] = []
    old, new = _body_counts(before["groups"]), _body_counts(after["groups"])
    for kind in list(new) + [kind for kind in old if kind not in new]:
        if old.get(kind, 0) != new.get(kind, 0):
            moves.append(Move(f"{prefix}{kind}", old.get(kind, 0), new.get(kind, 0)))
    if before["layers"]["mtp"] != after["layers"]["mtp"]:
        moves.append(Move(f"{prefix}MTP", before["layers"]["mtp"], after["layers"]["mtp"]))
    if not moves and list(before["groups"]) != list(after["groups"]):
        moves.append(Move(f"{prefix}layer stack", event="reordered"))
    for kind in after["kinds"]:
        if kind not in before["kinds"]:
            continue
        old_kind, new_kind = before["kinds"][kind], after["kinds"][kind]
        for flavour in ("attention", "ffn"):
            if old_kind[flavour] != new_kind[flavour]:
                moves.append(Move(f"{prefix}{kind}.{flavour}", old_kind[flavour], new_kind[flavour]))
        for op, count in new_kind["ops"].items():
            if old_kind["ops"].get(op) != count:
                moves.append(Move(f"{prefix}{kind}.{op}", old_kind["ops"].get(op), count))
    return moves


def _tower_moves(before: Optional[Mapping[str, Any]], after: Optional[Mapping[str, Any]]) -> List[Move]:
    """Moves of the vision tower's stack; a tower that appears or goes is told by the spec fact ``vision``."""
    if before is None or after is None:
        return []
    return _stack_moves(before, after, "vision ")


def _same(before: Any, after: Any) -> bool:
    """Whether two JSON values are equal as JSON (``true`` is not ``1``, ``1.0`` is not ``1``)."""
    return json.dumps(before, sort_keys=True) == json.dumps(after, sort_keys=True)


def _fact_order(key: Any) -> Tuple[int, str]:
    """Where a fact's key is told among its siblings (:data:`_FACT_ORDER`)."""
    return _FACT_ORDER.get(key, len(_FACT_ORDER)), str(key)


def _value_moves(path: FieldPath, before: Any, after: Any) -> List[Move]:
    """Moves of one spec fact at *path* (``()`` for the whole spec), recursing into records and lists."""
    if _same(before, after):
        return []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        return [move for key in sorted(set(before) | set(after), key=_fact_order)
                for move in _value_moves(path + (key,), before.get(key), after.get(key))]
    if isinstance(before, list) and isinstance(after, list):
        if len(before) == len(after):
            return [move for index, (old, new) in enumerate(zip(before, after))
                    for move in _value_moves(path + (index,), old, new)]
        return [Move(dotted(path), f"{len(before)} entries", f"{len(after)} entries")]
    if before is None and isinstance(after, (Mapping, list)):
        return [Move(dotted(path), event="added")]
    if after is None and isinstance(before, (Mapping, list)):
        return [Move(dotted(path), event="removed")]
    return [Move(dotted(path), before, after)]


#: The parameter counts a diff tells, in order.
PARAMETER_MOVES = ("total", "active", "mtp", "vision")


def _size(value: int) -> str:
    """A parameter count as a diff tells it: ``671.0B``, ``124.4M``."""
    return f"{value / 1e9:.1f}B" if value >= 10**9 else f"{value / 1e6:.1f}M"


def _parameter_moves(before: Mapping[str, Any], after: Mapping[str, Any]) -> List[Move]:
    """``total 671.0B -> 660.3B`` for each count of :data:`PARAMETER_MOVES` that moved; a count becoming
    uncountable, or countable, is told as ``parameters`` moving to or from ``none``."""
    if ("unpriced" in before) != ("unpriced" in after):
        return [Move("parameters", None if "unpriced" in before else _size(before["total"]),
                     None if "unpriced" in after else _size(after["total"]),
                     counts=(before.get("total"), after.get("total")))]
    if "unpriced" in before:
        return []
    moves = []
    for key in PARAMETER_MOVES:
        old, new = before[key], after[key]
        if old != new:
            shown = (_size(old), _size(new))
            moves.append(Move(key, *(shown if shown[0] != shown[1] else (f"{old:,}", f"{new:,}")), counts=(old, new)))
    return moves


#: The FLOPs and byte figures a diff tells when they move: ``(move name, sequence length or None, key)``.
FLOPS_MOVES = (("flops/token@4k", 4096, "per_token_dense"), ("flops/token@4k causal", 4096, "per_token_causal"),
               ("kv_bytes_per_token", None, "kv_bytes_per_token"), ("state_bytes", None, "state_bytes"))


def _flops_figure(flops: Mapping[str, Any], seq_len: Optional[int], key: str) -> Any:
    """One figure of an artifact's ``flops`` block; ``None`` where it states none."""
    if seq_len is None:
        return flops.get(key)
    return next((entry[key] for entry in flops.get("at", ()) if entry["seq_len"] == seq_len), None)


def _flops_moves(before: Optional[Mapping[str, Any]], after: Optional[Mapping[str, Any]]) -> List[Move]:
    """``flops/token@4k 17.16G -> 18.01G``, ``kv_bytes_per_token 131,072 -> 65,536``: each figure of
    :data:`FLOPS_MOVES` that moved; a model becoming unpriced, or priced, is ``flops`` to or from ``none``."""
    before, after = before or {"unpriced": ""}, after or {"unpriced": ""}
    if ("unpriced" in before) != ("unpriced" in after):
        return [Move("flops", None if "unpriced" in before else "priced", None if "unpriced" in after else "priced")]
    if "unpriced" in before:
        return []
    moves = []
    for name, seq_len, key in FLOPS_MOVES:
        old, new = _flops_figure(before, seq_len, key), _flops_figure(after, seq_len, key)
        if old != new:
            shown = [None if value is None else f"{value / 1e9:.2f}G" if seq_len else f"{value:,}"
                     for value in (old, new)]
            moves.append(Move(name, *(shown if shown[0] != shown[1] else (f"{old:,}", f"{new:,}"))))
    return moves


def model_moves(before: Mapping[str, Any], after: Mapping[str, Any]) -> Tuple[Move, ...]:
    """Every move between two artifact documents of one model, in the order of the module docstring."""
    moves: List[Move] = []
    same_format = before.get("format_version") == after.get("format_version")
    if not same_format:
        moves.append(Move("format_version", before.get("format_version"), after.get("format_version")))
    if before["arch"] != after["arch"]:
        moves.append(Move("arch", before["arch"], after["arch"]))
    moves.extend(_stack_moves(before, after, ""))
    if same_format:
        moves.extend(Move(width, before["widths"][width], after["widths"][width]) for width in WIDTHS
                     if before["widths"][width] != after["widths"][width])
    if same_format:
        moves.extend(_parameter_moves(before["parameters"], after["parameters"]))
        moves.extend(_flops_moves(before.get("flops"), after.get("flops")))
    moves.extend(_tower_moves(before["vision"], after["vision"]))
    if same_format:
        moves.extend(move for move in _value_moves((), before.get("spec", {}), after.get("spec", {}))
                     if move not in moves)
    if before["path"] != after["path"]:
        moves.append(Move("path", before["path"], after["path"]))
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
    # Each side holds the whole catalogue, a change a few models of it: what is sorted is what is told.
    added = tuple((name, model_summary(doc)) for name, doc in sorted(
        (name, doc) for name, doc in head.models.items()
        if name not in base.models and doc["path"] not in base_failing))
    removed = tuple((name, model_summary(doc)) for name, doc in sorted(
        (name, doc) for name, doc in base.models.items()
        if name not in head.models and doc["path"] not in head_failing))
    both = [name for name in head.models if name in base.models]
    # one document on both sides (a spec the change left alone, resolved once) did not move
    moved = sorted(name for name in both if base.models[name] is not head.models[name])
    changed = [ModelChange(name, moves) for name in moved
               if (moves := model_moves(base.models[name], head.models[name]))]
    unchanged = len(both) - len(changed)
    failing = tuple((side.label, path, why) for side in (base, head) for path, why in sorted(side.failing.items()))
    return CatalogueDiff(base.label, head.label, added, removed, tuple(changed), unchanged, failing,
                         tuple(sorted(head_failing - base_failing)), tuple(sorted(base_failing - head_failing)))


def _counts(diff: CatalogueDiff) -> str:
    """``1 added, 1 removed, 2 changed, 3 unchanged``, then ``, 1 newly failing, 1 no longer failing`` if any."""
    text = (f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed, "
            f"{diff.unchanged} unchanged")
    if diff.newly_failing:
        text += f", {len(diff.newly_failing)} newly failing"
    if diff.no_longer_failing:
        text += f", {len(diff.no_longer_failing)} no longer failing"
    return text


def render_text(diff: CatalogueDiff) -> str:
    """The comparison as plain text lines, ending in a newline: a headline, then one line per model."""
    lines = [f"resolved stacks {diff.base} -> {diff.head}: {_counts(diff)}"]
    lines.extend(f"added {name}: {summary}" for name, summary in diff.added)
    lines.extend(f"removed {name}: {summary}" for name, summary in diff.removed)
    lines.extend(f"{change.name}: {'; '.join(move.text() for move in change.moves)}" for change in diff.changed)
    lines.extend(f"does not resolve at {label}: {path} ({why})" for label, path, why in diff.failing)
    # Each line is escaped whole: names, values and paths come from the specs and the command line.
    return "".join(printable(line) + "\n" for line in lines)


def render_markdown(diff: CatalogueDiff) -> str:
    """The comparison as GitHub-flavoured Markdown for a pull-request comment, ending in a newline.

    Names, paths and labels are code spans, what moved is escaped text
    (:mod:`pipeline.spec.escape`): the specs of a pull request choose them, and
    the comment is posted by a bot.
    """
    lines = [f"### Resolved stacks: {markdown_code(diff.base, False)} → {markdown_code(diff.head, False)}", ""]
    if diff.empty:
        lines.append(f"No model's resolved stack changed ({diff.unchanged} unchanged).")
    else:
        lines.append(f"{_counts(diff)}.")
    if diff.added or diff.removed or diff.changed:
        lines.extend(["", "| model | what moved |", "| --- | --- |"])
        lines.extend(f"| {markdown_code(name)} | added: {markdown_text(summary)} |" for name, summary in diff.added)
        lines.extend(f"| {markdown_code(name)} | removed: {markdown_text(summary)} |" for name, summary in diff.removed)
        lines.extend(f"| {markdown_code(change.name)} | {markdown_text('; '.join(move.text('→') for move in change.moves))} |"
                     for change in diff.changed)
    if diff.failing:
        lines.append("")
        lines.extend(f"- :warning: {markdown_code(path, False)} does not resolve at {markdown_code(label, False)}: {markdown_text(why)}"
                     for label, path, why in diff.failing)
    return "\n".join(lines) + "\n"


#: The version of the ``diff --format json`` document (``schemas/catalogue-diff.schema.json``).
DIFF_SCHEMA_VERSION = 1


def render_json(diff: CatalogueDiff) -> str:
    """The comparison as the JSON document of ``schemas/catalogue-diff.schema.json``, ending in a newline."""
    def move(item: Move) -> Dict[str, Any]:
        before, after = item.counts if item.counts is not None else (item.before, item.after)
        return {"what": item.what, "before": before, "after": after, "event": item.event}

    document = {
        "schema_version": DIFF_SCHEMA_VERSION,
        "base": diff.base,
        "head": diff.head,
        "empty": diff.empty,
        "added": [{"name": name, "summary": summary} for name, summary in diff.added],
        "removed": [{"name": name, "summary": summary} for name, summary in diff.removed],
        "changed": [{"name": change.name, "moves": [move(item) for item in change.moves]} for change in diff.changed],
        "unchanged": diff.unchanged,
        "failing": [{"side": side, "path": path, "why": why} for side, path, why in diff.failing],
        "newly_failing": list(diff.newly_failing),
        "no_longer_failing": list(diff.no_longer_failing),
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _first_problem(errors) -> str:
    """``line 8: [spec.kv-heads-divide] num_attention_heads (8) must ...`` (and how many more): why a spec fails."""
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"line {first.line}: [{first.code}] {first.message.splitlines()[0]}{more}"


#: Resolutions (:class:`pipeline.catalogue.regen.Resolution`) one side of a comparison made, for the other to take, by
#: ``(op profiles, display, spec bytes)``, each as a digest: :func:`load_catalogue`'s *shared*.
SharedResolutions = Dict[Tuple[str, str, str], Any]


def load_catalogue(repo: SpecRepo, label: str, progress: Optional[Callable[[int], None]] = None,
                   profiles_cache: Optional[Path] = None, shared: Optional[SharedResolutions] = None,
                   files: Optional[Sequence[Path]] = None) -> Catalogue:
    """Check and resolve every spec of *repo* (*files*, when the caller has walked them already) into a
    :class:`Catalogue` named *label*; *progress* is called with the number of specs done since its last call; the
    op profiles are kept checked in the result cache folder *profiles_cache*
    (:func:`pipeline.pricing.op_profiles.load_op_profiles`), when given.

    A spec that fails check, whose stack does not resolve, or whose name an
    earlier spec (by path) already has, is listed as failing with why.

    With *shared*, a spec whose resolution it holds is not resolved again, and each one resolved is added
    to it (:func:`_resolutions`): the two sides of a comparison mostly hold the same specs.

    Raises:
        OpProfileError: If the repository's op profiles are broken.
    """
    if files is None:
        files = find_spec_files([repo.specs]) if repo.specs.is_dir() else []
    profiles = load_op_profiles(repo.profiles, ProfileCache(profiles_cache) if profiles_cache else None)
    return catalogue_of(label, _resolutions(repo, files, profiles, progress, shared))


def catalogue_of(label: str, resolutions: Sequence[Any]) -> Catalogue:
    """The :class:`Catalogue` named *label* of *resolutions* (:class:`pipeline.catalogue.regen.Resolution`,
    sorted by path): a spec that fails check, whose stack does not resolve, or whose name an earlier spec
    already has, is listed as failing with why."""
    models: Dict[str, Mapping[str, Any]] = {}
    failing: Dict[str, str] = {}
    for item in resolutions:
        if item.document is None:
            failing[item.path] = f"fails modelspec check: {_first_problem(item.errors)}" if item.errors \
                else "its layer stack does not resolve"
        elif item.document["name"] in models:
            failing[item.path] = f"its name is also {models[item.document['name']]['path']}'s"
        else:
            models[item.document["name"]] = item.document
    return Catalogue(label, models, failing)


def _resolutions(repo: SpecRepo, files: Sequence[Path], profiles: Any, progress: Optional[Callable[[int], None]],
                 shared: Optional[SharedResolutions]) -> List[Any]:
    """:func:`pipeline.catalogue.regen.resolve_specs` of *files*, sorted by path, but for the specs *shared* holds.

    A resolution is decided by the spec's display and bytes, the op profiles
    (each arch's file, and which archs there are: :func:`pipeline.cache.results.cache_keys`) and modelspec,
    which is the same for both sides of one run: a spec with the same three as one *shared* holds resolves as
    that one did, so its resolution is taken. A spec that cannot be read as a regular file is resolved (its
    failure told as ever), and so is every spec when the profiles cannot be read again.
    """
    if shared is None:
        return resolve_specs(repo, files, profiles, progress)
    try:
        against = content_digest(json.dumps(sorted(cache_keys(profiles).profiles.items())).encode())
    except OSError:
        return resolve_specs(repo, files, profiles, progress)
    taken, to_resolve, keys = [], [], {}
    for path, display in zip(files, repo.displays([str(path) for path in files])):
        raw = read_spec_bytes(path)
        key = (against, display, content_digest(raw)) if raw is not None else None
        if key in shared:
            taken.append(shared[key])
            continue
        to_resolve.append(path)
        keys[display] = key
    if progress and taken:
        progress(len(taken))
    resolved = resolve_specs(repo, to_resolve, profiles, progress)
    shared.update((keys[item.path], item) for item in resolved if keys[item.path] is not None)
    return sorted([*taken, *resolved], key=lambda item: item.path)


def load_change(repo: SpecRepo, base: Tuple[SpecRepo, Sequence[Path]], head_files: Sequence[str],
                unchanged: Sequence[str], labels: Tuple[str, str], profiles: OpProfiles,
                cache: Optional[ArtifactCache] = None, shown: Optional[Mapping[str, str]] = None,
                blobs: Optional[Mapping[str, str]] = None) -> Tuple[Catalogue, Catalogue]:
    """Both sides of a change whose op profiles are equal on both sides (and are *repo*'s), each spec resolved
    only where the change touches it.

    Args:
        repo: The head side (the working tree).
        base: The base side's repository (the specs the change touches, exported) and its spec files.
        head_files: The head's spec files the change touches (added, modified, renamed), as path strings (ten
            thousand unchanged specs cost no ``Path`` each).
        unchanged: The head's spec files the base holds at the same path with the same bytes: one resolution
            stands for both sides. With *cache*, it is the artifact cache's (:func:`~pipeline.catalogue.regen.
            resolve_specs`: only the name, path and digest of a spec whose artifact it knows, a failing
            verdict as recorded), and such a spec is not resolved at all; a spec it does not answer is
            resolved (and its record added to the cache). A spec the cache answers by its name alone is
            resolved after all when a model of its name changed on a side (:func:`_stand_ins`).
        labels: The base's and the head's labels.
        profiles: The op profiles, both sides'.
        cache: The artifact cache, or ``None``.
        shown: The display of each of *head_files* and *unchanged*, when the caller has them.
        blobs: The git blob id of each of *unchanged* at the base, by display: with *cache*, a spec
            :mod:`pipeline.cache.diff_memo` remembers under its blob is not looked up at all (:func:`_kept`).

    Raises:
        OSError: If a spec or profile file cannot be read after it was checked.
    """
    memo = diff_memo.load(cache.folder, cache.keys.every_profile(), repo.specs) if cache else {}
    kept, looked_up = _kept(repo, unchanged, profiles, cache, shown, blobs or {}, memo)
    before_own = resolve_specs(base[0], base[1], profiles)
    after_own = resolve_specs(repo, head_files, profiles, shown=shown)
    sides = _sides(labels, kept, before_own, after_own)
    wanted = _stand_ins(kept, *sides)
    if wanted:
        kept = rebuild(kept, wanted, profiles)
        sides = _sides(labels, kept, before_own, after_own)
    if cache is not None and (looked_up or wanted):
        _remember(cache, repo, kept, blobs or {}, memo)
    return sides


def _kept(repo: SpecRepo, unchanged: Sequence[str], profiles: OpProfiles, cache: Optional[ArtifactCache],
          shown: Optional[Mapping[str, str]], blobs: Mapping[str, str], memo: diff_memo.Memo
          ) -> Tuple[List[Any], int]:
    """The resolutions of the specs a change leaves alone (:func:`load_change`'s *unchanged*), sorted by path, and
    how many were not in the memo: a spec *memo* remembers under its blob (*blobs*) as its name and digest only
    (as a spec the artifact cache answers), every other one from :func:`~pipeline.catalogue.regen.resolve_specs`
    with *cache*."""
    if cache is None:
        return resolve_specs(repo, unchanged, profiles, shown=shown), len(unchanged)
    display_of = shown.__getitem__ if shown is not None else repo.display
    taken, rest = [], []
    for path in unchanged:
        display = display_of(path)
        known = diff_memo.remembered(memo, display, blobs.get(display))
        if known is None:
            rest.append(path)
        else:
            taken.append(Resolution(display, None, {"name": known[0], "path": display, "digest": known[1]}, path))
    return sorted([*taken, *resolve_specs(repo, rest, profiles, cache=cache, shown=shown)],
                  key=lambda item: item.path), len(rest)


def _remember(cache: ArtifactCache, repo: SpecRepo, kept: Sequence[Any], blobs: Mapping[str, str],
              held: diff_memo.Memo) -> None:
    """Record in the memo each of *kept* that resolved, under its blob (*blobs*), and keep what it held (*held*)
    of the base's other specs; the file is rewritten only when that differs from *held*."""
    memo = {display: value for display, value in held.items() if display in blobs}
    memo.update((item.path, [blobs[item.path], item.document["name"], item.document["digest"]])
                for item in kept if item.document is not None and item.path in blobs)
    if memo != held:
        diff_memo.record(cache.folder, cache.keys.every_profile(), repo.specs, memo)


def _sides(labels: Tuple[str, str], kept: Sequence[Any], before: Sequence[Any], after: Sequence[Any]
           ) -> Tuple[Catalogue, Catalogue]:
    """The two catalogues of the resolutions *kept* on both sides and each side's own, by path."""
    return (catalogue_of(labels[0], sorted([*kept, *before], key=lambda item: item.path)),
            catalogue_of(labels[1], sorted([*kept, *after], key=lambda item: item.path)))


def _stand_ins(kept: Sequence[Any], base: Catalogue, head: Catalogue) -> Set[str]:
    """The paths of the specs of *kept* whose document is only what the artifact cache or the memo knows of it
    (its name, path and digest: it was not checked) while a comparison needs all of it: its name is another
    document's on the other side, or on no side but one."""
    partial = {id(item.document): item.path for item in kept if item.checked is None and item.document is not None}
    wanted = set()
    for name in set(base.models) | set(head.models):
        before, after = base.models.get(name), head.models.get(name)
        if before is not after:
            wanted.update(partial[id(doc)] for doc in (before, after) if doc is not None and id(doc) in partial)
    return wanted
