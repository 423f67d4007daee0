"""``regen --check --format json``: one document, valid against schemas/regen-check.schema.json, exact."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from spec_repos import make_repo, run

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "regen-check.schema.json")
                    .read_text(encoding="utf-8"))


def test_regen_check_json_up_to_date_and_out_of_date(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    missing = json.loads(run(root, "regen", "--check", "--format", "json").stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(missing)
    assert (missing["up_to_date"], missing["exit_code"]) == (False, 1)
    assert {problem["code"] for problem in missing["problems"]} == {"regen.missing"}
    assert all(problem["fixed_by_regen"] for problem in missing["problems"])
    assert run(root, "regen").exit_code == 0
    result = run(root, "regen", "--check", "--format", "json")
    document = json.loads(result.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    assert (result.exit_code, document["up_to_date"], document["problems"]) == (0, True, [])
    assert document["artifacts"] == len(list((root / "specs").rglob("*.yaml")))


def test_format_json_is_for_check_only(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    result = run(root, "regen", "--format", "json")
    assert result.exit_code == 2
    assert result.stderr.endswith("Error: --format json is for --check; regen itself reports what it writes as "
                                  "lines\n")
