"""Resource bounds (issue 12, class 5): what one file can cost, and what it can put in a report.

A file may hold at most :data:`MAX_VALUES` keys and values (a 1 MiB file of
one-character list entries is refused at the cap, so its cost stays some
milliseconds); a report shows at most :data:`MAX_PER_CODE` problems of one code
and :data:`MAX_PER_FILE` in all for one file, then one line counting the rest,
in every format; a SARIF run holds at most :data:`MAX_RESULTS` results. Speed
itself is measured by ``bench/bench_hostile.py``, not here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.spec.problems import PASSES, FileResult, Outcome, Problem, RunResult, Severity, all_codes
from reporters_registry import REPORTERS

from pipeline.reporters.sarif import MAX_RESULTS, SarifReporter
from pipeline.reporters.summary import MAX_PER_CODE, MAX_PER_FILE, shown
from pipeline.spec.yaml_source import MAX_VALUES, load_bytes
from tests.spec_repos import make_repo


BASE = "name: x\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n"
#: What BASE and a ``layer_types`` list count before the list's entries: the top mapping, 5 keys and 5 values,
#: the key and the list.
BEFORE_ENTRIES = 13


def test_a_file_of_more_values_than_the_cap_is_refused_where_it_passes_it() -> None:
    entries = MAX_VALUES - BEFORE_ENTRIES + 1  # one entry too many
    doc = load_bytes((BASE + "layer_types: [" + ",".join(["a"] * entries) + "]\n").encode(), "s.yaml")
    assert doc.fatal and doc.data is None
    assert [(p.code, p.line, p.message) for p in doc.problems] == [
        ("yaml.too-many-values", 6, f"more than {MAX_VALUES} keys and values in one file; a spec holds a few hundred "
                                    "(one layer_types entry per layer): check that this is the right file, or state "
                                    "the stack as layers groups")]
    assert doc.problems[0].column == 15 + 2 * (entries - 1)


def test_a_file_of_exactly_the_cap_is_read() -> None:
    entries = MAX_VALUES - BEFORE_ENTRIES
    doc = load_bytes((BASE + "layer_types: [" + ",".join(["a"] * entries) + "]\n").encode(), "s.yaml")
    assert doc.problems == () and len(doc.data["layer_types"]) == entries


def test_the_red_team_s_million_entry_file_is_refused_at_the_cap() -> None:
    text = BASE + "layer_types: [" + ",".join(["a"] * 520_000) + "]\n"
    assert len(text) < 1 << 20
    assert [p.code for p in load_bytes(text.encode(), "s.yaml").problems] == ["yaml.too-many-values"]


# --- what one file can put in a report ---------------------------------------------------------------------

def _run_of(problems) -> RunResult:
    outcomes = tuple((name, Outcome.FAILED) for name in PASSES)
    by_file = {}
    for problem in problems:
        by_file.setdefault(problem.file, []).append(problem)
    return RunResult(tuple(FileResult(file, outcomes, tuple(sorted(found))) for file, found in sorted(by_file.items())))


def _problem(index: int, code: str = "schema.unknown-key", severity: Severity = Severity.ERROR,
             file: str = "specs/a.yaml") -> Problem:
    return Problem(file, index + 1, 1, "schema", code, severity, f"unknown key 'k{index}'", (f"k{index}",))


def test_shown_keeps_twenty_of_one_code_and_counts_the_rest() -> None:
    capped = shown(_run_of([_problem(index) for index in range(150)]))
    problems = capped.problems
    assert len(problems) == MAX_PER_CODE + 1
    more = problems[-1]
    assert (more.code, more.severity, more.line, more.pass_name) == ("check.more-problems", Severity.ERROR,
                                                                      MAX_PER_CODE + 1, "schema")
    assert more.message == ("…and 130 more problems, not shown (130 schema.unknown-key); a report shows at most 20 of "
                            "one code and 100 in all per file: fix these and run again")


def test_shown_keeps_a_hundred_per_file_and_names_the_codes_left_out() -> None:
    codes = [code for code in sorted(all_codes()) if code.startswith("spec.")][:8]
    problems = [_problem(index * len(codes) + offset, code) for index in range(15) for offset, code in enumerate(codes)]
    capped = shown(_run_of(problems))
    assert len(capped.problems) == MAX_PER_FILE + 1
    more = [p for p in capped.problems if p.code == "check.more-problems"]
    assert len(more) == 1 and more[0].message.startswith("…and 20 more problems, not shown (")


def test_shown_keeps_the_verdict_a_hidden_error_fails_the_run() -> None:
    problems = [_problem(index, severity=Severity.WARNING) for index in range(30)]
    problems.append(_problem(30, severity=Severity.ERROR))
    run = _run_of(problems)
    capped = shown(run)
    assert capped.exit_code == run.exit_code == 1
    assert capped.problems[-1].severity is Severity.ERROR


def test_shown_leaves_a_small_report_alone() -> None:
    run = _run_of([_problem(index) for index in range(MAX_PER_CODE)])
    assert shown(run) == run


def test_each_file_is_capped_on_its_own() -> None:
    problems = [_problem(index, file=f"specs/{name}.yaml") for name in "ab" for index in range(25)]
    capped = shown(_run_of(problems))
    assert [len(file.problems) for file in capped.files] == [MAX_PER_CODE + 1, MAX_PER_CODE + 1]


@pytest.fixture(scope="module")
def many_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("bounds") / "repo")
    keys = MAX_VALUES // 2 - 20
    (repo / "specs" / "llama" / "keys.yaml").write_text(
        BASE.replace("name: x", "name: keys") + "intermediate_size: 128\narch: llama\n"
        + "".join(f"k{i}: 1\n" for i in range(keys)), encoding="utf-8")
    return repo


@pytest.mark.parametrize("fmt", sorted(REPORTERS))
def test_every_format_shows_the_cap_and_the_count(many_keys: Path, fmt: str) -> None:
    result = CliRunner().invoke(main, ["check", "--root", str(many_keys), "--no-cache", "--format", fmt,
                                       str(many_keys / "specs/llama/keys.yaml")], catch_exceptions=False)
    assert result.exit_code == 1
    hidden = MAX_VALUES // 2 - 20 - MAX_PER_CODE
    assert f"…and {hidden} more problems, not shown ({hidden} schema.unknown-key)" in result.stdout
    assert len(result.stdout) < 40_000
    assert len(set(re.findall(r"unknown model spec key 'k\d+'", result.stdout))) == MAX_PER_CODE  # JUnit says each twice


def test_sarif_holds_at_most_the_results_code_scanning_takes() -> None:
    problems = [_problem(index % 100, file=f"specs/f{index // 100:04d}.yaml") for index in range(MAX_RESULTS + 11)]
    log = json.loads(SarifReporter().render(_run_of(problems), all_codes()))
    results = log["runs"][0]["results"]
    assert len(results) == MAX_RESULTS
    assert results[-1]["ruleId"] == "check.more-problems"
    assert results[-1]["message"]["text"] == (
        "…and 12 more problems, not shown (12 schema.unknown-key); GitHub code scanning takes at most 25000 results "
        "per run: fix these and run again")
