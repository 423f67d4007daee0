"""The catalogue's static web site: the pages ``modelspec site`` writes, as file names and text.

The site shows what ``regen`` resolves (the artifact documents of
:mod:`pipeline.catalogue.artifacts`, built in-process by
:func:`pipeline.catalogue.diff.load_catalogue`, so a site built from a
working tree is never older than its specs): an index of every model, one
page per model (its layer stack drawn as SVG, its parameter breakdown as a
bar and a table, its op counts per kind, its spec's source header and the
spec file itself), and, for ``--diff BASE``, a page drawing what
:func:`pipeline.catalogue.diff.diff_catalogues` tells.

Pages are rendered from the Jinja2 templates in ``pipeline/site_templates``
with autoescape on for every template: a model's name, a spec's source
header and every other value a pull request chooses reach the HTML only
escaped. Nothing is fetched at view time: the style sheet and the small
script (sort and filter, which the page does without) are local files.
The same catalogue gives the same bytes: no dates, every listing sorted.

:func:`build_site` is pure (documents in, files out); :func:`write_site`
writes them into a folder atomically and removes only pages it wrote before.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

import jinja2

from pipeline.catalogue.artifacts import name_problem
from pipeline.catalogue.atomic import write_atomic
from pipeline.catalogue.diff import Catalogue, CatalogueDiff, model_summary
from pipeline.spec.writes import link_refusal, write_refusal

#: The file in the site folder listing the files ``modelspec site`` wrote, so a
#: later run removes only its own pages, and refuses a folder that is someone else's.
MANIFEST = ".modelspec-site.json"

#: The colours kinds are drawn in, in order of a kind's first use in a stack (then its tower's).
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac")

#: The colours of an attention flavour a cost model prices apart from softmax attention, in the order the kinds of
#: that flavour first appear in a stack: a state-space (``ssm``) layer is drawn in its own greens, a cross-attention
#: (``cross``) layer in its own violets, whatever the palette gives the other kinds, which never take them.
FLAVOUR_COLOURS: Mapping[str, Tuple[str, ...]] = {"cross": ("#6a3d9a", "#9e6fc8", "#cab2d6"),
                                                  "ssm": ("#1a7f5a", "#52b788", "#95d5b2")}

#: What the legend names each such flavour, after its name (``ssm (state-space mixer)``).
FLAVOUR_NAMES: Mapping[str, str] = {"cross": "cross-attention", "ssm": "state-space mixer"}

#: The parameter bar's segments, in order: (key, label, colour). ``mtp`` is drawn apart: it is not in ``total``.
SEGMENTS = (("embedding", "embedding", "#9c755f"), ("position", "position", "#bab0ac"),
            ("attention", "attention", "#4e79a7"), ("mlp", "MLP", "#f28e2b"),
            ("routed", "routed experts", "#edc948"), ("shared", "shared experts", "#8cd17d"),
            ("router", "router", "#e15759"), ("norms", "norms", "#76b7b2"), ("vision", "vision tower", "#b07aa1"),
            ("projector", "projector", "#ff9da7"), ("head", "head", "#59a14f"), ("other", "other", "#79706e"))

#: A stack band's height in pixels: the stack fits about 600 px, each band between these bounds.
BAND_MIN, BAND_MAX, STACK_HEIGHT = 4, 14, 600


class SiteError(Exception):
    """The site cannot be written: the folder holds files ``modelspec site`` did not write, or is not a folder."""


@dataclass(frozen=True)
class Band:
    """One layer drawn: its index in the stack, kind, flavours, whether it is an MTP layer, and its rectangle."""

    index: int
    kind: str
    attention: str
    ffn: str
    mtp: bool
    y: int
    height: int
    colour: str


def page_file(name: str) -> str:
    """The model page's file, ``models/<name>.html``; a name that is not a plain file name
    (:func:`~pipeline.catalogue.artifacts.name_problem`) gets ``models/model-<sha256 of the name, 12 hex>.html``."""
    if name_problem(name) is None:
        return f"models/{name}.html"
    return f"models/model-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:12]}.html"


def _href(file: str) -> str:
    """A site file as a relative URL, percent-encoded."""
    return quote(file)


def _kind_colours(*stacks: Optional[Mapping[str, Any]]) -> Dict[str, str]:
    """A colour per kind of the stacks, kinds in order of first use: a kind of a flavour of :data:`FLAVOUR_COLOURS`
    the flavour's next colour, any other the palette's next."""
    colours: Dict[str, str] = {}
    taken: Dict[str, int] = {}
    for stack in stacks:
        for group in (stack or {}).get("groups", ()):
            if group["kind"] in colours:
                continue
            flavour = stack["kinds"][group["kind"]]["attention"]
            own = FLAVOUR_COLOURS.get(flavour)
            count = taken.get(flavour if own else "", 0)
            taken[flavour if own else ""] = count + 1
            colours[group["kind"]] = own[count % len(own)] if own else PALETTE[count % len(PALETTE)]
    return colours


def stack_bands(stack: Mapping[str, Any], colours: Mapping[str, str]) -> Tuple[List[Band], int]:
    """One :class:`Band` per layer of *stack* (an artifact's or its tower's), MTP layers last as the stack has
    them, and the drawing's height in pixels."""
    total = sum(group["count"] for group in stack["groups"])
    height = max(BAND_MIN, min(BAND_MAX, STACK_HEIGHT // max(total, 1)))
    bands: List[Band] = []
    for group in stack["groups"]:
        kind = stack["kinds"][group["kind"]]
        for _ in range(group["count"]):
            bands.append(Band(len(bands), group["kind"], kind["attention"], kind["ffn"], group["mtp"],
                              len(bands) * height, height, colours[group["kind"]]))
    return bands, total * height


def parameter_segments(parameters: Mapping[str, Any]) -> Optional[List[Dict[str, Any]]]:
    """The parameter bar's segments (:data:`SEGMENTS`) of a priced artifact's ``parameters``, each with its
    count, share of ``total`` in percent and offset; ``None`` when unpriced.

    The body's groups (not the MTP ones) give attention, the dense MLP,
    routed experts, shared experts (with the shared expert's gate), router
    and norms (with the final norm); ``vision`` is the tower without
    its projector, which is a segment of its own. The segments sum to ``total``.

    Raises:
        ValueError: If they do not (an artifact this module does not understand).
    """
    if "unpriced" in parameters:
        return None
    body = [group for group in parameters["groups"] if not group["mtp"]]
    counts = {"embedding": parameters["embedding"], "position": parameters["position"],
              "attention": sum(group["attention"] for group in body),
              "mlp": sum(group["dense_mlp"] for group in body),
              "routed": sum(group["routed_experts"] for group in body),
              "shared": sum(group["shared_experts"] + group["shared_expert_gate"] for group in body),
              "router": sum(group["router"] for group in body),
              "norms": sum(group["norms"] for group in body) + parameters["final_norm"],
              "vision": parameters["vision"] - parameters["projector"], "projector": parameters["projector"], "head": parameters["head"],
              "other": parameters.get("other", 0)}
    if sum(counts.values()) != parameters["total"]:
        raise ValueError(f"the parameter parts sum to {sum(counts.values())}, not the total {parameters['total']}")
    segments, offset = [], 0.0
    for key, label, colour in SEGMENTS:
        share = 100.0 * counts[key] / parameters["total"] if parameters["total"] else 0.0
        segments.append({"key": key, "label": label, "colour": colour, "count": counts[key],
                         "share": share, "offset": offset})
        offset += share
    return segments


#: The sequence length the FLOPs bar is drawn at, one of the artifact's ``flops.at`` lengths.
FLOPS_BAR_SEQ_LEN = 4096

#: The FLOPs bar's colour of the output head (the kinds have their stack colours).
HEAD_COLOUR = "#59a14f"


def flops_segments(flops: Optional[Mapping[str, Any]], colours: Mapping[str, str]) -> Optional[List[Dict[str, Any]]]:
    """The FLOPs bar beside the parameter bar: the forward at :data:`FLOPS_BAR_SEQ_LEN` tokens (``dense``), one
    segment of weight matmuls and one of attention per kind of the body (its layers together), then the head;
    each with its FLOPs, share of the forward in percent and offset. ``None`` when the artifact states none."""
    if not flops or "unpriced" in flops:
        return None
    at = next((entry for entry in flops["at"] if entry["seq_len"] == FLOPS_BAR_SEQ_LEN), None)
    if at is None:
        return None
    parts: Dict[Tuple[str, str], int] = {}
    for group in at["groups"]:
        if not group["mtp"]:
            parts[(group["kind"], "weights")] = parts.get((group["kind"], "weights"), 0) + group["weights"]
            parts[(group["kind"], "attention")] = parts.get((group["kind"], "attention"), 0) + group["attention_dense"]
    total = at["forward_dense"]
    segments, offset = [], 0.0
    for (kind, part), value in [*parts.items(), (("head", "weights"), at["head"])]:
        share = 100.0 * value / total if total else 0.0
        segments.append({"kind": kind, "part": part, "label": f"{kind} {'matmuls' if part == 'weights' else 'attention'}"
                         if kind != "head" else "head", "count": value, "share": share, "offset": offset,
                         "colour": colours.get(kind, HEAD_COLOUR), "opacity": "0.55" if part == "attention" else "1"})
        offset += share
    return segments


def source_header(text: str) -> str:
    """The spec's header: its leading comment lines without ``#`` and the editor's schema line
    (``# yaml-language-server: ...``), e.g. ``source: deepseek-ai/DeepSeek-V3 config.json, ...``."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        body = line[1:].strip()
        if not body.startswith("yaml-language-server:"):
            lines.append(body)
    return "\n".join(lines)


def _experts(spec: Mapping[str, Any]) -> Optional[str]:
    """``256 (8 active, 1 shared)``, or ``None`` for a dense model."""
    experts = spec.get("num_experts")
    if not experts:
        return None
    text = f"{experts} ({spec.get('num_experts_per_tok', '?')} active"
    if spec.get("num_shared_experts"):
        text += f", {spec['num_shared_experts']} shared"
    return text + ")"


def share_text(value: float) -> str:
    """A share of the total as the page prints it, before its ``%``: ``12.5``, ``0.25``; a part above zero that
    rounds below 1 % is ``<1`` (never a ``0`` beside a part the model has)."""
    if 0 < value < 1:
        return "<1"
    return f"{value:.1f}".rstrip("0").rstrip(".")


def yaml_text(value: Any) -> str:
    """A spec value as YAML spells it: ``false``, ``true``, ``null``, ``4096`` (an integral float too), and a
    parameter count of nothing as ``0`` (not ``0.0M``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value in ("0.0M", "0.0B"):  # a count that became nothing, as the diff's text rounds it
        return "0"
    return str(value)


#: What moved where more is a gain and less a loss (layers, MTP layers, experts, widths, parameter counts).
_EVENT_DIRECTION = {"added": ("gain", "added"), "removed": ("loss", "removed")}


def move_direction(move: Any) -> Tuple[str, str]:
    """``(direction, reason)`` of a diff move, coloured by it on the diff page: ``("loss", "1 fewer")`` for an MTP
    layer lost, ``("gain", "more")``, ``("loss", "removed")``, ``("change", "changed")`` when neither is more."""
    if move.event is not None:
        return _EVENT_DIRECTION.get(move.event, ("change", move.event))
    before, after = _number(move.before), _number(move.after)
    if before is None or after is None or before == after:
        if move.before is None and move.after is not None:
            return "gain", "added"
        if move.after is None and move.before is not None:
            return "loss", "removed"
        return "change", "changed"
    if after < before:
        return "loss", f"{_amount(before - after)} fewer" if isinstance(move.before, int) else "smaller"
    return "gain", f"{_amount(after - before)} more" if isinstance(move.before, int) else "larger"


def _amount(value: float) -> str:
    return f"{value:,.0f}"


def _number(value: Any) -> Optional[float]:
    """A move's value as a number (``671.0B``, ``124.4M``, ``8,030,261,248``, ``58``), else ``None``."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).replace(",", "")
    scale = {"B": 1e9, "M": 1e6}.get(text[-1:], 1)
    try:
        return float(text[:-1] if scale != 1 else text) * scale
    except ValueError:
        return None


def _size(value: Optional[int]) -> str:
    """``671.0B``, ``124.4M``, ``12.3K``; an em dash for none."""
    if value is None:
        return "\u2014"
    for scale, suffix in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if value >= scale:
            return f"{value / scale:.1f}{suffix}"
    return str(value)


def _row(document: Mapping[str, Any]) -> Dict[str, Any]:
    """The index's row of a model."""
    spec, parameters = document.get("spec", {}), document["parameters"]
    priced = "unpriced" not in parameters
    return {"name": document["name"], "href": _href(page_file(document["name"])), "arch": document["arch"],
            "total": parameters["total"] if priced else None, "active": parameters["active"] if priced else None,
            "body": document["layers"]["body"], "mtp": document["layers"]["mtp"],
            "experts": spec.get("num_experts") or 0, "experts_text": _experts(spec),
            "tower": document["vision"]["layers"]["body"] if document["vision"] else 0,
            "context": spec.get("max_position_embeddings")}


def _environment():
    """The Jinja2 environment of the site's templates: autoescape on for every template, strict undefined."""
    environment = jinja2.Environment(loader=jinja2.PackageLoader("pipeline.catalogue", "site_templates"),
                                     autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
                                     trim_blocks=True, lstrip_blocks=True)
    environment.filters["size"] = _size
    environment.filters["exact"] = lambda value: "\u2014" if value is None else f"{value:,}"
    environment.filters["pct"] = share_text
    environment.filters["yaml"] = yaml_text
    environment.filters["direction"] = move_direction
    return environment


def _static(file: str) -> str:
    """A static file shipped with the templates (the style sheet, the script)."""
    return resources.files("pipeline.catalogue").joinpath("site_templates", file).read_text(encoding="utf-8")


def _model_page(environment, document: Mapping[str, Any], spec_text: Optional[str]) -> str:
    """A model's page."""
    colours = _kind_colours(document, document["vision"])
    bands, height = stack_bands(document, colours)
    tower = stack_bands(document["vision"], colours) if document["vision"] else None
    kinds = [{"name": kind, "colour": colour, **(document["kinds"].get(kind)
                                                 or document["vision"]["kinds"][kind]),
              "layers": legend_layers(kind, bands, tower[0] if tower else [])}
             for kind, colour in colours.items()]
    kinds = [{**kind, "flavour_name": FLAVOUR_NAMES.get(kind["attention"])} for kind in kinds]
    parameters = document["parameters"]
    groups = [] if "unpriced" in parameters else parameters["groups"]
    return environment.get_template("model.html.j2").render(
        root="../", document=document, bands=bands, height=height, tower=tower, kinds=kinds,
        segments=parameter_segments(parameters), parameters=parameters, groups=groups,
        flops_segments=flops_segments(document.get("flops"), colours), flops=document.get("flops"),
        tower_groups=[] if "unpriced" in parameters else parameters.get("tower_groups", []),
        ops=sorted({op for kind in kinds for op in kind["ops"]}),
        header=source_header(spec_text) if spec_text is not None else None, spec_text=spec_text,
        spec_href=_href(spec_file(document["path"])), summary=model_summary(document),
        row=_row(document))


def legend_layers(kind: str, bands: List[Band], tower: List[Band]) -> str:
    """How many layers of *kind* the legend counts, each place named: ``58``, ``58 + 1 MTP``, ``27 (tower)``,
    ``1 MTP``."""
    body = sum(1 for band in bands if band.kind == kind and not band.mtp)
    mtp = sum(1 for band in bands if band.kind == kind and band.mtp)
    in_tower = sum(1 for band in tower if band.kind == kind)
    parts = [str(body)] if body else []
    parts += [f"{mtp} MTP"] if mtp else []
    parts += [f"{in_tower} (tower)"] if in_tower else []
    return " + ".join(parts) or "0"


def spec_file(path: str) -> str:
    """Where the site keeps a copy of the spec at *path* (``specs/deepseek/deepseek-v3.yaml``):
    ``spec/<sha256 of the path, 12 hex>.yaml.txt`` (a name of the site's own, served as text)."""
    return f"spec/{hashlib.sha256(path.encode('utf-8')).hexdigest()[:12]}.yaml.txt"


def build_site(catalogue: Catalogue, spec_texts: Mapping[str, str],
               diff: Optional[CatalogueDiff] = None,
               diff_sides: Optional[Tuple[Catalogue, Catalogue]] = None) -> Dict[str, str]:
    """Every file of the site, by path inside the site folder, with its text.

    Args:
        catalogue: The catalogue drawn (its models by name; its failing specs listed on the index).
        spec_texts: Each model's spec file text, by the spec path its document records.
        diff: The comparison drawn on ``diff.html``, if any.
        diff_sides: The two catalogues *diff* compares, to draw each changed model's stack on both sides.

    Returns:
        ``index.html``, ``site.css``, ``site.js``, one ``models/<name>.html``
        per model (:func:`page_file`), one copy of each spec (:func:`spec_file`),
        and ``diff.html`` with a diff; keys sorted.
    """
    environment = _environment()
    documents = [catalogue.models[name] for name in sorted(catalogue.models)]
    files: Dict[str, str] = {"site.css": _static("site.css"), "site.js": _static("site.js")}
    files["index.html"] = environment.get_template("index.html.j2").render(
        root="", label=catalogue.label, rows=[_row(document) for document in documents],
        failing=sorted(catalogue.failing.items()), has_diff=diff is not None)
    for document in documents:
        text = spec_texts.get(document["path"])
        files[page_file(document["name"])] = _model_page(environment, document, text)
        if text is not None:
            files[spec_file(document["path"])] = text
    if diff is not None:
        files["diff.html"] = _diff_page(environment, diff, diff_sides)
    return dict(sorted(files.items()))


def _diff_page(environment, diff: CatalogueDiff, sides: Optional[Tuple[Catalogue, Catalogue]]) -> str:
    """The diff page: the counts, each model added or removed, and each changed model's moves, with its stack
    drawn on both sides when *sides* are given."""
    changed = []
    for change in diff.changed:
        stacks = None
        if sides is not None:
            before, after = sides[0].models[change.name], sides[1].models[change.name]
            colours = _kind_colours(before, after)
            stacks = [stack_bands(before, colours), stack_bands(after, colours)]
        changed.append({"name": change.name, "moves": change.moves, "stacks": stacks,
                        "href": _href(page_file(change.name))})
    return environment.get_template("diff.html.j2").render(
        root="", diff=diff, changed=changed,
        added=[{"name": name, "summary": summary, "href": _href(page_file(name))} for name, summary in diff.added])


def _refuse_foreign(folder: Path, earlier: Sequence[Any]) -> None:
    """Refuse a site folder holding a file (or a link) that neither its manifest lists nor is the manifest: the
    nightly job publishes the whole folder, so a file modelspec site did not write would be published with it.

    Raises:
        SiteError: Naming the first such files.
    """
    known = {MANIFEST, *(file for file in earlier if isinstance(file, str))}
    foreign = []
    for top, folders, names in os.walk(folder):  # links are not followed: a link is itself a foreign entry
        here = Path(top).relative_to(folder)
        foreign.extend((here / name).as_posix() for name in names if (here / name).as_posix() not in known)
        foreign.extend((here / name).as_posix() for name in folders if (folder / here / name).is_symlink())
    if foreign:
        shown = ", ".join(sorted(foreign)[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise SiteError(f"{folder} holds files modelspec site did not write ({shown}); nothing is written there, "
                        "since everything in it would be published: remove them, or name an empty or new folder "
                        "with --out")


def write_site(folder: Path, files: Mapping[str, str]) -> Tuple[List[str], List[str]]:
    """Write *files* into *folder* (created if missing) and remove the files an earlier run wrote that the site
    no longer has.

    Each file is replaced atomically (:func:`~pipeline.catalogue.atomic.write_atomic`)
    and only when its text changed; the manifest (:data:`MANIFEST`) is
    written last. A folder that is not empty and has no manifest is someone
    else's, and nothing is written into it.

    Returns:
        The files written and the files removed, each sorted.

    Raises:
        SiteError: If *folder* is not a folder, or holds files but no manifest.
        OSError: If a file cannot be written.
    """
    if folder.is_symlink():
        raise SiteError(link_refusal(folder, "the site's folder"))
    if folder.exists() and not folder.is_dir():
        raise SiteError(f"{folder} is not a folder; name a folder for the site with --out")
    manifest = folder / MANIFEST
    earlier: Sequence[str] = ()
    if folder.is_dir() and any(folder.iterdir()):
        if not manifest.is_file():
            raise SiteError(f"{folder} holds files modelspec site did not write (it has no {MANIFEST}); nothing is "
                            "written there: name an empty or new folder with --out")
        try:
            earlier = json.loads(manifest.read_text(encoding="utf-8"))["files"]
        except (ValueError, KeyError, TypeError):
            raise SiteError(f"{manifest} is not modelspec site's manifest; remove the folder or name another") \
                from None
        _refuse_foreign(folder, earlier)
    written, removed = [], []
    for file, text in files.items():
        path = folder / file
        why = write_refusal(path, folder)
        if why is not None:
            raise SiteError(why)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_file() and not path.is_symlink() and path.read_bytes() == text.encode("utf-8"):
            continue
        write_atomic(path, text)
        written.append(file)
    for file in sorted(set(earlier) - set(files)):
        if not isinstance(file, str) or Path(file).is_absolute() or ".." in Path(file).parts:
            continue
        path = folder / file
        if path.is_file() and not path.is_symlink():
            path.unlink()
            removed.append(file)
    write_atomic(manifest, json.dumps({"generator": "modelspec site", "files": sorted(files)}, indent=1) + "\n")
    return written, removed
