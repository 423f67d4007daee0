"""The catalogue as a reader sees it: specs found by name, the ``list`` table and the ``show`` diagram.

A catalogue model is named by the ``name`` its spec file states, not by the
file's path, so ``modelspec show deepseek-v3`` finds
``specs/deepseek/deepseek-v3.yaml`` wherever it sits under ``specs/``; a name
stated by two files is refused, as a name must pick one model.

What ``show`` prints is a view of a checked spec (:class:`~pipeline.check.runner.CheckedSpec`):
the resolved stack's groups with their layer ranges, each kind's attention
and feed-forward flavour and op counts, the op totals over the stack, the
MLA ranks or linear-attention dimensions when the stack has such layers, the
derived widths of the model IR, and the vision tower's stack. The JSON form
(:func:`pipeline.catalogue.model_view.show_view`) is the data; the text diagram
(:func:`render_show`) is drawn from it, so the two cannot disagree. A repeated
cycle of groups (5 sliding, 1 full, ten times) is drawn once with its repeat count.

Cheap to import on purpose: ``show`` answered from its recorded view and ``list``
from the catalogue index draw with this module alone, no pass or pricing module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from pipeline.check.rows import LIST_COLUMNS, list_cells

# The derived widths the text diagram leaves out for a dense model (the IR falls back to the dense width).
_EXPERT_WIDTHS = ("routed_expert_width", "shared_expert_width")


class CatalogueError(LookupError):
    """A name the catalogue cannot resolve to one spec: absent, or stated by two files.

    Attributes:
        stated: Whether the name is stated, by more than one file (else no spec states it).
    """

    def __init__(self, message: str, stated: bool = False) -> None:
        super().__init__(message)
        self.stated = stated


@dataclass(frozen=True)
class Entry:
    """One spec file of the catalogue.

    Attributes:
        path: The file (a path string when found by walking a catalogue: no ``Path`` per file).
        file: Its path as reports show it.
        name: The ``name`` it states, or ``None`` when it states none (or does not load).
    """

    path: "Path | str"
    file: str
    name: Optional[str]


#: The most names a "no spec is named" message lists when none is close to the one asked for.
LISTED_NAMES = 10


def find(catalogue: Sequence[Entry], name: str) -> Entry:
    """The entry whose spec states *name*.

    Names are told apart case-folded, as ``check`` and ``regen`` tell them
    (two names one artifact file would serve): two specs stating ``gpt2``
    and ``GPT2`` both state the name, and a spec stating only ``GPT2`` is
    suggested for ``gpt2``, not taken.

    Raises:
        CatalogueError: When no spec states it (naming the closest names,
            else every name, else that there is none, and the files whose
            name cannot be read) or two do (naming both files; ``stated`` is
            then true).
    """
    folded = name.casefold()
    matches = [entry for entry in catalogue if entry.name is not None and entry.name.casefold() == folded]
    if len(matches) > 1:
        spelled = sorted({entry.name for entry in matches})
        how = "" if len(spelled) == 1 else f" (as {', '.join(map(repr, spelled))}: names are compared case-folded)"
        raise CatalogueError(f"the name {name!r} is stated by {' and '.join(e.file for e in matches)}{how}; a name "
                             "picks one spec, so rename one of them", stated=True)
    if matches and matches[0].name == name:
        return matches[0]
    if matches:
        raise CatalogueError(f"no spec in the catalogue is named {name!r}; did you mean {matches[0].name}?")
    raise CatalogueError(f"no spec in the catalogue is named {name!r}{_not_found_hint(catalogue, name)}")


def _not_found_hint(catalogue: Sequence[Entry], name: str) -> str:
    """What follows "no spec is named X": the closest names (else every name, else that there is none), then the
    files whose name cannot be read."""
    from pipeline.spec.problems import near_misses  # pylint: disable=import-outside-toplevel  # only when not found

    names = sorted(entry.name for entry in catalogue if entry.name)
    close = near_misses(name, names, n=3)
    if close:
        hint = f"; did you mean {', '.join(close)}?"
    elif len(names) > LISTED_NAMES:
        hint = f"; none of the {len(names)} names is close to it (modelspec list shows them all)"
    else:
        hint = f"; the names are {', '.join(names)}" if names else "; no spec under specs/ states a name"
    unnamed = [entry.file for entry in catalogue if entry.name is None]
    if unnamed:  # one of them may be the spec asked for: say where to look
        files = ", ".join(unnamed[:3]) + (f" and {len(unnamed) - 3} more" if len(unnamed) > 3 else "")
        hint += f"; {files} state{'s' if len(unnamed) == 1 else ''} no name that can be read (modelspec check " \
                "says why)"
    return hint


# ---- show ---------------------------------------------------------------------------

_PARAMETER_COLUMNS = ("attention", "mlp", "routed_experts", "shared_experts", "router", "norms")


def _parameter_lines(counts: Dict[str, Any], mtp_layers: int) -> List[str]:
    """``671,026,404,352 parameters, 37,552,282,624 active; MTP 1 layer, ...``, then where they are, per kind
    (the body's layers of a kind together, MTP layers apart)."""
    if "unpriced" in counts:
        return [f"parameters: not counted ({counts['unpriced']})"]
    line = f"{counts['total']:,} parameters, {counts['active']:,} active"
    if mtp_layers:
        line += f"; MTP {mtp_layers} layer{'s' if mtp_layers > 1 else ''}, {counts['mtp']:,} parameters apart"
    outside = [f"{name} {counts[key]:,}" for key, name in (("embedding", "embedding"), ("head", "head"),
                                                        ("position", "position table"),
                                                        ("final_norm", "final norm"), ("other", "other"),
                                                        ("vision", "vision tower"))
               if counts[key]]
    by_kind: Dict[Tuple[str, bool], Dict[str, int]] = {}
    for group in counts["groups"]:
        row = by_kind.setdefault((group["kind"], group["mtp"]), dict.fromkeys(("count", "total", *_PARAMETER_COLUMNS), 0))
        for key in row:
            row[key] += group[key]
    rows = [["kind", "layers", *(column.replace("_", " ") for column in _PARAMETER_COLUMNS), "total"]]
    for (kind, mtp), row in by_kind.items():
        rows.append([kind + (" (MTP)" if mtp else ""), str(row["count"]),
                     *(f"{row[column]:,}" for column in _PARAMETER_COLUMNS), f"{row['total']:,}"])
    return [line, "  " + ", ".join(outside) if outside else "  no parameters outside the layers", ""] + \
        _table(rows, right=tuple(range(1, len(rows[0]))))


def _flops_lines(flops: Dict[str, Any]) -> List[str]:
    """The FLOPs at the view's sequence length under both conventions, per kind, and the bytes."""
    if "unpriced" in flops:
        return [f"flops: not priced ({flops['unpriced']})"]
    n = flops["seq_len"]
    lines = [f"flops at {n:,} tokens (forward; a FMA is 2; training = 3 x forward): "
             f"dense {flops['forward_dense']:.4g} ({flops['per_token_dense']:,}/token), "
             f"causal {flops['forward_causal']:.4g} ({flops['per_token_causal']:,}/token)",
             f"  head {flops['head']:.4g}" + (f", MTP apart {flops['mtp_dense']:.4g}" if flops["mtp_dense"] else ""),
             ""]
    rows = [["kind", "layers", "attention", "weights", "attn dense", "attn causal", "kv B/token", "state B"]]
    for kind, row in flops["kinds"].items():
        rows.append([kind, str(row["layers"]), row["attention"], f"{row['weights']:.4g}",
                     f"{row['attention_dense']:.4g}", f"{row['attention_causal']:.4g}",
                     f"{row['kv_bytes_per_token']:,}", f"{row['state_bytes']:,}"])
    lines += _table(rows, right=(1, 3, 4, 5, 6, 7))
    lines += ["", f"{flops['dtype']}: weights {flops['weight_bytes']:,} bytes, KV cache "
                  f"{flops['kv_bytes_per_token']:,} bytes/token, {flops['kv_cache_bytes']:,} bytes at {n:,} tokens"
                  + (f" (state {flops['state_bytes']:,} bytes/sequence)" if flops["state_bytes"] else "")]
    return lines


def _cycle(groups: Sequence[Dict[str, Any]]) -> Tuple[int, int]:
    """``(period, repeats)`` of the longest run of one cycle of groups that opens *groups*; ``(0, 0)`` if none."""
    best = (0, 0)
    for period in range(1, len(groups) // 2 + 1):
        key = [(g["kind"], g["count"]) for g in groups[:period]]
        repeats = 1
        while [(g["kind"], g["count"]) for g in groups[repeats * period:(repeats + 1) * period]] == key:
            repeats += 1
        if repeats > 1 and repeats * period > best[0] * best[1]:
            best = (period, repeats)
    return best


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> List[str]:
    """Rows as aligned columns, two spaces apart; the columns in *right* are right-aligned."""
    widths = [max(map(len, column)) for column in zip(*rows)]
    # One format for every row (a catalogue's list is 10,000 of them): "{:<w}" pads as ljust, "{:>w}" as rjust.
    layout = "  " + "  ".join(f"{{:{'>' if column in right else '<'}{width}}}" for column, width in enumerate(widths))
    return [layout.format(*row).rstrip() for row in rows]


def _stack_lines(view: Dict[str, Any]) -> List[str]:
    """The groups table: layer range, repeat, kind, count, attention, ffn, MTP mark."""
    kinds = view["kinds"]
    rows = [["layers", "repeat", "kind", "count", "attention", "ffn", ""]]
    body = [group for group in view["groups"] if not group["mtp"]]
    period, repeats = _cycle(body)
    index = 0
    while index < len(view["groups"]):
        group = view["groups"][index]
        if period and index == 0:
            last = body[period * repeats - 1]["last"]
            for offset, item in enumerate(body[:period]):
                rows.append([f"0-{last}" if offset == 0 else "", f"x{repeats}" if offset == 0 else "", item["kind"],
                             str(item["count"]), kinds[item["kind"]]["attention"], kinds[item["kind"]]["ffn"], ""])
            index = period * repeats
            continue
        span = str(group["first"]) if group["count"] == 1 else f"{group['first']}-{group['last']}"
        rows.append([span, "", group["kind"], str(group["count"]), kinds[group["kind"]]["attention"],
                     kinds[group["kind"]]["ffn"], "MTP" if group["mtp"] else ""])
        index += 1
    return _table(rows, right=(3,))


def _dims(values: Dict[str, Any]) -> str:
    return ", ".join(f"{key} {'-' if value is None else value}" for key, value in values.items())


def render_show(view: Dict[str, Any]) -> str:
    """The text diagram of :func:`show_view`'s view: aligned, one group per row, the tower below."""
    layers = view["layers"]
    summary = f"{layers['body']} layers" + (f" + {layers['mtp']} MTP" if layers["mtp"] else "")
    experts = view["experts"]
    if experts:
        summary += f", {experts['routed']} experts (top {experts['per_token'] or '-'}, " \
                   f"{'-' if experts['shared'] is None else experts['shared']} shared)"
    lines = [f"{view['name']}  {view['arch']}  {view['file']}", summary, ""] + _stack_lines(view) + [""]
    lines += _parameter_lines(view["parameters"], view["layers"]["mtp"]) + [""]
    lines += _flops_lines(view["flops"]) + [""]
    if view["mla"]:
        lines.append(f"mla: {_dims(view['mla'])}")
    if view["linear"]:
        lines.append(f"linear attention: {_dims(view['linear'])}")
    if view["sliding_window"]:
        lines.append(f"sliding window: {view['sliding_window']} tokens")
    widths = {key: value for key, value in view["widths"].items() if experts or key not in _EXPERT_WIDTHS}
    lines.append(f"widths: {_dims(widths)}")
    tower = view["tower"]
    if tower is None:
        lines.append("vision tower: none")
    else:
        named = "" if tower["name"] == "vision" else f" {tower['name']}"
        lines += ["", f"vision tower{named}: {tower['layers']} layers, {tower['num_attention_heads']} heads", ""]
        lines += _stack_lines(tower) + ["", f"widths: {_dims(tower['widths'])}"]
    return "\n".join(lines) + "\n"


# ---- list -----------------------------------------------------------------------------

def render_list(rows: Sequence[Dict[str, Any]]) -> str:
    """The catalogue as an aligned table: name, arch, layers, experts, MTP, tower, total and active parameters."""
    return render_list_cells([list_cells(row) for row in rows])


#: The column ``list`` adds from each model's artifact: forward FLOPs per token at 4,096 tokens, dense convention.
FLOPS_COLUMN = "flops/token@4k"


def render_list_cells(cells: Sequence[Sequence[str]]) -> str:
    """:func:`render_list` of rows given as their :func:`list_cells`, each with its :data:`FLOPS_COLUMN` cell last
    when it has one more cell than :data:`LIST_COLUMNS`."""
    columns = LIST_COLUMNS + ((FLOPS_COLUMN,) if cells and len(cells[0]) > len(LIST_COLUMNS) else ())
    right = (2, 4, 6, 7, 8)[:len(columns) - 4]
    return "\n".join(line[2:] for line in _table([columns, *cells], right=right)) + "\n"


def flops_cell(per_token: Optional[int]) -> str:
    """The :data:`FLOPS_COLUMN` cell: ``17.16G``, ``-`` when the artifact states none."""
    return "-" if per_token is None else f"{per_token / 1e9:,.2f}G"
