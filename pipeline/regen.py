"""Keeping ``resolved/`` in step with the catalogue: which artifacts to write, keep and remove, and doing it safely.

``regen`` works in three steps. :func:`resolve_specs` checks specs and builds
the artifact of each whose stack resolves (:mod:`pipeline.artifacts`).
:func:`plan` compares that with what ``resolved/`` holds and decides, without
touching a file, the whole target tree: every artifact and the index, and
the orphans to remove. :func:`apply_plan` writes it; :func:`drift` is the
``--check`` mode, the same plan reported instead of written. The rules:

- **Only plain names become files.** A spec's name becomes
  ``resolved/<name>.json`` only when it is a plain file name
  (:func:`~pipeline.artifacts.name_problem`); any other name, and a name two
  specs share (compared case-folded, since macOS and Windows file systems
  do), is refused as a problem naming the spec, and nothing is written for it.
  Every write goes to ``folder / file`` for a file name checked that way, and a
  ``resolved/`` that is a symbolic link is refused, so nothing is ever written
  outside it.
- **Only what regen wrote is touched.** It overwrites or removes only its
  own files: carrying the generator mark, named after the ``name`` they
  state, and of the artifact's shape
  (:func:`~pipeline.artifacts.generated_problem`). A file of another origin
  where an artifact (or the index) belongs is reported and left alone; a
  file that carries the mark but is not regen's (a copy such as
  ``gpt2-backup.json``) is left alone with a warning, since a reader of
  ``resolved/`` could take it for an artifact. An artifact is an orphan, and
  removed, when the spec file it records is gone or now has another name;
  the file itself, not the index, says so, so a run killed between writing
  the index and removing an orphan still removes it next time.
- **A failing spec keeps its old artifact.** A spec that fails ``check`` (or
  whose stack does not resolve) is reported, and any artifact it had stays,
  listed in the index with ``current: false``: never dropped silently.
- **Atomic, locked, quiet.** Each file is replaced whole
  (:func:`~pipeline.atomic.write_atomic`: a temporary file in ``resolved/``,
  then a rename), artifacts before the index and removals last; a file whose
  text is already right is not rewritten. Two runs are serialised by a
  ``filelock`` lock on ``resolved/.regen.lock`` (``flock`` on POSIX, so a
  killed run's lock is released by the kernel), and the second waits for up
  to a given time, then fails with a message. ``--check`` takes the same
  lock to read, so it never reports a tree a running regen is half-way
  through as drift. Under the lock, a run first removes the temporary files
  a killed run left.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

from pipeline.artifacts import (INDEX_FILE, ArtifactInputs, IndexEntry, artifact_file, build_artifact, build_index,
                                carries_mark, generated_problem, name_problem, render)
from pipeline.op_profiles import VISION_ARCH, OpProfiles
from pipeline.problems import Problem, Severity
from pipeline.repo import SpecRepo
from pipeline.runner import CheckedSpec, check_paths

CODES: Dict[str, str] = {
    "regen.unsafe-name": "A spec's name cannot name its artifact file resolved/<name>.json (not a plain file name, "
                         "too long, or 'index'); no artifact is written for it.",
    "regen.duplicate-name": "Two specs have one name (compared case-folded), so one artifact file would serve both; "
                            "neither is written.",
    "regen.spec-fails": "A spec fails modelspec check; it gets no new artifact, and one it had is kept from an "
                        "earlier run.",
    "regen.no-stack": "A spec's layer stack does not resolve (no arch is stated or inferred); it gets no new "
                      "artifact, and one it had is kept.",
    "regen.not-generated": "A file where an artifact or the index belongs was not written by modelspec regen; it "
                           "is never overwritten.",
    "regen.looks-generated": "A file in resolved/ carries modelspec regen's mark but is not one of its artifacts (a "
                             "copy under another file name, or not the artifact's shape); regen neither overwrites "
                             "nor removes it. A warning.",
    "regen.missing": "regen --check: an artifact (or the index) that regen would write is missing.",
    "regen.stale": "regen --check: an artifact (or the index) differs from what regen would write.",
    "regen.orphaned": "regen --check: an artifact whose spec is gone or now has another name, which regen would "
                      "remove.",
}

#: The lock file inside ``resolved/`` that serialises runs (not an artifact; keep it out of git).
LOCK_FILE = ".regen.lock"

#: The pass name regen's problems carry.
REGEN_PASS = "regen"


class RegenError(Exception):
    """``resolved/`` cannot be written: locked by another run, a symbolic link, or not writable.

    A repository problem, not a spec's: the command reports it with exit code 2.
    """


@dataclass(frozen=True)
class Resolution:
    """One spec's outcome: its check, and its artifact when its stack resolved.

    Attributes:
        path: The spec's path as reports and artifacts show it.
        checked: The five passes' result.
        document: The artifact document, when the spec passed and its stack resolved.
        source: The spec file, read again only to locate its ``name`` for a problem about it.
    """

    path: str
    checked: CheckedSpec
    document: Optional[Dict] = None
    source: Optional[Path] = None

    @property
    def errors(self) -> Tuple[Problem, ...]:
        """The check's problems of severity error."""
        return tuple(p for p in self.checked.result.problems if p.severity is Severity.ERROR)

    def name_at(self) -> Tuple[int, int]:
        """``(line, column)`` where the spec states its ``name``; ``(1, 1)`` when it does not or cannot be read."""
        from pipeline.yaml_source import load_path  # pylint: disable=import-outside-toplevel

        if self.source is None:
            return 1, 1
        try:
            where = load_path(self.source, self.path).locate(("name",))
        except OSError:
            return 1, 1
        return where.line, where.column


def resolve_specs(repo: SpecRepo, files: Sequence[Path], profiles: OpProfiles,
                  progress: Optional[Callable[[int], None]] = None) -> List[Resolution]:
    """Check each spec file and build the artifact of each that passes with a resolved stack.

    Args:
        repo: The spec repository (paths are shown relative to its root).
        files: The spec files.
        profiles: The op profiles to resolve against.
        progress: Called with the number of files checked since the last call.

    Returns:
        One :class:`Resolution` per file, sorted by path.

    Raises:
        OSError: If a spec or profile file cannot be read after it was checked.
    """
    by_display = {repo.display(path): path for path in files}
    checked = check_paths(sorted(((path, display) for display, path in by_display.items()), key=lambda p: p[1]),
                          profiles, progress)
    profile_bytes: Dict[Path, bytes] = {}

    def read_profile(arch: str) -> bytes:
        path = profiles.get(arch).path
        if path not in profile_bytes:
            profile_bytes[path] = path.read_bytes()
        return profile_bytes[path]

    resolutions = []
    for item in checked:
        display = item.result.file
        passed = not any(p.severity is Severity.ERROR for p in item.result.problems)
        if not passed or item.spec is None or item.stack is None:
            resolutions.append(Resolution(display, item))
            continue
        inputs = ArtifactInputs(display, by_display[display].read_bytes(), read_profile(item.stack.arch),
                                read_profile(VISION_ARCH) if item.tower is not None else None)
        resolutions.append(Resolution(display, item, build_artifact(item, inputs, profiles.get(item.stack.arch)), by_display[display]))
    return resolutions


@dataclass(frozen=True)
class Existing:
    """A ``*.json`` file found in ``resolved/``.

    Attributes:
        file: Its name inside ``resolved/``.
        text: Its content, or ``None`` if it is not UTF-8 text.
        document: Its parsed content when regen wrote it
            (:func:`~pipeline.artifacts.generated_problem`), else ``None``.
        imitation: For a file that carries the generator mark but is not
            regen's, why not (e.g. ``"its name 'gpt2' is not its file name (that
            would be gpt2.json)"``); else ``None``.
        not_a_file: What a path of ``resolved/`` is when it is not a regular
            file (``a symbolic link``), else ``None``; such a path is the user's.
    """

    file: str
    text: Optional[str]
    document: Optional[Dict] = None
    imitation: Optional[str] = None
    not_a_file: Optional[str] = None

    @property
    def spec_path(self) -> Optional[str]:
        """The spec path an artifact regen wrote records, ``None`` for any other file."""
        path = (self.document or {}).get("path")
        return path if isinstance(path, str) else None


def read_resolved(folder: Path) -> Dict[str, Existing]:
    """Read every regular ``*.json`` file directly in *folder* (none if it does not exist), by name.

    Hidden files (the lock, a killed run's temporary files) are not read. A
    symbolic link or anything but a regular file is not read either, but is
    listed as a foreign file (``not_a_file`` says what it is): it is the
    user's, so regen never writes through it, over it or removes it, and
    ``--check`` reports it in the way rather than calling the artifact missing.
    """
    if not folder.is_dir():
        return {}
    found = {}
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        if path.is_symlink() or not path.is_file():
            what = "a symbolic link" if path.is_symlink() else "not a regular file"
            found[path.name] = Existing(path.name, None, not_a_file=what)
            continue
        try:
            text: Optional[str] = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            text = None
        try:
            document = json.loads(text) if text is not None else None
        except ValueError:
            document = None
        problem = generated_problem(path.name, document)
        found[path.name] = Existing(path.name, text, document if problem is None else None,
                                    problem if problem is not None and carries_mark(document) else None)
    return found


@dataclass(frozen=True)
class Plan:
    """The target state of ``resolved/``, decided without touching it.

    Attributes:
        files: Every file regen keeps or writes, by name, with its text: the
            artifacts in name order, then ``index.json``.
        sources: The spec path of each artifact of :attr:`files`, by file name.
        orphans: The artifacts to remove, by name, each with why, e.g. ``"its spec
            specs/x.yaml is gone"``.
        problems: Specs left without a new artifact, names refused, files in
            the way (errors); files that only look like artifacts (warnings).
        documents: The artifact documents of the target tree, by model name.
    """

    files: Mapping[str, str]
    sources: Mapping[str, str]
    orphans: Mapping[str, str]
    problems: Tuple[Problem, ...]
    documents: Mapping[str, Dict] = field(default_factory=dict)

    @property
    def artifacts(self) -> Tuple[str, ...]:
        """The artifact files of :attr:`files`: every file but the index."""
        return tuple(file for file in self.files if file != INDEX_FILE)

    @property
    def errors(self) -> Tuple[Problem, ...]:
        """The problems of severity error: each leaves a spec without its new artifact, or a file unwritten."""
        return tuple(problem for problem in self.problems if problem.severity is Severity.ERROR)


def _problem(file: str, where: Tuple[int, int], code: str, message: str,
             severity: Severity = Severity.ERROR) -> Problem:
    """A regen problem, of severity error unless told otherwise."""
    return Problem(file, where[0], where[1], REGEN_PASS, code, severity, message)


class _Planner:
    """The state of one :func:`plan`: the candidates for new artifacts, and what each refusal leaves."""

    def __init__(self, resolutions: Sequence[Resolution], spec_paths: Set[str],
                 existing: Mapping[str, Existing]) -> None:
        self.existing = existing
        self.spec_paths = spec_paths
        self.problems: List[Problem] = []
        self.in_the_way: Set[str] = set()   # files of another origin reported as blocking an artifact
        self.candidates: Dict[str, Resolution] = {}   # spec path -> resolution that would write
        for item in resolutions:
            if item.document is None:
                continue
            problem = name_problem(item.document["name"])
            if problem:
                self.problems.append(_problem(item.path, item.name_at(), "regen.unsafe-name", problem))
            else:
                self.candidates[item.path] = item

    def file_of(self, path: str) -> str:
        """The artifact file of the candidate *path*."""
        return artifact_file(self.candidates[path].document["name"])

    def refuse_duplicates(self) -> None:
        """Refuse every candidate whose file another candidate also claims (compared case-folded)."""
        claims: Dict[str, List[str]] = {}
        for path in self.candidates:
            claims.setdefault(self.file_of(path).casefold(), []).append(path)
        for paths in claims.values():
            if len(paths) < 2:
                continue
            for path in paths:
                item = self.candidates[path]
                others = ", ".join(other for other in paths if other != path)
                self.problems.append(_problem(path, item.name_at(), "regen.duplicate-name",
                                              f"name {item.document['name']!r} is also the name of {others}; one "
                                              "artifact file cannot serve two specs, so neither is written: give "
                                              "each model its own name"))
            for path in paths:
                del self.candidates[path]

    def present(self, spec_path: Optional[str]) -> bool:
        """Whether *spec_path* is still a spec, or lies in a folder that is one of :attr:`spec_paths` because it
        could not be read (:func:`~pipeline.runner.find_spec_files` lists such a folder): regen never removes an
        artifact because it could not read its spec."""
        if spec_path is None:
            return False
        parts = spec_path.split("/")
        return any("/".join(parts[:end]) in self.spec_paths for end in range(1, len(parts) + 1))

    def kept(self) -> Dict[str, Existing]:
        """The artifacts that stay as they are: their spec is still there (or unreadable) and writes no new one."""
        return {name: item for name, item in self.existing.items()
                if self.present(item.spec_path) and item.spec_path not in self.candidates}

    def refuse_blocked(self) -> None:
        """Refuse candidates whose file holds a foreign file or an artifact another present spec keeps.

        Repeated until nothing changes: a refused candidate keeps its own old
        artifact, which may in turn block another candidate.
        """
        changed = True
        while changed:
            changed = False
            kept = {name.casefold(): item for name, item in self.kept().items()}
            foreign = {name.casefold(): name for name, item in self.existing.items() if item.document is None}
            for path in sorted(self.candidates):
                item, file = self.candidates[path], self.file_of(path)
                if file.casefold() in foreign:
                    blocking = self.existing[foreign[file.casefold()]]
                    self.in_the_way.add(blocking.file)
                    self.problems.append(_problem(f"resolved/{blocking.file}", (1, 1), "regen.not-generated",
                                                  f"resolved/{blocking.file} was not written by modelspec regen"
                                                  f"{_why_not(blocking)}, so the artifact of {path} is not written "
                                                  "over it; move that file out of resolved/ or rename the model"))
                elif file.casefold() in kept:
                    owner = kept[file.casefold()].spec_path
                    self.problems.append(_problem(path, item.name_at(), "regen.duplicate-name",
                                                  f"name {item.document['name']!r} is the name of {owner}'s artifact "
                                                  f"resolved/{kept[file.casefold()].file}; give each model its own "
                                                  "name"))
                else:
                    continue
                del self.candidates[path]
                changed = True

    def index_problem(self) -> Optional[Problem]:
        """The problem of an ``index.json`` regen did not write, which is then not written over; else ``None``.

        Such an index is recorded as in the way, so :meth:`imitations` does not warn about it too.
        """
        index = self.existing.get(INDEX_FILE)
        if index is None or index.document is not None:
            return None
        self.in_the_way.add(INDEX_FILE)
        return _problem(f"resolved/{INDEX_FILE}", (1, 1), "regen.not-generated",
                        f"resolved/{INDEX_FILE} was not written by modelspec regen{_why_not(index)}, so the index of "
                        "the artifacts is not written over it; move that file out of resolved/")

    def imitations(self) -> List[Problem]:
        """A warning for each file that carries regen's mark but is not regen's, unless it is reported as in the way."""
        return [_problem(f"resolved/{item.file}", (1, 1), "regen.looks-generated",
                         f"resolved/{item.file} carries the mark of modelspec regen but is not an artifact it wrote: "
                         f"{item.imitation}; regen neither overwrites nor removes it, but a reader of resolved/ could "
                         "take it for one: delete it or move it out of resolved/", Severity.WARNING)
                for item in self.existing.values() if item.imitation and item.file not in self.in_the_way]

    def orphan_reason(self, item: Existing) -> str:
        """Why the artifact *item*, neither written nor kept, is removed: its spec is gone or has another name."""
        if item.spec_path in self.candidates:
            return (f"its spec {item.spec_path} now has the name {self.candidates[item.spec_path].document['name']!r}"
                    f" (resolved/{self.file_of(str(item.spec_path))})")
        return f"its spec {item.spec_path} is gone"


def _why_not(item: Existing) -> str:
    """`` (<why>)`` for a file that carries regen's mark but is not regen's; ``""`` for any other foreign file."""
    if item.not_a_file:
        return f" (it is {item.not_a_file}, which regen never writes through or over)"
    return f" ({item.imitation})" if item.imitation else ""


def _failure(item: Resolution, kept: Sequence[str]) -> Problem:
    """The problem of a spec that gets no new artifact because it fails check or its stack does not resolve."""
    keeps = (f"its artifact {', '.join('resolved/' + file for file in kept)} is kept from an earlier run"
             if kept else "it has no artifact")
    if item.errors:
        first = item.errors[0]
        count = len(item.errors)
        return _problem(item.path, (first.line, first.column), "regen.spec-fails",
                        f"fails modelspec check ({count} error{'s' if count > 1 else ''}, the first "
                        f"[{first.code}] at line {first.line}); {keeps}; run modelspec check {item.path}")
    why = next((p for p in item.checked.result.problems if p.pass_name == "stack"), None)
    where = (why.line, why.column) if why else (1, 1)
    detail = f" ([{why.code}] {why.message})" if why else ""
    return _problem(item.path, where, "regen.no-stack",
                    f"its layer stack does not resolve{detail}; {keeps}")


def _was_current(existing: Mapping[str, Existing]) -> Dict[str, bool]:
    """The ``current`` flag of each file in the index ``resolved/`` holds now."""
    index = existing.get(INDEX_FILE)
    entries = (index.document or {}).get("artifacts", []) if index else []
    return {entry["file"]: entry.get("current") is not False for entry in entries
            if isinstance(entry, dict) and isinstance(entry.get("file"), str)}


def plan(resolutions: Sequence[Resolution], spec_paths: Sequence[str], existing: Mapping[str, Existing]) -> Plan:
    """Decide the target tree of ``resolved/``.

    Args:
        resolutions: The specs resolved this run: all of them, or only those
            ``--changed-since`` selected.
        spec_paths: Every spec file of the repository now (display paths),
            resolved this run or not: an artifact whose spec is among them stays
            unless the spec writes a new one.
        existing: The ``*.json`` files ``resolved/`` holds now (:func:`read_resolved`).

    Returns:
        The :class:`Plan`: the artifacts written this run, those kept, the
        index listing them all, the orphans, and every problem. An artifact
        kept for a spec resolved this run is listed with ``current: false``;
        one kept for a spec not resolved this run keeps the flag it had.
    """
    planner = _Planner(resolutions, set(spec_paths), existing)
    planner.refuse_duplicates()
    planner.refuse_blocked()
    resolved_now = {item.path for item in resolutions}
    was_current = _was_current(existing)
    entries, files, sources, documents = [], {}, {}, {}
    for path, item in planner.candidates.items():
        file, document = planner.file_of(path), item.document
        files[file], sources[file], documents[document["name"]] = render(document), path, document
        entries.append(IndexEntry(document["name"], file, path, document["digest"]))
    kept_by_spec: Dict[str, List[str]] = {}
    for file, item in planner.kept().items():
        document, path = item.document or {}, str(item.spec_path)
        files[file], sources[file], documents[str(document.get("name"))] = item.text or "", path, document
        current = path not in resolved_now and was_current.get(file, True)
        entries.append(IndexEntry(str(document.get("name")), file, path, str(document.get("digest")), current))
        kept_by_spec.setdefault(path, []).append(file)
    problems = planner.problems + [_failure(item, sorted(kept_by_spec.get(item.path, ()))) for item in resolutions
                                   if item.document is None]
    ordered = dict(sorted(files.items()))
    index_problem = planner.index_problem()
    if index_problem is None:
        ordered[INDEX_FILE] = render(build_index(entries))
    else:
        problems.append(index_problem)
    problems.extend(planner.imitations())
    orphans = {name: planner.orphan_reason(item) for name, item in existing.items()
               if item.document is not None and name != INDEX_FILE and name not in ordered}
    return Plan(ordered, dict(sorted(sources.items())), dict(sorted(orphans.items())), tuple(sorted(problems)),
                dict(sorted(documents.items())))


def drift(target: Plan, existing: Mapping[str, Existing], folder_name: str = "resolved") -> Tuple[Problem, ...]:
    """Return what ``regen --check`` reports: each file missing, stale or orphaned, and the plan's own problems.

    Args:
        target: The plan a run would apply.
        existing: What ``resolved/`` holds now.
        folder_name: The folder as reports show it.
    """
    found = list(target.problems)
    for file, text in target.files.items():
        shown = f"{folder_name}/{file}"
        source = f" (from {target.sources[file]})" if file in target.sources else ""
        if file not in existing:
            found.append(_problem(shown, (1, 1), "regen.missing", f"{shown} is missing{source}; run modelspec regen"))
        elif existing[file].text != text:
            found.append(_problem(shown, (1, 1), "regen.stale",
                                  f"{shown} is out of date{source}; run modelspec regen"))
    for file, why in target.orphans.items():
        shown = f"{folder_name}/{file}"
        found.append(_problem(shown, (1, 1), "regen.orphaned",
                              f"{shown} is orphaned: {why}; run modelspec regen to remove it"))
    return tuple(sorted(found))


@dataclass(frozen=True)
class Applied:
    """What :func:`apply_plan` did.

    Attributes:
        written: The files written (new or changed), in order.
        removed: The orphans removed, each with why (:attr:`Plan.orphans`).
        unchanged: How many files of the plan already held the right text.
    """

    written: Tuple[str, ...]
    removed: Tuple[Tuple[str, str], ...]
    unchanged: int

    @property
    def changed(self) -> bool:
        """Whether any file was written or removed."""
        return bool(self.written or self.removed)


def _writable(folder: Path) -> None:
    """Create *folder* if needed; refuse one that is a symbolic link or not a folder.

    Raises:
        RegenError: If it is a symbolic link, a file, or cannot be created.
    """
    if folder.is_symlink():
        raise RegenError(f"{folder} is a symbolic link; regen writes only into a real folder, so replace the link "
                         "with a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise RegenError(f"{folder} is a file; regen needs a folder there") from None
    except OSError as error:
        raise RegenError(f"cannot create {folder}: {error.strerror}") from None


@contextlib.contextmanager
def locked(folder: Path, wait: float, create: bool = True) -> Iterator[None]:
    """Hold the regen lock of *folder*, waiting up to *wait* seconds for another run.

    A writer (*create*) creates the folder first. A reader (``--check``,
    *create* false) takes the same lock, so it never reads a tree a running
    regen is half-way through; where the folder does not exist there is
    nothing to read and no lock to take, and nothing is created.

    Raises:
        RegenError: If another run holds the lock past *wait*, the folder is
            a symbolic link or a file or cannot be created, or the lock file
            cannot be opened.
    """
    import filelock  # pylint: disable=import-outside-toplevel

    if not create and not folder.exists() and not folder.is_symlink():
        yield
        return
    _writable(folder)
    lock = filelock.FileLock(str(folder / LOCK_FILE), timeout=wait)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise RegenError(f"another modelspec regen holds {folder / LOCK_FILE} and did not finish within {wait:g} s; "
                         "wait for it to finish, or give it longer with --wait SECONDS") from None
    except OSError as error:
        raise RegenError(f"cannot open the lock file {folder / LOCK_FILE}: {error.strerror}") from None
    try:
        yield
    finally:
        lock.release()


def remove_leftovers(folder: Path) -> Tuple[str, ...]:
    """Remove the temporary files a killed run left in *folder* (``.<name>.<random>.tmp``); call under the lock.

    Returns:
        The names removed.
    """
    removed = []
    for path in sorted(folder.glob(".*.tmp")):
        if path.is_file() and not path.is_symlink():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            removed.append(path.name)
    return tuple(removed)


def apply_plan(target: Plan, folder: Path, existing: Mapping[str, Existing],
               on_change: Optional[Callable[[str, str], None]] = None) -> Applied:
    """Make *folder* hold the plan: write each file whose text differs, the index last, then remove the orphans.

    Call it under :func:`locked`, with *existing* read under the same lock.

    Args:
        target: The plan.
        folder: ``resolved/``.
        existing: What the folder held when the plan was made.
        on_change: Called as ``on_change("wrote", file)`` or ``on_change("removed", file)`` after each change.

    Raises:
        RegenError: If a file cannot be written or removed.
    """
    written, removed = [], []
    unchanged = 0
    from pipeline.atomic import write_atomic  # pylint: disable=import-outside-toplevel

    for file, text in target.files.items():
        if file in existing and existing[file].text == text:
            unchanged += 1
            continue
        path = folder / file
        if path.parent != folder:
            raise RegenError(f"{file!r} is not a file name inside {folder}")
        try:
            write_atomic(path, text)
        except OSError as error:
            raise RegenError(f"cannot write {path}: {error.strerror}") from None
        written.append(file)
        if on_change:
            on_change("wrote", file)
    for file, why in target.orphans.items():
        try:
            (folder / file).unlink()
        except FileNotFoundError:
            pass
        except OSError as error:
            raise RegenError(f"cannot remove {folder / file}: {error.strerror}") from None
        removed.append((file, why))
        if on_change:
            on_change("removed", file)
    _fsync_folder(folder)
    return Applied(tuple(written), tuple(removed), unchanged)


def _fsync_folder(folder: Path) -> None:
    """Flush *folder*'s entries (the renames and removals) to disk, where the platform can open a folder."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
