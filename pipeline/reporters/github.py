"""The GitHub Actions view: workflow commands that put each problem on the pull request's diff.

Each problem becomes ``::error file=F,line=L,col=C,title=[code]::message`` (or
``::warning``), escaped as the Actions toolkit escapes them (``command.ts``):
``%``, CR and LF in the message; those and ``:`` and ``,`` in a property.

GitHub shows at most 10 error and 10 warning annotations per step, and 50 per
job (the "Limitations" of ``docs/problem-matchers.md`` in actions/toolkit), and
drops the rest silently. So the annotations are capped per severity, and when
the cap bites, one annotation of the run's verdict severity (``::error::`` when
the run fails) is kept back for a summary saying how many problems were not
annotated: a failure is never hidden behind the cap. Those problems are then
listed in plain text in the step's log, inside a ``::stop-commands::`` block so
that nothing a spec file puts in a message can run as a workflow command there.
The output ends with the plain summary line.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Mapping

from pipeline.spec.problems import Problem, RunResult, Severity
from pipeline.reporters.summary import plural, posix_path, problem_line, summary_sentence

#: GitHub's own cap: annotations of one severity shown per step.
GITHUB_ANNOTATIONS_PER_STEP = 10

#: Characters escaped in a command's message (data), in order; ``%`` first so escapes are not re-escaped.
DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))

#: Characters escaped in a command's property values: the data escapes, and the property separators.
PROPERTY_ESCAPES = (*DATA_ESCAPES, (":", "%3A"), (",", "%2C"))


def escape_data(text: str) -> str:
    """Escape *text* as a workflow command's message: ``50%\\n`` is ``50%25%0A``."""
    for char, escape in DATA_ESCAPES:
        text = text.replace(char, escape)
    return text


def escape_property(text: str) -> str:
    """Escape *text* as a workflow command's property value: ``a:b,c`` is ``a%3Ab%2Cc``."""
    for char, escape in PROPERTY_ESCAPES:
        text = text.replace(char, escape)
    return text


def annotation(problem: Problem) -> str:
    """*problem* as one ``::error`` or ``::warning`` workflow command, without a trailing newline."""
    properties = {
        "file": posix_path(problem.file),
        "line": str(problem.line),
        "col": str(problem.column),
        "title": f"[{problem.code}]",
    }
    rendered = ",".join(f"{name}={escape_property(value)}" for name, value in properties.items())
    return f"::{problem.severity.value} {rendered}::{escape_data(problem.message)}"


@dataclass(frozen=True)
class GithubReporter:
    """Render a run as GitHub workflow commands.

    Attributes:
        annotations_per_severity: How many problems of each severity become
            annotations, at most; GitHub shows no more than
            :data:`GITHUB_ANNOTATIONS_PER_STEP`.
    """

    annotations_per_severity: int = GITHUB_ANNOTATIONS_PER_STEP

    def __post_init__(self) -> None:
        """Refuse a cap below 1, which would leave no room for the summary command.

        Raises:
            ValueError: If ``annotations_per_severity`` is less than 1.
        """
        if self.annotations_per_severity < 1:
            raise ValueError(f"annotations_per_severity must be at least 1, not {self.annotations_per_severity}")

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the commands and log lines, each ending in a newline.

        *codes* is unused: each annotation's title names its code.
        """
        annotated, left_over = self._split(result)
        lines = [annotation(problem) for problem in annotated]
        if left_over:
            lines.append(f"::{_verdict(result).value}::{escape_data(_left_over_summary(left_over))}")
            lines.extend(_inert_block([problem_line(problem) for problem in left_over]))
        lines.append(summary_sentence(result))
        return "".join(line + "\n" for line in lines)

    def _split(self, result: RunResult) -> tuple[list[Problem], list[Problem]]:
        """Split the problems, in report order, into those annotated and those left over.

        When any severity has more problems than the cap, the verdict's
        severity gets one annotation fewer, kept for the summary command.
        """
        capped = any(result.count(severity) > self.annotations_per_severity for severity in Severity)
        room = {severity: self.annotations_per_severity for severity in Severity}
        if capped:
            room[_verdict(result)] -= 1
        annotated: list[Problem] = []
        left_over: list[Problem] = []
        for problem in result.problems:
            if room[problem.severity] > 0:
                room[problem.severity] -= 1
                annotated.append(problem)
            else:
                left_over.append(problem)
        return annotated, left_over


def _verdict(result: RunResult) -> Severity:
    """The severity of a command about the whole run: error when the run fails."""
    return Severity.ERROR if result.exit_code else Severity.WARNING


def _left_over_summary(left_over: list[Problem]) -> str:
    """The summary command's message: how many problems of each severity were not annotated."""
    errors = sum(1 for problem in left_over if problem.severity is Severity.ERROR)
    warnings = len(left_over) - errors
    return (
        f"{plural(len(left_over), 'more problem')} ({plural(errors, 'error')}, {plural(warnings, 'warning')}) "
        f"not annotated: GitHub shows only {GITHUB_ANNOTATIONS_PER_STEP} annotations of each severity per step; "
        f"they are listed in this step's log"
    )


def _inert_block(lines: list[str]) -> list[str]:
    """*lines* wrapped in ``::stop-commands::`` so the runner prints them without running any as a command.

    The end token is a digest of the lines, so the lines cannot contain it
    (they would have to contain their own digest) and the output stays
    deterministic.
    """
    token = "modelspec-" + hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:32]
    return [f"::stop-commands::{token}", *lines, f"::{token}::"]
