"""What every report says about a run, worded once so that all formats agree.

Each format renders the same facts: how many files were checked, how many were
clean, how many errors and warnings there were, whether the run fails, and each
problem's ``path:line:col: severity [code] message`` line. Counting and wording
them here, rather than in each format, is what keeps the text summary, the JSON
counts, the Markdown headline and the GitHub closing line from drifting apart.
"""

from __future__ import annotations

import dataclasses
import pathlib
from dataclasses import dataclass
from typing import Mapping, Sequence

from pipeline import __version__
from pipeline.spec.problems import Problem, RunResult, Severity

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


#: The most problems of one code a report shows for one file, and the most in all for one file. A file that
#: states 10,000 unknown keys gets 20 lines and a count, not 10,000 lines (or 10,000 SARIF results: GitHub
#: code scanning takes at most 25,000 per run).
MAX_PER_CODE = 20
MAX_PER_FILE = 100

#: The code of the line that counts the problems a report leaves out (declared in :mod:`pipeline.check.runner`).
MORE_CODE = "check.more-problems"


def shown(result: RunResult) -> RunResult:
    """*result* as every report shows it: per file, at most :data:`MAX_PER_CODE` problems of one code and
    :data:`MAX_PER_FILE` in all, in report order, and one ``check.more-problems`` problem counting the rest.

    The counting problem stands where the first problem left out stood, under
    its pass, and has the most severe severity left out, so the verdict and
    the exit code are the run's own: a hidden error still fails the run.
    """
    files = []
    for file_result in result.files:
        kept, left_out, per_code = [], [], {}
        for problem in file_result.problems:
            per_code[problem.code] = per_code.get(problem.code, 0) + 1
            if per_code[problem.code] <= MAX_PER_CODE and len(kept) < MAX_PER_FILE:
                kept.append(problem)
            else:
                left_out.append(problem)
        if left_out:
            kept.append(more_problems(left_out, f"a report shows at most {MAX_PER_CODE} of one code and "
                                                f"{MAX_PER_FILE} in all per file"))
            file_result = dataclasses.replace(file_result, problems=tuple(sorted(kept)))
        files.append(file_result)
    return dataclasses.replace(result, files=tuple(files))


def more_problems(left_out: Sequence[Problem], why: str) -> Problem:
    """The problem that counts *left_out* (of one file, or the last of a run): how many, of which codes, and
    *why* they are left out (``"a report shows at most ..."``)."""
    by_code: dict[str, int] = {}
    for problem in left_out:
        by_code[problem.code] = by_code.get(problem.code, 0) + 1
    codes = ", ".join(f"{count} {code}" for code, count in sorted(by_code.items(), key=lambda item: (-item[1],
                                                                                                      item[0])))
    first = left_out[0]
    severity = Severity.ERROR if any(p.severity is Severity.ERROR for p in left_out) else Severity.WARNING
    return Problem(first.file, first.line, first.column, first.pass_name, MORE_CODE, severity,
                   f"…and {plural(len(left_out), 'more problem')}, not shown ({codes}); {why}: fix these and run "
                   "again")


def plural(number: int, noun: str) -> str:
    """``plural(1, "error")`` is ``"1 error"``, ``plural(2, "error")`` is ``"2 errors"``."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def fix_summary(fixed: int, files: int, left: int) -> str:
    """``check --fix``'s closing line: how many problems were fixed in how many files, and how many are left."""
    return (f"fixed {plural(fixed, 'problem')} in {plural(files, 'file')}; "
            f"{plural(left, 'problem')} left")


def summary_sentence(result: RunResult) -> str:
    """One sentence summing up *result*, without a trailing newline.

    ``"3 errors, 2 warnings in 2 files (1 file clean)"`` when there are problems
    (the files named are those with problems), ``"4 files checked, no problems"``
    when there are none. Under ``--strict`` with warnings, the sentence adds that
    they fail the run, since the counts alone would not say so.
    """
    counts = count(result)
    scope = f"{scope_sentence(result)}; " if result.scope else ""
    if counts.errors + counts.warnings == 0:
        return f"{scope}{plural(counts.files, 'file')} checked, no problems"
    sentence = scope + (
        f"{plural(counts.errors, 'error')}, {plural(counts.warnings, 'warning')} "
        f"in {plural(counts.files_with_problems, 'file')} ({plural(counts.clean_files, 'file')} clean)"
    )
    if result.strict and counts.warnings:
        sentence += "; --strict: warnings fail the run"
    return sentence


def scope_sentence(result: RunResult) -> str:
    """What a changed-only run covers: ``changed since origin/main (merge base 0123456789ab): 2 of 27 specs,
    1 removed (specs/a/old.yaml)``; ``""`` for a run without a scope."""
    scope = result.scope
    if scope is None:
        return ""
    checked = len(result.files) if scope.checked is None else scope.checked
    sentence = (f"changed since {scope.ref} (merge base {scope.base[:12]}): {checked} of "
                f"{plural(scope.total, 'spec')}")
    if scope.removed:
        sentence += f", {len(scope.removed)} removed ({', '.join(scope.removed)})"
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
