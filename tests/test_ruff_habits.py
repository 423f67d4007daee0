"""ruff's habits in ``modelspec``: ``--statistics``, ``--exit-zero``, ``rule CODE``, the ``[*]`` fixable marker,
``--color``/``FORCE_COLOR`` when piped, ``fmt``'s exit 2, ``--ignore`` of what cannot be silenced, and integers
as integers in ``diff --format json`` (issue 28, item 3). Each asserts the exact output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.catalogue.diff import CatalogueDiff, ModelChange, _parameter_moves, render_json
from pipeline.check.fixable import fixable
from pipeline.cli import main
from pipeline.spec.problems import Problem, Severity

CATALOGUE = Path(__file__).parent / "data" / "report_catalogue"
PREFIX = "tests/data/report_catalogue/specs/"


def check(*args: str, env: dict | None = None) -> tuple[int, str, str]:
    """``modelspec check --root CATALOGUE --no-cache ARGS`` (stdout piped: CliRunner is no terminal)."""
    result = CliRunner().invoke(main, ["check", "--root", str(CATALOGUE), "--no-cache", *args], env=env,
                                catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_statistics_counts_each_code_most_frequent_first_with_the_fixable_marker() -> None:
    assert check("--statistics") == (1, (
        "1  roundtrip.null           [*]\n"
        "1  roundtrip.torch-prefix   [*]\n"
        "1  schema.type              [*]\n"
        "1  yaml.ambiguous-bool\n"
        "1  yaml.multiple-documents\n"
        "3 errors, 2 warnings in 3 files (1 file clean); 3 fixable with `--fix`\n"), "")


def test_statistics_is_a_text_report_only() -> None:
    code, _, err = check("--statistics", "--format", "json")
    assert (code, err.splitlines()[-1]) == (2, "Error: --statistics is a text report; it does not take --format json")


def test_exit_zero_exits_0_on_errors_and_still_reports_them() -> None:
    code, out, _ = check("--exit-zero")
    assert (code, out.splitlines()[-1]) == (0, "3 errors, 2 warnings in 3 files (1 file clean); "
                                               "3 fixable with `--fix`")


def test_the_fixable_marker_stands_before_the_message_of_what_fix_fixes() -> None:
    _, out, _ = check(PREFIX + "qwen/qwen-tiny-moe.yaml")
    assert out.splitlines()[0] == (PREFIX + "qwen/qwen-tiny-moe.yaml:11:22: error [schema.type] [*] "
                                   "num_experts_per_tok must be an integer, got '8'; write 8 without quotes")


@pytest.mark.parametrize(("code", "message", "path", "expected"), [
    ("roundtrip.null", "head_dim is null; remove the line", ("head_dim",), True),
    ("spec.not-integer", "hidden_size must be an integer, got the float 896.0; write 896", ("hidden_size",), True),
    ("schema.type", "x must be a boolean, got 'true'; write true without quotes", ("x",), True),
    ("schema.type", "x must be an integer, got '" + "9" * 5000 + "'; write " + "9" * 5000 + " without quotes",
     ("x",), False),
    ("spec.kv-heads-divide", "num_attention_heads (8) must be a multiple of num_key_value_heads (3)", ("x",), False),
    ("roundtrip.null", "null; remove the line", (), False),
])
def test_fixable_is_what_fix_makes(code: str, message: str, path: tuple, expected: bool) -> None:
    assert fixable(Problem("a.yaml", 1, 1, "roundtrip", code, Severity.WARNING, message, path)) is expected


def test_a_failing_file_names_the_passes_it_skipped() -> None:
    _, out, _ = check(PREFIX + "broken/two-docs.yaml")
    assert out.splitlines()[-2] == (PREFIX + "broken/two-docs.yaml: skipped schema, semantic, stack, roundtrip "
                                    "(an earlier pass failed; fix its errors and check again)")


@pytest.mark.parametrize(("args", "env"), [(["--color"], {}), ([], {"FORCE_COLOR": "1"})])
def test_color_and_force_color_are_honoured_when_piped(args: list, env: dict) -> None:
    _, out, _ = check(PREFIX + "qwen/qwen-tiny-moe.yaml", *args, env=env)
    assert out.splitlines()[0].startswith(PREFIX + "qwen/qwen-tiny-moe.yaml:11:22: \x1b[31m\x1b[1merror\x1b[0m ")


def test_no_color_beats_force_color() -> None:
    _, out, _ = check(PREFIX + "qwen/qwen-tiny-moe.yaml", "--no-color", env={"FORCE_COLOR": "1"})
    assert "\x1b" not in out


def test_ignore_of_an_error_says_it_cannot_silence_it() -> None:
    code, out, err = check("--ignore", "schema.type,roundtrip.null")
    assert (code, err) == (1, "modelspec: --ignore schema.type cannot silence schema.type: errors and "
                              "gate.excluded-change, gate.own-profile, params.uncounted, stack.no-arch are always "
                              "reported; fix them instead\n")
    assert "[schema.type]" in out and "[roundtrip.null]" not in out


def test_rule_explains_a_code_from_the_registry() -> None:
    result = CliRunner().invoke(main, ["rule", "params.total-mismatch"])
    assert (result.exit_code, result.stdout) == (0, (
        "params.total-mismatch\n"
        "\n"
        "  parameters.total, the model's published count, differs from what the op profile's weight\n"
        "  inventories count for the spec's fields: a width or a count of the spec is not the model's, or the\n"
        "  stated figure is.\n"
        "\n"
        "  Example:  modelspec check example.yaml, a two-layer Llama spec, checked clean, changed:\n"
        "              13 | parameters: {total: 100000}\n"
        "            reports:\n"
        "              example.yaml:13:21: error [params.total-mismatch] parameters.total states 100,000 but the spec's "
        "fields count 95,040 (-4,960); counted: full_attention layers 2 × 41,088, embedding 6,400, head 6,400, final norm 64. "
        "Correct the field that is not the model's, or the stated figure\n"
        "  Fix:      by hand: the message says what to change (check --fix does not)\n"
        "  Silence:  a warning of it with --ignore, the configuration's ignore or per-file-ignores, or #\n"
        "            modelspec: ignore[params.total-mismatch] on its line; an error is always reported\n"
        "  Docs:     docs/problems.md#params.total-mismatch\n"
        "\n"))


def test_rule_of_a_fixable_and_an_unsilenced_code() -> None:
    fix = CliRunner().invoke(main, ["rule", "roundtrip.null"]).stdout.splitlines()
    assert fix[-5] == "  Fix:      check --fix fixes it where its message states the value to write ([*] in the report)"
    never = CliRunner().invoke(main, ["rule", "params.uncounted"]).stdout.splitlines()
    assert never[-3] == "  Silence:  never: no configuration or inline ignore silences it (--strict fails the run on it)"


def test_rule_of_an_unknown_code_is_a_usage_error_with_near_codes() -> None:
    result = CliRunner().invoke(main, ["rule", "params.total-mismatc"])
    assert (result.exit_code, result.stderr.splitlines()[-1]) == (2, (
        "Error: Invalid value for CODE: 'params.total-mismatc' is not a code modelspec reports; did you mean "
        "params.total-mismatch, params.mtp-mismatch, params.vision-mismatch?"))


def test_rule_all_explains_every_code() -> None:
    from pipeline.spec.problems import all_codes

    out = CliRunner().invoke(main, ["rule", "--all"]).stdout
    assert [line for line in out.splitlines() if line and not line.startswith(" ")] == list(all_codes())


def test_fmt_exits_2_on_a_file_it_cannot_parse_and_1_on_one_it_would_reformat(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "bad.yaml").write_text("name: [x\n", encoding="utf-8")
    bad = CliRunner().invoke(main, ["fmt", "--check", "--root", str(tmp_path)])
    assert (bad.exit_code, bad.stderr) == (2, "specs/bad.yaml:2:1: error [yaml.syntax] " + bad.stderr.split(
        "[yaml.syntax] ", 1)[1])
    (tmp_path / "specs" / "bad.yaml").write_text("name: x\n", encoding="utf-8")
    untidy = CliRunner().invoke(main, ["fmt", "--check", "--root", str(tmp_path)])
    assert (untidy.exit_code, untidy.stdout) == (1, "would reformat specs/bad.yaml: 1 line change, first line 1: "
                                                    "'---' is added\n")


def test_diff_json_gives_parameter_counts_as_integers() -> None:
    before = {"total": 8_030_261_248, "active": 8_030_261_248, "mtp": 0, "vision": 0}
    after = {**before, "total": 8_030_261_249}
    moves = tuple(_parameter_moves(before, after))
    assert [move.text() for move in moves] == ["total 8,030,261,248 -> 8,030,261,249"]
    document = json.loads(render_json(CatalogueDiff("a", "b", (), (), (ModelChange("m", moves),), 0, (), ())))
    assert document["changed"] == [{"name": "m", "moves": [{"what": "total", "before": 8_030_261_248,
                                                            "after": 8_030_261_249, "event": None}]}]


def test_a_count_mismatch_hints_at_the_field_changed_since_the_last_artifact(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    (tmp_path / "specs").mkdir()
    (tmp_path / "resolved").mkdir()
    spec = (root / "specs/deepseek/deepseek-v3.yaml").read_text(encoding="utf-8")
    (tmp_path / "specs" / "deepseek-v3.yaml").write_text(
        spec.replace("moe_intermediate_size: 2048", "moe_intermediate_size: 2000"), encoding="utf-8")
    plain = CliRunner().invoke(main, ["check", "--root", str(tmp_path), "--no-cache"])
    (tmp_path / "resolved" / "deepseek-v3.json").write_bytes((root / "resolved/deepseek-v3.json").read_bytes())
    hinted = CliRunner().invoke(main, ["check", "--root", str(tmp_path), "--no-cache"])
    assert (plain.stderr, hinted.stderr) == ("", (
        "specs/deepseek-v3.yaml: hint: since resolved/deepseek-v3.json, moe_intermediate_size 2048 -> 2000 (the "
        "last regen's artifact; not part of the verdict)\n"))
    assert (hinted.exit_code, hinted.stdout) == (plain.exit_code, plain.stdout)  # a hint, not a verdict


def test_exit_zero_holds_for_a_recorded_answer_too(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "bad.yaml").write_text("name: [x\n", encoding="utf-8")
    first = CliRunner().invoke(main, ["check", "--root", str(tmp_path), "--exit-zero"])
    again = CliRunner().invoke(main, ["check", "--root", str(tmp_path), "--exit-zero"])  # answered from the snapshot
    plain = CliRunner().invoke(main, ["check", "--root", str(tmp_path)])
    assert (first.exit_code, again.exit_code, plain.exit_code) == (0, 0, 1)
    assert first.stdout == again.stdout == plain.stdout
