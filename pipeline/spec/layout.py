"""The canonical layout of a spec file, so that a hand-written and an imported file look alike.

A spec file is a header block of comments, the document start ``---``, then
the spec in block style with its keys in the schema's order
(:data:`~pipeline.spec.model.MODEL_KEYS_ORDERED`, a nested record's keys in its
own field order), indented by two (a list's dash too), so that yamllint's
default configuration passes it. Formatting changes layout only, never a
value: the mapping is reordered, not parsed into the model IR, so a ``null``,
a ``torch.`` prefix or an unknown key stays as written for ``check`` to
report; a key no record defines keeps its place after the known ones; a
quoted string is unquoted only when both YAML versions read it plain as the
same text, and a number keeps its spelling.

Rewriting goes through ruamel.yaml's round-trip mode (the standard
comment-keeping YAML library); the strict loader
(:func:`pipeline.spec.yaml_source.load_bytes`) still decides whether a file is
read at all, and a file it refuses is reported and left alone. Every comment
is kept at its key: a comment line belongs to the key or list item below it
and moves with it, a comment at a line's end stays at the end of that line,
and comments after the last key stay last. ruamel attaches a comment line to
the entry *above* it, which a reordering would carry to the wrong key; so
the comments are read here from the strict loader's locations, taken off the
tree, and put back at their owners after the reordering. The output is
checked before it is used: it must load strictly to the same data and hold
the same comments, else the file is refused (``fmt.unstable``) rather than
lose anything.

The header block (the leading comment and blank lines) is where a spec's
provenance lives. Its first line is the ``# yaml-language-server:
$schema=...`` line that points an editor at the schema; it is added, or
corrected (only its ``$schema=`` value: any other text on that line stays),
when the repository has ``schemas/model-spec.schema.json``. A
comment line longer than :data:`MAX_LINE` is wrapped at its spaces
(yamllint's ``line-length``); a line
with no space to break at (a URL) stays whole, as yamllint allows.
"""

from __future__ import annotations

import copy
import difflib
import io
import os
import re
from dataclasses import dataclass, fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedBase
from ruamel.yaml.error import CommentMark, MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import ScalarString
from ruamel.yaml.tokens import CommentToken

from pipeline.spec.model import MODEL_KEYS_ORDERED, KindActivations, OpCounts, VisionSpec
from pipeline.spec.problems import FieldPath, Problem, Severity
from pipeline.spec.yaml_source import (MAX_BYTES, SourceDoc, comment_locations, dump, load_bytes, load_path,
                                        read_bounded)

CODES: Dict[str, str] = {
    "fmt.unstable": "fmt could not rewrite the file without changing a value or losing a comment, so it left the "
                    "file alone; a modelspec bug, please report it with the file.",
    "fmt.unreadable": "ruamel.yaml, which fmt rewrites through, refuses text the strict reader takes (a tab inside a "
                      "plain value, as YAML 1.1 readers do); fmt leaves the file alone and says where.",
}

#: How the schema line of a spec's header starts.
SCHEMA_PREFIX = "# yaml-language-server: $schema="

_GROUP_KEYS = ("kind", "count", "mtp")
_OPS = OpCounts.names()
_ACTIVATION_KEYS = tuple(spec_field.name for spec_field in fields(KindActivations))

# The key order of each record, by the path pattern of the mapping ("*" is any key or index).
_ORDERS: Tuple[Tuple[Tuple[str, ...], Tuple[str, ...]], ...] = (
    ((), MODEL_KEYS_ORDERED),
    (("vision",), VisionSpec.keys()),
    (("layers", "*"), _GROUP_KEYS),
    (("vision", "layers", "*"), _GROUP_KEYS),
    (("ops", "*"), _OPS),
    (("activations", "*"), _ACTIVATION_KEYS),
    (("activations", "*", "ops"), _OPS + ("other",)),
    (("activations", "*", "ops_tp"), _OPS + ("other",)),
    (("output_activations",), _ACTIVATION_KEYS),
    (("output_activations", "ops"), _OPS + ("other",)),
    (("output_activations", "ops_tp"), _OPS + ("other",)),
)


def _order(path: FieldPath) -> Optional[Tuple[str, ...]]:
    """The key order of the record at *path*, or ``None`` for a mapping with no fixed order."""
    for pattern, order in _ORDERS:
        if len(pattern) == len(path) and all(p in ("*", part) for p, part in zip(pattern, path)):
            return order
    return None


def canonical_data(value: Any, path: FieldPath = ()) -> Any:
    """Return *value* with every record's keys in their canonical order; values unchanged.

    A key the record's order does not name follows the named ones, in the
    order written; a mapping with no fixed order (``ops`` by kind) keeps its
    order.
    """
    if isinstance(value, Mapping):
        order = _order(path) or ()
        keys = [key for key in order if key in value] + [key for key in value if key not in order]
        return {key: canonical_data(value[key], path + (key,)) for key in keys}
    if isinstance(value, list):
        return [canonical_data(item, path + (index,)) for index, item in enumerate(value)]
    return value


def schema_line(repo: Any, path: Any) -> Optional[str]:
    """The ``yaml-language-server`` line for the spec file *path* of *repo*, ``None`` without ``schemas/``.

    Args:
        repo: A :class:`~pipeline.check.repo.SpecRepo`.
        path: The spec file's path.
    """
    schema = repo.root / "schemas" / "model-spec.schema.json"
    if not schema.is_file():
        return None
    relative = os.path.relpath(schema.resolve(), path.resolve().parent)
    return SCHEMA_PREFIX + relative.replace(os.sep, "/")


def split_header(text: str) -> Tuple[List[str], int]:
    """The header block's lines (trailing blank ones dropped) and how many lines it spans.

    The header block is the run of lines, from the first, that are blank or
    start with ``#``; a line of spaces counts as blank and is kept empty.
    """
    lines = text.splitlines()
    count = 0
    while count < len(lines) and (not lines[count].strip() or lines[count].startswith("#")):
        count += 1
    header = [line if line.strip() else "" for line in lines[:count]]
    while header and not header[-1]:
        header.pop()
    return header, count


def _with_schema(header: List[str], schema: Optional[str]) -> List[str]:
    """*header* with *schema* as its first line, losing nothing else it says.

    A first line that is a ``# yaml-language-server: $schema=`` line gets only
    its ``$schema=`` value replaced, so any other text on it stays; any other
    header (one whose first line sets something else for the language server
    included) gets the schema line above it.
    """
    if schema is None:
        return header
    if not header or not header[0].startswith(SCHEMA_PREFIX):
        return [schema] + header
    value = schema[len(SCHEMA_PREFIX) - len("$schema="):]
    return [re.sub(r"\$schema=\S*", lambda _: value, header[0], count=1)] + header[1:]


#: The longest line fmt writes when it can break one (yamllint's default ``line-length``).
MAX_LINE = 80

#: How a wrapped comment line's further lines start: one space after the ``#``, as yamllint's
#: ``allow-non-breakable-words`` wants of a line holding one long word (a URL, a path).
CONTINUATION = "# "

#: The document start every formatted file states (yamllint's default ``document-start``).
DOCUMENT_START = "---"


@dataclass(frozen=True)
class Formatted:
    """One file's formatting.

    Attributes:
        text: The canonical text, or ``None`` when the file is refused.
        changed: Whether *text* differs from the file's.
        problems: Why the file is refused (its load problems, or a layout fmt could not make safely).
    """

    text: Optional[str]
    changed: bool
    problems: Tuple[Problem, ...] = ()


def wrap_comment(line: str) -> List[str]:
    """*line*, a comment, as lines of at most :data:`MAX_LINE` characters where it has spaces to break at.

    The schema line, a line that fits and a line of one word are kept whole;
    the first line keeps its own prefix (``#``, its spaces), further lines
    start with :data:`CONTINUATION`, so ``"# source: " + 80 characters``
    becomes two lines.
    """
    if len(line) <= MAX_LINE or line.startswith(SCHEMA_PREFIX) or " " not in line.strip():
        return [line]
    indent = line[:len(line) - len(line.lstrip())]
    text = line.strip()
    first_prefix = text[:len(text) - len(text.lstrip("#").lstrip())]
    words = text[len(first_prefix):].split()
    if len(words) < 2:
        return [line]
    out: List[str] = []
    current = indent + first_prefix
    fresh = True
    for word in words:
        if not fresh and len(current) + 1 + len(word) > MAX_LINE:
            out.append(current)
            current = indent + CONTINUATION + word
            continue
        current = current + ("" if fresh else " ") + word
        fresh = False
    out.append(current)
    return out


@dataclass(frozen=True)
class _Comments:
    """A file's comments below the header, each given to its owner.

    Attributes:
        before: Comment (and blank) lines above an entry, by the entry's field path; stripped of indentation.
        eol: The comment at the end of an entry's line, by its path, from its ``#``.
        trailing: Comment lines after the last entry.
        texts: Every comment's text, in order (to check that none was lost).
    """

    before: Dict[FieldPath, List[str]]
    eol: Dict[FieldPath, str]
    trailing: List[str]
    texts: Tuple[str, ...]


def _owners(doc: Any) -> List[Tuple[int, int, FieldPath]]:
    """Each entry as ``(line, column, path)``: a mapping key where its key is, a list item where it starts."""
    found = []
    for path, where in doc.value_locations.items():
        if not path:
            continue
        at = doc.key_location(path) if isinstance(path[-1], str) else None
        at = at or where
        found.append((at.line, at.column, path))
    return sorted(found, key=lambda item: (item[0], len(item[2])))


def _read_comments(text: str, doc: Any, header_lines: int) -> _Comments:
    """Give each comment below the header to its owner (see the module's docstring)."""
    lines = text.splitlines()
    owners = _owners(doc)
    before: Dict[FieldPath, List[str]] = {}
    eol: Dict[FieldPath, str] = {}
    trailing: List[str] = []
    texts = []
    for where in comment_locations(text):
        if where.line <= header_lines:
            continue
        line = lines[where.line - 1]
        comment = line[where.column - 1:].rstrip()
        texts.append(comment)
        if line[:where.column - 1].strip():
            on_line = [path for line_no, _, path in owners if line_no == where.line]
            if on_line:
                eol[max(on_line, key=len)] = comment
                continue
            # a comment after a key whose value starts on a later line, or after a `-`: the entry below owns it
        below = [(line_no, path) for line_no, _, path in owners if line_no > where.line]
        if not below:
            trailing.append(comment)
            continue
        _owner_line, owner = min(below, key=lambda item: (item[0], len(item[1])))
        lines_before = before.setdefault(owner, [])
        if (not lines_before or lines_before[-1] != "") and _blank_above(lines, where.line, header_lines):
            lines_before.append("")  # a blank line above a comment stays (one, however many there were)
        lines_before.append(comment)
    return _Comments(before, eol, trailing, tuple(texts))


def _blank_above(lines: Sequence[str], line: int, header_lines: int) -> bool:
    """Whether the line above 1-based *line* is blank (and below the header)."""
    return line - 2 >= header_lines and not lines[line - 2].strip()


def _strip_comments(node: Any) -> None:
    """Take every comment ruamel attached off *node* and its children, and put every container in block style."""
    if isinstance(node, CommentedBase):
        node.ca.items.clear()
        node.ca.comment = None
        node.ca.end = None
        node.fa.set_block_style()
    if isinstance(node, dict):
        for value in node.values():
            _strip_comments(value)
    elif isinstance(node, list):
        for value in node:
            _strip_comments(value)


def _reorder(node: Any, path: FieldPath = ()) -> None:
    """Put every record's keys of the ruamel tree *node* in their canonical order (:func:`canonical_data`)."""
    if isinstance(node, dict):
        order = _order(path) or ()
        for key in [key for key in order if key in node] + [key for key in list(node) if key not in order]:
            node.move_to_end(key)
        for key, value in node.items():
            _reorder(value, path + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _reorder(value, path + (index,))


def _unquote(node: Any) -> Any:
    """*node* with its quoted strings, keys and values, made plain where both YAML versions read them plain as
    the same text; other strings keep the quoting written. Run on a tree without comments (each mapping is
    rebuilt: ruamel keeps a replaced string's quoting style)."""
    if isinstance(node, dict):
        items = [(_plain(key), _unquote(value)) for key, value in node.items()]
        node.clear()
        for key, value in items:
            node[key] = value
    elif isinstance(node, list):
        items = [_unquote(value) for value in node]
        node.clear()
        node.extend(items)
    else:
        return _plain(node)
    return node


def _plain(value: Any) -> Any:
    """A quoted string as plain text when it may go plain (the canonical dumper writes it so), else *value*."""
    if isinstance(value, ScalarString) and dump({"k": str(value)}) == f"k: {value}\n":
        return str(value)
    return value


def _node_at(tree: Any, path: FieldPath) -> Any:
    """The node of the ruamel tree *tree* at *path*."""
    for part in path:
        tree = tree[part]
    return tree


def _indent(path: FieldPath) -> int:
    """The column (0-based) the entry at *path* starts at in the output: two per level (a list's dash two in
    from its key, a list item's keys two in from its dash)."""
    return 2 * (len(path) - 1)


def _attach(tree: Any, comments: _Comments) -> None:
    """Put the comments back on the reordered ruamel tree at their owners."""
    def put_before(container: Any, key: Any, lines: List[str], column: int) -> None:
        slot = container.ca.items.setdefault(key, [None, [], None, None])
        if slot[1] is None:
            slot[1] = []
        for line in lines:
            slot[1].extend(CommentToken(part + "\n" if part else "\n", CommentMark(column))
                           for part in (wrap_comment(line) if line else [""]))

    for path, lines in sorted(comments.before.items(), key=lambda item: len(item[0])):
        container = _node_at(tree, path[:-1])
        target, key = container, path[-1]
        # The first key of a list item's mapping: the comment goes above the item's dash.
        if len(path) >= 2 and isinstance(path[-2], int) and next(iter(container), None) == key:
            target, key = _node_at(tree, path[:-2]), path[-2]
            path = path[:-1]
        put_before(target, key, lines, _indent(path))
    for path, comment in comments.eol.items():
        container = _node_at(tree, path[:-1])
        slot = container.ca.items.setdefault(path[-1], [None, None, None, None])
        index = 0 if isinstance(container, list) else 2
        slot[index] = CommentToken(" " + comment + "\n", CommentMark(0))


def _ruamel() -> Any:
    """A ruamel.yaml round-trip reader and writer set to the canonical layout."""
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 1 << 30  # never fold a scalar
    yaml.preserve_quotes = True
    yaml.representer.add_representer(type(None), lambda self, _: self.represent_scalar("tag:yaml.org,2002:null",
                                                                                      "null"))
    return yaml


#: A fix's value meaning "remove the key" (``roundtrip.null``: remove the line).
REMOVE = object()

#: A change ``check --fix`` makes: the field's path and its new value, or :data:`REMOVE`.
Edit = Tuple[FieldPath, Any]


def format_text(text: str, file: str, schema: Optional[str] = None, edits: Sequence[Edit] = ()) -> Formatted:
    """Format one spec file's text, with *edits* applied (``check --fix``; formatting alone has none).

    Args:
        text: The file's text.
        file: Its display name, for problems.
        schema: The ``yaml-language-server`` line its header should start
            with, or ``None`` to leave the header's lines as they are.
        edits: Values to set or keys to remove; a removed key's comments go
            to the entry after it, so none is lost.

    Returns:
        The canonical text, or the problems for which the file is left alone:
        every error the strict loader reports, or ``fmt.unstable`` when the
        rewrite would not keep the data or the comments.
    """
    doc = load_bytes(text.encode("utf-8"), file)
    errors = tuple(p for p in doc.problems if p.severity is Severity.ERROR)
    if errors or doc.data is None:
        return Formatted(None, False, errors)
    header, header_lines = split_header(text)
    comments = _read_comments(text, doc, header_lines)
    yaml = _ruamel()
    tree = _ruamel_tree(yaml, text, file)
    if isinstance(tree, Problem):
        return Formatted(None, False, (tree,))
    expected = _apply_edits(tree, doc, comments, edits)
    formatted = _laid_out(yaml, tree, comments, header, schema)
    if not _keeps_everything(formatted, file, expected, comments):
        return Formatted(None, False, (Problem(file, 1, 1, "fmt", "fmt.unstable", Severity.ERROR,
                                               "fmt cannot rewrite this file without changing a value or losing a "
                                               "comment; the file is left as it is (please report it)"),))
    return Formatted(formatted, formatted != text)


def _ruamel_tree(yaml: Any, text: str, file: str) -> Any:
    """ruamel's round-trip tree of *text* without its comments, or the ``fmt.unreadable`` problem it raises."""
    try:
        tree = yaml.load(text)  # ok: ruamel round-trip (a SafeConstructor), on text the strict loader accepted
    except YAMLError as error:  # ruamel reads YAML 1.1 here and there: what it refuses is said, never raised
        mark = error.problem_mark if isinstance(error, MarkedYAMLError) else None
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = (getattr(error, "problem", None) or str(error)).replace("\t", "\\t")
        return Problem(file, line, column, "fmt", "fmt.unreadable", Severity.ERROR,
                       f"ruamel.yaml, which fmt rewrites through, refuses this ({problem}); "
                       "the file is left as it is: write a space for a tab in a plain value, or quote the value")
    _strip_comments(tree)
    return tree


def _apply_edits(tree: Any, doc: SourceDoc, comments: _Comments, edits: Sequence[Edit]) -> Any:
    """Apply *edits* to *tree* and to a copy of the loaded data; the copy (what the output must load as) is returned."""
    expected = copy.deepcopy(doc.data)
    for path, value in edits:
        _edit(tree, path, value)
        _edit(expected, path, value)
        if value is REMOVE:
            _hand_on(comments, path, _owners(doc))
    return expected


def _laid_out(yaml: Any, tree: Any, comments: _Comments, header: Sequence[str], schema: Optional[str]) -> str:
    """The canonical text of *tree*: the header, the document start, the ordered body and the trailing comments."""
    tree = _unquote(tree)
    _reorder(tree)
    _attach(tree, comments)
    body = io.StringIO()
    yaml.dump(tree, body)
    header = [part for line in _with_schema(header, schema) for part in (wrap_comment(line) if line else [""])]
    trailing = [part for line in comments.trailing for part in wrap_comment(line)]
    return "".join(line + "\n" for line in [*header, DOCUMENT_START]) + body.getvalue() \
        + "".join(line + "\n" for line in trailing)


def _keeps_everything(formatted: str, file: str, expected: Any, comments: _Comments) -> bool:
    """Whether *formatted* loads as *expected*, without errors, and keeps every comment's text."""
    back = load_bytes(formatted.encode("utf-8"), file)
    lines = formatted.splitlines()
    kept = [lines[where.line - 1][where.column - 1:].rstrip() for where in comment_locations(formatted)]
    if back.data != expected or any(p.severity is Severity.ERROR for p in back.problems):
        return False
    return _same_comments(comments.texts, kept)


def _edit(tree: Any, path: FieldPath, value: Any) -> None:
    """Set the value at *path* of *tree* (a ruamel tree or plain data), or remove its key for :data:`REMOVE`."""
    container = _node_at(tree, path[:-1])
    if value is REMOVE:
        del container[path[-1]]
    else:
        container[path[-1]] = value


def _hand_on(comments: _Comments, removed: FieldPath, owners: Sequence[Tuple[int, int, FieldPath]]) -> None:
    """Give the comments of the entry at *removed* (and under it) to the entry after it, or to the trailing ones."""
    inside = [path for _, _, path in owners if path[:len(removed)] == removed]
    moved: List[str] = []
    for path in inside:
        moved += comments.before.pop(path, [])
        if path in comments.eol:
            moved.append(comments.eol.pop(path))
    if not moved:
        return
    last_line = max(line for line, _, path in owners if path in inside)
    after = [path for line, _, path in owners if line > last_line and path[:len(removed)] != removed]
    if after:
        comments.before[after[0]] = moved + comments.before.get(after[0], [])
    else:
        comments.trailing[:0] = moved


def _same_comments(before: Sequence[str], after: Sequence[str]) -> bool:
    """Whether every comment of *before* is in *after* (wrapping apart: compared word by word)."""
    words_after = " ".join(word for comment in after for word in comment.lstrip("#").split())
    return all(" ".join(comment.lstrip("#").split()) in words_after for comment in before)


def unified_diff(old: str, new: str, name: str) -> str:
    """The unified diff from *old* to *new*, as ``git diff`` labels it (``a/NAME``, ``b/NAME``)."""
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        f"a/{name}", f"b/{name}"))


def _short(line: str, width: int = 60) -> str:
    """*line* cut to *width* characters, an ellipsis marking the cut."""
    return line if len(line) <= width else line[:width - 1] + "…"


def change_summary(old: str, new: str) -> str:
    """What formatting changes, in a few words: how many lines, and the first one (``line 3: ...``)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    changed = 0
    first = None
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        changed += max(i2 - i1, j2 - j1)
        if first is None:
            first = (i1 + 1, old_lines[i1] if i1 < i2 else None, new_lines[j1] if j1 < j2 else None)
    if first is None:
        return "the line endings change"
    line, was, now = first
    was, now = (_short(text) if text is not None else None for text in (was, now))
    if was is None:
        what = f"line {line}: {now!r} is added"
    elif now is None:
        what = f"line {line}: {was!r} is removed"
    else:
        what = f"line {line}: {was!r} becomes {now!r}"
    return f"{changed} line{'s' if changed != 1 else ''} change, first {what}"

def format_files(paths: Sequence[Any], display: Any, schema_for: Any) -> List[Tuple[Any, Formatted]]:
    """Format each file of *paths* (reading only).

    Args:
        paths: The spec files.
        display: ``display(path)``: the name problems carry.
        schema_for: ``schema_for(path)``: its schema line, or ``None``.

    Returns:
        ``(path, Formatted)`` per file, in the order given. An unreadable
        file is a ``yaml.unreadable`` problem, as :func:`~pipeline.spec.yaml_source.load_path` reports it.
    """
    results = []
    for path in paths:
        try:
            raw = read_bounded(path)
            if len(raw) > MAX_BYTES:
                raise ValueError("larger than the cap")  # load_path says so, located
            text = raw.decode("utf-8-sig")
        except (OSError, ValueError):
            doc = load_path(path, display(path))
            results.append((path, Formatted(None, False, doc.problems)))
            continue
        results.append((path, format_text(text, display(path), schema_for(path))))
    return results
