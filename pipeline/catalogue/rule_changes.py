"""The rules a change brings: each file that decides a verdict (not a spec) changed between two revisions.

A pull request is judged by the base branch's modelspec (``.github/workflows/pr.yml``), but what it changes in the
rules still has to be read by a person: modelspec's code (``pipeline/``), its schemas, its op profiles, the
configuration that chooses what is checked (``modelspec.toml``, ``[tool.modelspec]`` in ``pyproject.toml``, the
pre-commit configuration) and the workflows that run it. :func:`rule_changes` lists each such file changed (from
git, :func:`pipeline.catalogue.git.changed_under`), an op profile with what moved per tensor and op count
(:func:`pipeline.check.gate.profile_moves`, as ``modelspec diff`` shows a spec); :func:`render_markdown` and
:func:`render_text` open ``modelspec diff``'s report with them, under the banner "this pull request changes the
rules", so the comment a reviewer reads starts there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Optional, Sequence, Tuple

from pipeline.catalogue.git import changed_under, file_at
from pipeline.check.gate import profile_moves
from pipeline.spec.escape import markdown_code, markdown_text, printable
from pipeline.spec.yaml_source import load_bytes

#: The files and folders (root-relative; a folder ends in ``/``) whose change changes the rules, in the order
#: a report lists their kinds. ``pr.yml``'s scope job and ``CODEOWNERS`` (README) name the same paths.
RULE_PATHS = ("pipeline/", "schemas/", "op_profiles/", "pyproject.toml", "modelspec.toml", ".pre-commit-config.yaml",
              ".ci/", ".github/")

#: The opening line of a report of rule changes: the pull-request comment starts with it.
BANNER = "this pull request changes the rules"

#: What each of :data:`RULE_PATHS` is, for a reader.
_KINDS = {"pipeline/": "modelspec's code", "schemas/": "schema", "op_profiles/": "op profile",
          "pyproject.toml": "configuration", "modelspec.toml": "configuration",
          ".pre-commit-config.yaml": "configuration", ".ci/": "CI", ".github/": "workflow"}


@dataclass(frozen=True)
class RuleChange:
    """One rule file changed.

    Attributes:
        status: ``added``, ``modified``, ``renamed`` or ``deleted``.
        path: Its root-relative path (for a rename, the new one).
        kind: What it is: ``op profile``, ``configuration``, ``schema``, ``modelspec's code``, ``CI``, ``workflow``.
        moves: For an op profile, what moved per tensor and op count (:func:`~pipeline.check.gate.profile_moves`);
            else ``()``.
        old_path: For a rename, the old path; else ``None``.
    """

    status: str
    path: str
    kind: str
    moves: Tuple[str, ...] = ()
    old_path: Optional[str] = None


def _kind(path: str) -> Optional[str]:
    """What the file *path* is among :data:`RULE_PATHS`, or ``None`` when it is none of them."""
    for prefix in RULE_PATHS:
        if path == prefix or (prefix.endswith("/") and path.startswith(prefix)):
            return _KINDS[prefix]
    return None


def _profile(raw: Optional[bytes], path: str):
    """The mapping an op profile's bytes hold, or ``None``."""
    if raw is None:
        return None
    data = load_bytes(raw, path).data
    return data if isinstance(data, dict) else None


def rule_changes(root: Path, base: str, head: Optional[str], bundled: Optional[Path] = None) -> Tuple[RuleChange, ...]:
    """Every rule file (:data:`RULE_PATHS`) that differs between commit *base* and *head* (a revision; the
    working tree when ``None``), by path; an op profile (``op_profiles/<arch>.yaml``) with its moves, and said
    to be the repository's own (``gate.own-profile``) when the folder *bundled* (the running modelspec's
    profiles) holds another text under its name or none: *root* is then a spec repository bringing its own rules.

    Raises:
        GitError: If *root* is in no work tree, or a revision is refused or unknown.
    """
    found = []
    for change in changed_under(root, base, head, RULE_PATHS):
        kind = _kind(change.path)
        if kind is None:
            continue
        moves: Tuple[str, ...] = ()
        if kind == "op profile" and PurePosixPath(change.path).suffix == ".yaml":
            before = _profile(file_at(root, base, change.old_path or change.path), change.path)
            after = _profile(None if change.status == "deleted" else file_at(root, head, change.path), change.path)
            moves = profile_moves(before, after) or (("no tensor, op count or key moved: its comments or layout did",)
                                                      if change.status == "modified" else ())
            if bundled is not None and change.status != "deleted" and _not_bundled(root, head, change.path, bundled):
                kind = "op profile of the repository's own, not the one modelspec bundles (gate.own-profile)"
        found.append(RuleChange(change.status, change.path, kind, moves, change.old_path))
    return tuple(found)


def _not_bundled(root: Path, head: Optional[str], path: str, bundled: Path) -> bool:
    """Whether the op profile *path* at *head* is not the text the folder *bundled* holds under its name (or
    *root*'s profiles are *bundled* itself: modelspec's own checkout, where they are the same files)."""
    if (root / "op_profiles").resolve() == bundled.resolve():
        return False
    return file_at(root, head, path) != file_at(bundled, None, PurePosixPath(path).name)


def _what(change: RuleChange) -> str:
    """A change's status as a reader says it: ``modified``, ``renamed from x``."""
    return f"renamed from {printable(change.old_path)}" if change.old_path else change.status


def render_markdown(changes: Sequence[RuleChange]) -> str:
    """The rule changes as Markdown opening the pull-request comment (``""`` when there are none): the banner, then
    a table of each file, what it is, and what moved."""
    if not changes:
        return ""
    lines = [f"**{BANNER}**: the verdict here is the base branch's modelspec, schemas and op profiles', and this pull "
             "request's own tests and tool ran in the rules job. A code owner reads each rule file below before "
             "the specs.", "", "| rule file | what it is | what changed |", "| --- | --- | --- |"]
    for change in changes:
        moved = markdown_text("; ".join(change.moves)) if change.moves else ""
        lines.append(f"| {markdown_code(change.path)} | {change.kind}, {markdown_text(_what(change))} | {moved} |")
    return "\n".join(lines) + "\n\n"


def render_text(changes: Sequence[RuleChange]) -> str:
    """The rule changes as text opening ``modelspec diff``'s report (``""`` when there are none)."""
    if not changes:
        return ""
    lines = [f"{BANNER}:"]
    for change in changes:
        lines.append(f"  {change.path} ({change.kind}, {_what(change)})")
        lines.extend(f"    {move}" for move in change.moves)
    return "\n".join(lines) + "\n\n"
