"""``modelspec rule CODE``'s examples (:mod:`pipeline.check.examples`): one per code, and each live one true.

A check pass's example is a spec that ``rule`` checks when it runs; these
tests hold every such example to the code it illustrates (or, where an
earlier pass reports the input first, to that pass's code, which must come
before it), so an example whose input stops producing its code fails here by
name instead of showing an empty report.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from pipeline.check.examples import BASE, EXAMPLE_FILE, example_report, examples
from pipeline.check.runner import check_bytes
from pipeline.cli import main
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.spec.problems import PASSES, all_codes

CODES = all_codes()
PROFILES = load_op_profiles()
LIVE = sorted(code for code, example in examples().items() if example.text is not None)


def test_every_code_has_an_example_and_every_example_a_code() -> None:
    assert sorted(examples()) == sorted(CODES)


def test_the_split_between_live_examples_and_examples_in_words() -> None:
    described = [code for code, example in examples().items() if example.about is not None]
    assert (len(LIVE), len(described)) == (88, 59)
    assert {code.split(".")[0] for code in described} >= {"import", "profile", "regen", "config", "gate", "fmt"}


def test_the_base_spec_checks_clean() -> None:
    checked, _ = check_bytes(BASE.encode(), EXAMPLE_FILE, PROFILES)
    assert checked.result.problems == ()


@pytest.mark.parametrize("code", LIVE)
def test_a_live_example_reports_its_code(code: str) -> None:
    example = examples()[code]
    problems = example_report(example, PROFILES, CODES)
    assert problems, f"{code}: its example reports no {example.reported_as}"
    assert {problem.code for problem in problems} == {example.reported_as}
    assert all(problem.file == EXAMPLE_FILE for problem in problems)


def test_an_example_reported_as_another_code_names_an_earlier_pass() -> None:
    masked = {code: example.reported_as for code, example in examples().items()
              if example.text is not None and example.reported_as != code}
    assert sorted(masked) == [
        "spec.activations-kind", "spec.activations-pair", "spec.dtype", "spec.import-gaps-empty", "spec.layer-count",
        "spec.layer-kind", "spec.negative", "spec.not-a-list", "spec.not-a-mapping", "spec.not-boolean",
        "spec.not-finite", "spec.not-number", "spec.not-positive", "spec.not-string", "spec.op-unknown",
        "spec.required", "spec.unknown-key"]
    for code, reported in masked.items():
        problems = example_report(examples()[code], PROFILES, CODES)
        assert PASSES.index(problems[0].pass_name) < PASSES.index("semantic") or reported.startswith("yaml."), code


def test_rule_shows_a_whole_file_example_and_a_masked_one() -> None:
    empty = CliRunner().invoke(main, ["rule", "yaml.empty"]).stdout.splitlines()
    assert empty[4:8] == [
        "  Example:  modelspec check example.yaml, this file:",
        "              1 | # a spec that states nothing",
        "            reports:",
        "              example.yaml:1:1: error [yaml.empty] empty file; a spec is a mapping of fields, one "
        "`key: value` per line"]
    dtype = CliRunner().invoke(main, ["rule", "spec.dtype"]).stdout.splitlines()
    assert dtype[6:9] == [
        "              13 | torch_dtype: float8",
        "            reports it as schema.enum (that pass runs before the one that reports spec.dtype):",
        dtype[8]]
    assert dtype[8].startswith("              example.yaml:13:14: error [schema.enum] torch_dtype must be one of ")


def test_rule_shows_a_left_out_line_and_escapes_a_tab_and_a_control_character() -> None:
    required = CliRunner().invoke(main, ["rule", "schema.required"]).stdout.splitlines()
    assert required[4:8] == [
        "  Example:  modelspec check example.yaml, a two-layer Llama spec, checked clean, changed:",
        "              - | vocab_size: 100   (line left out)",
        "            reports:",
        "              example.yaml:1:1: error [schema.required] vocab_size is required and not stated"]
    tab = CliRunner().invoke(main, ["rule", "yaml.tab"]).stdout.splitlines()
    assert tab[6] == "              3 | hidden_size:\\t64"
    bell = CliRunner().invoke(main, ["rule", "yaml.control-character"]).stdout
    assert "\x07" not in bell and "13 | # a bell \\x07 in a comment" in bell


def test_rule_shows_an_example_in_words() -> None:
    stale = CliRunner().invoke(main, ["rule", "regen.stale"]).stdout.splitlines()
    assert stale[4] == "  Example:  regen --check after a spec's hidden_size changed and regen was not run"


def test_a_part_under_a_hundredth_of_a_billion_is_given_in_digits_not_as_zero() -> None:
    problems = example_report(examples()["params.part-unstated"], PROFILES, CODES)
    assert [problem.message for problem in problems] == [
        "parameters states no active, but the spec's fields count 144,704 (full_attention layers 2 × 65,920, "
        "embedding 6,400, head 6,400, final norm 64); state active: 144704 (modelspec import writes it), so a change to it fails "
        "check"]
