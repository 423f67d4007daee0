"""The artifact cache: what decides each file of ``resolved/``, kept between ``regen`` runs, so that an unchanged,
already-regenerated catalogue is found in sync without checking a spec or building an artifact.

An artifact's bytes are decided by its spec's bytes and path, the op profiles its stack resolves against (its
arch's and, with a tower, the vision profile: both are among the profiles the spec's check consulted) and
modelspec itself (its version and code, the schemas: :func:`~pipeline.cache.stamps.environment_digest`). The
result cache's record of a spec (:class:`~pipeline.cache.results.Record`) already knows the first and the
digest of the profiles it consulted, so an entry here is keyed by them and says what regen wrote for it::

    <spec path> TAB <checksum> TAB <spec digest> TAB <environment> TAB <profiles digest>
        TAB <artifact file> TAB <artifact digest> TAB <SHA-256 of the file's bytes> TAB <stat> TAB <read ns>

in the file ``artifacts`` of the result cache folder (:func:`~pipeline.cache.stamps.cache_folder`: honours
``$MODELSPEC_CACHE_DIR``; ``--no-cache`` bypasses it), written as the results are (one
:class:`~pipeline.cache.results.ResultCache` store of lines with its own header: appended or compacted under the
``filelock`` lock, renamed into place, a line bound to its spec path by
:func:`~pipeline.cache.results.line_checksum`, so a truncated, edited, moved or forged line is ignored and
re-verified, never trusted; another header, another format, is ignored whole).

Two facts are used, separately:

- **The file is as regen left it** (:meth:`Entry.vouches`): its ``stat`` (size, mtime, inode, ctime) is the one
  the entry recorded when regen wrote it or last read it and found it equal to what it would write, and its mtime
  is over :data:`~pipeline.cache.stamps.RACY_NS` older than that moment (git's racy rule: a file rewritten in the
  same clock tick as it was read could keep its stat). The assumption, as git's and the result cache's: a
  file whose size, mtime, inode and ctime are all unchanged holds the same bytes (an edit changes the ctime, which
  a user cannot set back without setting the clock back). A file whose stat differs, or is racy, is read and its
  SHA-256 compared with the entry's; equal, the entry is restated with the new stat; else the file is read and
  judged as it always was (:func:`pipeline.catalogue.regen.read_resolved`). A vouched file is not read: the entry knows
  what the plan needs of it (its name, the spec path and digest it records) and that it is regen's own.
- **The spec's artifact would be those bytes** (:meth:`Entry.decides`): the spec's result-cache record is
  current and its stat stands for the spec's bytes (``Record.current``, ``Record.unchanged``: the test
  :func:`pipeline.cache.verdicts.verdicts` uses, or the bytes' digest matches), and the entry's spec digest, environment
  and profiles digest are the record's. Then regen knows the artifact's file name and bytes without building it.

``index.json`` is always read and compared with the index the plan makes; a line keyed ``index.json`` records
the SHA-256 of the last one regen wrote or found equal to the one it would write, so an index with those bytes is
regen's rendering of its document: it is parsed without checking its shape against the schema again, and
compared with the planned index as documents, without rendering that (:meth:`ArtifactCache.index_digest`).

Everything else takes the path regen always took, so the findings are the same by construction: a spec without a
current record or entry is checked and built; a file not vouched is read, parsed and judged; an orphan, a foreign
file, a duplicate name or a failing spec is found by the same plan.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from pipeline.cache.results import CacheKeys, Record, ResultCache, line_checksum
from pipeline.cache.stamps import RACY_NS, content_digest, stat_text
from pipeline.check.repo import ARTIFACT_SUFFIX

#: The file of the cache folder holding the entries.
ARTIFACTS_FILE = "artifacts"
#: The format of the ``artifacts`` file (raised when an entry's fields change); another format's file is ignored.
ARTIFACTS_FORMAT = 1
ARTIFACTS_HEADER = f"modelspec artifact cache, format {ARTIFACTS_FORMAT}\n"

_FIELDS = 8

#: The key of the line that records the last ``index.json`` found to be regen's (no spec path is this: a spec's
#: path ends in ``.yaml`` or ``.yml``).
INDEX_KEY = "index.json"


@dataclass(frozen=True)
class Vouched:
    """An artifact file's bytes as the cache knows them without reading them: their SHA-256 (hex).

    Stands where :mod:`pipeline.catalogue.regen` would hold the file's text; two are equal when the digests are.
    """

    sha256: str

    def matches(self, text: object) -> bool:
        """Whether *text* (a file's text, or another :class:`Vouched`) is these bytes."""
        if isinstance(text, Vouched):
            return text.sha256 == self.sha256
        return isinstance(text, str) and content_digest(text.encode("utf-8")) == self.sha256


@dataclass(frozen=True)
class Entry:
    """One spec's line: what its artifact is, under which inputs, and the file as regen last saw it.

    Attributes:
        spec_digest: SHA-256 of the spec's bytes (the result cache's ``Record.digest``).
        environment: :func:`~pipeline.cache.stamps.environment_digest` it was built under.
        profiles: The digest of the profiles the spec's check consulted (``Record.profiles``).
        file: The artifact's file name in ``resolved/`` (``<name>.json``).
        digest: The artifact's own ``digest`` member (the index lists it).
        sha256: SHA-256 of the artifact file's bytes.
        stat: :func:`~pipeline.cache.stamps.stat_text` of the file when regen wrote it or read it equal.
        read_ns: When (``time.time_ns()``), for the racy rule.
    """

    spec_digest: str
    environment: str
    profiles: str
    file: str
    digest: str
    sha256: str
    stat: str
    read_ns: int

    def to_line(self, path: str) -> str:
        """The cache line of this entry for the spec *path*."""
        rest = "\t".join([self.spec_digest, self.environment, self.profiles, self.file, self.digest, self.sha256,
                          self.stat, str(self.read_ns)])
        return f"{path}\t{line_checksum(path, rest)}\t{rest}\n"

    @property
    def name(self) -> str:
        """The model name the artifact states (its file name without ``.json``)."""
        return self.file[:-len(ARTIFACT_SUFFIX)]

    def document(self, path: str) -> Dict[str, str]:
        """The members of the artifact the plan reads (``name``, ``path``, ``digest``), for the spec *path*."""
        return {"name": self.name, "path": path, "digest": self.digest}

    def vouches(self, status: os.stat_result) -> bool:
        """Whether *status* says the file holds the bytes this entry saw (see the module's racy rule)."""
        return stat_text(status) == self.stat and status.st_mtime_ns + RACY_NS <= self.read_ns

    def decides(self, record: Record, keys: CacheKeys) -> bool:
        """Whether this entry's artifact is the one the spec whose current *record* this is would get now."""
        return (record.current(keys) and self.environment == keys.environment
                and self.spec_digest == record.digest and self.profiles == record.profiles)

    def restated(self, status: os.stat_result, read_ns: int) -> "Entry":
        """This entry for the same bytes seen again, under a new ``stat``."""
        return dataclasses.replace(self, stat=stat_text(status), read_ns=read_ns)


def parse_entry(path: str, checksum: str, rest: str) -> Optional[Entry]:
    """The entry of a cache line, or ``None`` when the line is not one this format wrote for *path*."""
    if line_checksum(path, rest) != checksum:
        return None
    fields = rest.split("\t")
    if len(fields) != _FIELDS or not fields[7].isdigit() or not fields[3].endswith(ARTIFACT_SUFFIX):
        return None
    return Entry(*fields[:7], int(fields[7]))


def new_entry(record: Record, file: str, digest: str, text: str, status: os.stat_result, read_ns: int,
              sha256: Optional[str] = None) -> Entry:
    """The entry of an artifact file regen wrote (or read equal) as *text*, for the spec of *record*; *sha256* is
    that of *text*'s UTF-8 bytes when the caller has it (a worker took it), else taken here."""
    return Entry(record.digest, record.environment, str(record.profiles), file, digest,
                 sha256 or content_digest(text.encode("utf-8")), stat_text(status), read_ns)


class ArtifactCache:
    """The spec records (the result cache) and the artifact entries of one cache folder, and what this run adds.

    Args:
        folder: The cache folder.
        keys: The run's :class:`~pipeline.cache.results.CacheKeys`.
    """

    def __init__(self, folder: Path, keys: CacheKeys) -> None:
        self.keys = keys
        self.results = ResultCache(folder, keys)
        self._entries = ResultCache(folder, keys, ARTIFACTS_FILE, ARTIFACTS_HEADER)
        self._parsed: Dict[str, Optional[Entry]] = {}  # this run's entries, and those of the file parsed so far

    @property
    def folder(self) -> Path:
        """The cache folder."""
        return self.results.folder

    def expect_lookups(self, count: int) -> None:
        """Say that the run is about to look up *count* specs' records and entries
        (:meth:`~pipeline.cache.results.ResultCache.expect_lookups`)."""
        self.results.expect_lookups(count)
        self._entries.expect_lookups(count)

    def entry(self, path: str) -> Optional[Entry]:
        """The valid entry of the spec *path* (this run's, else the file's), or ``None``."""
        if path not in self._parsed:
            line = self._entries.line(path)
            self._parsed[path] = parse_entry(path, *line) if line is not None else None
        return self._parsed[path]

    def by_file(self) -> Dict[str, List[Tuple[str, Entry]]]:
        """Every valid entry of this environment, by artifact file: ``{file: [(spec path, entry), ...]}``."""
        found: Dict[str, List[Tuple[str, Entry]]] = {}
        for path, entry in self._valid():
            if entry.environment == self.keys.environment:
                found.setdefault(entry.file, []).append((path, entry))
        return found

    def _valid(self) -> Iterator[Tuple[str, Entry]]:
        for path in self._entries.paths():
            entry = self.entry(path) if path != INDEX_KEY else None
            if entry is not None:
                yield path, entry

    def index_digest(self) -> Optional[str]:
        """The SHA-256 of the last ``index.json`` regen wrote or found equal to the one it would write, under this
        environment, or ``None``."""
        line = self._entries.line(INDEX_KEY)
        if line is None or line_checksum(INDEX_KEY, line[1]) != line[0]:
            return None
        environment, _, digest = line[1].partition("\t")
        return digest if environment == self.keys.environment and len(digest) == 64 else None

    def add_index(self, text: str) -> None:
        """Record *text* as an ``index.json`` regen wrote, or found equal to the one it would write."""
        rest = f"{self.keys.environment}\t{content_digest(text.encode('utf-8'))}"
        if self._entries.line(INDEX_KEY) != (line_checksum(INDEX_KEY, rest), rest):
            self._entries.add(INDEX_KEY, f"{INDEX_KEY}\t{line_checksum(INDEX_KEY, rest)}\t{rest}\n")

    def add(self, path: str, entry: Entry) -> None:
        """Keep *entry* as the spec *path*'s when the run saves."""
        if self.entry(path) != entry:
            self._parsed[path] = entry
            self._entries.add(path, entry.to_line(path))

    def save(self) -> Optional[str]:
        """Write this run's spec records and entries; the reason it could not, or ``None``."""
        results, entries = self.results.save(), self._entries.save()
        return results or entries
