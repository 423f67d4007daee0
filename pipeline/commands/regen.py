"""``modelspec regen``: keep ``resolved/`` in step with the catalogue, for maintainers and the nightly job.

Writes one artifact per spec that passes ``check`` (:mod:`pipeline.catalogue.regen`
decides what to write, keep and remove; :mod:`pipeline.catalogue.artifacts` is the
format), reports each file written or removed and each spec left without a
new artifact, and exits 0 (every spec has its artifact), 1 (a spec failed,
or ``--check`` found drift) or 2 (a broken repository, another run holding
the lock past ``--wait``, a git failure, or ``--commit`` refused). Its last
line says what to do next, and tells the drift ``modelspec regen`` repairs
from the problems it cannot (a failing spec, a name, a file in the way).
``--commit`` commits only what regen keeps in ``resolved/``, with a message
that lists what changed and how the stacks moved. Unless ``--no-cache`` (or
``--commit``, which needs every document), it keeps what decides each artifact
in the result cache folder (:mod:`pipeline.cache.artifacts`) and takes the
checked op profiles from there.
"""

from __future__ import annotations

import contextlib
import gc
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import click

from pipeline.commands.output import echo, echo_rendered

from pipeline.commands.git_options import GitFailure, changed_since_option, git_errors
from pipeline.commands.options import jobs_option, no_cache_option, root_option


class RegenFailure(click.ClickException):
    """``resolved/`` could not be written (locked past ``--wait``, a symbolic link, not writable); exit code 2."""

    exit_code = 2


@click.command(name="regen", context_settings={"help_option_names": ["-h", "--help"]})
@root_option
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 naming every artifact that is missing, stale or orphaned, and every spec "
                   "left without its artifact. Waits for a running regen (--wait) before reading.")
@click.option("--commit", is_flag=True,
              help="Then commit resolved/ alone (refused when files outside it are modified); no commit when "
                   "nothing changed.")
@changed_since_option
@click.option("--wait", type=click.FloatRange(min=0), default=60.0, show_default=True, metavar="SECONDS",
              help="How long to wait for another regen run to finish before giving up (with --check too).")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True,
              help="With --check: json prints one document (schemas/regen-check.schema.json) instead of lines.")
@jobs_option
@no_cache_option
def command(root: Optional[Path], check_only: bool, commit: bool, changed_since: Optional[str],
            wait: float, fmt: str, jobs: Optional[int], no_cache: bool) -> None:
    """Regenerate the resolved-stack artifacts in resolved/ (or --check them).

    One resolved/<name>.json per spec that passes check (the spec's facts,
    its resolved layer stack, op counts, tower and derived widths, and a
    digest of its inputs), and resolved/index.json listing them. Byte-identical between runs on the
    same inputs; each file replaced atomically; only files regen wrote (the
    mark, a file name that is their name, the artifact's shape) are
    overwritten, or removed when their spec is gone or renamed. A spec that
    fails check keeps its old artifact and is reported.

    What decides each artifact is kept in the result cache (.modelspec_cache/,
    or $MODELSPEC_CACHE_DIR): a spec unchanged since its artifact was written
    or checked, whose artifact file is unchanged too, is neither checked nor
    built again. --no-cache checks and builds every spec.

    \b
    Examples:
      modelspec regen
      modelspec regen --check                       # CI: exit 1 on drift
      modelspec regen --check --format json         # the same, for tools
      modelspec regen --changed-since origin/main
      modelspec regen --commit                      # the nightly job

    Exit codes: 0 done (or up to date), 1 a spec has no new artifact or
    --check found drift, 2 a broken repository, lock or git failure.
    """
    with _cyclic_gc_paused():
        _regen(root, check_only, commit, changed_since, wait, fmt, jobs, no_cache)


@contextlib.contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the run (reference counting still frees nearly everything).

    A regen holds a catalogue's worth of objects (a resolution, an artifact entry and a file of ``resolved/``
    per spec), so each collection walks more of them: at 10,000 specs the collector took about a quarter of
    resolving, reading ``resolved/`` and planning, and a tenth of a regen from empty (issue 28). The run is one
    short process whose cycles are few and freed at its exit.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            # What the run allocated and still holds is all in the youngest generation, which the first
            # collection after this would walk (0.1 s at 2,000 specs): moved to the oldest at once instead (both
            # calls splice lists), it is collected as any long-lived object is.
            gc.freeze()
            gc.unfreeze()
            gc.enable()


def _regen(root: Optional[Path], check_only: bool, commit: bool, changed_since: Optional[str],
           wait: float, fmt: str, jobs: Optional[int], no_cache: bool) -> None:
    """The body of :func:`command`."""
    # pylint: disable=import-outside-toplevel
    from pipeline.cache.names import every_spec
    from pipeline.check.repo import find_repo

    from pipeline.commands.options import run_profiles, save_cache

    if check_only and commit:
        raise click.UsageError("--check writes nothing, so it cannot --commit; use one of them")
    if fmt != "text" and not check_only:
        raise click.UsageError("--format json is for --check; regen itself reports what it writes as lines")
    repo = find_repo(root)
    if not repo.specs.is_dir():
        raise click.UsageError(f"{repo.specs} is not a folder; regen resolves the specs under specs/ "
                               "(give the repository with --root)")
    # --commit's message compares every document with HEAD's, so it builds them all.
    use_cache = not (no_cache or commit)
    profiles = run_profiles(repo, not no_cache)
    names, displays = every_spec(repo, not no_cache)  # strings: the recorded answer needs no Path per file
    cache = _open_cache(repo, profiles) if use_cache else None
    # A writing regen of the whole catalogue takes up the last clean one's answer where it still holds.
    whole = cache is not None and not check_only and changed_since is None
    if whole and _answered(repo, names, displays, profiles, cache, wait):
        raise SystemExit(0)
    every = [Path(name) for name in names]  # spec_file_names's paths are as Path spells them
    files = every
    if changed_since is not None:
        from pipeline.commands.git_options import changed_files

        files, _ = changed_files(repo, changed_since, every, profiles, [repo.specs])
    if commit:
        _refuse_other_changes(repo)
    shown = dict(zip(every, displays))
    try:  # what was learnt is kept even when resolved/ cannot be read or written
        if check_only:
            resolutions = _resolved(repo, files, profiles, cache, shown, jobs)
            raise SystemExit(_check(repo, resolutions, list(shown.values()), wait, fmt, cache))
        # --commit's message reads whole documents, which only a build in this process keeps.
        target, applied = _resolve_and_write(repo, files, profiles, cache, shown, 1 if commit else jobs, wait, whole)
    finally:
        save_cache(cache)
    if commit:
        _commit(repo, target, applied)
    raise SystemExit(1 if target.errors else 0)


def _resolved(repo, files, profiles, cache, shown, jobs, stage_in=None):
    """*files* checked and built (:func:`~pipeline.catalogue.regen.resolve_specs`) under a progress bar."""
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.regen import resolve_specs
    from pipeline.commands.options import progress_bar

    with progress_bar(len(files), "checking and resolving") as update:
        return resolve_specs(repo, files, profiles, update, cache, shown, jobs, stage_in=stage_in)


def _resolve_and_write(repo, files, profiles, cache, shown, jobs, wait: float, whole: bool):
    """A writing regen: under ``resolved/``'s lock from before the first temporary file a worker writes there
    (:func:`_writing`), *files* resolved, then planned and applied (:func:`_write`); every file a worker staged that
    the plan did not write is removed, also when writing fails."""
    from pipeline.catalogue.regen import discard_staged  # pylint: disable=import-outside-toplevel

    with _writing(repo, wait):
        resolutions = _resolved(repo, files, profiles, cache, shown, jobs, repo.resolved)
        try:
            return _write(repo, resolutions, list(shown.values()), profiles, cache, whole)
        finally:
            discard_staged(resolutions)


def _open_cache(repo, profiles):
    """The repository's :class:`~pipeline.cache.artifacts.ArtifactCache` (its result cache folder), or ``None``
    when a profile went since *profiles* were read."""
    # pylint: disable=import-outside-toplevel
    from pipeline.cache.artifacts import ArtifactCache
    from pipeline.cache.results import cache_keys
    from pipeline.cache.stamps import cache_folder

    try:
        keys = cache_keys(profiles)
    except OSError:  # a profile removed since it was read: no key to file artifacts under, the run is uncached
        return None
    return ArtifactCache(cache_folder(repo.root), keys)


def _shown(repo, file: str) -> str:
    """An artifact file as reports show it, e.g. ``resolved/deepseek-v3.json``."""
    return f"{repo.display(repo.resolved)}/{file}"


def _echo_problems(problems) -> None:
    """Print each problem as ``path:line:col: error [code] message``."""
    from pipeline.reporters.summary import problem_line  # pylint: disable=import-outside-toplevel

    for problem in problems:
        echo(problem_line(problem))


#: The --check findings that running modelspec regen repairs; every other error needs a person.
DRIFT_CODES = ("regen.missing", "regen.stale", "regen.orphaned")


def _told(problems) -> str:
    """``2 missing, 1 stale``: how many problems of each code (the part after ``regen.``), codes sorted."""
    counts: Dict[str, int] = {}
    for problem in problems:
        counts[problem.code] = counts.get(problem.code, 0) + 1
    return ", ".join(f"{count} {code.split('.', 1)[1]}" for code, count in sorted(counts.items()))


def _check(repo, resolutions, spec_paths: List[str], wait: float, fmt: str = "text", cache=None) -> int:
    """``--check``: read ``resolved/`` under the lock, report the drift and the problems (as lines, or one JSON
    document for *fmt* ``json``); return the exit code. An artifact found as it should be is remembered in
    *cache*."""
    # pylint: disable=import-outside-toplevel
    from pipeline.spec.problems import Severity
    from pipeline.catalogue.regen import RegenError, drift, locked, plan, read_resolved, remember
    from pipeline.reporters.summary import plural

    try:
        with locked(repo.resolved, wait, create=False):
            existing = read_resolved(repo.resolved, cache)
    except RegenError as error:
        raise RegenFailure(str(error)) from None
    target = plan(resolutions, spec_paths, existing)
    if cache is not None:
        remember(cache, resolutions, target, existing, repo.resolved)
    found = drift(target, existing, repo.display(repo.resolved))
    folder = repo.display(repo.resolved)
    errors = [problem for problem in found if problem.severity is Severity.ERROR]
    if fmt == "json":
        echo_rendered(_check_json(folder, found, errors, len(target.artifacts)))
        return 1 if errors else 0
    _echo_problems(found)
    repaired = [problem for problem in errors if problem.code in DRIFT_CODES]
    needs_a_person = [problem for problem in errors if problem.code not in DRIFT_CODES]
    if repaired:
        echo(f"{folder}/ is out of date ({_told(repaired)}); run modelspec regen")
    if needs_a_person:
        echo(f"{plural(len(needs_a_person), 'problem')} modelspec regen cannot fix ({_told(needs_a_person)}): "
                   "fix what each line above says, then run modelspec regen")
    if not errors:
        echo(f"{folder}/ is up to date ({plural(len(target.artifacts), 'artifact')} and the index)")
    return 1 if errors else 0


#: The version of the ``regen --check --format json`` document (``schemas/regen-check.schema.json``).
CHECK_SCHEMA_VERSION = 1


def _check_json(folder: str, found, errors, artifacts: int) -> str:
    """The ``--check`` verdict as the JSON document of ``schemas/regen-check.schema.json``."""
    import json  # pylint: disable=import-outside-toplevel

    document = {
        "schema_version": CHECK_SCHEMA_VERSION,
        "folder": folder,
        "up_to_date": not errors,
        "exit_code": 1 if errors else 0,
        "artifacts": artifacts,
        "problems": [{"file": problem.file, "line": problem.line, "column": problem.column, "code": problem.code,
                      "severity": problem.severity.value, "fixed_by_regen": problem.code in DRIFT_CODES,
                      "message": problem.message} for problem in found],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


def _answered(repo, names, displays, profiles, cache, wait: float) -> bool:
    """:func:`_regen_changed`, the cache saved when it answered (or failed)."""
    from pipeline.commands.options import save_cache  # pylint: disable=import-outside-toplevel

    try:
        answered = _regen_changed(repo, names, displays, profiles, cache, wait)
    except BaseException:
        save_cache(cache)
        raise
    if answered:
        save_cache(cache)
    return answered


def _regen_changed(repo, names, displays, profiles, cache, wait: float) -> bool:
    """The regen of the whole catalogue from the last clean regen's answer
    (:func:`pipeline.catalogue.regen_changed.regen_changed`), printing what :func:`_write` prints, and the answer
    recorded again; whether it was done so (else nothing was written, and the whole regen runs)."""
    # pylint: disable=import-outside-toplevel
    from pipeline.cache import regen_answer
    from pipeline.catalogue.regen import RegenError
    from pipeline.catalogue.regen_changed import regen_changed
    from pipeline.reporters.summary import plural

    digest = cache.keys.every_profile()
    answer = regen_answer.load(cache.folder, digest, (repo.resolved, repo.specs))
    if answer is None:
        return False
    pairs = sorted(zip(names, displays), key=lambda pair: pair[1])
    try:
        done = regen_changed(repo.resolved, pairs, answer, profiles, cache, wait,
                             lambda action, file: echo(f"{action} {_shown(repo, file)}"))
    except RegenError as error:
        raise RegenFailure(str(error)) from None
    if done is None:
        return False
    folder = repo.display(repo.resolved)
    if done.written:
        echo(f"regen: {plural(len(done.written), 'file')} written, 0 removed, {done.files - len(done.written)} "
             f"unchanged in {folder}/")
    else:
        echo(f"regen: {folder}/ is up to date ({plural(done.artifacts, 'artifact')})")
    if done.answer != answer:
        regen_answer.record(cache.folder, digest, (repo.resolved, repo.specs), done.answer)
    return True


def _record_answer(repo, cache, resolutions, target, existing, written, hashed) -> None:
    """Record the answer of a whole regen whose plan was clean (:func:`pipeline.catalogue.regen_changed.answer_of`),
    else forget the one recorded."""
    # pylint: disable=import-outside-toplevel
    from pipeline.cache import regen_answer
    from pipeline.catalogue.regen_changed import answer_of

    answer = answer_of(resolutions, target, existing, written, repo.resolved, hashed)
    if answer is None:
        regen_answer.forget(cache.folder / regen_answer.ANSWER_FILE)
        return
    regen_answer.record(cache.folder, cache.keys.every_profile(), (repo.resolved, repo.specs),
                        answer)


@contextlib.contextmanager
def _writing(repo, wait: float) -> Iterator[None]:
    """Hold ``resolved/``'s lock (creating the folder), with the temporary files a killed run left removed; a
    :class:`~pipeline.catalogue.regen.RegenError` raised under it becomes a :class:`RegenFailure`."""
    from pipeline.catalogue.regen import RegenError, locked, remove_leftovers  # pylint: disable=import-outside-toplevel

    try:
        with locked(repo.resolved, wait):
            remove_leftovers(repo.resolved)
            yield
    except RegenError as error:
        raise RegenFailure(str(error)) from None


def _write(repo, resolutions, spec_paths: List[str], profiles, cache=None, whole: bool = False):
    """Plan and apply (the caller holds the lock: :func:`_writing`), printing each change as it happens; return
    the plan and what was done.

    A spec whose artifact the cache knew but whose file does not hold it is built first (:func:`rebuild`);
    each artifact written or found as it should be is remembered in *cache*, and, for a regen of the *whole*
    catalogue, the answer of a clean plan (:func:`_record_answer`).
    """
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.regen import apply_plan, plan, read_resolved, rebuild, remember, unbuilt
    from pipeline.reporters.summary import plural

    folder = repo.display(repo.resolved)

    def tell(action: str, file: str) -> None:
        why = f" ({target.orphans[file]})" if action == "removed" else ""
        echo(f"{action} {folder}/{file}{why}")  # _shown's text, its folder found once

    existing = read_resolved(repo.resolved, cache)
    target = plan(resolutions, spec_paths, existing)
    stale = unbuilt(target, existing)
    if stale:
        resolutions = rebuild(resolutions, stale, profiles, cache)
        target = plan(resolutions, spec_paths, existing)
    applied = apply_plan(target, repo.resolved, existing, tell)
    if cache is not None:
        hashed = remember(cache, resolutions, target, existing, repo.resolved, applied.written)
        if whole:
            _record_answer(repo, cache, resolutions, target, existing, applied.written, hashed)
    _echo_problems(target.problems)
    errors, warnings = len(target.errors), len(target.problems) - len(target.errors)
    without = "".join([f"; {plural(errors, 'problem')} above that regen cannot fix: each line says what to do"
                       if errors else "", f"; {plural(warnings, 'warning')} above" if warnings else ""])
    if applied.changed:
        echo(f"regen: {plural(len(applied.written), 'file')} written, {len(applied.removed)} removed, "
                   f"{applied.unchanged} unchanged in {folder}/{without}")
    else:
        echo(f"regen: {folder}/ is up to date ({plural(len(target.artifacts), 'artifact')}){without}")
    return target, applied


def _refuse_other_changes(repo) -> None:
    """``--commit`` runs only when its commit will hold exactly the artifacts of committed specs, else it
    refuses before writing anything, naming why: a tracked file outside ``resolved/`` is modified, a spec or
    profile is not committed, a file in ``resolved/`` is staged already, or HEAD is detached
    (:func:`pipeline.catalogue.git.commit_refusals`).

    Raises:
        GitFailure: Naming every reason.
    """
    from pipeline.catalogue.git import commit_refusals, modified_outside  # pylint: disable=import-outside-toplevel

    folder = repo.display(repo.resolved)
    with git_errors():
        others = modified_outside(repo.root, folder)
        reasons = commit_refusals(repo.root, folder, [repo.display(repo.specs), repo.display(repo.profiles)])
    if others:
        reasons.insert(0, f"--commit commits resolved/ alone, but other files are modified: {', '.join(others)}; "
                          "commit or stash them first")
    if reasons:
        raise GitFailure("regen --commit refused, nothing was written: " + "; ".join(reasons))


def _commit(repo, target, applied) -> None:
    """Stage what regen keeps and removed in ``resolved/``, and commit it with a message saying what changed."""
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.diff import Catalogue, diff_catalogues, render_text
    from pipeline.catalogue.git import commit, files_at, stage

    folder = repo.display(repo.resolved)
    with git_errors():
        generated = _artifacts_of(files_at(repo.root, "HEAD", [folder]), folder)
        gone = [path for path in generated if not (repo.root / path).exists()]
        paths = sorted({f"{folder}/{file}" for file in target.files}
                       | {f"{folder}/{file}" for file, _ in applied.removed} | set(gone))
        staged = stage(repo.root, paths)
        if not staged:
            echo("regen --commit: nothing to commit, resolved/ matches HEAD")
            return
        before = Catalogue("HEAD", {doc["name"]: doc for doc in generated.values()})
        moves = render_text(diff_catalogues(before, Catalogue("regen", target.documents))).splitlines()[1:]
        message = _message(staged, moves)
        sha = commit(repo.root, message, folder)
    echo(f"committed {sha[:12]}: {message.splitlines()[0]}")


def _artifacts_of(files: Dict[str, bytes], folder: str) -> Dict[str, Dict]:
    """The artifacts regen wrote among *files* (root-relative paths to bytes) directly in *folder*, the index apart."""
    # pylint: disable=import-outside-toplevel
    import json

    from pipeline.catalogue.artifacts import INDEX_FILE, is_generated

    found = {}
    for path, data in files.items():
        file = path[len(folder) + 1:]
        if "/" in file or file == INDEX_FILE or not file.endswith(".json"):
            continue
        try:
            document = json.loads(data.decode("utf-8"))
        except ValueError:
            continue
        if is_generated(file, document):
            found[path] = document
    return found


_VERBS = {"A": "added", "M": "updated", "D": "removed"}


def _message(staged, moves: List[str]) -> str:
    """The commit message: a subject counting the artifacts added, updated and removed, each file, then the moves."""
    counts: Dict[str, int] = {}
    for status, path in staged:
        if not path.endswith("/index.json"):
            counts[_VERBS.get(status, "updated")] = counts.get(_VERBS.get(status, "updated"), 0) + 1
    told = ", ".join(f"{counts[verb]} {verb}" for verb in ("added", "updated", "removed") if verb in counts)
    subject = f"resolved: regenerate artifacts ({told or 'index only'})"
    files = [f"{_VERBS.get(status, 'updated')} {path}" for status, path in staged]
    return "\n".join([subject, "", *files, *([""] + moves if moves else [])]) + "\n"
