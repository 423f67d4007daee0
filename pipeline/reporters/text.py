"""The human report: one ``path:line:col: severity [code] message`` line per problem, then a summary.

The line shape is the one compilers and linters print (and editors' problem
matchers parse), so a terminal click or ``grep`` finds the place. Colour marks
only the severity word, and is off unless the CLI asks for it (it does when
stdout is a terminal and ``NO_COLOR`` is unset): a report written to a file or
a CI log must not carry escape codes. ``quiet`` is for scripts and hooks that
want silence on success: only the problems that fail the run, and nothing at
all when none does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import click

from pipeline.spec.problems import Problem, RunResult, Severity
from pipeline.reporters.summary import problem_line, summary_sentence

#: The style of each severity word when colour is on (``click.style`` keywords).
SEVERITY_STYLE: Mapping[Severity, Mapping[str, object]] = {
    Severity.ERROR: {"fg": "red", "bold": True},
    Severity.WARNING: {"fg": "yellow"},
}


@dataclass(frozen=True)
class TextReporter:
    """Render a run as lines of text.

    Attributes:
        color: Colour the severity word with ANSI escapes.
        quiet: Print only the problems that fail the run (errors, and warnings
            under ``--strict``) and the summary; print nothing when none does.
    """

    color: bool = False
    quiet: bool = False

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the report: one line per problem (sorted), then the summary line.

        *codes* is unused (the text names each code; ``modelspec`` documents them).
        The text ends with a newline, or is empty in quiet mode when nothing fails.
        """
        problems = [problem for problem in result.problems if result.failing(problem) or not self.quiet]
        if self.quiet and not problems:
            return ""
        lines = [problem_line(problem, self._severity(problem)) for problem in problems]
        return "".join(line + "\n" for line in [*lines, summary_sentence(result)])

    def _severity(self, problem: Problem) -> str:
        """The severity word, styled when colour is on."""
        word = problem.severity.value
        return click.style(word, **SEVERITY_STYLE[problem.severity]) if self.color else word
