"""The one path to the terminal for text modelspec composes around text it did not write.

A command's messages name config keys, spec values, file names and git
revisions; :func:`echo` passes every line through
:func:`pipeline.spec.escape.printable`, so no control character or ANSI escape
reaches the terminal, one message stays on its lines, and no line can run
as a GitHub workflow command in a CI log. A rendered report is different: its
renderer escaped what it did not write for its own medium (JSON, XML,
Markdown, workflow commands it means), and :func:`echo_rendered` prints it as
it is.
"""

from __future__ import annotations

from typing import Optional

import click

from pipeline.spec.escape import printable


def echo(text: str = "", err: bool = False, nl: bool = True) -> None:
    """Print *text* (stderr when *err*) with everything a terminal or a CI runner acts on shown escaped.

    Line breaks and tabs are kept; every other control character is shown
    as its escape (``\\x1b``), and a line starting with ``::`` or holding
    ``##[`` is defused (:func:`pipeline.spec.escape.defuse_commands`).
    """
    click.echo(printable(text, keep="\n\t"), err=err, nl=nl)


def echo_rendered(text: str, err: bool = False, nl: bool = True, color: Optional[bool] = None) -> None:
    """Print a report its renderer already escaped for its medium, as it is; *color* ``True`` keeps its ANSI
    styles when the stream is no terminal (Click strips them then)."""
    click.echo(text, err=err, nl=nl, color=color)
