"""What a run keeps of one file's check (:class:`Verdict`), and the reads a verdict is made from or stands for.

Small and cheap to import on purpose: the result cache decodes verdicts from this module's records without
importing a pass, so a run that the cache answers parses no YAML and validates no schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Tuple

from pipeline.spec.files import MAX_BYTES, open_regular
from pipeline.spec.problems import FILE_START, FileResult, Location, Outcome

if TYPE_CHECKING:
    from pipeline.spec.yaml_source import SourceDoc


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a run keeps of one file's check: its result and what the whole-run rules and ``list`` need.

    Small on purpose (no spec, no stack): a run over a catalogue holds one per
    file, a worker process sends them back, and the result cache stores them.

    Attributes:
        result: Every pass's outcome and problem, before the whole run's rules.
        name: The spec's name, when ``semantic`` passed (the duplicate-name rule).
        name_at: Where the file states ``name``.
        stated_name: The ``name`` the file's mapping states, when it is text (even when the spec fails).
        row: The spec's ``list`` row (:func:`pipeline.check.rows.list_row`), when ``semantic`` passed.
    """

    result: FileResult
    name: Optional[str] = None
    name_at: Location = FILE_START
    stated_name: Optional[str] = None
    row: Optional[Dict[str, Any]] = None


_SHARED_OUTCOMES: Dict[Tuple[Tuple[str, Outcome], ...], Tuple[Tuple[str, Outcome], ...]] = {}


def shared_outcomes(outcomes: Tuple[Tuple[str, Outcome], ...]) -> Tuple[Tuple[str, Outcome], ...]:
    """One tuple object per distinct set of outcomes, so a run over many files holds a handful, not one each."""
    return _SHARED_OUTCOMES.setdefault(outcomes, outcomes)


def stated_name_of(doc: "SourceDoc") -> Optional[str]:
    """The ``name`` *doc*'s mapping states, when it is text (what another run's duplicate-name rule sees)."""
    name = doc.data.get("name") if isinstance(doc.data, dict) else None
    return name if isinstance(name, str) else None


def read_spec_bytes(path: Path) -> Optional[bytes]:
    """The bytes the strict loader would read of *path* (up to one past its cap), or ``None`` if it cannot or it
    is no regular file (:func:`pipeline.spec.files.open_regular`: a FIFO would block the open, a device mislead the
    read; the loader tells the caller's check why)."""
    try:
        with open_regular(path) as handle:
            return handle.read(MAX_BYTES + 1)
    except OSError:
        return None


def names_of(files: Sequence[Tuple[Any, str]], names: Iterable[Optional[str]]) -> Dict[str, List[Tuple[str, str]]]:
    """:func:`spec_names` of *files*, ``(path, display)`` pairs, from the *names* they state (in order; ``None``
    names nothing)."""
    found: Dict[str, List[Tuple[str, str]]] = {}
    for (_, display), name in zip(files, names):
        if name is not None:
            found.setdefault(name.casefold(), []).append((name, display))
    return found
