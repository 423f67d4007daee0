"""``check --fix``: the fixes that findings already state, made in the file, comments kept.

A finding whose message says exactly what to write carries a fix:

- ``roundtrip.null`` and ``roundtrip.default`` ("remove the line"): the key is removed;
- ``roundtrip.torch-prefix`` ("write bfloat16"): the prefix is dropped;
- ``spec.not-integer`` on a float with no fraction ("got the float 4096.0;
  write 4096"): the integer is written;
- ``spec.not-integer`` and ``schema.type`` on a quoted integer or boolean
  ("write 8 without quotes"): the value is written unquoted.

Nothing else is guessed: a finding without a stated fix is left for the
maintainer, and so is a stated fix that cannot be made alone (a quoted
integer of more digits than any number read, :data:`~pipeline.spec.yaml_source.MAX_NUMBER_CHARS`:
it is no width, and writing it would make a file no reader takes), which is
said, as a fix without an edit. The edits are made by :func:`pipeline.spec.layout.format_text`, so the
file is written in fmt's layout with every comment kept (a removed key's
comments go to the entry after it), and the rewrite is checked to hold
exactly the data the edits make.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

from pipeline.check.fixable import REMOVING, UNQUOTE as _UNQUOTE
from pipeline.spec.layout import REMOVE, Edit, Formatted, format_text
from pipeline.spec.problems import Problem, dotted
from pipeline.spec.yaml_source import MAX_NUMBER_CHARS


@dataclass(frozen=True)
class Fix:
    """One fix: the problem it answers, the edit, and what it did in words.

    Attributes:
        problem: The finding fixed.
        edit: The field's path and its new value (or :data:`pipeline.spec.layout.REMOVE`); ``None`` for a fix the
            finding states that cannot be made alone (:attr:`done` says why).
        done: What the fix did, e.g. ``removed max_position_embeddings``, or why it was not made.
    """

    problem: Problem
    edit: Optional[Edit]
    done: str


def _value_at(data: Any, path: Sequence[Any]) -> Any:
    for part in path:
        data = data[part]
    return data


def fix_for(problem: Problem, data: Any) -> Optional[Fix]:
    """The fix *problem* states, given the file's loaded *data*; ``None`` when it states none."""
    path = problem.path
    if not path:
        return None
    try:
        value = _value_at(data, path)
    except (KeyError, IndexError, TypeError):
        return None
    name = dotted(path)
    if problem.code in REMOVING:
        return Fix(problem, (path, REMOVE), f"removed {name}")
    if problem.code == "roundtrip.torch-prefix" and isinstance(value, str) and value.startswith("torch."):
        new = value[len("torch."):]
        return Fix(problem, (path, new), f"{name}: wrote {new}")
    if problem.code == "spec.not-integer" and type(value) is float and value.is_integer():
        return Fix(problem, (path, int(value)), f"{name}: wrote {int(value)}")
    unquote = _UNQUOTE.search(problem.message)
    if problem.code in ("spec.not-integer", "schema.type") and unquote and isinstance(value, str):
        text = unquote.group("value")
        new: Any = {"true": True, "false": False}.get(text)
        if new is None and re.fullmatch(r"-?[0-9]+", text):
            if len(text.lstrip("-")) > MAX_NUMBER_CHARS:
                return Fix(problem, None, f"{name}: left quoted: an integer of {len(text.lstrip('-')):,} digits "
                                          f"is no width or count (a number is at most {MAX_NUMBER_CHARS:,} "
                                          "digits); write the right value by hand")
            new = int(text)
        if new is not None:
            return Fix(problem, (path, new), f"{name}: wrote {text} without quotes")
    return None


def fixes_for(problems: Sequence[Problem], data: Any) -> List[Fix]:
    """The fixes of a file's *problems*, one per field (the first stated), fields under a removed key left out."""
    found: List[Fix] = []
    for problem in problems:
        fix = fix_for(problem, data)
        if fix is None:
            continue
        if fix.edit is None:
            found.append(fix)
            continue
        path = fix.edit[0]
        if any(other.edit is not None and path[:len(other.edit[0])] == other.edit[0] for other in found):
            continue
        found.append(fix)
    return found


def made(fixes: Sequence[Fix]) -> Tuple[List[Fix], List[Fix]]:
    """*fixes* split into those with an edit and those left alone (no edit: ``done`` says why)."""
    return [fix for fix in fixes if fix.edit is not None], [fix for fix in fixes if fix.edit is None]


def fixed_text(text: str, file: str, schema: Optional[str], fixes: Sequence[Fix]) -> Formatted:
    """*text* with *fixes* made, in fmt's layout (see :func:`pipeline.spec.layout.format_text`)."""
    return format_text(text, file, schema, tuple(fix.edit for fix in fixes))

