"""Op profiles' shape expressions are bounded when a profile loads (``profile.weights``, at the entry's line).

The red team's findings: a negative dimension passed ``check`` and regen wrote a negative total; a product of over
4,300 digits crashed ``regen``, ``show`` and ``list``; ``// (x - x)`` gave ``check.internal``; a ``#`` in an
expression and 60,000 unary minus signs gave tracebacks. Each is reproduced here in a spec repository's own copy
of the bundled profiles, and refused when the profiles load (exit 2: the rules are broken, no spec is checked).
A product that only the spec's values make too large is refused per spec (``params.unpriced``), never printed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from pipeline.cli import main
from pipeline.pricing.weights import MAX_NESTING, WeightFormatError, compile_expression, symbol_range

ROOT = Path(__file__).resolve().parent.parent
Q_PROJ = "shape: [num_attention_heads * head_dim, hidden_size], bias: qkv_bias}"
BROKEN = "modelspec: the op profiles are broken; fix them before checking specs"


def run_cli(*args: str) -> Result:
    """``modelspec args`` in-process, without the result cache."""
    return CliRunner().invoke(main, [*args, "--no-cache"], catch_exceptions=False)


def repository(tmp_path: Path, dimension: str) -> Path:
    """A spec repository holding Llama-3.1-8B and the bundled profiles, its llama q_proj's first dimension
    written as *dimension* (YAML, as the profile would hold it)."""
    shutil.copytree(ROOT / "op_profiles", tmp_path / "op_profiles")
    (tmp_path / "specs").mkdir()
    shutil.copy(ROOT / "specs/llama/llama-3.1-8b.yaml", tmp_path / "specs")
    profile = tmp_path / "op_profiles" / "llama.yaml"
    text = profile.read_text(encoding="utf-8")
    assert text.count(Q_PROJ) == 1
    profile.write_text(text.replace(Q_PROJ, f"shape: [{dimension}, hidden_size], bias: qkv_bias}}"), encoding="utf-8")
    return tmp_path


def q_proj_line() -> int:
    """The line of llama's q_proj entry in the bundled profile (where a broken shape of it is reported)."""
    lines = (ROOT / "op_profiles" / "llama.yaml").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if Q_PROJ in line)


def refusal(tmp_path: Path, dimension: str) -> str:
    """The one problem ``check`` reports of the profile whose q_proj starts with *dimension*, asserting exit 2."""
    result = run_cli("check", "--root", str(repository(tmp_path, dimension)))
    lines = result.output.splitlines()
    assert (result.exit_code, len(lines), lines[-1]) == (2, 2, BROKEN), result.output
    prefix = f"{tmp_path}/op_profiles/llama.yaml:{q_proj_line()}:80: error [profile.weights] "
    assert lines[0].startswith(prefix), lines[0]
    return lines[0][len(prefix):]


def test_a_negative_dimension_is_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path, "-1") == "a dimension is a whole number from 0 to 2^63 - 1, not -1"


def test_a_subtraction_of_fields_that_can_go_negative_is_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path, '"hidden_size - intermediate_size"') == (
        "'hidden_size - intermediate_size' subtracts intermediate_size from hidden_size, which can be negative for "
        "a spec the profile accepts (the fields are unbounded); a dimension is never negative: subtract only what "
        "is provably no larger (a whole number or a flag below a field's least value)")


def test_a_division_by_what_can_be_zero_is_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path, '"hidden_size // (hidden_size - hidden_size)"') == (
        "'hidden_size // (hidden_size - hidden_size)' divides by hidden_size - hidden_size, which can be 0 for a "
        "spec the profile accepts; divide only by a whole number above 0 or a field that is never 0")


def test_a_comment_sign_in_an_expression_is_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path, '"num_attention_heads * head_dim # x"') == (
        "'num_attention_heads * head_dim # x' holds '#'; a dimension is written with field names, whole numbers, "
        "+ - * // and parentheses, nothing else")


def test_sixty_thousand_unary_minus_signs_are_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path, '"' + "-" * 60_000 + 'hidden_size"') == (
        f"'{'-' * 60}'... is 60,011 characters long; a dimension is at most 200 (name the fields, the bundled "
        "profiles need some 60)")


def test_a_product_of_4300_digits_is_refused(tmp_path: Path) -> None:
    # 230 factors of 19 nines: a product of some 4,370 digits, beyond what Python prints.
    assert refusal(tmp_path, '"' + " * ".join(["9" * 19] * 230) + '"') == (
        f"'{' * '.join(['9' * 19] * 3)[:60]}'... is 5,057 characters long; a dimension is at most 200 (name the "
        "fields, the bundled profiles need some 60)")


def test_a_product_of_constants_beyond_2_63_is_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path, '"9223372036854775807 * 2"') == (
        "'9223372036854775807 * 2' can be 18,446,744,073,709,551,614, above 2^63 - 1; no dimension is that large")


def test_a_shape_whose_constants_multiply_beyond_2_63_is_refused(tmp_path: Path) -> None:
    repository(tmp_path, "4294967296")
    profile = (tmp_path / "op_profiles" / "llama.yaml").read_text(encoding="utf-8")
    (tmp_path / "op_profiles" / "llama.yaml").write_text(
        profile.replace("shape: [4294967296, hidden_size]", "shape: [4294967296, 4294967296]"), encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path))
    assert (result.exit_code, result.output.splitlines()[0]) == (2, (
        f"{tmp_path}/op_profiles/llama.yaml:{q_proj_line()}:79: error [profile.weights] the shape ['4294967296', '4294967296'] "
        "can hold 18,446,744,073,709,551,616 parameters, above 2^63 - 1; no tensor is that large"))


def test_nesting_is_bounded(tmp_path: Path) -> None:
    deep = "hidden_size" + " * (1 + hidden_size" * MAX_NESTING + ")" * MAX_NESTING
    assert refusal(tmp_path, f'"{deep}"') == (
        f"{deep[:60]!r}... nests {2 * MAX_NESTING} operations deep; a dimension nests at most {MAX_NESTING}")


UNPRICED_Q_PROJ = ("specs/llama-3.1-8b.yaml:25:3: error [params.unpriced] parameters is stated but cannot be checked: "
                   "kind 'full_attention': its inventory gives self_attn.q_proj.weight more than 2^63 - 1 parameters "
                   "for the spec's values; no model holds that: a width or a count of the spec is wrong")
REGEN_REFUSES = ("specs/llama-3.1-8b.yaml:25:3: error [regen.spec-fails] fails modelspec check (1 error, the first "
                 "[params.unpriced] at line 25); it has no artifact; run modelspec check specs/llama-3.1-8b.yaml")


@pytest.mark.parametrize("command, line", [(("check",), UNPRICED_Q_PROJ), (("regen",), REGEN_REFUSES),
                                           (("show", "llama-3.1-8b"), UNPRICED_Q_PROJ), (("list",), UNPRICED_Q_PROJ)])
def test_a_product_the_specs_values_make_too_large_is_refused_per_spec(tmp_path: Path, command: Any,
                                                                        line: str) -> None:
    # Bounded expressions, unbounded fields: 4096^8 = 2^96 parameters for Llama-3.1-8B's q_proj.
    root = repository(tmp_path, '"hidden_size * hidden_size * hidden_size * hidden_size * hidden_size * '
                                'hidden_size * hidden_size"')
    result = run_cli(*command, "--root", str(root))
    assert (result.exit_code, line in result.output.splitlines()) == (1, True), result.output


def test_a_spec_of_absurd_widths_is_refused_not_printed(tmp_path: Path) -> None:
    # Each width below 2^63 (a larger one is spec.too-large), but a product of two is beyond it.
    (tmp_path / "specs").mkdir()
    text = (ROOT / "specs/llama/llama-3.1-8b.yaml").read_text(encoding="utf-8")
    (tmp_path / "specs" / "llama-3.1-8b.yaml").write_text(
        text.replace("hidden_size: 4096", f"hidden_size: {2 ** 62}"), encoding="utf-8")
    for command in (("check",), ("regen",), ("list",), ("show", "llama-3.1-8b")):
        result = run_cli(*command, "--root", str(tmp_path))
        assert (result.exit_code, "Traceback" in result.output) == (1, False), result.output
        assert (UNPRICED_Q_PROJ if command != ("regen",) else REGEN_REFUSES) in result.output.splitlines()


@pytest.mark.parametrize("text", ["hidden_size - 1", "hidden_size * (1 + attn_output_gate) - attn_output_gate",
                                  "hidden_size // num_attention_heads", "hidden_size // 2", "(1 - qk_norm) * 5",
                                  "num_shared_experts * hidden_size", "hidden_size - 1 + 0"])
def test_what_is_provably_a_dimension_is_taken(text: str) -> None:
    assert compile_expression(text, ("w",), ("hidden_size", "num_attention_heads", "attn_output_gate", "qk_norm",
                                              "num_shared_experts")).text == text


@pytest.mark.parametrize("text, message", [
    ("hidden_size - 2 * qk_norm", None),
    ("1 - hidden_size", "'1 - hidden_size' subtracts hidden_size from 1, which can be negative"),
    ("hidden_size - 2", "'hidden_size - 2' subtracts 2 from hidden_size, which can be negative"),
    ("hidden_size // num_shared_experts", "'hidden_size // num_shared_experts' divides by num_shared_experts, "
                                          "which can be 0"),
    ("hidden_size // qk_norm", "'hidden_size // qk_norm' divides by qk_norm, which can be 0"),
    ("hidden_size // (qk_norm - qk_norm)", "'hidden_size // (qk_norm - qk_norm)' divides by qk_norm - qk_norm"),
    ("-hidden_size", "'-hidden_size' negates with a unary minus; a dimension is never negative"),
    ("hidden_size * -1", "'hidden_size * -1' negates with a unary minus"),
    ("(hidden_size - 2 * qk_norm) - 1", "'(hidden_size - 2 * qk_norm) - 1' subtracts 1 from hidden_size - 2 * "
                                        "qk_norm, which can be negative"),
    ("hidden_size\n", "'hidden_size\\n' holds '\\n'"),
])
def test_each_bound_of_the_grammar(text: str, message: Any) -> None:
    symbols = ("hidden_size", "qk_norm", "num_shared_experts")
    if message is None:  # a field is at least 1 and a flag at most 1, so hidden_size - 2 * qk_norm >= -1: refused
        message = "'hidden_size - 2 * qk_norm' subtracts 2 * qk_norm from hidden_size, which can be negative"
    with pytest.raises(WeightFormatError) as caught:
        compile_expression(text, ("w",), symbols)
    assert str(caught.value).startswith(message), str(caught.value)


def test_the_least_values_are_the_model_irs() -> None:
    assert (symbol_range("qk_norm"), symbol_range("num_shared_experts"), symbol_range("hidden_size")) == \
        ((0, 1), (0, None), (1, None))
