"""``modelspec rule CODE`` (and ``rule --all``): what a problem code means, as ruff's ``rule`` explains a rule.

Generated from the code registry (:func:`pipeline.spec.problems.all_codes`),
the one that feeds the SARIF rules and ``docs/problems.md``: what the code
says and why it matters, an example (:mod:`pipeline.check.examples`: for a
check pass's code, a spec checked now and the line ``check`` prints for it),
whether ``check --fix`` fixes it, whether an ignore can silence it, and where
the documentation page lists it. Exit 0, or 2 for
a code modelspec does not report (with the nearest codes).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, List, Mapping, Optional

import click

from pipeline.commands.output import echo

if TYPE_CHECKING:
    from pipeline.pricing.op_profiles import OpProfiles

#: The page every code has a row (and an anchor) on.
DOC_PAGE = "docs/problems.md"


@click.command(name="rule", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("code", required=False)
@click.option("--all", "every", is_flag=True, help="Explain every code, in the registry's order.")
def command(code: Optional[str], every: bool) -> None:
    """Explain a problem code: what it means, whether --fix fixes it, whether an ignore silences it.

    \b
    Examples:
      modelspec rule params.total-mismatch
      modelspec rule --all
    """
    from pipeline.spec.problems import all_codes, near_misses

    from pipeline.pricing.op_profiles import load_op_profiles

    codes = all_codes()
    if every == (code is not None):
        raise click.UsageError("name one CODE, or --all")
    profiles = load_op_profiles()  # the bundled ones: an example's spec is checked as a fresh repository would be
    if every:
        echo("\n".join("\n".join(explain(name, codes, profiles)) for name in codes))
        return
    if code not in codes:
        close = near_misses(code, codes, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; {DOC_PAGE} lists every code"
        raise click.BadParameter(f"{code!r} is not a code modelspec reports{hint}", param_hint="CODE")
    echo("\n".join(explain(code, codes, profiles)))


def explain(code: str, codes: Mapping[str, str], profiles: "OpProfiles") -> List[str]:
    """The lines that explain *code*, ending with a blank line."""
    from pipeline.check.fixable import FIXING
    from pipeline.spec.problems import UNSILENCED

    if code in FIXING:
        fix = "check --fix fixes it where its message states the value to write ([*] in the report)"
    else:
        fix = "by hand: the message says what to change (check --fix does not)"
    if code in UNSILENCED:
        silence = "never: no configuration or inline ignore silences it (--strict fails the run on it)"
    else:
        silence = ("a warning of it with --ignore, the configuration's ignore or per-file-ignores, or "
                   f"# modelspec: ignore[{code}] on its line; an error is always reported")
    return [code, "", *textwrap.wrap(codes[code], 100, initial_indent="  ", subsequent_indent="  "), "",
            *example_lines(code, codes, profiles),
            *textwrap.wrap(fix, 100, initial_indent="  Fix:      ", subsequent_indent=" " * 12),
            *textwrap.wrap(silence, 100, initial_indent="  Silence:  ", subsequent_indent=" " * 12),
            f"  Docs:     {DOC_PAGE}#{code}", ""]


def example_lines(code: str, codes: Mapping[str, str], profiles: "OpProfiles") -> List[str]:
    """*code*'s example: the input in words, or the example spec's lines and what ``check`` reports on it."""
    from pipeline.check.examples import EXAMPLE_FILE, example_report, examples
    from pipeline.reporters.summary import problem_line

    example = examples()[code]
    if example.about is not None:
        return textwrap.wrap(example.about, 100, initial_indent="  Example:  ", subsequent_indent=" " * 12)
    width = len(str(max((number for number, _ in example.shown), default=1)))
    said = "reports" if example.reported_as == code else \
        f"reports it as {example.reported_as} (that pass runs before the one that reports {code})"
    what = "this file" if example.whole else "a two-layer Llama spec, checked clean, changed"
    return [f"  Example:  modelspec check {EXAMPLE_FILE}, {what}:",
            *(f"              {number:>{width}} | {_visible(line)}" for number, line in example.shown),
            *(f"              {'-' * width} | {line}   (line left out)" for line in example.dropped),
            f"            {said}:",
            *(f"              {problem_line(problem, problem.severity.value)}"
              for problem in example_report(example, profiles, codes))]


def _visible(line: str) -> str:
    """*line* of an example spec with its tabs and control characters written as escapes, as a terminal would
    not show them."""
    from pipeline.spec.escape import printable

    return printable(line.replace("\t", "\\t"))
