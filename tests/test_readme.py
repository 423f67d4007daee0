"""The README stays true: its spec field table is the schema's, its commands are the project's.

The field table between the ``<!-- spec-fields -->`` markers is generated from
``schemas/model-spec.schema.json`` (``pytest --update-golden`` rewrites it);
every ``modelspec`` command line the README shows names a real subcommand and
real options; the two set-up commands are where ``.ci/run`` reads them.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any, Dict, List

import pytest

from pipeline.cli import _COMMANDS, main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIELDS = re.compile(r"(<!-- spec-fields -->\n)(.*?)(<!-- /spec-fields -->)", re.S)


def _type(prop: Dict[str, Any]) -> str:
    """A property's type in words."""
    if "$ref" in prop:
        return {"#/$defs/layers": "list of {kind, count, mtp}", "#/$defs/kindActivations": "activations record",
                "#/$defs/vision": "vision tower"}[prop["$ref"]]
    kinds = [k for k in (prop["type"] if isinstance(prop["type"], list) else [prop["type"]]) if k != "null"]
    word = {"integer": "integer", "number": "number", "boolean": "true/false", "string": "string",
            "array": "list", "object": "mapping"}[kinds[0]]
    if "minimum" in prop:
        word += f" ≥ {prop['minimum']}"
    if "exclusiveMinimum" in prop:
        word += f" > {prop['exclusiveMinimum']}"
    return word


def field_table() -> str:
    """The Markdown table of the spec's top-level fields, in the schema's order."""
    schema = json.loads((ROOT / "schemas" / "model-spec.schema.json").read_text(encoding="utf-8"))
    required = set(schema["required"])
    rows = ["| field | type | required | meaning |", "| --- | --- | --- | --- |"]
    for name, prop in schema["properties"].items():
        text = prop["description"].replace("|", "\\|")
        rows.append(f"| `{name}` | {_type(prop)} | {'yes' if name in required else ''} | {text} |")
    return "\n".join(rows) + "\n"


def test_the_field_table_is_the_schema(request: pytest.FixtureRequest) -> None:
    text = README.read_text(encoding="utf-8")
    match = FIELDS.search(text)
    assert match, "README.md has no <!-- spec-fields --> section"
    if request.config.getoption("--update-golden"):
        text = FIELDS.sub(lambda m: m.group(1) + field_table() + m.group(3), text)
        README.write_text(text, encoding="utf-8")
        match = FIELDS.search(text)
    assert match.group(2) == field_table(), "README.md's field table is stale; run pytest --update-golden"


def _command_lines() -> List[List[str]]:
    """Every ``modelspec ...`` command line in the README's code blocks, split like a shell would."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    lines = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\|", line.split("#")[0]):
                words = shlex.split(part)
                if words and words[0].endswith("modelspec") and len(words) > 1 and not words[1].startswith("-"):
                    lines.append([words[0].rsplit("/", 1)[-1]] + words[1:])
    return lines


def test_the_readme_shows_commands() -> None:
    assert {line[1] for line in _command_lines()} >= set(_COMMANDS)


@pytest.mark.parametrize("line", _command_lines(), ids=lambda line: " ".join(line[1:3]))
def test_every_command_in_the_readme_exists_with_its_options(line: List[str]) -> None:
    command = main.get_command(None, line[1])  # type: ignore[arg-type]
    assert command is not None, f"modelspec {line[1]} is not a command"
    options = {opt for param in command.params for opt in getattr(param, "opts", []) + getattr(param, "secondary_opts", [])}
    used = [word.split("=")[0] for word in line[2:] if word.startswith("-")]
    assert [word for word in used if word not in options] == []


@pytest.mark.parametrize("marker", ["check-command", "test-command"])
def test_the_set_up_commands_are_where_ci_reads_them(marker: str) -> None:
    text = README.read_text(encoding="utf-8")
    block = re.search(rf"<!-- {marker} -->\n```\n(.+)\n```\n<!-- /{marker} -->", text)
    assert block, f"README.md has no {marker} block"
    assert block.group(1).startswith("python3 -m venv .venv && .venv/bin/pip install -e ")
