"""The differential suite's table: one row per model type, gathered from the family tests' reports.

Each ``test_every_variant_counts_as_the_reference_or_is_refused[TYPE]`` records its family's outcome as the user
property ``differential`` (JSON); :func:`table_lines` turns the rows of a run into the table ``conftest``'s
terminal summary prints. The rows travel with the test reports, so the table is whole however the run is split
over pytest-xdist's workers (``.ci/run`` runs the reference tests on two), and no test judges a family twice.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Dict, Iterable, List, Sequence, Tuple

#: The user property a family test records its row under.
PROPERTY = "differential"

_COLUMNS = ("family", "variants", "exact", "refused", "known", "WRONG", "hidden", "refused by reason")


def row(model_type: str, variants: int, exact: int, refused: Counter, known: int, wrong: int,
        hidden: Sequence[str]) -> str:
    """A family's row, as the JSON its test records."""
    return json.dumps({"family": model_type, "variants": variants, "exact": exact, "refused": dict(refused),
                       "known": known, "wrong": wrong, "hidden": sorted(set(hidden))}, sort_keys=True)


def rows_of(reports: Iterable[Any]) -> List[Dict[str, Any]]:
    """The rows the reports of a run carry, by family."""
    found = {}
    for report in reports:
        for name, value in getattr(report, "user_properties", ()):
            if name == PROPERTY:
                data = json.loads(value)
                found[data["family"]] = data
    return [found[family] for family in sorted(found)]


def table_lines(rows: Sequence[Dict[str, Any]]) -> List[str]:
    """The table of *rows*, a total row last, then each family's hidden refusals."""
    cells: List[Tuple[str, ...]] = [_COLUMNS]
    total: Counter = Counter()
    for data in rows:
        refused = Counter(data["refused"])
        reasons = ", ".join(f"{reason} x{n}" for reason, n in refused.most_common())
        counts = (data["variants"], data["exact"], sum(refused.values()), data["known"], data["wrong"],
                  len(data["hidden"]))
        cells.append((data["family"], *map(str, counts), reasons))
        total.update(dict(zip(_COLUMNS[1:7], counts)))
    cells.append(("all", *(str(total[key]) for key in _COLUMNS[1:7]), ""))
    widths = [max(len(cell[i]) for cell in cells) for i in range(7)]
    lines = ["  ".join(cell[i].ljust(widths[i]) if i == 0 else cell[i].rjust(widths[i]) for i in range(7))
             + "  " + cell[7] for cell in cells]
    hidden = [f"  {data['family']}: {detail[:300]}" for data in rows for detail in data["hidden"]]
    return [*lines, "hidden: refused only for unknown keys, and --allow-unknown would count it wrong:",
            *(hidden or ["  none"])]
