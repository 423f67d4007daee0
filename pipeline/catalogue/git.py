"""What changed since a git revision, which specs that touches, and the git work ``regen --commit`` and ``diff`` need.

This is the only module that talks to git: through GitPython, imported when
a function needs it (so ``modelspec check`` without ``--changed-since`` never
loads it, and a machine without the ``git`` command fails only these
functions, with a :class:`GitError`), except for the read-only questions of
``--changed-since``, which run the git command directly (:class:`_Plumbing`):
a gate asks them on every pull request, and importing GitPython costs more
than they do.

``--changed-since REF`` compares the working tree (staged, unstaged and
untracked files alike; of the untracked, those that can touch a spec:
:func:`_untracked_pathspecs`) with the merge base of REF and ``HEAD``, the commit a
pull request branched from, so a gate checks what the branch changed and not
what landed on REF since; ``modelspec diff BASE [HEAD]`` compares with the
same merge base (:func:`merge_base_of`), as ``git diff BASE...HEAD`` does.
From the changed files, :func:`select_specs` picks:

- every spec file added, modified or renamed (a renamed spec is checked
  under its new path); a deleted spec is reported as removed, never checked;
  a file in a folder the catalogue reaches through a symlink counts under
  the catalogue's name for it, wherever git finds it, and so does the file
  a spec that is a link names, whatever it is named (``vendor/x.spec``);
  a spec file changed in the catalogue's folders that the configuration or
  the files named leave out is :attr:`Selection.excluded`, never silently
  dropped (``gate.excluded-change``);
- every spec whose op profile changed: a profile ``op_profiles/<arch>.yaml``
  touches the specs of that arch (their ``arch``, or the profile their name
  matches), the vision profile touches the specs with a tower, and a spec
  whose arch cannot be told (unreadable, or no profile or several match its
  name) is taken whenever any profile changed, since a changed match pattern
  may be what decides it;
- every spec when the rules the run uses changed: the folders the running
  modelspec reads its rules from (its package and its schemas), when they lie
  in the repository (modelspec's own checkout, an editable install), or
  modelspec's pinned version in the repository (a line naming modelspec in
  ``.pre-commit-config.yaml``, a requirements or constraints file,
  ``pyproject.toml`` or a workflow, :func:`_pin_change`). A spec repository's
  own ``pipeline/`` or ``schemas/`` folder is just files: modelspec does not
  read them, so a change there touches no spec.

Refusals, each a :class:`GitError` whose message says what to do: a revision
that looks like an option (``--output=x``; git would read it as one), an
unknown revision, a root outside any git work tree, a repository git refuses
(not ``safe.directory``, a newer format: git's own words), and a shallow clone whose
history stops before the merge base (``git fetch --unshallow``;
``fetch-depth: 0`` in GitHub Actions), rather than a silent full or empty run.
"""

from __future__ import annotations

import atexit
import fnmatch
import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from pipeline.check.discovery import SPEC_SUFFIXES
from pipeline.pricing.op_profiles import VISION_ARCH, OpProfiles
from pipeline.spec.escape import printable
from pipeline.spec.files import MAX_BYTES, open_regular
from pipeline.spec.model import ModelSpecError
from pipeline.spec.yaml_source import load_path

#: The files (relative to the git work tree's top, as globs) where a repository pins the modelspec it runs.
PIN_FILES = (".pre-commit-config.yaml", "requirements*.txt", "constraints*.txt", "*requirements*.txt", "pyproject.toml",
             ".github/workflows/*.yml", ".github/workflows/*.yaml")

#: How to get the history a shallow clone lacks, said in every message about one.
UNSHALLOW_FIX = ("fetch the history: git fetch --unshallow (in GitHub Actions, actions/checkout with "
                 "fetch-depth: 0)")


class GitError(Exception):
    """A git question cannot be answered: a bad revision, no repository, a shallow history, a failed command.

    Its message names the problem and the fix; the commands report it with exit code 2.
    """


@dataclass(frozen=True)
class FileChange:
    """One file changed between the merge base and the working tree.

    Attributes:
        status: ``added``, ``modified``, ``renamed`` or ``deleted``.
        path: The file's path relative to the spec repository's root (``/``-separated), as
            :meth:`~pipeline.check.repo.SpecRepo.display` shows it (an undecodable byte as ``\\xff``, a control
            character escaped); for a rename, the new path.
        old_path: For a rename, the old path; else ``None``.
    """

    status: str
    path: str
    old_path: Optional[str] = None


@dataclass(frozen=True)
class Changes:
    """Every file that differs between the merge base of a revision and ``HEAD``, and the working tree.

    Attributes:
        ref: The revision as the user named it.
        base: The merge base's commit id (40 hex digits).
        files: The changed files inside the spec repository, sorted by path.
        pin: Why the modelspec the repository pins changed (:func:`_pin_change`), or ``None``.
        ref_commit: The commit id *ref* names, when git said it beside the merge base (:func:`_top_and_commits`);
            else ``None``.
    """

    ref: str
    base: str
    files: Tuple[FileChange, ...]
    pin: Optional[str] = None
    ref_commit: Optional[str] = None


def check_revision(rev: str) -> None:
    """Refuse a revision git would misread: empty, or starting with ``-`` (``--output=x`` is an option to git).

    Raises:
        GitError: Naming the revision and what to write instead.
    """
    if not rev.strip():
        raise GitError("the git revision is empty; name a branch, tag or commit, e.g. origin/main")
    if rev.startswith("-"):
        raise GitError(f"{rev!r} looks like an option, not a git revision, and is refused so git cannot read it as "
                       "one; name a branch, tag or commit, e.g. origin/main")


def _git() -> Any:
    """Import GitPython.

    Raises:
        GitError: If GitPython cannot find the ``git`` command.
    """
    try:
        import git  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise GitError(f"git is not usable here ({error}); install the git command") from None
    return git


def _open(root: Path) -> Any:
    """The git repository whose work tree holds *root*.

    Raises:
        GitError: If *root* is in no git work tree.
    """
    git = _git()
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise _not_a_repository(root) from None
    if repo.bare:
        raise _bare(root)
    try:  # GitPython opens a repository without git; git may still refuse it (safe.directory, a newer format)
        _run_git(repo.working_tree_dir, ["rev-parse", "--git-dir"])
    except _CommandFailed as failed:
        raise _refused(root, failed) from None
    return repo


def _refused(root: Path, failed: "_CommandFailed") -> "GitError":
    """The :class:`GitError` for git refusing the repository holding *root* (it is there, git says why not),
    with git's own words and fix on one line."""
    said = " ".join(line.strip() for line in str(failed).splitlines() if line.strip()).removeprefix("fatal: ")
    return GitError(f"git refuses the repository holding {root}: {printable(said)}")


class _CommandFailed(Exception):
    """A git command :class:`_Plumbing` ran exited non-zero (GitPython's ``GitCommandError`` for it)."""


class _Plumbing:
    """The ``git`` command in one work tree, run directly, for the read-only questions ``--changed-since`` asks
    on every pull request: the merge base, the diff, the untracked files, a file at the base.

    It answers as GitPython's ``repo.git.<command>(...)`` does (each is a git process there too), so
    :func:`merge_base` and the rest take either; what it saves is importing GitPython, which costs a gate
    40 to 65 ms, more than all of its git processes together. Everything that writes (``regen --commit``) or
    walks objects (``diff``) still goes through GitPython.

    Attributes:
        working_tree_dir: The top of the work tree.
        git: Itself: ``plumbing.git.merge_base(a, b)`` runs ``git merge-base a b``.
    """

    bare = False

    def __init__(self, top: str) -> None:
        self.working_tree_dir = top
        self.git = self

    def __enter__(self) -> "_Plumbing":
        return self

    def __exit__(self, *_: Any) -> None:
        return None

    def __getattr__(self, command: str) -> Callable[..., str]:
        def run(*args: str, strip_newline_in_stdout: bool = True) -> str:
            return _run_git(self.working_tree_dir, [command.replace("_", "-"), *args], strip_newline_in_stdout)
        return run


#: What git would read from the environment to take another repository or work tree than the one holding the
#: folder it runs in (the root's files compared with another history, or another folder's files). The repository
#: is the one holding the root, as GitPython finds it for ``diff`` and ``regen --commit``, so :func:`_run_git`
#: leaves them out.
_REPOSITORY_ENV = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE")

#: What git would read from the environment to read every pathspec another way (literally, ignoring case, as a
#: glob or not): the pathspecs :func:`_untracked_pathspecs` gives say with their own magic how to read them, and
#: read literally they would match no file, so :func:`_start_git` leaves these out too.
_PATHSPEC_ENV = ("GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS")


def _run_git(cwd: str, args: Sequence[str], strip_newline: bool = True) -> str:
    """``git ARGS`` in *cwd*, in the repository holding *cwd* (:data:`_REPOSITORY_ENV` and :data:`_PATHSPEC_ENV`
    ignored): its stdout (one trailing line break dropped when *strip_newline*, as GitPython does).

    Raises:
        GitError: If there is no ``git`` command.
        _CommandFailed: If git exits non-zero.
    """
    return _git_output(_start_git(cwd, args), strip_newline)


def _start_git(cwd: str, args: Sequence[str]) -> Any:
    """``git ARGS`` started in *cwd*, as :func:`_run_git` runs it, its output to be taken by :func:`_git_output`
    (two questions that do not wait on each other run at once); in a :class:`ChangesAsked` thread, among its
    :class:`_Processes`.

    Raises:
        GitError: If there is no ``git`` command, or the thread's questions were stopped.
    """
    env = {name: value for name, value in os.environ.items() if name not in _REPOSITORY_ENV + _PATHSPEC_ENV}
    env["LC_ALL"] = "C"  # git's messages in English: :func:`_open_plumbing` reads them
    processes = getattr(_ASKING, "processes", None)
    try:
        return (subprocess.Popen if processes is None else processes.start)(
            ["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
    except OSError as error:
        raise GitError(f"git is not usable here ({error.strerror or error}); install the git command") from None


def _git_output(process: Any, strip_newline: bool = True) -> str:
    """The stdout of the git *process* (:func:`_start_git`), once it has ended.

    Raises:
        _CommandFailed: If git exits non-zero.
    """
    out, err = process.communicate()
    if process.returncode != 0:
        raise _CommandFailed(err.decode("utf-8", "replace").strip())
    text = out.decode("utf-8", "surrogateescape")
    return text[:-1] if strip_newline and text.endswith("\n") else text


def _open_plumbing(root: Path) -> _Plumbing:
    """The work tree holding *root*, for :class:`_Plumbing`'s questions (the refusals :func:`_open` makes).

    Raises:
        GitError: If *root* is in no git work tree, in a bare repository, or in one git refuses.
    """
    try:
        return _Plumbing(_run_git(str(root), ["rev-parse", "--show-toplevel"]))
    except _CommandFailed:
        pass
    try:  # no work tree here: say whether there is a repository at all, a bare one, or one git refuses
        bare = _run_git(str(root), ["rev-parse", "--is-bare-repository"]).strip() == "true"
    except _CommandFailed as failed:
        raise (_not_a_repository(root) if "not a git repository" in str(failed) else _refused(root, failed)) \
            from None
    raise _bare(root) if bare else _not_a_repository(root)


def _not_a_repository(root: Path) -> GitError:
    """The :class:`GitError` for *root* lying in no git work tree."""
    return GitError(f"{root} is not in a git repository; --changed-since, diff and regen --commit need one")


def _bare(root: Path) -> GitError:
    """The :class:`GitError` for *root* lying in a bare repository."""
    return GitError(f"{root} is in a bare git repository, which has no work tree to compare")


def _command_errors() -> Tuple[type, ...]:
    """The exceptions a failed git command raises: :class:`_CommandFailed`, and GitPython's when it is loaded."""
    gitpython = sys.modules.get("git")
    return (_CommandFailed, gitpython.GitCommandError) if gitpython is not None else (_CommandFailed,)


def _prefix(repo: Any, root: Path) -> str:
    """*root* relative to the work tree's top, ``""`` or ending in ``/``."""
    relative = root.resolve().relative_to(Path(repo.working_tree_dir).resolve()).as_posix()
    return "" if relative == "." else relative + "/"


def _is_shallow(repo: Any) -> bool:
    """Whether the clone is shallow (its history is cut)."""
    return repo.git.rev_parse("--is-shallow-repository").strip() == "true"


def _commit_id(repo: Any, rev: str) -> Optional[str]:
    """The commit id *rev* names, or ``None`` if it names none."""
    try:
        return repo.git.rev_parse("--verify", "--quiet", f"{rev}^{{commit}}").strip() or None
    except _command_errors():
        return None


def resolve_revision(repo: Any, rev: str) -> str:
    """The commit id of *rev*.

    Raises:
        GitError: If *rev* is option-like or names no commit here (with the
            shallow-clone fix when the clone is shallow).
    """
    check_revision(rev)
    found = _commit_id(repo, rev)
    if found is None:
        shallow = (f"; this clone is shallow, so it may lack {rev!r}: {UNSHALLOW_FIX}"
                   if _is_shallow(repo) else "")
        raise GitError(f"{rev!r} names no commit in this repository; name a branch, tag or commit that exists here "
                       f"(git branch -a lists them), and in CI fetch it first, e.g. git fetch origin main{shallow}")
    return found


def merge_base(repo: Any, ref: str, head: str = "HEAD") -> str:
    """The merge base of *ref* and *head* (the commit *head* grew from, as ``git diff ref...head`` compares with).

    Raises:
        GitError: If *ref* or *head* is refused or unknown, ``HEAD`` has no
            commit, or there is no merge base (a shallow clone's cut history,
            or unrelated histories).
    """
    ref_id = resolve_revision(repo, ref)
    if head == "HEAD":
        head_id = _commit_id(repo, "HEAD")
        if head_id is None:
            raise GitError("HEAD has no commit yet; commit first, then compare with a revision")
    else:
        head_id = resolve_revision(repo, head)
    try:
        return repo.git.merge_base(ref_id, head_id).strip()
    except _command_errors():
        shown = "HEAD" if head == "HEAD" else repr(head)
        if _is_shallow(repo):
            raise GitError(f"{ref!r} and {shown} have no merge base in this shallow clone: its history stops before "
                           f"they meet; {UNSHALLOW_FIX}, then run again") from None
        grew = "this branch" if head == "HEAD" else shown
        raise GitError(f"{ref!r} and {shown} share no history (they have no merge base); compare with a revision "
                       f"{grew} grew from, e.g. origin/main") from None


def merge_base_of(root: Path, ref: str, head: str = "HEAD") -> Tuple[str, bool]:
    """The merge base of *ref* and *head* in the repository holding *root*, and whether it is *ref*'s own commit.

    Returns:
        ``(commit id, True)`` when *ref* is an ancestor of *head* (or *head*
        itself), so comparing with *ref* and with the merge base is the same;
        ``(commit id, False)`` when *ref* moved on after *head* left it.

    Raises:
        GitError: See :func:`merge_base`, and :func:`_open`.
    """
    with _open(root) as repo:
        found = merge_base(repo, ref, head)
        return found, found == resolve_revision(repo, ref)


_STATUS = {"A": "added", "M": "modified", "T": "modified", "U": "modified", "R": "renamed", "C": "added",
           "D": "deleted"}


def _parse_name_status(raw: str) -> List[Tuple[str, str, Optional[str]]]:
    """Parse ``git diff --name-status -z`` into ``(status, path, old path)`` (paths from the work tree's top)."""
    tokens = raw.split("\0")
    found = []
    index = 0
    while index < len(tokens) and tokens[index]:
        letter = tokens[index][0]
        if letter in "RC":
            found.append((_STATUS[letter], tokens[index + 2], tokens[index + 1] if letter == "R" else None))
            index += 3
        else:
            found.append((_STATUS.get(letter, "modified"), tokens[index + 1], None))
            index += 2
    return found


def changes_since(root: Path, ref: str, shown: Optional[Callable[[str], Optional[str]]] = None,
                  rules: Sequence[str] = ()) -> Changes:
    """Return what changed in the spec repository at *root* since the merge base of *ref* and ``HEAD``.

    The working tree is compared (tracked files staged or not, and the
    untracked files that ``.gitignore`` does not exclude and that can touch a
    spec: a spec file or op profile anywhere, any file under the *rules*
    folders, :func:`_untracked_pathspecs`); renames are found by git's
    similarity rule (``--find-renames``, 50 %). An untracked copy of a deleted
    file is an addition and a deletion, not a rename, since git only pairs
    renames among the files it tracks.

    Args:
        root: The spec repository's root.
        ref: The revision to compare with.
        shown: The catalogue's name (root-relative, as :class:`FileChange` gives paths) of the spec file at an
            absolute path git names, or ``None``: git names a file in a folder the catalogue reaches through a
            symlink (``specs -> data/specs``) by where it is, the catalogue by the link. Without it, or when it
            says ``None``, a path is the file's own, relative to *root* (a file outside *root* is left out).
        rules: The root-relative folders the running modelspec reads its rules from, ``"pipeline/"``
            (:func:`select_specs`): an untracked file there touches every spec.

    Raises:
        GitError: See :func:`merge_base`, and :func:`_open_plumbing`.
    """
    return _changes(_git_answers(root, ref, rules), shown)


class ChangesAsked:
    """:func:`changes_since`'s git questions, put in a thread of their own as soon as a command knows it needs
    them: the git processes (about 40 ms on a 10k catalogue: six of them, the diff stat'ing every tracked file)
    run while the command walks its catalogue and loads its op profiles, which need nothing from git.

    Only the git processes run in the thread; what their answers mean is
    worked out by :meth:`changes`, in the command's thread, and a
    :class:`GitError` is raised there, where :func:`changes_since` would
    have raised it. A command that ends before it takes them (Ctrl-C, a
    refusal raised first) stops the git process still running as it exits
    (:meth:`stop`), as an interrupt stops one run in the command's thread.
    """

    def __init__(self, root: Path, ref: str, rules: Sequence[str] = (), listed: Sequence[str] = ()) -> None:
        self._answers: Optional[_GitAnswers] = None
        self._listed: Dict[str, str] = {}
        self._error: Optional[Exception] = None
        self._processes = _Processes()
        atexit.register(self.stop)
        self._thread = threading.Thread(target=self._ask, args=(root, ref, rules, listed), name="modelspec-git",
                                        daemon=True)
        self._thread.start()

    def _ask(self, root: Path, ref: str, rules: Sequence[str], listed: Sequence[str]) -> None:
        _ASKING.processes = self._processes
        try:
            self._answers = _git_answers(root, ref, rules)
            if listed:
                self._listed = blobs_at(root, self._answers.base, listed)
        except Exception as error:  # pylint: disable=broad-except  # raised again by changes()
            self._error = error

    def stop(self) -> None:
        """Kill the git process the thread has running, and have it start no other (what a command that exits
        before it took the answers does)."""
        self._processes.stop()

    def changes(self, shown: Optional[Callable[[str], Optional[str]]] = None) -> Changes:
        """:func:`changes_since`'s answer, once git has given it.

        Raises:
            GitError: As :func:`changes_since`.
        """
        self._thread.join()
        atexit.unregister(self.stop)
        if self._error is not None:
            raise self._error
        return _changes(self._answers, shown)

    def listed(self) -> Dict[str, str]:
        """The regular files under the folders *listed* as the merge base has them (:func:`blobs_at`'s answer),
        once :meth:`changes` has been taken."""
        return self._listed


#: What a :class:`ChangesAsked` thread knows of itself: ``processes``, its :class:`_Processes`. The command's
#: own thread has none, and starts each git process itself.
_ASKING = threading.local()


class _Processes:
    """The git processes a :class:`ChangesAsked` thread starts, so that the command can stop them: Ctrl-C
    interrupts only the command's thread, and a daemon thread is dropped at exit, its git left running."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: List[Any] = []
        self._stopped = False

    def start(self, argv: Sequence[str], **options: Any) -> Any:
        """``subprocess.Popen(argv, **options)``, noted under the lock, so :meth:`stop` sees each process started.

        Raises:
            OSError: If it cannot be started.
            GitError: If :meth:`stop` was called: nothing is started then.
        """
        with self._lock:
            if self._stopped:
                raise GitError("git was stopped: modelspec is exiting")
            process = subprocess.Popen(argv, **options)
            self._started.append(process)
            return process

    def stop(self) -> None:
        """Kill each process started that still runs (one that ended is left as it is), and start no other."""
        with self._lock:
            self._stopped = True
            for process in self._started:
                process.kill()


@dataclass(frozen=True)
class _GitAnswers:
    """What git says of a work tree since a merge base, before the catalogue's names are put on it.

    Attributes:
        ref: The revision as the user named it.
        base: The merge base's commit id.
        found: ``(status, path, old path)`` of each file git's diff names, then each untracked file
            (``added``), paths from the work tree's top.
        prefix: The spec repository's root relative to the work tree's top (``""`` or ending in ``/``).
        top: The top of the work tree.
        pin: :func:`_pin_change`'s answer.
        ref_commit: The commit id *ref* names, when :func:`_top_and_commits` said it.
    """

    ref: str
    base: str
    found: Tuple[Tuple[str, str, Optional[str]], ...]
    prefix: str
    top: str
    pin: Optional[str]
    ref_commit: Optional[str]


def _git_answers(root: Path, ref: str, rules: Sequence[str] = ()) -> _GitAnswers:
    """Ask git what :func:`changes_since` needs: the merge base, the diff from it, the untracked files that can
    touch a spec (*rules*: :func:`changes_since`'s), the pin.

    Raises:
        GitError: See :func:`changes_since`.
    """
    check_revision(ref)
    known = _top_and_commits(root, ref)
    repo = _Plumbing(known[0]) if known is not None else _open_plumbing(root)
    try:
        if known is not None and known[1] == known[2]:  # ref is HEAD's commit: its own merge base, no git asked
            base = known[1]
        else:
            base = repo.git.merge_base(*known[1:]).strip() if known is not None else merge_base(repo, ref)
    except _CommandFailed:
        base = merge_base(repo, ref)  # says why there is none
    prefix = _prefix(repo, root)
    asked = _start_git(repo.working_tree_dir, ["ls-files", "--others", "--exclude-standard", "-z", "--",
                                               *_untracked_pathspecs(prefix, rules)])
    try:  # the untracked files are listed while the diff runs
        found = _parse_name_status(repo.git.diff("--name-status", "-z", "--find-renames", "--no-ext-diff", base,
                                                 "--", strip_newline_in_stdout=False))
        untracked = _git_output(asked, strip_newline=False)
    finally:
        if asked.returncode is None:  # the diff failed: the listing is not waited for
            asked.kill()
            asked.communicate()
    pin = _pin_change(repo, base, [path for _, path, _ in found])
    found.extend(("added", path, None) for path in untracked.split("\0") if path)
    return _GitAnswers(ref, base, tuple(found), prefix, repo.working_tree_dir, pin,
                       known[1] if known is not None else None)


def _untracked_pathspecs(prefix: str, rules: Sequence[str]) -> List[str]:
    """The untracked files :func:`select_specs` can take something from, as git pathspecs from the work tree's
    top: a file with a spec's suffix anywhere (:data:`~pipeline.check.discovery.SPEC_SUFFIXES`, in any case, as the walk
    takes them: a new spec, or a new op profile, wherever a link leads the catalogue or the profiles), and
    every file under the *rules* folders (root-relative; *prefix* is the root from the top). Any other
    untracked file touches no spec, and listing them cost ``--changed-since`` 35 ms on a 10k catalogue beside
    an uncommitted ``resolved/`` of as many artifacts."""
    return [*(f":(glob,icase)**/*{suffix}" for suffix in SPEC_SUFFIXES),
            *(f":(top,literal){prefix}{folder}" for folder in rules)]


def _top_and_commits(root: Path, ref: str) -> Optional[Tuple[str, str, str]]:
    """``(the work tree's top, ref's commit, HEAD's commit)``, asked of git at once; ``None`` when git refuses
    any of them (no work tree, an unknown revision, no commit yet, a revision naming more than one commit):
    the questions are then asked one at a time, as :func:`merge_base` does, which say what was refused."""
    try:
        said = _run_git(str(root), ["rev-parse", "--show-toplevel", f"{ref}^{{commit}}", "HEAD^{commit}", "--"])
    except _CommandFailed:
        return None
    lines = said.split("\n")
    if len(lines) != 4 or lines[3] != "--" or not all(_is_object_id(line) for line in lines[1:3]):
        return None
    return lines[0], lines[1], lines[2]


def _is_object_id(text: str) -> bool:
    """Whether *text* is a commit id in full (40 hex digits, or 64 in a SHA-256 repository)."""
    return len(text) in (40, 64) and all(character in "0123456789abcdef" for character in text)


def _changes(answers: _GitAnswers, shown: Optional[Callable[[str], Optional[str]]]) -> Changes:
    """The :class:`Changes` git's *answers* make, each file under the catalogue's name for it (*shown*, as
    :func:`changes_since` takes it)."""
    prefix = answers.prefix

    def inside(path: Optional[str]) -> Optional[str]:  # git's name of a file, as the catalogue shows it
        if path is None:
            return None
        # any file may be what a spec that is a link names (a target need not bear a spec's suffix)
        name = shown(os.path.join(answers.top, path)) if shown is not None else None
        return name if name is not None else printable(path[len(prefix):]) if path.startswith(prefix) else None

    files = []
    for status, path, old_path in answers.found:
        new, old = inside(path), inside(old_path)
        if status == "renamed" and new is None:
            status, new, old = "deleted", old, None
        elif status == "renamed" and old is None:
            status = "added"
        if new is not None:
            files.append(FileChange(status, new, old))
    return Changes(answers.ref, answers.base, tuple(sorted(files, key=lambda change: change.path)), answers.pin,
                   answers.ref_commit)


@dataclass(frozen=True)
class SpecFacts:
    """What decides whether a changed op profile touches a spec.

    Attributes:
        arch: The spec's ``arch``, or the one its name's match picks; ``None``
            when it cannot be told.
        tower: Whether it has a vision tower.
    """

    arch: Optional[str]
    tower: bool


def spec_facts(path: Path, profiles: OpProfiles) -> SpecFacts:
    """Read *path*'s arch and whether it has a tower, as :class:`SpecFacts`; a file that does not load has neither."""
    data = load_path(path).data
    if not isinstance(data, dict):
        return SpecFacts(None, False)
    tower = data.get("vision") is not None
    if isinstance(data.get("arch"), str):
        return SpecFacts(data["arch"], tower)
    name = data.get("name")
    try:
        return SpecFacts(profiles.infer_arch(name), tower) if isinstance(name, str) else SpecFacts(None, tower)
    except ModelSpecError:
        return SpecFacts(None, tower)


@dataclass(frozen=True)
class Selection:
    """The specs a change touches.

    Attributes:
        ref: The revision compared with.
        base: The merge base's commit id.
        specs: The spec paths to check, sorted (root-relative).
        reasons: Why each of :attr:`specs` is checked, e.g. ``"modified"`` or
            ``"op profile deepseek_v3 changed"``.
        removed: Spec paths deleted since the merge base, sorted.
        candidates: How many spec files there were to choose from.
        excluded: Spec paths changed since the merge base that the configuration or the files named leave out
            (``gate.excluded-change``), sorted.
        profiles: The file names of the op profiles changed (not deleted) since the merge base, sorted.
    """

    ref: str
    base: str
    specs: Tuple[str, ...]
    reasons: Mapping[str, str] = field(default_factory=dict)
    removed: Tuple[str, ...] = ()
    candidates: int = 0
    excluded: Tuple[str, ...] = ()
    profiles: Tuple[str, ...] = ()

    def summary(self) -> List[str]:
        """Lines for a person: what is checked and why, then each removed spec."""
        counts: Dict[str, int] = {}
        for path in self.specs:
            reason = self.reasons[path].split(" from ")[0]
            counts[reason] = counts.get(reason, 0) + 1
        why = "; ".join(f"{count} {reason}" for reason, count in sorted(counts.items()))
        head = (f"changed since {self.ref} (merge base {self.base[:12]}): {len(self.specs)} of "
                f"{self.candidates} spec{'s' if self.candidates != 1 else ''}")
        lines = [head + (f" ({why})" if why else "")]
        lines.extend(f"removed since {self.ref}: {path} (not checked)" for path in self.removed)
        lines.extend(f"changed since {self.ref} but left out by the configuration or the files named: {path} "
                     "(not checked)" for path in self.excluded)
        return lines


def _is_spec_path(path: str, scope: Sequence[str]) -> bool:
    """Whether *path* is a spec file's path inside one of the *scope* prefixes."""
    return path.endswith(SPEC_SUFFIXES) and any(path.startswith(prefix) for prefix in scope)


def _is_walked_spec(path: str, folders: Sequence[str]) -> bool:
    """Whether the walk of one of *folders* (prefixes) takes *path* as a spec: a spec's suffix, and no part
    under the folder hidden (``.archive/``, ``.#x.yaml``: the walk skips them, :mod:`pipeline.check.discovery`)."""
    return path.endswith(SPEC_SUFFIXES) and any(
        path.startswith(prefix) and not any(part.startswith(".") for part in path[len(prefix):].split("/"))
        for prefix in folders)


def _profile_arch(path: str, profiles_prefix: Optional[str]) -> Optional[str]:
    """The arch of the op profile file *path*, or ``None`` if it is not one."""
    if profiles_prefix is None or not path.startswith(profiles_prefix):
        return None
    rest = PurePosixPath(path[len(profiles_prefix):])
    return rest.stem if len(rest.parts) == 1 and rest.suffix == ".yaml" else None


def select_specs(changes: Changes, candidates: Sequence[str], facts: Callable[[str], SpecFacts],
                 profiles_prefix: Optional[str], scope: Sequence[str] = ("specs/",), rules: Sequence[str] = (),
                 rules_changed: Optional[str] = None, catalogue: Sequence[str] = ()) -> Selection:
    """Pick the specs among *candidates* that *changes* touches (the rules of the module docstring).

    Args:
        changes: What changed (:func:`changes_since`).
        candidates: The spec files there are now, root-relative.
        facts: Each candidate's :class:`SpecFacts`, asked only when a profile changed.
        profiles_prefix: The op profiles' folder relative to the root (``"op_profiles/"``),
            or ``None`` when the repository uses the bundled profiles.
        scope: The prefixes under which a deleted file is a removed spec.
        rules: Root-relative prefixes of the folders modelspec reads its rules from (``pipeline/``,
            ``schemas/`` in its own checkout); a change under one touches every spec.
        rules_changed: Why every spec is touched whatever changed (:attr:`Changes.pin`), or ``None``.
        catalogue: The prefixes of the catalogue's folders (``"specs/"``): a spec file changed there that is not
            among *candidates* (the configuration or the files named leave it out) is :attr:`Selection.excluded`.

    Returns:
        The :class:`Selection`.
    """
    present = set(candidates)
    reasons: Dict[str, str] = {}
    removed = []
    excluded = []
    for change in changes.files:
        if change.path in present and change.status != "deleted":
            reasons[change.path] = (f"renamed from {change.old_path}" if change.status == "renamed"
                                    else change.status)
        elif change.status == "deleted" and _is_spec_path(change.path, scope) and change.path not in present:
            removed.append(change.path)
        elif change.status != "deleted" and _is_walked_spec(change.path, catalogue):
            excluded.append(change.path)
    everything, archs = _rule_reasons(changes, profiles_prefix, rules, rules_changed)
    profiles = sorted({PurePosixPath(change.path).name for change in changes.files if change.status != "deleted"
                       and _profile_arch(change.path, profiles_prefix) is not None})
    for path in candidates:
        if path not in reasons:
            why = everything or (_profile_reason(facts(path), archs) if archs else None)
            if why is not None:
                reasons[path] = why
    return Selection(changes.ref, changes.base, tuple(sorted(reasons)), dict(sorted(reasons.items())),
                     tuple(sorted(removed)), len(candidates), tuple(sorted(excluded)), tuple(profiles))


def _rule_reasons(changes: Changes, profiles_prefix: Optional[str], rules: Sequence[str],
                  rules_changed: Optional[str]) -> Tuple[Optional[str], Dict[str, str]]:
    """Why every spec is touched (a change under *rules*, or *rules_changed*), or ``None``; and for each op
    profile changed, by arch, why its specs are."""
    everything = rules_changed
    archs: Dict[str, str] = {}
    for change in changes.files:
        for path in filter(None, (change.path, change.old_path)):
            if everything is None and rules and path.startswith(tuple(rules)):
                everything = f"{path} changed"
            arch = _profile_arch(path, profiles_prefix)
            if arch is not None:
                archs.setdefault(arch, f"op profile {arch} changed" if arch != VISION_ARCH
                                 else "vision profile changed")
    return everything, archs


def _profile_reason(spec: SpecFacts, archs: Mapping[str, str]) -> Optional[str]:
    """Why the changed op profiles (*archs*, :func:`_rule_reasons`) touch the spec of *spec*, or ``None``."""
    if spec.arch is None:
        return "op profiles changed and its arch cannot be told"
    if spec.arch in archs:
        return archs[spec.arch]
    if spec.tower and VISION_ARCH in archs:
        return archs[VISION_ARCH]
    return None


def _pin_change(repo: Any, base: str, changed: Sequence[str]) -> Optional[str]:
    """Why the modelspec the repository pins changed since *base*, or ``None``; *changed* are the paths (from
    the work tree's top) of the tracked files that differ from *base*, renamed ones under their new path.

    Every file of :data:`PIN_FILES` among them is read at both ends; when the
    lines naming ``modelspec`` differ (a ``rev:`` after the hook repository's
    URL counts: the line below it), the rules changed:
    ``.pre-commit-config.yaml pins modelspec anew``.
    """
    top = Path(repo.working_tree_dir)
    for path in sorted(set(changed)):
        if not any(fnmatch.fnmatchcase(path, pattern) for pattern in PIN_FILES):
            continue
        try:
            old = repo.git.show(f"{base}:{path}")
        except Exception:  # pylint: disable=broad-except  # a file the base lacks pins nothing there
            old = ""
        try:
            new = (top / path).read_text(encoding="utf-8", errors="surrogateescape")  # as git show reads the base
        except OSError:
            new = ""
        if _pin_lines(old) != _pin_lines(new):
            return f"{path} pins modelspec anew"
    return None


def _pin_lines(text: str) -> List[str]:
    """The lines of *text* naming modelspec, each with the line after it (a pre-commit ``rev:``)."""
    lines = text.splitlines()
    return [line + "\n" + (lines[index + 1] if index + 1 < len(lines) else "")
            for index, line in enumerate(lines) if "modelspec" in line.lower()]


def files_at(root: Path, rev: str, folders: Sequence[str]) -> Dict[str, bytes]:
    """Read the regular files under *folders* (root-relative) as commit *rev* has them, following symbolic links
    as ``check``'s walk does (a spec that is a link, a folder that is one: ``specs -> data/specs``), each file
    under the name the links give it, as long as the link leads to a file or folder of the same commit.

    Returns:
        ``{root-relative path: content}``, sorted; a folder the commit lacks
        contributes nothing. A link that leaves the commit's tree, dangles or loops, and submodules, are skipped.

    Raises:
        GitError: If *rev* is refused or unknown, or *root* is in no repository.
    """
    with _open(root) as repo:
        snapshot = repo.commit(resolve_revision(repo, rev))
        prefix = _prefix(repo, root)
        found: Dict[str, bytes] = {}
        for folder in folders:
            shown = prefix + folder.strip("/")
            item = _follow(snapshot.tree, shown)
            if item is not None and item.type == "tree":
                _files_under(snapshot.tree, item, shown, found)
        return dict(sorted((path[len(prefix):], data) for path, data in found.items() if path.startswith(prefix)))


#: A git tree entry's mode for a symbolic link, and how many links one path may pass (as the kernel's ELOOP).
_LINK_MODE = 0o120000
_MAX_HOPS = 40


def _follow(top: Any, path: str) -> Any:
    """The blob or tree *path* (from the commit's top) leads to in the tree *top*, its links followed (each
    relative to its folder), or ``None`` when it dangles, leaves the tree, or passes more than
    :data:`_MAX_HOPS` links."""
    walked: List[str] = []
    parts = list(PurePosixPath(path).parts)
    hops = 0
    while parts:
        part = parts.pop(0)
        if part in (".", ""):
            continue
        if part == "..":
            if not walked:
                return None
            walked.pop()
            continue
        try:
            item = top / "/".join([*walked, part])
        except KeyError:
            return None
        if item.type == "blob" and item.mode == _LINK_MODE:
            hops += 1
            target = item.data_stream.read().decode("utf-8", "surrogateescape")
            if hops > _MAX_HOPS or target.startswith("/"):
                return None
            parts = [*PurePosixPath(target).parts, *parts]
            continue
        walked.append(part)
    return top / "/".join(walked) if walked else top


def _files_under(top: Any, tree: Any, shown: str, found: Dict[str, bytes], above: Tuple[bytes, ...] = ()) -> None:
    """Add each regular file under *tree* to *found*, named under *shown* (the path the catalogue reaches the
    tree by), links followed (:func:`_follow`); a folder link back to a folder being walked (*above*: their
    ids) is a loop, and is not entered again, as the walk enters each folder once."""
    above = (*above, tree.binsha)
    for item in tree:
        name = f"{shown}/{item.name}"
        target = _follow(top, item.path) if item.type == "blob" and item.mode == _LINK_MODE else item
        if target is None or name in found:
            continue
        if target.type == "tree" and target.binsha not in above:
            _files_under(top, target, name, found, above)
        elif target.type == "blob" and target.mode in (0o100644, 0o100755):
            found[name] = target.data_stream.read()


def export_revision(root: Path, rev: str, folders: Sequence[str], dest: Path) -> int:
    """Write the files under *folders* (root-relative) as commit *rev* has them into the folder *dest*.

    Returns:
        How many files were written. A path git could not hold (absolute, or
        with a ``..`` part) is skipped, so nothing lands outside *dest*.

    Raises:
        GitError: See :func:`files_at`.
    """
    written = 0
    for path, data in files_at(root, rev, folders).items():
        parts = PurePosixPath(path).parts
        if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
            continue
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written += 1
    return written


def _status_paths(raw: str) -> List[str]:
    """The paths of ``git status --porcelain=v1 -z`` output (a rename gives its new and old path)."""
    tokens = raw.split("\0")
    paths = []
    index = 0
    while index < len(tokens) and tokens[index]:
        entry = tokens[index]
        paths.append(entry[3:])
        if entry[0] in "RC":
            paths.append(tokens[index + 1])
            index += 1
        index += 1
    return paths


def modified_outside(root: Path, folder: str) -> List[str]:
    """The tracked files, staged or not, modified outside *folder* (root-relative), from the work tree's top.

    Untracked files are not counted: a commit of *folder* leaves them out anyway.

    Raises:
        GitError: If *root* is in no repository.
    """
    with _open(root) as repo:
        inside = _prefix(repo, root) + folder.strip("/") + "/"
        raw = repo.git.status("--porcelain=v1", "-z", "--untracked-files=no", strip_newline_in_stdout=False)
        return sorted({path for path in _status_paths(raw) if not path.startswith(inside)})


def commit_refusals(root: Path, folder: str, inputs: Sequence[str]) -> List[str]:
    """Why a commit of *folder* alone (``regen --commit``) would not hold exactly what the committed specs make.

    Each reason names the files and what to do: HEAD is detached (the commit
    would belong to no branch); a file under one of *inputs* (the folders
    regen reads, root-relative) is not committed, so its artifact would be
    committed without it and a clean checkout would fail ``regen --check``; a
    file in *folder* is staged already, and regen would commit it as its own.
    Modified tracked files outside *folder* are :func:`modified_outside`'s.

    Raises:
        GitError: If *root* is in no repository.
    """
    reasons = []
    with _open(root) as repo:
        prefix = _prefix(repo, root)
        if repo.head.is_detached:
            reasons.append(f"HEAD is detached (at {repo.head.commit.hexsha[:12]}), so the commit would be on no "
                           "branch; check out the branch to commit on")
        untracked = sorted(filter(None, repo.git.ls_files("--others", "--exclude-standard", "-z", "--",
                                                          *[prefix + path for path in inputs],
                                                          strip_newline_in_stdout=False).split("\0")))
        if untracked:
            reasons.append(f"{', '.join(path[len(prefix):] for path in untracked)} "
                           f"{'is' if len(untracked) == 1 else 'are'} not committed, so the artifacts would be "
                           "committed without their source and a clean checkout would fail modelspec regen --check; "
                           "commit the specs and profiles first (git add, git commit), then run regen --commit")
        staged = sorted(filter(None, repo.git.diff("--cached", "--name-only", "-z", "--", prefix + folder,
                                                   strip_newline_in_stdout=False).split("\0")))
        if staged:
            reasons.append(f"{', '.join(path[len(prefix):] for path in staged)} "
                           f"{'is' if len(staged) == 1 else 'are'} staged already, and regen --commit commits only "
                           "the artifacts it writes: unstage (git restore --staged) or commit them first")
    return reasons


def stage(root: Path, paths: Sequence[str]) -> List[Tuple[str, str]]:
    """Stage *paths* (root-relative: written files and removed ones) and return what is staged.

    A removed path git never tracked is skipped.

    Returns:
        ``(status letter, root-relative path)`` for every staged change (``A``, ``M``, ``D``), sorted by path.

    Raises:
        GitError: If *root* is in no repository, or git refuses.
    """
    git = _git()
    with _open(root) as repo:
        prefix = _prefix(repo, root)
        tracked = set(filter(None, repo.git.ls_files("-z", "--", *[prefix + p for p in paths],
                                                     strip_newline_in_stdout=False).split("\0")))
        wanted = [prefix + path for path in paths if (root / path).exists() or prefix + path in tracked]
        try:
            if wanted:
                repo.git.add("--all", "--", *wanted)
            raw = repo.git.diff("--cached", "--name-status", "-z", "--no-renames", strip_newline_in_stdout=False)
        except git.GitCommandError as error:
            raise GitError(f"git could not stage the artifacts: {error.stderr.strip()}") from None
        tokens = raw.split("\0")
        return sorted(((tokens[index][0], tokens[index + 1][len(prefix):]) for index in range(0, len(tokens) - 1, 2)
                       if tokens[index]), key=lambda pair: pair[1])


def commit(root: Path, message: str, folder: str) -> str:
    """Commit what is staged with *message*, on the current branch, running no hook; return the new commit's id.

    The commit is made with git's plumbing (``write-tree``, ``commit-tree``,
    then ``update-ref`` from the HEAD it was built on), so no hook runs and
    none can add to it; the tree is compared with HEAD's first, and a change
    outside *folder* (root-relative) refuses the commit.

    Raises:
        GitError: If the staged tree changes anything outside *folder*, HEAD
            moved meanwhile, or git refuses (e.g. no committer identity).
    """
    git = _git()
    with _open(root) as repo:
        inside = _prefix(repo, root) + folder.strip("/") + "/"
        try:
            head = repo.head.commit.hexsha
            tree = repo.git.write_tree().strip()
            changed = [path for path in repo.git.diff_tree("-r", "--name-only", "-z", "--no-commit-id", head, tree,
                                                           strip_newline_in_stdout=False).split("\0") if path]
            outside = [path for path in changed if not path.startswith(inside)]
            if outside:
                raise GitError(f"the commit would change {', '.join(outside)} outside {folder}/; nothing was "
                               "committed")
            sha = repo.git.commit_tree(tree, "-p", head, "-m", message.rstrip("\n")).strip()
            repo.git.update_ref("-m", "modelspec regen --commit", "HEAD", sha, head)
        except git.GitCommandError as error:
            raise GitError(f"git commit failed: {error.stderr.strip()}") from None
        return sha


def blobs_at(root: Path, rev: str, folders: Sequence[str]) -> Dict[str, str]:
    """The regular files under *folders* (root-relative) as commit *rev* has them, none of them read: ``{root-relative
    path: blob id}`` (one ``git ls-tree``; :func:`files_at` reads every file). A folder the commit lacks gives nothing.

    Raises:
        GitError: If *rev* is refused or unknown, or *root* is in no repository.
    """
    repo = _open_plumbing(root)
    commit_id = resolve_revision(repo, rev)
    prefix = _prefix(repo, root)
    try:
        raw = repo.git.ls_tree("-r", "-z", "--full-tree", commit_id, "--",
                               *[prefix + folder.strip("/") for folder in folders], strip_newline_in_stdout=False)
    except _CommandFailed as failed:
        raise GitError(f"git ls-tree {rev} failed: {failed}") from None
    found: Dict[str, str] = {}
    for entry in filter(None, raw.split("\0")):
        meta, _, path = entry.partition("\t")
        mode, kind, blob = meta.split(" ")
        if kind == "blob" and mode in ("100644", "100755") and path.startswith(prefix):
            found[path[len(prefix):]] = blob
    return found


def export_blobs(root: Path, blobs: Mapping[str, str], dest: Path) -> int:
    """Write each blob of *blobs* (``{root-relative path: blob id}``, :func:`blobs_at`) to its path under *dest*;
    how many were written (a path git could not hold, absolute or with a ``..`` part, is skipped).

    Raises:
        GitError: If *root* is in no repository, or a blob cannot be read.
    """
    repo = _open_plumbing(root)
    written = 0
    for path, blob in blobs.items():
        parts = PurePosixPath(path).parts
        if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
            continue
        try:
            data = repo.git.cat_file("blob", blob, strip_newline_in_stdout=False)
        except _CommandFailed as failed:
            raise GitError(f"git cat-file blob {blob} ({path}) failed: {failed}") from None
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode("utf-8", "surrogateescape"))
        written += 1
    return written


def commit_of(root: Path, rev: str) -> str:
    """The commit id *rev* names in the repository holding *root* (:func:`resolve_revision`, without GitPython).

    Raises:
        GitError: As :func:`resolve_revision`, and :func:`_open_plumbing`.
    """
    return resolve_revision(_open_plumbing(root), rev)
def changed_under(root: Path, base: str, head: Optional[str], paths: Sequence[str]) -> List[FileChange]:
    """The files under *paths* (root-relative folders ending in ``/``, or files) that differ between commit *base*
    and *head* (a revision), or the working tree when *head* is ``None`` (untracked files there included, as
    added), sorted by path; renames found as :func:`changes_since` finds them.

    Raises:
        GitError: If *root* is in no work tree, or a revision is refused or unknown.
    """
    repo = _open_plumbing(root)
    prefix = _prefix(repo, root)
    specs = [f":(top,literal){prefix}{path.rstrip('/')}" for path in paths]
    revisions = [resolve_revision(repo, base)] + ([resolve_revision(repo, head)] if head is not None else [])
    found = _parse_name_status(repo.git.diff("--name-status", "-z", "--find-renames", "--no-ext-diff", *revisions,
                                             "--", *specs, strip_newline_in_stdout=False))
    if head is None:
        untracked = repo.git.ls_files("--others", "--exclude-standard", "-z", "--", *specs,
                                      strip_newline_in_stdout=False)
        found.extend(("added", path, None) for path in untracked.split("\0") if path)
    inside = [(status, path[len(prefix):], old[len(prefix):] if old else None) for status, path, old in found
              if path.startswith(prefix)]
    return sorted((FileChange(status, printable(path), old) for status, path, old in inside),
                  key=lambda change: change.path)


def file_at(root: Path, rev: Optional[str], path: str) -> Optional[bytes]:
    """The bytes of the file *path* (root-relative) at revision *rev*, or in the working tree when *rev* is
    ``None`` (a regular file only); ``None`` when it has none there."""
    if rev is None:
        try:
            with open_regular(root / path) as handle:
                return handle.read(MAX_BYTES + 1)
        except OSError:
            return None
    repo = _open_plumbing(root)
    process = _start_git(repo.working_tree_dir, ["cat-file", "blob", f"{rev}:{_prefix(repo, root)}{path}"])
    try:
        return _git_output_bytes(process)
    except _CommandFailed:
        return None


def _git_output_bytes(process: Any) -> bytes:
    """The stdout of the git *process* as bytes, once it has ended.

    Raises:
        _CommandFailed: If git exits non-zero.
    """
    out, err = process.communicate()
    if process.returncode != 0:
        raise _CommandFailed(err.decode("utf-8", "replace").strip())
    return out
