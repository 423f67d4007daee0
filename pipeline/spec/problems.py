"""Problems as values: the one record every pass, report and exit code shares.

A pass never prints and never raises on a bad spec; it returns
:class:`Problem` records, and the reporters and the exit code are computed
from them. One record per problem, frozen and ordered by where it is, so a run
over many files reports in a stable order whatever order the files were read
in (yamllint's ``LintProblem`` and check-jsonschema's result object are the
models).

Codes are stable dotted names, ``<area>.<what>`` (``yaml.duplicate-key``,
``spec.kv-heads-divide``). Each module that emits codes declares them in a
module-level ``CODES`` table, next to the code that raises them, and
:func:`all_codes` gathers those tables: the documentation table in
``docs/problems.md`` and the SARIF rules are generated from it, and a test
checks both against it.
"""

from __future__ import annotations

import difflib
import enum
import functools
import importlib
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping, Optional, Tuple, Union

from pipeline.spec.escape import printable

#: A field path: mapping keys and sequence indices from the document's root,
#: e.g. ``("layers", 2, "count")``.
FieldPath = Tuple[Union[str, int], ...]

#: The code of a problem that is modelspec's fault, not the file's: a pass crashed.
INTERNAL_CODE = "check.internal"

#: Warnings no configuration (``select``, ``ignore``, ``per-file-ignores``) or inline ignore silences: like an
#: error, they say a cost model reading the spec gets nothing to trust (a spec nothing counts), or that the
#: repository brings rules of its own or leaves a change out (the configuration is what they are about), but a
#: run fails on them only under ``--strict``.
UNSILENCED = frozenset({"params.uncounted", "stack.no-arch", "gate.own-profile", "gate.excluded-change"})

#: The passes, in the order they run on each file.
PASSES = ("load", "schema", "semantic", "stack", "roundtrip")


class Severity(str, enum.Enum):
    """How bad a problem is: an error fails the run, a warning only under ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Location:
    """A 1-based line and column in a source file, as editors count them."""

    line: int
    column: int


#: Where a problem with no better place is reported: the top of the file.
FILE_START = Location(1, 1)


def pointer(path: FieldPath) -> str:
    """Render *path* as a JSON Pointer (RFC 6901): ``("layers", 2)`` is ``/layers/2``."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def dotted(path: FieldPath) -> str:
    """Render *path* the way messages name a field: ``layers[2].count``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def near_misses(value: object, choices: Iterable[object], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The *choices* closest to *value* (``difflib``), for a message's "did you mean ...?"; any input is safe.

    A *value* that is not text (``null``, a number, a list in a list of names)
    has no near miss, and only the text *choices* are compared: a suggestion
    must never be what crashes a pass.
    """
    if not isinstance(value, str):
        return []
    return difflib.get_close_matches(value, [choice for choice in choices if isinstance(choice, str)], n=n,
                                     cutoff=cutoff)


@functools.total_ordering
@dataclass(frozen=True, eq=True)
class Problem:
    """One problem in one file, located.

    Attributes:
        file: The path as the user gave it (or as found under a folder).
        line: 1-based line of the offending key or value.
        column: 1-based column.
        pass_name: Which pass found it, one of :data:`PASSES`.
        code: Stable dotted code, e.g. ``spec.kv-heads-divide``.
        severity: :class:`Severity`.
        message: What is wrong and what to write instead.
        path: The field path inside the document, ``()`` for the file itself.
    """

    file: str
    line: int
    column: int
    pass_name: str
    code: str
    severity: Severity
    message: str
    path: FieldPath = field(default=())

    def __post_init__(self) -> None:
        """Make the file name and message printable in every report format (see :func:`printable`).

        A message keeps its line breaks (a CRLF becomes one) and tabs; every
        other control character is shown escaped, and no line of it can run
        as a GitHub workflow command.
        """
        object.__setattr__(self, "file", printable(self.file))
        object.__setattr__(self, "message", printable(self.message.replace("\r\n", "\n"), keep="\n\t"))
        # Sorting compares keys often (a file of 10,000 problems: some 130,000 times): build the key once.
        object.__setattr__(self, "_sort_key", (self.file, self.line, self.column, PASSES.index(self.pass_name)
                                               if self.pass_name in PASSES else len(PASSES), self.code,
                                               self.message))

    def _key(self) -> tuple:
        """Sort by place, then by pass order, then by code and message."""
        return self._sort_key  # type: ignore[attr-defined]

    def __lt__(self, other: "Problem") -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return self._sort_key < other._sort_key  # type: ignore[attr-defined]

    @property
    def pointer(self) -> str:
        """The field path as a JSON Pointer, ``""`` for the whole document."""
        return pointer(self.path)


# The modules that declare a ``CODES`` table, in the order the documentation
# lists them. A module that emits a code and is missing here fails the codes test.
_CODE_MODULES = (
    "pipeline.spec.yaml_source",
    "pipeline.spec.schema_pass",
    "pipeline.spec.model",
    "pipeline.pricing.op_profiles",
    "pipeline.pricing.stack",
    "pipeline.pricing.parameters",
    "pipeline.spec.roundtrip",
    "pipeline.check.runner",
    "pipeline.check.gate",
    "pipeline.importer.config_json",
    "pipeline.spec.layout",
    "pipeline.catalogue.regen",
    "pipeline.check.config",
    "pipeline.check.suppress",
)


def all_codes() -> Mapping[str, str]:
    """Every code the package can emit, mapped to its one-line help text.

    Raises:
        ValueError: If two modules declare the same code.
    """
    codes: dict[str, str] = {}
    for name in _CODE_MODULES:
        module = importlib.import_module(name)
        for code, help_text in getattr(module, "CODES", {}).items():
            if code in codes:
                raise ValueError(f"code {code} is declared twice (again in {name})")
            codes[code] = help_text
    return codes


class LazyCodes(Mapping[str, str]):
    """:func:`all_codes`, gathered on first use: a command passes it where the codes may be needed.

    Gathering the codes imports every module that declares some (the importer, ``fmt``, ``regen``...), about a
    tenth of a second; a run that names no code (no ``--select``/``--ignore``, no configured codes, no inline
    ignore, no report that quotes a code's help) never pays it.

    Raises:
        ValueError: On first use, if two modules declare the same code.
    """

    def __init__(self) -> None:
        self._codes: Optional[Mapping[str, str]] = None

    def _gathered(self) -> Mapping[str, str]:
        if self._codes is None:
            self._codes = all_codes()
        return self._codes

    def __getitem__(self, code: str) -> str:
        return self._gathered()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._gathered())

    def __len__(self) -> int:
        return len(self._gathered())


class Outcome(str, enum.Enum):
    """What became of one pass on one file."""

    PASSED = "passed"    # ran, found nothing of severity error (warnings allowed)
    FAILED = "failed"    # ran, found at least one error
    SKIPPED = "skipped"  # could not run: an earlier pass left nothing to check


@dataclass(frozen=True)
class InlineIgnore:
    """A ``# modelspec: ignore[CODE, ...]`` comment in a spec file (see :mod:`pipeline.check.suppress`).

    Attributes:
        line: The comment's 1-based line: the line whose warnings it silences.
        column: The 1-based column of its ``#``.
        codes: The codes or code prefixes it names, as written; empty when it names none.
    """

    line: int
    column: int
    codes: Tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileResult:
    """Every pass's outcome and every problem for one file.

    Attributes:
        file: The path as reported.
        outcomes: ``(pass name, Outcome)`` for each of :data:`PASSES`, in order.
        problems: The file's problems, sorted.
        ignores: The file's inline ignore comments, in order; :func:`pipeline.check.suppress.suppress` applies them.
    """

    file: str
    outcomes: Tuple[Tuple[str, Outcome], ...]
    problems: Tuple[Problem, ...]
    ignores: Tuple[InlineIgnore, ...] = ()

    def __post_init__(self) -> None:
        """Make the file name printable in every report format, as each problem's (see :func:`printable`)."""
        object.__setattr__(self, "file", printable(self.file))

    def outcome(self, pass_name: str) -> Outcome:
        """Return the outcome of *pass_name*.

        Raises:
            KeyError: If the pass is not one of :data:`PASSES`.
        """
        return dict(self.outcomes)[pass_name]


@dataclass(frozen=True)
class Scope:
    """What a ``--changed-since`` run covers, for every report to state.

    Attributes:
        ref: The revision compared with, as the user named it.
        base: The merge base's commit id.
        total: How many spec files there were to choose from.
        removed: The spec paths deleted since the merge base (not checked), sorted.
        checked: How many specs were chosen and checked (the run's files besides those of
            :mod:`pipeline.check.gate`, which are about the repository); ``None``: every file of the run.
    """

    ref: str
    base: str
    total: int
    removed: Tuple[str, ...] = ()
    checked: Optional[int] = None


@dataclass(frozen=True)
class RunResult:
    """A whole run: every file checked, in path order, and whether warnings fail it.

    Attributes:
        files: One :class:`FileResult` per file, sorted by path.
        strict: Whether warnings count as failures (``--strict``).
        scope: What a changed-only run covers; ``None`` for a run over the files named (or all).
    """

    files: Tuple[FileResult, ...]
    strict: bool = False
    scope: Optional[Scope] = None

    @property
    def problems(self) -> Tuple[Problem, ...]:
        """Every problem of every file, in report order."""
        return tuple(problem for result in self.files for problem in result.problems)

    def count(self, severity: Severity) -> int:
        """How many problems of *severity* the run found."""
        return sum(1 for problem in self.problems if problem.severity is severity)

    def failing(self, problem: Problem) -> bool:
        """Whether *problem* fails the run: an error, or a warning under ``--strict``."""
        return problem.severity is Severity.ERROR or self.strict

    @property
    def exit_code(self) -> int:
        """0 when nothing fails the run, 1 when something does (see :meth:`failing`), 2 when modelspec crashed on a file."""
        if any(problem.code == INTERNAL_CODE for problem in self.problems):
            return 2
        return 1 if any(self.failing(problem) for problem in self.problems) else 0
