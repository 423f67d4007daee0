"""Which warnings a run reports: ``select``/``ignore``, ``per-file-ignores`` and inline ``# modelspec: ignore[...]``.

A maintainer accepts a known warning three ways, as with ruff: by code or
code prefix for the whole run (``select``/``ignore`` in the configuration,
``--select``/``--ignore``), for the files a glob matches
(``per-file-ignores``), or on the offending line itself::

    torch_dtype: torch.bfloat16  # modelspec: ignore[roundtrip.torch-prefix]

Only warnings can be silenced. An error is a spec a cost model would read
wrong, and stays reported whatever the configuration says; so do the
warnings of :data:`~pipeline.spec.problems.UNSILENCED` (a spec nothing counts);
an inline ignore naming such a code is told so. An inline ignore that silences nothing is
itself a warning (``ignore.unused``, as ruff's ``RUF100``), so stale ones do
not pile up (not said of a file whose later passes were skipped: what they
would find is unknown); one naming no code is ``ignore.unknown-code``, and a
``# modelspec:`` comment that is not ``ignore[CODE, ...]`` is
``ignore.malformed``. These warnings obey ``select``/``ignore`` too.

Suppression runs on finished results (after any cache of per-file results),
so a change of configuration never needs the files checked again.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

from pipeline.check.config import Config, matches, unknown_selector
from pipeline.spec.problems import UNSILENCED, FileResult, InlineIgnore, Outcome, Problem, RunResult, Severity
from pipeline.spec.yaml_source import comment_locations

CODES: Dict[str, str] = {
    "ignore.unused": "An inline '# modelspec: ignore[CODE]' that silences nothing on its line; remove it, or the "
                     "codes it no longer needs.",
    "ignore.unknown-code": "An inline ignore names a code modelspec does not report.",
    "ignore.malformed": "A '# modelspec:' comment that is not '# modelspec: ignore[CODE, ...]'.",
}

_DIRECTIVE = re.compile(r"#\s*modelspec\s*:(?P<rest>.*)")
# A line where a directive could be: "#", then "modelspec", then ":" (what _DIRECTIVE needs, and more), in the raw
# bytes. A spec's header says "modelspec" too, so "modelspec" alone would send every file to the scanner.
_MAYBE_DIRECTIVE = re.compile(rb"#[^\r\n]*modelspec[^\r\n]*:")
_IGNORE = re.compile(r"\s*ignore\[(?P<codes>[^\]]*)\]")

#: How an inline ignore is written, for the messages.
INLINE_FORM = "# modelspec: ignore[CODE, ...]"


def inline_ignores(raw: bytes) -> Tuple[InlineIgnore, ...]:
    """The ``# modelspec:`` comments of a spec file's bytes, in order (a cheap no for a file without one).

    A ``#`` inside a quoted or plain scalar is text, not a comment
    (:func:`pipeline.spec.yaml_source.comment_locations` tells them apart); a file
    the scanner cannot read has none.
    """
    if _MAYBE_DIRECTIVE.search(raw) is None:  # most files: no directive anywhere, nothing to scan
        return ()

    text = raw.decode("utf-8", "replace").lstrip("\ufeff")
    try:
        comments = comment_locations(text)
    except ValueError:
        return ()
    lines = text.splitlines()
    found = []
    for where in comments:
        directive = _DIRECTIVE.match(lines[where.line - 1], where.column - 1)
        if directive is None:
            continue
        ignore = _IGNORE.match(directive.group("rest"))
        codes = tuple(code.strip() for code in ignore.group("codes").split(",") if code.strip()) if ignore else ()
        found.append(InlineIgnore(where.line, where.column, codes))
    return tuple(found)


def suppress(result: RunResult, config: Config, codes: Sequence[str], select: Sequence[str] = (),
             ignore: Sequence[str] = (), base: Optional[Path] = None) -> RunResult:
    """*result* with the warnings the configuration and the inline ignores silence left out.

    Args:
        result: A finished run.
        config: The configuration in force.
        codes: Every code modelspec reports (for an inline ignore's unknown code).
        select: ``--select``: replaces ``config.select`` when given.
        ignore: ``--ignore``: added to ``config.ignore``.
        base: The folder the results' file names are relative to, for ``per-file-ignores``.
    """
    chosen = tuple(select) or config.select
    run_ignores = (*config.ignore, *ignore)

    def reported(problem: Problem, file_ignores: Sequence[str]) -> bool:
        if not silenceable(problem):
            return True
        if chosen is not None and not any(matches(selector, problem.code) for selector in chosen):
            return False
        return not any(matches(selector, problem.code) for selector in (*run_ignores, *file_ignores))

    files = []
    for file_result in result.files:
        if not file_result.problems and not file_result.ignores:  # nothing to silence, nothing unused
            files.append(file_result)
            continue
        file_ignores = config.file_ignores((base or Path(".")) / file_result.file) if config.per_file_ignores else ()
        kept = _apply_inline(file_result, codes)
        files.append(FileResult(file_result.file, file_result.outcomes,
                                tuple(problem for problem in kept if reported(problem, file_ignores)),
                                file_result.ignores))
    return RunResult(tuple(files), result.strict, result.scope)


def silenceable(problem: Problem) -> bool:
    """Whether a configuration or an inline ignore may leave *problem* out: a warning not of :data:`UNSILENCED`."""
    return problem.severity is Severity.WARNING and problem.code not in UNSILENCED


def _apply_inline(file_result: FileResult, codes: Sequence[str]) -> List[Problem]:
    """The file's problems with the warnings its inline ignores silence left out, and a warning for each
    ignore (or code of one) that silences nothing."""
    by_line: Dict[int, List[int]] = {}
    for index, comment in enumerate(file_result.ignores):
        by_line.setdefault(comment.line, []).append(index)
    used: Set[Tuple[int, str]] = set()
    errors_at: Dict[int, Dict[str, Severity]] = {}  # the selectors of a line that hit what cannot be silenced
    kept: List[Problem] = []
    for problem in file_result.problems:
        hits = [(index, selector) for index in by_line.get(problem.line, ())
                for selector in file_result.ignores[index].codes if matches(selector, problem.code)]
        if hits and silenceable(problem):
            used.update(hits)
            continue
        if hits:
            errors_at.setdefault(problem.line, {}).update((selector, problem.severity) for _, selector in hits)
        kept.append(problem)
    # With a pass skipped, what it would have found is unknown: an ignore is not called unused then.
    complete = all(outcome is not Outcome.SKIPPED for _, outcome in file_result.outcomes)
    for index, comment in enumerate(file_result.ignores):
        kept.extend(_comment_problems(file_result.file, index, comment, used if complete else None,
                                      errors_at.get(comment.line, {}), codes))
    return sorted(kept)


def _comment_problems(file: str, index: int, comment: InlineIgnore, used: Optional[Set[Tuple[int, str]]],
                      error_selectors: Mapping[str, Severity], codes: Sequence[str]) -> List[Problem]:
    """The warnings about one inline ignore: malformed, naming an unknown code, or silencing nothing (only
    when *used*, what the file's ignores silenced, is known: ``None`` when a pass was skipped)."""
    def warning(code: str, message: str) -> Problem:
        return Problem(file, comment.line, comment.column, "load", code, Severity.WARNING, message)

    if not comment.codes:
        return [warning("ignore.malformed", f"a '# modelspec:' comment must be {INLINE_FORM!r}, naming the codes "
                                            "it silences on this line (e.g. # modelspec: ignore[roundtrip.null])")]
    out = []
    unused = []
    for selector in comment.codes:
        reason = unknown_selector(selector, codes)
        if reason:
            out.append(warning("ignore.unknown-code", f"ignore[{selector}]: {reason}"))
        elif (index, selector) not in (used or set()) and (used is not None or selector in error_selectors):
            unused.append(selector)
    if unused:
        errors = [selector for selector in unused if error_selectors.get(selector) is Severity.ERROR]
        warned = [selector for selector in unused if error_selectors.get(selector) is Severity.WARNING]
        reasons = ([f"an error cannot be ignored ({', '.join(errors)} here is an error)"] if errors else []) + \
            ([f"nor a spec nothing resolves or counts ({', '.join(warned)} here)"] if warned else [])
        why = f"; {', '.join(reasons)}: fix the spec" if reasons else ""
        out.append(warning("ignore.unused", f"ignore[{', '.join(unused)}] silences nothing on this line{why}; "
                                            "remove it" + (" (or those codes)" if len(unused) < len(comment.codes)
                                                           else "")))
    return out

