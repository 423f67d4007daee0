"""Which problems ``check --fix`` fixes, told from the problem alone: the reports' ``[*]`` marker and count.

:mod:`pipeline.check.fix` makes the fixes, reading the file; a report has only
the problems, and must not load fmt's layout (ruamel.yaml) to mark them, so
the codes and message shapes a fix answers are stated here, once, for both.
"""

from __future__ import annotations

import re

from pipeline.spec.problems import Problem
from pipeline.spec.yaml_source import MAX_NUMBER_CHARS

#: Codes whose fix removes the key.
REMOVING = frozenset({"roundtrip.null", "roundtrip.default"})

#: The codes some of whose problems ``check --fix`` fixes (``modelspec rule`` says so).
FIXING = frozenset({*REMOVING, "roundtrip.torch-prefix", "spec.not-integer", "schema.type"})

#: A message's stated unquoting: ``...; write 8 without quotes``.
UNQUOTE = re.compile(r"; write (?P<value>\S+) without quotes$")

#: A float with no fraction, as ``spec.not-integer`` states its fix: ``...; write 4096``.
_WRITE_INTEGER = re.compile(r"; write -?[0-9]+$")


def fixable(problem: Problem) -> bool:
    """Whether ``check --fix`` makes the fix *problem* states, judged from its code, field path and message."""
    if not problem.path:
        return False
    if problem.code in REMOVING or problem.code == "roundtrip.torch-prefix":
        return True
    if problem.code not in ("spec.not-integer", "schema.type"):
        return False
    unquote = UNQUOTE.search(problem.message)
    if unquote:
        text = unquote.group("value")
        return text in ("true", "false") or (re.fullmatch(r"-?[0-9]+", text) is not None
                                             and len(text.lstrip("-")) <= MAX_NUMBER_CHARS)
    return problem.code == "spec.not-integer" and _WRITE_INTEGER.search(problem.message) is not None
