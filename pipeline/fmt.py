"""The canonical layout of a spec file, so that a hand-written and an imported file look alike.

A spec file is a header block of comments, then the spec in block style with
its keys in the schema's order (:data:`~pipeline.model.MODEL_KEYS_ORDERED`,
a nested record's keys in its own field order), written by
:func:`pipeline.yaml_source.dump`. Formatting changes layout only, never a
value: the mapping is reordered, not parsed into the model IR, so a
``null``, a ``torch.`` prefix or an unknown key stays as written for
``check`` to report; a key no record defines keeps its place after the
known ones.

The header block (the leading comment and blank lines) is kept verbatim:
that is where a spec's provenance lives, so it survives formatting. Its
first line is the ``# yaml-language-server: $schema=...`` line that points
an editor at the schema; it is added, or corrected (only its ``$schema=``
value: any other text on that line stays), when the repository has
``schemas/model-spec.schema.json``. PyYAML cannot keep a comment anywhere
else, so a file with a comment below the header block is refused (not
rewritten), at the comment's line and column, with the fix: move the
comment into the header. A file that does not load strictly is reported and
left alone. Nothing the user wrote is ever lost.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.model import MODEL_KEYS_ORDERED, KindActivations, OpCounts, VisionSpec
from pipeline.problems import FieldPath, Problem, Severity

CODES: Dict[str, str] = {
    "fmt.comment": "A comment below the header block, which fmt cannot keep in place; move it into the header.",
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
        repo: A :class:`~pipeline.repo.SpecRepo`.
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

    A first line that is a ``# yaml-language-server:`` line gets only its
    ``$schema=`` value replaced (or the schema added to it), so any other
    setting or text on it stays; any other header gets the schema line above it.
    """
    if schema is None:
        return header
    if not header or not header[0].startswith(SCHEMA_PREFIX.split("$")[0]):
        return [schema] + header
    value = schema[len(SCHEMA_PREFIX) - len("$schema="):]
    first = header[0]
    if re.search(r"\$schema=\S*", first):
        first = re.sub(r"\$schema=\S*", lambda _: value, first, count=1)
    else:
        first = first.rstrip() + " " + value
    return [first] + header[1:]


def _comment_fix(header: Sequence[str], header_lines: int) -> str:
    """Where a comment below the header should go: into the header the file has, or into one it starts."""
    if any(line.startswith("#") for line in header):
        return f"move it into the header block (the comment lines above line {header_lines + 1})"
    return "move it into a header block: comment lines at the top of the file"


@dataclass(frozen=True)
class Formatted:
    """One file's formatting.

    Attributes:
        text: The canonical text, or ``None`` when the file is refused.
        changed: Whether *text* differs from the file's.
        problems: Why the file is refused (its load problems, or comments below the header).
    """

    text: Optional[str]
    changed: bool
    problems: Tuple[Problem, ...] = ()


def format_text(text: str, file: str, schema: Optional[str] = None) -> Formatted:
    """Format one spec file's text.

    Args:
        text: The file's text.
        file: Its display name, for problems.
        schema: The ``yaml-language-server`` line its header should start
            with, or ``None`` to leave the header's lines as they are.

    Returns:
        The canonical text, or the problems for which the file is left alone:
        every error the strict loader reports, or ``fmt.comment`` for each
        comment below the header block.
    """
    from pipeline.yaml_source import comment_locations, dump, load_bytes

    doc = load_bytes(text.encode("utf-8"), file)
    errors = tuple(p for p in doc.problems if p.severity is Severity.ERROR)
    if errors or doc.data is None:
        return Formatted(None, False, errors)
    header, header_lines = split_header(text)
    body_comments = [where for where in comment_locations(text) if where.line > header_lines]
    if body_comments:
        fix = _comment_fix(header, header_lines)
        return Formatted(None, False, tuple(
            Problem(file, where.line, where.column, "fmt", "fmt.comment", Severity.ERROR,
                    f"a comment below the header block cannot be kept when the file is formatted; {fix}, or delete "
                    "it")
            for where in body_comments))
    header = _with_schema(header, schema)
    formatted = dump(canonical_data(doc.data), "\n".join(header) + "\n" if header else "")
    return Formatted(formatted, formatted != text)


def format_files(paths: Sequence[Any], display: Any, schema_for: Any) -> List[Tuple[Any, Formatted]]:
    """Format each file of *paths* (reading only).

    Args:
        paths: The spec files.
        display: ``display(path)``: the name problems carry.
        schema_for: ``schema_for(path)``: its schema line, or ``None``.

    Returns:
        ``(path, Formatted)`` per file, in the order given. An unreadable
        file is a ``yaml.unreadable`` problem, as :func:`~pipeline.yaml_source.load_path` reports it.
    """
    from pipeline.yaml_source import MAX_BYTES, load_path, read_bounded

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
