"""modelspec's configuration file: ``modelspec.toml`` or ``[tool.modelspec]`` in ``pyproject.toml``.

Read the way ruff reads its own: the nearest folder from the spec
repository's root up to the top of its git work tree that holds a
``modelspec.toml`` (its top-level table) or a ``pyproject.toml`` with a
``[tool.modelspec]`` table; in one folder, ``modelspec.toml`` wins. Paths in
it are relative to the folder holding it. The keys:

- ``specs``: the files or folders ``check`` and ``fmt`` take when given none
  (default: the repository's ``specs/``);
- ``exclude``: glob patterns (:func:`fnmatch.fnmatch`, ``*`` crossing ``/``)
  of files those folders leave out;
- ``select`` / ``ignore``: codes or code prefixes (``roundtrip``,
  ``roundtrip.null``) of the warnings reported (:mod:`pipeline.check.suppress`);
- ``per-file-ignores``: a table of glob pattern to codes ignored in the files
  it matches;
- ``strict``: warnings fail the run, as ``--strict``.

The file is validated as strictly as a spec: an unknown key, a value of the
wrong type or a code that names no code (with the closest ones) is a
:class:`ConfigError`, located at its line, and every command stops with exit
code 2 rather than run with a setting silently dropped. ``tomllib`` (the
standard library's TOML reader, Python 3.11+) reads it.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from pipeline.spec.problems import Problem, Severity

CODES: Dict[str, str] = {
    "config.syntax": "The configuration file is not valid TOML.",
    "config.unknown-key": "A key the configuration does not have (the keys: specs, exclude, select, ignore, "
                          "per-file-ignores, strict).",
    "config.type": "A configuration value of the wrong type (a list of strings, a table, true/false).",
    "config.unknown-code": "A code or code prefix in select, ignore or per-file-ignores that names no code modelspec "
                           "reports (docs/problems.md lists them).",
}

#: The configuration's keys, each with the type it takes, in words.
KEYS: Dict[str, str] = {
    "specs": "a list of paths",
    "exclude": "a list of glob patterns",
    "select": "a list of codes or code prefixes",
    "ignore": "a list of codes or code prefixes",
    "per-file-ignores": "a table of glob pattern = [codes]",
    "strict": "true or false",
}

#: The files a configuration is read from, in the order one folder's are tried.
CONFIG_FILES = ("modelspec.toml", "pyproject.toml")


class ConfigError(Exception):
    """The configuration file is broken; :attr:`problems` says where and how (each of severity error)."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__("; ".join(problem.message for problem in problems))
        self.problems = tuple(problems)


@dataclass(frozen=True)
class Config:
    """The configuration in force for one run.

    Attributes:
        file: The file it was read from, ``None`` when there is none (every default).
        base: The folder its paths and patterns are relative to.
        specs: What ``check`` and ``fmt`` take when given no path; empty for the repository's ``specs/``.
        exclude: Glob patterns of files left out of the folders searched.
        select: The codes or prefixes of the warnings reported; ``None`` for all.
        ignore: The codes or prefixes of the warnings not reported.
        per_file_ignores: ``(glob pattern, codes)`` pairs.
        strict: Whether warnings fail the run.
    """

    file: Optional[Path] = None
    base: Path = Path(".")
    specs: Tuple[Path, ...] = ()
    exclude: Tuple[str, ...] = ()
    select: Optional[Tuple[str, ...]] = None
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    strict: bool = False

    def relative(self, path: Path) -> str:
        """*path* relative to :attr:`base`, forward slashes (as the patterns are written); else as given.

        The path as found comes first (a spec reached through a symlinked folder is
        ``specs/linked/x.yaml``, where the pattern names it), then with its links resolved.
        """
        base = self.base.resolve()
        for candidate in (Path(os.path.abspath(path)), Path(path).resolve()):
            try:
                return candidate.relative_to(base).as_posix()
            except ValueError:
                continue
        return Path(path).as_posix()

    def excluded(self, path: Path) -> bool:
        """Whether an ``exclude`` pattern matches *path*, or one of its folders."""
        if not self.exclude:  # no pattern: no path to work out (this runs per file)
            return False
        relative = self.relative(path)
        parts = relative.split("/")
        candidates = [relative] + ["/".join(parts[:end]) for end in range(1, len(parts))]
        return any(fnmatch.fnmatchcase(candidate, pattern.rstrip("/"))
                   for pattern in self.exclude for candidate in candidates)

    def file_ignores(self, path: Path) -> Tuple[str, ...]:
        """The codes ``per-file-ignores`` ignores in *path*."""
        if not self.per_file_ignores:
            return ()
        relative = self.relative(path)
        return tuple(code for pattern, codes in self.per_file_ignores
                     if fnmatch.fnmatchcase(relative, pattern) for code in codes)


def matches(selector: str, code: str) -> bool:
    """Whether *selector* (a code or a dotted prefix of codes, ``roundtrip`` or ``roundtrip.``) names *code*."""
    prefix = selector.rstrip(".")
    return code == prefix or code.startswith(prefix + ".")


def unknown_selector(selector: str, codes: Sequence[str]) -> Optional[str]:
    """Why *selector* names none of *codes* (with the closest ones), or ``None`` when it names one."""
    if any(matches(selector, code) for code in codes):
        return None
    names = sorted(set(codes) | {code.split(".")[0] for code in codes})
    close = difflib.get_close_matches(selector, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(close)}?" if close else "; docs/problems.md lists the codes"
    return f"{selector!r} names no code modelspec reports{hint}"


def find_config(root: Path, top: Path) -> Optional[Path]:
    """The configuration file for the spec repository at *root*: the nearest from *root* up to *top*."""
    for candidate in config_candidates(root, top):
        if candidate.is_file() and (candidate.name != "pyproject.toml" or _has_table(candidate)):
            return candidate
    return None


def config_candidates(root: Path, top: Path) -> List[Path]:
    """Every path :func:`find_config` may take, in the order it tries them: :data:`CONFIG_FILES` in each folder
    from *root* up to *top* (both resolved; every folder above *root* when *top* is not one of them). What
    decides the configuration, for a snapshot of a check's answer to stat (:mod:`pipeline.cache.whole_check`)."""
    root, top = root.resolve(), top.resolve()
    candidates = []
    for folder in (root, *root.parents):
        candidates += [folder / name for name in CONFIG_FILES]
        if folder == top:
            break
    return candidates


def _has_table(pyproject: Path) -> bool:
    """Whether *pyproject* has a ``[tool.modelspec]`` table. A file that cannot be read is taken, and so is one
    that does not parse and names the table: :func:`load_config` reports either, located (one that cannot be
    read, such as another user's, is no reason to look further up or to crash)."""
    try:
        text = pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return "[tool.modelspec" in text
    return isinstance(data.get("tool"), dict) and "modelspec" in data["tool"]


def load_config(root: Path, top: Path, codes: Sequence[str], display: Any = None) -> Config:
    """Read and validate the configuration of the spec repository at *root* (see the module's docstring).

    Args:
        root: The spec repository's root.
        top: The highest folder searched (the git work tree's top).
        codes: Every code modelspec reports, for ``select``, ``ignore`` and ``per-file-ignores``.
        display: ``display(path)``, the configuration file's name in messages; ``str`` by default.

    Raises:
        ConfigError: If the file cannot be read, is not TOML, or states an unknown key, a value of the
            wrong type or an unknown code.
    """
    path = find_config(root, top)
    if path is None:
        return Config(base=root)
    name = (display or str)(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError([Problem(name, 1, 1, "config", "config.syntax", Severity.ERROR,
                                   f"cannot read the configuration ({error}); it must be UTF-8 TOML")]) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        line, column = _decode_position(str(error))
        raise ConfigError([Problem(name, line, column, "config", "config.syntax", Severity.ERROR,
                                   f"not valid TOML: {error}")]) from None
    table: Any = data
    prefix = ""
    if path.name == "pyproject.toml":
        table, prefix = data["tool"]["modelspec"], "tool.modelspec."
    return _validate(table, _Located(name, text, prefix), path.parent, codes, path)


def _decode_position(message: str) -> Tuple[int, int]:
    """The ``(at line L, column C)`` tomllib puts in its messages."""
    found = re.search(r"line (\d+), column (\d+)", message)
    return (int(found.group(1)), int(found.group(2))) if found else (1, 1)


@dataclass(frozen=True)
class _Located:
    """Finds the line of a key or a value in the configuration's text, for the problems' locations."""

    file: str
    text: str
    prefix: str

    def problem(self, code: str, message: str, key: str, value: Optional[str] = None) -> Problem:
        """A :class:`Problem` at *value*'s line (a quoted string) or *key*'s, else the top of the file."""
        line, column = self._find(rf"[\"']{re.escape(value)}[\"']" if value is not None else None) \
            or self._find(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=") or self._find(re.escape(key)) or (1, 1)
        return Problem(self.file, line, column, "config", code, Severity.ERROR, message)

    def _find(self, pattern: Optional[str]) -> Optional[Tuple[int, int]]:
        if pattern is None:
            return None
        found = re.search(pattern, self.text, re.M)
        if not found:
            return None
        start = found.start() + len(found.group()) - len(found.group().lstrip())
        line = self.text.count("\n", 0, start) + 1
        return line, start - (self.text.rfind("\n", 0, start) + 1) + 1


def _validate(table: Any, where: _Located, base: Path, codes: Sequence[str], path: Path) -> Config:
    """The :class:`Config` *table* states, or a :class:`ConfigError` listing every fault in it."""
    problems: List[Problem] = []
    if not isinstance(table, dict):
        raise ConfigError([where.problem("config.type", f"{where.prefix.rstrip('.') or 'the file'} must be a table",
                                         where.prefix.rstrip(".") or "modelspec")])
    for key in table:
        if key not in KEYS:
            close = difflib.get_close_matches(key, list(KEYS), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the keys are {', '.join(KEYS)}"
            problems.append(where.problem("config.unknown-key", f"unknown key {where.prefix}{key}{hint}", key))

    def strings(key: str, value: Any) -> Tuple[str, ...]:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(value)
        problems.append(where.problem("config.type", f"{where.prefix}{key} must be {KEYS[key]}, e.g. "
                                      f"{key} = [\"roundtrip.null\"]" if key in ("select", "ignore") else
                                      f"{where.prefix}{key} must be {KEYS[key]}", key))
        return ()

    def known(key: str, selectors: Tuple[str, ...]) -> Tuple[str, ...]:
        for selector in selectors:
            reason = unknown_selector(selector, codes)
            if reason:
                problems.append(where.problem("config.unknown-code", f"{where.prefix}{key}: {reason}", key, selector))
        return selectors

    specs = strings("specs", table["specs"]) if "specs" in table else ()
    exclude = strings("exclude", table["exclude"]) if "exclude" in table else ()
    select = known("select", strings("select", table["select"])) if "select" in table else None
    ignore = known("ignore", strings("ignore", table["ignore"])) if "ignore" in table else ()
    per_file: List[Tuple[str, Tuple[str, ...]]] = []
    if "per-file-ignores" in table:
        value = table["per-file-ignores"]
        if isinstance(value, dict):
            for pattern, listed in value.items():
                per_file.append((pattern, known("per-file-ignores", strings("per-file-ignores", listed))))
        else:
            problems.append(where.problem("config.type", f"{where.prefix}per-file-ignores must be "
                                          f"{KEYS['per-file-ignores']}", "per-file-ignores"))
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        problems.append(where.problem("config.type", f"{where.prefix}strict must be true or false", "strict"))
        strict = False
    if problems:
        raise ConfigError(sorted(problems))
    return Config(path, base, tuple(base / spec for spec in specs), exclude, select, ignore, tuple(per_file),
                  strict)
