"""Report formats for ``modelspec check``: the registry the CLI's ``--format`` choices come from.

A reporter turns a finished :class:`~pipeline.spec.problems.RunResult` into text and
does nothing else: it never writes, prints or exits, so one run can print one
format and write others to files, and a test compares the returned text. Each
format lives in its own module; a format's options are fields of its frozen
reporter (``TextReporter(color=True)``), and the registry holds each with its
defaults, ready for ``dataclasses.replace``.

Every format states the verdict in its own terms as well as through the exit
code the CLI returns: the text summary, the JSON ``exit_code``, JUnit
``<failure>`` elements, SARIF ``invocations[0]``, GitHub ``::error``
commands, the Markdown headline.
"""

from __future__ import annotations

from typing import Mapping, Protocol

from pipeline.spec.problems import RunResult
from pipeline.reporters.github import GithubReporter
from pipeline.reporters.json_ import JsonReporter
from pipeline.reporters.junit import JunitReporter
from pipeline.reporters.markdown import MarkdownReporter
from pipeline.reporters.sarif import SarifReporter
from pipeline.reporters.text import TextReporter


class Reporter(Protocol):
    """Anything that renders a run as one report."""

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the whole report for *result*.

        *codes* maps each problem code to its one-line help text
        (:func:`pipeline.spec.problems.all_codes`). The text ends in a newline
        unless it is empty (quiet text on a passing run).
        """
        ...


#: Format name (the CLI's ``--format`` value) to its reporter with default options.
REPORTERS: dict[str, Reporter] = {
    "text": TextReporter(),
    "json": JsonReporter(),
    "junit": JunitReporter(),
    "sarif": SarifReporter(),
    "github": GithubReporter(),
    "markdown": MarkdownReporter(),
}
