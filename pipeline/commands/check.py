"""``modelspec check``: the main job, for maintainers and CI gates.

Runs the five passes on every spec file named (folders are searched for
``*.yaml``/``*.yml``; default: the repository's ``specs/``), prints one report
to stdout and writes any others to files, and exits 0 (clean), 1 (a problem
of severity error, or any warning under ``--strict``) or 2 (usage error, a
broken op profile, or modelspec crashed on a file).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import click

from pipeline.commands.output import echo, echo_rendered

from pipeline.commands.git_options import changed_since_option
from pipeline.commands.options import (STDIN_NAME, exclude_option, ignore_option, jobs_option, no_cache_option, open_cache,
                                       read_stdin, root_option, run_config, run_profiles, save_cache,
                                       select_option, spec_file_names, stdin_filename_option)

from pipeline.reporters import FORMATS

#: The report formats, in the registry's order (``--format``, ``--output FORMAT=PATH``).
_FORMATS = tuple(FORMATS)

# How many times check --fix checks again and fixes what a fix uncovered, at most.
_FIX_ROUNDS = 4


def _parse_outputs(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> List[Tuple[str, Path]]:
    """Parse repeated ``FORMAT=PATH`` values."""
    outputs = []
    for value in values:
        fmt, sep, path = value.partition("=")
        if not sep or not path:
            raise click.BadParameter(f"{value!r} is not FORMAT=PATH, e.g. sarif=results.sarif", ctx, param)
        if fmt not in _FORMATS:
            raise click.BadParameter(f"{fmt!r} is not a format; the formats are {', '.join(_FORMATS)}", ctx, param)
        outputs.append((fmt, Path(path)))
    targets = [os.path.realpath(path) for _, path in outputs]
    repeated = sorted({str(path) for (_, path), target in zip(outputs, targets) if targets.count(target) > 1})
    if repeated:
        raise click.BadParameter(f"{', '.join(repeated)} is named by more than one --output; give each report "
                                 "its own file", ctx, param)
    return outputs


@click.command(name="check", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@root_option
@click.option("--format", "fmt", type=click.Choice(_FORMATS), default="text", show_default=True,
              help="The report printed on stdout.")
@click.option("--output", "outputs", multiple=True, metavar="FORMAT=PATH", callback=_parse_outputs,
              help="Also write a report in FORMAT to PATH; repeatable (e.g. --output sarif=out.sarif "
                   "--output junit=out.xml).")
@click.option("--strict/--no-strict", default=None,
              help="Warnings fail the run too. Default: the configuration's strict (else off).")
@select_option
@ignore_option
@click.option("--fix", is_flag=True,
              help="Make the fixes the findings state (remove a null or default line, drop a torch. prefix, write "
                   "4096 for 4096.0, unquote a quoted number), keeping comments; say on stderr what changed, and "
                   "report what is left.")
@click.option("-q", "--quiet", is_flag=True, help="Text report: only what fails the run; nothing on success.")
@jobs_option
@click.option("--color/--no-color", default=None,
              help="Colour the text report, piped or not. Default: when FORCE_COLOR is set, or stdout is a "
                   "terminal and NO_COLOR is unset.")
@click.option("--statistics", is_flag=True,
              help="Text report: how many problems of each code, most frequent first ([*]: --fix fixes them), "
                   "instead of the problems.")
@click.option("--exit-zero", is_flag=True,
              help="Exit 0 even when problems fail the run (2 still says modelspec could not check).")
@no_cache_option
@changed_since_option
@exclude_option
@stdin_filename_option
def command(paths: Tuple[Path, ...], root: Optional[Path], fmt: str, outputs: List[Tuple[str, Path]],
            strict: Optional[bool], select: Tuple[str, ...], ignore: Tuple[str, ...], fix: bool, quiet: bool,
            jobs: Optional[int], color: Optional[bool], statistics: bool, exit_zero: bool, no_cache: bool,
            changed_since: Optional[str], excludes: Tuple[str, ...], stdin_filename: Optional[str]) -> None:
    """Check spec files: every problem of every file, located, in one run.

    \b
    Passes, in order, for each file:
      load       strict YAML: UTF-8, one document, no duplicate keys, anchors,
                 tags, YAML 1.1 booleans or numbers, NaN or infinities
      schema     schemas/model-spec.schema.json (draft 2020-12)
      semantic   the model IR's rules (types, contradictions, costability)
      stack      the layer stack and vision tower against the op profiles
      roundtrip  what the file states survives parsing and serialising
    A pass with nothing to work on after an earlier failure is reported as
    skipped.

    A file's result is cached (.modelspec_cache/ at the repository's root,
    or $MODELSPEC_CACHE_DIR) and reused, with the same report, while its
    bytes, path, op profiles, the schemas and modelspec are unchanged; a
    check of all of specs/ keeps its reports, and gives them again while no
    spec, folder, profile or configuration file has changed; --no-cache
    checks every file afresh.

    \b
    Examples:
      modelspec check
      modelspec check specs/deepseek --strict
      modelspec check --format github --output sarif=modelspec.sarif --output junit=modelspec.xml
      modelspec check --changed-since origin/main --format github
      modelspec check --ignore roundtrip.null --select roundtrip,stack
      modelspec check - --stdin-filename specs/qwen/new.yaml < new.yaml

    Settings come from [tool.modelspec] in pyproject.toml or modelspec.toml
    (specs, exclude, select, ignore, per-file-ignores, strict); a warning is
    accepted on its line with  # modelspec: ignore[CODE, ...]

    Exit codes: 0 clean, 1 errors (or warnings with --strict), 2 usage error,
    a broken op profile, a report that could not be written, or an internal
    error.
    """
    if statistics and fmt != "text":
        raise click.UsageError(f"--statistics is a text report; it does not take --format {fmt}")
    request = Request(tuple(paths), fmt, tuple(outputs), strict, select, ignore, fix, quiet, jobs, color,
                      no_cache, changed_since, excludes, stdin_filename, statistics)
    try:
        code = run(request, root)
    except SystemExit as answered:  # the recorded answer of an unchanged catalogue ends the run early
        code = answered.code
    raise SystemExit(0 if exit_zero and code == 1 else code)


@dataclass(frozen=True)
class Request:
    """A ``check`` as it was asked for: its arguments and options, before anything is read.

    ``paths`` ``-`` is stdin; ``color`` ``None`` is "``FORCE_COLOR``, else on a terminal, unless ``NO_COLOR``";
    ``statistics`` is a text report of counts per code.
    """

    paths: Tuple[Path, ...]
    fmt: str
    outputs: Tuple[Tuple[str, Path], ...]
    strict: Optional[bool]
    select: Tuple[str, ...]
    ignore: Tuple[str, ...]
    fix: bool
    quiet: bool
    jobs: Optional[int]
    color: Optional[bool]
    no_cache: bool
    changed_since: Optional[str]
    excludes: Tuple[str, ...]
    stdin_filename: Optional[str]
    statistics: bool = False

    @property
    def stdin(self) -> bool:
        """Whether the spec is read from stdin (``check -``)."""
        return "-" in map(str, self.paths)

    @property
    def use_color(self) -> bool:
        """Whether the stdout report is coloured: ``--color``/``--no-color``, else ``FORCE_COLOR`` set (not
        empty), else a terminal without ``NO_COLOR``."""
        if self.color is not None:
            return self.color
        if os.environ.get("FORCE_COLOR"):
            return True
        return sys.stdout.isatty() and "NO_COLOR" not in os.environ

    @property
    def asks_for_the_catalogue(self) -> bool:
        """Whether the command line asks for all of ``specs/`` (no files, no ``--exclude``, no
        ``--changed-since``); the configuration may still narrow it (:attr:`Plan.everything`)."""
        return not self.paths and not self.excludes and self.changed_since is None


@dataclass(frozen=True)
class Plan:
    """What a check does, decided once from its :class:`Request`, the repository and its configuration:
    which files, under which names, what the cache may answer, and whether all of ``specs/`` is checked.

    Attributes:
        request: The options.
        repo: The spec repository.
        config: Its configuration.
        profiles: Its op profiles.
        pairs: ``(path, display)`` of each file to check, in order.
        scope: What ``--changed-since`` chose (the report says it), else ``None``.
        walked: The walk of ``specs/`` (for the names snapshot), when the walk took all of it.
        cache: The result cache, ``None`` under ``--no-cache`` or for stdin.
        everything: Every spec under ``specs/`` is checked, so no name is outside the run.
        gate: The results about the repository beside its specs (:mod:`pipeline.check.gate`): its own op
            profiles that are not the bundled ones, the changed specs left out.
    """

    request: Request
    repo: Any
    config: Any
    profiles: Any
    pairs: List[Tuple[Any, str]]
    scope: Any
    walked: Any
    cache: Any
    everything: bool
    gate: Tuple[Any, ...] = ()


def run(request: Request, root: Optional[Path]) -> int:
    """Check as *request* asks in the repository at (or above) *root*, print and write the reports; the exit
    code. A check of the whole catalogue is answered from the snapshot of the last one while nothing it came
    from has changed (:mod:`pipeline.cache.whole_check`)."""
    from pipeline.check.repo import find_repo

    repo = find_repo(root)
    answer_at = _answer_key(repo, request) if _may_record_answer(request, repo) else None
    before = _answer_or_sources(repo, answer_at, request.outputs) if answer_at is not None else None
    plan = _plan(request, repo)
    result, codes, verdicts = _checked(plan)
    saved = save_cache(plan.cache, request.quiet)
    if plan.everything and plan.cache is not None and plan.walked is not None and not request.fix:
        from pipeline.cache.names import record_whole

        record_whole(repo, plan.cache, plan.walked, verdicts)
    answer = _answer(request, repo, result, codes)
    code = _answered(answer, request.outputs)
    if before is not None and plan.everything and saved and plan.walked is not None:
        from pipeline.cache.whole_check import record_answer

        record_answer(plan.cache.folder, answer_at, before, plan.walked, plan.cache,
                    [display for _, display in plan.pairs], answer)
    return code


def _may_record_answer(request: Request, repo) -> bool:
    """Whether this check's whole answer may be recorded and given again: all of ``specs/`` asked for, from the cache,
    no ``--fix``, and a root not spelled through a link (reports would name a linked spec by its real path)."""
    return request.asks_for_the_catalogue and not request.fix and not request.no_cache and repo.spelled_real


def _plan(request: Request, repo) -> Plan:
    """Decide what to check (:class:`Plan`): read the configuration and the op profiles, walk the files (or
    take the walk from the names snapshot), ask git what changed, and open the result cache.

    Raises:
        click.UsageError: No spec files, or stdin with ``--fix`` or ``--changed-since``.
        click.BadParameter: An ``--output`` onto a checked spec or a repository folder.
    """
    from pipeline.spec.problems import Scope

    asked = None
    if request.changed_since is not None and not request.stdin:  # git answers while the catalogue is walked
        from pipeline.commands.git_options import ask_changes

        asked = ask_changes(repo, request.changed_since)
    config = run_config(repo)
    profiles = run_profiles(repo, not request.no_cache)
    named = list(request.paths) or list(config.specs) or [repo.specs]
    # the walk takes all of specs/: neither the command line nor the configuration narrows it
    whole = not request.paths and not request.excludes and not config.specs and not config.exclude
    files, walked = _files(request, repo, config, whole)
    if not files:
        raise click.UsageError(f"no spec files (*.yaml, *.yml) in {', '.join(str(path) for path in named)}")
    scope = None
    gate = []
    if request.changed_since is not None:
        from pipeline.check.gate import excluded_results
        from pipeline.commands.git_options import changed_files

        files, selection = changed_files(repo, request.changed_since, files, profiles, named, request.quiet, asked,
                                         walked.displays if walked is not None else None)
        scope = Scope(selection.ref, selection.base, selection.candidates, selection.removed, len(files))
        gate = [*_own_profiles(repo, selection.profiles), *excluded_results(selection.excluded, selection.ref)]
    _refuse_outputs(request.outputs, [*files, *repo_folders(repo)])
    pairs = [(files[0], request.stdin_filename or STDIN_NAME)] if request.stdin \
        else list(zip(files, repo.report_names(files)))
    cache = open_cache(repo, profiles, not request.no_cache and not request.stdin)
    everything = whole and request.changed_since is None
    if everything and cache is not None:
        cache.rebuild_index()
    return Plan(request, repo, config, profiles, pairs, scope, walked, cache, everything, tuple(gate))


def _own_profiles(repo, changed: Sequence[str]) -> list:
    """The ``gate.own-profile`` results of *repo*'s own op profiles changed since the revision (*changed*, file
    names) that are not the running modelspec's bundled ones (:func:`pipeline.check.gate.own_profile_results`)."""
    from pipeline import __version__
    from pipeline.check.gate import own_profile_results
    from pipeline.spec.resources import bundled_profiles_dir

    return own_profile_results(repo.profiles, bundled_profiles_dir(), repo.display(repo.profiles), __version__,
                               changed)


def _files(request: Request, repo, config, whole: bool):
    """The files to check before ``--changed-since`` picks among them, and the walk of ``specs/`` when it took
    all of it (*whole*): stdin's copy, the walk recorded in the names snapshot (``--changed-since`` over all of
    ``specs/``, while its folders are unchanged), or a walk now."""
    from pipeline.cache.names import recorded_walk, walk
    from pipeline.cache.stamps import cache_folder

    if request.stdin:
        return [_stdin_file(request.paths, request.fix, request.changed_since)], None
    walked = recorded_walk(repo, cache_folder(repo.root)) \
        if whole and request.changed_since is not None and not request.no_cache else None
    if walked is not None:
        return list(walked.files), walked
    watched: Optional[Set[str]] = set() if whole else None  # the folders and links the walk sees
    files = spec_file_names(request.paths, repo, config, request.excludes, watched)  # strings: no Path per file
    return files, walk(files, watched) if watched is not None else None


def _checked(plan: Plan):
    """Run the check of *plan*, and with ``--fix`` fix and check again for a few rounds (a fix can let a pass
    run that an error had skipped, whose findings may have fixes of their own), saying on stderr what was fixed.
    Returns the final result, the codes registry its reports use, and the files' verdicts."""
    import dataclasses

    from pipeline.cache.names import recorded_name_map, names_outside_run
    from pipeline.check.runner import run_result
    from pipeline.check.suppress import suppress
    from pipeline.spec.problems import LazyCodes

    request, repo, cache = plan.request, plan.repo, plan.cache
    checked_files = [request.stdin_filename] if request.stdin and request.stdin_filename \
        else [path for path, _ in plan.pairs]
    # A check of a few files: the other specs' stats, which say whether the snapshot of their names holds, are
    # checked by a child process meanwhile. --fix asks for them after each round of fixes, when it needs them.
    recorded = recorded_name_map(repo, [path for path, _ in plan.pairs], cache.folder, plan.walked, in_child=True) \
        if not plan.everything and not request.fix and cache is not None and repo.specs.is_dir() else None
    codes = LazyCodes()  # gathered only if an inline ignore or a report needs them
    strict = plan.config.strict if request.strict is None else request.strict
    verdicts: list = []

    def check_once():
        verdicts[:] = _run(plan.pairs, plan.profiles, request.jobs, cache)
        outside = {} if plan.everything else names_outside_run(repo, checked_files, cache, verdicts, plan.walked,
                                                               recorded)
        result = dataclasses.replace(run_result(verdicts, strict, outside), scope=plan.scope)
        return suppress(result, plan.config, codes, request.select, request.ignore, repo.report_base)

    result = check_once()
    _warn_unsilenced(request.ignore, result)
    if request.fmt == "text" and not request.quiet:
        _hint_changed_fields(result, repo, {display: Path(path) for path, display in plan.pairs})
    fixed, fixed_files = 0, set()
    for _ in range(_FIX_ROUNDS if request.fix else 0):
        count, changed = _fix(result, {display: Path(path) for path, display in plan.pairs}, repo, request.quiet)
        if not changed:
            break
        fixed, fixed_files = fixed + count, fixed_files | changed
        result = check_once()
    if plan.gate:  # after the fixes: nothing in them to fix, and no configuration silences them
        result = dataclasses.replace(result, files=tuple(sorted((*result.files, *plan.gate),
                                                                key=lambda item: item.file)))
    if request.fix and not request.quiet:
        from pipeline.reporters.summary import fix_summary

        echo(fix_summary(fixed, len(fixed_files), len(result.problems)), err=True)
    return result, codes, verdicts


def _warn_unsilenced(ignore: Sequence[str], result) -> None:
    """Say on stderr which ``--ignore`` selectors name a problem of this run no ignore silences (an error, or a
    warning of :data:`~pipeline.spec.problems.UNSILENCED`): the report still shows it."""
    from pipeline.check.config import matches
    from pipeline.check.suppress import silenceable
    from pipeline.spec.problems import UNSILENCED

    for selector in ignore:
        hit = sorted({problem.code for problem in result.problems
                      if not silenceable(problem) and matches(selector, problem.code)})
        if hit:
            echo(f"modelspec: --ignore {selector} cannot silence {', '.join(hit)}: errors and "
                 f"{', '.join(sorted(UNSILENCED))} are always reported; fix them instead", err=True)


#: The codes of a count the spec's fields contradict, whose likely cause a hint names.
_COUNT_CODES = ("params.total-mismatch", "params.active-mismatch", "params.mtp-mismatch", "params.vision-mismatch")


def _hint_changed_fields(result, repo, paths: Dict[str, Path]) -> None:
    """For each file with a count mismatch, say on stderr which fields differ from its last artifact
    (``resolved/NAME.json``, when there is one): a hint at the field that likely changed, never part of the
    verdict or the reports (``check`` does not depend on ``resolved/``)."""
    from pipeline.spec.yaml_source import load_path

    for file_result in result.files:
        if not any(problem.code in _COUNT_CODES for problem in file_result.problems):
            continue
        data = load_path(paths[file_result.file], file_result.file).data
        artifact = repo.resolved / f"{data.get('name')}.json" if isinstance(data, dict) else None
        try:
            kept = json.loads(artifact.read_text(encoding="utf-8"))["spec"] if artifact else None
        except (OSError, ValueError, KeyError, TypeError):
            continue
        moved = changed_fields(kept, data) if isinstance(kept, dict) else []
        if moved:
            echo(f"{file_result.file}: hint: since {repo.report_name(artifact)}, {'; '.join(moved)} "
                 "(the last regen's artifact; not part of the verdict)", err=True)


def changed_fields(before: Dict[str, Any], after: Dict[str, Any], prefix: str = "") -> List[str]:
    """``["moe_intermediate_size 2048 -> 2000", "vision removed"]``: the fields of two spec mappings that differ,
    nested mappings by their dotted keys, ``parameters`` left out (it is what the hint explains)."""
    moved = []
    for key in [*before, *(key for key in after if key not in before)]:
        name, old, new = f"{prefix}{key}", before.get(key), after.get(key)
        if name == "parameters" or old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            moved += changed_fields(old, new, f"{name}.")
        else:
            moved.append(f"{name} removed" if key not in after else f"{name} added" if key not in before
                         else f"{name} {json.dumps(old)} -> {json.dumps(new)}")
    return moved


def _answer(request: Request, repo, result, codes):
    """The run's :class:`~pipeline.cache.whole_check.Answer`: its exit code, the stdout report and each
    ``--output`` report, every format showing the same capped problems and the count of the rest."""
    from pipeline.cache.whole_check import Answer
    from pipeline.reporters.summary import shown

    source_root = repo.report_base.as_uri().rstrip("/") + "/"
    capped = shown(result)
    return Answer(result.exit_code,
                  _render(request.fmt, capped, codes, color=request.use_color, quiet=request.quiet,
                          source_root=source_root, statistics=request.statistics),
                  tuple(_render(out_fmt, capped, codes, color=False, quiet=False, source_root=source_root)
                        for out_fmt, _ in request.outputs))


def _answer_key(repo, request: Request) -> str:
    """The key of the snapshot of this check's answer (:func:`pipeline.cache.whole_check.answer_key`): every option
    that shapes its reports."""
    from pipeline.cache.whole_check import answer_key

    return answer_key(repo, [request.fmt, [[out_fmt, str(path)] for out_fmt, path in request.outputs],
                             request.strict, list(request.select), list(request.ignore), request.quiet,
                             request.use_color, request.statistics])


def _answer_or_sources(repo, key: str, outputs: Sequence[Tuple[str, Path]]):
    """End the run with the answer the snapshot *key* records (:func:`pipeline.cache.whole_check.recorded_answer`),
    when it holds; else the answer's sources (:func:`pipeline.cache.whole_check.sources`) and their stat lines,
    taken now."""
    from pipeline.cache import whole_check
    from pipeline.cache import snapshot
    from pipeline.cache.stamps import cache_folder

    recorded = whole_check.recorded_answer(cache_folder(repo.root), key, repo.specs)
    if recorded is not None:
        _refuse_outputs(outputs, [*map(Path, recorded.specs), *repo_folders(repo)])
        raise SystemExit(_answered(recorded, outputs))
    paths = whole_check.sources(repo)
    return paths, snapshot.take(paths)


def _answered(answer, outputs: Sequence[Tuple[str, Path]]) -> int:
    """Print *answer*'s report and write its ``--output`` reports; the run's exit code (2 when a report could
    not be written)."""
    written = [_print(answer.report)] + [_write(out_path, text)
                                         for (_, out_path), text in zip(outputs, answer.outputs)]
    return answer.exit_code if all(written) else 2


def repo_folders(repo) -> List[Path]:
    """The folders of *repo* modelspec reads or writes itself: no report is written into them."""
    from pipeline.spec.resources import schema_path

    return [repo.specs, repo.profiles, repo.resolved, schema_path("model-spec.schema.json").parent]


def _refuse_outputs(outputs: Sequence[Tuple[str, Path]], protected: List[Path]) -> None:
    """Refuse, before any work, an ``--output`` through a symbolic link or onto a spec (see
    :func:`pipeline.catalogue.atomic.report_target_refusal`).

    Raises:
        click.BadParameter: Naming the path and why.
    """
    from pipeline.catalogue.atomic import report_target_refusal

    for out_fmt, out_path in outputs:
        why = report_target_refusal(out_path, protected)
        if why:
            raise click.BadParameter(why, param_hint=f"--output {out_fmt}={out_path}")


def _stdin_file(paths, fix: bool, changed_since: Optional[str]) -> Path:
    """``check -``: stdin's bytes in a file of a temporary folder (removed at exit), to check as any file."""
    import atexit
    import shutil
    import tempfile

    from pipeline.spec.yaml_source import MAX_BYTES

    if len(paths) > 1:
        raise click.UsageError("'-' (stdin) is the only spec check takes with it; name files without it")
    if fix or changed_since is not None:
        raise click.UsageError("--fix and --changed-since work on files; they do not take '-' (stdin)")
    scratch = Path(tempfile.mkdtemp(prefix="modelspec-stdin-"))
    atexit.register(shutil.rmtree, scratch, True)
    path = scratch / "stdin.yaml"
    path.write_bytes(read_stdin(MAX_BYTES))
    return path


def _fix(result, paths: Dict[str, Path], repo, quiet: bool) -> Tuple[int, set]:
    """Make the fixes the findings of *result* state (:mod:`pipeline.check.fix`), saying each on stderr unless
    *quiet*; how many problems were fixed, and the files changed."""
    from pipeline.catalogue.atomic import write_atomic
    from pipeline.check.fix import fixed_text, fixes_for, made
    from pipeline.spec.writes import home_of, refuse_write
    from pipeline.spec.layout import schema_line
    from pipeline.spec.yaml_source import load_bytes

    fixed, files = 0, set()
    for file_result in result.files:
        path = paths[file_result.file]
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue
        fixes, left = made(fixes_for(file_result.problems, load_bytes(text.encode("utf-8"), file_result.file).data))
        for item in left:  # said even when quiet: the fix the finding states was not made
            echo(f"{item.problem.file}:{item.problem.line}:{item.problem.column}: not fixed [{item.problem.code}] "
                 f"{item.done}", err=True)
        if not fixes:
            continue
        formatted = fixed_text(text, file_result.file, schema_line(repo, path), fixes)
        if formatted.text is None:
            for problem in formatted.problems:
                echo(f"{problem.file}:{problem.line}:{problem.column}: {problem.severity.value} [{problem.code}] "
                     f"{problem.message}", err=True)
            continue
        try:
            refuse_write(path, home_of(path, repo.root))  # never through a link: its target is not the fix's
            write_atomic(path, formatted.text)
        except OSError as error:
            echo(f"modelspec: cannot write the fixes to {file_result.file}: {error.strerror or error}", err=True)
            continue
        fixed += len(fixes)
        files.add(file_result.file)
        for item in fixes if not quiet else ():
            echo(f"{item.problem.file}:{item.problem.line}:{item.problem.column}: fixed [{item.problem.code}] "
                 f"{item.done}", err=True)
    return fixed, files


def _print(report: str) -> bool:
    """Print the stdout report; ``False`` (after saying why on stderr) when stdout cannot take it."""
    if sys.stdout is None:  # started with stdout closed
        return not report
    try:
        if report:
            echo_rendered(report, nl=False, color=True)  # the reporter chose; Click must not strip it when piped
        sys.stdout.flush()
    except OSError as error:
        echo(f"modelspec: cannot write the report to stdout: {error.strerror or error}", err=True)
        return False
    return True


def _run(pairs, profiles, jobs: Optional[int], cache):
    """Each file's verdict, with a progress bar on an interactive stderr for a long run."""
    from pipeline.commands.options import progress_bar
    from pipeline.cache.verdicts import verdicts

    with progress_bar(len(pairs), "checking") as update:
        return verdicts(pairs, profiles, jobs, progress=update, cache=cache)


def _render(fmt: str, result, codes: Dict[str, str], color: bool, quiet: bool, source_root: str,
            statistics: bool = False) -> str:
    """The report of *fmt*, with the text format's options (and SARIF's *source_root*, the ``file:`` URI of
    the folder report paths are relative to) applied."""
    import dataclasses

    from pipeline.reporters import reporter as registered

    reporter = registered(fmt)
    if fmt == "text":
        reporter = dataclasses.replace(reporter, color=color, quiet=quiet, statistics=statistics)
    elif fmt == "sarif":
        reporter = dataclasses.replace(reporter, source_root=source_root)
    return reporter.render(result, codes)


def _write(path: Path, text: str) -> bool:
    """Write one ``--output`` report; ``False`` (after saying why on stderr) when it cannot be written."""
    from pipeline.catalogue.atomic import write_output

    try:
        write_output(path, text)
    except OSError as error:
        echo(f"modelspec: cannot write the report to {path}: {error.strerror or error}", err=True)
        return False
    return True
