"""The answer of the last clean ``regen`` of the whole catalogue, so that the next one does the work of what changed.

A ``regen`` whose plan had no problem at all (every spec passed and wrote its artifact under its own name, nothing
in the way, no orphan left, ``resolved/`` holding exactly the artifacts and the index) records, in the file
``regen-answer`` of the result cache folder (:func:`~pipeline.cache.stamps.cache_folder`), what it left:

- a header: the format, modelspec's environment (:func:`~pipeline.cache.stamps.environment_digest`), the digest
  of the op profiles' bytes (:meth:`~pipeline.cache.results.CacheKeys.every_profile`), the folders ``resolved/``
  and ``specs/`` (real paths)
  and a BLAKE2b of the rest
  (:func:`~pipeline.cache.stamps.fingerprint`), so a torn, edited or foreign file is ignored whole;
- one line per spec, in display order: its display path, its ``stat``, its artifact's file name, the artifact's
  ``digest`` and the SHA-256 of the file's bytes, and that file's ``stat``;
- a last line for ``index.json``: the SHA-256 of its bytes and its ``stat``.

A ``stat`` taken within :data:`~pipeline.cache.stamps.RACY_NS` of its file's mtime is recorded as
:data:`~pipeline.cache.stamps.RACY`, which matches no ``stat`` (git's racy rule): such a file counts as changed.

The next ``regen`` (:func:`pipeline.catalogue.regen.regen_changed`) takes the answer while it is of the same
environment, profiles and folder and lists the same specs in the same order; it then checks and builds only the
specs whose ``stat`` changed, reads only the files of ``resolved/`` whose ``stat`` changed, and falls back to the
whole regen for anything else. This module only reads and writes the file; it imports nothing of the check.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Tuple

from pipeline.spec.files import open_regular
from pipeline.cache.results import replace_file
from pipeline.cache.stamps import RACY, RACY_NS, environment_digest, fingerprint, now_ns, stat_text

#: The file of the cache folder holding the answer.
ANSWER_FILE = "regen-answer"
#: Its format; a file of another format is ignored.
FORMAT = 1
HEADER = f"modelspec regen answer, format {FORMAT}"

_SPEC_FIELDS = 6


@dataclass(frozen=True)
class Artifact:
    """One spec's line of the answer.

    Attributes:
        display: The spec's path as reports show it.
        spec_stat: Its :func:`~pipeline.cache.stamps.stat_text` (links followed), or ``RACY``.
        file: Its artifact's file name in ``resolved/``.
        digest: The artifact's ``digest`` member.
        sha256: SHA-256 of the artifact file's bytes.
        file_stat: The artifact file's ``lstat`` text, or ``RACY``.
    """

    display: str
    spec_stat: str
    file: str
    digest: str
    sha256: str
    file_stat: str

    @property
    def name(self) -> str:
        """The model name (the file name without ``.json``)."""
        return self.file[:-len(".json")]


@dataclass(frozen=True)
class Answer:
    """The recorded answer: every spec's :class:`Artifact`, in display order, and the index's bytes and stat."""

    artifacts: Tuple[Artifact, ...]
    index_sha256: str
    index_stat: str


def recorded_stat(status: os.stat_result, now: int) -> str:
    """The stat text to record for *status* taken at *now*: ``RACY`` within the racy window."""
    return RACY if status.st_mtime_ns + RACY_NS > now else stat_text(status)


def _header(profiles: str, folders: Sequence[Path], checksum: str) -> str:
    where = "\0".join(os.path.realpath(folder) for folder in folders)
    return "\t".join([HEADER, environment_digest(), profiles, where.replace("\t", "\0\0"), checksum])


def load(cache_folder: Path, profiles: str, folders: Sequence[Path]) -> Optional[Answer]:
    """The answer recorded in *cache_folder* for the folders *folders* (``resolved/`` and ``specs/``, real paths
    compared) under the profiles digest *profiles* and this environment, or ``None`` (none, another format,
    environment, profiles or folders, torn or edited)."""
    try:
        with open_regular(cache_folder / ANSWER_FILE, "r", encoding="utf-8", newline="\n") as handle:
            data = handle.read()  # a FIFO or a device in its place is no answer, not a run that never ends
    except (OSError, UnicodeDecodeError):
        return None
    head, _, body = data.partition("\n")
    parts = head.rsplit("\t", 1)
    if len(parts) != 2 or head != _header(profiles, folders, parts[1]) or fingerprint(body.encode()) != parts[1]:
        return None
    lines = body.split("\n")
    if len(lines) < 2 or lines[-1] != "":
        return None
    artifacts = []
    for line in lines[:-2]:
        fields = line.split("\t")
        if len(fields) != _SPEC_FIELDS:
            return None
        artifacts.append(Artifact(*fields))
    index = lines[-2].split("\t")
    if len(index) != 3 or index[0] != "index.json":
        return None
    return Answer(tuple(artifacts), index[1], index[2])


def record(cache_folder: Path, profiles: str, folders: Sequence[Path], answer: Answer) -> None:
    """Write *answer*, replacing the file whole as the cache's other files are
    (:func:`~pipeline.cache.results.replace_file`: never through a link, not flushed); a folder that cannot be
    written is let be (the next regen does it all)."""
    body = "".join(_lines(answer))
    try:
        cache_folder.mkdir(parents=True, exist_ok=True)
        replace_file(cache_folder / ANSWER_FILE, _header(profiles, folders, fingerprint(body.encode())) + "\n" + body)
    except OSError:
        pass


def forget(path: Path) -> None:
    """Remove *path*, if it is there (a stale answer, or a temporary file)."""
    try:
        path.unlink()
    except OSError:
        pass


def _lines(answer: Answer) -> Iterable[str]:
    for item in answer.artifacts:
        yield "\t".join([item.display, item.spec_stat, item.file, item.digest, item.sha256, item.file_stat]) + "\n"
    yield f"index.json\t{answer.index_sha256}\t{answer.index_stat}\n"


def plain(values: Iterable[str]) -> bool:
    """Whether every one of *values* can stand in a line of the answer (no tab, no line break)."""
    return not any("\t" in value or "\n" in value or "\r" in value for value in values)


def now() -> int:
    """The clock of the racy rule (:func:`~pipeline.cache.stamps.now_ns`)."""
    return now_ns()


__all__: List[str] = ["ANSWER_FILE", "Answer", "Artifact", "load", "plain", "record",
                      "recorded_stat", "forget", "now"]
