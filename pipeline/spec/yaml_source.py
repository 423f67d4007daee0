"""Strict YAML in, located plain data out, canonical YAML back: the one module that imports ``yaml``.

A spec file is read once, here, and every later pass sees only plain data
(dicts, lists, str, int, float, bool, None) plus a map from field path to
line and column. Reading is strict because a YAML loader's leniency is where
wrong specs hide: PyYAML reads YAML 1.1, where ``yes`` and ``off`` are
booleans, ``010`` is octal 8 and ``7e3`` is text, while YAML 1.2 (and every
JSON-minded tool) disagrees. So the scalars are resolved here by the YAML
1.2 core schema, and each plain scalar the two versions read differently is
refused by name, with the value to write instead.

Why an event-driven builder rather than ``yaml.safe_load``:

- an anchor or alias is refused at the first one the parser reports, before
  anything is expanded, so an alias bomb costs microseconds, not gigabytes;
- a tag is never constructed (nothing a tag names runs, not even ``!!str``);
- nesting is refused the moment it passes :data:`MAX_DEPTH`, and a file of
  more than :data:`MAX_VALUES` keys and values the moment it passes that,
  not after a tree was built: the cost of a file is bounded by the caps,
  whatever it holds;
- a duplicate key is seen as it arrives, with the line of the first one;
- every key and value gets its location as it is built, with no second walk.

A value-level refusal (a tag, an ambiguous scalar, a duplicate or non-text
key) is reported and the building goes on, keeping the raw text, so the
later passes still run and one run reports every problem of a file. A
structural refusal (see :data:`FATAL_CODES`) stops the reading: there is no
data for the later passes.

libyaml does the parsing when PyYAML was built with it (the pure-Python
parser otherwise); both yield the same events and the same 0-based marks,
which become 1-based :class:`~pipeline.spec.problems.Location` s here.
"""

from __future__ import annotations

import functools
import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Tuple

import yaml

from pipeline.spec.files import MAX_BYTES
from pipeline.spec.problems import FILE_START, FieldPath, Location, Problem, Severity, dotted

#: Deepest nesting of mappings and sequences read (the top mapping is 1). A
#: spec nests three or four levels; the cap bounds a runaway ``[[[[...``.
MAX_DEPTH = 64

#: Most keys, values and collections read from one file. A spec holds a few
#: hundred (a ``layer_types`` list one entry per layer: a few hundred more);
#: the cap bounds what a 1 MiB file of one-character entries (500,000 of
#: them) costs every later pass and every report, to some milliseconds.
MAX_VALUES = 10_000

#: Longest number read, in characters. Python refuses to turn a decimal text
#: of more than 4300 digits into an int (``sys.int_info.default_max_str_digits``,
#: CVE-2020-10735); staying below it keeps every conversion here total.
MAX_NUMBER_CHARS = 4000

#: The bound of every integer read or written: ``abs(value)`` below it has at most
#: :data:`MAX_NUMBER_CHARS` decimal digits, so it prints, in a message or a file.
NUMBER_LIMIT = 10 ** MAX_NUMBER_CHARS

#: Every code this module emits, with its one-line help (see :mod:`pipeline.spec.problems`).
CODES: dict[str, str] = {
    "yaml.unreadable": "the file could not be read (missing, a folder, or not permitted)",
    "yaml.too-large": f"the file is larger than {MAX_BYTES} bytes (1 MiB); a spec is a few kilobytes",
    "yaml.encoding": "the file is not UTF-8",
    "yaml.control-character": "a control character, a byte order mark past the start, or a YAML 1.1 line break "
                              "(U+0085, U+2028, U+2029) in the file",
    "yaml.syntax": "a YAML syntax error",
    "yaml.empty": "the file holds no document, or a null one; a spec is a mapping",
    "yaml.not-a-mapping": "the top level is not a mapping of fields",
    "yaml.multiple-documents": "a second YAML document in the file; a spec file holds one",
    "yaml.too-deep": f"nesting deeper than {MAX_DEPTH} levels",
    "yaml.too-many-values": f"more than {MAX_VALUES} keys and values in one file; a spec holds a few hundred",
    "yaml.anchor": "an anchor (&name); anchors and aliases are not allowed",
    "yaml.alias": "an alias (*name); anchors and aliases are not allowed",
    "yaml.tag": "an explicit tag (!!type, !name); tags are not allowed",
    "yaml.duplicate-key": "a key stated twice in one mapping",
    "yaml.key-type": "a key that is not text (a number, boolean, null, list or mapping)",
    "yaml.ambiguous-bool": "yes/no/on/off/y/n: a boolean in YAML 1.1, text in YAML 1.2",
    "yaml.ambiguous-number": "a number YAML 1.1 and YAML 1.2 read differently (010, 1:30, 0b1010, 1_000, 0o17), or "
                             "one many readers do not take (0x1f)",
    "yaml.tab": "a tab after `key:`: YAML 1.2 and libyaml take it, PyYAML's own reader and ruamel.yaml (fmt) "
                "refuse the file",
    "yaml.merge-key": "a `<<` key: a merge of another mapping in YAML 1.1 (PyYAML, ruamel.yaml), a plain key in "
                      "YAML 1.2",
    "yaml.non-finite": "NaN or an infinity where a finite number is required",
    "yaml.huge-number": f"a number longer than {MAX_NUMBER_CHARS} characters, or of more decimal digits",
}

#: The codes after which the file has no data: the later passes cannot run.
FATAL_CODES = frozenset({
    "yaml.unreadable", "yaml.too-large", "yaml.encoding", "yaml.control-character",
    "yaml.syntax", "yaml.empty", "yaml.not-a-mapping", "yaml.multiple-documents",
    "yaml.too-deep", "yaml.too-many-values", "yaml.anchor", "yaml.alias",
})

_LOADER = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader

_BOM = b"\xef\xbb\xbf"

# The characters YAML allows in a stream (YAML 1.2.2 section 5.1, c-printable,
# which libyaml and PyYAML's reader enforce too), less U+FEFF: a byte order
# mark past the file's start is invisible, and libyaml and PyYAML disagree on
# it (libyaml skips it at a document's start, PyYAML reads it as text).
# U+0085, U+2028 and U+2029 are allowed by YAML but refused here too: YAML 1.1
# (libyaml) breaks lines at them, YAML 1.2 and editors do not, so every line
# number after one would be off and a comment holding one would spill code.
_NOT_ALLOWED = re.compile("[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                          "\U00010000-\U0010ffff]")
_YAML11_LINE_BREAKS = "\x85\u2028\u2029"

# What follows a key up to its value: the colon and the spaces (or tabs) around it.
_AFTER_KEY = re.compile(r"[ \t]*:[ \t]*")

# Where a line breaks, for the positions this module computes itself (libyaml
# agrees, since the YAML 1.1-only breaks never reach it).
_LINE_BREAK = re.compile("\r\n|[\r\n]")

# One plain scalar, classified by the first group that matches all of it. The
# groups up to ``non_finite`` are the YAML 1.2 core schema (YAML 1.2.2 section
# 10.3.2, "Tag Resolution"), with a leading-zero int split out; the rest are the
# YAML 1.1 readings of text that 1.2 leaves as text (https://yaml.org/type/bool.html,
# /int.html, /float.html). ``separated`` is only reached with an underscore:
# 1.1 numbers without one are 1.2 numbers and match earlier.
_PLAIN = re.compile(r"""
     (?P<null>~|null|Null|NULL|)
    |(?P<true>true|True|TRUE)
    |(?P<false>false|False|FALSE)
    |(?P<leading_zero>[-+]?0[0-9]+)
    |(?P<int>[-+]?[0-9]+)
    |(?P<octal>0o[0-7]+)
    |(?P<hex>0x[0-9a-fA-F]+)
    |(?P<float>[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)
    |(?P<non_finite>[-+]?\.(?i:inf|nan))
    |(?P<bool11>(?i:yes|no|on|off|y|n))
    |(?P<sexagesimal>[-+]?(?:[1-9][0-9_]*(?::[0-5]?[0-9])+|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*))
    |(?P<binary>[-+]?0b_*[01][01_]*)
    |(?P<hex11>[-+]?0x_*[0-9a-fA-F][0-9a-fA-F_]*)
    |(?P<separated>[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*(?:[eE][-+][0-9]+)?)?|\._*[0-9][0-9_]*(?:[eE][-+][0-9]+)?))
""", re.VERBOSE)

_NUMBER_GROUPS = frozenset({
    "leading_zero", "int", "octal", "hex", "float", "sexagesimal", "binary", "hex11", "separated",
})

#: A refusal of one scalar: (code, message without the field name).
_Refusal = Tuple[str, str]
_Reading = Tuple[Any, Optional[_Refusal]]

_QUOTE_HINT = "(or quote it if you mean the text)"


def _number_text(number: int | float) -> str:
    """Write *number* the way a spec should: ``90``, ``1000.5``."""
    return repr(number) if isinstance(number, float) else str(number)


def _base60(text: str) -> int | float:
    """Read a YAML 1.1 sexagesimal number: ``1:30`` is 90, ``1:30.5`` is 90.5."""
    sign = -1 if text.startswith("-") else 1
    total: int | float = 0
    for part in text.lstrip("+-").replace("_", "").split(":"):
        total = total * 60 + (float(part) if "." in part else int(part))
    return sign * total


def _unseparated(text: str) -> int | float:
    """Read a YAML 1.1 decimal number with ``_`` separators as the decimal it spells."""
    digits = text.replace("_", "")
    return int(digits) if digits.lstrip("+-").isdigit() else float(digits)


def _ambiguous_number(what: str, fix: int | float) -> _Refusal:
    if type(fix) is int and abs(fix) >= NUMBER_LIMIT:  # its decimal is more than a message can print
        return "yaml.huge-number", (f"a number of more than {MAX_NUMBER_CHARS} decimal digits is too long; "
                                    f"write at most {MAX_NUMBER_CHARS} digits")
    return "yaml.ambiguous-number", f"{what}; write {_number_text(fix)} {_QUOTE_HINT}"


def _read_float(text: str) -> _Reading:
    number = float(text)
    if math.isinf(number):
        return text, ("yaml.non-finite", f"{text} is too large for a float; a finite number is required")
    return number, None


# How each group of _PLAIN reads: the value, and the refusal when there is one
# (a refused scalar keeps its raw text, so the later passes still see a value).
_READERS: dict[str, Callable[[str], _Reading]] = {
    "null": lambda text: (None, None),
    "true": lambda text: (True, None),
    "false": lambda text: (False, None),
    "int": lambda text: (int(text), None),
    "octal": lambda text: (text, _ambiguous_number(
        f"{text} is an octal number in YAML 1.2 but text in YAML 1.1", int(text[2:], 8))),
    "hex": lambda text: (text, _ambiguous_number(
        f"{text} is a hexadecimal number, which JSON and many readers do not take", int(text[2:], 16))),
    "float": _read_float,
    "leading_zero": lambda text: (text, _ambiguous_number(
        f"{text} has a leading zero, which means octal in YAML 1.1", int(text))),
    "sexagesimal": lambda text: (text, _ambiguous_number(
        f"{text} is a base-60 number in YAML 1.1 but text in YAML 1.2", _base60(text))),
    "binary": lambda text: (text, _ambiguous_number(
        f"{text} is a binary number in YAML 1.1 but text in YAML 1.2", int(text.replace("_", ""), 0))),
    "hex11": lambda text: (text, _ambiguous_number(
        f"{text} is a hexadecimal number in YAML 1.1 but text in YAML 1.2", int(text.replace("_", ""), 0))),
    "separated": lambda text: (text, _ambiguous_number(
        f"{text} has digit separators (_), a number in YAML 1.1 but text in YAML 1.2", _unseparated(text))),
    "non_finite": lambda text: (text, (
        "yaml.non-finite", f"{text} is not a finite number; a finite number is required")),
    "bool11": lambda text: (text, (
        "yaml.ambiguous-bool",
        f"{text} is a boolean in YAML 1.1 but text in YAML 1.2; write true or false {_QUOTE_HINT}")),
}


@functools.lru_cache(maxsize=8192)
def _read_plain(text: str) -> _Reading:
    """Resolve one plain scalar by the YAML 1.2 core schema, refusing 1.1 surprises.

    Pure, and cached: the same keys and values recur across a catalogue's files.

    Returns:
        ``(value, refusal)``: the value (the text itself when refused or when
        it is text) and ``None``, or a ``(code, message)`` refusal.
    """
    match = _PLAIN.fullmatch(text)
    if match is None:
        return text, None
    group = match.lastgroup
    if group in _NUMBER_GROUPS and len(text) > MAX_NUMBER_CHARS:
        return text, ("yaml.huge-number",
                      f"a number of {len(text)} characters is too long; write at most {MAX_NUMBER_CHARS} characters")
    value, refusal = _READERS[group](text)
    if refusal is None and type(value) is int and abs(value) >= NUMBER_LIMIT:
        # A hex literal of 4000 characters is an integer of some 4800 decimal digits: more than a message can
        # print (Python's int-to-str limit) or the writer writes. Every integer read is at most as long in
        # decimal as the longest literal read.
        return text, ("yaml.huge-number", f"a number of more than {MAX_NUMBER_CHARS} decimal digits is too long; "
                                          f"write at most {MAX_NUMBER_CHARS} digits")
    return value, refusal


_KIND = {type(None): "null", bool: "a boolean", int: "a number", float: "a number",
         str: "text", dict: "a mapping", list: "a list"}

_MAPPING_HINT = "a spec is a mapping of fields, one `key: value` per line"

# libyaml's problem texts, and what to write instead (first match wins).
_SYNTAX_HINTS = (
    ("cannot start any token", "indent with spaces, not tabs, and quote a value that starts with @ or `"),
    ("mapping values are not allowed", "quote a value that contains ': ', or indent the line like its neighbours"),
    ("expected ',' or ']'", "close the list with ]"),
    ("expected ',' or '}'", "close the mapping with }"),
    ("expected ':'", "write `key: value`, with a space after the colon, or quote the text"),
    ("end of stream", "close the quote or bracket opened above"),
    ("expected key", "indent the line like the keys around it"),
    ("expected <block end>", "indent the line like the keys around it"),
    ("<document start>", "a spec file holds one document: delete what follows the `...` line"),
)

# libyaml's own nesting cap (1000 levels) can trip while its scanner looks
# ahead, before the events reach MAX_DEPTH; that is the same refusal.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"

_TOO_DEEP = (f"nesting deeper than {MAX_DEPTH} levels; a spec nests a few: "
             "close the brackets or indentation that run away here")


def _syntax_hint(problem: str) -> str:
    return next((hint for text, hint in _SYNTAX_HINTS if text in problem), "fix the YAML here")


def _mark(mark: Any) -> Location:
    """A libyaml/PyYAML mark (0-based line and column) as a 1-based :class:`Location`."""
    return _location(mark.line, mark.column)


@functools.lru_cache(maxsize=65536)
def _location(line: int, column: int) -> Location:
    """The :class:`Location` of a 0-based *line* and *column*; one object per place, shared by the files of a
    run (the specs of a catalogue put their keys at the same places)."""
    return Location(line + 1, column + 1)


def _position(text: str, index: int) -> Location:
    """Where *index* of *text* is, counting line breaks as libyaml does."""
    line, start = 1, 0
    for found in _LINE_BREAK.finditer(text, 0, index):
        line, start = line + 1, found.end()
    return Location(line, index - start + 1)


def _named(path: FieldPath, message: str) -> str:
    """Prefix *message* with the field it is about, when there is one."""
    return f"{dotted(path)}: {message}" if path else message


def _short_tag(tag: str) -> str:
    """Write a resolved tag the way a file spells it: ``!!python/name:os.system``."""
    return "!!" + tag[len("tag:yaml.org,2002:"):] if tag.startswith("tag:yaml.org,2002:") else tag


@dataclass(frozen=True)
class SourceDoc:
    """One spec file as read: its data, its problems, and where each field is.

    Attributes:
        file: The display name problems carry.
        data: The top-level mapping as plain dicts, lists, str, int, float,
            bool and None; ``None`` when :attr:`fatal`.
        problems: Every problem the reading found, sorted by place.
        fatal: The file could not be read into data (a code of
            :data:`FATAL_CODES`): the later passes cannot run.
        value_locations: Where each value starts, by field path, e.g.
            ``("layers", 2, "count")``; ``()`` is the top mapping.
        key_locations: Where each mapping key is, by the path of its value.
    """

    file: str
    data: Optional[dict]
    problems: Tuple[Problem, ...]
    fatal: bool
    value_locations: Mapping[FieldPath, Location] = field(
        default_factory=lambda: MappingProxyType({}), repr=False)
    key_locations: Mapping[FieldPath, Location] = field(
        default_factory=lambda: MappingProxyType({}), repr=False)

    def value_location(self, path: FieldPath) -> Optional[Location]:
        """Where the value at *path* starts, or ``None`` if the file states none there."""
        return self.value_locations.get(path)

    def key_location(self, path: FieldPath) -> Optional[Location]:
        """Where the key of the value at *path* is, or ``None`` (list items and the top have none)."""
        return self.key_locations.get(path)

    def locate(self, path: FieldPath) -> Location:
        """The best place to report something about *path*.

        The value's location, else its key's, else the same for the nearest
        ancestor the file states, else :data:`~pipeline.spec.problems.FILE_START`
        (so a missing field is reported at the mapping that lacks it).
        """
        for end in range(len(path), -1, -1):
            found = self.value_locations.get(path[:end]) or self.key_locations.get(path[:end])
            if found is not None:
                return found
        return FILE_START


class _MappingFrame:
    """An open mapping: its dict, and whether a key or a value comes next."""

    __slots__ = ("container", "path", "record", "where", "is_key", "value_path", "store_as", "first_lines")

    def __init__(self, path: FieldPath, record: bool, where: Location, is_key: bool) -> None:
        self.container: dict = {}
        self.path = path
        self.record = record
        self.where = where
        self.is_key = is_key
        self.value_path: Optional[FieldPath] = None  # None: a key comes next
        self.store_as: Optional[str] = None          # None: the coming value is dropped
        self.first_lines: dict[str, int] = {}

    def slot(self) -> tuple[FieldPath, bool, bool]:
        """(path, record locations?, is a key?) for the node that comes next."""
        if self.value_path is None:
            return self.path, False, True
        return self.value_path, self.record and self.store_as is not None, False

    def expect_value(self, path: FieldPath, store_as: Optional[str]) -> None:
        self.value_path, self.store_as = path, store_as

    def attach(self, value: Any) -> None:
        if self.store_as is not None:
            self.container[self.store_as] = value
        self.value_path = self.store_as = None


class _SequenceFrame:
    """An open sequence: its list."""

    __slots__ = ("container", "path", "record", "where", "is_key")

    def __init__(self, path: FieldPath, record: bool, where: Location, is_key: bool) -> None:
        self.container: list = []
        self.path = path
        self.record = record
        self.where = where
        self.is_key = is_key

    def slot(self) -> tuple[FieldPath, bool, bool]:
        return self.path + (len(self.container),), self.record, False

    def attach(self, value: Any) -> None:
        self.container.append(value)


class _Builder:
    """Reads one event stream into plain data, locations and problems.

    One handler per event type; a handler that reports a fatal problem sets
    :attr:`stopped`, and the reading stops at the next event.
    """

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.values: dict[FieldPath, Location] = {}
        self.keys: dict[FieldPath, Location] = {}
        self.stack: list = []
        self.root: Optional[dict] = None
        self.text = ""
        self.documents = 0
        self.stopped = False
        self.handlers: dict[type, Callable[[Any], None]] = {
            yaml.StreamStartEvent: self._ignore,
            yaml.DocumentStartEvent: self._document_start,
            yaml.ScalarEvent: self._scalar,
            yaml.MappingStartEvent: lambda event: self._open(event, _MappingFrame),
            yaml.SequenceStartEvent: lambda event: self._open(event, _SequenceFrame),
            yaml.MappingEndEvent: self._close,
            yaml.SequenceEndEvent: self._close,
            yaml.AliasEvent: self._alias,
            yaml.DocumentEndEvent: self._ignore,
            yaml.StreamEndEvent: self._stream_end,
        }

    def run(self, text: str) -> None:
        """Read *text* to its end, or to the first fatal problem."""
        handlers = self.handlers
        counted = (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)
        values = 0
        self.text = text
        loader = _LOADER(text)
        next_event = loader.get_event  # as yaml.parse, without a generator's two calls per event
        try:
            for event in iter(next_event, None):
                if type(event) in counted:
                    values += 1
                    if values > MAX_VALUES:
                        self.report("yaml.too-many-values", _mark(event.start_mark),
                                    f"more than {MAX_VALUES} keys and values in one file; a spec holds a few "
                                    "hundred (one layer_types entry per layer): check that this is the right "
                                    "file, or state the stack as layers groups")
                        break
                handlers[type(event)](event)
                if self.stopped:
                    break
        except yaml.MarkedYAMLError as error:
            self._syntax(error)
        finally:
            loader.dispose()

    def document(self) -> SourceDoc:
        problems = tuple(sorted(self.problems))
        fatal = any(problem.code in FATAL_CODES for problem in problems)
        return SourceDoc(self.file, None if fatal else self.root, problems, fatal,
                         MappingProxyType(self.values), MappingProxyType(self.keys))

    def report(self, code: str, where: Location, message: str, path: FieldPath = ()) -> None:
        self.problems.append(Problem(self.file, where.line, where.column, "load", code, Severity.ERROR, message, path))
        self.stopped = self.stopped or code in FATAL_CODES

    # ---- events ---------------------------------------------------------

    def _ignore(self, event: yaml.Event) -> None:
        """Stream start and document end carry nothing to check."""

    def _document_start(self, event: yaml.DocumentStartEvent) -> None:
        self.documents += 1
        if self.documents > 1:
            self.report("yaml.multiple-documents", _mark(event.start_mark),
                        "a second YAML document starts here; a spec file holds one: "
                        "move it to a file of its own")

    def _stream_end(self, event: yaml.StreamEndEvent) -> None:
        if self.documents == 0:
            self.report("yaml.empty", FILE_START, f"empty file; {_MAPPING_HINT}")

    def _scalar(self, event: yaml.ScalarEvent) -> None:
        where = _mark(event.start_mark)
        slot = self._start(event, where)
        if slot is None:
            return
        path, record, is_key = slot
        if not self.stack:
            self._root_scalar(event, where)
            return
        if is_key:
            gap = _AFTER_KEY.match(self.text, event.end_mark.index)
            if gap is not None and "\t" in gap.group():
                self.report("yaml.tab", _position(self.text, gap.start() + gap.group().index("\t")), _named(
                    path + (event.value,), "a tab after the key's colon; YAML 1.1 readers (PyYAML, ruamel.yaml, so "
                                           "fmt) refuse the file: write a space"), path + (event.value,))
            if event.value == "<<" and event.implicit[0]:
                self.report("yaml.merge-key", where, _named(
                    path, "a << key merges another mapping in YAML 1.1 (PyYAML, ruamel.yaml) but is a plain key "
                          "in YAML 1.2; write the keys out in full"), path + ("<<",))
        value = self._resolve(event, path + (event.value,) if is_key else path, where)
        self._deliver(value, path, record, is_key, where, event.value)

    def _open(self, event: yaml.CollectionStartEvent, frame_type: type) -> None:
        where = _mark(event.start_mark)
        slot = self._start(event, where)
        if slot is None:
            return
        path, record, is_key = slot
        if not self.stack and frame_type is _SequenceFrame:
            self.report("yaml.not-a-mapping", where, f"the top level is a list; {_MAPPING_HINT}")
        elif len(self.stack) == MAX_DEPTH:
            self.report("yaml.too-deep", where, _TOO_DEEP, path)
        else:
            self.stack.append(frame_type(path, record, where, is_key))

    def _close(self, event: yaml.CollectionEndEvent) -> None:
        frame = self.stack.pop()
        self._deliver(frame.container, frame.path, frame.record, frame.is_key, frame.where, None)

    def _alias(self, event: yaml.AliasEvent) -> None:
        path = self.stack[-1].slot()[0] if self.stack else ()
        self.report("yaml.alias", _mark(event.start_mark), _named(
            path, f"the alias *{event.anchor} is not allowed; write the value out in full"), path)

    def _syntax(self, error: yaml.MarkedYAMLError) -> None:
        mark = error.problem_mark or error.context_mark
        where = _mark(mark) if mark is not None else FILE_START
        context = ""
        if error.context and error.context_mark is not None:
            start = _mark(error.context_mark)
            context = f" ({error.context} at line {start.line}, column {start.column})"
        problem = error.problem or error.context or "invalid YAML"
        if problem == _LIBYAML_TOO_DEEP:
            self.report("yaml.too-deep", where, _TOO_DEEP)
        else:
            self.report("yaml.syntax", where, f"{problem}{context}; {_syntax_hint(problem)}")

    # ---- nodes ----------------------------------------------------------

    def _start(self, event: yaml.NodeEvent, where: Location) -> Optional[tuple[FieldPath, bool, bool]]:
        """Check a node's anchor and tag; return its slot, or ``None`` when refused."""
        path, record, is_key = self.stack[-1].slot() if self.stack else ((), True, False)

        if event.anchor is not None:
            self.report("yaml.anchor", where, _named(
                path, f"the anchor &{event.anchor} is not allowed (anchors and aliases can expand "
                      "without bound); write the value out in full"), path)
            return None
        if event.tag is not None:
            self.report("yaml.tag", where, _named(
                path, f"the tag {_short_tag(event.tag)} is not allowed; remove it and write the plain value"),
                path)
        return path, record, is_key

    def _resolve(self, event: yaml.ScalarEvent, path: FieldPath, where: Location) -> Any:
        """The value of a scalar: quoted, block and tagged scalars are text; plain ones are resolved."""
        if event.tag is not None or not event.implicit[0]:
            return event.value
        value, refusal = _read_plain(event.value)
        if refusal is not None:
            code, message = refusal
            self.report(code, where, _named(path, message), path)
        return value

    def _root_scalar(self, event: yaml.ScalarEvent, where: Location) -> None:
        value = _read_plain(event.value)[0] if event.tag is None and event.implicit[0] else event.value
        if value is None:
            self.report("yaml.empty", FILE_START, f"empty file; {_MAPPING_HINT}")
        else:
            self.report("yaml.not-a-mapping", where, f"the top level is {_KIND[type(value)]}; {_MAPPING_HINT}")

    def _deliver(self, value: Any, path: FieldPath, record: bool, is_key: bool,
                 where: Location, text: Optional[str]) -> None:
        """Hand a finished node to its parent: as a key, as a value, or as the document."""
        if record:
            self.values[path] = where
        if not self.stack:
            self.root = value
        elif is_key:
            self._take_key(self.stack[-1], value, text, where)
        else:
            self.stack[-1].attach(value)

    def _take_key(self, frame: _MappingFrame, key: Any, text: Optional[str], where: Location) -> None:
        if type(key) is not str:
            subject = "the key" if text is None else f"the key {text or '(empty)'}"
            self.report("yaml.key-type", where, _named(
                frame.path, f"{subject} is {_KIND[type(key)]}, not a field name; write a name "
                            "(quote it to keep it as written)"), frame.path)
            frame.expect_value(frame.path if text is None else frame.path + (text,), None)
            return
        path = frame.path + (key,)
        first = frame.first_lines.get(key)
        if first is not None:
            self.report("yaml.duplicate-key", where, _named(
                path, f"already stated on line {first}; keep one of the two"), path)
            frame.expect_value(path, None)
            return
        frame.first_lines[key] = where.line
        if frame.record:
            self.keys[path] = where
        frame.expect_value(path, key)


def _refused(file: str, code: str, where: Location, message: str) -> SourceDoc:
    """A document refused before parsing: one fatal problem, no data."""
    problem = Problem(file, where.line, where.column, "load", code, Severity.ERROR, message)
    return SourceDoc(file, None, (problem,), True)


def load_bytes(raw: bytes, file: str) -> SourceDoc:
    """Read one spec from its bytes, strictly; never raises for bad input.

    Args:
        raw: The file's content. A UTF-8 byte order mark is allowed and skipped.
        file: The display name the problems carry.

    Returns:
        A :class:`SourceDoc`. Every refusal is one of its problems, coded as in
        :data:`CODES`; the refusals of :data:`FATAL_CODES` leave ``data`` None.
    """
    if len(raw) > MAX_BYTES:
        return _refused(file, "yaml.too-large", FILE_START,
                        f"the file is larger than 1 MiB ({MAX_BYTES} bytes); a spec is a few "
                        "kilobytes: check that this is the right file")
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        head = raw[:error.start].decode("utf-8")
        return _refused(file, "yaml.encoding", _position(head, len(head)),
                        f"byte 0x{raw[error.start]:02x} is not UTF-8; save the file as UTF-8")
    bad = _NOT_ALLOWED.search(text)
    if bad is not None and bad.group() in _YAML11_LINE_BREAKS:
        return _refused(file, "yaml.control-character", _position(text, bad.start()),
                        f"the character U+{ord(bad.group()):04X} is a line break in YAML 1.1 but not in YAML 1.2 "
                        "or an editor; write a plain newline, or an escape inside double quotes (\\N, \\L, \\P)")
    if bad is not None:
        return _refused(file, "yaml.control-character", _position(text, bad.start()),
                        f"the character U+{ord(bad.group()):04X} is not allowed in a spec file; delete it, "
                        "or write it as an escape inside double quotes")
    builder = _Builder(file)
    builder.run(text)
    # Its handlers are its own bound methods, a cycle that would keep it (and every location it recorded) for the
    # cyclic collector: regen pauses that collector, and its first collection after a run walked them all (0.23 s
    # of a regen of 2,000 specs). Broken here, reference counting frees them with the document.
    builder.handlers.clear()
    return builder.document()


class UnreadableFile(OSError):
    """A path that cannot be read as a file: why, in words for a message (code ``yaml.unreadable``)."""


def read_bounded(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file *path*, at most *limit* + 1 of them (so a caller sees it is too large).

    Every command that reads a file a user names or keeps goes through this,
    so none can block on a FIFO or read a device without end.

    Raises:
        UnreadableFile: If *path* is not a regular file (a FIFO would block the
            read forever, a device would mislead it) or cannot be opened or read.
    """
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISDIR(mode):
            try:
                with os.scandir(path):
                    pass
            except OSError as error:
                raise UnreadableFile(f"a folder that cannot be read ({error.strerror or error}), so the specs in it "
                                     "are not checked; give it read permission, or exclude it") from None
        if not stat.S_ISREG(mode):
            raise UnreadableFile("not a regular file (a FIFO, device or folder would block or mislead the read)")
        with open(path, "rb") as handle:
            return handle.read(limit + 1)
    except UnreadableFile:
        raise
    except OSError as error:
        raise UnreadableFile(f"cannot read the file ({error.strerror or error}); check the path and its "
                             "permissions") from None


def load_path(path: Path, file: Optional[str] = None) -> SourceDoc:
    """Read one spec file, strictly; never raises for bad input.

    Reads at most :data:`MAX_BYTES` + 1 bytes, so a huge file costs no more
    than the cap. A path that is not a regular file (a FIFO would block the
    read forever), a dangling symlink, or a file that cannot be opened or read
    is a ``yaml.unreadable`` problem.

    Args:
        path: The file to read.
        file: The display name the problems carry; ``str(path)`` by default.
    """
    name = str(path) if file is None else file
    try:
        raw = read_bounded(path)
    except UnreadableFile as error:
        why = str(error)
        return _refused(name, "yaml.unreadable", FILE_START, why + ("; a spec is a file" if why.startswith("not a")
                                                                   else ""))
    return load_bytes(raw, name)


# ---- writing -------------------------------------------------------------

_STR_TAG = "tag:yaml.org,2002:str"
_REFUSED_TAG = "tag:modelspec,2024:refused"  # forces quotes: no reader takes it as plain
_TAGS = {type(None): "tag:yaml.org,2002:null", bool: "tag:yaml.org,2002:bool",
         int: "tag:yaml.org,2002:int", float: "tag:yaml.org,2002:float", str: _STR_TAG}

_SCALARS = (str, bool, int, type(None))

# No folding: every scalar stays on its line (libyaml takes an int width).
_WIDTH = 1 << 30


@functools.lru_cache(maxsize=8192)
def _plain_tag(text: str, yaml11_tag: str) -> str:
    """The tag a plain *text* must carry to be written unquoted.

    *text* may go plain only when :func:`load_bytes` reads it back as the same
    value without a refusal and, if it is text, YAML 1.1 (*yaml11_tag*, from
    PyYAML's resolver) reads text too; otherwise the dumper quotes it.
    """
    value, refusal = _read_plain(text)
    if refusal is not None:
        return _REFUSED_TAG
    tag = _TAGS[type(value)]
    return _REFUSED_TAG if tag == _STR_TAG and yaml11_tag != _STR_TAG else tag


# Line breaks in YAML 1.1 only: 1.2 reads them as ordinary characters, so
# inside a (folded) quoted scalar the two versions would read different text.
_YAML11_BREAKS = re.compile("[\x85\u2028\u2029]")


def _represent_str(dumper: yaml.BaseDumper, text: str) -> yaml.ScalarNode:
    """Text, double-quoted (so escaped as ``\\N``, ``\\L``, ``\\P``) when it holds a YAML 1.1 break."""
    return dumper.represent_scalar(_STR_TAG, text, style='"' if _YAML11_BREAKS.search(text) else None)


def _canonical_dumper(base: type) -> type:
    """A dumper on *base* that writes plain only what both YAML versions read alike."""

    class CanonicalDumper(base):  # type: ignore[misc, valid-type]
        def resolve(self, kind: type, value: Any, implicit: Tuple[bool, bool]) -> str:
            yaml11_tag = super().resolve(kind, value, implicit)
            if kind is yaml.ScalarNode and implicit[0]:
                return _plain_tag(value, yaml11_tag)
            return yaml11_tag

    CanonicalDumper.add_representer(str, _represent_str)
    return CanonicalDumper


_DUMPER = _canonical_dumper(yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper)


def _plain_data(value: Any, path: FieldPath) -> Any:
    """Copy *value* as dicts, lists and scalars, refusing what :func:`load_bytes` would refuse."""
    where = dotted(path) or "the top level"
    if isinstance(value, Mapping):
        if len(path) >= MAX_DEPTH:
            raise ValueError(f"{where} nests deeper than {MAX_DEPTH} levels")
        bad = [key for key in value if type(key) is not str]
        if bad:
            raise ValueError(f"{where}: key {bad[0]!r} is not text; a spec's keys are field names")
        return {key: _plain_data(item, path + (key,)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if len(path) >= MAX_DEPTH:
            raise ValueError(f"{where} nests deeper than {MAX_DEPTH} levels")
        return [_plain_data(item, path + (index,)) for index, item in enumerate(value)]
    if type(value) is float and not math.isfinite(value):
        raise ValueError(f"{where} is {value!r}; a spec holds finite numbers only")
    if type(value) is int and abs(value) >= NUMBER_LIMIT:
        raise ValueError(f"{where} has more than {MAX_NUMBER_CHARS} digits")
    if type(value) is float or type(value) in _SCALARS:
        return value
    raise TypeError(f"{where} is a {type(value).__name__}; a spec holds dicts, lists, str, int, float, "
                    "bool and None")


def _comment_lines(header: str) -> str:
    lines = header.splitlines()
    bad = [line for line in lines if line and not line.startswith("#")]
    if bad:
        raise ValueError(f"header line {bad[0]!r} is not a comment; start it with #")
    return "".join(line + "\n" for line in lines)


def dump(data: Mapping, header: str = "") -> str:
    """The canonical YAML text of a spec.

    Block style, keys in *data*'s insertion order, no aliases, no line
    folding, UTF-8 text (not escapes), ending in one newline. A string either
    YAML version would read as something else (``"yes"``, ``"010"``,
    ``"7e3"``, ``"2024-01-01"``) is quoted, and floats are written so both
    read the same float, so ``load_bytes(dump(x).encode(), f).data == x`` for
    JSON-like *x* (tuples come back as lists).

    Args:
        data: The spec: a mapping of str keys to dicts, lists (or tuples),
            str, int, finite float, bool and None.
        header: Comment lines written first; each non-empty line starts with ``#``.

    Raises:
        TypeError: If *data* is not a mapping, or holds another type.
        ValueError: If it holds a value :func:`load_bytes` refuses (a key that
            is not text, a NaN or infinity, an int of over 3999 digits, nesting
            deeper than :data:`MAX_DEPTH`), or a header line is not a comment.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"a spec is a mapping, not a {type(data).__name__}")
    body = yaml.dump(_plain_data(data, ()), Dumper=_DUMPER, default_flow_style=False,
                     sort_keys=False, allow_unicode=True, width=_WIDTH)
    return _comment_lines(header) + body



# Text that goes plain and comes back as itself: a letter, then letters, digits, ``.``, ``_``, ``-``
# (model names, dtypes, kinds, arch names). Whether it is refused or read as another type is asked of
# the readers below; no character here starts a YAML indicator or a comment.
_SIMPLE_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")
_YAML11 = yaml.resolver.Resolver()


@functools.lru_cache(maxsize=16384)
def _scalar_survives(kind: type, value: Any) -> bool:
    """Whether :func:`dump` writes the scalar *value* (of exact type *kind*, one of str, int, bool, None and
    float, which comes as its ``repr``) so :func:`load_bytes` reads it back as the same value of the same type.

    Ints within :data:`MAX_NUMBER_CHARS`, booleans and ``None`` always do; so
    does text of :data:`_SIMPLE_TEXT` that both YAML versions read as text.
    Anything else (floats, other text) is dumped and read back once, as the
    value of a one-key mapping, and the answer cached.
    """
    if kind is bool or kind is type(None):
        return True
    if kind is int:
        return abs(value) < NUMBER_LIMIT
    if kind is str and _SIMPLE_TEXT.fullmatch(value) and _read_plain(value) == (value, None) \
            and _YAML11.resolve(yaml.ScalarNode, value, (True, False)) == _STR_TAG:
        return True
    if kind is float:
        value = float(value)
    try:
        back = load_bytes(dump({"k": value}).encode("utf-8"), "<round-trip>")
    except (TypeError, ValueError):
        return False
    if back.problems or back.data is None or list(back.data) != ["k"]:
        return False
    return type(back.data["k"]) is kind and repr(back.data["k"]) == repr(value)  # -0.0 is not 0.0


def survives_dump(data: Any, depth: int = 1) -> bool:
    """Whether ``load_bytes(dump(data).encode()).data`` is *data* itself, the same values of the same types.

    Decided without writing the document: a block-style dump writes each
    scalar on its own line, as it would write it alone, so the document comes
    back exactly when every key and scalar does (:func:`_scalar_survives`,
    cached per value). Only dicts with text keys, lists and scalars are
    answered; anything else (a tuple, another mapping type, nesting past
    :data:`MAX_DEPTH`) is ``False``, for the caller to dump and read back.
    ``True`` is a guarantee; ``False`` only means "not known cheaply".
    """
    kind = type(data)
    if kind is dict:
        return depth <= MAX_DEPTH and all(type(key) is str and _scalar_survives(str, key)
                                          and survives_dump(item, depth + 1) for key, item in data.items())
    if kind is list:
        return depth <= MAX_DEPTH and all(survives_dump(item, depth + 1) for item in data)
    if kind is float:  # cached by spelling: -0.0 == 0.0 would share an answer
        return _scalar_survives(float, repr(data))
    return kind in _SCALARS and _scalar_survives(kind, data)

# ---- comments ------------------------------------------------------------

def comment_locations(text: str) -> Tuple[Location, ...]:
    """Where each comment of *text* starts (its ``#``), in order.

    A ``#`` starts a comment exactly when the scanner puts it in no token: a
    ``#`` inside a quoted or block scalar, or inside a plain one (``a#b``), is
    part of that scalar's token, and everything the scanner skips between
    tokens is white space, line breaks and comments (YAML 1.2.2 section 6.6).
    ``fmt`` uses this to refuse a comment it could not keep.

    Args:
        text: A document :func:`load_bytes` read without a fatal problem.

    Raises:
        ValueError: If the scanner cannot read *text*.
    """
    covered = []
    try:
        for token in yaml.scan(text, Loader=_LOADER):
            if token.end_mark.index > token.start_mark.index:
                covered.append((token.start_mark.index, token.end_mark.index))
    except yaml.MarkedYAMLError as error:
        raise ValueError(f"cannot scan the YAML: {error}") from None
    found, spans, index = [], iter(covered), 0
    span = next(spans, None)
    while True:
        index = text.find("#", index)
        if index < 0:
            return tuple(found)
        while span is not None and span[1] <= index:
            span = next(spans, None)
        if span is None or index < span[0]:
            found.append(_position(text, index))
        index += 1
