"""The problem codes: one table, documented, and nothing emitted that it lacks.

``docs/problems.md`` is generated from :func:`pipeline.spec.problems.all_codes`
(``pytest --update-golden`` rewrites it); every dotted code literal in the
package must be declared in a ``CODES`` table, and every declared code must
be used somewhere, so the table can neither miss a code nor keep a dead one.
The schemas and the records they describe are kept in sync here too.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path
from typing import Dict

import pytest

from pipeline.spec.model import MODEL_KEYS_ORDERED, KindActivations, LayerGroup, OpCounts, VisionSpec
from pipeline.spec.problems import all_codes

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "problems.md"

# Which pass (or command) reports the codes of each area, for the documentation.
AREAS = {
    "yaml": "load: strict YAML reading",
    "schema": "schema: schemas/model-spec.schema.json",
    "spec": "semantic: the model IR's rules",
    "stack": "stack: the layer stack against the op profiles",
    "params": "stack: the parameter count against the spec's stated one",
    "roundtrip": "roundtrip: what the file states survives serialising",
    "check": "any pass: modelspec's own failure (exit 2)",
    "profile": "op profiles: a broken profile stops every command (exit 2)",
    "import": "modelspec import",
    "fmt": "modelspec fmt",
    "regen": "modelspec regen",
    "config": "the configuration file (modelspec.toml, [tool.modelspec]): a broken one stops every command (exit 2)",
    "ignore": "inline ignores: # modelspec: ignore[CODE, ...]",
    "gate": "check --changed-since: the rules a repository brings, the changes its configuration leaves out",
}

CODE_LITERAL = re.compile(r"[\"']((?:%s)\.[a-z0-9-]+)[\"']" % "|".join(AREAS))


def render_doc(codes: Dict[str, str]) -> str:
    """The Markdown of docs/problems.md: one table per area, codes sorted."""
    out = ["# Problem codes", "",
           "Every problem modelspec reports carries a stable code, `<area>.<what>`. This page is generated from the",
           "`CODES` tables in the package (`pytest --update-golden` rewrites it); a test fails when a code is",
           "emitted that is not here, or listed here and never emitted.", ""]
    for area, title in AREAS.items():
        rows = sorted((code, text) for code, text in codes.items() if code.split(".")[0] == area)
        if not rows:
            continue
        out += [f"## `{area}.*` — {title}", "", "| code | meaning |", "| --- | --- |"]
        # each row carries an anchor named by its code: a SARIF rule's helpUri points at it
        out += [f"| <a id=\"{code}\"></a>`{code}` | {text.replace('|', chr(92) + '|')} |" for code, text in rows]
        out.append("")
    return "\n".join(out)


def test_docs_problems_md_lists_every_code(request: pytest.FixtureRequest) -> None:
    text = render_doc(dict(all_codes()))
    if request.config.getoption("--update-golden"):
        DOC.write_text(text, encoding="utf-8")
    assert DOC.read_text(encoding="utf-8") == text, "docs/problems.md is stale; run pytest --update-golden"


def test_every_code_has_an_area() -> None:
    assert [code for code in all_codes() if code.split(".")[0] not in AREAS] == []


def test_every_code_literal_in_the_package_is_declared_and_every_declared_code_is_used() -> None:
    used = {match for path in (ROOT / "pipeline").rglob("*.py")
            for match in CODE_LITERAL.findall(path.read_text(encoding="utf-8"))}
    declared = set(all_codes())
    assert (sorted(used - declared), sorted(declared - used)) == ([], [])


def _schema(name: str) -> dict:
    return json.loads((ROOT / "schemas" / name).read_text(encoding="utf-8"))


def test_the_spec_schema_and_the_records_state_the_same_fields_in_the_same_order() -> None:
    schema = _schema("model-spec.schema.json")
    defs = schema["$defs"]
    assert list(schema["properties"]) == list(MODEL_KEYS_ORDERED)
    assert list(defs["vision"]["properties"]) == [f.name for f in fields(VisionSpec)]
    assert list(defs["layerGroup"]["properties"]) == [f.name for f in fields(LayerGroup)]
    assert list(defs["kindActivations"]["properties"]) == [f.name for f in fields(KindActivations)]
    assert list(defs["opCounts"]["properties"]) == list(OpCounts.names())


def test_both_schemas_describe_the_ops_alike() -> None:
    assert _schema("model-spec.schema.json")["$defs"]["opCounts"] == \
        _schema("op-profile.schema.json")["$defs"]["opCounts"]


def _properties_without_description(node: object, where: str = "") -> list:
    """Every property schema under *node* that has no description."""
    missing = []
    if isinstance(node, dict):
        for name, prop in node.get("properties", {}).items():
            if isinstance(prop, dict) and "description" not in prop:
                missing.append(f"{where}/{name}")
        for key, value in node.items():
            missing += _properties_without_description(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            missing += _properties_without_description(value, f"{where}/{index}")
    return missing


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "schemas").glob("*.schema.json")))
def test_every_schema_has_an_id_a_title_and_a_description_on_every_property(name: str) -> None:
    schema = _schema(name)
    assert (schema["$schema"], schema["$id"].startswith("urn:modelspec:schemas:"), bool(schema["title"])) == (
        "https://json-schema.org/draft/2020-12/schema", True, True)
    assert _properties_without_description(schema) == []
