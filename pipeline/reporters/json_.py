"""The machine report: one JSON document a script can rely on, described by ``schemas/report.schema.json``.

Stable by construction: keys come out in a fixed order (the order written
here, which the schema lists too), files and problems in the run's sorted
order, and nothing varies between two runs on the same input (no timestamps,
no absolute paths added). The document states whether the run fails
(``exit_code``, ``summary.failing``) so that a consumer reading only the file,
not the process status, still sees a failure. Each problem carries both its
field path (``path``, a list) and its JSON Pointer (``pointer``, RFC 6901) so a
consumer can find the field without parsing either. ``schema_version`` changes
only when a key is removed or changes meaning.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from pipeline.spec.escape import json_text
from pipeline.spec.problems import FileResult, Problem, RunResult
from pipeline.reporters.summary import TOOL_NAME, TOOL_VERSION, count, help_text

#: Version of the document's shape (``schema_version``); see the module docstring.
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class JsonReporter:
    """Render a run as the JSON document of ``schemas/report.schema.json``."""

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the document, indented by 2, with a trailing newline.

        Raises:
            ValueError: If a problem's code is not in *codes* (see :func:`help_text`).
        """
        return json_text(json.dumps(report_document(result, codes), indent=2, ensure_ascii=False)) + "\n"


def report_document(result: RunResult, codes: Mapping[str, str]) -> dict[str, Any]:
    """The report as plain JSON values, keys in their documented order.

    Raises:
        ValueError: If a problem's code is not in *codes* (see :func:`help_text`).
    """
    counts = count(result)
    used_codes = sorted({problem.code for problem in result.problems})
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": TOOL_NAME, "version": TOOL_VERSION},
        "strict": result.strict,
        "exit_code": counts.exit_code,
        "summary": {
            "files": counts.files,
            "clean_files": counts.clean_files,
            "errors": counts.errors,
            "warnings": counts.warnings,
            "failing": counts.failing,
        },
        "scope": _scope_document(result),
        "codes": {code: help_text(codes, code) for code in used_codes},
        "files": [_file_document(file_result, result) for file_result in result.files],
    }


def _scope_document(result: RunResult) -> dict[str, Any]:
    """What the run covers: every file named (``changed_since`` null), or the specs a change touches."""
    scope = result.scope
    return {
        "changed_since": scope.ref if scope else None,
        "merge_base": scope.base if scope else None,
        "specs_checked": len(result.files) if scope is None or scope.checked is None else scope.checked,
        "specs_total": scope.total if scope else len(result.files),
        "removed": list(scope.removed) if scope else [],
    }


def _file_document(file_result: FileResult, result: RunResult) -> dict[str, Any]:
    """One file's pass outcomes (in pass order) and problems."""
    return {
        "file": file_result.file,
        "passes": {pass_name: outcome.value for pass_name, outcome in file_result.outcomes},
        "problems": [_problem_document(problem, result) for problem in file_result.problems],
    }


def _problem_document(problem: Problem, result: RunResult) -> dict[str, Any]:
    """One problem, with whether it fails the run."""
    return {
        "line": problem.line,
        "column": problem.column,
        "pass": problem.pass_name,
        "code": problem.code,
        "severity": problem.severity.value,
        "failing": result.failing(problem),
        "message": problem.message,
        "path": list(problem.path),
        "pointer": problem.pointer,
    }
