"""The CI test-report view: JUnit XML, one testsuite per file, one testcase per pass or per failing problem.

Why a suite per file rather than per pass: a reviewer asks "which spec is
broken, and at which stage", and CI test views (GitLab, Jenkins, Azure) group
by suite. A file's suite lists its five passes in the order they ran, so the
failing pass and the passes skipped after it read as one story; a suite per
pass would scatter one file over five suites.

Mapping: a changed-only run starts with a suite of no tests whose ``scope`` property
says what it covered; each problem that fails the run (an error, or a warning under
``--strict``) is a testcase of its own, ``<pass> [<code>] <line>:<col>``, with
one ``<failure>`` (its message, and its ``path:line:col: severity [code]
message`` line), so the root's ``failures`` count is exactly the number of
failing problems; a pass without one is a single testcase, ``<skipped>`` when it
did not run (or failed only at fields an earlier pass reported, counted
there); the pass's other problems (warnings in a normal run) go to its first
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

from pipeline.reporters.summary import TOOL_NAME, problem_line, scope_sentence
from pipeline.spec.escape import xml_text
from pipeline.spec.problems import FileResult, Outcome, Problem, RunResult

#: Why a skipped pass did not run (:class:`Outcome.SKIPPED`).
SKIPPED_MESSAGE = "not run: an earlier pass left nothing to check"

#: Why a pass that failed only on fields an earlier pass reported has no failure of its own.
TOLD_EARLIER_MESSAGE = "its errors are at fields an earlier pass reported, and are counted there"


@dataclass(frozen=True)
class JunitReporter:
    """Render a run as a JUnit XML document."""

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the document (UTF-8 XML declaration, tab-indented), ending in a newline.

        *codes* is unused: each problem line names its code.
        """
        document = JUnitXml(TOOL_NAME)
        if result.scope is not None:
            # A changed-only run says what it covered even when it checked nothing: a suite of no tests.
            scope = TestSuite(f"{TOOL_NAME} --changed-since")
            scope.add_property("scope", scope_sentence(result))
            document.add_testsuite(scope)
        for file_result in result.files:
            document.add_testsuite(_file_suite(file_result, result))
        document.update_statistics()
        buffer = io.BytesIO()
        document.write(buffer, pretty=True)
        return xml_text(buffer.getvalue().decode("utf-8"))


def _file_suite(file_result: FileResult, result: RunResult) -> TestSuite:
    """One file's suite: each pass's testcases, in pass order, then any pass only its problems name."""
    suite = TestSuite(file_result.file)
    named = [pass_name for pass_name, _ in file_result.outcomes]
    extra = sorted({problem.pass_name for problem in file_result.problems} - set(named))
    outcomes = dict(file_result.outcomes)
    for pass_name in [*named, *extra]:
        problems = [problem for problem in file_result.problems if problem.pass_name == pass_name]
        for case in _pass_cases(file_result.file, pass_name, outcomes.get(pass_name), problems, result):
            suite.add_testcase(case)
    return suite


def _pass_cases(file: str, pass_name: str, outcome: Outcome | None, problems: list[Problem],
                result: RunResult) -> list[TestCase]:
    """One pass on one file as testcases: one per problem that fails the run, each with its one
    ``<failure>``; else one for the pass, skipped when it did not run (or failed only on fields an earlier
    pass reported, which that pass's failures already count).

    The pass's other problems (warnings that do not fail the run) go to the first case's ``<system-out>``.
    """
    failing = [problem for problem in problems if result.failing(problem)]
    cases = []
    for problem in failing:
        case = TestCase(f"{pass_name} [{problem.code}] {problem.line}:{problem.column}", classname=file, time=0)
        failure = Failure(_first_line(problem.message), problem.severity.value)
        failure.text = problem_line(problem)
        case.result = [failure]
        cases.append(case)
    if not cases:
        case = TestCase(pass_name, classname=file, time=0)
        if outcome is Outcome.SKIPPED:
            case.result = [Skipped(SKIPPED_MESSAGE)]
        elif outcome is Outcome.FAILED:
            case.result = [Skipped(TOLD_EARLIER_MESSAGE)]
        cases.append(case)
    others = [problem_line(problem) for problem in problems if not result.failing(problem)]
    if others:
        cases[0].system_out = "\n".join(others)
    return cases


def _first_line(message: str) -> str:
    """A failure's ``message`` attribute: the problem's message, its first line."""
    return message.splitlines()[0] if message else message
