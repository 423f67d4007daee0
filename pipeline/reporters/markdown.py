"""The job-summary view: a Markdown page for ``$GITHUB_STEP_SUMMARY``.

A headline with the verdict mark and the counts, then a table of the problems
(location, severity, code, message), capped so a run with hundreds of problems
still renders as a page a person reads; a line says how many rows were left out
and where they are. A clean run gets one short sentence.

Every cell is escaped by :func:`pipeline.spec.escape.markdown_text`, the one place
Markdown is escaped: the characters GitHub-flavoured Markdown gives a meaning
inside a table cell (``|`` ends the cell, backticks open code, ``*`` ``_`` ``~``
emphasis, ``[`` ``]`` and ``![`` links and images, ``<`` ``>`` HTML, ``&``
entities, ``$`` maths) get a backslash, a line break becomes ``<br>`` since a
table row is one line, and a mention (``@team``), a reference (``#12``) or a
URL is broken by a zero-width space so GitHub neither notifies nor links.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from pipeline.spec.escape import markdown_text
from pipeline.spec.problems import Problem, RunResult
from pipeline.reporters.summary import TOOL_NAME, plural, summary_sentence

#: How many problem rows the table shows by default.
DEFAULT_MAX_ROWS = 50


@dataclass(frozen=True)
class MarkdownReporter:
    """Render a run as a Markdown summary.

    Attributes:
        max_rows: The most problem rows in the table; the rest are counted in a line below it.
    """

    max_rows: int = DEFAULT_MAX_ROWS

    def __post_init__(self) -> None:
        """Refuse a table with no room for a row.

        Raises:
            ValueError: If ``max_rows`` is less than 1.
        """
        if self.max_rows < 1:
            raise ValueError(f"max_rows must be at least 1, not {self.max_rows}")

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the page, ending in a newline.

        *codes* is unused: each row names its code.
        """
        failed = result.exit_code != 0
        headline = f"### {'❌' if failed else '✅'} {TOOL_NAME} check {'failed' if failed else 'passed'}"
        problems = result.problems
        if not problems:
            return f"{headline}\n\nAll clean: {summary_sentence(result)}.\n"
        blocks = [headline, summary_sentence(result), _table(problems[:self.max_rows])]
        hidden = len(problems) - self.max_rows
        if hidden > 0:
            blocks.append(f"…and {plural(hidden, 'more problem')}, not shown; `{TOOL_NAME} check` lists them all.")
        return "\n\n".join(blocks) + "\n"


def _table(problems: tuple[Problem, ...]) -> str:
    """The problems table, header included, without a trailing newline."""
    rows = ["| Location | Severity | Code | Message |", "| --- | --- | --- | --- |"]
    for problem in problems:
        cells = (f"{problem.file}:{problem.line}:{problem.column}", problem.severity.value, problem.code,
                 problem.message)
        rows.append("| " + " | ".join(markdown_text(cell) for cell in cells) + " |")
    return "\n".join(rows)
