"""``modelspec import``: a spec from a Hugging Face ``config.json``, checked before it is written.

The mapping is :mod:`pipeline.importer`'s; this command reads the JSON
strictly (a duplicate key, NaN or an infinity is refused, each at its line
and column), writes the header block (the ``yaml-language-server`` schema
line for a file in a repository with ``schemas/``, the ``--source`` lines,
the import line), runs the five check passes on the text it is about to
write and refuses to write a spec that fails them. Nothing is written on any
refusal; a written file is written whole (:func:`pipeline.atomic.write_atomic`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import click

from pipeline.commands.options import repository_errors, root_option
from pipeline.problems import FILE_START, Location

# One JSON token of a valid document: a string, a structural character, or a literal/number.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


class ConfigReadError(Exception):
    """A config file that is not strict JSON: where, and why."""

    def __init__(self, where: Location, message: str):
        super().__init__(message)
        self.where = where


class _NonFinite:
    """A NaN or an infinity the JSON states, kept to be refused at its key."""

    def __init__(self, text: str):
        self.text = text


def _non_finite(text: str) -> Any:
    return _NonFinite(text)


def _float(text: str) -> Any:
    number = float(text)
    return _NonFinite(text) if number in (float("inf"), float("-inf")) else number


def _key_locations(text: str) -> Tuple[Dict[Tuple[Any, ...], Location], List[Tuple[Tuple[Any, ...], Location]]]:
    """Where each key of a valid JSON document is, and each key stated twice in one object.

    Returns:
        ``({key path: location of its first statement}, [(path, location) of each repeat])``.
    """
    found: Dict[Tuple[Any, ...], Location] = {}
    repeats: List[Tuple[Tuple[Any, ...], Location]] = []
    frames: List[Dict[str, Any]] = []  # each: path, is_object, key, index, want_key, seen
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
            where = _location(text, start)
            path = top["path"] + (key,)
            if key in top["seen"]:
                repeats.append((path, where))
            else:
                found[path] = where
                top["seen"].add(key)
            top["key"] = key
    return found, repeats


def _location(text: str, index: int) -> Location:
    line = text.count("\n", 0, index) + 1
    return Location(line, index - (text.rfind("\n", 0, index) + 1) + 1)


def _non_finite_paths(value: Any, path: Tuple[Any, ...] = ()) -> List[Tuple[Tuple[Any, ...], str]]:
    if isinstance(value, _NonFinite):
        return [(path, value.text)]
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _non_finite_paths(item, path + (key,))]
    if isinstance(value, list):
        return [found for index, item in enumerate(value) for found in _non_finite_paths(item, path + (index,))]
    return []


def read_config(raw: bytes) -> Tuple[Any, Dict[Tuple[Any, ...], Location]]:
    """Parse a config's bytes as strict JSON.

    Returns:
        ``(data, {key path: location})``.

    Raises:
        ConfigReadError: For bytes that are not UTF-8, text that is not JSON, a
            key stated twice in one object, or a NaN or infinity.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigReadError(FILE_START, f"byte {error.start} is not UTF-8; save the config as UTF-8") from None
    try:
        data = json.loads(text, parse_constant=_non_finite, parse_float=_float)
    except json.JSONDecodeError as error:
        raise ConfigReadError(Location(error.lineno, error.colno), f"not valid JSON: {error.msg}") from None
    locations, repeats = _key_locations(text)
    if repeats:
        path, where = repeats[0]
        raise ConfigReadError(where, f"{'.'.join(map(str, path))} is stated twice in one object (first on line "
                                  f"{locations[path].line}); keep one")
    bad = _non_finite_paths(data)
    if bad:
        path, literal = bad[0]
        raise ConfigReadError(_nearest(locations, path),
                              f"{'.'.join(map(str, path))} is {literal}; a config states finite numbers")
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


def spec_header(schema_line: Optional[str], sources: Sequence[str], config_name: str) -> str:
    """The header block an imported spec starts with.

    Args:
        schema_line: The ``# yaml-language-server`` line, or ``None``.
        sources: Provenance texts, one ``# source:`` line each.
        config_name: The config file's name, for the import line.
    """
    lines = [schema_line] if schema_line else []
    lines += [f"# source: {source}" for source in sources]
    lines.append(f"# imported by modelspec import from {config_name}; explain any hand edit in this header")
    return "\n".join(lines) + "\n"


def _check_source(ctx: click.Context, param: click.Parameter, values: Sequence[str]) -> Tuple[str, ...]:
    for value in values:
        if not value.strip() or any(char in value for char in "\r\n"):
            raise click.BadParameter("a source is one non-empty line of text", ctx, param)
    return tuple(values)


@click.command(name="import", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--name", help="The spec's name. Default: the last part of the config's _name_or_path, lower-cased, "
                             "else the config file's stem.")
@click.option("--arch", help="The op profile. Default: the one whose model_types lists the config's model_type.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the spec to this file (its folder must exist). Default: stdout.")
@click.option("--force", is_flag=True, help="Overwrite an existing --output file.")
@click.option("--source", "sources", multiple=True, callback=_check_source, metavar="TEXT",
              help="Where the config comes from (repository, revision, path), written as a '# source:' header "
                   "line; repeatable.")
@click.option("--allow-unknown", is_flag=True,
              help="Import a config with keys the importer does not know, listing them as warnings.")
@root_option
def command(config: Path, name: Optional[str], arch: Optional[str], output: Optional[Path], force: bool,
            sources: Tuple[str, ...], allow_unknown: bool, root: Optional[Path]) -> None:
    """Write a spec from a Hugging Face config.json.

    Every key of the config is mapped by the importer's table or is one it
    lists as not changing what a cost model prices; an unknown key stops the
    import by name (unless --allow-unknown). The spec is checked (the same
    passes as `modelspec check`) before it is written, and a spec that fails
    is not written.

    \b
    Examples:
      modelspec import config.json
      modelspec import config.json --name qwen3-8b -o specs/qwen/qwen3-8b.yaml \\
          --source "Qwen/Qwen3-8B config.json at revision abc123"

    Exit codes: 0 written, 1 the config cannot be imported (nothing is
    written), 2 usage error (a missing config, an existing --output without
    --force, an unknown --arch) or a broken op profile.
    """
    from pipeline.importer import ConfigImportError, import_config
    from pipeline.op_profiles import load_op_profiles
    from pipeline.repo import find_repo

    repo = find_repo(root)
    with repository_errors():
        profiles = load_op_profiles(repo.profiles)
    if arch is not None and arch not in profiles.profiles:
        raise click.BadParameter(f"{arch!r} names no op profile; the profiles are "
                                 f"{', '.join(sorted(profiles.profiles))}", param_hint="--arch")
    if output is not None and output.exists() and not force:
        raise click.UsageError(f"{output} exists; pass --force to overwrite it")
    file = repo.display(config)
    try:
        data, locations = read_config(config.read_bytes())
    except ConfigReadError as error:
        _fail([f"{file}:{error.where.line}:{error.where.column}: error [import.json] {error}"])
    try:
        imported = import_config(data, profiles, fallback_name=config.stem, name=name, arch=arch,
                                 allow_unknown=allow_unknown)
    except ConfigImportError as error:
        _fail([f"{_located(file, locations, issue.path)}: error [{issue.code}] {issue.message}"
               for issue in error.issues])
    for path in imported.unknown:
        click.echo(f"{_located(file, locations, path)}: warning [import.unknown-key] {'.'.join(path)} is not "
                   "imported: the importer does not know it", err=True)
    text = _spec_text(imported.data, repo, output, sources, config.name)
    _check(text, repo.display(output) if output is not None else "<stdout>", profiles)
    if output is None:
        click.echo(text, nl=False)
        return
    from pipeline.atomic import write_atomic

    try:
        write_atomic(output, text)
    except OSError as error:
        raise click.FileError(str(output), hint=error.strerror) from None
    click.echo(f"wrote {repo.display(output)}", err=True)


def _spec_text(data: Any, repo: Any, output: Optional[Path], sources: Sequence[str], config_name: str) -> str:
    from pipeline.fmt import schema_line
    from pipeline.yaml_source import dump

    schema = schema_line(repo, output) if output is not None else None
    return dump(data, spec_header(schema, sources, config_name))


def _check(text: str, display: str, profiles: Any) -> None:
    """Run the check passes on *text*; exit 1 showing the problems when one is an error."""
    from pipeline.problems import Severity
    from pipeline.runner import check_document
    from pipeline.yaml_source import load_bytes

    checked = check_document(load_bytes(text.encode("utf-8"), display), profiles)
    lines = [f"{p.file}:{p.line}:{p.column}: {p.severity.value} [{p.code}] {p.message}"
             for p in checked.result.problems]
    if any(p.severity is Severity.ERROR for p in checked.result.problems):
        _fail(lines + ["modelspec: the imported spec fails modelspec check; nothing was written"])
    for line in lines:
        click.echo(line, err=True)


def _fail(lines: Sequence[str]) -> None:
    for line in lines:
        click.echo(line, err=True)
    raise SystemExit(1)
