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
:class:`~pipeline.problems.RunResult` values, and :func:`check_paths` can
spread files over processes (``--jobs``) because each file is independent.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from pipeline.model import ModelSpec, ModelSpecError, SpecIssue
from pipeline.op_profiles import OpProfiles, load_op_profiles
from pipeline.parameters import Unpriced, count_parameters, count_totals, stated_holds, stated_issues
from pipeline.problems import FILE_START, PASSES, FieldPath, FileResult, Location, Outcome, Problem, RunResult, Severity
from pipeline.stack import LayerStack, spec_arch, spec_layer_stack, tower_layer_stack
from pipeline.stamps import open_regular

if TYPE_CHECKING:
    from pipeline.result_cache import CacheKeys, Record, ResultCache
    from pipeline.yaml_source import SourceDoc

CODES: Dict[str, str] = {
    "check.internal": "A pass crashed on this file; this is a modelspec bug, please report it with the file.",
    "check.more-problems": "A file has more problems than a report shows (at most 20 of one code and 100 in all "
                           "per file); this line counts the rest, which fix-and-rerun brings into view.",
    "spec.duplicate-name": "Two specs of one run state the same name (compared case-folded); names must be "
                           "unique, since each names its resolved artifact.",
}

#: Why a spec without an arch that no profile's name pattern picks cannot be counted.
_NO_ARCH = ("it states no arch and no op profile's match pattern picks one from its name; state arch (an op "
            "profile's stem)")

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
        parameters: ``(total, active)`` parameters, counted from the profile's
            weight inventories, when ``stack`` passed and the spec can be counted.
    """

    result: FileResult
    spec: Optional[ModelSpec] = None
    stack: Optional[LayerStack] = None
    tower: Optional[LayerStack] = None
    name_at: Location = FILE_START
    parameters: Optional[Tuple[int, int]] = None


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
        row: The spec's ``list`` row (:func:`pipeline.catalogue.list_row`), when ``semantic`` passed.
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


def verdict_of(checked: CheckedSpec, stated_name: Optional[str], with_row: bool = False) -> Verdict:
    """The :class:`Verdict` of a check; its ``list`` row only *with_row* (a run over a catalogue holds a
    verdict per file, and the row is most of one)."""
    spec = checked.spec
    return Verdict(checked.result, spec.name if spec is not None else None, checked.name_at, stated_name,
                   list_row_of(checked) if with_row else None)


def list_row_of(checked: CheckedSpec) -> Optional[Dict[str, Any]]:
    """*checked*'s ``list`` row (:func:`pipeline.catalogue.list_row`), when its spec parsed."""
    from pipeline.catalogue import list_row  # pylint: disable=import-outside-toplevel

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
    figure pins nothing), else a warning no configuration silences (:data:`~pipeline.problems.UNSILENCED`)."""
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
    from pipeline.yaml_source import load_path  # pylint: disable=import-outside-toplevel

    def check() -> Tuple[CheckedSpec, Optional[str]]:
        checked = check_document(load_path(path, display), profiles)
        if checked.result.outcome("load") is Outcome.FAILED:
            return checked, None
        with open(path, "rb") as handle:  # read again only for its comments; the page cache has it
            return _with_ignores(checked, handle.read()), None

    return _guarded(check, display)[0]


def _with_ignores(checked: CheckedSpec, raw: bytes) -> CheckedSpec:
    """*checked* with the inline ignore comments of the file's bytes *raw* (:mod:`pipeline.suppress`)."""
    from pipeline.suppress import inline_ignores  # pylint: disable=import-outside-toplevel

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


def stated_name_of(doc: "SourceDoc") -> Optional[str]:
    """The ``name`` *doc*'s mapping states, when it is text (what another run's duplicate-name rule sees)."""
    name = doc.data.get("name") if isinstance(doc.data, dict) else None
    return name if isinstance(name, str) else None


def find_spec_files(paths: Sequence[Path]) -> List[Path]:
    """Expand folders into the spec files under them (``*.yaml``, ``*.yml``, any case), sorted, each file once.

    The discovery policy, the same for every command and for ``--changed-since``
    (which picks among these files):

    - A path named is kept whatever its suffix or name: the user named it.
    - Under a folder, an entry whose name starts with ``.`` is skipped, file or
      folder: editor and archive leftovers (``.#x.yaml``, ``.archive/``) are
      not the catalogue. ``.gitignore`` is not read: the catalogue is the
      folder, the same in a checkout, an export or a tarball; ``exclude``
      (configuration, ``--exclude``) leaves files out by pattern.
    - Everything else that bears a spec's suffix and is not a folder is kept,
      so a dangling link or a FIFO there is reported, not skipped.
    - A symlinked folder is followed, once: a folder reached again (a link
      loop, or two links to one folder) is not entered twice, and a file
      reached twice is kept once, under the first path found (in path order).
    - A folder that cannot be listed is kept as an entry of its own, which the
      load pass reports (``yaml.unreadable``): a run never passes, and regen
      never removes an artifact, because a folder could not be read.

    Raises:
        FileNotFoundError: If a path does not exist (a dangling symlink included).
        ValueError: If a named path is neither a folder nor a regular file (a
            FIFO would block the read forever).
    """
    return [Path(path) for path in spec_file_names(paths)]


def spec_file_names(paths: Sequence[Path], watched: Optional[Set[str]] = None) -> List[str]:
    """:func:`find_spec_files` as path strings (a catalogue-wide pass over names needs no ``Path`` objects).

    Args:
        paths: The paths named.
        watched: When given, gets every path besides the files found whose ``stat`` (links followed) decides
            what the walk finds: what a snapshot of the walk (:mod:`pipeline.snapshot`) stats. Each folder
            walked, as the walk spelled it: an entry added, removed or renamed changes its mtime, and a link on
            the way retargeted (one outside the folders walked among them) changes which folder it is. And each
            link the walk passed over (to a folder walked already, to a file taken already, to no folder and
            no spec): retargeted, it could lead to specs. And each spec that is a link: retargeted, it could be
            a file taken already, which the walk takes once. A dangling one cannot be stat'ed, so no snapshot
            stands for the walk.
    """
    return [path for path, _ in spec_files_and_reals(paths, watched)]


def spec_files_and_reals(paths: Sequence[Path], watched: Optional[Set[str]] = None) -> List[Tuple[str, str]]:
    """``(path, real path)`` of each of :func:`spec_file_names` (*watched* as there): the file a link among them
    stands for, which is taken once, under the first of its names in path order."""
    found: List[Tuple[str, str, str]] = []
    entered: Set[str] = set()
    for path in paths:
        if path.is_dir():
            # Whatever bears a spec's name is a spec: a dangling link or a FIFO under specs/ is reported
            # (yaml.unreadable), not silently left out.
            found.extend(_folder_specs(os.path.normpath(path), os.path.realpath(path), entered, watched))
        elif path.is_file():
            found.append((_path_key(str(path)), str(path), _real(path)))
        elif path.exists():
            raise ValueError(f"{path}: not a regular file or a folder; name spec files or the folders holding them")
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    found.sort()
    unique: Dict[str, str] = {}
    for _, path, real in found:
        if unique.setdefault(real, path) != path and watched is not None:
            watched.add(path)  # a second name of a file taken: retargeted, it could name another spec
    return [(path, real) for real, path in unique.items()]


def _path_key(path: str) -> str:
    """What ``Path`` sorts *path* by, as a string: its parts in order, so ``a/b`` comes before ``a-b`` (a
    separator that sorts before every character a name can hold)."""
    parts = "\0".join(part for part in path.split(os.sep) if part and part != ".")  # as Path drops them
    if path.startswith(os.sep):  # Path's first part of an absolute path is its root: "/", or "//" (POSIX keeps it)
        root = 2 * os.sep if path.startswith(2 * os.sep) and not path.startswith(3 * os.sep) else os.sep
        return root + "\0" + parts if parts else root
    return parts


def _real(path: Path) -> str:
    """*path* with its symlinks resolved; itself when they loop (then it is reported unreadable by its name)."""
    try:
        return str(path.resolve())
    except RuntimeError:
        return str(path)


def _spec_suffix(name: str) -> bool:
    """Whether a file name has a spec's suffix, as ``Path.suffix`` reads it (``.yaml`` itself has none)."""
    dot = name.rfind(".")
    return 0 < dot < len(name) - 1 and name[dot:].lower() in SPEC_SUFFIXES


def _folder_specs(folder: str, real_folder: str, entered: Set[str],
                  watched: Optional[Set[str]] = None) -> Iterator[Tuple[str, str, str]]:
    """``(sort key, path, real path)`` of each spec-named entry under *folder* that is not a folder, by the
    policy of :func:`find_spec_files`; *entered* holds the real paths of the folders walked so far (loop
    protection), and entries are walked in name order, so the first link to a folder in path order wins.
    *watched* gets the folders and the links passed over, as :func:`spec_file_names` says.

    One ``scandir`` per folder: only a symlink costs a ``stat`` (is it a folder?) and a ``resolve``;
    any other entry's real path is its folder's, which is known.
    """
    if watched is not None:
        watched.add(folder)
    if real_folder in entered:
        return
    entered.add(real_folder)
    key = _path_key(folder) + "\0"
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        yield key[:-1], folder, real_folder  # reported by the load pass: the folder cannot be read
        return
    real_prefix = os.path.join(real_folder, "")  # the folder's real path and a separator, once per folder
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _folder_specs(entry.path, real_prefix + name, entered, watched)
        elif entry.is_symlink() and entry.is_dir():
            yield from _folder_specs(entry.path, os.path.realpath(entry.path), entered, watched)
        elif _spec_suffix(name):
            if not entry.is_symlink():
                yield key + name, entry.path, real_prefix + name
            elif not entry.is_dir():
                if watched is not None:  # retargeted (a link on its way outside specs/ too), it is another
                    watched.add(entry.path)  # file, or one the walk takes already: its stat tells
                yield key + name, entry.path, _real(Path(entry.path))
        elif watched is not None and entry.is_symlink():
            watched.add(entry.path)  # a link to no folder and no spec: retargeted, it could lead to specs


def _check_chunk(items: Sequence[Tuple[str, str, Optional[Tuple[str, str]]]], profiles_root: str,
                 keys: Optional["CacheKeys"], with_rows: bool,
                 cache_folder: Optional[str] = None) -> List[Tuple[Verdict, Optional[str]]]:
    """Worker: :func:`cached_verdict` for a chunk of ``(path, display, cache line)`` (picklable arguments only).

    The profiles are loaded as the command loaded them (with its cache folder, *cache_folder*), so a forked
    worker finds them in the memo it inherited, and any other takes the kept ones instead of checking them.
    """
    profiles = load_op_profiles(Path(profiles_root), Path(cache_folder) if cache_folder else None)
    return [cached_verdict(Path(path), display, profiles, keys, line, with_rows) for path, display, line in items]


def cached_verdict(path: Path, display: str, profiles: OpProfiles, keys: Optional["CacheKeys"] = None,
                   line: Optional[Tuple[str, str]] = None, with_row: bool = False) -> Tuple[Verdict, Optional[str]]:
    """One file's :class:`Verdict`, from its cache record when that is current, else by checking it.

    Args:
        path: The file.
        display: Its path as reports show it.
        profiles: The op profiles.
        keys: The run's :class:`~pipeline.result_cache.CacheKeys`; ``None`` to neither use nor make a record.
        line: The file's cache line (``(checksum, record)``), if the cache has one.
        with_row: Decode the ``list`` row of a reused record too.

    Returns:
        The verdict, and the cache line to store for the file (``None`` when there is nothing new to keep:
        no cache, the record was current, or the file cannot be read as a regular file).
    """
    from pipeline import result_cache as cache  # pylint: disable=import-outside-toplevel

    status = cache.regular_file_stat(path) if keys is not None else None
    if status is None:
        return verdict_of(check_file(path, display, profiles), None, with_row), None
    record = cache.parse_record(display, *line) if line is not None else None
    usable = record is not None and record.current(keys)
    if usable and record.unchanged(status):
        reused = decoded_verdict(display, record, with_row)
        if reused is not None:
            return reused, None
    read_ns = cache.now_ns()
    raw = read_spec_bytes(path)
    if raw is None:
        return verdict_of(check_file(path, display, profiles), None, with_row), None
    digest = cache.content_digest(raw)
    if usable and record.digest == digest:
        reused = decoded_verdict(display, record, with_row)
        if reused is not None:
            return reused, record.restated(status, read_ns).to_line(display)
    _, verdict, fresh = check_recorded(raw, display, profiles, keys, (status, read_ns, digest), with_row)
    return verdict, fresh.to_line(display) if fresh is not None else None


def check_recorded(raw: bytes, display: str, profiles: OpProfiles, keys: "CacheKeys",
                   read: Tuple[os.stat_result, int, str],
                   with_row: bool = False) -> Tuple[CheckedSpec, Verdict, Optional["Record"]]:
    """Check a file's bytes *raw* and make its cache record (for ``regen``, which needs the spec itself too).

    Args:
        raw: The bytes (:func:`read_spec_bytes`).
        display: The path reports show.
        profiles: The op profiles; the record notes which the check consulted.
        keys: The run's :class:`~pipeline.result_cache.CacheKeys`.
        read: ``(stat, when read, SHA-256 of raw)`` of the file as it was read.
        with_row: Give the verdict its ``list`` row.

    Returns:
        The check, its :class:`Verdict`, and its record (``None`` when it cannot be kept: a crash, or a
        problem about another file).
    """
    from pipeline import result_cache as cache  # pylint: disable=import-outside-toplevel
    from pipeline.yaml_source import load_bytes  # pylint: disable=import-outside-toplevel

    recording = cache.RecordingProfiles(profiles.profiles)
    watched = OpProfiles(profiles.root, recording)

    def check() -> Tuple[CheckedSpec, Optional[str]]:
        doc = load_bytes(raw, display)
        checked = check_document(doc, watched)
        if checked.result.outcome("load") is not Outcome.FAILED:
            checked = _with_ignores(checked, raw)
        return checked, stated_name_of(doc)

    checked, stated = _guarded(check, display)
    verdict = verdict_of(checked, stated, with_row)
    texts = cache.encode_verdict(verdict, verdict.row if with_row else list_row_of(checked))
    if texts is None or any(p.code == "check.internal" for p in verdict.result.problems):
        return checked, verdict, None
    dependencies = recording.dependencies()
    status, read_ns, digest = read
    return checked, verdict, cache.new_record(status, read_ns, digest, keys.environment, stated,
                                              (dependencies, keys.depends(cache.json_text(dependencies)), texts))


def read_spec_bytes(path: Path) -> Optional[bytes]:
    """The bytes the strict loader would read of *path* (up to one past its cap), or ``None`` if it cannot or it
    is no regular file (:func:`pipeline.stamps.open_regular`: a FIFO would block the open, a device mislead the
    read; the loader tells the caller's check why)."""
    from pipeline.yaml_source import MAX_BYTES  # pylint: disable=import-outside-toplevel

    try:
        with open_regular(path) as handle:
            return handle.read(MAX_BYTES + 1)
    except OSError:
        return None


def decoded_verdict(display: str, record: "Record", with_row: bool = False) -> Optional[Verdict]:
    """The verdict a record keeps, or ``None`` when it does not decode (a line not of this format)."""
    from pipeline.result_cache import decode_verdict  # pylint: disable=import-outside-toplevel

    try:
        return decode_verdict(display, record, with_row)
    except (KeyError, TypeError, ValueError, IndexError):
        return None


#: Files per worker below which starting a process does not pay: a worker forks, checks its share and sends its
#: verdicts back. Measured on 2 cores (cold check --no-cache, copies of the catalogue, medians of 3): 150 files
#: -j1 0.28 s, -j2 0.30 s; 300 files 0.37 s both; 600 files -j1 0.51 s, -j2 0.42 s. So two workers from 400.
FILES_PER_WORKER = 200
_CHUNK = 100


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


def verdicts(files: Sequence[Tuple[Path, str]], profiles: OpProfiles, jobs: Optional[int] = None,
             progress: Optional[Callable[[int], None]] = None, cache: Optional["ResultCache"] = None,
             with_rows: bool = False) -> List[Verdict]:
    """Each file's :class:`Verdict`, from the result cache where current, the rest checked in several processes
    when that pays (:func:`worker_count`); in path order.

    Args:
        files: ``(path, display name)`` pairs.
        profiles: The op profiles (each worker loads its own copy).
        jobs: The most worker processes to use; ``None`` for every usable core.
        progress: Called with the number of files finished since the last call.
        cache: The result cache; its new lines are added to it (:meth:`~pipeline.result_cache.ResultCache.add`),
            for the caller to save. ``None`` checks every file.
        with_rows: Give each verdict its ``list`` row (decoded from a reused record only when asked).
    """
    keys = cache.keys if cache is not None else None
    if cache is not None:
        cache.expect_lookups(len(files))
    found: List[Verdict] = []
    todo: List[Tuple[Path, str, Optional[Tuple[str, str]]]] = []
    for path, display in files:
        reused = cache.reuse(display, path, with_rows) if cache is not None else None
        if reused is not None:
            found.append(reused)
            if progress:
                progress(1)
            continue
        todo.append((path, display, cache.line(display) if cache is not None else None))
    folder = str(cache.folder) if cache is not None else None
    for verdict, line in _run_checks(todo, profiles, keys, worker_count(jobs, len(todo)), progress, with_rows,
                                     folder):
        found.append(verdict)
        if line is not None and cache is not None:
            cache.add_checked(verdict.result.file, line, with_rows)
    return sorted(found, key=lambda item: item.result.file)


def _run_checks(todo: Sequence[Tuple[Path, str, Optional[Tuple[str, str]]]], profiles: OpProfiles,
                keys: Optional["CacheKeys"], workers: int, progress: Optional[Callable[[int], None]],
                with_rows: bool, cache_folder: Optional[str] = None) -> Iterator[Tuple[Verdict, Optional[str]]]:
    """:func:`cached_verdict` of each item, here or over *workers* processes, as each finishes its chunk."""
    if workers == 1:
        for path, display, line in todo:
            yield cached_verdict(path, display, profiles, keys, line, with_rows)
            if progress:
                progress(1)
        return
    from concurrent.futures import ProcessPoolExecutor  # pylint: disable=import-outside-toplevel  # 10 ms a run

    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_check_chunk, [(str(p), d, line) for p, d, line in todo[start:start + _CHUNK]],
                               str(profiles.root), keys, with_rows, cache_folder)
                   for start in range(0, len(todo), _CHUNK)]
        for future in futures:
            part = future.result()
            yield from part
            if progress:
                progress(len(part))


def spec_names(files: Sequence[Tuple[Path, str]],
               cache: Optional["ResultCache"] = None) -> Dict[str, List[Tuple[str, str]]]:
    """The names the spec files state, case-folded, each with ``(name, display)`` of the files stating it.

    Only the ``name`` key is needed, so a run over a few changed specs can
    still see the names of all the others: it comes from the file's cache
    record when the file is unchanged (its ``stat``, else its bytes' digest),
    else from loading the file strictly (no other pass), and that is recorded.
    A file that does not load, or states no name, names nothing.

    Args:
        files: ``(path, display name)`` pairs.
        cache: The result cache, or ``None`` to load every file.
    """
    found = ((name for name, _ in cache.stated_names(files)) if cache is not None
             else (stated_name(path, display) for path, display in files))
    return names_of(files, found)


def names_of(files: Sequence[Tuple[Any, str]], names: Iterable[Optional[str]]) -> Dict[str, List[Tuple[str, str]]]:
    """:func:`spec_names` of *files*, ``(path, display)`` pairs, from the *names* they state (in order; ``None``
    names nothing)."""
    found: Dict[str, List[Tuple[str, str]]] = {}
    for (_, display), name in zip(files, names):
        if name is not None:
            found.setdefault(name.casefold(), []).append((name, display))
    return found


def stated_name(path: Path, display: str, cache: Optional["ResultCache"] = None) -> Optional[str]:
    """The ``name`` the file at *path* states, when it is text: from *cache* where current
    (:meth:`~pipeline.result_cache.ResultCache.stated_name`), else loaded."""
    if cache is not None:
        return cache.stated_name(path, display)
    from pipeline.yaml_source import load_path  # pylint: disable=import-outside-toplevel

    return stated_name_of(load_path(path, display))


def run_result(checked: Sequence[Verdict], strict: bool,
               elsewhere: Optional[Mapping[str, Sequence[Tuple[str, str]]]] = None) -> RunResult:
    """The run's result from each file's verdict, with the problems only the whole run can see.

    Two specs of one name (compared case-folded, as a case-insensitive file
    system would) would write one ``resolved/<name>.json``: each is refused,
    naming the other, under its ``semantic`` pass.

    Args:
        checked: Each file's :class:`Verdict`.
        strict: Whether warnings fail the run.
        elsewhere: :func:`spec_names` of the repository's specs this run did
            not check (``--changed-since``, or named files), so a checked spec
            cannot take the name of one left out.
    """
    others = elsewhere or {}
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
