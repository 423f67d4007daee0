"""Keeping ``resolved/`` in step with the catalogue: which artifacts to write, keep and remove, and doing it safely.

``regen`` works in three steps. :func:`resolve_specs` checks specs and builds
the artifact of each whose stack resolves (:mod:`pipeline.catalogue.artifacts`); with the
artifact cache (:mod:`pipeline.cache.artifacts`), a spec whose artifact the cache
knows is neither checked nor built, and a file of ``resolved/`` the cache vouches
for is not read (:func:`read_resolved`): the plan holds such a file's bytes by
their digest (:class:`~pipeline.cache.artifacts.Vouched`), and a writing run
builds a known artifact whose file does not hold them before it writes it
(:func:`unbuilt`, :func:`rebuild`).
:func:`plan` compares that with what ``resolved/`` holds and decides, without
touching a file, the whole target tree: every artifact and the index, and
the orphans to remove. :func:`apply_plan` writes it; :func:`drift` is the
``--check`` mode, the same plan reported instead of written. The rules:

- **Only plain names become files.** A spec's name becomes
  ``resolved/<name>.json`` only when it is a plain file name
  (:func:`~pipeline.catalogue.artifacts.name_problem`); any other name, and a name two
  specs share (compared case-folded, since macOS and Windows file systems
  do), is refused as a problem naming the spec, and nothing is written for it.
  Every write goes to ``folder / file`` for a file name checked that way, and a
  ``resolved/`` that is a symbolic link is refused, so nothing is ever written
  outside it.
- **Only what regen wrote is touched.** It overwrites or removes only its
  own files: carrying the generator mark, named after the ``name`` they
  state, and of the artifact's shape
  (:func:`~pipeline.catalogue.artifacts.generated_problem`). A file of another origin
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
  (:class:`~pipeline.catalogue.atomic.Batch`: each text to a temporary file in ``resolved/``,
  all of them flushed to disk at once, then each renamed), artifacts before the index and removals last; a file whose
  text is already right is not rewritten. Over worker processes, each worker writes the temporary files of the
  artifacts ``resolved/`` lacks as it renders them (:attr:`Resolution.staged`); only the plan renames one, and
  the rest are removed. Two runs are serialised by a
  ``filelock`` lock on ``resolved/.regen.lock`` (``flock`` on POSIX, so a
  killed run's lock is released by the kernel), which a writing run holds from before its first check, and the
  second waits for up to a given time, then fails with a message. ``--check`` takes the same
  lock to read, so it never reports a tree a running regen is half-way
  through as drift. Under the lock, a run first removes the temporary files
  a killed run left.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat as stat_module
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Union

import filelock

from pipeline.cache.artifacts import Vouched, new_entry
from pipeline.cache.results import CacheKeys, ProfileCache, now_ns, regular_file_stat
from pipeline.cache.stamps import content_digest
from pipeline.cache.verdicts import check_recorded, decoded_verdict
from pipeline.catalogue.artifacts import (ARTIFACT_SUFFIX, INDEX_FILE, ArtifactInputs, IndexEntry, build_artifact,
                                          build_index, carries_mark, generated_problem, name_problem, render)
from pipeline.catalogue.atomic import Batch, stage_file
from pipeline.spec.writes import refuse_write
from pipeline.check.repo import SpecRepo
from pipeline.check.runner import CheckedSpec, check_file, worker_count
from pipeline.check.verdict import read_spec_bytes
from pipeline.pricing.op_profiles import VISION_ARCH, OpProfiles, load_op_profiles
from pipeline.spec.problems import Problem, Severity
from pipeline.spec.yaml_source import load_path

if TYPE_CHECKING:
    from pipeline.cache.artifacts import ArtifactCache
    from pipeline.cache.results import Record, ResultCache

#: A file's text as a plan holds it: the text itself, or the bytes the artifact cache knows it holds.
Text = Union[str, "Vouched"]

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
    "regen.stray": "regen --check: a file in resolved/ that regen would not write (no generator mark, a name no "
                   "spec gives, or not an artifact's shape); anything reading resolved/ could take it for an "
                   "artifact, so the check fails until it is deleted or moved out.",
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
        checked: The five passes' result; ``None`` when the artifact cache knows the spec's artifact (an entry is
            made only for a spec that passed, and is used only for the same bytes under the same profiles and
            environment, so it passes now), or ``diff``'s memo does (:mod:`pipeline.cache.diff_memo`: the same,
            by the bytes' git blob; without *vouched*).
        document: The artifact document, when the spec passed and its stack resolved; for an artifact the
            cache knows (*vouched*), only the members a plan reads (``name``, ``path``, ``digest``).
        source: The spec file (a path or its string: ``diff`` keeps ten thousand it does not build as strings),
            read again only to locate its ``name`` for a problem about it, or to build it after all (:func:`rebuild`).
        record: The spec's result-cache record, when there is a cache (what an entry of its artifact is keyed by).
        vouched: The artifact's bytes as the artifact cache knows them, when it was not built
            (:mod:`pipeline.cache.artifacts`).
        rendered: The artifact's text, when a worker process built and rendered it (:func:`_portable`): then
            *document* holds only the members a plan reads, as for a *vouched* one.
        rendered_sha256: The SHA-256 of *rendered*'s UTF-8 bytes, which the worker took (for the artifact cache's
            entry: :func:`remember`).
        staged: A temporary file holding *rendered*, when the worker wrote one (:func:`_staged`) for an artifact
            file ``resolved/`` did not have: :func:`apply_plan` renames it into place if the plan writes that
            text there, and :func:`discard_staged` removes it otherwise.
    """

    path: str
    checked: Optional[CheckedSpec]
    document: Optional[Dict] = None
    source: "str | os.PathLike[str] | None" = None
    record: Optional["Record"] = None
    vouched: Optional["Vouched"] = None
    rendered: Optional[str] = None
    rendered_sha256: Optional[str] = None
    staged: Optional[str] = None

    @property
    def text(self) -> Text:
        """The artifact's text as regen writes it (or the bytes the cache knows it is); call only with a document."""
        if self.vouched is not None:
            return self.vouched
        return self.rendered if self.rendered is not None else render(self.document)

    @property
    def errors(self) -> Tuple[Problem, ...]:
        """The check's problems of severity error."""
        problems = self.checked.result.problems if self.checked is not None else ()
        return tuple(p for p in problems if p.severity is Severity.ERROR)

    def name_at(self) -> Tuple[int, int]:
        """``(line, column)`` where the spec states its ``name``; ``(1, 1)`` when it does not or cannot be read."""
        if self.source is None:
            return 1, 1
        try:
            where = load_path(Path(self.source), self.path).locate(("name",))
        except OSError:
            return 1, 1
        return where.line, where.column


def resolve_specs(repo: SpecRepo, files: Sequence["str | os.PathLike[str]"], profiles: OpProfiles,
                  progress: Optional[Callable[[int], None]] = None,
                  cache: Optional["ArtifactCache"] = None,
                  shown: Optional[Mapping[Any, str]] = None, jobs: Optional[int] = 1,
                  stage_in: Optional[Path] = None) -> List[Resolution]:
    """Check each spec file and build the artifact of each that passes with a resolved stack.

    With *cache*, a spec whose result-cache record is current and stands for its bytes
    (:func:`_known`) is not checked: one that fails takes its verdict from the record, and one whose
    artifact the cache knows (:meth:`~pipeline.cache.artifacts.Entry.decides`) is not built either, its
    resolution holding what the cache knows of the artifact (:attr:`Resolution.vouched`). Every other spec
    is checked from the bytes its artifact is built from, and its new record added to the cache.

    The specs left to check are spread over worker processes as ``check`` spreads files
    (:func:`~pipeline.check.runner.worker_count` of *jobs*), each worker rendering the artifacts it builds
    (:func:`_portable`); the text written is the same however many build it. With *stage_in* (``resolved/``, whose
    lock the caller holds), a worker also writes each text whose artifact file is not there yet to a temporary
    file beside it (:attr:`Resolution.staged`), so a regen from empty writes its files on every core; the caller
    renames (:func:`apply_plan`) or removes (:func:`discard_staged`) each.

    Args:
        repo: The spec repository (paths are shown relative to its root).
        files: The spec files (paths, or their strings).
        profiles: The op profiles to resolve against.
        progress: Called with the number of files checked since the last call.
        cache: The artifact cache (with the result cache), or ``None`` to check and build every spec.
        shown: Each file's display path, when the caller has them (else ``repo.display``).
        jobs: The most worker processes; ``None`` for the cores other work leaves idle, ``1`` (the default)
            to build here, with every document whole.
        stage_in: The folder the artifacts go to, when the caller holds its lock and writes them.

    Returns:
        One :class:`Resolution` per file, sorted by path.

    Raises:
        OSError: If a spec or profile file cannot be read after it was checked.
    """
    resolutions, todo = [], []
    if cache is not None:
        cache.expect_lookups(len(files))
    display_of = shown.__getitem__ if shown is not None else repo.display
    for display, path in sorted((display_of(path), path) for path in files):
        known = _known(display, path, cache) if cache is not None else None
        if known is None:
            todo.append((display, path))
            continue
        resolutions.append(known)
        if progress:
            progress(1)
    resolutions.extend(_built(todo, profiles, cache, worker_count(jobs, len(todo)), progress, stage_in))
    return sorted(resolutions, key=lambda item: item.path)


#: Specs a worker process resolves per task it is sent.
_CHUNK = 100


def _built(todo: Sequence[Tuple[str, "str | os.PathLike[str]"]], profiles: OpProfiles,
           cache: Optional["ArtifactCache"], workers: int, progress: Optional[Callable[[int], None]],
           stage_in: Optional[Path]) -> Iterator[Resolution]:
    """Each ``(display, path)`` of *todo* checked and built (:meth:`_Builder.resolve`), here or over *workers*
    processes (staging into *stage_in*), as each finishes its chunk; each new record is added to *cache*."""
    if workers == 1:
        builder = _Builder.of(profiles, cache)
        for display, path in todo:
            yield builder.resolve(path, display)
            if progress:
                progress(1)
        return
    keys, folder = (cache.keys, str(cache.folder)) if cache is not None else (None, None)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_resolve_chunk, [(str(path), display) for display, path in todo[start:start + _CHUNK]],
                               str(profiles.root), keys, folder, stage_in and str(stage_in))
                   for start in range(0, len(todo), _CHUNK)]
        for future in futures:
            part = future.result()
            for item in part:  # a worker makes records; the cache is this process's
                if item.record is not None:
                    cache.results.add(item.path, item.record.to_line(item.path))
            yield from part
            if progress:
                progress(len(part))


def _resolve_chunk(items: Sequence[Tuple[str, str]], profiles_root: str, keys: Optional[CacheKeys],
                   cache_folder: Optional[str], stage_in: Optional[str]) -> List[Resolution]:
    """Worker: each ``(path, display)`` of a chunk checked, built, made portable and staged into *stage_in*
    (picklable arguments only).

    The profiles are loaded as the command loaded them (with its cache folder), so a forked worker finds them in
    the memo it inherited, as :func:`pipeline.cache.verdicts._check_chunk`'s do.
    """
    profiles = load_op_profiles(Path(profiles_root), ProfileCache(Path(cache_folder)) if cache_folder else None)
    builder = _Builder(profiles, keys)
    portable = [_portable(builder.resolve(Path(path), display)) for path, display in items]
    return portable if stage_in is None else [_staged(item, Path(stage_in)) for item in portable]


def _portable(item: Resolution) -> Resolution:
    """*item* as a worker sends it back: the check's result and where the name is (all a plan reads of a check),
    and for a built artifact its rendered text beside the members of its document a plan reads (``name``,
    ``path``, ``digest``), so neither the spec, its stack nor the document is pickled."""
    checked = item.checked if item.checked is None else CheckedSpec(item.checked.result,
                                                                    name_at=item.checked.name_at)
    if item.document is None:
        return replace(item, checked=checked)
    members = {key: item.document[key] for key in ("name", "path", "digest")}
    text = render(item.document)
    return replace(item, checked=checked, document=members, rendered=text,
                   rendered_sha256=content_digest(text.encode("utf-8")))


def _staged(item: Resolution, folder: Path) -> Resolution:
    """*item* with its text written to a temporary file in *folder* (:func:`~pipeline.catalogue.atomic.stage_file`)
    when it has a plain name (:func:`~pipeline.catalogue.artifacts.name_problem`) whose artifact file *folder*
    does not hold, not even as a link: one it holds may be the text already, or not regen's to replace, which the
    plan decides."""
    name = item.document.get("name") if item.rendered is not None else None
    if not isinstance(name, str) or name_problem(name) is not None:
        return item
    path = folder / (name + ARTIFACT_SUFFIX)
    if os.path.lexists(path):
        return item
    try:
        return replace(item, staged=stage_file(path, item.rendered))
    except OSError:  # the command's own write of it says why
        return item


def discard_staged(resolutions: Sequence[Resolution]) -> None:
    """Remove each temporary file a worker staged that :func:`apply_plan` did not rename into place (a file the
    plan does not write, or a run that stopped before writing)."""
    for item in resolutions:
        if item.staged is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(item.staged)


def rebuild(resolutions: Sequence[Resolution], paths: Set[str], profiles: OpProfiles,
            cache: Optional["ArtifactCache"] = None) -> List[Resolution]:
    """*resolutions* with those of the spec *paths* checked and built afresh (a known artifact whose file is not
    what the cache knew, which regen must write)."""
    builder = _Builder.of(profiles, cache)
    return [builder.resolve(item.source, item.path) if item.path in paths and item.source is not None else item
            for item in resolutions]


def _known(display: str, path: "str | os.PathLike[str]", cache: "ArtifactCache") -> Optional[Resolution]:
    """The resolution of a spec the cache answers, or ``None``: its record is current (``Record.current``)
    and its stat stands for its bytes (``Record.unchanged``) or their digest is the record's (the record is
    then restated), and the cache knows its artifact, or its recorded verdict fails check."""
    record = cache.results.record(display)
    status = regular_file_stat(path) if record is not None and record.current(cache.keys) else None
    if status is None:
        return None
    if not record.unchanged(status):
        read_ns = now_ns()
        raw = read_spec_bytes(path)
        if raw is None or content_digest(raw) != record.digest:
            return None
        record = record.restated(status, read_ns)
        cache.results.add(display, record.to_line(display))
    entry = cache.entry(display)
    if entry is not None and entry.decides(record, cache.keys):
        return Resolution(display, None, entry.document(display), path, record, Vouched(entry.sha256))
    verdict = decoded_verdict(display, record)
    if verdict is None or not any(problem.severity is Severity.ERROR for problem in verdict.result.problems):
        return None
    return Resolution(display, CheckedSpec(verdict.result, name_at=verdict.name_at), record=record)


class _Builder:
    """Checks specs and builds their artifacts, reading each profile file once."""

    def __init__(self, profiles: OpProfiles, keys: Optional[CacheKeys],
                 results: Optional["ResultCache"] = None) -> None:
        """Records are made under *keys* (none without), and added to *results* when given (a worker's are added
        by the command, which holds the cache)."""
        self.profiles = profiles
        self.keys = keys
        self.results = results
        self._profile_bytes: Dict[Path, bytes] = {}

    @classmethod
    def of(cls, profiles: OpProfiles, cache: Optional["ArtifactCache"]) -> "_Builder":
        """A builder whose records go into *cache* (none without)."""
        return cls(profiles, cache.keys, cache.results) if cache is not None else cls(profiles, None)

    def _profile(self, arch: str) -> bytes:
        path = self.profiles.get(arch).path
        if path not in self._profile_bytes:
            self._profile_bytes[path] = path.read_bytes()
        return self._profile_bytes[path]

    def resolve(self, path: "str | os.PathLike[str]", display: str) -> Resolution:
        """Check the spec at *path* (making its record, with keys) and build its artifact if it resolves."""
        path = Path(path)
        status = regular_file_stat(path) if self.keys is not None else None
        read_ns = now_ns()
        raw = read_spec_bytes(path) if status is not None else None
        record = None
        if raw is None:
            checked = check_file(path, display, self.profiles)
        else:
            checked, _, record = check_recorded(raw, display, self.profiles, self.keys,
                                                (status, read_ns, content_digest(raw)))
            if record is not None and self.results is not None:
                self.results.add(display, record.to_line(display))
        passed = not any(p.severity is Severity.ERROR for p in checked.result.problems)
        if not passed or checked.spec is None or checked.stack is None:
            return Resolution(display, checked, record=record)
        inputs = ArtifactInputs(display, raw if raw is not None else path.read_bytes(),
                                self._profile(checked.stack.arch),
                                self._profile(VISION_ARCH) if checked.tower is not None else None)
        return Resolution(display, checked, build_artifact(checked, inputs, self.profiles.get(checked.stack.arch)),
                          path, record)


@dataclass(frozen=True)
class Existing:
    """A ``*.json`` file found in ``resolved/``.

    Attributes:
        file: Its name inside ``resolved/``.
        text: Its content, or ``None`` if it is not UTF-8 text.
        document: Its parsed content when regen wrote it
            (:func:`~pipeline.catalogue.artifacts.generated_problem`), else ``None``.
        imitation: For a file that carries the generator mark but is not
            regen's, why not (e.g. ``"its name 'gpt2' is not its file name (that
            would be gpt2.json)"``); else ``None``.
        not_a_file: What a path of ``resolved/`` is when it is not a regular
            file (``a symbolic link``), else ``None``; such a path is the user's.
        status: Its ``stat`` taken before it was read (a regular file only).
        read_ns: When it was read (``time.time_ns()``), for the artifact cache's racy rule.
        rendered: Whether its bytes are an index regen wrote or found equal to the one it would write (the
            artifact cache's index digest): then its text is regen's rendering of its document, so it is the
            text of another index exactly when their documents are equal.

    A file the artifact cache vouches for (:meth:`~pipeline.cache.artifacts.Entry.vouches`) is not parsed:
    its *text* is the :class:`~pipeline.cache.artifacts.Vouched` bytes and its *document* holds only what a
    plan reads (``name``, ``path``, ``digest``).
    """

    file: str
    text: Optional[Text]
    document: Optional[Dict] = None
    imitation: Optional[str] = None
    not_a_file: Optional[str] = None
    status: Optional[os.stat_result] = None
    read_ns: int = 0
    rendered: bool = False

    @property
    def spec_path(self) -> Optional[str]:
        """The spec path an artifact regen wrote records, ``None`` for any other file."""
        path = (self.document or {}).get("path")
        return path if isinstance(path, str) else None


def read_resolved(folder: Path, cache: Optional["ArtifactCache"] = None) -> Dict[str, Existing]:
    """Read every regular ``*.json`` file directly in *folder* (none if it does not exist), by name.

    Hidden files (the lock, a killed run's temporary files) are not read. A
    symbolic link or anything but a regular file is not read either, but is
    listed as a foreign file (``not_a_file`` says what it is): it is the
    user's, so regen never writes through it, over it or removes it, and
    ``--check`` reports it in the way rather than calling the artifact missing.

    With *cache*, an artifact file whose entry vouches for its stat is not read, and one whose bytes hash to
    its entry's is not parsed (the entry is restated): see :mod:`pipeline.cache.artifacts`. ``index.json`` is
    always read.
    """
    if not folder.is_dir():
        return {}
    entries = cache.by_file() if cache is not None else {}
    found = {}
    for name in listed_files(folder):
        item = _read_one(os.path.join(folder, name), name, entries.get(name, ()) if name != INDEX_FILE else (),
                         cache)
        if item is not None:
            found[name] = item
    return found


def listed_files(folder: Path) -> List[str]:
    """The names of the files of ``resolved/`` regen reads, sorted: ``*.json`` (not ``.json`` itself) that are not
    hidden (the lock, a killed run's temporary files).

    Raises:
        OSError: If *folder* cannot be listed.
    """
    with os.scandir(folder) as listing:
        return sorted(entry.name for entry in listing
                      if entry.name.endswith(".json") and not entry.name.startswith("."))


def _read_one(path: str, name: str, claims, cache: Optional["ArtifactCache"]) -> Optional[Existing]:
    """The :class:`Existing` of the file *name* of ``resolved/`` at *path* (``None`` when it is gone): a file that
    is not regular, unread; one an entry of *claims* (``(spec path, entry)`` of the artifact cache naming it)
    vouches for, unread; one whose bytes an entry knows, unparsed (the entry restated in *cache*); else parsed
    (:func:`_parsed`)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat_module.S_ISREG(status.st_mode):
        return Existing(name, None, not_a_file="a symbolic link" if stat_module.S_ISLNK(status.st_mode)
                        else "not a regular file")
    vouched = _claim(claims, lambda entry: entry.vouches(status))
    if vouched is not None:
        return _vouched(name, *vouched, status, 0)
    read_ns = now_ns()
    with open(path, "rb") as handle:
        data = handle.read()
    same = _same_bytes(data, claims)
    if same is not None:
        spec, entry = same
        cache.add(spec, entry.restated(status, read_ns))
        return _vouched(name, spec, entry, status, read_ns)
    return _parsed(name, data, status, read_ns, cache)


def _parsed(name: str, data: bytes, status: os.stat_result, read_ns: int,
            cache: Optional["ArtifactCache"]) -> Existing:
    """The :class:`Existing` of the file *name* of ``resolved/`` holding *data*, parsed and judged as regen's own
    or not (an index whose bytes the cache knows as regen's rendering is not judged again)."""
    try:
        text: Optional[str] = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    try:
        document = json.loads(text) if text is not None else None
    except ValueError:
        document = None
    rendered = name == INDEX_FILE and cache is not None and document is not None \
        and cache.index_digest() == content_digest(data)
    problem = None if rendered else generated_problem(name, document)
    return Existing(name, text, document if problem is None else None,
                    problem if problem is not None and carries_mark(document) else None,
                    status=status, read_ns=read_ns, rendered=rendered)


def _claim(claims, matches: Callable[[Any], bool]) -> Optional[Tuple[str, object]]:
    """The first ``(spec path, entry)`` of *claims* whose entry *matches*, or ``None`` (a loop, not a generator:
    it runs for each file of ``resolved/``)."""
    for spec, entry in claims:
        if matches(entry):
            return spec, entry
    return None


def _same_bytes(data: bytes, claims) -> Optional[Tuple[str, object]]:
    """The ``(spec path, entry)`` of *claims* whose recorded bytes are *data*, or ``None``."""
    if not claims:
        return None
    digest = content_digest(data)
    return _claim(claims, lambda entry: entry.sha256 == digest)


def _vouched(file: str, spec: str, entry, status: os.stat_result, read_ns: int) -> Existing:
    """The :class:`Existing` of an artifact file the artifact cache knows, without its text."""
    return Existing(file, Vouched(entry.sha256), entry.document(spec), status=status, read_ns=read_ns)


def same_text(held: Optional[Text], planned: Text) -> bool:
    """Whether a file holding *held* holds the *planned* text (either may be known only by its bytes' digest)."""
    if isinstance(planned, Vouched):
        return planned.matches(held)
    if isinstance(held, Vouched):
        return held.matches(planned)
    return held == planned


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
        staged: The temporary file already holding a file's text, by file name, where a worker wrote one
            (:attr:`Resolution.staged`).
    """

    files: Mapping[str, Text]
    sources: Mapping[str, str]
    orphans: Mapping[str, str]
    problems: Tuple[Problem, ...]
    documents: Mapping[str, Dict] = field(default_factory=dict)
    staged: Mapping[str, str] = field(default_factory=dict)

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
        """The artifact file of the candidate *path* (its name is checked: :func:`name_problem`)."""
        return self.candidates[path].document["name"] + ARTIFACT_SUFFIX

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
        could not be read (:func:`~pipeline.check.discovery.find_spec_files` lists such a folder): regen never removes an
        artifact because it could not read its spec."""
        if spec_path is None:
            return False
        if spec_path in self.spec_paths:
            return True
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
    entries, files, sources, documents, staged = [], {}, {}, {}, {}
    for path, item in planner.candidates.items():
        file, document = planner.file_of(path), item.document
        files[file], sources[file], documents[document["name"]] = item.text, path, document
        if item.staged is not None:
            staged[file] = item.staged
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
        index, held = build_index(entries), existing.get(INDEX_FILE)
        ordered[INDEX_FILE] = held.text if held is not None and held.rendered and held.document == index \
            else render(index)
    else:
        problems.append(index_problem)
    problems.extend(planner.imitations())
    orphans = {name: planner.orphan_reason(item) for name, item in existing.items()
               if item.document is not None and name != INDEX_FILE and name not in ordered}
    return Plan(ordered, dict(sorted(sources.items())), dict(sorted(orphans.items())), tuple(sorted(problems)),
                dict(sorted(documents.items())), staged)


def unbuilt(target: Plan, existing: Mapping[str, Existing]) -> Set[str]:
    """The specs whose artifact the plan knows only by its digest (:attr:`Resolution.vouched`) while the file
    does not hold it: regen must build them (:func:`rebuild`) before it can write them."""
    return {target.sources[file] for file, text in target.files.items()
            if not isinstance(text, str) and not (file in existing and same_text(existing[file].text, text))}


def remember(cache: "ArtifactCache", resolutions: Sequence[Resolution], target: Plan,
             existing: Mapping[str, Existing], folder: Path, written: Sequence[str] = ()) -> Dict[str, str]:
    """Add to *cache* an entry for each artifact of *target* built this run that *folder* now holds: one
    *written* (its stat taken now), or one whose text read from the folder was the planned text; and the digest of
    the index, written or found equal to the one planned. Returns the SHA-256 of each artifact's text it entered,
    by file (for the answer a whole regen records, which would otherwise hash each text again)."""
    by_path = {item.path: item for item in resolutions if item.record is not None and item.document is not None}
    wrote = set(written)
    index, planned = existing.get(INDEX_FILE), target.files.get(INDEX_FILE)
    if isinstance(planned, str) and (INDEX_FILE in wrote or (index is not None and index.text == planned)):
        cache.add_index(planned)
    hashed: Dict[str, str] = {}
    for file, text in target.files.items():
        item = by_path.get(target.sources.get(file, ""))
        # The plan's document of that name is this very one only when the spec is a candidate: a spec refused
        # (a duplicate name) keeps an artifact of an earlier run, which is not what its bytes now decide.
        if item is None or not isinstance(text, str) \
                or target.documents.get(item.document["name"]) is not item.document:
            continue
        if file in wrote:
            try:
                status, read_ns = os.lstat(folder / file), now_ns()
            except OSError:
                continue
        elif file in existing and existing[file].text == text and existing[file].status is not None:
            status, read_ns = existing[file].status, existing[file].read_ns
        else:
            continue
        sha256 = item.rendered_sha256 if text is item.rendered else None  # the worker's, of this very text
        entry = new_entry(item.record, file, item.document["digest"], text, status, read_ns, sha256)
        cache.add(item.path, entry)
        hashed[file] = entry.sha256
    return hashed


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
        elif not same_text(existing[file].text, text):
            found.append(_problem(shown, (1, 1), "regen.stale",
                                  f"{shown} is out of date{source}; run modelspec regen"))
    for file, why in target.orphans.items():
        shown = f"{folder_name}/{file}"
        found.append(_problem(shown, (1, 1), "regen.orphaned",
                              f"{shown} is orphaned: {why}; run modelspec regen to remove it"))
    refused = {problem.file for problem in found if problem.severity is Severity.ERROR}
    for file, item in existing.items():
        shown = f"{folder_name}/{file}"
        if file not in target.files and file not in target.orphans and shown not in refused:
            found.append(_problem(shown, (1, 1), "regen.stray", f"{shown} is not an artifact regen writes"
                                  f"{stray_reason(item)}; anything reading {folder_name}/ could take it for one: "
                                  f"delete it, or move it out of {folder_name}/"))
    return tuple(sorted(found))


def stray_reason(item: Existing) -> str:
    """`` (<why>)``: why the file *item* of ``resolved/`` is not an artifact regen writes."""
    if item.not_a_file:
        return f" (it is {item.not_a_file})"
    if item.imitation:
        return f" ({item.imitation})"
    if item.document is None:
        return " (it carries no generator mark, or is not JSON)"
    return ""


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
    if not create and not folder.exists() and not folder.is_symlink():
        yield
        return
    _writable(folder)
    try:
        refuse_write(folder / LOCK_FILE, folder)  # filelock opens (and truncates) the file a link names
    except OSError as error:
        raise RegenError(str(error)) from None
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


#: No temporary file staged by a worker.
_NOTHING_STAGED: Mapping[str, str] = MappingProxyType({})


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
    writes, removed = [], []
    unchanged = 0
    for file, text in target.files.items():
        if file in existing and same_text(existing[file].text, text):
            unchanged += 1
            continue
        if not isinstance(text, str):
            raise ValueError(f"{file}: the plan knows only the digest of a file it must write; rebuild its "
                             "spec first (unbuilt)")
        writes.append((file, text))
    write_files(folder, writes, on_change, target.staged)  # in the plan's order: the artifacts, then the index
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
    return Applied(tuple(file for file, _ in writes), tuple(removed), unchanged)


def write_files(folder: Path, writes: Sequence[Tuple[str, str]],
                on_change: Optional[Callable[[str, str], None]] = None,
                staged: Mapping[str, str] = _NOTHING_STAGED) -> None:
    """Write each ``(file name, text)`` of *writes* into *folder* as one :class:`~pipeline.catalogue.atomic.Batch`:
    every file staged (or its temporary file of *staged*, which holds that text, adopted), one flush, then each
    renamed into place in order (``on_change("wrote", file)`` after each). A link in the folder is never written
    through (the folder itself is refused earlier).

    Raises:
        RegenError: If a name is not a file name inside *folder*, or a file cannot be written.
    """
    batch = Batch()
    try:
        for file, text in writes:
            path = folder / file
            if path.parent != folder:
                raise RegenError(f"{file!r} is not a file name inside {folder}")
            try:
                refuse_write(path, folder)
                if file in staged:
                    batch.adopt(path, staged[file])
                else:
                    batch.stage(path, text)
            except OSError as error:
                raise RegenError(f"cannot write {path}: {error.strerror}") from None
        try:
            batch.flush()
        except OSError as error:
            raise RegenError(f"cannot write {folder}: {error.strerror}") from None
        for file, _ in writes:
            try:
                batch.commit(folder / file)
            except OSError as error:
                raise RegenError(f"cannot write {folder / file}: {error.strerror}") from None
            if on_change:
                on_change("wrote", file)
    finally:
        batch.discard()


def _fsync_folder(folder: Path) -> None:
    """Flush *folder*'s entries (the renames and removals) to disk, where the platform can open a folder."""
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
