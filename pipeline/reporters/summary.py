"""What every report says about a run, worded once so that all formats agree.

Each format renders the same facts: how many files were checked, how many were
clean, how many errors and warnings there were, whether the run fails, and each
problem's ``path:line:col: severity [code] message`` line. Counting and wording
them here, rather than in each format, is what keeps the text summary, the JSON
counts, the Markdown headline and the GitHub closing line from drifting apart.
"""

from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Mapping

from pipeline import __version__
from pipeline.problems import Problem, RunResult, Severity

#: The tool's name as reports give it (SARIF ``tool.driver.name``, JSON ``tool.name``).
TOOL_NAME = "modelspec"

#: The tool's version, the package's own.
TOOL_VERSION = __version__

#: How a further line of a multi-line message is indented in line-per-problem
#: output, so that a line starting with a path always starts a new problem.
CONTINUATION_INDENT = "    "


@dataclass(frozen=True)
class Counts:
    """The run's totals.

    Attributes:
        files: Files checked.
        clean_files: Files with no problem at all (not even a warning).
        errors: Problems of severity error.
        warnings: Problems of severity warning.
        failing: Problems that fail the run: the errors, plus the warnings under ``--strict``.
        exit_code: The run's exit code, :attr:`RunResult.exit_code` (0 or 1).
    """

    files: int
    clean_files: int
    errors: int
    warnings: int
    failing: int
    exit_code: int

    @property
    def files_with_problems(self) -> int:
        """Files with at least one problem."""
        return self.files - self.clean_files


def count(result: RunResult) -> Counts:
    """Count *result*'s files and problems."""
    return Counts(
        files=len(result.files),
        clean_files=sum(1 for file_result in result.files if not file_result.problems),
        errors=result.count(Severity.ERROR),
        warnings=result.count(Severity.WARNING),
        failing=sum(1 for problem in result.problems if result.failing(problem)),
        exit_code=result.exit_code,
    )


def plural(number: int, noun: str) -> str:
    """``plural(1, "error")`` is ``"1 error"``, ``plural(2, "error")`` is ``"2 errors"``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def summary_sentence(result: RunResult) -> str:
    """One sentence summing up *result*, without a trailing newline.

    ``"3 errors, 2 warnings in 2 files (1 file clean)"`` when there are problems
    (the files named are those with problems), ``"4 files checked, no problems"``
    when there are none. Under ``--strict`` with warnings, the sentence adds that
    they fail the run, since the counts alone would not say so.
    """
    counts = count(result)
    if counts.errors + counts.warnings == 0:
        return f"{plural(counts.files, 'file')} checked, no problems"
    sentence = (
        f"{plural(counts.errors, 'error')}, {plural(counts.warnings, 'warning')} "
        f"in {plural(counts.files_with_problems, 'file')} ({plural(counts.clean_files, 'file')} clean)"
    )
    if result.strict and counts.warnings:
        sentence += "; --strict: warnings fail the run"
    return sentence


def problem_line(problem: Problem, severity_text: str | None = None) -> str:
    """*problem* as ``path:line:col: severity [code] message``, without a trailing newline.

    A multi-line message keeps its further lines, each indented by
    :data:`CONTINUATION_INDENT`. *severity_text* replaces the severity word
    (the text format passes it coloured).
    """
    severity = problem.severity.value if severity_text is None else severity_text
    message = ("\n" + CONTINUATION_INDENT).join(problem.message.splitlines())
    return f"{problem.file}:{problem.line}:{problem.column}: {severity} [{problem.code}] {message}"


def help_text(codes: Mapping[str, str], code: str) -> str:
    """The one-line help for *code* from the *codes* table (``all_codes()``).

    Raises:
        ValueError: If *code* is not in the table: every emitted code must be
            declared in its module's ``CODES`` table.
    """
    try:
        return codes[code]
    except KeyError:
        raise ValueError(
            f"problem code {code!r} has no help text in the codes table; "
            f"declare it in the CODES table of the module that emits it"
        ) from None


def posix_path(file: str) -> str:
    """*file* with forward slashes and no ``./`` prefix, as web UIs and URIs want it.

    On Windows a backslash separator becomes ``/``; elsewhere the path is only
    normalised (``./specs//a.yaml`` is ``specs/a.yaml``).
    """
    return pathlib.PurePath(file).as_posix()
