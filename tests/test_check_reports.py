"""Every report format of ``modelspec check`` on a small fixed catalogue with known problems, golden.

``tests/data/report_catalogue`` holds four specs: one clean, one with a type
error (its later passes skipped), one with two round-trip warnings, one with a
YAML 1.1 boolean and a second document. The command's output in each format is
compared byte for byte with ``tests/golden/check.<format>`` (refresh with
``pytest --update-golden`` and review the diff); the SARIF log is validated
against the official SARIF 2.1.0 schema and the JSON report against
``schemas/report.schema.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import jsonschema
import pytest
from click.testing import CliRunner

from pipeline.cli import main

ROOT = Path(__file__).resolve().parent.parent
CATALOGUE = Path(__file__).parent / "data" / "report_catalogue"
SUFFIXES = {"text": "txt", "json": "json", "junit": "xml", "sarif": "sarif", "github": "github.txt",
            "markdown": "md"}


def check(fmt: str, *args: str) -> tuple[int, str]:
    """``modelspec check --root CATALOGUE --format FMT ARGS``: exit code and stdout.

    Paths are relative to this checkout's top (the git work tree), whose ``file:`` URI in SARIF's
    ``originalUriBaseIds`` is written ``file:///checkout/`` so the golden file is the same in every clone.
    """
    result = CliRunner().invoke(main, ["check", "--root", str(CATALOGUE), "--format", fmt, *args],
                                catch_exceptions=False)
    return result.exit_code, result.stdout.replace(ROOT.resolve().as_uri() + "/", "file:///checkout/")


@pytest.mark.parametrize("fmt", sorted(SUFFIXES))
def test_each_format_on_the_fixed_catalogue(fmt: str, golden: Callable[[str, str], None]) -> None:
    code, out = check(fmt)
    assert code == 1
    golden(f"check.{SUFFIXES[fmt]}", out)


def test_strict_turns_the_warnings_into_failures(golden: Callable[[str, str], None]) -> None:
    code, out = check("text", "--strict", str(CATALOGUE / "specs" / "qwen" / "qwen-tiny-dense.yaml"))
    assert code == 1
    golden("check-strict.txt", out)


def test_the_sarif_log_is_valid_sarif_2_1_0() -> None:
    schema = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(schema).validate(json.loads(check("sarif")[1]))


def test_the_json_report_is_valid_against_its_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(json.loads(check("json")[1]))


@pytest.mark.parametrize("strict", [False, True])
def test_junit_counts_one_failure_per_failing_problem(strict: bool) -> None:
    """Parsed by junitparser, as a CI test view reads it: one failure per error (and per warning under --strict)."""
    from junitparser import Failure, JUnitXml

    args = ["--strict"] if strict else []
    report = json.loads(check("json", *args)[1])
    failing = [problem for file in report["files"] for problem in file["problems"]
               if problem["severity"] == "error" or strict]
    xml = JUnitXml.fromstring(check("junit", *args)[1])
    failures = [result for suite in xml for case in suite for result in case.result if isinstance(result, Failure)]
    assert (xml.failures, len(failures)) == (len(failing), len(failing))
    assert len(failing) == (5 if strict else 3)
    assert all(failure.text and failure.message for failure in failures)
