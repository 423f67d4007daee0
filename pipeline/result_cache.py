"""The result cache: each spec file's check, kept between runs while nothing that decides it changed.

A file's result is decided by its bytes, the path reports show it under, the
JSON Schemas, the op profiles its check consulted, and modelspec itself (its
version, its code, and the YAML and JSON Schema libraries' versions). An
entry records all of them, so a run reuses a result only when each is the
same: a changed profile invalidates the specs that read it (a spec that
looked a profile up by a name no profile has, or matched its name against
every profile's patterns, read them all), and nothing else.

Where it lives: ``.modelspec_cache/`` at the repository's root (it holds its
own ``.gitignore`` and a ``CACHEDIR.TAG``), or ``$MODELSPEC_CACHE_DIR`` (a CI
job caches that folder between runs). One file, ``results``: a header line,
then one line per spec file::

    <report path> TAB <checksum> TAB <JSON record>

The checksum (BLAKE2b over the path and the record) binds a record to its
path, so a truncated, edited or moved line is ignored and rewritten, never
trusted; a file with another header (another cache format) is ignored whole.
Finding whether a file changed reads its bytes and hashes them (SHA-256),
except that, as git's index does, a file whose ``stat`` (size, mtime, inode,
ctime) is what the record saw is taken as unchanged without reading it, once
its mtime is over :data:`RACY_NS` older than when it was read (a file
rewritten in the same clock tick as it was read is hashed again).

Writing: a run collects its new records and, at the end, merges them into
the file under a ``filelock`` lock (``results.lock``): it re-reads the file
(another run may have written since), replaces its own lines, and writes a
temporary file renamed over ``results``. A reader never takes the lock: the
rename is atomic, so it sees the old file or the new one. A cache that
cannot be written is reported once on stderr and the run goes on.

A second file, ``profiles``, keeps the last checked op profiles folder (:func:`load_profile_data`): a
header line, then ``<key> TAB <checksum> TAB <JSON documents>``, the key a SHA-256 over the folder's files'
names and bytes and :func:`environment_digest`. On a hit, the profiles are built from the documents without
reading their YAML or checking them against the schema and the rules again.

What a record keeps (:class:`~pipeline.runner.Verdict`) is the file's
result before anything the whole run decides (duplicate names, and any
selection of problems a configuration makes later), the name the file states
(for the duplicate-name rule of a run that does not check it), and its
``list`` row.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import stat as stat_module
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from pipeline.problems import PASSES, FileResult, InlineIgnore, Location, Outcome, Problem, Severity
from pipeline.runner import Verdict, read_spec_bytes, shared_outcomes, stated_name_of
from pipeline.yaml_source import load_bytes, load_path

#: The environment variable that moves the cache folder.
CACHE_DIR_ENV = "MODELSPEC_CACHE_DIR"

#: The cache folder's name under the repository's root.
CACHE_FOLDER = ".modelspec_cache"

#: The format of the ``results`` file; another format's file is ignored whole.
FORMAT = 1
HEADER = f"modelspec result cache, format {FORMAT}\n"

RESULTS_FILE = "results"
LOCK_FILE = "results.lock"

#: How much older than its reading a file's mtime must be for its ``stat`` to stand for its bytes (2 s:
#: file systems with a coarse clock tick stamp a rewrite in the same tick with the same mtime).
RACY_NS = 2_000_000_000

#: A record's profile dependencies when the check read every profile (a name-pattern search, a missing arch).
EVERY_PROFILE = "*"

_OUTCOME_LETTERS = {Outcome.PASSED: "p", Outcome.FAILED: "f", Outcome.SKIPPED: "s"}
_LETTER_OUTCOMES = {letter: outcome for outcome, letter in _OUTCOME_LETTERS.items()}
_SEVERITY_LETTERS = {Severity.ERROR: "e", Severity.WARNING: "w"}
_LETTER_SEVERITIES = {letter: severity for severity, letter in _SEVERITY_LETTERS.items()}

def content_digest(data: bytes) -> str:
    """SHA-256 of *data*, in hex: what a record knows a file's bytes by."""
    return hashlib.sha256(data).hexdigest()





def line_checksum(path: str, record: str) -> str:
    """The checksum that binds a cache line's *record* to its *path* (BLAKE2b, 128 bits, hex): a line moved to
    another path, truncated or edited fails it."""
    return hashlib.blake2b(f"{path}\t{record}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@functools.lru_cache(maxsize=None)
def _folder_digest(folder: Path, pattern: str) -> str:
    """SHA-256 over the names and bytes of the files of *folder* matching *pattern*, in name order."""
    hasher = hashlib.sha256()
    for path in sorted(folder.rglob(pattern)):
        data = path.read_bytes()
        hasher.update(f"{path.relative_to(folder).as_posix()} {len(data)}\n".encode())
        hasher.update(data)
    return hasher.hexdigest()


def environment_digest() -> str:
    """What decides every result besides the file and the profiles: modelspec's version and code, the schemas,
    and the versions of the libraries that read YAML and JSON Schema (a parser's message is part of a result)."""
    import yaml  # pylint: disable=import-outside-toplevel

    from pipeline import __version__  # pylint: disable=import-outside-toplevel
    from pipeline.resources import data_dir  # pylint: disable=import-outside-toplevel

    package = Path(__file__).resolve().parent
    parts = [f"format {FORMAT}", f"modelspec {__version__}", f"code {_folder_digest(package, '*.py')}",
             f"schemas {_folder_digest(data_dir('schemas'), '*.json')}",
             f"PyYAML {yaml.__version__} libyaml {yaml.__with_libyaml__}",
             *(_installed(name) for name in ("yaml", "jsonschema_rs"))]
    return content_digest("\n".join(parts).encode())[:32]


def _installed(name: str) -> str:
    """Which build of the module *name* is installed: its file's path, size and mtime (a reinstall changes them;
    cheaper than asking ``importlib.metadata``). Found without importing it: a run the cache answers never
    validates a schema, and importing jsonschema_rs costs 10 ms."""
    import importlib.util  # pylint: disable=import-outside-toplevel

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    path = (spec.origin if spec is not None else None) or name
    try:
        status = os.stat(path)
    except OSError:
        return f"{name} {path}"
    return f"{name} {path} {status.st_size} {status.st_mtime_ns}"


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
    """The :class:`CacheKeys` of a run against *profiles* (an :class:`~pipeline.op_profiles.OpProfiles`)."""
    return CacheKeys(environment_digest(),
                     {arch: content_digest(profile.path.read_bytes()) for arch, profile in profiles.profiles.items()})


class RecordingProfiles(Mapping):
    """A profiles mapping that notes which archs a check looked up (a missing one too), or that it read all.

    :class:`~pipeline.op_profiles.OpProfiles` is built over one per file, so
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

def encode_verdict(verdict: Verdict, row: Optional[Dict[str, Any]]) -> Optional[Tuple[str, str]]:
    """*verdict* as the JSON texts of its result and of its ``list`` *row*; ``None`` when it cannot be kept
    exactly (a problem about another file)."""
    result = verdict.result
    if any(problem.file != result.file for problem in result.problems):
        return None
    payload = {
        "o": "".join(_OUTCOME_LETTERS[outcome] for _, outcome in result.outcomes),
        "p": [[p.line, p.column, p.pass_name, p.code, _SEVERITY_LETTERS[p.severity], p.message, list(p.path)]
              for p in result.problems],
        "n": verdict.name,
        "a": [verdict.name_at.line, verdict.name_at.column],
        "i": [[ignore.line, ignore.column, list(ignore.codes)] for ignore in result.ignores],
    }
    return json_text(payload), json_text(row)


def json_text(value: Any) -> str:
    """*value* as compact JSON, the way records store it."""
    return json.dumps(value, separators=(",", ":"))


def decode_verdict(file: str, record: "Record", with_row: bool = False) -> Verdict:
    """The :class:`~pipeline.runner.Verdict` a record keeps for *file* (its ``list`` row only *with_row*).

    Raises:
        KeyError, TypeError, ValueError, IndexError: When the record's texts are not what
            :func:`encode_verdict` writes.
    """
    payload = json.loads(record.verdict or "null")
    letters = payload["o"]
    if len(letters) != len(PASSES):
        raise ValueError("not one outcome per pass")
    outcomes = shared_outcomes(tuple(zip(PASSES, (_LETTER_OUTCOMES[letter] for letter in letters))))
    problems = tuple(Problem(file, int(line), int(column), str(pass_name), str(code), _LETTER_SEVERITIES[severity],
                             str(message), tuple(part if isinstance(part, (str, int)) else str(part) for part in path))
                     for line, column, pass_name, code, severity, message, path in payload["p"])
    ignores = tuple(InlineIgnore(int(line), int(column), tuple(str(code) for code in codes))
                    for line, column, codes in payload["i"])
    line, column = payload["a"]
    name = payload["n"]
    row = json.loads(record.row or "null") if with_row else None
    return Verdict(FileResult(file, outcomes, problems, ignores), name if isinstance(name, str) else None,
                   Location(int(line), int(column)), record.stated_name, row if isinstance(row, dict) else None)


def stat_text(status: os.stat_result) -> str:
    """The part of a ``stat`` that changes when a file is rewritten: size, mtime, inode, ctime (ns)."""
    return f"{status.st_size}:{status.st_mtime_ns}:{status.st_ino}:{status.st_ctime_ns}"


@dataclass(frozen=True)
class Record:
    """One file's line of the cache; the JSON parts stay text until asked for.

    Attributes:
        stat: :func:`stat_text` of the file when it was read.
        read_ns: When it was read (``time.time_ns()``), for the racy-stat rule.
        digest: SHA-256 of its bytes.
        environment: The :func:`environment_digest` it was read under.
        stated: The name its mapping states, as JSON (``null`` when it states no text name).
        dependencies: The profiles its check consulted, as a JSON list (:class:`RecordingProfiles`); ``None``
            for a record of the stated name only (the file was read for its name, not checked).
        profiles: :meth:`CacheKeys.depends` of those when it was checked.
        verdict: The result's JSON (:func:`encode_verdict`), or ``None`` for a name-only record.
        row: The ``list`` row's JSON, or ``None``.
    """

    stat: str
    read_ns: int
    digest: str
    environment: str
    stated: str
    dependencies: Optional[str] = None
    profiles: Optional[str] = None
    verdict: Optional[str] = None
    row: Optional[str] = None

    @property
    def stated_name(self) -> Optional[str]:
        """The name the file states, when it is text."""
        name = json.loads(self.stated)
        return name if isinstance(name, str) else None

    def to_line(self, file: str) -> str:
        """The cache line of this record for *file*."""
        rest = "\t".join([self.stat, str(self.read_ns), self.digest, self.environment, self.stated,
                          *("-" if part is None else part
                            for part in (self.dependencies, self.profiles, self.verdict, self.row))])
        return f"{file}\t{line_checksum(file, rest)}\t{rest}\n"

    def restated(self, status: os.stat_result, read_ns: int) -> "Record":
        """This record for the same bytes read again, under a new ``stat``."""
        return dataclasses.replace(self, stat=stat_text(status), read_ns=read_ns)

    def unchanged(self, status: os.stat_result) -> bool:
        """Whether *status* says the file is as this record read it (see :data:`RACY_NS`)."""
        return stat_text(status) == self.stat and status.st_mtime_ns + RACY_NS <= self.read_ns

    def current(self, keys: CacheKeys) -> bool:
        """Whether this record's verdict was reached under *keys*' environment and profiles."""
        return (self.verdict is not None and self.environment == keys.environment
                and self.dependencies is not None and keys.depends(self.dependencies) == self.profiles)


def new_record(status: os.stat_result, read_ns: int, digest: str, environment: str, stated_name: Optional[str],
               checked: Optional[Tuple[List[str], str, Tuple[str, str]]] = None) -> Record:
    """A record of a file just read: its stated name, and, for a file *checked*, ``(dependencies, their
    digest, encode_verdict(...))``."""
    if checked is None:
        return Record(stat_text(status), read_ns, digest, environment, json_text(stated_name))
    dependencies, profiles, (verdict, row) = checked
    return Record(stat_text(status), read_ns, digest, environment, json_text(stated_name), json_text(dependencies),
                  profiles, verdict, row)


def parse_record(file: str, checksum: str, rest: str) -> Optional[Record]:
    """The record of a cache line, or ``None`` when the line is not one this format wrote for *file*."""
    if line_checksum(file, rest) != checksum:
        return None
    fields = rest.split("\t")
    if len(fields) != 9 or not fields[1].isdigit():
        return None
    stat, read_ns, digest, environment, stated, *optional = fields
    return Record(stat, int(read_ns), digest, environment, stated, *(None if part == "-" else part
                                                                      for part in optional))


# ---- the checked op profiles ----------------------------------------------------------------

#: The file of a cache folder that keeps the last checked op profiles folder's documents.
PROFILES_FILE = "profiles"
PROFILES_HEADER = f"modelspec op profile cache, format {FORMAT}\n"


def profiles_key(paths: Sequence[Path]) -> Optional[str]:
    """What decides a profiles folder's checked documents: the names and bytes of its files *paths* (the
    folder's ``*.yaml``, in name order) and :func:`environment_digest` (modelspec's version and code, the
    schemas, the YAML and JSON Schema libraries); ``None`` when a file cannot be read (the loader says why)."""
    hasher = hashlib.sha256(f"{environment_digest()}\n".encode())
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        hasher.update(f"{path.name} {len(data)}\n".encode("utf-8", "surrogateescape"))
        hasher.update(data)
    return hasher.hexdigest()


def load_profile_data(folder: Path, key: str) -> Optional[Dict[str, dict]]:
    """The checked documents (``{file name: document}``) kept in *folder* under *key*, or ``None``: no
    file, another format or key, or a line whose checksum fails (a torn or edited entry is never trusted)."""
    try:
        text = (folder / PROFILES_FILE).read_text(encoding="utf-8")
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
    exactly (:func:`json_exact`) and *folder* exists; a folder that cannot be written is let be (the next run
    checks again).

    The folder is never created here: profiles are read before a command has checked its arguments, and a
    command refused for a usage error leaves nothing behind. The result cache's save creates it, so the run
    after a repository's first keeps the profiles.
    """
    if not folder.is_dir() or not json_exact(documents):
        return
    record = json.dumps(documents, separators=(",", ":"), allow_nan=False)
    try:
        _replace(folder / PROFILES_FILE, f"{PROFILES_HEADER}{key}\t{line_checksum(key, record)}\t{record}\n")
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


# ---- the folder ------------------------------------------------------------------------------

def cache_folder(root: Path) -> Path:
    """Where the cache of the repository at *root* lives: ``$MODELSPEC_CACHE_DIR``, else ``root/.modelspec_cache``."""
    moved = os.environ.get(CACHE_DIR_ENV)
    return Path(moved) if moved else root / CACHE_FOLDER


class ResultCache:
    """The records of one cache folder, read once, and the lines this run adds.

    Args:
        folder: The cache folder (created when the run first writes).
        keys: The run's :class:`CacheKeys`.
        file: The folder's file the lines live in. Another store of lines keyed by path (such as
            :mod:`pipeline.artifact_cache`'s) keeps its own file, with its own *header*, under the same lock.
        header: The file's first line, naming its format; a file with another header is ignored whole.
    """

    def __init__(self, folder: Path, keys: CacheKeys, file: str = RESULTS_FILE, header: str = HEADER) -> None:
        self.folder = folder
        self.keys = keys
        self.file = file
        self.header = header
        self._read_as = _file_stat(folder / file)
        self._lines, self._total = _read_lines(folder / file, header)
        self._new: set = set()  # the files this run has new lines for; the lines wait in a spool file
        self._spool: Optional[Any] = None

    def record(self, file: str) -> Optional[Record]:
        """The valid record of *file* (see :func:`parse_record`), or ``None``."""
        line = self.line(file)
        return parse_record(file, *line) if line is not None else None

    def known_name(self, file: str, status: os.stat_result) -> Tuple[bool, Optional[str]]:
        """``(True, the name it states)`` when *file*'s record is valid, of this environment, and its stat
        stands for the file's bytes (:meth:`Record.unchanged`); else ``(False, None)``.

        The same answer as :meth:`record` then :attr:`Record.stated_name`, for
        the duplicate-name rule's pass over every other spec of a catalogue,
        without building a record.
        """
        tail = self._lines.get(file)
        if tail is None:
            return False, None
        checksum, _, rest = tail.partition("\t")
        fields = rest.split("\t", 5)
        if len(fields) != 6 or fields[0] != stat_text(status) or fields[3] != self.keys.environment \
                or not fields[1].isdigit() or status.st_mtime_ns + RACY_NS > int(fields[1]) \
                or line_checksum(file, rest) != checksum:
            return False, None
        name = json.loads(fields[4])
        return True, name if isinstance(name, str) else None

    def stated_name(self, path: Path, display: str) -> Optional[str]:
        """The ``name`` the file at *path* (shown as *display*) states, when it is text: from its record when
        that is current (its stat, else its bytes' digest), else by loading it strictly (no other pass), and a
        name-only record of that is added."""
        status = regular_file_stat(path)
        if status is None:
            return stated_name_of(load_path(path, display))
        known, name = self.known_name(display, status)
        if known:
            return name
        record = self.record(display)
        read_ns = now_ns()
        raw = read_spec_bytes(path)
        if raw is None:
            return stated_name_of(load_path(path, display))
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
        """*file*'s raw ``(checksum, record)``, to hand to a worker process."""
        tail = self._lines.get(file)
        if tail is None:
            return None
        checksum, _, rest = tail.partition("\t")
        return checksum, rest

    def add(self, file: str, line: str) -> None:
        """Keep *line* (:meth:`Record.to_line`) as *file*'s record when the run saves (spooled to a temporary
        file, so a run over a catalogue holds no new line in memory)."""
        if self._spool is None:
            self._spool = tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogateescape", newline="\n")
        self._spool.write(line)
        self._new.add(file)

    def save(self) -> Optional[str]:
        """Add this run's lines to the folder's file; the reason it could not, or ``None``.

        Under the lock, the lines are appended to the file (a later line of a
        file wins), which costs what they weigh, not what the cache does. When
        the file holds more than twice as many lines as files (or is missing,
        or of another format), it is compacted instead: read again unless it
        is the one this run read (another run may have saved since), its valid
        lines this run replaces dropped, and the whole written line by line to
        a temporary file renamed over it. A reader never sees half a file; it
        may see half of an appended last line, which fails its checksum.
        """
        if not self._new:
            return None
        import filelock  # pylint: disable=import-outside-toplevel

        path = self.folder / self.file
        try:
            _prepare(self.folder)
            with filelock.FileLock(str(self.folder / LOCK_FILE), timeout=30):
                same = self._read_as is not None and _file_stat(path) == self._read_as
                current, total = (self._lines, self._total) if same else _read_lines(path, self.header)
                if current and total + len(self._new) <= 2 * len(current) + _SLACK:
                    _append(path, self._spooled())
                else:
                    _replace(path, self._merged(current))
        except (OSError, filelock.Timeout) as error:
            return f"{getattr(error, 'strerror', None) or error}"
        finally:
            self._new = set()
            self._spool.close()
            self._spool = None
        return None

    def _merged(self, current: Mapping[str, str]) -> Iterator[str]:
        """The text of the merged file, in pieces: the header, the valid lines of *current* this run does not
        replace (a damaged line is dropped, not carried on), then this run's."""
        yield self.header
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


def _file_stat(path: Path) -> Optional[str]:
    try:
        return stat_text(os.stat(path))
    except OSError:
        return None


#: Lines a results file may hold beyond twice its files before a save compacts it.
_SLACK = 1000


def _read_lines(path: Path, header: str = HEADER) -> Tuple[Dict[str, str], int]:
    """``{file: "checksum TAB record"}`` of a results file (a later line of a file wins), and how many lines it
    holds; empty when it is missing or of another format.

    A line without its two tabs (a truncated last line) is left out here; one
    whose checksum fails is left out by :func:`parse_record`.
    """
    lines: Dict[str, str] = {}
    total = 0
    try:
        with open(path, "r", encoding="utf-8", errors="surrogateescape", newline="\n") as handle:
            if handle.readline() != header:
                return {}, 0
            for line in handle:
                total += 1
                file, tab, tail = line.rstrip("\n").partition("\t")
                if tab and "\t" in tail:
                    lines[file] = tail
    except OSError:
        return {}, 0
    return lines, total


def _append(path: Path, lines: Iterable[str]) -> None:
    """Append *lines* to *path*, after a line break if a killed run left a last line unfinished."""
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


def _prepare(folder: Path) -> None:
    """Create the cache folder with its ``.gitignore`` and ``CACHEDIR.TAG``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
        if not (folder / name).exists():
            _replace(folder / name, text)


def _replace(path: Path, text: Iterable[str]) -> None:
    """Write *text* (a string, or its pieces) to a temporary file beside *path*, then rename it over *path*
    (no fsync: a torn file is caught by the header and the checksums, and costs only a re-check)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as handle:
            handle.writelines([text] if isinstance(text, str) else text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def regular_file_stat(path: Path) -> Optional[os.stat_result]:
    """*path*'s ``stat`` when it is a regular file (following links), else ``None``."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status if stat_module.S_ISREG(status.st_mode) else None


def now_ns() -> int:
    """The wall clock, for :attr:`Record.read_ns`."""
    return time.time_ns()
