"""Text modelspec did not write, made inert for the medium it is written to: the one place per medium.

A spec's values and keys, a config's keys, a file's name and a git revision's
name are hostile until escaped: a pull request chooses them, and modelspec
writes them into a terminal, a GitHub Actions log, a bot's Markdown comment,
a JUnit or SARIF file. Each medium has one function here, and every writer of
that medium calls it on the text it did not write (or on its whole output):

- **Terminal and log text** (:func:`printable`): control characters (C0, DEL,
  C1: an ANSI escape starts with ESC or CSI), the line and paragraph
  separators, the bidirectional overrides (a "Trojan Source" line reads
  differently than it is) and lone surrogates are shown as Python escapes
  (``\\x1b``, ``\\u2028``), so one problem stays on one line and nothing acts on
  the terminal; and workflow commands are defused (below).
- **GitHub workflow commands**: the Actions runner runs a line as a command
  when, leading white space stripped, it starts with ``::`` (``::error::``,
  ``::add-mask::``, ``::stop-commands::``), and runs the legacy form ``##[``
  anywhere in a line (actions/runner ``ActionCommand.TryParseV2`` and
  ``TryParse``). So in text nobody but modelspec wrote, a line's leading
  ``::`` and every ``##[`` get one character escaped in the medium's own way
  (:func:`defuse_commands`): ``\\x3a`` / ``\\x23`` in text, ``&#58;`` / ``&#35;``
  in XML and Markdown, ``\\u003a`` / ``\\u0023`` in JSON, the last three lossless.
  Only the GitHub reporter writes commands, and only its own.
- **Markdown** (:func:`markdown_text`, :func:`markdown_code`): GitHub-flavoured
  Markdown gives meaning to punctuation (emphasis, links ``[a](b)``, images
  ``![a](b)``, HTML, tables' ``|``), to a line's start (headings, lists,
  quotes) and to plain words: ``@name`` notifies a person, ``#12`` and URLs
  become links. Text is backslash-escaped (CommonMark allows it before any
  ASCII punctuation), a line break becomes ``<br>`` so text never starts a
  line, and a zero-width space (U+200B) after ``@`` and ``#`` and inside
  ``://`` and ``www.`` keeps the mention and link filters from matching
  (the way Renovate's bot comments defuse mentions). A code span shows a
  name as it is, with none of that meaning.
- **JSON** (:func:`json_text`) and **XML** (:func:`xml_text`): JSON escapes C0
  itself; DEL, C1, the separators, bidi controls and lone surrogates (which
  UTF-8 cannot encode) are written as ``\\uXXXX`` escapes, losslessly. XML 1.0
  cannot hold C0 characters at all, even as references, so text for XML goes
  through :func:`printable` first (keeping tab and newline).
"""

from __future__ import annotations

import functools
import re

# Control characters (C0, DEL, C1), the line and paragraph separators, the bidirectional controls, lone
# surrogates and the noncharacters U+FFFE/U+FFFF: a terminal would act on them, a line splitter splits at
# them, an editor reorders the text around them, XML 1.0 cannot hold them, and a lone surrogate (a file
# name's undecodable byte) cannot be encoded as UTF-8.
_UNPRINTABLE_RANGES = ((0x00, 0x1F), (0x7F, 0x9F), (0x61C, 0x61C), (0x200E, 0x200F), (0x2028, 0x202E),
                       (0x2066, 0x2069), (0xD800, 0xDFFF), (0xFFFE, 0xFFFF))


def _character_class(ranges: "tuple[tuple[int, int], ...]", leave: str = "") -> str:
    """A regular expression's class of the code points of *ranges*, less the characters of *leave*."""
    spans = []
    for low, high in ranges:
        for point in sorted(ord(char) for char in set(leave) if low <= ord(char) <= high):
            spans.append((low, point - 1))
            low = point + 1
        spans.append((low, high))
    return "[" + "".join(re.escape(chr(low)) + ("" if low == high else "-" + re.escape(chr(high)))
                         for low, high in spans if low <= high) + "]"


_UNPRINTABLE = re.compile(_character_class(_UNPRINTABLE_RANGES))

#: Text :func:`printable` returns as it is, told at once: ASCII letters, digits and ``_ . / + = @ , -`` only (no
#: character to escape, no ``:`` or ``#`` a workflow command needs). Most file names and identifiers are this.
_PLAIN = re.compile(r"[\w./+=@,-]*", re.ASCII)

#: The characters :func:`json_text` writes as ``\\uXXXX``: what JSON leaves raw but a terminal or UTF-8 cannot take.
_JSON_RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
                       "\ufffe\uffff]")

# A workflow command's start: ``::`` at a line's start after white space, or the legacy ``##[`` anywhere.
_LINE_COMMAND = re.compile(r"^([ \t\f\v]*):(?=:)", re.MULTILINE)
_LEGACY_COMMAND = "##["

#: How each medium writes ``:`` and ``#`` without their meaning to the Actions runner.
TEXT_ESCAPES = ("\\x3a", "\\x23")
XML_ESCAPES = ("&#58;", "&#35;")
JSON_ESCAPES = ("\\u003a", "\\u0023")


def defuse_commands(text: str, escapes: tuple[str, str] = TEXT_ESCAPES) -> str:
    """*text* with no line the Actions runner would run as a workflow command.

    A line whose first non-blank characters are ``::`` gets its first ``:``
    written as ``escapes[0]``; every ``##[`` gets its second ``#`` written as
    ``escapes[1]``: ``"::error::x"`` is ``"\\x3a:error::x"`` in text.
    """
    if "::" not in text and _LEGACY_COMMAND not in text:  # told at C speed: most text holds neither
        return text
    colon, hash_ = escapes
    text = _LINE_COMMAND.sub(lambda match: match.group(1) + colon, text)
    return text.replace(_LEGACY_COMMAND, "#" + hash_ + "[")


def first_unprintable(text: str) -> "str | None":
    """The first character of *text* that :func:`printable` would escape (a control character, a line or
    paragraph separator, a bidi control, a lone surrogate), or ``None``."""
    match = _UNPRINTABLE.search(text)
    return match.group() if match else None


def is_plain(text: str) -> bool:
    """Whether *text* holds only ASCII letters, digits and ``_ . / + = @ , -``: :func:`printable` gives it back
    unchanged, and a caller that would escape many strings can tell so at once."""
    return _PLAIN.fullmatch(text) is not None


@functools.lru_cache(maxsize=8)
def _unprintable_but(keep: str) -> "re.Pattern[str]":
    """:data:`_UNPRINTABLE` less the characters of *keep*: a table of 10,000 lines is told clean in one search,
    not a callback per line break."""
    return re.compile(_character_class(_UNPRINTABLE_RANGES, keep)) if keep else _UNPRINTABLE


def printable(text: str, keep: str = "") -> str:
    """*text* safe on a terminal and in a CI log: see the module docstring.

    Control characters, separators and bidi controls are written as escapes
    (``\\x01``, ``\\u2028``); a file name's undecodable byte, which Python
    decodes to a lone surrogate (``surrogateescape``), is shown as the byte
    (``\\xff``). *keep* lists characters left as they are (a message may span
    lines: ``keep="\\n"``). Workflow commands are defused
    (:func:`defuse_commands`), at the start of every line kept.
    """
    if is_plain(text):
        return text
    if _unprintable_but(keep).search(text) is None:  # only kept characters to leave: no escape to write
        return defuse_commands(text)

    def escape(match: "re.Match[str]") -> str:
        char = match.group()
        if char in keep:
            return char
        if "\udc80" <= char <= "\udcff":
            return f"\\x{ord(char) - 0xdc00:02x}"
        return char.encode("unicode_escape", "backslashreplace").decode("ascii")

    return defuse_commands(_UNPRINTABLE.sub(escape, text))


def json_text(document: str) -> str:
    """A serialised JSON document (``json.dumps`` output) with nothing a terminal, UTF-8 or the runner acts on.

    Lossless: the characters JSON leaves raw (see the module docstring) become
    ``\\uXXXX`` escapes and ``##[`` becomes ``#\\u0023[``, all of which occur
    only inside strings, so a JSON reader gets back exactly the same values.
    """
    escaped = _JSON_RAW.sub(lambda match: f"\\u{ord(match.group()):04x}", document)
    return defuse_commands(escaped, JSON_ESCAPES)


def xml_text(document: str) -> str:
    """A serialised XML document with no workflow command in it (its text already :func:`printable`).

    Lossless: ``&#58;`` and ``&#35;`` are character references, read back as
    ``:`` and ``#``.
    """
    return defuse_commands(document, XML_ESCAPES)


#: The ASCII punctuation GitHub-flavoured Markdown gives an inline meaning to; each gets a backslash.
MARKDOWN_SPECIAL = frozenset("\\`*_~[]<>|&$!#@")

# Where GitHub would turn plain words into a mention, a reference or a link: after '@' and '#', inside
# '://' and 'www.'. A zero-width space goes there.
_MARKDOWN_LINKING = re.compile(r"(?<=[@#])|(?=://)|(?i:(?<=www)(?=\.))")


def markdown_text(text: str) -> str:
    """*text* as inert GitHub-flavoured Markdown, fit for a table cell or a line's middle.

    ``**x** @team`` is ``\\*\\*x\\*\\* \\@\\u200bteam``; a line break is ``<br>``
    (so nothing starts a line and a table row stays one line); control
    characters are shown escaped (:func:`printable`).
    """
    text = _MARKDOWN_LINKING.sub("\u200b", printable(text, keep="\n\r"))
    escaped = "".join("\\" + char if char in MARKDOWN_SPECIAL else char for char in text)
    return "<br>".join(escaped.splitlines())


def markdown_code(text: str, in_table: bool = True) -> str:
    """*text* as a Markdown code span, whatever backticks it holds: shown as it is, with no Markdown meaning.

    Control characters and line breaks are shown escaped (:func:`printable`),
    so the span stays on its line; in a table cell its pipes are escaped (GFM
    reads ``\\|`` inside a code span in a table as ``|``).
    """
    text = printable(text)
    runs = re.findall(r"`+", text)
    fence = "`" * (max(map(len, runs), default=0) + 1)
    padded = f" {text} " if runs or text.startswith(" ") or text.endswith(" ") else text
    span = f"{fence}{padded}{fence}"
    return span.replace("|", "\\|") if in_table else span
