"""``modelspec import``: a spec from a Hugging Face ``config.json``, checked before it is written.

The mapping is :mod:`pipeline.importer.config_json`'s; this command reads the JSON
strictly (a duplicate key or a number too long to convert is refused, each
at its line and column; a NaN or an infinity is kept, for the importer to
refuse where a rule reads it), and boundedly: at most :data:`MAX_BYTES` are read and nesting deeper than :data:`MAX_DEPTH` is
refused before the parser recurses into it, so no file costs more than the
cap or ends in a traceback. It writes the header block (the
``yaml-language-server`` schema line for a file in a repository with
``schemas/``, the ``--source`` lines, the import line), runs the five check
passes on the text it is about to write and refuses to write a spec that
fails them, each problem located at the config key its field came from (the
text was never written, so a line of it would point nowhere). Nothing is
written on any refusal; a written file is written whole
(:func:`pipeline.catalogue.atomic.write_output`; through a symlink, to its target,
keeping the link; a device in place), ``-o`` into a folder that does not
exist is refused before any work, and a name another spec of the repository
already states is refused.
"""

from __future__ import annotations

import os
import sys

import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import click

from pipeline.commands.output import echo, echo_rendered

from pipeline.commands.options import repository_errors, root_option
from pipeline.spec.problems import FILE_START, Location

#: Largest config file read, in bytes (1 MiB). A published config.json is a
#: few kilobytes; a bigger file is the wrong file, and the cap bounds the
#: reader's work (only this many bytes, plus one, are ever read).
MAX_BYTES = 1 << 20

#: Deepest nesting of objects and arrays read (the config itself is 1). A
#: config nests three or four levels; the cap keeps a runaway ``[[[[...``
#: from the parser's recursion.
MAX_DEPTH = 64

#: Longest number read, in characters: Python refuses to convert a decimal
#: text of more than 4300 digits (``sys.int_info.default_max_str_digits``).
MAX_NUMBER_CHARS = 4000

# One JSON token of a valid document: a string, a structural character, or a literal/number.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')
# A string (closed or not, so that no bracket inside one counts) or a bracket: what nesting is counted over.
_NESTING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]')


class ConfigReadError(Exception):
    """A config file that cannot be read as strict JSON: where, and why (code ``import.json``)."""

    def __init__(self, where: Location, message: str):
        super().__init__(message)
        self.where = where


class _Refused:
    """A number the JSON states that a config cannot mean, kept to be refused at its key.

    Attributes:
        why: The message's tail after the key: ``is a number of 4001 characters; ...``.
    """

    def __init__(self, why: str):
        self.why = why


def _too_long(text: str) -> Any:
    return _Refused(f"is a number of {len(text)} characters; a config states numbers of at most "
                    f"{MAX_NUMBER_CHARS} characters")


def _int(text: str) -> Any:
    return _too_long(text) if len(text) > MAX_NUMBER_CHARS else int(text)


def _float(text: str) -> Any:
    if len(text) > MAX_NUMBER_CHARS:
        return _too_long(text)
    return float(text)


def _key_locations(text: str) -> Tuple[Dict[Tuple[Any, ...], Location], List[Tuple[Tuple[Any, ...], Location]]]:
    """Where each key of a valid JSON document is, and each key stated twice in one object.

    Returns:
        ``({key path: location of its first statement}, [(path, location) of each repeat])``.
    """
    found: Dict[Tuple[Any, ...], Location] = {}
    repeats: List[Tuple[Tuple[Any, ...], Location]] = []
    frames: List[Dict[str, Any]] = []  # each: path, is_object, key, index, want_key, seen
    locate = _Locator(text)
    for match in _TOKEN.finditer(text):
        start, token = match.start(), match.group()
        top = frames[-1] if frames else None
        if token in "{[":
            path = () if top is None else top["path"] + ((top["key"],) if top["object"] else (top["index"],))
            frames.append({"path": path, "object": token == "{", "key": None, "index": 0, "want_key": True,
                           "seen": set()})
        elif token in "}]":
            frames.pop()
        elif token == ":":
            top["want_key"] = False
        elif token == ",":
            top["want_key"], top["index"] = True, top["index"] + 1
        elif top is not None and top["object"] and top["want_key"]:
            key = json.loads(token)
            where = locate(start)
            path = top["path"] + (key,)
            if key in top["seen"]:
                repeats.append((path, where))
            else:
                found[path] = where
                top["seen"].add(key)
            top["key"] = key
    return found, repeats


class _Locator:
    """Line and column of indexes into one text, asked in increasing order: each newline is counted once."""

    def __init__(self, text: str):
        self.text = text
        self.line, self.line_start, self.counted_to = 1, 0, 0

    def __call__(self, index: int) -> Location:
        newlines = self.text.count("\n", self.counted_to, index)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.counted_to, index) + 1
        self.counted_to = index
        return Location(self.line, index - self.line_start + 1)


def _location(text: str, index: int) -> Location:
    line = text.count("\n", 0, index) + 1
    return Location(line, index - (text.rfind("\n", 0, index) + 1) + 1)


def _refused_paths(value: Any, path: Tuple[Any, ...] = ()) -> List[Tuple[Tuple[Any, ...], _Refused]]:
    if isinstance(value, _Refused):
        return [(path, value)]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _refused_paths(item, path + (key,))]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in _refused_paths(item, path + (index,))]
    return []


_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogates(value: Any, path: Tuple[Any, ...] = ()) -> List[Tuple[Tuple[Any, ...], str]]:
    """``(path, text)`` of each key or string holding a lone surrogate (``"\\udfff"``), which UTF-8 cannot encode.

    JSON lets a ``\\u`` escape name half a UTF-16 pair; Python decodes it to
    a lone surrogate that no file or terminal can take.
    """
    found: List[Tuple[Tuple[Any, ...], str]] = []
    if isinstance(value, str) and _SURROGATE.search(value):
        found.append((path, value))
    elif isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                found.append((path + (key,), key))
            found.extend(_lone_surrogates(item, path + (key,)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_lone_surrogates(item, path + (index,)))
    return found


def _too_deep(text: str) -> Optional[int]:
    """Where the first object or array nested deeper than :data:`MAX_DEPTH` opens, or ``None``."""
    depth = 0
    for match in _NESTING.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        elif token in ("]", "}"):
            depth -= 1
    return None


def read_config_file(path: Path) -> bytes:
    """A config file's bytes, reading at most :data:`MAX_BYTES` + 1 of them.

    Raises:
        ConfigReadError: At the file's start, for a file that cannot be read
            or is larger than :data:`MAX_BYTES`.
    """
    from pipeline.spec.yaml_source import UnreadableFile, read_bounded

    try:
        raw = read_bounded(path, MAX_BYTES)
    except UnreadableFile as error:
        raise ConfigReadError(FILE_START, str(error) + ("; a config is a file" if str(error).startswith("not a")
                                                        else "")) from None
    if len(raw) > MAX_BYTES:
        raise ConfigReadError(FILE_START, f"the file is larger than 1 MiB ({MAX_BYTES} bytes); a config.json is a "
                                          "few kilobytes: check that this is the right file")
    return raw


def _stdin_config() -> bytes:
    """A config read from stdin (``modelspec import -``), bounded as a file is.

    Raises:
        ConfigReadError: For more than :data:`MAX_BYTES`.
    """
    from pipeline.commands.options import read_stdin

    raw = read_stdin(MAX_BYTES)
    if len(raw) > MAX_BYTES:
        raise ConfigReadError(FILE_START, f"stdin holds more than 1 MiB ({MAX_BYTES} bytes); a config.json is a few "
                                          "kilobytes: check that this is the right input")
    return raw


def read_config(raw: bytes) -> Tuple[Any, Dict[Tuple[Any, ...], Location]]:
    """Parse a config's bytes as strict JSON.

    Returns:
        ``(data, {key path: location})``.

    Raises:
        ConfigReadError: For bytes that are not UTF-8, text that is not JSON,
            nesting deeper than :data:`MAX_DEPTH`, a key stated twice in one
            object, a key or text holding a lone surrogate escape, a document
            that is only a NaN or an infinity, or a number of more than
            :data:`MAX_NUMBER_CHARS` characters.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigReadError(FILE_START, f"byte {error.start} is not UTF-8; save the config as UTF-8") from None
    deep = _too_deep(text)
    if deep is not None:
        raise ConfigReadError(_location(text, deep), f"nesting deeper than {MAX_DEPTH} levels; a config nests a "
                                                     "few, so check that this is the right file")
    try:
        data = json.loads(text, parse_constant=float, parse_float=_float, parse_int=_int)
    except json.JSONDecodeError as error:
        raise ConfigReadError(Location(error.lineno, error.colno), f"not valid JSON: {error.msg}") from None
    if isinstance(data, float) and not math.isfinite(data):
        raise ConfigReadError(FILE_START, f"the config is {text.strip()}; a config states finite numbers")
    locations, repeats = _key_locations(text)
    if repeats:
        path, where = repeats[0]
        raise ConfigReadError(where, f"{'.'.join(map(str, path))} is stated twice in one object (first on line "
                                  f"{locations[path].line}); keep one")
    halves = _lone_surrogates(data)
    if halves:
        path, text = halves[0]
        named = ".".join(map(str, path[:-1] if text is path[-1] else path)) or "the config"
        what = f"the key {text!r}" if path and text is path[-1] else f"the text {text!r}"
        raise ConfigReadError(_nearest(locations, path), f"{named}: {what} holds a lone surrogate escape (half of "
                              "a UTF-16 pair, no character of its own); write the character it stands for")
    bad = _refused_paths(data)
    if bad:
        path, refused = bad[0]
        named = ".".join(map(str, path)) or "the config"
        raise ConfigReadError(_nearest(locations, path), f"{named} {refused.why}")
    return data, locations


def _nearest(locations: Dict[Tuple[Any, ...], Location], path: Sequence[Any]) -> Location:
    """Where the key *path* is, or its nearest stated parent; the file's start for none."""
    for end in range(len(path), 0, -1):
        where = locations.get(tuple(path[:end]))
        if where is not None:
            return where
    return FILE_START


def _located(file: str, locations: Dict[Tuple[Any, ...], Location], path: Sequence[Any]) -> str:
    """``file:line:col`` of the key *path*, or of its nearest stated parent."""
    where = _nearest(locations, path)
    return f"{file}:{where.line}:{where.column}"


def spec_header(schema_line: Optional[str], sources: Sequence[str], config_name: str,
                gaps: Optional[Any] = None) -> str:
    """The header block an imported spec starts with.

    Args:
        schema_line: The ``# yaml-language-server`` line, or ``None``.
        sources: Provenance texts, one ``# source:`` line each.
        config_name: The config file's name, for the import line.
        gaps: The spec's :class:`~pipeline.spec.model.ImportGaps`, one line per gap (the config's key names and model
            type made printable: a config's text is hostile), or ``None``.
    """
    from pipeline.spec.escape import printable

    lines = [schema_line] if schema_line else []
    lines += [f"# source: {source}" for source in sources]
    lines += [f"# imported by modelspec import from {config_name}"]
    if gaps is not None and gaps.dropped:
        lines.append(f"# import_gaps: dropped the config keys {printable(', '.join(gaps.dropped))} "
                     "(--allow-unknown); no parameters figure is written")
    if gaps is not None and gaps.model_type is not None:
        lines.append(f"# import_gaps: read model_type {printable(gaps.model_type)} as this arch's family (--arch); "
                     "no parameters figure is written")
    lines.append("# explain any hand edit in this header")
    return "\n".join(lines) + "\n"


def _check_source(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> Tuple[str, ...]:
    """Each ``--source`` is one header line: not blank, and no character a line splitter or terminal acts on.

    YAML 1.1 and Python's ``splitlines`` break lines at U+000B, U+000C,
    U+001C-U+001E, U+0085, U+2028 and U+2029 as well as at CR and LF; any of
    them would split the comment (a ``#`` after it would start a line of its own).
    """
    from pipeline.spec.escape import first_unprintable

    for value in values:
        if not value.strip():
            raise click.BadParameter("a source is one non-empty line of text", ctx, param)
        char = first_unprintable(value.replace("\t", " "))
        if char is not None:
            raise click.BadParameter(f"a source is one line of printable text; U+{ord(char):04X} at character "
                                     f"{value.index(char) + 1} is a control character or line break", ctx, param)
        if "##[" in value:  # the spec goes to stdout, where a CI runner would run its header line as a command
            raise click.BadParameter("a source cannot hold the legacy workflow-command prefix (two '#' "
                                     "and a '['), which a GitHub Actions log runs wherever it stands; write it "
                                     "another way", ctx, param)
    return tuple(values)


def _check_name(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    if value is not None and not value.strip():
        raise click.BadParameter("a name is not empty; leave out --name to take the config's own name", ctx, param)
    return value


def _check_output(ctx: click.Context, param: click.Parameter, value: Optional[Path]) -> Optional[Path]:
    """``-`` is stdout (``None``); a file's folder must exist, checked before any work."""
    if value is None or str(value) == "-":
        return None
    folder = value.parent
    if folder.exists() and not folder.is_dir():
        raise click.BadParameter(f"{folder.as_posix()} is not a folder; name a file in a folder, or leave out -o to "
                                 "write the spec to stdout", ctx, param)
    if not folder.is_dir():
        raise click.BadParameter(f"the folder {folder.as_posix()} does not exist; create it, or leave out -o to "
                                 "write the spec to stdout", ctx, param)
    return value


@click.command(name="import", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("config", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--name", callback=_check_name,
              help="The spec's name. Default: the last part of the config's _name_or_path, lower-cased, else the "
                   "config file's stem.")
@click.option("--arch", help="The op profile for a config whose model_type no profile lists (a fine-tune's own "
                             "name): its keys are read as that profile's family. Refused when a profile prices the "
                             "model_type, which always picks its own profile.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path),
              callback=_check_output, help="Write the spec to this file (its folder must exist); '-' is stdout. "
                                           "Default: stdout.")
@click.option("--force", is_flag=True,
              help="Overwrite an existing --output file. Its header (sources, hand-edit notes) is kept, and when its "
                   "values differ the diff is shown and a confirmation asked (refused without a terminal).")
@click.option("--yes", is_flag=True, help="With --force, overwrite a spec whose values differ without asking.")
@click.option("--fresh-header", is_flag=True,
              help="With --force, write a new header instead of keeping the existing file's.")
@click.option("--source", "sources", multiple=True, callback=_check_source, metavar="TEXT",
              help="Where the config comes from (repository, revision, path), written as a '# source:' header "
                   "line; repeatable.")
@click.option("--allow-unknown", is_flag=True,
              help="Import a config with keys the importer does not know, listing them as warnings.")
@root_option
def command(config: Path, name: Optional[str], arch: Optional[str], output: Optional[Path], force: bool,
            yes: bool, fresh_header: bool, sources: Tuple[str, ...], allow_unknown: bool,
            root: Optional[Path]) -> None:
    """Write a spec from a Hugging Face config.json.

    Every key of the config is mapped by the importer's table or is one it
    lists as not changing what a cost model prices; an unknown key stops the
    import by name (unless --allow-unknown). The spec is checked (the same
    passes as `modelspec check`) before it is written, and a spec that fails
    is not written.

    Re-importing over a spec (--force) keeps its header: the sources (replaced
    by --source when given) and every hand-edit note; --fresh-header writes a
    new one. When the values differ from the file's (a hand edit the config
    does not state), the diff is shown first and the overwrite confirmed
    (--yes, or a prompt on a terminal; refused otherwise).

    --arch is for a model type no op profile lists, such as a fine-tune's
    own name: the config is read as the named profile's family. A model type
    a profile prices is always imported with that profile, so --arch naming
    another one is refused.

    \b
    Examples:
      modelspec import config.json
      modelspec import config.json --name qwen3-8b -o specs/qwen/qwen3-8b.yaml \\
          --source "Qwen/Qwen3-8B config.json at revision abc123"
      modelspec import my-llama-finetune.json --arch llama
      curl -sL https://huggingface.co/org/model/raw/main/config.json | modelspec import - --name model
      modelspec import config.json -o specs/qwen/qwen3-8b.yaml --force   # re-import

    Exit codes: 0 written, 1 the config cannot be imported (nothing is
    written), 2 usage error (a missing config, an empty --name, an --output
    folder that does not exist, an existing --output without --force, an
    unknown --arch) or a broken op profile.
    """
    from pipeline.importer.config_json import ConfigImportError, import_config
    from pipeline.pricing.op_profiles import load_op_profiles
    from pipeline.check.repo import find_repo

    repo = find_repo(root)
    with repository_errors():
        profiles = load_op_profiles(repo.profiles)
    if arch is not None and arch not in profiles.profiles:
        raise click.BadParameter(f"{arch!r} names no op profile; the profiles are "
                                 f"{', '.join(sorted(profiles.profiles))}", param_hint="--arch")
    if output is not None and output.exists() and not force:
        raise click.UsageError(f"{output} exists; pass --force to overwrite it")
    from_stdin = str(config) == "-"
    file = "-" if from_stdin else repo.report_name(config)
    try:
        data, locations = read_config(_stdin_config() if from_stdin else read_config_file(config))
    except ConfigReadError as error:
        _fail([f"{file}:{error.where.line}:{error.where.column}: error [import.json] {error}"])
    try:
        imported = import_config(data, profiles, fallback_name="stdin" if from_stdin else config.stem, name=name,
                                 arch=arch,
                                 allow_unknown=allow_unknown)
    except ConfigImportError as error:
        _fail([f"{_located(file, locations, issue.path)}: error [{issue.code}] {issue.message}"
               for issue in error.issues])
    for path in imported.unknown:
        echo(f"{_located(file, locations, path)}: warning [import.unknown-key] {'.'.join(path)} is not "
                   "imported: the importer does not know it", err=True)
    text = _spec_text(imported.data, repo, output, sources, "stdin" if from_stdin else config.name,
                      imported.spec.import_gaps)

    def at_config_key(path: Sequence[Any]) -> Tuple[str, str]:
        key, note = imported.source(path)
        return _located(file, locations, key), note

    _check(text, profiles, at_config_key)
    if output is None:
        echo_rendered(text, nl=False)
        return
    _refuse_a_taken_name(repo, output, imported.spec.name)
    from pipeline.catalogue.atomic import is_stream, write_output
    from pipeline.spec.writes import home_of, write_refusal

    refused = None if is_stream(output) else write_refusal(output, home_of(output, repo.root))
    if refused is not None:  # a link (or a linked folder) where -o points: its target is not import's to replace
        raise _WriteFailed(f"cannot write {output}: {refused}")
    if output.exists():
        text = _over_existing(output, text, repo, sources, fresh_header, yes)
    try:
        write_output(output, text)  # a device or a pipe (/dev/stdout) is written in place
    except OSError as error:
        raise _WriteFailed(f"cannot write {output}: {error.strerror or error}") from None
    echo(f"wrote {repo.report_name(output)}", err=True)


class _WriteFailed(click.ClickException):
    """The spec could not be written where ``-o`` points: a usage or environment error, exit code 2."""

    exit_code = 2


def _refuse_a_taken_name(repo: Any, output: Path, name: str) -> None:
    """Refuse to write a spec whose name another spec of the repository already states (exit code 1).

    Raises:
        SystemExit: 1, after naming the other spec on stderr.
    """
    from pipeline.check.runner import spec_names
    from pipeline.check.discovery import find_spec_files

    if not repo.specs.is_dir():
        return
    target = os.path.realpath(output)
    others = [(path, repo.display(path)) for path in find_spec_files([repo.specs])
              if os.path.realpath(path) != target]
    taken = spec_names(others).get(name.casefold())
    if taken:
        echo(f"{repo.report_name(output)}: error [spec.duplicate-name] name {name!r} is already the name of "
                   f"{', '.join(display for _, display in taken)}; choose another --name", err=True)
        raise SystemExit(1)


def _spec_text(data: Any, repo: Any, output: Optional[Path], sources: Sequence[str], config_name: str,
               gaps: Optional[Any] = None) -> str:
    from pipeline.spec.layout import format_text, schema_line
    from pipeline.spec.yaml_source import dump

    schema = schema_line(repo, output) if output is not None else None
    text = dump(data, spec_header(schema, sources, config_name, gaps))
    # In fmt's layout (its document start, its wrapped header), so a new spec needs no fmt run.
    return format_text(text, "<import>", schema).text or text


def _over_existing(output: Path, text: str, repo: Any, sources: Sequence[str], fresh_header: bool,
                   yes: bool) -> str:
    """The text to write over the spec *output*: *text* with the file's header kept (unless *fresh_header*),
    after the diff and a confirmation when the values differ (exit 1 when refused)."""
    from pipeline.spec.layout import format_text, schema_line, unified_diff
    from pipeline.spec.yaml_source import load_bytes

    try:
        old = output.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return text  # unreadable: nothing to keep, and --force said to overwrite it
    name = repo.report_name(output)
    old_data = load_bytes(old.encode("utf-8"), name).data
    if not isinstance(old_data, dict):
        return text  # not a spec: nothing to keep, and --force said to overwrite it
    schema = schema_line(repo, output)
    if not fresh_header:
        text = format_text(kept_header(old, text, sources), "<import>", schema).text or text
    if old_data == load_bytes(text.encode("utf-8"), name).data:
        return text
    echo(f"{name}: the import changes values the file states (a hand edit the config does not state?):", err=True)
    echo(unified_diff(old, text, name), err=True, nl=False)
    if yes or (sys.stdin.isatty() and click.confirm(f"overwrite {name}?", err=True)):
        return text
    echo(f"{name}: not overwritten; pass --yes to overwrite it, or keep the hand edit", err=True)
    raise SystemExit(1)


def kept_header(old: str, new: str, sources: Sequence[str]) -> str:
    """*new* (an imported spec) with the header of *old* (the spec it replaces): its schema line aside, every
    line kept, except that *sources*, when given, replace its source lines (from the first ``# source:`` up to
    the import note ``# imported by modelspec import``, which fmt may have wrapped onto several lines)."""
    from pipeline.spec.layout import SCHEMA_PREFIX, split_header

    old_header, _ = split_header(old)
    new_header, new_lines = split_header(new)
    kept = [line for line in old_header if not line.startswith(SCHEMA_PREFIX.split("$")[0])]
    if sources:
        starts = [index for index, line in enumerate(kept) if line.startswith("# source:")]
        start = starts[0] if starts else 0
        ends = [index for index, line in enumerate(kept) if index > start and line.startswith("# imported by ")]
        end = ends[0] if ends else (starts[-1] + 1 if starts else 0)
        kept[start:end] = [f"# source: {source}" for source in sources]
    schema = [line for line in new_header if line.startswith(SCHEMA_PREFIX.split("$")[0])]
    body = "".join(line + "\n" for line in new.splitlines()[new_lines:])
    return "".join(line + "\n" for line in schema + kept) + body


def _check(text: str, profiles: Any, at_config_key: Callable[[Sequence[Any]], Tuple[str, str]]) -> None:
    """Run the check passes on *text*; exit 1 showing the problems when one is an error.

    Args:
        text: The spec text about to be written.
        profiles: The op profiles.
        at_config_key: ``at_config_key(field path)``: the ``file:line:col`` of
            the config key the field came from, and a note naming that key
            (the text was never written, so a problem is shown at its source).
    """
    from pipeline.spec.problems import Severity
    from pipeline.check.runner import check_document
    from pipeline.spec.yaml_source import load_bytes

    checked = check_document(load_bytes(text.encode("utf-8"), "<imported spec>"), profiles)
    lines = []
    for problem in checked.result.problems:
        where, note = at_config_key(problem.path)
        lines.append(f"{where}: {problem.severity.value} [{problem.code}] {problem.message}{note}")
    if any(p.severity is Severity.ERROR for p in checked.result.problems):
        _fail(lines + ["modelspec: the imported spec fails modelspec check; nothing was written"])
    for line in lines:
        echo(line, err=True)


def _fail(lines: Sequence[str]) -> None:
    for line in lines:
        echo(line, err=True)
    raise SystemExit(1)
