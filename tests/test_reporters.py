"""The report formats of ``modelspec check``: golden output, schema validity, and each format's edge rules.

``RUN`` is the fixed run every golden file renders: two files, three errors and
two warnings, a schema failure that skips the later passes, and a warning whose
message holds ``%``, ``:``, ``,``, ``|`` and a line break. Refresh the golden
files with ``pytest --update-golden`` and review the diff.

``tests/data/sarif-schema-2.1.0.json`` is the OASIS SARIF 2.1.0 schema with
errata 01 (``Schemata/sarif-schema-2.1.0.json`` in the oasis-tcs/sarif-spec
repository, 112 768 bytes); its digest is pinned below so an edit shows.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import jsonschema
import pytest

from pipeline.spec.problems import FileResult, Outcome, Problem, RunResult, Severity
from reporters_registry import REPORTERS

from pipeline.reporters.github import GithubReporter, annotation, escape_data, escape_property
from pipeline.reporters.json_ import JsonReporter
from pipeline.reporters.junit import JunitReporter
from pipeline.reporters.markdown import MarkdownReporter
from pipeline.reporters.sarif import SarifReporter, artifact_location
from pipeline.reporters.summary import help_text, summary_sentence
from pipeline.reporters.text import TextReporter


ROOT = Path(__file__).parent.parent
SARIF_SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
SARIF_SCHEMA_SHA256 = "ddddcccbf95c7c50c037b5b07eff4140556278ca574ff374db46786b5fce7949"
REPORT_SCHEMA_PATH = ROOT / "schemas" / "report.schema.json"

DENSE = "specs/dense/tiny-dense.yaml"
HYBRID = "specs/hybrid/qwen3-next.yaml"
ALL_PASSED = tuple((name, Outcome.PASSED) for name in ("load", "schema", "semantic", "stack", "roundtrip"))

TRICKY_MESSAGE = ("layer_types[2]: 'mamba|v2' is not a kind of profile qwen3_next: 100% of its ops are unknown, "
                  "so it is costed as full_attention\nknown kinds: full_attention, linear_attention")

RUN = RunResult(files=(
    FileResult(DENSE, (("load", Outcome.PASSED), ("schema", Outcome.FAILED), ("semantic", Outcome.SKIPPED),
                       ("stack", Outcome.SKIPPED), ("roundtrip", Outcome.SKIPPED)), (
        Problem(DENSE, 3, 14, "schema", "schema.minimum", Severity.ERROR,
                "hidden_size must be at least 1, not -1", ("hidden_size",)),
        Problem(DENSE, 4, 20, "schema", "schema.minimum", Severity.ERROR,
                "num_hidden_layers must be at least 1, not 0", ("num_hidden_layers",)),
    )),
    FileResult(HYBRID, (("load", Outcome.PASSED), ("schema", Outcome.PASSED), ("semantic", Outcome.PASSED),
                        ("stack", Outcome.PASSED), ("roundtrip", Outcome.FAILED)), (
        Problem(HYBRID, 9, 5, "stack", "stack.unknown-layer-type", Severity.WARNING, TRICKY_MESSAGE,
                ("layer_types", 2)),
        Problem(HYBRID, 12, 1, "roundtrip", "roundtrip.explicit-null", Severity.WARNING,
                "rope_scaling: null is the same as leaving the key out; delete the line", ("rope_scaling",)),
        Problem(HYBRID, 14, 14, "roundtrip", "roundtrip.lost-value", Severity.ERROR,
                "torch_dtype 'torch.bfloat16' is written back as `bfloat16`; write bfloat16", ("torch_dtype",)),
    )),
))
STRICT_RUN = dataclasses.replace(RUN, strict=True)
CLEAN_RUN = RunResult(files=(FileResult(DENSE, ALL_PASSED, ()), FileResult(HYBRID, ALL_PASSED, ())))
EMPTY_RUN = RunResult(files=())
WARNINGS_ONLY_RUN = RunResult(files=(FileResult(HYBRID, ALL_PASSED, RUN.files[1].problems[:2]),))

CODES = {
    "schema.minimum": "A number is below the schema's minimum.",
    "stack.unknown-layer-type": "A layer_types name is not a kind of the family's op profile.",
    "roundtrip.explicit-null": "An explicit null, which is the same as leaving the key out.",
    "roundtrip.lost-value": "A value the file states does not survive writing the spec back.",
    "yaml.duplicate-key": "A key appears twice in one mapping.",
}


def make_problem(line: int, severity: Severity, message: str = "m", file: str = DENSE,
                 code: str = "schema.minimum") -> Problem:
    """A problem in the schema pass at column 1 of *line*."""
    return Problem(file, line, 1, "schema", code, severity, message, ("key",))


def run_of(*problems: Problem, strict: bool = False) -> RunResult:
    """A one-file run holding *problems* (sorted), its schema pass failed if any is an error."""
    failed = any(problem.severity is Severity.ERROR for problem in problems)
    outcomes = tuple((name, Outcome.FAILED if failed and name == "schema" else outcome)
                     for name, outcome in ALL_PASSED)
    return RunResult(files=(FileResult(DENSE, outcomes, tuple(sorted(problems))),), strict=strict)


# --- every format ---------------------------------------------------------------------------------------------

GOLDEN_CASES = [
    ("report.txt", TextReporter()),
    ("report-quiet.txt", TextReporter(quiet=True)),
    ("report-color.txt", TextReporter(color=True)),
    ("report.json", JsonReporter()),
    ("report.junit.xml", JunitReporter()),
    ("report.sarif", SarifReporter()),
    ("report.github.txt", GithubReporter()),
    ("report.md", MarkdownReporter()),
]


@pytest.mark.parametrize(("name", "reporter"), GOLDEN_CASES, ids=[name for name, _ in GOLDEN_CASES])
def test_report_matches_its_golden_file(golden, name, reporter):
    golden(name, reporter.render(RUN, CODES))


def test_registry_names_every_format():
    assert {name: type(reporter) for name, reporter in REPORTERS.items()} == {
        "text": TextReporter, "json": JsonReporter, "junit": JunitReporter,
        "sarif": SarifReporter, "github": GithubReporter, "markdown": MarkdownReporter,
    }


@pytest.mark.parametrize("name", sorted(REPORTERS))
@pytest.mark.parametrize("run", [RUN, STRICT_RUN, CLEAN_RUN, EMPTY_RUN, WARNINGS_ONLY_RUN])
def test_every_format_is_deterministic_and_ends_in_a_newline(name, run):
    first = REPORTERS[name].render(run, CODES)
    assert first == REPORTERS[name].render(run, CODES)
    assert first.endswith("\n")


@pytest.mark.parametrize("name", ["json", "sarif"])
def test_a_code_missing_from_the_codes_table_is_refused_by_name(name):
    with pytest.raises(ValueError) as raised:
        REPORTERS[name].render(RUN, {"schema.minimum": "x"})
    assert str(raised.value) == ("problem code 'roundtrip.explicit-null' has no help text in the codes table; "
                                 "declare it in the CODES table of the module that emits it")


def test_help_text_reads_the_codes_table():
    assert help_text(CODES, "yaml.duplicate-key") == "A key appears twice in one mapping."


# --- text -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("run", "sentence"), [
    (RUN, "3 errors, 2 warnings in 2 files (0 files clean)"),
    (STRICT_RUN, "3 errors, 2 warnings in 2 files (0 files clean); --strict: warnings fail the run"),
    (CLEAN_RUN, "2 files checked, no problems"),
    (EMPTY_RUN, "0 files checked, no problems"),
    (RunResult(files=(FileResult(DENSE, ALL_PASSED, ()),)), "1 file checked, no problems"),
    (RunResult(files=(RUN.files[0], FileResult(HYBRID, ALL_PASSED, ()))), "2 errors, 0 warnings in 1 file (1 file clean)"),
    (run_of(make_problem(2, Severity.WARNING), strict=True), "0 errors, 1 warning in 1 file (0 files clean); --strict: warnings fail the run"),
    (run_of(make_problem(2, Severity.ERROR), make_problem(3, Severity.WARNING)), "1 error, 1 warning in 1 file (0 files clean)"),
])
def test_summary_sentence(run, sentence):
    assert summary_sentence(run) == sentence


def test_text_indents_the_further_lines_of_a_message():
    text = TextReporter().render(run_of(make_problem(7, Severity.ERROR, "first\nsecond\r\nthird")), CODES)
    assert text == ("specs/dense/tiny-dense.yaml:7:1: error [schema.minimum] first\n"
                    "    second\n"
                    "    third\n"
                    "1 error, 0 warnings in 1 file (0 files clean)\n")


@pytest.mark.parametrize(("run", "expected"), [
    (CLEAN_RUN, ""),
    (EMPTY_RUN, ""),
    (WARNINGS_ONLY_RUN, ""),
    (run_of(make_problem(2, Severity.WARNING), make_problem(5, Severity.ERROR, "bad")),
     "specs/dense/tiny-dense.yaml:5:1: error [schema.minimum] bad\n"
     "1 error, 1 warning in 1 file (0 files clean)\n"),
    (run_of(make_problem(2, Severity.WARNING, "meh"), strict=True),
     "specs/dense/tiny-dense.yaml:2:1: warning [schema.minimum] meh\n"
     "0 errors, 1 warning in 1 file (0 files clean); --strict: warnings fail the run\n"),
])
def test_quiet_text_prints_only_what_fails_the_run(run, expected):
    assert TextReporter(quiet=True).render(run, CODES) == expected


def test_plain_text_has_no_escape_codes():
    assert "\x1b" not in TextReporter().render(RUN, CODES)


@pytest.mark.parametrize(("severity", "styled"), [
    (Severity.ERROR, "\x1b[31m\x1b[1merror\x1b[0m"),
    (Severity.WARNING, "\x1b[33mwarning\x1b[0m"),
])
def test_colour_marks_only_the_severity_word(severity, styled):
    line = TextReporter(color=True).render(run_of(make_problem(2, severity, "x")), CODES).splitlines()[0]
    assert line == f"specs/dense/tiny-dense.yaml:2:1: {styled} [schema.minimum] x"


# --- json -----------------------------------------------------------------------------------------------------

def report_validator() -> jsonschema.Draft202012Validator:
    """A validator for ``schemas/report.schema.json``, after checking the schema itself."""
    schema = json.loads(REPORT_SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


@pytest.mark.parametrize("run", [RUN, STRICT_RUN, CLEAN_RUN, EMPTY_RUN, WARNINGS_ONLY_RUN])
def test_json_report_is_valid_against_its_schema(run):
    report_validator().validate(json.loads(JsonReporter().render(run, CODES)))


@pytest.mark.parametrize(("change", "error"), [
    (lambda doc: doc.update(exit_code=3), "3 is not one of [0, 1, 2]"),
    (lambda doc: doc["files"][0]["passes"].update(lint="passed"), "'lint' is not one of ['load', 'schema', 'semantic', 'stack', 'roundtrip']"),
    (lambda doc: doc["files"][0]["problems"][0].update(line=0), "0 is less than the minimum of 1"),
    (lambda doc: doc["files"][0]["problems"][0].pop("pointer"), "'pointer' is a required property"),
])
def test_json_schema_refuses_a_wrong_report(change, error):
    document = json.loads(JsonReporter().render(RUN, CODES))
    change(document)
    assert [e.message for e in report_validator().iter_errors(document)] == [error]


def _schemas_with_properties(schema: object):
    """Yield every ``properties`` mapping anywhere in *schema*."""
    if isinstance(schema, dict):
        if isinstance(schema.get("properties"), dict):
            yield schema["properties"]
        for value in schema.values():
            yield from _schemas_with_properties(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _schemas_with_properties(value)


def test_report_schema_describes_every_property():
    schema = json.loads(REPORT_SCHEMA_PATH.read_text(encoding="utf-8"))
    assert (schema["$schema"], schema["$id"], schema["title"]) == (
        "https://json-schema.org/draft/2020-12/schema", "urn:modelspec:schemas:report", "modelspec check report")
    undescribed = [name for properties in _schemas_with_properties(schema)
                   for name, subschema in properties.items() if "description" not in subschema]
    assert undescribed == []


def test_json_report_states_the_verdict():
    document = json.loads(JsonReporter().render(STRICT_RUN, CODES))
    assert (document["strict"], document["exit_code"], document["summary"]) == (
        True, 1, {"files": 2, "clean_files": 0, "errors": 3, "warnings": 2, "failing": 5})
    assert [p["failing"] for f in document["files"] for p in f["problems"]] == [True] * 5


def test_json_report_lists_only_the_codes_that_occur():
    document = json.loads(JsonReporter().render(RUN, CODES))
    assert list(document["codes"]) == ["roundtrip.explicit-null", "roundtrip.lost-value", "schema.minimum",
                                       "stack.unknown-layer-type"]


# --- junit ----------------------------------------------------------------------------------------------------

def junit_cases(run: RunResult) -> list[tuple[str, str, str, str]]:
    """Each testcase as (suite, case, result, text): result is failure, skipped, passed, or passed+out."""
    root = ElementTree.fromstring(JunitReporter().render(run, CODES).encode("utf-8"))
    cases = []
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            failure, skipped, out = case.find("failure"), case.find("skipped"), case.find("system-out")
            result = "failure" if failure is not None else "skipped" if skipped is not None else "passed"
            text = failure.text if failure is not None else out.text if out is not None else ""
            cases.append((suite.get("name"), case.get("name"), result, text))
    return cases


def test_junit_has_a_suite_per_file_and_a_case_per_pass_or_failing_problem():
    warning_line, null_line = (
        f"{HYBRID}:9:5: warning [stack.unknown-layer-type] {TRICKY_MESSAGE.replace(chr(10), chr(10) + '    ')}",
        f"{HYBRID}:12:1: warning [roundtrip.explicit-null] rope_scaling: null is the same as leaving the key out; delete the line")
    assert junit_cases(RUN) == [
        (DENSE, "load", "passed", ""),
        (DENSE, "schema [schema.minimum] 3:14", "failure",
         f"{DENSE}:3:14: error [schema.minimum] hidden_size must be at least 1, not -1"),
        (DENSE, "schema [schema.minimum] 4:20", "failure",
         f"{DENSE}:4:20: error [schema.minimum] num_hidden_layers must be at least 1, not 0"),
        (DENSE, "semantic", "skipped", ""),
        (DENSE, "stack", "skipped", ""),
        (DENSE, "roundtrip", "skipped", ""),
        (HYBRID, "load", "passed", ""),
        (HYBRID, "schema", "passed", ""),
        (HYBRID, "semantic", "passed", ""),
        (HYBRID, "stack", "passed", warning_line),
        (HYBRID, "roundtrip [roundtrip.lost-value] 14:14", "failure",
         f"{HYBRID}:14:14: error [roundtrip.lost-value] torch_dtype 'torch.bfloat16' is written back as `bfloat16`; "
         "write bfloat16"),
    ]
    root = ElementTree.fromstring(JunitReporter().render(RUN, CODES).encode("utf-8"))
    hybrid_roundtrip = root.findall("testsuite")[1].findall("testcase")[4]
    assert hybrid_roundtrip.get("name") == "roundtrip [roundtrip.lost-value] 14:14"
    assert hybrid_roundtrip.find("system-out").text == null_line


def test_junit_fails_a_pass_on_warnings_only_under_strict():
    lenient = [(case, result) for _, case, result, _ in junit_cases(WARNINGS_ONLY_RUN)]
    strict = [(case, result) for _, case, result, _ in junit_cases(dataclasses.replace(WARNINGS_ONLY_RUN, strict=True))]
    assert lenient == [("load", "passed"), ("schema", "passed"), ("semantic", "passed"), ("stack", "passed"),
                       ("roundtrip", "passed")]
    assert [(case.split()[0], result) for case, result in strict] == [
        ("load", "passed"), ("schema", "passed"), ("semantic", "passed"), ("stack", "failure"),
        ("roundtrip", "failure")]


@pytest.mark.parametrize(("run", "counts"), [
    (RUN, {"tests": "11", "failures": "3", "errors": "0", "skipped": "3"}),
    (STRICT_RUN, {"tests": "12", "failures": "5", "errors": "0", "skipped": "3"}),
    (CLEAN_RUN, {"tests": "10", "failures": "0", "errors": "0", "skipped": "0"}),
    (EMPTY_RUN, {"tests": "0", "failures": "0", "errors": "0", "skipped": "0"}),
])
def test_junit_root_counts_fail_exactly_when_the_run_fails(run, counts):
    root = ElementTree.fromstring(JunitReporter().render(run, CODES).encode("utf-8"))
    assert {key: root.get(key) for key in counts} == counts
    assert (root.get("failures") != "0") == (run.exit_code == 1)


def test_junit_keeps_a_problem_whose_pass_has_no_outcome():
    stray = Problem(DENSE, 1, 1, "lint", "schema.minimum", Severity.ERROR, "stray")
    run = RunResult(files=(FileResult(DENSE, ALL_PASSED, (stray,)),))
    assert junit_cases(run)[-1] == (DENSE, "lint [schema.minimum] 1:1", "failure",
                                    f"{DENSE}:1:1: error [schema.minimum] stray")


# --- sarif ----------------------------------------------------------------------------------------------------

def sarif_validator() -> jsonschema.Draft4Validator:
    """A validator for the vendored official SARIF 2.1.0 schema."""
    schema = json.loads(SARIF_SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


def test_vendored_sarif_schema_is_the_official_file():
    assert hashlib.sha256(SARIF_SCHEMA_PATH.read_bytes()).hexdigest() == SARIF_SCHEMA_SHA256


ODD_PATHS_RUN = RunResult(files=tuple(
    FileResult(file, ALL_PASSED, (make_problem(1, Severity.WARNING, file=file),))
    for file in ("/abs/specs/a.yaml", "./specs/my model.yaml", "specs/a,b:c.yaml")))


@pytest.mark.parametrize("run", [RUN, STRICT_RUN, CLEAN_RUN, EMPTY_RUN, WARNINGS_ONLY_RUN, ODD_PATHS_RUN])
def test_sarif_log_is_valid_against_the_official_schema(run):
    sarif_validator().validate(json.loads(SarifReporter().render(run, CODES)))


def test_sarif_schema_refuses_a_wrong_level():
    log = json.loads(SarifReporter().render(RUN, CODES))
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert [e.message for e in sarif_validator().iter_errors(log)] == [
        "'fatal' is not one of ['none', 'note', 'warning', 'error']"]


@pytest.mark.parametrize(("run", "invocation"), [
    (RUN, {"executionSuccessful": True, "exitCode": 1, "exitCodeDescription": "problems fail the run"}),
    (WARNINGS_ONLY_RUN, {"executionSuccessful": True, "exitCode": 0, "exitCodeDescription": "no problem fails the run"}),
    (dataclasses.replace(WARNINGS_ONLY_RUN, strict=True),
     {"executionSuccessful": True, "exitCode": 1, "exitCodeDescription": "problems fail the run"}),
    (CLEAN_RUN, {"executionSuccessful": True, "exitCode": 0, "exitCodeDescription": "no problem fails the run"}),
])
def test_sarif_invocation_states_the_verdict(run, invocation):
    assert json.loads(SarifReporter().render(run, CODES))["runs"][0]["invocations"] == [invocation]


def test_sarif_rules_are_the_codes_that_occur_and_results_index_them():
    sarif_run = json.loads(SarifReporter().render(RUN, CODES))["runs"][0]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [(r["id"], r["defaultConfiguration"]["level"], r["shortDescription"]["text"]) for r in rules] == [
        ("roundtrip.explicit-null", "warning", CODES["roundtrip.explicit-null"]),
        ("roundtrip.lost-value", "error", CODES["roundtrip.lost-value"]),
        ("schema.minimum", "error", CODES["schema.minimum"]),
        ("stack.unknown-layer-type", "warning", CODES["stack.unknown-layer-type"]),
    ]
    assert [(r["ruleId"], rules[r["ruleIndex"]]["id"]) for r in sarif_run["results"]] == [
        (r["ruleId"], r["ruleId"]) for r in sarif_run["results"]]


@pytest.mark.parametrize(("file", "location"), [
    ("specs/dense/a.yaml", {"uri": "specs/dense/a.yaml", "uriBaseId": "%SRCROOT%"}),
    ("./specs/my model.yaml", {"uri": "specs/my%20model.yaml", "uriBaseId": "%SRCROOT%"}),
    ("specs/a%b#c.yaml", {"uri": "specs/a%25b%23c.yaml", "uriBaseId": "%SRCROOT%"}),
    ("/abs/specs/a.yaml", {"uri": "file:///abs/specs/a.yaml"}),
])
def test_sarif_artifact_location(file, location):
    assert artifact_location(file) == location


def test_sarif_result_carries_the_json_pointer():
    sarif_result = json.loads(SarifReporter().render(RUN, CODES))["runs"][0]["results"][2]
    assert sarif_result["locations"][0]["logicalLocations"] == [{"name": "2", "fullyQualifiedName": "/layer_types/2"}]
    assert sarif_result["properties"] == {"pass": "stack", "pointer": "/layer_types/2", "failing": False}


def test_sarif_result_for_the_whole_file_has_no_logical_location():
    problem = Problem(DENSE, 1, 1, "load", "schema.minimum", Severity.ERROR, "empty file")
    sarif_result = json.loads(SarifReporter().render(run_of(problem), CODES))["runs"][0]["results"][0]
    assert "logicalLocations" not in sarif_result["locations"][0]
    assert sarif_result["properties"]["pointer"] == ""


# --- github ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "data", "prop"), [
    ("plain", "plain", "plain"),
    ("100%", "100%25", "100%25"),
    ("a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"),
    ("a:b,c", "a:b,c", "a%3Ab%2Cc"),
    ("%0A", "%250A", "%250A"),
    ("::error::x", "::error::x", "%3A%3Aerror%3A%3Ax"),
])
def test_github_escaping(text, data, prop):
    assert (escape_data(text), escape_property(text)) == (data, prop)


def test_github_annotation_escapes_properties_and_message():
    problem = Problem("specs/a,b:c.yaml", 9, 5, "stack", "stack.unknown-layer-type", Severity.WARNING, TRICKY_MESSAGE)
    assert annotation(problem) == (
        "::warning file=specs/a%2Cb%3Ac.yaml,line=9,col=5,title=[stack.unknown-layer-type]::"
        "layer_types[2]: 'mamba|v2' is not a kind of profile qwen3_next: 100%25 of its ops are unknown, "
        "so it is costed as full_attention%0Aknown kinds: full_attention, linear_attention")


def github_lines(errors: int, warnings: int, strict: bool = False) -> list[str]:
    """The github report of a run with *errors* errors then *warnings* warnings, on lines 1, 2, ..."""
    problems = [make_problem(line, Severity.ERROR, f"e{line}") for line in range(1, errors + 1)]
    problems += [make_problem(errors + line, Severity.WARNING, f"w{line}") for line in range(1, warnings + 1)]
    return GithubReporter().render(run_of(*problems, strict=strict), CODES).splitlines()


@pytest.mark.parametrize(("errors", "warnings", "strict", "annotated", "summary"), [
    (10, 10, False, (10, 10), None),
    (11, 0, False, (9, 0), "::error::2 more problems (2 errors, 0 warnings) not annotated: "),
    (3, 11, False, (3, 10), "::error::1 more problem (0 errors, 1 warning) not annotated: "),
    (0, 11, False, (0, 9), "::warning::2 more problems (0 errors, 2 warnings) not annotated: "),
    (0, 11, True, (0, 10), "::error::1 more problem (0 errors, 1 warning) not annotated: "),
    (25, 25, False, (9, 10), "::error::31 more problems (16 errors, 15 warnings) not annotated: "),
])
def test_github_caps_annotations_and_says_what_it_left_out(errors, warnings, strict, annotated, summary):
    lines = github_lines(errors, warnings, strict)
    counted = (sum(line.startswith("::error file=") for line in lines),
               sum(line.startswith("::warning file=") for line in lines))
    summaries = [line for line in lines if line.startswith(("::error::", "::warning::"))]
    assert counted == annotated
    assert [line[:len(summary)] for line in summaries] == ([summary] if summary else [])
    per_severity = {"error": 0, "warning": 0}
    for line in lines:
        if line.startswith(("::error", "::warning")):
            per_severity[line[2:].split(" ", 1)[0].split(":", 1)[0]] += 1
    assert max(per_severity.values()) <= 10


def test_github_left_over_problems_are_listed_inert_in_the_log():
    lines = github_lines(12, 0)
    token = "modelspec-" + hashlib.sha256(
        f"{DENSE}:10:1: error [schema.minimum] e10\n"
        f"{DENSE}:11:1: error [schema.minimum] e11\n"
        f"{DENSE}:12:1: error [schema.minimum] e12".encode()).hexdigest()[:32]
    assert lines[9:] == [
        "::error::3 more problems (3 errors, 0 warnings) not annotated: GitHub shows only 10 annotations of each "
        "severity per step; they are listed in this step's log",
        f"::stop-commands::{token}",
        f"{DENSE}:10:1: error [schema.minimum] e10",
        f"{DENSE}:11:1: error [schema.minimum] e11",
        f"{DENSE}:12:1: error [schema.minimum] e12",
        f"::{token}::",
        "12 errors, 0 warnings in 1 file (0 files clean)",
    ]
    assert lines[8] == f"::error file={DENSE},line=9,col=1,title=[schema.minimum]::e9"


def test_github_a_left_over_message_cannot_run_a_command():
    problems = [make_problem(line, Severity.ERROR) for line in range(1, 11)]
    problems.append(make_problem(11, Severity.ERROR, "evil\n::add-mask::secret"))
    lines = GithubReporter().render(run_of(*problems), CODES).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("::stop-commands::"))
    end = lines.index(f"::{lines[start].removeprefix('::stop-commands::')}::")
    # Defused where it stands (a line never starts a command), and inside the inert block besides.
    assert [i for i, line in enumerate(lines) if ":add-mask::" in line] == [end - 1]
    assert lines[end - 1] == "    \\x3a:add-mask::secret"
    assert start < end - 1


def test_github_clean_run_prints_only_the_summary():
    assert GithubReporter().render(CLEAN_RUN, CODES) == "2 files checked, no problems\n"


def test_github_refuses_a_cap_below_one():
    with pytest.raises(ValueError) as raised:
        GithubReporter(annotations_per_severity=0)
    assert str(raised.value) == "annotations_per_severity must be at least 1, not 0"


# --- markdown -------------------------------------------------------------------------------------------------

def test_markdown_caps_the_table():
    page = MarkdownReporter(max_rows=2).render(RUN, CODES)
    rows = [line for line in page.splitlines() if line.startswith("| specs/")]
    assert [row.split(" | ")[0] for row in rows] == [f"| {DENSE}:3:14", f"| {DENSE}:4:20"]
    assert page.endswith("\n\n…and 3 more problems, not shown; `modelspec check` lists them all.\n")


@pytest.mark.parametrize(("run", "page"), [
    (CLEAN_RUN, "### ✅ modelspec check passed\n\nAll clean: 2 files checked, no problems.\n"),
    (EMPTY_RUN, "### ✅ modelspec check passed\n\nAll clean: 0 files checked, no problems.\n"),
])
def test_markdown_clean_run(run, page):
    assert MarkdownReporter().render(run, CODES) == page


@pytest.mark.parametrize(("run", "headline"), [
    (RUN, "### ❌ modelspec check failed"),
    (WARNINGS_ONLY_RUN, "### ✅ modelspec check passed"),
    (dataclasses.replace(WARNINGS_ONLY_RUN, strict=True), "### ❌ modelspec check failed"),
])
def test_markdown_headline_marks_the_verdict(run, headline):
    assert MarkdownReporter().render(run, CODES).splitlines()[0] == headline


def test_markdown_refuses_a_table_without_rows():
    with pytest.raises(ValueError) as raised:
        MarkdownReporter(max_rows=0)
    assert str(raised.value) == "max_rows must be at least 1, not 0"


def test_sarif_rules_help_says_more_and_links_only_a_stated_address(monkeypatch) -> None:
    import pipeline.reporters.sarif as sarif

    rules = sarif.sarif_log(RUN, CODES)["runs"][0]["tool"]["driver"]["rules"]
    assert all("helpUri" not in rule for rule in rules)  # the metadata states no address: none is made up
    assert all(len(rule["help"]["text"]) > len(rule["shortDescription"]["text"]) + 100 for rule in rules)
    first = rules[0]
    assert first["help"]["text"].startswith(first["shortDescription"]["text"] + "\n\nEvery modelspec code is listed")
    assert f"# modelspec: ignore[{first['id']}]" in first["help"]["text"]
    assert "informationUri" not in sarif.sarif_log(RUN, CODES)["runs"][0]["tool"]["driver"]
    monkeypatch.setattr(sarif, "docs_base", lambda: "https://github.com/acme/modelspec")
    rules = sarif.sarif_log(RUN, CODES)["runs"][0]["tool"]["driver"]["rules"]
    assert [rule["helpUri"] for rule in rules] == [
        f"https://github.com/acme/modelspec/blob/main/docs/problems.md#{rule['id']}" for rule in rules]
    docs = (Path(__file__).resolve().parents[1] / "docs" / "problems.md").read_text(encoding="utf-8")
    from pipeline.spec.problems import all_codes

    assert all(f'<a id="{code}"></a>' in docs for code in all_codes())  # every real code has its anchor
    sarif_validator().validate(sarif.sarif_log(RUN, CODES))
