"""Running the five passes over spec files: ``load``, ``schema``, ``semantic``, ``stack``, ``roundtrip``.

Each file gets every pass in order and every problem each finds, located:
the runner never stops at a file's first problem, and one bad file never
hides another. A pass that has nothing to work on after an earlier failure
is marked skipped, never silently dropped: ``schema`` and ``semantic`` need a
loaded mapping, ``stack`` and ``roundtrip`` need a spec that parsed and
validated. A spec with no ``arch`` that no profile's name pattern picks is a
valid model spec whose stack cannot be checked: a warning, not an error; but
it cannot be counted either, so a stated ``parameters`` is an error
(``params.unpriced``: its figure would pin nothing), and the warning is one
no ignore silences. A spec with an arch that cannot be counted and states no
figure is warned the same way (``params.uncounted``). ``semantic`` runs even when ``schema`` failed, so a problem only
the IR sees (``4096.0`` in an integer field, which JSON Schema's ``integer``
admits) is reported in the same run; a later pass's problem at a field an
earlier pass already reported is left out, so each fault is told once, by
the first pass that saw it.

This module has no Click and prints nothing: it returns
:class:`~pipeline.spec.problems.RunResult` values, and :func:`check_paths` can
spread files over processes (``--jobs``) because each file is independent.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from pipeline.spec.model import ModelSpec, ModelSpecError, SpecIssue
from pipeline.pricing.op_profiles import OpProfiles
from pipeline.pricing.parameters import Unpriced, count_parameters, count_totals, stated_holds, stated_issues
from pipeline.spec.problems import FILE_START, PASSES, FieldPath, FileResult, Location, Outcome, Problem, RunResult, Severity
from pipeline.pricing.stack import LayerStack, spec_arch, spec_layer_stack, tower_layer_stack
from pipeline.check.rows import list_row
from pipeline.check.suppress import inline_ignores
from pipeline.check.verdict import Verdict, names_of, shared_outcomes, stated_name_of
from pipeline.spec.roundtrip import roundtrip_findings
from pipeline.spec.schema_pass import schema_problems
from pipeline.spec.yaml_source import SourceDoc, load_bytes, load_path


#: Why a spec without an arch that no profile's name pattern picks cannot be counted.
_NO_ARCH = ("it states no arch and no op profile's match pattern picks one from its name; state arch (an op "
            "profile's stem)")

CODES: Dict[str, str] = {
    "check.internal": "A pass crashed on this file; this is a modelspec bug, please report it with the file.",
    "check.more-problems": "A file has more problems than a report shows (at most 20 of one code and 100 in all "
                           "per file); this line counts the rest, which fix-and-rerun brings into view.",
    "spec.duplicate-name": "Two specs of one run state the same name (compared case-folded); names must be "
                           "unique, since each names its resolved artifact.",
}



@dataclass(frozen=True)
class CheckedSpec:
    """One file's check, and what it produced when it passed.

    Attributes:
        result: Every pass's outcome and problem.
        spec: The parsed spec, when ``semantic`` passed.
        stack: Its resolved layer stack, when ``stack`` passed.
        tower: Its vision tower's stack, when it has a tower and ``stack`` passed.
        name_at: Where the file states ``name`` (the top of the file when it does not).
        parameters: ``(total, active)`` parameters, counted from the profile's
            weight inventories, when ``stack`` passed and the spec can be counted.
    """

    result: FileResult
    spec: Optional[ModelSpec] = None
    stack: Optional[LayerStack] = None
    tower: Optional[LayerStack] = None
    name_at: Location = FILE_START
    parameters: Optional[Tuple[int, int]] = None


def verdict_of(checked: CheckedSpec, stated_name: Optional[str], with_row: bool = False) -> Verdict:
    """The :class:`Verdict` of a check; its ``list`` row only *with_row* (a run over a catalogue holds a
    verdict per file, and the row is most of one)."""
    spec = checked.spec
    return Verdict(checked.result, spec.name if spec is not None else None, checked.name_at, stated_name,
                   list_row_of(checked) if with_row else None)


def list_row_of(checked: CheckedSpec) -> Optional[Dict[str, Any]]:
    """*checked*'s ``list`` row (:func:`pipeline.check.rows.list_row`), when its spec parsed."""
    return list_row(checked.spec, checked.stack, checked.result.file, checked.parameters) \
        if checked.spec is not None else None


#: Codes about a key itself (it should not be there), reported at the key rather than at its value.
KEY_CODES = frozenset({"schema.unknown-key", "spec.unknown-key", "spec.op-unknown", "spec.activations-kind"})

Finding = Tuple[FieldPath, str, Severity, str]


class _Passes:
    """The state of one file's run: problems so far and each pass's outcome."""

    def __init__(self, doc: "SourceDoc") -> None:
        self.doc = doc
        self.problems: List[Problem] = list(doc.problems)
        self.outcomes: Dict[str, Outcome] = {}

    def locate(self, pass_name: str, finding: Finding) -> Problem:
        """A finding as a problem, at its key (:data:`KEY_CODES`) or its value."""
        path, code, severity, message = finding
        where = (self.doc.key_location(path) if code in KEY_CODES else None) or self.doc.locate(path)
        return Problem(self.doc.file, where.line, where.column, pass_name, code, severity, message, path)

    def record(self, pass_name: str, found: Iterable[Finding]) -> bool:
        """Add a pass's findings, left out where an earlier pass reported the same field; True if it passed.

        The pass's outcome is ``failed`` when it found an error, even one an
        earlier pass had already reported.
        """
        reported = {p.path for p in self.problems if p.path}
        failed = False
        for finding in found:
            path, _, severity, _ = finding
            failed = failed or severity is Severity.ERROR
            if not any(path[:length] in reported for length in range(1, len(path) + 1)):
                self.problems.append(self.locate(pass_name, finding))
        self.outcomes[pass_name] = Outcome.FAILED if failed else Outcome.PASSED
        return not failed

    def result(self) -> FileResult:
        """The file's result, passes that did not run marked skipped, problems sorted."""
        outcomes = shared_outcomes(tuple((name, self.outcomes.get(name, Outcome.SKIPPED)) for name in PASSES))
        return FileResult(self.doc.file, outcomes, tuple(sorted(self.problems)))


def _as_findings(issues: Sequence[SpecIssue], severity: Severity) -> List[Finding]:
    """Spec issues as findings of *severity*."""
    return [(issue.path, issue.code, severity, issue.message) for issue in issues]


def check_document(doc: "SourceDoc", profiles: OpProfiles) -> CheckedSpec:
    """Run the five passes on a loaded document.

    Args:
        doc: A :class:`~pipeline.spec.yaml_source.SourceDoc`.
        profiles: The op profiles to resolve stacks against.

    Returns:
        The file's result, and the spec and stacks when they were built.
    """
    run = _Passes(doc)
    run.outcomes["load"] = Outcome.FAILED if any(p.severity is Severity.ERROR for p in doc.problems) \
        else Outcome.PASSED
    if doc.fatal or doc.data is None:
        return CheckedSpec(run.result())
    run.record("schema", [(p.path, p.code, p.severity, p.message) for p in schema_problems(doc)])
    try:
        spec = ModelSpec.from_dict(doc.data)
    except ModelSpecError as error:
        run.record("semantic", _as_findings(error.issues, Severity.ERROR))
        return CheckedSpec(run.result())
    run.record("semantic", _as_findings([spec.import_gaps.warning()] if spec.import_gaps else [], Severity.WARNING))
    try:
        spec_arch(spec, profiles)
    except ModelSpecError as error:
        # A spec is valid without an arch; only its stack cannot be checked.
        # Unsilenced (UNSILENCED) when it states no figure: nothing counts it; with one, the figure is an error.
        run.record("stack", _as_findings(error.issues, Severity.WARNING)
                   + ([_uncountable(spec, _NO_ARCH)] if spec.parameters is not None else []))
        run.record("roundtrip", roundtrip_findings(doc.data, spec))
        return CheckedSpec(run.result(), spec, name_at=_name_at(doc))
    try:
        stack = spec_layer_stack(spec, profiles)
        tower = tower_layer_stack(spec.vision, profiles) if spec.vision else None
    except ModelSpecError as error:
        run.record("stack", _as_findings(error.issues, Severity.ERROR) + _as_findings(error.warnings, Severity.WARNING))
        stack = tower = None
    else:
        totals, found = _counted(spec, profiles, stack, tower)
        run.record("stack", _as_findings(stack.warnings, Severity.WARNING) + found)
    run.record("roundtrip", roundtrip_findings(doc.data, spec))
    if stack is None:
        return CheckedSpec(run.result(), spec, name_at=_name_at(doc))
    return CheckedSpec(run.result(), spec, stack, tower, _name_at(doc), totals)


def _counted(spec: ModelSpec, profiles: OpProfiles, stack: LayerStack,
             tower: Optional[LayerStack]) -> Tuple[Optional[Tuple[int, int]], List[Finding]]:
    """``(total, active)`` (``None`` when the spec cannot be counted) and the stated count's findings against it."""
    profile = profiles.get(stack.arch)
    try:
        totals = count_totals(spec, profile, stack, tower)
    except Unpriced as missing:
        return None, [_uncountable(spec, missing.reason)]
    if spec.parameters is None or stated_holds(spec, totals):
        return totals, []
    counts = count_parameters(spec, profile, stack, tower)
    return totals, [(path, code, Severity.ERROR, message) for path, code, message in stated_issues(spec, counts)]


def _uncountable(spec: ModelSpec, reason: str) -> Finding:
    """The finding of a spec that cannot be counted for *reason*: an error when it states ``parameters`` (its
    figure pins nothing), else a warning no configuration silences (:data:`~pipeline.spec.problems.UNSILENCED`)."""
    if spec.parameters is not None:
        return (("parameters",), "params.unpriced", Severity.ERROR,
                f"parameters is stated but cannot be checked: {reason}")
    return (), "params.uncounted", Severity.WARNING, f"the spec cannot be counted and states no parameters: {reason}"


def _name_at(doc: "SourceDoc") -> Location:
    """Where *doc* states its name."""
    return doc.value_location(("name",)) or FILE_START


def check_file(path: Path, display: str, profiles: OpProfiles) -> CheckedSpec:
    """Load *path* strictly and run the five passes; a crash becomes a ``check.internal`` problem.

    Args:
        path: The file to read.
        display: The path as reports show it.
        profiles: The op profiles to resolve stacks against.
    """
    def check() -> Tuple[CheckedSpec, Optional[str]]:
        checked = check_document(load_path(path, display), profiles)
        if checked.result.outcome("load") is Outcome.FAILED:
            return checked, None
        with open(path, "rb") as handle:  # read again only for its comments; the page cache has it
            return _with_ignores(checked, handle.read()), None

    return _guarded(check, display)[0]


def check_bytes(raw: bytes, display: str, profiles: OpProfiles) -> Tuple[CheckedSpec, Optional[str]]:
    """Load the file's bytes *raw* strictly and run the five passes, as :func:`check_file` does a path; with the
    ``name`` the document states (:func:`stated_name_of`). A crash becomes a ``check.internal`` problem."""
    def check() -> Tuple[CheckedSpec, Optional[str]]:
        doc = load_bytes(raw, display)
        checked = check_document(doc, profiles)
        if checked.result.outcome("load") is not Outcome.FAILED:
            checked = _with_ignores(checked, raw)
        return checked, stated_name_of(doc)

    return _guarded(check, display)


def _with_ignores(checked: CheckedSpec, raw: bytes) -> CheckedSpec:
    """*checked* with the inline ignore comments of the file's bytes *raw* (:mod:`pipeline.check.suppress`)."""
    ignores = inline_ignores(raw)
    return dataclasses.replace(checked, result=dataclasses.replace(checked.result, ignores=ignores)) \
        if ignores else checked


def _guarded(check: Callable[[], Tuple[CheckedSpec, Optional[str]]], display: str) -> Tuple[CheckedSpec, Optional[str]]:
    """Run *check*; a crash becomes a ``check.internal`` problem (one file's crash must not hide the others)."""
    try:
        return check()
    except Exception as error:  # pylint: disable=broad-except
        problem = Problem(display, 1, 1, "load", "check.internal", Severity.ERROR,
                          f"modelspec crashed on this file ({type(error).__name__}: {error}); please report it")
        return CheckedSpec(FileResult(display, tuple((name, Outcome.SKIPPED) for name in PASSES), (problem,))), None


#: Files per worker below which starting a process does not pay: a worker forks, checks its share and sends its
#: verdicts back. Measured on 2 cores (cold check --no-cache, copies of the catalogue, medians of 3): 150 files
#: -j1 0.28 s, -j2 0.30 s; 300 files 0.37 s both; 600 files -j1 0.51 s, -j2 0.42 s. So two workers from 400.
FILES_PER_WORKER = 200


def worker_count(jobs: Optional[int], files: int) -> int:
    """How many processes check *files* files: at most *jobs* (default: :func:`idle_cores`), one per
    :data:`FILES_PER_WORKER` files, at least 1."""
    return max(1, min(jobs or idle_cores(), files // FILES_PER_WORKER))


def idle_cores() -> int:
    """The usable cores that other work is not keeping busy now, at least 1: a second process on a core someone
    else is using makes a run slower, not faster.

    "Now" is the kernel's count of runnable tasks (``/proc/loadavg``'s fourth field), this process apart; where
    there is none, the one-minute load average (as ``make --load-average`` judges it). The average is a poor
    guide on its own: it still counts the run a benchmark or a CI step finished a second ago.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    busy = _runnable_others()
    if busy is None:
        try:
            busy = os.getloadavg()[0]
        except OSError:  # no load average on this platform
            busy = 0.0
    return max(1, min(cores, int(cores - busy + 0.5)))


#: Where Linux says how many tasks are runnable now (``0.52 0.58 0.59 2/467 12345``: the fourth field's first part).
LOADAVG = "/proc/loadavg"


def _runnable_others() -> Optional[int]:
    """How many tasks besides this one the kernel has runnable right now, or ``None`` where it does not say."""
    try:
        with open(LOADAVG, encoding="ascii") as handle:
            running = handle.read().split()[3].split("/")[0]
    except (OSError, IndexError):
        return None
    return max(0, int(running) - 1) if running.isdigit() else None


def check_paths(files: Sequence[Tuple[Path, str]], profiles: OpProfiles,
                progress: Optional[Callable[[int], None]] = None) -> List[CheckedSpec]:
    """Check many files in this process, with the spec and stacks each produced, results in path order.

    For the commands that need the specs themselves (``regen``, ``diff``); a
    run that needs only results uses :func:`verdicts`, which spreads files
    over processes and uses the result cache.

    Args:
        files: ``(path, display name)`` pairs.
        profiles: The op profiles.
        progress: Called with the number of files finished since the last call.

    Returns:
        One :class:`CheckedSpec` per file, sorted by display name.
    """
    checked = []
    for path, display in files:
        checked.append(check_file(path, display, profiles))
        if progress:
            progress(1)
    return sorted(checked, key=lambda item: item.result.file)


def spec_names(files: Sequence[Tuple[Path, str]]) -> Dict[str, List[Tuple[str, str]]]:
    """The names the spec files state, case-folded, each with ``(name, display)`` of the files stating it.

    Only the ``name`` key is needed, so a run over a few changed specs can still see the names of all the
    others: each file is loaded strictly (no other pass); one that does not load, or states no name, names
    nothing. (With the result cache, :meth:`~pipeline.cache.results.ResultCache.stated_names` answers
    instead, from each unchanged file's record.)

    Args:
        files: ``(path, display name)`` pairs.
    """
    return names_of(files, (stated_name(path, display) for path, display in files))


def stated_name(path: Path, display: str) -> Optional[str]:
    """The ``name`` the file at *path* states, when it is text (loaded strictly, no other pass)."""
    return stated_name_of(load_path(path, display))


def run_result(checked: Sequence[Verdict], strict: bool,
               outside_run: Optional[Mapping[str, Sequence[Tuple[str, str]]]] = None) -> RunResult:
    """The run's result from each file's verdict, with the problems only the whole run can see.

    Two specs of one name (compared case-folded, as a case-insensitive file
    system would) would write one ``resolved/<name>.json``: each is refused,
    naming the other, under its ``semantic`` pass.

    Args:
        checked: Each file's :class:`Verdict`.
        strict: Whether warnings fail the run.
        outside_run: :func:`spec_names` of the repository's specs this run did
            not check (``--changed-since``, or named files), so a checked spec
            cannot take the name of one left out.
    """
    others = outside_run or {}
    by_name: Dict[str, List[str]] = {}  # the files of each name a checked spec states: the others', then its own
    for item in checked:
        if item.name is not None:
            key = item.name.casefold()
            if key not in by_name:
                by_name[key] = [display for _, display in others.get(key, ())]
            by_name[key].append(item.result.file)
    return RunResult(tuple(_with_clash(item, by_name[item.name.casefold()])
                           if item.name is not None and len(by_name[item.name.casefold()]) > 1
                           else item.result for item in checked), strict)


def _with_clash(item: Verdict, files: Sequence[str]) -> FileResult:
    """*item*'s result with a ``spec.duplicate-name`` error naming the other files of its name (*files*, its own
    among them once: another file may be shown under the same path, an escaped control character in its name
    spelling it as a name holding the escape does, or a file named from stdin as a spec is)."""
    others = list(files)
    others.remove(item.result.file)
    problem = Problem(item.result.file, item.name_at.line, item.name_at.column, "semantic", "spec.duplicate-name",
                      Severity.ERROR, f"name {item.name!r} is also the name of {', '.join(others)}; "
                                      "each spec needs its own name (it names its resolved artifact)", ("name",))
    outcomes = tuple((name, Outcome.FAILED if name == "semantic" else outcome)
                     for name, outcome in item.result.outcomes)
    return FileResult(item.result.file, outcomes, tuple(sorted(item.result.problems + (problem,))), item.result.ignores)
