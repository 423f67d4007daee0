"""``modelspec diff BASE [HEAD]``: what a change does to the catalogue, as resolved stacks, for a reviewer.

Each side is the catalogue as a git revision has it (its ``specs/`` and, when
it has them, its ``op_profiles/``, exported to a temporary folder) or, for a
missing HEAD, as the working tree has it; both are resolved by this
modelspec, so the comparison shows what the specs and profiles changed, not
what a newer modelspec does differently, and needs no committed
``resolved/``. The comparison and its text and Markdown forms are
:mod:`pipeline.catalogue.diff`'s.

Against the working tree from the merge base (the usual ``diff origin/main``), only what the change touches is
read from git and resolved (:func:`_changed_sides`): a spec git names in no change is one resolution for both
sides, diff's memo's by its git blob (:mod:`pipeline.cache.diff_memo`) or the artifact cache's when they know it,
so ``diff`` costs what the change does, not what the catalogue holds. git is asked in a thread of its own while
the working tree's specs are walked, or their walk is read from the names snapshot a check recorded
(:func:`pipeline.cache.names.every_spec`). When the op profiles differ between the sides in any way, every spec is
exported and resolved on each.

The base side is the merge base of BASE and HEAD (the ``HEAD`` commit when
HEAD is left out), as ``git diff BASE...HEAD`` and ``--changed-since``
compare: what landed on BASE after the branch left it is not this change's,
and must not show up reversed as if the change undid it. The heading names
that commit when it is not BASE's own (BASE moved on since the branch
left it). ``--no-merge-base`` compares with BASE itself, for two
revisions that are not a branch and its base (two release tags).

Exit codes: 0 (or 1 with ``--exit-code`` when a model was added, removed or
changed, or a spec newly fails to resolve or no longer does), 2 for a git
failure or broken op profiles at a side.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Tuple

import click

from pipeline.commands.output import echo, echo_rendered

from pipeline.commands.git_options import git_errors
from pipeline.commands.options import root_option

if TYPE_CHECKING:
    from pipeline.catalogue.diff import SharedResolutions

#: The label of the working tree side.
WORKING_TREE = "working tree"


@click.command(name="diff", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("base", metavar="BASE")
@click.argument("head", metavar="[HEAD]", required=False)
@root_option
@click.option("--format", "fmt", type=click.Choice(("text", "markdown", "json")), default="text", show_default=True,
              help="text for a terminal or a log, markdown for a pull-request comment, json for tools "
                   "(schemas/catalogue-diff.schema.json).")
@click.option("--exit-code", is_flag=True,
              help="Exit 1 when a model was added, removed or changed, or a spec newly fails to resolve or no "
                   "longer does.")
@click.option("--merge-base/--no-merge-base", "use_merge_base", default=True, show_default=True,
              help="Compare with the merge base of BASE and HEAD (what HEAD branched from), like git diff "
                   "BASE...HEAD; --no-merge-base compares with BASE itself.")
@click.option("--no-cache", is_flag=True,
              help="Read and check the op profiles afresh instead of taking them from the result cache "
                   "(.modelspec_cache/, or $MODELSPEC_CACHE_DIR), where they are kept checked.")
def command(base: str, head: Optional[str], root: Optional[Path], fmt: str, exit_code: bool,
            use_merge_base: bool, no_cache: bool) -> None:
    """Show what a change does to the catalogue's resolved stacks and spec facts.

    Compares the catalogue at the merge base of git revision BASE and HEAD
    (the commit HEAD branched from, as git diff BASE...HEAD does, so what
    landed on BASE since is not shown as undone) with HEAD (a revision), or
    with the working tree when HEAD is left out (the merge base is then
    BASE's with the HEAD commit). The heading names the merge base when
    BASE has moved on since.
    --no-merge-base compares with BASE exactly, e.g. two release tags.

    It tells the models added and removed, and for each changed model what
    moved: layers per kind, MTP layers, flavours and op counts, derived
    widths, the vision tower's stack, and every spec fact by its field name,
    e.g. "deepseek-v3: moe 58 -> 57; MTP 1 -> 2; num_hidden_layers 61 -> 60;
    mtp_depth 1 -> 2" or "deepseek-v3: num_experts 256 -> 128"; and the
    specs that do not resolve on either side.

    \b
    Examples:
      modelspec diff origin/main                   # your branch, uncommitted work included
      modelspec diff origin/main HEAD --format markdown > comment.md
      modelspec diff v1 v2 --no-merge-base         # two tags, whatever their history

    Exit codes: 0 (1 with --exit-code when something moved or a spec newly
    fails to resolve or no longer does), 2 a git failure or broken op
    profiles.
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.diff import diff_catalogues, render_json, render_markdown, render_text
    from pipeline.cache.names import every_spec
    from pipeline.catalogue.git import ChangesAsked, check_revision
    from pipeline.check.repo import find_repo

    from pipeline.cache.stamps import cache_folder

    repo = find_repo(root)
    with git_errors():
        for rev in filter(None, (base, head)):
            check_revision(rev)
        asked = ChangesAsked(repo.root, base, listed=[repo.display(repo.specs), PROFILES]) \
            if head is None and use_merge_base else None
    # git answers in a thread of its own while the working tree's specs are walked
    files = every_spec(repo, not no_cache) if asked is not None and repo.specs.is_dir() else ([], [])
    with git_errors():
        changes = asked.changes() if asked is not None else None
        commit, label = _base_side(repo, base, head, use_merge_base) if changes is None \
            else _merge_base_side(repo, base, changes)
    kept = None if no_cache else cache_folder(repo.root)  # each side's profiles, checked, kept in this repo's cache
    shared: SharedResolutions = {}  # a spec the change left alone is resolved once, for both sides
    with tempfile.TemporaryDirectory(prefix="modelspec-diff-") as scratch:
        sides = _changed_sides(repo, (changes, asked.listed()), label, kept, not no_cache, Path(scratch) / "change",
                               files) if changes is not None else None
        if sides is not None:
            before, after = sides
        else:
            before = _catalogue(repo, commit, label, Path(scratch) / "base", kept, shared)
            after = _catalogue(repo, head, head, Path(scratch) / "head", kept, shared) if head \
                else _working_tree(repo, kept, shared)
    result = diff_catalogues(before, after)
    render = {"markdown": render_markdown, "json": render_json}.get(fmt, render_text)
    echo_rendered(_rules(repo, commit, head, fmt) + render(result), nl=False)
    raise SystemExit(1 if exit_code and not result.empty else 0)


def _merge_base_side(repo, base: str, changes) -> Tuple[str, str]:
    """The base side's commit and label (as :func:`_base_side` gives them) of *changes*, what changed from the
    merge base of *base* and the HEAD commit to the working tree (:func:`~pipeline.catalogue.git.changes_since`).

    Raises:
        GitError: See :func:`~pipeline.catalogue.git.commit_of`.
    """
    from pipeline.catalogue.git import commit_of  # pylint: disable=import-outside-toplevel

    is_base = changes.base == (changes.ref_commit or commit_of(repo.root, base))
    return changes.base, base if is_base else f"merge base {changes.base[:12]} of {base} and HEAD"


def _changed_sides(repo, changes, label: str, profiles_cache: Optional[Path], use_cache: bool, scratch: Path,
                   files: Tuple[Sequence[str], Sequence[str]]):
    """Both sides of the change *changes* (with the merge base's files under specs/ and op_profiles/: their blob
    ids, by path) from the merge base (labelled *label*) to the working tree (*files*: its spec files and their
    displays),
    each spec resolved only where the change touches it (:func:`~pipeline.catalogue.diff.load_change`): the
    specs the working tree holds at the same path with the same bytes as the merge base (git says so: no change
    names them) are one resolution for both sides, the artifact cache's when it has it (with *use_cache*).

    ``None`` (compare the long way, each side exported and resolved) when the op profiles differ between the
    sides in any way (a change under ``op_profiles/``, a file one side has and the other lacks), when they are
    broken (the long way reports them, by side), or when ``specs/`` is reached through a link.
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.diff import load_change
    from pipeline.check.discovery import find_spec_files

    from pipeline.commands.options import save_cache

    scope = _alike_profiles(repo, changes, profiles_cache)
    if scope is None:
        return None
    at_base, touched, profiles = scope
    shown = dict(zip(*files))
    same = {display for display in files[1] if display in at_base and display not in touched}
    before = _base_of_change(repo, at_base, same, scratch)
    cache = _artifact_cache(repo, profiles) if use_cache else None
    try:
        return load_change(repo, (before, find_spec_files([before.specs]) if before.specs.is_dir() else []),
                           [path for path, display in shown.items() if display not in same],
                           [path for path, display in shown.items() if display in same], (label, WORKING_TREE),
                           profiles, cache, shown, at_base)
    finally:
        save_cache(cache)


def _alike_profiles(repo, changes, profiles_cache: Optional[Path]):
    """``(the merge base's files under specs/ and op_profiles/, by path: their blob ids; the paths the change
    touches; the working tree's op profiles)`` when the op profiles are alike on both sides (*changes*: the
    change and those files) and not broken, and ``specs/`` is no link; else ``None``."""
    # pylint: disable=import-outside-toplevel
    from pipeline.pricing.op_profiles import OpProfileError

    changes, at_base = changes
    specs = repo.display(repo.specs)
    if not repo.specs.is_dir() or repo.specs.resolve() != repo.root.resolve() / specs:
        return None
    touched = {path for change in changes.files for path in (change.path, change.old_path) if path}
    if any(path.startswith(PROFILES + "/") for path in touched) or not _same_profiles(repo, at_base):
        return None
    try:
        return at_base, touched, _profiles(repo, profiles_cache)
    except OpProfileError:
        return None


def _base_of_change(repo, at_base, same, scratch: Path):
    """The base side's repository in *scratch*: the spec files of the merge base (*at_base*, their blob ids)
    but those *same* on both sides, exported."""
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.git import export_blobs
    from pipeline.check.discovery import SPEC_SUFFIXES
    from pipeline.check.repo import SpecRepo

    specs = repo.display(repo.specs) + "/"
    scratch.mkdir()
    with git_errors():
        export_blobs(repo.root, {path: blob for path, blob in at_base.items() if path.startswith(specs)
                                 and path not in same and path.lower().endswith(SPEC_SUFFIXES)}, scratch)
    return SpecRepo(scratch)


#: The folder of a repository's own op profiles (:attr:`pipeline.check.repo.SpecRepo.profiles`).
PROFILES = "op_profiles"


def _same_profiles(repo, at_base) -> bool:
    """Whether the working tree's op profiles folder holds exactly the files the merge base has there (*at_base*:
    :func:`~pipeline.catalogue.git.blobs_at`), no link nor untracked file beside them; none of them changed is
    the caller's to know. Without the folder on either side, both use the bundled profiles."""
    based = {path[len(PROFILES) + 1:] for path in at_base if path.startswith(PROFILES + "/")}
    own = repo.root / PROFILES
    if not own.is_dir():
        return not based and not own.is_symlink()
    present = {entry.relative_to(own).as_posix() for entry in own.rglob("*") if entry.is_symlink() or not entry.is_dir()}
    return present == based


def _profiles(repo, profiles_cache: Optional[Path]):
    """The working tree's op profiles, kept checked in the result cache folder *profiles_cache* when given.

    Raises:
        OpProfileError: If they are broken.
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.cache.results import ProfileCache
    from pipeline.pricing.op_profiles import load_op_profiles

    return load_op_profiles(repo.profiles, ProfileCache(profiles_cache) if profiles_cache else None)


def _artifact_cache(repo, profiles):
    """The repository's artifact cache (:class:`~pipeline.cache.artifacts.ArtifactCache`), or ``None`` when a
    profile went since *profiles* were read."""
    # pylint: disable=import-outside-toplevel
    from pipeline.cache.artifacts import ArtifactCache
    from pipeline.cache.results import cache_keys
    from pipeline.cache.stamps import cache_folder

    try:
        keys = cache_keys(profiles)
    except OSError:
        return None
    return ArtifactCache(cache_folder(repo.root), keys)
def _rules(repo, commit: str, head: Optional[str], fmt: str) -> str:
    """The rule files the change brings (:mod:`pipeline.catalogue.rule_changes`), opening a text or Markdown
    report ("this pull request changes the rules"); ``""`` for JSON (its schema has no place for them) or none."""
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue import rule_changes
    from pipeline.spec.resources import bundled_profiles_dir

    if fmt == "json":
        return ""
    with git_errors():
        changes = rule_changes.rule_changes(repo.root, commit, head, bundled_profiles_dir())
    return (rule_changes.render_markdown if fmt == "markdown" else rule_changes.render_text)(changes)


def _loaded(repo, label: str, shown_root: str, profiles_cache: Optional[Path] = None,
            shared: Optional[SharedResolutions] = None):
    """Load *repo*'s catalogue (its op profiles kept checked in the result cache folder *profiles_cache*, when
    given; the resolutions of *shared* taken, and its own added, :func:`~pipeline.catalogue.diff.load_catalogue`);
    broken op profiles end the command with their problems and exit code 2."""
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.diff import load_catalogue
    from pipeline.pricing.op_profiles import OpProfileError

    from pipeline.commands.options import progress_bar
    from pipeline.check.discovery import find_spec_files

    files = find_spec_files([repo.specs]) if repo.specs.is_dir() else []  # walked once: the bar's total and the specs
    try:
        with progress_bar(len(files), f"reading {label}") as update:
            return load_catalogue(repo, label, update, profiles_cache, shared, files)
    except OpProfileError as error:
        for problem in error.problems:
            shown = problem.file.replace(str(repo.root.resolve()) + "/", shown_root)
            echo(f"{shown}:{problem.line}:{problem.column}: error [{problem.code}] {problem.message}", err=True)
        echo(f"modelspec: the op profiles at {label} are broken; fix them before comparing", err=True)
        raise SystemExit(2) from None


def _base_side(repo, base: str, head: Optional[str], use_merge_base: bool) -> Tuple[str, str]:
    """The revision the base side is read from, and its label.

    With the merge base: its commit id, labelled ``merge base 0123456789ab of
    origin/main and HEAD`` (or *base* when *base* is the merge base itself,
    as it is for a branch not behind it); without: *base* itself, labelled *base*.

    Raises:
        GitError: If the merge base cannot be found (see :func:`~pipeline.catalogue.git.merge_base_of`).
    """
    from pipeline.catalogue.git import merge_base_of  # pylint: disable=import-outside-toplevel

    if not use_merge_base:
        return base, base
    commit, is_base = merge_base_of(repo.root, base, head or "HEAD")
    return commit, base if is_base else f"merge base {commit[:12]} of {base} and {head or 'HEAD'}"


def _catalogue(repo, rev: str, label: str, scratch: Path, profiles_cache: Optional[Path] = None,
               shared: Optional[SharedResolutions] = None):
    """The catalogue as revision *rev* has it, exported into *scratch*, named *label*.

    A broken profile is shown as ``<rev>:op_profiles/<arch>.yaml``, the path ``git show`` reads it by.
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.git import export_revision
    from pipeline.check.repo import SpecRepo

    scratch.mkdir()
    with git_errors():
        export_revision(repo.root, rev, [repo.display(repo.specs), "op_profiles"], scratch)
    return _loaded(SpecRepo(scratch), label, f"{rev}:", profiles_cache, shared)


def _working_tree(repo, profiles_cache: Optional[Path] = None, shared: Optional[SharedResolutions] = None):
    """The catalogue as the working tree has it."""
    return _loaded(repo, WORKING_TREE, "", profiles_cache, shared)
