"""A spec's row of the ``list`` table: its facts as ``list`` shows them, drawn where the file is checked.

A check of a large catalogue draws each row in the worker process that checked the file, and the result cache
keeps it with the file's verdict, so ``list`` tables the catalogue without resolving a spec again. Lives with the
check (not with the ``list`` view) because the check makes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

if TYPE_CHECKING:
    from pipeline.pricing.stack import LayerStack
    from pipeline.spec.model import ModelSpec


def list_row(spec: ModelSpec, stack: Optional[LayerStack], file: str,
             parameters: Optional[Tuple[int, int]] = None) -> Dict[str, Any]:
    """One ``list`` row: ``name``, ``file``, ``arch``, ``layers`` (body), ``mtp``, ``experts``, ``tower_layers``,
    ``total`` and ``active`` parameters.

    ``mtp`` is ``None`` when the spec states no MTP depth, ``experts`` ``None``
    for a dense model (else ``routed``, ``per_token``, ``shared``); ``total``
    and ``active`` are *parameters*, ``None`` when the spec cannot be counted.
    """
    return {
        "name": spec.name,
        "file": file,
        "arch": stack.arch if stack is not None else spec.arch,
        "layers": spec.num_hidden_layers,
        "mtp": spec.mtp_depth,
        "experts": ({"routed": spec.num_experts, "per_token": spec.num_experts_per_tok,
                     "shared": spec.num_shared_experts} if spec.num_experts else None),
        "tower_layers": spec.vision.num_hidden_layers if spec.vision is not None else None,
        "total": parameters[0] if parameters else None,
        "active": parameters[1] if parameters else None,
    }


def _experts_cell(experts: Optional[Dict[str, Any]]) -> str:
    if not experts:
        return "-"
    cell = str(experts["routed"])
    if experts["per_token"]:
        cell += f" top-{experts['per_token']}"
    if experts["shared"]:
        cell += f" +{experts['shared']} shared"
    return cell


#: The ``list`` table's columns.
LIST_COLUMNS = ("name", "arch", "layers", "experts", "mtp", "tower", "total", "active")


def list_cells(row: Dict[str, Any]) -> Tuple[str, ...]:
    """The text cells of one ``list`` row (:func:`list_row`), in :data:`LIST_COLUMNS` order."""
    return (row["name"], row["arch"] or "-", str(row["layers"]), _experts_cell(row["experts"]),
            "-" if row["mtp"] is None else str(row["mtp"]),
            "-" if row["tower_layers"] is None else f"{row['tower_layers']} layers",
            "-" if row["total"] is None else f"{row['total']:,}",
            "-" if row["active"] is None else f"{row['active']:,}")
