"""What the gate says of a repository beside its specs: its own op profiles, and the changed specs it leaves out.

A pull request to a spec repository can bring the rules it is judged by: an
``op_profiles/`` of its own (a copy of the bundled profiles with one invented
tensor keeps a made-up width's total true), or a configuration (``exclude``,
``specs``, a pre-commit file list) that leaves the spec it changed out of
``check --changed-since``. Neither is a spec's problem, so each is reported
here, under the file it is about, as a warning no configuration silences
(:data:`~pipeline.spec.problems.UNSILENCED`: the configuration is what it
is about), an error under ``--strict``:

- ``gate.own-profile``: a profile of the repository's own ``op_profiles/``,
  changed since the ``--changed-since`` revision, that differs from (or is
  missing in) the bundled profiles of the running modelspec, with what
  differs, per tensor and op count (:func:`profile_moves`, which
  ``modelspec diff`` shows as well);
- ``gate.excluded-change``: a spec file changed since the revision that the
  configuration or the files named leave out of the check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.spec.files import open_regular
from pipeline.spec.problems import PASSES, FileResult, Outcome, Problem, Severity
from pipeline.spec.yaml_source import load_bytes

#: The codes of this module (see :func:`pipeline.spec.problems.all_codes`).
CODES = {
    "gate.own-profile": "The repository's own op profile differs from the one the running modelspec bundles (or "
                        "the bundle has none of its name): its counts decide the check, so a reviewer reads it.",
    "gate.excluded-change": "A spec changed since the --changed-since revision that the configuration (exclude, "
                            "specs) or the files named leave out of the check: nothing judged the change.",
}

#: How many of a profile's moves a problem's message names before it counts the rest.
SHOWN_MOVES = 6

_NOT_RUN = tuple((name, Outcome.SKIPPED) for name in PASSES)


def _data(raw: Optional[bytes], file: str) -> Optional[Mapping[str, Any]]:
    """The mapping a profile's bytes hold, or ``None`` (no file, or not a mapping)."""
    if raw is None:
        return None
    data = load_bytes(raw, file).data
    return data if isinstance(data, dict) else None


def _shape(entry: Mapping[str, Any]) -> str:
    """A tensor's name and shape as a move shows them: ``mlp.up_proj.weight [intermediate_size, hidden_size]``."""
    shape = entry.get("shape")
    shown = "[" + ", ".join(map(str, shape)) + "]" if isinstance(shape, list) else str(shape)
    return f"{entry.get('name')} {shown}"


def _by_role(entries: Any) -> Dict[str, Mapping[str, Any]]:
    """A weights list keyed by each entry's role (its name when it has none)."""
    found: Dict[str, Mapping[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict):
            found[str(entry.get("role", entry.get("name")))] = entry
    return found


def _tensor_moves(where: str, before: Any, after: Any) -> List[str]:
    """What changed in one weights list, per tensor (by role)."""
    old, new = _by_role(before), _by_role(after)
    moves = []
    for role in sorted(set(old) | set(new)):
        if role not in old:
            moves.append(f"{where} tensor {role} added: {_shape(new[role])}")
        elif role not in new:
            moves.append(f"{where} tensor {role} removed: {_shape(old[role])}")
        else:
            moves.extend(f"{where} tensor {role} {key} {old[role].get(key)} → {new[role].get(key)}"
                         for key in sorted(set(old[role]) | set(new[role]), key=str)
                         if old[role].get(key) != new[role].get(key))
    return moves


def _op_moves(kind: str, before: Any, after: Any) -> List[str]:
    """What changed in one layer kind's op counts (an op it lacks counts 0)."""
    old = before if isinstance(before, dict) else {}
    new = after if isinstance(after, dict) else {}
    return [f"{kind} op {op} {old.get(op, 0)} → {new.get(op, 0)}"
            for op in sorted(set(old) | set(new), key=str) if old.get(op, 0) != new.get(op, 0)]


def profile_moves(before: Optional[Mapping[str, Any]], after: Optional[Mapping[str, Any]]) -> Tuple[str, ...]:
    """What changed from the op profile *before* to *after* (each a loaded mapping, ``None`` when absent): each
    layer kind added or removed, each op count, each tensor added, removed or reshaped (by role), and each
    other key by name, in that order; ``()`` when they are the same."""
    old, new = before or {}, after or {}
    moves: List[str] = []
    old_kinds = old.get("layer_kinds") if isinstance(old.get("layer_kinds"), dict) else {}
    new_kinds = new.get("layer_kinds") if isinstance(new.get("layer_kinds"), dict) else {}
    for kind in sorted(set(old_kinds) | set(new_kinds), key=str):
        if kind not in old_kinds or kind not in new_kinds:
            moves.append(f"layer kind {kind} {'added' if kind not in old_kinds else 'removed'}")
        old_kind = old_kinds.get(kind) if isinstance(old_kinds.get(kind), dict) else {}
        new_kind = new_kinds.get(kind) if isinstance(new_kinds.get(kind), dict) else {}
        moves.extend(_op_moves(kind, old_kind.get("ops"), new_kind.get("ops")))
        moves.extend(_tensor_moves(kind, old_kind.get("weights"), new_kind.get("weights")))
        moves.extend(f"{kind} {key} changed" for key in sorted(set(old_kind) | set(new_kind), key=str)
                     if key not in ("ops", "weights") and old_kind.get(key) != new_kind.get(key))
    moves.extend(_tensor_moves("model", old.get("model_weights"), new.get("model_weights")))
    moves.extend(f"{key} changed" for key in sorted(set(old) | set(new), key=str)
                 if key not in ("layer_kinds", "model_weights") and old.get(key) != new.get(key))
    return tuple(moves)


def _read(path: Path) -> Optional[bytes]:
    """A regular file's bytes, or ``None``."""
    try:
        with open_regular(path) as handle:
            return handle.read()
    except OSError:
        return None


def own_profile_differences(own: Path, bundled: Path, names: Sequence[str]) -> List[Tuple[str, Tuple[str, ...]]]:
    """``(file name, moves)`` for each profile of *names* (file names) in the folder *own* that differs from the
    same name in *bundled* (all of it, as added, when *bundled* lacks it), by name; ``[]`` when *own* is
    *bundled* itself (modelspec's own checkout, or a repository without an ``op_profiles/``). A profile *own*
    lacks is not one of its rules: the repository's own profiles replace the bundled ones whole."""
    if own.resolve() == bundled.resolve():
        return []
    found = []
    for name in sorted(set(names)):
        mine, theirs = _read(own / name), _read(bundled / name)
        if mine is not None and mine != theirs:
            moves = profile_moves(_data(theirs, name), _data(mine, name))
            found.append((name, moves or ("its text differs",)))
    return found


def _shown(moves: Sequence[str]) -> str:
    """*moves* joined for a message, the first :data:`SHOWN_MOVES` named and the rest counted."""
    head = "; ".join(moves[:SHOWN_MOVES])
    rest = len(moves) - SHOWN_MOVES
    return head + (f"; and {rest} more" if rest > 0 else "")


def own_profile_results(own: Path, bundled: Path, shown_folder: str, version: str,
                        names: Sequence[str]) -> List[FileResult]:
    """A :class:`FileResult` with one ``gate.own-profile`` warning for each profile :func:`own_profile_differences`
    finds among *names*, under ``<shown_folder>/<name>``; *version* is the running modelspec's."""
    results = []
    for name, moves in own_profile_differences(own, bundled, names):
        file = f"{shown_folder}/{name}"
        message = (f"{file} is not the profile modelspec {version} bundles ({_shown(moves)}); these counts are the "
                   "repository's own, so a reviewer reads them: a pull request that brings or changes a profile "
                   "changes the rules it is judged by")
        results.append(FileResult(file, _NOT_RUN, (Problem(file, 1, 1, "load", "gate.own-profile", Severity.WARNING,
                                                           message),)))
    return results


def excluded_results(excluded: Sequence[str], ref: str) -> List[FileResult]:
    """A :class:`FileResult` with one ``gate.excluded-change`` warning for each spec path of *excluded* (changed
    since *ref*, left out of the check)."""
    return [FileResult(path, _NOT_RUN, (Problem(
        path, 1, 1, "load", "gate.excluded-change", Severity.WARNING,
        f"{path} changed since {ref} but is left out of this check (the configuration's exclude or specs, or the "
        "files named): nothing judged the change; check it, or change the configuration in a pull request of its "
        "own"),)) for path in excluded]
