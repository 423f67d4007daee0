"""``check --fix``: the fixes findings state are made, comments kept, and what changed and what is left is said."""

from __future__ import annotations

from pathlib import Path

from pipeline.check.fix import fix_for
from pipeline.spec.problems import Problem, Severity
from spec_repos import run_in as run

BROKEN = """\
# source: here
name: a
hidden_size: 896.0  # width, from the config
num_hidden_layers: "4"
num_attention_heads: 8
vocab_size: 32000
num_key_value_heads: 3
intermediate_size: 4864
# the context length is not published
max_position_embeddings: null
tie_word_embeddings: false
qkv_bias: false
o_bias: false
mlp_bias: false
norm_bias: false
torch_dtype: torch.bfloat16  # as saved
arch: llama
"""

FIXED = """\
# source: here
---
name: a
hidden_size: 896  # width, from the config
num_hidden_layers: 4
num_attention_heads: 8
vocab_size: 32000
num_key_value_heads: 3
intermediate_size: 4864
# the context length is not published
tie_word_embeddings: false
qkv_bias: false
o_bias: false
mlp_bias: false
norm_bias: false
torch_dtype: bfloat16  # as saved
arch: llama
"""




def test_fix_makes_the_stated_fixes_keeps_comments_and_reports_what_is_left(tmp_path: Path) -> None:
    spec = tmp_path / "specs" / "a" / "a.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(BROKEN, encoding="utf-8")
    code, out, err = run(tmp_path, ["check", "--fix"])
    assert err == (
        "specs/a/a.yaml:3:14: fixed [spec.not-integer] hidden_size: wrote 896\n"
        "specs/a/a.yaml:4:20: fixed [schema.type] num_hidden_layers: wrote 4 without quotes\n"
        "fixed 2 problems in 1 file; 1 problem left\n")
    # the kv-heads error has no stated fix, and skips the passes whose warnings --fix would fix next
    assert (code, out) == (1, (
        "specs/a/a.yaml:8:22: error [spec.kv-heads-divide] num_attention_heads (8) must be a multiple of "
        "num_key_value_heads (3); each key/value head serves a whole group of query heads\n"
        "specs/a/a.yaml: skipped stack, roundtrip (an earlier pass failed; fix its errors and check again)\n"
        "1 error, 0 warnings in 1 file (0 files clean)\n"))
    spec.write_text(spec.read_text(encoding="utf-8").replace("num_key_value_heads: 3", "num_key_value_heads: 2"),
                    encoding="utf-8")
    code, out, err = run(tmp_path, ["check", "--fix"])
    assert (code, out, err) == (0, "1 file checked, no problems\n", (
        "specs/a/a.yaml:11:26: fixed [roundtrip.null] removed max_position_embeddings\n"
        "specs/a/a.yaml:17:14: fixed [roundtrip.torch-prefix] torch_dtype: wrote bfloat16\n"
        "fixed 2 problems in 1 file; 0 problems left\n"))
    assert spec.read_text(encoding="utf-8") == FIXED.replace("num_key_value_heads: 3", "num_key_value_heads: 2")


def test_fix_runs_again_on_what_a_fix_uncovered(tmp_path: Path) -> None:
    spec = tmp_path / "specs" / "a.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(BROKEN.replace("num_key_value_heads: 3", "num_key_value_heads: 2"), encoding="utf-8")
    code, out, err = run(tmp_path, ["check", "--fix", "-q"])
    assert (code, out, err) == (0, "", "")
    assert spec.read_text(encoding="utf-8") == FIXED.replace("num_key_value_heads: 3", "num_key_value_heads: 2")


def test_without_fix_nothing_is_written(tmp_path: Path) -> None:
    spec = tmp_path / "specs" / "a.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(BROKEN, encoding="utf-8")
    assert run(tmp_path, ["check"])[0] == 1
    assert spec.read_text(encoding="utf-8") == BROKEN


def _problem(code: str, path: tuple, message: str = "") -> Problem:
    return Problem("f", 1, 1, "semantic", code, Severity.WARNING, message, path)


def test_only_stated_fixes_are_made() -> None:
    data = {"hidden_size": 896.5, "torch_dtype": "float16", "n": "4x", "flag": "true"}
    assert fix_for(_problem("spec.not-integer", ("hidden_size",), "write 896"), data) is None
    assert fix_for(_problem("roundtrip.torch-prefix", ("torch_dtype",)), data) is None
    assert fix_for(_problem("schema.type", ("n",), "n must be an integer, got '4x'"), data) is None
    assert fix_for(_problem("spec.kv-heads-divide", ("n",)), data) is None
    fix = fix_for(_problem("schema.type", ("flag",), "flag must be a boolean, got 'true'; write true without quotes"),
                  data)
    assert fix is not None and (fix.edit, fix.done) == ((("flag",), True), "flag: wrote true without quotes")


def test_fix_leaves_an_integer_too_long_to_write_and_says_so(tmp_path: Path) -> None:
    # The red team's crash: --fix turned a quoted 5,000-digit integer into an int, past what Python converts.
    spec = tmp_path / "specs" / "a.yaml"
    spec.parent.mkdir(parents=True)
    text = BROKEN.replace('num_hidden_layers: "4"', 'num_hidden_layers: "' + "1" * 5000 + '"')
    spec.write_text(text, encoding="utf-8")
    code, out, err = run(tmp_path, ["check", "--fix"])
    assert code == 1 and "[schema.type]" in out
    lines = err.splitlines()
    assert (lines[0], lines[1], lines[-1]) == (
        "specs/a.yaml:4:20: not fixed [schema.type] num_hidden_layers: left quoted: an integer of 5,000 digits is "
        "no width or count (a number is at most 4,000 digits); write the right value by hand",
        "specs/a.yaml:3:14: fixed [spec.not-integer] hidden_size: wrote 896",
        "fixed 1 problem in 1 file; 1 problem left")
    assert '"' + "1" * 5000 + '"' in spec.read_text(encoding="utf-8")
