"""Report formats for ``modelspec check``: the registry the CLI's ``--format`` choices come from.

A reporter turns a finished :class:`~pipeline.spec.problems.RunResult` into text and
does nothing else: it never writes, prints or exits, so one run can print one
format and write others to files, and a test compares the returned text. Each
format lives in its own module; a format's options are fields of its frozen
reporter (``TextReporter(color=True)``), and the registry names each, and
:func:`reporter` gives it with its defaults, ready for ``dataclasses.replace``.

Every format states the verdict in its own terms as well as through the exit
code the CLI returns: the text summary, the JSON ``exit_code``, JUnit
``<failure>`` elements, SARIF ``invocations[0]``, GitHub ``::error``
commands, the Markdown headline.
"""

from __future__ import annotations

import functools
import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping, Protocol, Tuple

if TYPE_CHECKING:
    from pipeline.spec.problems import RunResult


class Reporter(Protocol):
    """Anything that renders a run as one report."""

    def render(self, result: "RunResult", codes: Mapping[str, str]) -> str:
        """Return the whole report for *result*.

        *codes* maps each problem code to its one-line help text
        (:func:`pipeline.spec.problems.all_codes`). The text ends in a newline
        unless it is empty (quiet text on a passing run).
        """
        ...


#: Format name (the CLI's ``--format`` and ``--output`` value) to the module and class of its reporter. A
#: module is imported when a report of its format is made (:func:`reporter`): a check the result cache answers
#: makes none, and the formats' modules cost it 20 ms.
FORMATS: Mapping[str, Tuple[str, str]] = MappingProxyType({
    "text": ("pipeline.reporters.text", "TextReporter"),
    "json": ("pipeline.reporters.json_", "JsonReporter"),
    "junit": ("pipeline.reporters.junit", "JunitReporter"),
    "sarif": ("pipeline.reporters.sarif", "SarifReporter"),
    "github": ("pipeline.reporters.github", "GithubReporter"),
    "markdown": ("pipeline.reporters.markdown", "MarkdownReporter"),
})


@functools.lru_cache(maxsize=None)
def reporter(fmt: str) -> Reporter:
    """The reporter of the format *fmt* (one of :data:`FORMATS`), with its default options."""
    module, name = FORMATS[fmt]
    return getattr(importlib.import_module(module), name)()
