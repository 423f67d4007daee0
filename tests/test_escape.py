"""Escaping's boundaries, from the table spec/escape.py documents: each range's first and last code point is
escaped and the code point either side of it is not, in every medium; a file name's undecodable byte
(``\\udc80``-``\\udcff``) is shown as the byte and no other surrogate is; a character past the Basic
Multilingual Plane (``\\U00010000``) is left as it is; a code span's fence outgrows its longest backtick run.

The table is copied here, not imported: a change to the module's ranges must change this file too.
"""

from __future__ import annotations

import json
from typing import List, Tuple

import pytest

from pipeline.spec import escape
from pipeline.spec.escape import (defuse_commands, first_unprintable, is_plain, json_text, markdown_code,
                                  markdown_text, printable, xml_text)

#: The documented ranges (spec/escape.py): C0, DEL and C1, the Arabic letter mark, LRM/RLM, the line and
#: paragraph separators with the embeddings and overrides, the isolates, the surrogates, the noncharacters.
DOCUMENTED = ((0x00, 0x1F), (0x7F, 0x9F), (0x61C, 0x61C), (0x200E, 0x200F), (0x2028, 0x202E), (0x2066, 0x2069),
              (0xD800, 0xDFFF), (0xFFFE, 0xFFFF))


def shown(point: int) -> str:
    """How printable shows the code point *point* of the table: a file name's byte as ``\\xNN``, else Python's
    escape (``\\x1b``, ``\\u2028``, ``\\ud800``)."""
    if 0xDC80 <= point <= 0xDCFF:
        return f"\\x{point - 0xDC00:02x}"
    return f"\\x{point:02x}" if point <= 0xFF else f"\\u{point:04x}"


def edges() -> List[int]:
    """Every range's first and last code point."""
    return sorted({point for low, high in DOCUMENTED for point in (low, high)})


def neighbours() -> List[int]:
    """The code points just outside each range (not in another one)."""
    inside = {point for low, high in DOCUMENTED for point in range(low, high + 1)}
    return sorted({point for low, high in DOCUMENTED for point in (low - 1, high + 1)
                   if 0 <= point and point not in inside})


@pytest.mark.parametrize("point", edges(), ids=hex)
def test_each_ranges_edge_is_escaped_in_every_medium(point: int) -> None:
    char = chr(point)
    assert printable(f"a{char}b") == f"a{shown(point)}b"
    assert first_unprintable(f"ab{char}c{char}") == char
    assert not is_plain(char)
    assert json_text(f'"{char}"') == ('"\\u%04x"' % point if point > 0x1F else f'"{char}"')  # JSON escapes C0
    assert markdown_text(f"a{char}b") == (f"a{shown(point)}b".replace("\\", "\\\\") if point not in (0x0A, 0x0D)
                                          else "a<br>b")


@pytest.mark.parametrize("point", neighbours(), ids=hex)
def test_the_code_point_beside_each_range_is_left_as_it_is(point: int) -> None:
    char = chr(point)
    assert printable(f"a{char}b") == f"a{char}b"
    assert first_unprintable(f"a{char}b") is None
    assert json_text(f'"{char}"') == f'"{char}"'
    assert escape._unprintable_but("").search(char) is None


def test_the_neighbours_are_the_expected_code_points() -> None:
    assert neighbours() == [0x20, 0x7E, 0xA0, 0x61B, 0x61D, 0x200D, 0x2010, 0x2027, 0x202F, 0x2065, 0x206A,
                            0xD7FF, 0xE000, 0xFFFD, 0x10000]


@pytest.mark.parametrize(("text", "printed", "as_json"), [
    ("\udc7f", "\\udc7f", '"\\udc7f"'),    # a lone surrogate below a file name's bytes: Python's escape
    ("\udc80", "\\x80", '"\\udc80"'),      # the first undecodable byte
    ("\udcff", "\\xff", '"\\udcff"'),      # the last
    ("\udd00", "\\udd00", '"\\udd00"'),    # above them
    ("\ud800", "\\ud800", '"\\ud800"'),    # a high surrogate
    ("\U00010000", "\U00010000", '"\U00010000"'),  # the first astral character: printable, kept
    ("\U0010ffff", "\U0010ffff", '"\U0010ffff"'),
    ("\ufffd", "\ufffd", '"\ufffd"'),
])
def test_surrogates_and_astral_characters(text: str, printed: str, as_json: str) -> None:
    assert printable(text) == printed
    assert json_text(json.dumps(text, ensure_ascii=False)) == as_json
    assert json.loads(json_text(json.dumps(text, ensure_ascii=False))) == text


@pytest.mark.parametrize("keep", ["\x00", "\x1f", "\x10", "\x7f", "\x9f", "\u061c", "\n\r", "\ud800\udfff"])
def test_a_kept_character_splits_its_range_and_nothing_else(keep: str) -> None:
    pattern = escape._unprintable_but(keep)
    for low, high in DOCUMENTED:
        for point in range(low, high + 1):
            assert (pattern.match(chr(point)) is None) == (chr(point) in keep), hex(point)
    assert printable(f"a{keep}\x01b", keep=keep) == f"a{keep}\\x01b"


@pytest.mark.parametrize(("text", "span"), [
    ("x", "`x`"),
    ("`", "`` ` ``"),
    ("``", "``` `` ```"),
    ("a`b``c", "``` a`b``c ```"),       # the longest run is two: a fence of three
    ("a``b`c", "``` a``b`c ```"),
    ("```x`", "```` ```x` ````"),
    ("`a```b``", "```` `a```b`` ````"),
    (" lead", "`  lead `"),             # a space at an end: padded, as a span's one space is stripped
    ("trail ", "` trail  `"),
    ("", "``"),
])
def test_a_code_spans_fence_outgrows_its_longest_backtick_run(text: str, span: str) -> None:
    assert markdown_code(text, in_table=False) == span


@pytest.mark.parametrize(("text", "defused"), [
    ("::error::x", "\\x3a:error::x"),
    ("  \t::warning::x", "  \t\\x3a:warning::x"),
    ("a\n::x\n ::y", "a\n\\x3a:x\n \\x3a:y"),
    ("a::b", "a::b"),                   # mid-line: not a command
    (":x", ":x"),
    ("x ##[group]y ##[z", "x #\\x23[group]y #\\x23[z"),
    ("##", "##"),
    ("#[", "#["),
])
def test_workflow_commands_are_defused_at_their_boundaries(text: str, defused: str) -> None:
    assert defuse_commands(text) == defused
    assert xml_text(text) == defused.replace("\\x3a", "&#58;").replace("\\x23", "&#35;")


@pytest.mark.parametrize(("text", "plain"), [
    ("hidden_size", True), ("specs/a-b.c+d=e@f,g", True), ("", True), ("a b", False), ("a:b", False),
    ("a#b", False), ("é", False), ("a\x00", False),
])
def test_plain_text_is_ascii_words_and_a_few_marks(text: str, plain: bool) -> None:
    assert is_plain(text) is plain
    if plain:
        assert printable(text) == text


@pytest.mark.parametrize(("text", "cell"), [
    ("a|b", "a\\|b"),
    ("a\nb\rc", "a<br>b<br>c"),
    ("a\u2028b", "a\\\\u2028b"),
    ("@x #1 www.y z://w", "\\@\u200bx \\#\u200b1 www\u200b.y z\u200b://w"),
    ("WWW.y", "WWW\u200b.y"),
])
def test_markdown_text_boundaries(text: str, cell: str) -> None:
    assert markdown_text(text) == cell


def test_the_character_class_merges_nothing_and_drops_empty_spans() -> None:
    ranges: Tuple[Tuple[int, int], ...] = ((0x41, 0x43), (0x61, 0x61))
    assert escape._character_class(ranges) == "[A-Ca]"
    assert escape._character_class(ranges, "A") == "[B-Ca]"
    assert escape._character_class(ranges, "C") == "[A-Ba]"
    assert escape._character_class(ranges, "Ba") == "[AC]"  # a range of one left out: nothing of it written
