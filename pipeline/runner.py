"""Running the five passes over spec files: ``load``, ``schema``, ``semantic``, ``stack``, ``roundtrip``.

Each file gets every pass in order and every problem each finds, located:
the runner never stops at a file's first problem, and one bad file never
hides another. A pass that has nothing to work on after an earlier failure
is marked skipped, never silently dropped: ``schema`` and ``semantic`` need a
loaded mapping, ``stack`` and ``roundtrip`` need a spec that parsed and
validated. A spec with no ``arch`` that no profile's name pattern picks is a
valid model spec whose stack cannot be checked: a warning, not an error. ``semantic`` runs even when ``schema`` failed, so a problem only
the IR sees (``4096.0`` in an integer field, which JSON Schema's ``integer``
admits) is reported in the same run; a later pass's problem at a field an
earlier pass already reported is left out, so each fault is told once, by
the first pass that saw it.

This module has no Click and prints nothing: it returns
:class:`~pipeline.problems.RunResult` values, and :func:`check_paths` can
spread files over processes (``--jobs``) because each file is independent.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from pipeline.model import ModelSpec, ModelSpecError, SpecIssue
from pipeline.op_profiles import OpProfiles, load_op_profiles
from pipeline.parameters import Unpriced, count_parameters, count_totals, stated_issues
from pipeline.problems import FILE_START, PASSES, FieldPath, FileResult, Location, Outcome, Problem, RunResult, Severity
from pipeline.stack import LayerStack, spec_arch, spec_layer_stack, tower_layer_stack

if TYPE_CHECKING:
    from pipeline.yaml_source import SourceDoc

CODES: Dict[str, str] = {
    "check.internal": "A pass crashed on this file; this is a modelspec bug, please report it with the file.",
    "spec.duplicate-name": "Two specs of one run state the same name (compared case-folded); names must be "
                           "unique, since each names its resolved artifact.",
}

#: The file name patterns of spec files when a folder is given.
SPEC_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class CheckedSpec:
    """One file's check, and what it produced when it passed.

    Attributes:
        result: Every pass's outcome and problem.
        spec: The parsed spec, when ``semantic`` passed.
        stack: Its resolved layer stack, when ``stack`` passed.
        tower: Its vision tower's stack, when it has a tower and ``stack`` passed.
        name_at: Where the file states ``name`` (the top of the file when it does not).
    """

    result: FileResult
    spec: Optional[ModelSpec] = None
    stack: Optional[LayerStack] = None
    tower: Optional[LayerStack] = None
    name_at: Location = FILE_START


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
        outcomes = tuple((name, self.outcomes.get(name, Outcome.SKIPPED)) for name in PASSES)
        return FileResult(self.doc.file, outcomes, tuple(sorted(self.problems)))


def _as_findings(issues: Sequence[SpecIssue], severity: Severity) -> List[Finding]:
    """Spec issues as findings of *severity*."""
    return [(issue.path, issue.code, severity, issue.message) for issue in issues]


def check_document(doc: "SourceDoc", profiles: OpProfiles) -> CheckedSpec:
    """Run the five passes on a loaded document.

    Args:
        doc: A :class:`~pipeline.yaml_source.SourceDoc`.
        profiles: The op profiles to resolve stacks against.

    Returns:
        The file's result, and the spec and stacks when they were built.
    """
    from pipeline.roundtrip import roundtrip_findings  # pylint: disable=import-outside-toplevel
    from pipeline.schema_pass import schema_problems  # pylint: disable=import-outside-toplevel

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
    run.record("semantic", [])
    try:
        spec_arch(spec, profiles)
    except ModelSpecError as error:
        # A spec is valid without an arch; only its stack cannot be checked.
        run.record("stack", _as_findings(error.issues, Severity.WARNING))
        run.record("roundtrip", roundtrip_findings(doc.data, spec))
        return CheckedSpec(run.result(), spec, name_at=_name_at(doc))
    try:
        stack = spec_layer_stack(spec, profiles)
        tower = tower_layer_stack(spec.vision, profiles) if spec.vision else None
    except ModelSpecError as error:
        run.record("stack", _as_findings(error.issues, Severity.ERROR) + _as_findings(error.warnings, Severity.WARNING))
        stack = tower = None
    else:
        run.record("stack", _as_findings(stack.warnings, Severity.WARNING)
                   + _parameter_findings(spec, profiles, stack, tower))
    run.record("roundtrip", roundtrip_findings(doc.data, spec))
    return CheckedSpec(run.result(), spec, stack, tower, _name_at(doc))


def _parameter_findings(spec: ModelSpec, profiles: OpProfiles, stack: LayerStack,
                        tower: Optional[LayerStack]) -> List[Finding]:
    """The stated parameter count against the counted one; nothing when the spec states none."""
    if spec.parameters is None:
        return []
    profile = profiles.get(stack.arch)
    try:
        total, active = count_totals(spec, profile, stack, tower)
    except Unpriced as missing:
        return [(("parameters",), "params.unpriced", Severity.ERROR,
                 f"parameters is stated but cannot be checked: {missing.reason}")]
    if spec.parameters.total == total and spec.parameters.active in (None, active):
        return []
    counts = count_parameters(spec, profile, stack, tower)
    return [(path, code, Severity.ERROR, message) for path, code, message in stated_issues(spec, counts)]


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
    from pipeline.yaml_source import load_path  # pylint: disable=import-outside-toplevel

    try:
        return check_document(load_path(path, display), profiles)
    except Exception as error:  # pylint: disable=broad-except  # one file's crash must not hide the others
        problem = Problem(display, 1, 1, "load", "check.internal", Severity.ERROR,
                          f"modelspec crashed on this file ({type(error).__name__}: {error}); please report it")
        return CheckedSpec(FileResult(display, tuple((name, Outcome.SKIPPED) for name in PASSES), (problem,)))


def find_spec_files(paths: Sequence[Path]) -> List[Path]:
    """Expand folders into the spec files under them (``*.yaml``, ``*.yml``, any case), sorted, each file once.

    A path that is a file is kept whatever its suffix: the user named it. Under
    a folder, everything but a folder that has a spec's suffix is kept, so a
    dangling link or a FIFO there is reported rather than skipped. A file
    reached twice (through a symlink) is kept once, under the first path found.

    Raises:
        FileNotFoundError: If a path does not exist (a dangling symlink included).
        ValueError: If a named path is neither a folder nor a regular file (a
            FIFO would block the read forever).
    """
    found = []
    for path in paths:
        if path.is_dir():
            # Whatever bears a spec's name is a spec: a dangling link or a FIFO under specs/ is reported
            # (yaml.unreadable), not silently left out.
            found.extend(p for p in sorted(path.rglob("*")) if p.suffix.lower() in SPEC_SUFFIXES and not p.is_dir())
        elif path.is_file():
            found.append(path)
        elif path.exists():
            raise ValueError(f"{path}: not a regular file or a folder; name spec files or the folders holding them")
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    unique: Dict[Path, Path] = {}
    for path in found:
        try:
            real = path.resolve()
        except RuntimeError:  # a symlink loop: reported unreadable under its own name
            real = path
        unique.setdefault(real, path)
    return sorted(unique.values())


def _check_chunk(items: Sequence[Tuple[str, str]], profiles_root: str) -> List[CheckedSpec]:
    """Worker: check a chunk of ``(path, display)`` pairs (picklable arguments only)."""
    profiles = load_op_profiles(Path(profiles_root))
    return [check_file(Path(path), display, profiles) for path, display in items]


#: Files per worker below which starting a process (about 0.3 s of imports) does not pay.
FILES_PER_WORKER = 150
_CHUNK = 100


def worker_count(jobs: Optional[int], files: int) -> int:
    """How many processes check *files* files: at most *jobs* (default: the usable cores), one per
    :data:`FILES_PER_WORKER` files, at least 1."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(jobs or cores, files // FILES_PER_WORKER))


def check_paths(files: Sequence[Tuple[Path, str]], profiles: OpProfiles, jobs: Optional[int] = None,
                progress: Optional[Callable[[int], None]] = None) -> List[CheckedSpec]:
    """Check many files, in several processes when that pays (:func:`worker_count`), results in path order.

    Args:
        files: ``(path, display name)`` pairs.
        profiles: The op profiles (loaded once here; each worker loads its own copy).
        jobs: The most worker processes to use; ``None`` for every usable core.
        progress: Called with the number of files finished since the last call.

    Returns:
        One :class:`CheckedSpec` per file, sorted by display name.
    """
    jobs = worker_count(jobs, len(files))
    if jobs == 1:
        checked = []
        for path, display in files:
            checked.append(check_file(path, display, profiles))
            if progress:
                progress(1)
    else:
        chunks = [files[start:start + _CHUNK] for start in range(0, len(files), _CHUNK)]
        checked = []
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_check_chunk, [(str(p), d) for p, d in chunk], str(profiles.root))
                       for chunk in chunks]
            for future in futures:
                part = future.result()
                checked.extend(part)
                if progress:
                    progress(len(part))
    return sorted(checked, key=lambda item: item.result.file)


def spec_names(files: Sequence[Tuple[Path, str]]) -> Dict[str, List[Tuple[str, str]]]:
    """The names the spec files state, case-folded, each with ``(name, display)`` of the files stating it.

    Only the ``name`` key is read (strict loading, no other pass), so a run
    over a few changed specs can still see the names of all the others; a file
    that does not load, or states no name, names nothing.
    """
    from pipeline.yaml_source import load_path  # pylint: disable=import-outside-toplevel

    names: Dict[str, List[Tuple[str, str]]] = {}
    for path, display in files:
        data = load_path(path, display).data
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str):
            names.setdefault(name.casefold(), []).append((name, display))
    return names


def run_result(checked: Sequence[CheckedSpec], strict: bool,
               elsewhere: Optional[Mapping[str, Sequence[Tuple[str, str]]]] = None) -> RunResult:
    """The run's result from each file's check, with the problems only the whole run can see.

    Two specs of one name (compared case-folded, as a case-insensitive file
    system would) would write one ``resolved/<name>.json``: each is refused,
    naming the other, under its ``semantic`` pass.

    Args:
        checked: Each file's check.
        strict: Whether warnings fail the run.
        elsewhere: :func:`spec_names` of the repository's specs this run did
            not check (``--changed-since``, or named files), so a checked spec
            cannot take the name of one left out.
    """
    by_name: Dict[str, List[str]] = {key: [display for _, display in found]
                                     for key, found in (elsewhere or {}).items()}
    for item in checked:
        if item.spec is not None:
            by_name.setdefault(item.spec.name.casefold(), []).append(item.result.file)
    return RunResult(tuple(_with_clash(item, by_name[item.spec.name.casefold()])
                           if item.spec is not None and len(by_name[item.spec.name.casefold()]) > 1
                           else item.result for item in checked), strict)


def _with_clash(item: CheckedSpec, files: Sequence[str]) -> FileResult:
    """*item*'s result with a ``spec.duplicate-name`` error naming the other files of its name."""
    others = [file for file in files if file != item.result.file]
    problem = Problem(item.result.file, item.name_at.line, item.name_at.column, "semantic", "spec.duplicate-name",
                      Severity.ERROR, f"name {item.spec.name!r} is also the name of {', '.join(others)}; "
                                      "each spec needs its own name (it names its resolved artifact)", ("name",))
    outcomes = tuple((name, Outcome.FAILED if name == "semantic" else outcome)
                     for name, outcome in item.result.outcomes)
    return FileResult(item.result.file, outcomes, tuple(sorted(item.result.problems + (problem,))))
