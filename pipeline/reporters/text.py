"""The human report: one ``path:line:col: severity [code] message`` line per problem, then a summary.

The line shape is the one compilers and linters print (and editors' problem
matchers parse), so a terminal click or ``grep`` finds the place. A problem
``check --fix`` can fix carries ruff's ``[*]`` before its message, and the
summary counts them ("2 fixable with `--fix`"). A file whose passes were
skipped after an earlier one failed says which, so a reader knows more may
come once its errors are fixed. Colour marks only the severity word, and is
off unless the CLI asks for it (it does when stdout is a terminal and
``NO_COLOR`` is unset, or ``FORCE_COLOR`` is set): a report written to a file
or a CI log must not carry escape codes. ``quiet`` is for scripts and hooks
that want silence on success: only the problems that fail the run, and
nothing at all when none does. ``statistics`` is ruff's ``--statistics``: a
count per code, most frequent first, instead of the problems.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Mapping

import click

from pipeline.check.fixable import fixable
from pipeline.spec.problems import FileResult, Outcome, Problem, RunResult, Severity
from pipeline.reporters.summary import problem_line, summary_sentence

#: The style of each severity word when colour is on (``click.style`` keywords).
SEVERITY_STYLE: Mapping[Severity, Mapping[str, object]] = {
    Severity.ERROR: {"fg": "red", "bold": True},
    Severity.WARNING: {"fg": "yellow"},
}

#: The marker of a problem ``check --fix`` fixes (ruff's).
FIXABLE_MARK = "[*]"


@dataclass(frozen=True)
class TextReporter:
    """Render a run as lines of text.

    Attributes:
        color: Colour the severity word with ANSI escapes.
        quiet: Print only the problems that fail the run (errors, and warnings
            under ``--strict``) and the summary; print nothing when none does.
        statistics: Print a count per code instead of the problems.
    """

    color: bool = False
    quiet: bool = False
    statistics: bool = False

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the report: one line per problem (sorted), the skipped passes, then the summary line.

        *codes* is unused (the text names each code; ``modelspec rule CODE`` explains it).
        The text ends with a newline, or is empty in quiet mode when nothing fails.
        """
        problems = [problem for problem in result.problems if result.failing(problem) or not self.quiet]
        if self.quiet and not problems:
            return ""
        if self.statistics:
            lines = statistics_lines(problems)
        else:
            lines = [self._line(problem) for problem in problems]
            lines += [] if self.quiet else [line for file in result.files for line in skipped_lines(file)]
        return "".join(line + "\n" for line in [*lines, summary_sentence(result) + fixable_note(problems)])

    def _line(self, problem: Problem) -> str:
        """*problem*'s line, with the fixable marker before its message."""
        line = problem_line(problem, self._severity(problem))
        if not fixable(problem):
            return line
        head = f"[{problem.code}] "
        at = line.index(head) + len(head)
        return f"{line[:at]}{FIXABLE_MARK} {line[at:]}"

    def _severity(self, problem: Problem) -> str:
        """The severity word, styled when colour is on."""
        word = problem.severity.value
        return click.style(word, **SEVERITY_STYLE[problem.severity]) if self.color else word


def skipped_lines(file: FileResult) -> List[str]:
    """``specs/a.yaml: skipped stack, roundtrip (an earlier pass failed; fix its errors and check again)``, or no
    line when no pass of *file* was skipped."""
    skipped = [name for name, outcome in file.outcomes if outcome is Outcome.SKIPPED]
    if not skipped:
        return []
    return [f"{file.file}: skipped {', '.join(skipped)} (an earlier pass failed; fix its errors and check again)"]


def statistics_lines(problems: List[Problem]) -> List[str]:
    """One line per code, most frequent first: ``3  roundtrip.null  [*]`` (the marker when ``--fix`` fixes every
    one of them)."""
    by_code: dict = {}
    for problem in problems:
        found = by_code.setdefault(problem.code, [0, 0])
        found[0] += 1
        found[1] += fixable(problem)
    if not by_code:
        return []
    rows = sorted(by_code.items(), key=lambda item: (-item[1][0], item[0]))
    width = len(str(rows[0][1][0]))
    code_width = max(len(code) for code, _ in rows)
    return [f"{count:>{width}}  {code:<{code_width}}  {FIXABLE_MARK if fixes == count else ''}".rstrip()
            for code, (count, fixes) in rows]


def fixable_note(problems: List[Problem]) -> str:
    """``"; 2 fixable with `--fix`"`` for the summary, or ``""`` when none is."""
    fixes = sum(1 for problem in problems if fixable(problem))
    return f"; {fixes} fixable with `--fix`" if fixes else ""
