"""The result cache: each spec file's check, kept between runs while nothing that decides it changed.

A file's result is decided by its bytes, the path reports show it under, the
JSON Schemas, the op profiles its check consulted, and modelspec itself (its
version, its code, its Python, and the libraries that word a result:
:data:`~pipeline.cache.stamps.ANSWERING_LIBRARIES`). An
entry records all of them, so a run reuses a result only when each is the
same: a changed profile invalidates the specs that read it (a spec that
looked a profile up by a name no profile has, or matched its name against
every profile's patterns, read them all), and nothing else.

Where it lives: ``.modelspec_cache/`` at the repository's root (it holds its
own ``.gitignore`` and a ``CACHEDIR.TAG``), or ``$MODELSPEC_CACHE_DIR`` (a CI
job caches that folder between runs). One file, ``results``: a header line
(the format, and the file's size in bytes when it was last compacted), then
one line per spec file::

    <report path> TAB <checksum> TAB <JSON record>

The checksum (BLAKE2b over the path and the record) binds a record to its
path, so a truncated, edited or moved line is ignored and rewritten, never
trusted; a file with another header (another cache format) is ignored whole.
Finding whether a file changed reads its bytes and hashes them (SHA-256),
except that, as git's index does, a file whose ``stat`` (size, mtime, inode,
ctime) is what the record saw is taken as unchanged without reading it, once
its mtime is over :data:`RACY_NS` older than when it was read (a file
rewritten in the same clock tick as it was read is hashed again).

Writing: a run collects its new records and, at the end, appends them to
the file under a ``filelock`` lock (``results.lock``), a later line of a file
winning; once appending has doubled the file, it is compacted instead: read
again (another run may have written since), its replaced lines dropped, and
written to a temporary file renamed over ``results``. A reader never takes
the lock: the rename is atomic, so it sees the old file or the new one. A
run that looks up a few records (a one-file check) finds each by a search of
the file's bytes instead of reading it into a table. A cache that cannot be
written is reported once on stderr and the run goes on.

A second file, ``profiles``, keeps the last checked op profiles folder (:func:`load_profile_data`): a
header line, then ``<key> TAB <checksum> TAB <JSON documents>``, the key a SHA-256 over the folder's files'
names and bytes and :func:`environment_digest`. On a hit, the profiles are built from the documents without
reading their YAML or checking them against the schema and the rules again.

Two more, ``names`` and ``rows`` (:class:`CatalogueIndex`), index every spec file a run has seen with its
stated name and its ``list`` row, each under one checksum: the duplicate-name rule of a run over a few files,
``show`` and ``list`` read them instead of the results, trusting a line while its file's ``stat`` is the one
it records.

What a record keeps (:class:`~pipeline.check.verdict.Verdict`) is the file's
result before anything the whole run decides (duplicate names, and any
selection of problems a configuration makes later), the name the file states
(for the duplicate-name rule of a run that does not check it), and its
``list`` row.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat as stat_module
import tempfile
from collections.abc import Mapping, Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from pipeline.spec.files import open_regular
from pipeline.spec.writes import WriteRefused, link_refusal, refuse_write
from pipeline.spec.escape import first_unprintable
from pipeline.spec.problems import PASSES, FileResult, InlineIgnore, Location, Outcome, Problem, Severity
from pipeline.check.verdict import Verdict, read_spec_bytes, shared_outcomes, stated_name_of
from pipeline.cache.stamps import RACY, RACY_NS, content_digest, environment_digest, now_ns, stat_text
from pipeline.check.rows import list_cells
from pipeline.pricing.op_profiles import profile_files

#: The format of the ``results`` file; another format's file is ignored whole.
FORMAT = 3
HEADER = f"modelspec result cache, format {FORMAT}\n"

RESULTS_FILE = "results"
LOCK_FILE = "results.lock"

#: A record's profile dependencies when the check read every profile (a name-pattern search, a missing arch).
EVERY_PROFILE = "*"

_OUTCOME_LETTERS = {Outcome.PASSED: "p", Outcome.FAILED: "f", Outcome.SKIPPED: "s"}
_LETTER_OUTCOMES = {letter: outcome for outcome, letter in _OUTCOME_LETTERS.items()}
_SEVERITY_LETTERS = {Severity.ERROR: "e", Severity.WARNING: "w"}
_LETTER_SEVERITIES = {letter: severity for severity, letter in _SEVERITY_LETTERS.items()}

def line_checksum(path: str, record: str) -> str:
    """The checksum that binds a cache line's *record* to its *path* (BLAKE2b, 128 bits, hex): a line moved to
    another path, truncated or edited fails it."""
    return hashlib.blake2b(f"{path}\t{record}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class CacheKeys:
    """What the current run's results are decided by, besides each file: picklable, for worker processes.

    Attributes:
        environment: :func:`environment_digest`.
        profiles: Each op profile's arch to the SHA-256 of its file.
    """

    environment: str
    profiles: Mapping[str, str]
    _known: Dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def every_profile(self) -> str:
        """The digest of every op profile as it is now (:meth:`depends` of all of them): what the cache files
        keyed by the whole set of profiles (regen's answer, diff's memo) are recorded under."""
        return self.depends(f'["{EVERY_PROFILE}"]')

    def depends(self, dependencies: str) -> str:
        """The digest of the profiles a JSON list *dependencies* names (``["*"]``: all of them) as they are now;
        a missing one counts too."""
        known = self._known.get(dependencies)
        if known is None:
            names = json.loads(dependencies)
            listed = sorted(self.profiles) if EVERY_PROFILE in names else names
            known = self._known[dependencies] = content_digest(
                "\n".join(f"{name} {self.profiles.get(name, '-')}" for name in listed).encode())[:32]
        return known


def cache_keys(profiles: Any) -> CacheKeys:
    """The :class:`CacheKeys` of a run against *profiles* (an :class:`~pipeline.pricing.op_profiles.OpProfiles`).

    Raises:
        OSError: If a profile's file cannot be read any more (removed since the profiles were loaded).
    """
    return CacheKeys(environment_digest(),
                     {arch: content_digest(path.read_bytes()) for arch, path in profile_files(profiles).items()})


class RecordingProfiles(Mapping):
    """A profiles mapping that notes which archs a check looked up (a missing one too), or that it read all.

    :class:`~pipeline.pricing.op_profiles.OpProfiles` is built over one per file, so
    the record's dependencies are exactly the profiles its check consulted.
    """

    def __init__(self, profiles: Mapping[str, Any]) -> None:
        self._profiles = profiles
        self.consulted: set = set()

    def __getitem__(self, arch: str) -> Any:
        self.consulted.add(arch)
        return self._profiles[arch]

    def __contains__(self, arch: object) -> bool:
        self.consulted.add(arch)
        return arch in self._profiles

    def __iter__(self) -> Iterator[str]:
        self.consulted.add(EVERY_PROFILE)
        return iter(self._profiles)

    def __len__(self) -> int:
        self.consulted.add(EVERY_PROFILE)
        return len(self._profiles)

    def dependencies(self) -> List[str]:
        """The archs consulted, sorted; ``["*"]`` when every profile was read."""
        return [EVERY_PROFILE] if EVERY_PROFILE in self.consulted else sorted(map(str, self.consulted))


# ---- records --------------------------------------------------------------------------------

def encode_verdict(verdict: Verdict, row: Optional[Dict[str, Any]]) -> Optional[Tuple[str, str, str, str]]:
    """*verdict* as four texts: its result's outcomes, problems and inline ignores as JSON (the same text for
    every clean file, so decoding it is done once a run: :func:`_decoded_core`), its name and where the file
    states it, its ``list`` *row* as JSON, and that row's :func:`row_cells` (drawn where the file is checked, a
    worker process of a large run, not where the catalogue index is written); ``None`` when it cannot be kept
    exactly (a problem about another file)."""
    result = verdict.result
    if any(problem.file != result.file for problem in result.problems):
        return None
    core = {
        "o": "".join(_OUTCOME_LETTERS[outcome] for _, outcome in result.outcomes),
        "p": [[p.line, p.column, p.pass_name, p.code, _SEVERITY_LETTERS[p.severity], p.message, list(p.path)]
              for p in result.problems],
        "i": [[ignore.line, ignore.column, list(ignore.codes)] for ignore in result.ignores],
    }
    named = f"{verdict.name_at.line}:{verdict.name_at.column}:{json_text(verdict.name)}"
    row_text = json_text(row)
    return json_text(core), named, row_text, row_cells(row_text)


#: The encoder of :func:`json_text`, made once: ``json.dumps`` with separators makes one per call (a run of a
#: catalogue encodes six texts a file).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def json_text(value: Any) -> str:
    """*value* as compact JSON, the way records store it."""
    return _COMPACT.encode(value)


#: A problem as a record keeps it, the file apart: ``(line, column, pass, code, severity, message, path)``.
_RecordedProblem = Tuple[int, int, str, str, Severity, str, Tuple[Any, ...]]


@functools.lru_cache(maxsize=4096)
def _decoded_core(core: str) -> Tuple[Tuple[Tuple[str, Outcome], ...], Tuple[_RecordedProblem, ...],
                                      Tuple[InlineIgnore, ...]]:
    """The outcomes, problems (without their file) and inline ignores a record's result text keeps; memoised:
    the clean files of a catalogue share one text.

    Raises:
        KeyError, TypeError, ValueError, IndexError: When *core* is not what :func:`encode_verdict` writes.
    """
    payload = json.loads(core)
    letters = payload["o"]
    if len(letters) != len(PASSES):
        raise ValueError("not one outcome per pass")
    outcomes = shared_outcomes(tuple(zip(PASSES, (_LETTER_OUTCOMES[letter] for letter in letters))))
    problems = tuple((int(line), int(column), str(pass_name), str(code), _LETTER_SEVERITIES[severity], str(message),
                      tuple(part if isinstance(part, (str, int)) else str(part) for part in path))
                     for line, column, pass_name, code, severity, message, path in payload["p"])
    ignores = tuple(InlineIgnore(int(line), int(column), tuple(str(code) for code in codes))
                    for line, column, codes in payload["i"])
    return outcomes, problems, ignores


def decode_verdict(file: str, record: "Record", with_row: bool = False) -> Verdict:
    """The :class:`~pipeline.check.verdict.Verdict` a record keeps for *file* (its ``list`` row only *with_row*).

    Raises:
        KeyError, TypeError, ValueError, IndexError: When the record's texts are not what
            :func:`encode_verdict` writes.
    """
    outcomes, problems, ignores = _decoded_core(record.verdict or "null")
    line, column, name_text = (record.named or "").split(":", 2)
    name = json_name(name_text)
    stated = name if name is not None and record.stated == name_text else record.stated_name
    row = json.loads(record.row or "null") if with_row else None
    found = tuple(Problem(file, *problem) for problem in problems) if problems else ()
    return Verdict(FileResult(file, outcomes, found, ignores),
                   name, _location(line, column), stated, row if isinstance(row, dict) else None)


@functools.lru_cache(maxsize=1024)
def _location(line: str, column: str) -> Location:
    """The :class:`Location` a record writes as *line* and *column*; one object per place (a catalogue's specs
    state their name at a handful of places).

    Raises:
        ValueError: When either is not a whole number.
    """
    return Location(int(line), int(column))


def _known_name(known: Optional[str]) -> Tuple[bool, Optional[str]]:
    """``(True, the name)`` of what a names line knows (:func:`json_name` of it), ``(False, None)`` for none."""
    return (True, json_name(known)) if known is not None and "\t" not in known else (False, None)


def json_name(text: str) -> Optional[str]:
    """The name a record's JSON *text* holds, when it is text, else ``None``. A string literal with no escape
    in it (what nearly every name is) is its own content, read without the JSON parser: :func:`json_text`
    writes a ``"`` or a control character inside one only escaped.

    Raises:
        ValueError: When *text* is not JSON.
    """
    if len(text) >= 2 and text[0] == '"' == text[-1] and "\\" not in text:
        return text[1:-1]
    value = json.loads(text)
    return value if isinstance(value, str) else None


class Record(NamedTuple):
    """One file's line of the cache; the JSON parts stay text until asked for.

    A named tuple rather than a frozen dataclass: a run builds one per file of
    the catalogue, and a tuple is built in a third of the time.

    Attributes:
        stat: :func:`stat_text` of the file when it was read.
        read_ns: When it was read (:func:`~pipeline.cache.stamps.now_ns`), for the racy-stat rule.
        digest: SHA-256 of its bytes.
        environment: The :func:`environment_digest` it was read under.
        stated: The name its mapping states, as JSON (``null`` when it states no text name).
        dependencies: The profiles its check consulted, as a JSON list (:class:`RecordingProfiles`); ``None``
            for a record of the stated name only (the file was read for its name, not checked).
        profiles: :meth:`CacheKeys.depends` of those when it was checked.
        verdict: The result's JSON (:func:`encode_verdict`), or ``None`` for a name-only record.
        named: Where the file states ``name`` and the spec's name, ``line:column:<JSON name or null>``, or
            ``None``.
        row: The ``list`` row's JSON, or ``None``.
        cells: That row's table cells (:func:`row_cells`), or ``None`` for a name-only record.
    """

    stat: str
    read_ns: int
    digest: str
    environment: str
    stated: str
    dependencies: Optional[str] = None
    profiles: Optional[str] = None
    verdict: Optional[str] = None
    named: Optional[str] = None
    row: Optional[str] = None
    cells: Optional[str] = None

    @property
    def stated_name(self) -> Optional[str]:
        """The name the file states, when it is text."""
        return json_name(self.stated)

    def to_line(self, file: str) -> str:
        """The cache line of this record for *file*."""
        rest = "\t".join([self.stat, str(self.read_ns), self.digest, self.environment, self.stated,
                          *("-" if part is None else part
                            for part in (self.dependencies, self.profiles, self.verdict, self.named, self.row,
                                         self.cells))])
        return f"{file}\t{line_checksum(file, rest)}\t{rest}\n"

    def restated(self, status: os.stat_result, read_ns: int) -> "Record":
        """This record for the same bytes read again, under a new ``stat``."""
        return self._replace(stat=stat_text(status), read_ns=read_ns)

    def unchanged(self, status: os.stat_result) -> bool:
        """Whether *status* says the file is as this record read it (see :data:`RACY_NS`)."""
        return stat_text(status) == self.stat and status.st_mtime_ns + RACY_NS <= self.read_ns

    def current(self, keys: CacheKeys) -> bool:
        """Whether this record's verdict was reached under *keys*' environment and profiles."""
        return (self.verdict is not None and self.environment == keys.environment
                and self.dependencies is not None and keys.depends(self.dependencies) == self.profiles)


def new_record(status: os.stat_result, read_ns: int, digest: str, environment: str, stated_name: Optional[str],
               checked: Optional[Tuple[List[str], str, Tuple[str, str, str, str]]] = None) -> Record:
    """A record of a file just read: its stated name, and, for a file *checked*, ``(dependencies, their
    digest, encode_verdict(...))``."""
    if checked is None:
        return Record(stat_text(status), read_ns, digest, environment, json_text(stated_name))
    dependencies, profiles, (verdict, named, row, cells) = checked
    return Record(stat_text(status), read_ns, digest, environment, json_text(stated_name), json_text(dependencies),
                  profiles, verdict, named, row, cells)


def parse_record(file: str, checksum: str, rest: str, verify: bool = True) -> Optional[Record]:
    """The record of a cache line, or ``None`` when the line is not one this format wrote for *file* (its
    checksum is not verified unless *verify*: a line this run wrote itself)."""
    if verify and line_checksum(file, rest) != checksum:
        return None
    fields = rest.split("\t")
    if len(fields) != len(Record._fields) or not fields[1].isdigit():
        return None
    fields[1] = int(fields[1])
    for index in range(5, len(fields)):  # the optional parts
        if fields[index] == "-":
            fields[index] = None
    return Record._make(fields)


# ---- the checked op profiles ----------------------------------------------------------------

#: The file of a cache folder that keeps the last checked op profiles folder's documents.
PROFILES_FILE = "profiles"
#: The format of the ``profiles`` file, apart from the results': one changes without the other.
PROFILES_FORMAT = 1
PROFILES_HEADER = f"modelspec op profile cache, format {PROFILES_FORMAT}\n"


def profiles_key(contents: str) -> str:
    """What decides a profiles folder's checked documents: its files' names and bytes (their
    :func:`~pipeline.pricing.op_profiles.contents_digest` *contents*) and :func:`environment_digest` (modelspec's
    version and code, the schemas, the YAML and JSON Schema libraries)."""
    return hashlib.sha256(f"{environment_digest()}\n{contents}\n".encode()).hexdigest()


def load_profile_data(folder: Path, key: str) -> Optional[Dict[str, dict]]:
    """The checked documents (``{file name: document}``) kept in *folder* under *key*, or ``None``: no
    file, another format or key, or a line whose checksum fails (a torn or edited entry is never trusted)."""
    try:
        with open_regular(folder / PROFILES_FILE, "r", encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    header, _, line = text.partition("\n")
    stored_key, _, rest = line.rstrip("\n").partition("\t")
    checksum, _, record = rest.partition("\t")
    if header + "\n" != PROFILES_HEADER or stored_key != key or checksum != line_checksum(key, record):
        return None
    try:
        documents = json.loads(record)
    except ValueError:
        return None
    return documents if isinstance(documents, dict) else None


def store_profile_data(folder: Path, key: str, documents: Mapping[str, Any]) -> None:
    """Keep *documents* in *folder* under *key* (replacing what was kept), when JSON gives each back
    exactly (:func:`json_exact`); a folder that cannot be written is let be (the next run checks again).

    The folder is never created here: profiles are read before a command has checked its arguments, and a
    command refused for a usage error leaves nothing behind. When it does not exist yet, the entry waits in
    this process and is written when :func:`prepare_folder` creates it (the result cache's save, at the end of
    a command that did its work), so a repository's first run keeps its profiles too.
    """
    if not json_exact(documents):
        return
    record = json.dumps(documents, separators=(",", ":"), allow_nan=False)
    text = f"{PROFILES_HEADER}{key}\t{line_checksum(key, record)}\t{record}\n"
    if not folder.is_dir():
        _WAITING_PROFILES[folder] = text
        return
    _write_profile_entry(folder, text)


@dataclass(frozen=True)
class ProfileCache:
    """The checked op profiles kept in the cache folder *folder*: the store
    :func:`~pipeline.pricing.op_profiles.load_op_profiles` is handed (:class:`~pipeline.pricing.op_profiles.ProfileStore`),
    so the pricing layer keeps profiles between runs without importing the cache."""

    folder: Path

    def key(self, contents: str) -> str:
        """:func:`profiles_key` of a folder whose files' digest is *contents*."""
        return profiles_key(contents)

    def load(self, key: str) -> Optional[Dict[str, dict]]:
        """:func:`load_profile_data` of this folder under *key*."""
        return load_profile_data(self.folder, key)

    def store(self, key: str, documents: Mapping[str, Any]) -> None:
        """:func:`store_profile_data` in this folder under *key*."""
        store_profile_data(self.folder, key, documents)


#: Profile cache entries checked before their cache folder existed, by folder (see :func:`store_profile_data`).
_WAITING_PROFILES: Dict[Path, str] = {}


def _write_profile_entry(folder: Path, text: str) -> None:
    """Replace *folder*'s profile cache entry with *text*; a folder that cannot be written is let be."""
    try:
        replace_file(folder / PROFILES_FILE, text)
    except OSError:
        pass


def json_exact(value: Any) -> bool:
    """Whether ``json.loads(json.dumps(value))`` is *value* with the same types throughout: mappings with
    text keys, lists, text, whole numbers, booleans, null and finite floats."""
    if value is None or type(value) in (str, bool, int):
        return True
    if type(value) is float:
        return value == value and value not in (float("inf"), float("-inf"))
    if type(value) is list:
        return all(json_exact(item) for item in value)
    if type(value) is dict:
        return all(type(key) is str and json_exact(item) for key, item in value.items())
    return False


# ---- the catalogue index --------------------------------------------------------------------

#: The files of a cache folder that index the catalogue: each spec file's stated name, and its ``list`` row.
NAMES_FILE = "names"
ROWS_FILE = "rows"
INDEX_FORMAT = 2
INDEX_HEADER = f"modelspec catalogue index, format {INDEX_FORMAT}"


def _standing(rest: Optional[str], stat: str) -> Optional[str]:
    """What an index line's *rest* (``<stat> TAB <read ns> TAB <what it knows>``) knows, when its stat is *stat*
    (:func:`~pipeline.cache.stamps.stat_text`); else ``None``."""
    if rest is None or not rest.startswith(stat) or rest[len(stat):len(stat) + 1] != "\t":
        return None
    _, tab, known = rest[len(stat) + 1:].partition("\t")
    return known if tab else None


class _IndexTable:
    """One file of the catalogue index: a line per spec file, ``<path> TAB <stat> TAB <read ns> TAB <what it
    knows>``, under a header holding the index's stamp and a BLAKE2b checksum of the lines (a torn, edited or
    foreign file is ignored whole). Read when first asked; rewritten whole when a run learnt something."""

    def __init__(self, path: Path, stamp: str) -> None:
        self.path = path
        self._stamp = stamp
        self._entries: Optional[Dict[str, str]] = None
        self._read_as: Optional[str] = None
        self._updates: Dict[str, str] = {}  # file: the rest of its new line

    def _read(self) -> Dict[str, str]:
        """``{file: the rest of its line}``, or empty: no file, another header, a checksum that fails."""
        try:
            with open_regular(self.path, "r", encoding="utf-8", errors="surrogateescape", newline="\n") as handle:
                text = handle.read()
        except OSError:
            return {}
        header, _, body = text.partition("\n")
        if header != f"{INDEX_HEADER}\t{self._stamp}\t{line_checksum(self._stamp, body)}":
            return {}
        entries = {}
        for line in body.split("\n"):
            file, tab, rest = line.partition("\t")
            if tab:
                entries[file] = rest
        return entries

    def stamped(self) -> bool:
        """Whether the file's header names this index's stamp (its lines are not read, nor their checksum)."""
        try:
            with open_regular(self.path, "r", encoding="utf-8", errors="surrogateescape", newline="\n") as handle:
                return handle.readline().startswith(f"{INDEX_HEADER}\t{self._stamp}\t")
        except OSError:
            return False

    @property
    def entries(self) -> Dict[str, str]:
        """The lines read, by file."""
        if self._entries is None:
            self._read_as = _file_stat(self.path)
            self._entries = self._read()
        return self._entries

    def standing(self, file: str, status: os.stat_result) -> Optional[str]:
        """What *file*'s line knows, when *status* is the stat it records; else ``None``. Only a
        :func:`learnable` record becomes a line, so a line whose stat is the file's is no racy one."""
        return _standing(self.entries.get(file), stat_text(status))

    def learn(self, file: str, record: Record, known: str) -> None:
        """Note *known* of *file*, read under *record*'s stat and time, unless the line says so already."""
        rest = _index_rest(record, known)
        if self.entries.get(file) != rest:
            self._updates[file] = rest

    @property
    def learnt(self) -> bool:
        """Whether this run has lines to save."""
        return bool(self._updates)

    def save(self) -> None:
        """Rewrite the file with what this run learnt (another run's lines kept, this run's winning), if it
        learnt anything; call under the results' lock.

        Raises:
            OSError: If it cannot be written.
        """
        if self._updates:
            with self.writing():
                pass

    @contextlib.contextmanager
    def writing(self, replaced: AbstractSet[str] = frozenset()) -> Iterator[Callable[[str, str], None]]:
        """Rewrite the file: the lines it holds (another run's kept, this run's winning) but those of the files
        of *replaced*, then, within the block, a line per call of the function it gives, ``(file, rest of its
        line)``: what a run over the whole catalogue learnt, written as it is read back from its spooled
        records, never held (a cold check of 30,000 files would otherwise hold every row). Call under the
        results' lock.

        Raises:
            OSError: If it cannot be written.
        """
        same = self._read_as is not None and _file_stat(self.path) == self._read_as
        entries = self.entries if same else self._read()  # another run may have saved since this one read
        entries.update(self._updates)
        with _summed_lines(self.path, f"{INDEX_HEADER}\t{self._stamp}\t", self._stamp) as write:
            for file, rest in sorted(entries.items()):
                if file not in replaced:
                    write(file, rest)
            yield write
        self._entries, self._updates = None, {}


class CatalogueIndex:
    """Every spec file a run has seen, with its stated name and its ``list`` row, in two small files.

    What the duplicate-name rule of a run over a few files, ``show`` and
    ``list`` need of every other spec, without reading the results file. Each
    file has a line per spec file, as the record it was learnt from knew it
    (:class:`_IndexTable`): ``names`` the name its mapping states (JSON,
    ``null`` when no text name); ``rows`` whether its spec passed without an
    error (``1``: its row is what ``list`` shows; ``0``; ``-`` when only its
    name was read), the row's table cells as ``list`` prints them (or ``-``,
    see :func:`_row_line`) and the row's JSON (or ``-``). The names pass reads
    the small file alone (a third of the bytes), ``list`` the other. A check
    over the whole catalogue that rebuilds the index writes both from its
    spooled records as it saves (:meth:`ResultCache.save`), holding no row. The stamp
    names the environment and the digest of every op profile (a row counts
    parameters, so any profile change invalidates the whole index). A line
    stands for its file while the file's ``stat`` is the one it records, by
    the results' racy-stat rule; a record read in the clock tick its file was
    written is never learnt.
    """

    def __init__(self, folder: Path, keys: CacheKeys) -> None:
        stamp = f"{keys.environment}\t{keys.depends(json_text([EVERY_PROFILE]))}"
        self._names = _IndexTable(folder / NAMES_FILE, stamp)
        self._rows = _IndexTable(folder / ROWS_FILE, stamp)

    def stamped(self) -> bool:
        """Whether the names file is of this environment and profile set (see :meth:`_IndexTable.stamped`)."""
        return self._names.stamped()

    def listed_row(self, file: str, status: os.stat_result) -> Optional[Tuple[str, str]]:
        """``(cells, row)`` of *file* when its line stands for it (:meth:`_IndexTable.standing`) and its spec
        passed, else ``None``: ``list``'s question about each spec. *row* is the row's JSON; *cells* its
        table cells (:func:`pipeline.check.rows.list_cells`) joined by :data:`CELL_SEPARATOR`, or ``-``."""
        known = self._rows.standing(file, status)
        if known is None:
            return None
        listed, _, rest = known.partition("\t")
        cells, tab, row = rest.partition("\t")
        return (cells, row) if tab and listed == "1" and "\t" not in row else None

    def known_name(self, file: str, status: os.stat_result) -> Tuple[bool, Optional[str]]:
        """``(True, the name file states)`` when its line stands for it (:meth:`_IndexTable.standing`), else
        ``(False, None)``: the duplicate-name rule's question about every other spec."""
        return _known_name(self._names.standing(file, status))

    def known_names(self, files: Iterable[Tuple["str | os.PathLike[str]", str]]
                    ) -> Iterator[Tuple[Optional[os.stat_result], bool, Optional[str]]]:
        """``(stat, *known_name)`` of each ``(path, display)`` of *files*, in order (``(None, False, None)`` for
        one that is no regular file): the loop over every other spec of the duplicate-name rule, one ``stat``
        and a look at one line per file, with no call between them."""
        lines, stat, regular = self._names.entries.get, os.stat, stat_module.S_ISREG
        for path, display in files:
            try:
                status = stat(path)
            except (OSError, ValueError):
                yield None, False, None
                continue
            if regular(status.st_mode):
                yield (status, *_known_name(_standing(lines(display), stat_text(status))))
            else:
                yield None, False, None

    def stated_under(self, file: str) -> Optional[Tuple[str, Optional[str]]]:
        """``(the stat text its names line records, the name file states)`` (:func:`json_name`), when it has
        one: what the line stands for while the file has that stat."""
        stat, _, rest = self._names.entries.get(file, "").partition("\t")
        _, tab, known = rest.partition("\t")
        return (stat, json_name(known)) if tab and "\t" not in known else None

    def learn(self, file: str, record: Record, listed: Optional[str] = None) -> None:
        """Note *record* (current, its stat the file's) as *file*'s lines, unless the index has them already.

        Args:
            file: The file's path as the run shows it.
            record: Its current record.
            listed: ``1``, ``0`` or ``-`` (see :class:`CatalogueIndex`) to learn its ``list`` row too; ``None``
                for its name alone (a check of a few files; one over the whole catalogue streams both tables
                from its spooled records as it saves, :meth:`save`).
        """
        if not learnable(record):
            return
        self._names.learn(file, record, record.stated)
        if listed is not None:
            self._rows.learn(file, record, _row_line(listed, record))

    @property
    def learnt(self) -> bool:
        """Whether this run has lines to save."""
        return self._names.learnt or self._rows.learnt

    def save(self, spooled: Optional[Callable[[], Iterator[Tuple[str, Record]]]] = None,
             replaced: AbstractSet[str] = frozenset()) -> None:
        """Rewrite the files this run learnt something for; call under the results' lock.

        Args:
            spooled: A run over the whole catalogue's new records, ``(file, record)``, each :func:`learnable`
                and of this environment, read back as the files are written (see :meth:`_IndexTable.save`):
                both its names and its rows are learnt, with no row held in memory.
            replaced: The files *spooled* holds.

        Raises:
            OSError: If one cannot be written.
        """
        if spooled is None:
            self._names.save()
            self._rows.save()
            return
        with self._names.writing(replaced) as names, self._rows.writing(replaced) as rows:
            for file, record in spooled():  # read back once for both files
                names(file, _index_rest(record, record.stated))
                rows(file, _index_rest(record, _row_line(_listed_or_unknown(record), record)))


def _index_rest(record: Record, known: str) -> str:
    """An index line after its file: the stat and reading time of *record*, then what the table knows."""
    return f"{record.stat}\t{record.read_ns}\t{known}"


#: What joins a row's table cells in the rows file: no cell of a spec that passed holds it (its name and arch
#: match the schema's patterns), nor a tab or a line break.
CELL_SEPARATOR = "\x1f"


def _row_line(listed: str, record: Record) -> str:
    """The part of a rows line after its stat and time: *listed*, the row's cells (:attr:`Record.cells`; ``-``
    unless *listed* is ``1``), the row's JSON (``-`` when none)."""
    cells = record.cells if listed == "1" and record.cells is not None else "-"
    return f"{listed}\t{cells}\t{record.row or '-'}"


def row_cells(row: str) -> str:
    """The ``list`` table's cells of the row JSON *row*, joined by :data:`CELL_SEPARATOR`; ``-`` when there are
    none: no row, one that is not a row ``list`` draws (``list`` decodes its JSON, and says so if it must), or
    a cell holding what a rows line cannot."""
    try:
        cells = list_cells(json.loads(row))
    except (KeyError, TypeError, ValueError):
        return "-"
    return CELL_SEPARATOR.join(cells) if plain_cells(cells) else "-"


def plain_cells(cells: Sequence[str]) -> bool:
    """Whether table cells can stand in a rows line as they are printed: strings with nothing
    :func:`~pipeline.spec.escape.printable` would escape (:data:`CELL_SEPARATOR`, a control character, is such),
    told by one search over them all."""
    return all(type(cell) is str for cell in cells) and first_unprintable("".join(cells)) is None


def learnable(record: Record) -> bool:
    """Whether *record* may become an index line: :func:`settled`."""
    return settled(record.stat, record.read_ns)


def settled(stat: str, read_ns: int) -> bool:
    """Whether a record of *stat* read at *read_ns* stands for its file's bytes: the file's mtime is over
    :data:`RACY_NS` older than the reading (a record read in the tick its file was written would never stand
    for the file)."""
    mtime = stat.split(":")[1]
    return mtime.isdigit() and int(mtime) + RACY_NS <= read_ns


def _listed_or_unknown(record: Record) -> str:
    """:func:`listed` of *record*, ``-`` when its result does not decode (the entry then names it only)."""
    try:
        return listed(record)
    except (KeyError, TypeError, ValueError, IndexError):
        return "-"


def listed(record: Record) -> str:
    """The ``listed`` field of *record*'s index line (:class:`CatalogueIndex`): ``-`` for a name-only record,
    ``1`` when its spec has a row and no error, else ``0``.

    Raises:
        KeyError, TypeError, ValueError, IndexError: When the record's result is not what :func:`encode_verdict`
            writes.
    """
    if record.verdict is None:
        return "-"
    _, problems, _ = _decoded_core(record.verdict)
    clean = record.row not in (None, "null") and not any(problem[4] is Severity.ERROR for problem in problems)
    return "1" if clean else "0"


class ResultCache:
    """The records of one cache folder, read once, and the lines this run adds.

    Args:
        folder: The cache folder (created when the run first writes).
        keys: The run's :class:`CacheKeys`.
        file: The folder's file the lines live in. Another store of lines keyed by path (such as
            :mod:`pipeline.cache.artifacts`'s) keeps its own file, with its own *header*, under the same lock.
        header: The file's first line, naming its format; a file with another header is ignored whole.
    """

    def __init__(self, folder: Path, keys: CacheKeys, file: str = RESULTS_FILE, header: str = HEADER) -> None:
        self.folder = folder
        self.keys = keys
        self.file = file
        self.header = header
        self._index: Optional[CatalogueIndex] = None
        self._learning = False  # a check rebuilding the index's names (rebuild_index)
        self._read: Optional[Tuple[Optional[str], Dict[str, str]]] = None  # read when first asked
        self._searched: Dict[str, Optional[str]] = {}  # the lines found by a search, before the file is read
        self._many = False  # a run about to look up many files (expect_lookups): the file is read at once
        self._new: set = set()  # the files this run has new lines for; the lines wait in a spool file
        self._record_stats: Dict[str, str] = {}  # the stat of each file's record this run reused or made
        self._spool: Optional[Any] = None

    @property
    def index(self) -> "CatalogueIndex":
        """The folder's :class:`CatalogueIndex`, read on first use: a check over the whole catalogue needs
        no other spec's name, and never reads it."""
        if self._index is None:
            self._index = CatalogueIndex(self.folder, self.keys)
        return self._index

    def rebuild_index(self) -> None:
        """Have this run teach the catalogue index every file it checks or reuses, when the index is missing or
        of another environment or profile set (a run over the whole catalogue, so the duplicate-name pass of
        the next one-file check finds every other spec there); a current index is let be (the next names pass
        refreshes what changed), so a warm run pays two header lines for it."""
        if not self.index.stamped():
            self._learning = True

    def expect_lookups(self, count: int) -> None:
        """Say that the run is about to look up *count* files' records: more than :data:`_SEARCHES` and the
        file is read into a table at the first, instead of searched for each."""
        self._many = self._many or count > _SEARCHES

    @property
    def _lines(self) -> Dict[str, str]:
        """The results file's lines by file (:func:`_read_lines`), read on first use: a run the catalogue
        index answers never reads them."""
        if self._read is None:
            path = self.folder / self.file
            read_as = _file_stat(path)
            self._read = (read_as, _read_lines(path, self.header))
        return self._read[1]

    def reuse(self, file: str, path: "str | os.PathLike[str]", with_row: bool = False) -> Optional[Verdict]:
        """*file*'s verdict (its ``list`` row only *with_row*) from its record, when the record is current
        (:meth:`Record.current`) and the ``stat`` of the file at *path* stands for its bytes
        (:meth:`Record.unchanged`); else ``None``, and the caller reads the file."""
        record = self.record(file)
        if record is None or not record.current(self.keys):
            return None
        status = regular_file_stat(path)
        if status is None or not record.unchanged(status):
            return None
        try:
            verdict = decode_verdict(file, record, with_row)
            if with_row or self._learning:  # list, or a check rebuilding the index: what it lacks, it learns
                self.index.learn(file, record, listed(record))
        except (KeyError, TypeError, ValueError, IndexError):
            return None
        self._record_stats[file] = record.stat
        return verdict

    def record_stat(self, file: str) -> Optional[str]:
        """The :func:`~pipeline.cache.stamps.stat_text` recorded with the record this run reused (:meth:`reuse`) or
        made (:meth:`add_checked`) for *file*; :data:`~pipeline.cache.stamps.RACY` for a record made in the file's
        racy window (it matches no stat); ``None`` when the run has no record of it
        (a file that is no regular file, or one a worker found current and so did not send)."""
        return self._record_stats.get(file)

    def record(self, file: str) -> Optional[Record]:
        """The valid record of *file* (see :func:`parse_record`), or ``None``."""
        line = self.line(file)
        return parse_record(file, *line) if line is not None else None

    def stated_names(self, files: Sequence[Tuple["str | os.PathLike[str]", str]]
                     ) -> Iterator[Tuple[Optional[str], Optional[os.stat_result]]]:
        """``(name, stat)`` of each ``(path, display)`` of *files*, in order: its :meth:`stated_name`, and the
        stat the name was found under (``None``: no regular file). The duplicate-name rule's pass over every
        other spec of a catalogue, where the index answers nearly every file; a file the index does not answer
        is stat'ed again as it is read."""
        for (path, display), (status, known, name) in zip(files, self.index.known_names(files)):
            yield (name, status) if known else (self.stated_name(path, display), status)

    def stated_name(self, path: "str | os.PathLike[str]", display: str) -> Optional[str]:
        """The ``name`` the file at *path* (shown as *display*) states, when it is text: from the catalogue index
        or its record when that stands for the file (its stat, else its bytes' digest), else by loading it
        strictly (no other pass), and a name-only record of that is added."""
        from pipeline.spec.yaml_source import load_bytes, load_path  # pylint: disable=import-outside-toplevel

        status = regular_file_stat(path)
        if status is None:
            return stated_name_of(load_path(Path(path), display))
        known, name = self.index.known_name(display, status)
        if known:
            return name
        record = self.record(display)
        if record is not None and record.environment == self.keys.environment and record.unchanged(status):
            self.index.learn(display, record)
            return record.stated_name
        read_ns = now_ns()
        raw = read_spec_bytes(path)
        if raw is None:
            return stated_name_of(load_path(Path(path), display))
        digest = content_digest(raw)
        if record is not None and record.environment == self.keys.environment and record.digest == digest:
            self.add(display, record.restated(status, read_ns).to_line(display))
            return record.stated_name
        name = stated_name_of(load_bytes(raw, display))
        self.add(display, new_record(status, read_ns, digest, self.keys.environment, name).to_line(display))
        return name

    def paths(self) -> Iterator[str]:
        """The paths the file read has a line for (valid or not)."""
        return iter(self._lines)

    def line(self, file: str) -> Optional[Tuple[str, str]]:
        """*file*'s raw ``(checksum, record)``, to hand to a worker process: searched for in the file's bytes
        (:func:`_search_line`) for the first :data:`_SEARCHES` files a run looks up, unless it expects more
        (:meth:`expect_lookups`); from the file read whole after that."""
        if self._read is None and not self._many and (file in self._searched or len(self._searched) < _SEARCHES):
            if file not in self._searched:
                self._searched[file] = _search_line(self.folder / self.file, self.header, file)
            tail = self._searched[file]
        else:
            tail = self._lines.get(file)
        if tail is None:
            return None
        checksum, _, rest = tail.partition("\t")
        return checksum, rest

    def add(self, file: str, line: str, with_row: bool = False) -> None:
        """Keep *line* (:meth:`Record.to_line`) as *file*'s record when the run saves (spooled to a temporary
        file, so a run over a catalogue holds no new line in memory); a run that reads the catalogue index
        teaches it the file's name (and its ``list`` row, *with_row*)."""
        if self._spool is None:
            self._spool = tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogateescape", newline="\n")
        self._spool.write(line)
        self._new.add(file)
        if self._index is not None and not self._learning:  # a run that reads the index keeps it up to date
            record = self._line_record(line)
            if record is not None:
                self._index.learn(file, record, _listed_or_unknown(record) if with_row else None)

    def add_checked(self, file: str, line: str, with_row: bool = False) -> None:
        """:meth:`add` the record *line* of a file this run checked, and note the stat it records
        (:meth:`record_stat`)."""
        self.add(file, line, with_row)
        self._record_stats[file] = _stat_of_line(line)

    def _line_record(self, line: str) -> Optional[Record]:
        """The record of a line this run wrote, when it is of this environment."""
        file_part, _, rest = line.rstrip("\n").partition("\t")
        checksum, _, fields = rest.partition("\t")
        record = parse_record(file_part, checksum, fields, verify=False)
        return record if record is not None and record.environment == self.keys.environment else None

    def _spooled_records(self) -> Iterator[Tuple[str, Record]]:
        """``(file, record)`` of each line this run spooled that may become an index line (:func:`learnable`)."""
        for line in self._spooled():
            record = self._line_record(line)
            if record is not None and learnable(record):
                yield line.partition("\t")[0], record

    def save(self) -> Optional[str]:
        """Add this run's lines to the folder's file; the reason it could not, or ``None``.

        Under the lock, the lines are appended to the file (a later line of a
        file wins), which costs what they weigh, not what the cache does. When
        that would make the file more than twice the size its header says it
        was compacted at, plus :data:`_SLACK_BYTES` (or it is missing, of
        another format, or its header says no size or more than the file
        holds, :func:`_compacted_size`), it is compacted instead:
        read again unless it is the one this run read (another run may have
        saved since), its valid lines this run replaces dropped, and the whole
        written line by line to a temporary file renamed over it, its size
        then written into its header. Neither needs the file read to decide. A
        reader never sees half a file; it may see half of an appended last
        line, which fails its checksum.
        """
        if not self._new and (self._index is None or not self._index.learnt):
            return None
        # filelock imports asyncio (about 100 ms): only a run with something new to save pays for it
        import filelock  # pylint: disable=import-outside-toplevel

        path = self.folder / self.file
        try:
            prepare_folder(self.folder)
            refuse_write(self.folder / LOCK_FILE, self.folder)  # filelock opens (and truncates) what a link names
            with filelock.FileLock(str(self.folder / LOCK_FILE), timeout=30):
                if self._new:
                    self._append_or_compact(path)
                if self._index is not None:
                    if self._learning and self._spool is not None:  # every record this run read, streamed
                        self._index.save(self._spooled_records, self._new)
                    else:
                        self._index.save()
        except (OSError, filelock.Timeout) as error:
            return f"{getattr(error, 'strerror', None) or error}"
        finally:
            self._new = set()
            if self._spool is not None:
                self._spool.close()
            self._spool = None
        return None

    def _append_or_compact(self, path: Path) -> None:
        """Append this run's lines to the results file at *path*, or compact it with them when appending would
        make it more than twice its compacted size plus :data:`_SLACK_BYTES` (see :meth:`save`); under the lock.

        Raises:
            OSError: If it cannot be written.
        """
        self._spool.flush()
        compacted, size = _compacted_size(path, self.header)
        if compacted is not None and size + os.fstat(self._spool.fileno()).st_size <= 2 * compacted + _SLACK_BYTES:
            _append(path, self._spooled())
            return
        read_as, lines = self._read if self._read is not None else (None, {})
        current = lines if read_as is not None and _file_stat(path) == read_as else _read_lines(path, self.header)
        _write_compacted(path, self.header, self._merged(current))

    def _merged(self, current: Mapping[str, str]) -> Iterator[str]:
        """The lines of the merged file: the valid lines of *current* this run does not replace (a damaged line
        is dropped, not carried on), then this run's."""
        for file, tail in current.items():
            if file not in self._new:
                checksum, _, rest = tail.partition("\t")
                if line_checksum(file, rest) == checksum:
                    yield f"{file}\t{tail}\n"
        yield from self._spooled()

    def _spooled(self) -> Iterator[str]:
        """This run's new lines, as spooled."""
        self._spool.seek(0)
        yield from self._spool


def _stat_of_line(line: str) -> str:
    """The stat a new cache *line* (:meth:`Record.to_line`) records: its record's, unless it is not
    :func:`settled` (:data:`~pipeline.cache.stamps.RACY`)."""
    _, _, stat, read_ns, _ = line.split("\t", 4)
    return stat if settled(stat, int(read_ns)) else RACY


def _file_stat(path: Path) -> Optional[str]:
    try:
        return stat_text(os.stat(path))
    except OSError:
        return None


#: Bytes a results file may grow by beyond twice its compacted size before a save compacts it (about a
#: thousand records).
_SLACK_BYTES = 1 << 20

#: How many files' records a run finds by searching the results file before it reads the file into a table.
_SEARCHES = 4

#: The width of the compacted size in a header (bytes, zero-padded): written after the lines, in its place.
_SIZE_WIDTH = 20


def _header_ok(first: str, header: str) -> bool:
    """Whether *first*, a file's first line, is *header* (its format), with or without a compacted size."""
    return first == header or (len(first) == len(header) + _SIZE_WIDTH + 1 and first.startswith(header[:-1] + "\t")
                               and first[len(header):-1].isdigit() and first.endswith("\n"))


def _compacted_size(path: Path, header: str) -> Tuple[Optional[int], int]:
    """``(the size its header says the file at *path* was compacted at, its size now)``, in bytes; ``None`` for
    the first when it is missing, not regular, of another format than *header*, or its header says no size, or
    more than the file holds: no save wrote that (a file only grows after its compaction), and trusted, an
    edited or damaged header's size would let appends go on without end."""
    try:
        with open_regular(path) as handle:
            first = handle.readline(len(header.encode()) + _SIZE_WIDTH + 1).decode("utf-8", "surrogateescape")
            size = os.fstat(handle.fileno()).st_size
    except OSError:
        return None, 0
    compacted = int(first[len(header):-1]) if first != header and _header_ok(first, header) else None
    return (compacted if compacted is not None and compacted <= size else None), size


def _write_compacted(path: Path, header: str, lines: Iterable[str]) -> None:
    """Write *header* with the file's size after it, then *lines*, to *path* (:func:`replacing`): the size is
    written in its place once the lines are.

    Raises:
        OSError: If it cannot be written.
    """
    start = f"{header[:-1]}\t".encode("utf-8")
    with replacing(path, binary=True) as handle:
        handle.write(start + b"0" * _SIZE_WIDTH + b"\n")
        for line in lines:
            handle.write(line.encode("utf-8", "surrogateescape"))
        size = handle.tell()
        handle.seek(len(start))
        handle.write(f"{size:0{_SIZE_WIDTH}d}".encode("ascii"))


#: How much of a results file a search reads at a time, from its end (bytes).
_SEARCH_CHUNK = 1 << 20


def _search_line(path: Path, header: str, file: str) -> Optional[str]:
    """What :func:`_read_lines` would give for *file*, found without reading the file into a table: the last
    line of *file* with its two tabs, searched for from the end of the file's bytes, a chunk at a time (a
    line holds no line break, so a line break, *file* and a tab start it and nothing else).

    Every line starts after a line break (the first after the header's), so the
    search cannot match inside a record; a line without its second tab (a
    truncated last line) is passed over for the one before it, as the table
    keeps the last whole line.
    """
    if "\t" in file or "\n" in file:  # no line is of such a file: the table's files end at the first tab
        return None
    needle = f"\n{file}\t".encode("utf-8", "surrogateescape")
    try:
        with open_regular(path) as handle:
            if not _header_ok(handle.readline().decode("utf-8", "surrogateescape"), header):
                return None
            start, high = handle.tell() - 1, os.fstat(handle.fileno()).st_size
            while high > start:
                low = max(start, high - _SEARCH_CHUNK)
                handle.seek(low)
                chunk = handle.read(high - low + len(needle) - 1)  # a needle across the chunks' border too
                found = chunk.rfind(needle)
                while found != -1:
                    tail = _rest_of_line(handle, low + found + len(needle))
                    if b"\t" in tail:
                        return tail.decode("utf-8", "surrogateescape")
                    found = chunk.rfind(needle, 0, found)
                high = low
    except OSError:
        return None
    return None


def _rest_of_line(handle: Any, offset: int) -> bytes:
    """The bytes of the file open as *handle* from *offset* to the next line break (or the end)."""
    handle.seek(offset)
    pieces = []
    while True:
        block = handle.read(1 << 16)
        cut = block.find(b"\n")
        if cut != -1 or not block:
            pieces.append(block[:cut] if cut != -1 else block)
            return b"".join(pieces)
        pieces.append(block)


def _read_lines(path: Path, header: str = HEADER) -> Dict[str, str]:
    """``{file: "checksum TAB record"}`` of a results file (a later line of a file wins); empty when it is
    missing or of another format.

    A line without its two tabs (a truncated last line) is left out here; one
    whose checksum fails is left out by :func:`parse_record`.
    """
    lines: Dict[str, str] = {}
    try:
        with open_regular(path, "r", encoding="utf-8", errors="surrogateescape", newline="\n") as handle:
            if not _header_ok(handle.readline(), header):
                return {}
            for line in handle:
                file, tab, tail = line.rstrip("\n").partition("\t")
                if tab and "\t" in tail:
                    lines[file] = tail
    except OSError:
        return {}
    return lines


def _append(path: Path, lines: Iterable[str]) -> None:
    """Append *lines* to *path*, after a line break if a killed run left a last line unfinished; never through a
    link (:func:`~pipeline.spec.writes.refuse_write`)."""
    refuse_write(path, path.parent.parent)
    with open(path, "a+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(max(0, size - 1))
        if size and handle.read(1) != b"\n":
            handle.write(b"\n")
        for line in lines:
            handle.write(line.encode("utf-8", "surrogateescape"))


_GITIGNORE = "# modelspec's result cache: never committed (see modelspec check --help)\n*\n"
_CACHEDIR_TAG = ("Signature: 8a477f597d28d172789f06886806bc55\n"
                 "# This file is a cache directory tag created by modelspec.\n"
                 "# For information about cache directory tags, see https://bford.info/cachedir/\n")


def prepare_folder(folder: Path) -> None:
    """Create the cache folder with its ``.gitignore`` and ``CACHEDIR.TAG``, and write the op profiles checked
    before it existed (:func:`store_profile_data`), so a repository's first run keeps them.

    A cache folder that is a symbolic link is refused (:mod:`pipeline.spec.writes`): a checkout may carry one
    (a committed ``.modelspec_cache`` naming any folder), and the cache's files would be written there.

    Raises:
        OSError: If it cannot be created; :class:`~pipeline.spec.writes.WriteRefused` if it is a link.
    """
    why = link_refusal(folder, "the cache folder")
    if why is not None:
        raise WriteRefused(why)
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
        if not (folder / name).exists():
            replace_file(folder / name, text)
    waiting = _WAITING_PROFILES.pop(folder, None)
    if waiting is not None and not (folder / PROFILES_FILE).exists():
        _write_profile_entry(folder, waiting)


@contextlib.contextmanager
def replacing(path: Path, binary: bool = False) -> Iterator[Any]:
    """A handle on a temporary file beside *path*, renamed over *path* when the block ends, removed if it
    raises (no fsync: a torn file is caught by the header and the checksums, and costs only a re-check).
    Text is UTF-8 with a file name's undecodable bytes written as they were. Never into a folder that is a
    link (:func:`~pipeline.spec.writes.refuse_write`: the cache folder's own, or its subfolder's)."""
    refuse_write(path, path.parent.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        options = {} if binary else {"encoding": "utf-8", "errors": "surrogateescape", "newline": "\n"}
        with os.fdopen(fd, "wb" if binary else "w", **options) as handle:
            yield handle
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def replace_file(path: Path, text: Iterable[str]) -> None:
    """Write *text* (a string, or its pieces) to *path* whole or not at all (:func:`replacing`).

    Raises:
        OSError: If it cannot be written.
    """
    with replacing(path) as handle:
        handle.writelines([text] if isinstance(text, str) else text)


@contextlib.contextmanager
def _summed_lines(path: Path, header: str, key: str) -> Iterator[Callable[[str, str], None]]:
    """Within the block, write *header*, then a line ``file TAB rest`` per call of the function it gives, to
    *path* (:func:`replacing`); the :func:`line_checksum` of the body under *key* is written after *header*
    as the block ends: the body is summed as it is written, never held whole.

    Raises:
        OSError: If it cannot be written.
    """
    summed = hashlib.blake2b(f"{key}\t".encode("utf-8", "surrogatepass"), digest_size=16)
    start = header.encode("utf-8", "surrogateescape")
    with replacing(path, binary=True) as handle:
        handle.write(start + b"0" * 32 + b"\n")  # the checksum's place, filled in below

        def write(file: str, rest: str) -> None:
            line = f"{file}\t{rest}\n"
            summed.update(line.encode("utf-8", "surrogatepass"))
            handle.write(line.encode("utf-8", "surrogateescape"))

        yield write
        handle.seek(len(start))
        handle.write(summed.hexdigest().encode("ascii"))


def regular_file_stat(path: "str | os.PathLike[str]") -> Optional[os.stat_result]:
    """*path*'s ``stat`` when it is a regular file (following links), else ``None``."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status if stat_module.S_ISREG(status.st_mode) else None

