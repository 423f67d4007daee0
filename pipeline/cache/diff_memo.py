"""``diff``'s memo of the specs a change leaves alone: each one's model, by the git blob of its bytes.

``diff`` against the working tree resolves a spec git names in no change once, for both sides
(:func:`pipeline.catalogue.diff.load_change`); of such a spec the comparison needs only its model's name and
``digest`` (one document on both sides did not move). Git has already said its bytes are the merge base's blob,
by that blob's id (``git ls-tree``, the id a content hash git computed), so what the spec came to is decided by
that id, its display path, the op profiles and modelspec: this memo keeps it under them, and the next ``diff``
takes it without reading the spec's record, its artifact entry or its ``stat``.

The file ``diff-memo`` of the result cache folder (:func:`~pipeline.cache.stamps.cache_folder`) holds a header
line (the format, modelspec's environment (:func:`~pipeline.cache.stamps.environment_digest`), the digest of the
op profiles (:meth:`~pipeline.cache.results.CacheKeys.every_profile`), the ``specs/`` folder's real path and a BLAKE2b
of the body, :func:`~pipeline.cache.stamps.fingerprint`), then a JSON object ``{display: [blob, name, digest]}``.
A torn, edited or foreign file, or one of another environment, profiles or folder, is no memo at all. Only a spec
that resolved is remembered: a failing one's reasons are its record's, read each time. This module only reads and
writes the file; what to remember is :mod:`pipeline.catalogue.diff`'s.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Optional, Tuple

from pipeline.cache.results import replace_file
from pipeline.cache.stamps import environment_digest, fingerprint
from pipeline.spec.files import open_regular

#: The file of the cache folder holding the memo.
MEMO_FILE = "diff-memo"
#: Its format; a file of another format is ignored.
FORMAT = 1
HEADER = f"modelspec diff memo, format {FORMAT}"

#: ``{display: [git blob id, model name, artifact digest]}`` as the file holds it: :func:`remembered` reads a value
#: only once it has found it of that shape.
Memo = Dict[str, Any]


def _header(profiles: str, specs: Path, checksum: str) -> str:
    return "\t".join([HEADER, environment_digest(), profiles, json.dumps(os.path.realpath(specs)), checksum])


def load(cache_folder: Path, profiles: str, specs: Path) -> Memo:
    """The memo recorded in *cache_folder* for the folder *specs* under the profiles digest *profiles* and this
    environment; empty when there is none or it is not one (another format, environment, profiles or folder,
    torn or edited)."""
    try:
        with open_regular(cache_folder / MEMO_FILE, "r", encoding="utf-8", newline="\n") as handle:
            data = handle.read()  # a FIFO or a device in its place is no memo, not a run that never ends
    except (OSError, UnicodeDecodeError):
        return {}
    head, _, body = data.partition("\n")
    parts = head.rsplit("\t", 1)
    if len(parts) != 2 or head != _header(profiles, specs, parts[1]) or fingerprint(body.encode()) != parts[1]:
        return {}
    try:
        found = json.loads(body)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def record(cache_folder: Path, profiles: str, specs: Path, memo: Memo) -> None:
    """Write *memo*, replacing the file whole as the cache's other files are
    (:func:`~pipeline.cache.results.replace_file`: never through a link); a folder that cannot be written is
    let be (the next ``diff`` reads the records again)."""
    body = json.dumps(dict(sorted(memo.items())), separators=(",", ":"))
    try:
        cache_folder.mkdir(parents=True, exist_ok=True)
        replace_file(cache_folder / MEMO_FILE, _header(profiles, specs, fingerprint(body.encode())) + "\n" + body)
    except OSError:
        pass


def remembered(memo: Memo, display: str, blob: Optional[str]) -> Optional[Tuple[str, str]]:
    """``(name, digest)`` of the model the spec *display* came to when its bytes were the blob *blob*, or
    ``None`` when the memo does not know it."""
    found = memo.get(display)
    if not isinstance(found, list) or len(found) != 3 or blob is None or found[0] != blob:
        return None
    name, digest = found[1], found[2]
    return (name, digest) if isinstance(name, str) and isinstance(digest, str) else None
