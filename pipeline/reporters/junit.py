"""The CI test-report view: JUnit XML, one testsuite per file and one testcase per pass.

Why a suite per file rather than per pass: a reviewer asks "which spec is
broken, and at which stage", and CI test views (GitLab, Jenkins, Azure) group
by suite. A file's suite lists its five passes in the order they ran, so the
failing pass and the passes skipped after it read as one story; a suite per
pass would scatter one file over five suites.

Mapping: a pass with a problem that fails the run (an error, or a warning under
``--strict``) is a ``<failure>`` whose message counts them and whose text has
each one's ``path:line:col: severity [code] message`` line; a skipped pass is
``<skipped>``; the pass's other problems (warnings in a normal run) go to the
testcase's ``<system-out>``, visible in the report without failing it. The
``<testsuites>`` root's ``failures`` count is non-zero exactly when the run
fails. No ``timestamp`` or ``hostname``, and every ``time`` is 0, so the output
is the same on every run.

Built with ``junitparser`` (maintained, no dependencies of its own, models the
elements and keeps the counts on each suite and the root right); ``junit-xml``
was the other candidate, but its last release is from 2020. The document is
serialised through junitparser's pretty writer, which re-parses with
``xml.dom.minidom``, so the bytes do not depend on whether ``lxml`` is
installed.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Mapping

from junitparser import Failure, JUnitXml, Skipped, TestCase, TestSuite

from pipeline.escape import xml_text
from pipeline.problems import FileResult, Outcome, Problem, RunResult
from pipeline.reporters.summary import TOOL_NAME, plural, problem_line

#: Why a skipped pass did not run (:class:`Outcome.SKIPPED`).
SKIPPED_MESSAGE = "not run: an earlier pass left nothing to check"


@dataclass(frozen=True)
class JunitReporter:
    """Render a run as a JUnit XML document."""

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the document (UTF-8 XML declaration, tab-indented), ending in a newline.

        *codes* is unused: each problem line names its code.
        """
        document = JUnitXml(TOOL_NAME)
        for file_result in result.files:
            document.add_testsuite(_file_suite(file_result, result))
        document.update_statistics()
        buffer = io.BytesIO()
        document.write(buffer, pretty=True)
        return xml_text(buffer.getvalue().decode("utf-8"))


def _file_suite(file_result: FileResult, result: RunResult) -> TestSuite:
    """One file's suite: a testcase per pass, in pass order, then any pass only its problems name."""
    suite = TestSuite(file_result.file)
    named = [pass_name for pass_name, _ in file_result.outcomes]
    extra = sorted({problem.pass_name for problem in file_result.problems} - set(named))
    outcomes = dict(file_result.outcomes)
    for pass_name in [*named, *extra]:
        problems = [problem for problem in file_result.problems if problem.pass_name == pass_name]
        suite.add_testcase(_pass_case(file_result.file, pass_name, outcomes.get(pass_name), problems, result))
    return suite


def _pass_case(file: str, pass_name: str, outcome: Outcome | None, problems: list[Problem],
               result: RunResult) -> TestCase:
    """One pass on one file as a testcase.

    *outcome* is ``None`` for a pass the file's outcomes do not list but a
    problem names; its problems still decide whether it failed.
    """
    case = TestCase(pass_name, classname=file, time=0)
    failing = [problem for problem in problems if result.failing(problem)]
    if failing or outcome is Outcome.FAILED:
        failure = Failure(_failure_message(failing), failing[0].severity.value if failing else "error")
        failure.text = "\n".join(problem_line(problem) for problem in failing)
        case.result = [failure]
    elif outcome is Outcome.SKIPPED:
        case.result = [Skipped(SKIPPED_MESSAGE)]
    others = [problem_line(problem) for problem in problems if not result.failing(problem)]
    if others:
        case.system_out = "\n".join(others)
    return case


def _failure_message(failing: list[Problem]) -> str:
    """The failure's one-line message: how many problems fail the pass, and where the first is."""
    if not failing:
        # The runner tells each fault once, by the first pass that saw it.
        return "failed on fields an earlier pass already reported"
    first = failing[0]
    return f"{plural(len(failing), 'failing problem')}, the first [{first.code}] at line {first.line}"
