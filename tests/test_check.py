"""``modelspec check`` end to end: the shared cases, the whole class of each fault, reports and exit codes.

Every case of ``tests/data/cases/*.yaml`` (copied from the cases that broke
tools like this one) is checked through the command, asserting each problem's
line, column, code, severity and message, and the exit code. Each fault then
gets its class: the same refusal for every field it can hit, located.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.spec.model import MODEL_KEYS_ORDERED, ModelSpec
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.spec.problems import Outcome, Severity
from pipeline.check.runner import check_document
from pipeline.spec.yaml_source import load_bytes
from budget import examples

from bundled import LANGUAGE_ARCHS

CASES = Path(__file__).parent / "data" / "cases"

Found = Tuple[int, int, str, str, str]  # line, column, code, severity, message

NO_ARCH = ("no arch is stated and no op profile's match pattern fits the name {name!r}, so the layer stack cannot "
           "be resolved; state arch: one of " + str(list(LANGUAGE_ARCHS)).replace("{", "{{"))

# What each case must give, from tests/data/cases (the shared cases' README): every problem, exactly.
EXPECTED: Dict[str, Tuple[int, List[Found]]] = {
    "c01-exponent-number.yaml": (1, [
        (2, 14, "spec.not-integer", "error", "hidden_size must be an integer, got the float 7000.0; write 7000")]),
    "c02-yes-no-flags.yaml": (1, [
        (7, 10, "yaml.ambiguous-bool", "error",
         "qk_norm: yes is a boolean in YAML 1.1 but text in YAML 1.2; write true or false (or quote it if you mean "
         "the text)"),
        (8, 22, "yaml.ambiguous-bool", "error",
         "tie_word_embeddings: off is a boolean in YAML 1.1 but text in YAML 1.2; write true or false (or quote it "
         "if you mean the text)")]),
    "c03-duplicate-key.yaml": (1, [
        (1, 7, "stack.no-arch", "warning", NO_ARCH.format(name="tiny-dense")),
        (7, 1, "yaml.duplicate-key", "error", "num_hidden_layers: already stated on line 3; keep one of the two")]),
    "c04-alias-bomb.yaml": (1, [
        (6, 5, "yaml.anchor", "error",
         "a1: the anchor &a1 is not allowed (anchors and aliases can expand without bound); write the value out "
         "in full")]),
    "c05-python-tag.yaml": (1, [
        (2, 14, "yaml.tag", "error",
         "hidden_size: the tag !!python/object/apply:os.system is not allowed; remove it and write the plain "
         "value")]),
    "c06-float-as-integer.yaml": (1, [
        (2, 14, "spec.not-integer", "error", "hidden_size must be an integer, got the float 4096.0; write 4096")]),
    "c07-bool-as-integer.yaml": (1, [
        (5, 22, "schema.type", "error", "num_key_value_heads must be an integer, got true; a count is not true or "
                                        "false")]),
    "c08-deep-error-location.yaml": (1, [
        (13, 22, "schema.type", "error", "num_experts_per_tok must be an integer, got '8'; write 8 without quotes")]),
    "c09-explicit-head-dim.yaml": (0, [
        (1, 7, "stack.no-arch", "warning", NO_ARCH.format(name="tiny-wide-heads"))]),
    "c10-layer-types-short.yaml": (1, [
        (20, 3, "stack.layer-types-short", "error",
         "layer_types lists 7 layers, but num_hidden_layers is 8; list one type per body layer")]),
    "c11-explicit-nulls.yaml": (0, [
        (1, 7, "stack.no-arch", "warning", NO_ARCH.format(name="tiny-dense")),
        (5, 22, "roundtrip.null", "warning",
         "num_key_value_heads is null, which is the same as leaving it out; remove the line"),
        (6, 11, "roundtrip.null", "warning", "head_dim is null, which is the same as leaving it out; remove the line")]),
    "c12-gqa-not-divisible.yaml": (1, [
        (5, 22, "spec.kv-heads-divide", "error",
         "num_attention_heads (7) must be a multiple of num_key_value_heads (2); each key/value head serves a whole "
         "group of query heads")]),
    "c16-report-exit-code.yaml": (1, [
        (2, 14, "schema.range", "error", "hidden_size must be at least 1, got -1"),
        (3, 20, "schema.range", "error", "num_hidden_layers must be at least 1, got 0")]),
    "c17-empty-file.yaml": (1, [
        (1, 1, "yaml.empty", "error", "empty file; a spec is a mapping of fields, one `key: value` per line")]),
    "c18-two-documents.yaml": (1, [
        (6, 1, "yaml.multiple-documents", "error",
         "a second YAML document starts here; a spec file holds one: move it to a file of its own")]),
    "c19-not-a-number.yaml": (1, [
        (8, 21, "yaml.non-finite", "error",
         "ffn_dim_multiplier: .nan is not a finite number; a finite number is required")]),
    "c20-run-precision-key.yaml": (1, [
        (7, 1, "schema.unknown-key", "error",
         "unknown model spec key 'compute_dtype': compute_dtype states a run's precision, not a model fact; a run "
         "takes its precision from its execution spec (fsdp_config.mix_precision.param_dtype, else "
         "model_init_dtype), and the model states only the dtype its checkpoint is saved in, as torch_dtype")]),
}


def run_check(root: Path, *args: str) -> Tuple[int, str]:
    """Run ``modelspec check --root ROOT ARGS`` in-process; return the exit code and stdout."""
    result = CliRunner().invoke(main, ["check", "--root", str(root), *args], catch_exceptions=False)
    return result.exit_code, result.stdout


def report(root: Path, *paths: Path) -> Tuple[int, Dict[str, Any]]:
    """Check *paths* with ``--format json``; return the exit code and the report."""
    code, out = run_check(root, "--format", "json", *map(str, paths))
    return code, json.loads(out)


def found(file_report: Dict[str, Any]) -> List[Found]:
    """The problems of one file of a JSON report as comparable tuples."""
    return [(p["line"], p["column"], p["code"], p["severity"], p["message"]) for p in file_report["problems"]]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty spec repository (bundled op profiles)."""
    (tmp_path / "specs").mkdir()
    return tmp_path


def test_every_case_file_is_covered() -> None:
    assert sorted(p.name for p in CASES.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_case(repo: Path, name: str) -> None:
    exit_code, problems = EXPECTED[name]
    code, document = report(repo, CASES / name)
    assert (code, found(document["files"][0])) == (exit_code, problems)


def test_all_cases_in_one_run_report_every_file(repo: Path) -> None:
    code, document = report(repo, CASES)
    assert code == 1
    reported = {Path(f["file"]).name: found(f) for f in document["files"]}
    # Read together, the cases that parse clash on their names: each says which others share it.
    clashes = {name: [p for p in problems if p[2] == "spec.duplicate-name"] for name, problems in reported.items()}
    assert {name: [p for p in problems if p[2] != "spec.duplicate-name"] for name, problems in reported.items()} == {
        name: problems for name, (_, problems) in EXPECTED.items()}
    assert sorted(name for name, found_here in clashes.items() if found_here) == [
        "c03-duplicate-key.yaml", "c11-explicit-nulls.yaml"]
    assert clashes["c03-duplicate-key.yaml"] == [(
        1, 7, "spec.duplicate-name", "error",
        f"name 'tiny-dense' is also the name of {CASES / 'c11-explicit-nulls.yaml'}; each spec needs its own name (it "
        "names its resolved artifact)")]


def test_two_specs_of_one_name_are_both_refused(repo: Path) -> None:
    for name in ("a.yaml", "B.yaml"):
        (repo / "specs" / name).write_text(PRICED.replace("llama-x", "Llama-X" if name == "B.yaml" else "llama-x"),
                                           encoding="utf-8")
    code, document = report(repo)
    assert (code, [found(f) for f in document["files"]]) == (1, [
        [(1, 7, "spec.duplicate-name", "error", "name 'Llama-X' is also the name of specs/a.yaml; each spec needs "
                                                "its own name (it names its resolved artifact)")],
        [(1, 7, "spec.duplicate-name", "error", "name 'llama-x' is also the name of specs/B.yaml; each spec needs "
                                                "its own name (it names its resolved artifact)")]])


@pytest.mark.parametrize(("make", "message"), [
    (lambda root: (root / "specs" / "fifo").__fspath__() and os.mkfifo(root / "specs" / "fifo"),
     "specs/fifo: not a regular file or a folder; name spec files or the folders holding them"),
    (lambda root: (root / "specs" / "dangling.yaml").symlink_to(root / "nowhere.yaml"),
     "specs/dangling.yaml: no such file or folder"),
])
def test_a_named_path_that_is_no_spec_file_is_a_usage_error(repo: Path, make: Any, message: str) -> None:
    make(repo)
    target = repo / "specs" / message.split(":")[0].split("/")[1]
    result = CliRunner().invoke(main, ["check", "--root", str(repo), str(target)])
    assert (result.exit_code, message.split(": ", 1)[1] in result.output) == (2, True)


def test_a_folder_without_specs_is_a_usage_error(repo: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert result.exit_code == 2
    assert f"no spec files (*.yaml, *.yml) in {repo / 'specs'}" in result.output


def test_a_spec_reached_twice_through_a_symlink_is_checked_once(repo: Path) -> None:
    (repo / "specs" / "a.yaml").write_text(LLAMA, encoding="utf-8")
    (repo / "specs" / "link.yml").symlink_to(repo / "specs" / "a.yaml")
    _, document = report(repo)
    assert [f["file"] for f in document["files"]] == ["specs/a.yaml"]


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github", "markdown"])
def test_every_format_exits_1_on_errors(repo: Path, fmt: str) -> None:
    code, _ = run_check(repo, "--format", fmt, str(CASES / "c16-report-exit-code.yaml"))
    assert code == 1


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "sarif", "github", "markdown"])
def test_every_format_exits_0_when_clean(repo: Path, fmt: str) -> None:
    spec = repo / "specs" / "ok.yaml"
    spec.write_text(LLAMA, encoding="utf-8")
    assert run_check(repo, "--format", fmt, str(spec))[0] == 0


def test_the_python_tag_never_runs(repo: Path) -> None:
    marker = Path("/tmp/modelspec-tag-ran")
    if marker.exists():
        marker.unlink()
    run_check(repo, str(CASES / "c05-python-tag.yaml"))
    assert not marker.exists()


def test_an_exponent_number_is_a_number(repo: Path) -> None:
    text = (CASES / "c01-exponent-number.yaml").read_text(encoding="utf-8").replace("7e3", "7000")
    spec = ModelSpec.from_dict(load_bytes(text.encode(), "c01").data)
    assert (spec.hidden_size, spec.ffn_dim_multiplier) == (7000, 1.3)


def test_an_explicit_head_dim_is_kept(repo: Path) -> None:
    doc = load_bytes((CASES / "c09-explicit-head-dim.yaml").read_bytes(), "c09")
    spec = check_document(doc, load_op_profiles()).spec
    assert (spec.effective_head_dim, spec.attention_width) == (128, 4096)


@pytest.mark.parametrize(("name", "outcomes"), [
    ("c17-empty-file.yaml", ["failed", "skipped", "skipped", "skipped", "skipped"]),
    ("c12-gqa-not-divisible.yaml", ["passed", "passed", "failed", "skipped", "skipped"]),
    ("c10-layer-types-short.yaml", ["passed", "passed", "passed", "failed", "passed"]),
    ("c11-explicit-nulls.yaml", ["passed", "passed", "passed", "passed", "passed"]),
])
def test_a_pass_that_cannot_run_is_reported_skipped(repo: Path, name: str, outcomes: List[str]) -> None:
    _, document = report(repo, CASES / name)
    assert list(document["files"][0]["passes"].values()) == outcomes


def test_strict_fails_on_warnings(repo: Path) -> None:
    case = str(CASES / "c11-explicit-nulls.yaml")
    assert (run_check(repo, case)[0], run_check(repo, "--strict", case)[0]) == (0, 1)


def test_quiet_prints_nothing_on_success(repo: Path) -> None:
    spec = repo / "specs" / "ok.yaml"
    spec.write_text(LLAMA, encoding="utf-8")
    assert run_check(repo, "-q") == (0, "")


def test_output_writes_several_reports_in_one_run(repo: Path) -> None:
    sarif, junit = repo / "out.sarif", repo / "out.xml"
    code, out = run_check(repo, "--output", f"sarif={sarif}", "--output", f"junit={junit}",
                          str(CASES / "c12-gqa-not-divisible.yaml"))
    assert code == 1
    assert out.splitlines()[0].endswith("[spec.kv-heads-divide] num_attention_heads (7) must be a multiple of "
                                        "num_key_value_heads (2); each key/value head serves a whole group of "
                                        "query heads")
    assert json.loads(sarif.read_text())["runs"][0]["results"][0]["ruleId"] == "spec.kv-heads-divide"
    assert "spec.kv-heads-divide" in junit.read_text()


@pytest.mark.parametrize(("args", "message"), [
    (["--output", "sarif"], "'sarif' is not FORMAT=PATH, e.g. sarif=results.sarif"),
    (["--output", "yaml=x"], "'yaml' is not a format; the formats are text, json, junit, sarif, github, markdown"),
    (["no/such/file.yaml"], "no/such/file.yaml: no such file or folder"),
])
def test_usage_errors_exit_2(repo: Path, args: List[str], message: str) -> None:
    result = CliRunner().invoke(main, ["check", "--root", str(repo), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_a_broken_op_profile_exits_2_naming_it(repo: Path) -> None:
    (repo / "op_profiles").mkdir()
    (repo / "op_profiles" / "fam.yaml").write_text("arch: other\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo)])
    assert result.exit_code == 2
    assert "fam.yaml:1:1: error [profile.invalid]" in result.output


def test_the_default_is_the_repository_specs_folder(repo: Path) -> None:
    (repo / "specs" / "llama").mkdir()
    (repo / "specs" / "llama" / "a.yaml").write_text(LLAMA.replace("llama-x", "llama-a"), encoding="utf-8")
    (repo / "specs" / "llama" / "b.yml").write_text("name: [", encoding="utf-8")
    code, document = report(repo)
    assert (code, [f["file"] for f in document["files"]]) == (1, ["specs/llama/a.yaml", "specs/llama/b.yml"])


# ---- the class of each fault, for every field it can hit -------------------------------------------

LLAMA = """\
name: llama-x
arch: llama
hidden_size: 4096
num_hidden_layers: 32
num_attention_heads: 32
vocab_size: 128256
num_key_value_heads: 8
intermediate_size: 14336
"""

#: LLAMA with the flags its inventory reads, so it can be counted (else it is warned as params.uncounted).
PRICED = LLAMA + "tie_word_embeddings: false\nqkv_bias: false\no_bias: false\nmlp_bias: false\nnorm_bias: false\n"

SCHEMA = json.loads((Path(__file__).parent.parent / "schemas" / "model-spec.schema.json").read_text())


def _types(prop: Dict[str, Any]) -> Sequence[str]:
    kind = prop.get("type", [])
    return kind if isinstance(kind, list) else [kind]


INTEGER_FIELDS = [k for k, v in SCHEMA["properties"].items() if "integer" in _types(v)]
FLAG_FIELDS = [k for k, v in SCHEMA["properties"].items() if "boolean" in _types(v)]
NUMBER_FIELDS = [k for k, v in SCHEMA["properties"].items() if "number" in _types(v)]
TOWER_INTEGERS = [k for k, v in SCHEMA["$defs"]["vision"]["properties"].items() if "integer" in _types(v)]


def spec_with(key: str, text: str) -> str:
    """LLAMA with ``key: text`` as its last line (line 9, value at column len(key) + 3), replacing the key."""
    lines = [line for line in LLAMA.splitlines() if not line.startswith(f"{key}:")]
    return "\n".join(lines + [f"{key}: {text}"]) + "\n"


def problems_of(text: str) -> List[Tuple[int, int, str, str]]:
    """Check *text* in-process; its problems as (line, column, code, message)."""
    checked = check_document(load_bytes(text.encode(), "spec.yaml"), load_op_profiles())
    return [(p.line, p.column, p.code, p.message) for p in checked.result.problems]


def test_the_field_classes_are_not_empty() -> None:
    assert (len(INTEGER_FIELDS), len(FLAG_FIELDS), len(NUMBER_FIELDS), len(TOWER_INTEGERS)) == (39, 9, 1, 16)


@pytest.mark.parametrize("key", INTEGER_FIELDS)
def test_a_quoted_integer_is_refused_where_it_stands(key: str) -> None:
    text = spec_with(key, '"8"')
    line = text.count("\n")
    assert problems_of(text) == [
        (line, len(key) + 3, "schema.type", f"{key} must be an integer, got '8'; write 8 without quotes")]


@pytest.mark.parametrize("key", INTEGER_FIELDS)
def test_an_integral_float_is_refused_with_the_integer_to_write(key: str) -> None:
    text = spec_with(key, "4096.0")
    line = text.count("\n")
    assert problems_of(text) == [
        (line, len(key) + 3, "spec.not-integer", f"{key} must be an integer, got the float 4096.0; write 4096")]


@pytest.mark.parametrize("key", INTEGER_FIELDS)
def test_an_exponent_in_an_integer_field_is_refused_with_the_integer_to_write(key: str) -> None:
    text = spec_with(key, "4e3")
    line = text.count("\n")
    assert problems_of(text) == [
        (line, len(key) + 3, "spec.not-integer", f"{key} must be an integer, got the float 4000.0; write 4000")]


@pytest.mark.parametrize("key", INTEGER_FIELDS)
def test_a_boolean_count_is_refused(key: str) -> None:
    text = spec_with(key, "true")
    line = text.count("\n")
    assert problems_of(text) == [
        (line, len(key) + 3, "schema.type", f"{key} must be an integer, got true; a count is not true or false")]


@pytest.mark.parametrize("key", FLAG_FIELDS)
@pytest.mark.parametrize("word", ["yes", "No", "ON", "off", "y", "N"])
def test_a_yaml_1_1_boolean_is_refused_in_every_flag(key: str, word: str) -> None:
    text = spec_with(key, word)
    line = text.count("\n")
    assert problems_of(text) == [
        (line, len(key) + 3, "yaml.ambiguous-bool",
         f"{key}: {word} is a boolean in YAML 1.1 but text in YAML 1.2; write true or false (or quote it if you "
         "mean the text)")]


@pytest.mark.parametrize("key", NUMBER_FIELDS)
@pytest.mark.parametrize("word", [".nan", ".inf", "-.Inf", ".NaN"])
def test_a_non_finite_number_is_refused(key: str, word: str) -> None:
    text = spec_with(key, word)
    line = text.count("\n")
    assert problems_of(text) == [
        (line, len(key) + 3, "yaml.non-finite", f"{key}: {word} is not a finite number; a finite number is required")]


@pytest.mark.parametrize("key", NUMBER_FIELDS)
def test_an_exponent_in_a_float_field_is_the_float(key: str) -> None:
    spec = check_document(load_bytes(spec_with(key, "1.3e0").encode(), "s"), load_op_profiles()).spec
    assert getattr(spec, key) == 1.3


@pytest.mark.parametrize("key", TOWER_INTEGERS)
def test_a_quoted_integer_in_the_tower_is_refused_where_it_stands(key: str) -> None:
    tower = {"hidden_size": "1152", "num_hidden_layers": "27", "num_attention_heads": "16", key: '"8"'}
    text = LLAMA + "vision:\n" + "".join(f"  {k}: {v}\n" for k, v in tower.items())
    line = 9 + list(tower).index(key) + 1
    assert problems_of(text) == [
        (line, len(key) + 5, "schema.type", f"vision.{key} must be an integer, got '8'; write 8 without quotes")]


@pytest.mark.parametrize("key", ["compute_dtype", "param_init_type"])
def test_a_run_precision_key_names_where_precision_belongs(key: str) -> None:
    assert problems_of(LLAMA + f"{key}: bfloat16\n") == [(
        9, 1, "schema.unknown-key",
        f"unknown model spec key {key!r}: {key} states a run's precision, not a model fact; a run takes its "
        "precision from its execution spec (fsdp_config.mix_precision.param_dtype, else model_init_dtype), and the "
        "model states only the dtype its checkpoint is saved in, as torch_dtype")]


def test_nested_unknown_keys_are_refused_at_the_key() -> None:
    text = LLAMA + "layers:\n- kind: full_attention\n  count: 32\n  colour: red\nvision:\n  hidden_size: 8\n" \
                   "  num_hidden_layers: 1\n  num_attention_heads: 1\n  depth: 1\n"
    assert problems_of(text) == [
        (12, 3, "schema.unknown-key", "unknown key 'colour' in layers[0]; the keys are ['count', 'kind', 'mtp']"),
        (17, 3, "schema.unknown-key",
         "unknown key 'depth' in vision; the keys are ['hidden_size', 'in_channels', 'intermediate_size', 'layers', "
         "'max_num_tiles', 'max_position_embeddings', 'name', 'num_aspect_ratios', 'num_attention_heads', "
         "'num_deepstack_mergers', 'num_hidden_layers', "
         "'num_position_embeddings', 'out_hidden_size', 'patch_size', 'pooling_head', 'projector_bias', "
         "'projector_input_dim', 'projector_output_dim', 'spatial_merge_size', 'temporal_patch_size']")]


@pytest.mark.parametrize("text, expected", [
    pytest.param('parameters:\n  total: "8030261248"\n', [
        (10, 10, "schema.type",
         "parameters.total must be an integer, got '8030261248'; write 8030261248 without quotes")], id="quoted-total"),
    pytest.param("parameters:\n  total: 100\n  colour: 1\n", [
        (11, 3, "schema.unknown-key",
         "unknown key 'colour' in parameters; the keys are ['active', 'mtp', 'total', 'vision']")],
                 id="unknown-key"),
    pytest.param("parameters: 8030261248\n", [
        (9, 13, "schema.type", "parameters must be a mapping, got 8030261248")], id="a-bare-number"),
    pytest.param("parameters:\n  total: 100\n  active: 200\n", [
        (11, 11, "spec.active-above-total",
         "parameters.active is 200, above the total of 100; a token cannot pass through more parameters than the "
         "model has")], id="active-above-total"),
])
def test_a_stated_parameter_count_is_refused_where_it_stands(text: str,
                                                             expected: List[Tuple[int, int, str, str]]) -> None:
    assert problems_of(LLAMA + text) == expected


def test_every_problem_of_a_file_in_one_run() -> None:
    text = LLAMA.replace("hidden_size: 4096", "hidden_size: 4096.0").replace(
        "num_key_value_heads: 8", 'num_key_value_heads: "8"') + "qk_norm: yes\ncompute_dtype: bf16\n"
    assert [(line, code) for line, _, code, _ in problems_of(text)] == [
        (3, "spec.not-integer"), (7, "schema.type"), (9, "yaml.ambiguous-bool"), (10, "schema.unknown-key")]


def test_a_stack_problem_is_located_at_the_group() -> None:
    text = LLAMA + "layers:\n- kind: full_attention\n  count: 30\n- kind: moe\n  count: 2\n"
    assert problems_of(text) == [(
        12, 9, "stack.unknown-kind",
        "layers[1] names kind 'moe', but op profile 'llama' has ['full_attention']")]


# ---- nothing the input holds makes check crash ------------------------------------------------------
# Wholly random bytes and dictionaries stop at the load or schema pass; what reaches the stack and the round trip
# (schema-valid specs, edited spec bytes), with the share that did asserted, is in tests/test_fuzz_reach.py.

YAML_TEXT = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=8)),
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.sampled_from(MODEL_KEYS_ORDERED + ("kind", "count", "x")),
                                               children, max_size=6)),
    max_leaves=20)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=300))
def test_random_bytes_never_crash(raw: bytes) -> None:
    checked = check_document(load_bytes(raw, "x.yaml"), load_op_profiles())
    assert all(p.code != "check.internal" for p in checked.result.problems)
    assert all(outcome in Outcome for _, outcome in checked.result.outcomes)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(MODEL_KEYS_ORDERED + ("x",)), YAML_TEXT, max_size=12))
def test_random_specs_never_crash(data: Dict[str, Any]) -> None:
    text = json.dumps(data)  # JSON is YAML: random structures through the real loader
    checked = check_document(load_bytes(text.encode(), "x.yaml"), load_op_profiles())
    problems = checked.result.problems
    assert all(p.code != "check.internal" for p in problems)
    assert all(p.severity in Severity for p in problems)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_the_command_on_random_bytes_exits_0_1_or_2_with_a_report(repo: Path, raw: bytes) -> None:
    spec = repo / "specs" / "x.yaml"
    spec.write_bytes(raw)
    result = CliRunner().invoke(main, ["check", "--root", str(repo), "--format", "json", str(spec)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code in (0, 1, 2)
    assert json.loads(result.stdout)["exit_code"] == result.exit_code


def test_the_installed_command_works_from_any_folder(tmp_path: Path) -> None:
    command = shutil.which("modelspec", path=str(Path(sys.executable).parent))
    assert command is not None, "modelspec is not installed beside this Python; install the project"
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "ok.yaml").write_text(PRICED, encoding="utf-8")
    import subprocess  # pylint: disable=import-outside-toplevel
    done = subprocess.run([command, "check"], cwd=tmp_path / "specs", capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"}, check=False)
    assert (done.returncode, done.stdout) == (0, "1 file checked, no problems\n")


@pytest.mark.parametrize(("text", "expected"), [
    (LLAMA + "num_key_value_head: 2\n", [
        (9, 1, "schema.unknown-key", "unknown model spec key 'num_key_value_head'; did you mean "
                                     "'num_key_value_heads'?")]),
    (LLAMA + "vision:\n  hidden_size: 8\n  num_hidden_layers: 1\n  num_attention_heads: 1\n  patch_sise: 14\n", [
        (13, 3, "schema.unknown-key", "unknown key in vision: 'patch_sise'; did you mean 'patch_size'?")]),
    (LLAMA + "layers:\n- kind: full_attention\n  cuont: 32\n", [
        (10, 3, "schema.required", "layers[0].count is required and not stated"),
        (11, 3, "schema.unknown-key", "unknown key in layers[0]: 'cuont'; did you mean 'count'?")]),
])
def test_a_near_miss_of_a_key_is_asked_about_by_name(text: str, expected: List[Tuple[int, int, str, str]]) -> None:
    assert problems_of(text) == expected


def test_an_activations_record_of_a_kind_no_layer_has_is_reported_at_its_key() -> None:
    record = "    saved: 1\n    saved_tp: 1\n    working: 1\n    working_tp: 1\n    seq_length: 4096\n"
    text = LLAMA + "layers:\n- kind: full_attention\n  count: 32\nactivations:\n  ghost:\n" + record
    assert problems_of(text) == [(13, 3, "spec.activations-kind",
                                  "activations.ghost is a kind no group of layers has; state layers with that kind, "
                                  "or leave the record out")]


@pytest.mark.parametrize(("name", "code", "message"), [
    ("../../x", "schema.pattern", "name must be letters, digits, '.', '_' and '-', not starting with '.' (it names "
                                  "the spec's artifact file), got '../../x'"),
    (".hidden", "schema.pattern", "name must be letters, digits, '.', '_' and '-', not starting with '.' (it names "
                                  "the spec's artifact file), got '.hidden'"),
    ("index", "schema.enum", "name must not be 'index', which is reserved"),
    ("Index", "schema.enum", "name must not be 'Index', which is reserved"),
    ("x" * 251, "schema.length", "name: '" + "x" * 251 + "' is too long"),
])
def test_a_name_that_is_no_plain_file_name_is_refused(name: str, code: str, message: str) -> None:
    text = PRICED.replace("name: llama-x", f"name: {json.dumps(name)}")
    assert problems_of(text) == [(1, 7, code, message)]


def test_a_checked_spec_cannot_take_the_name_of_one_left_out(repo: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        (repo / "specs" / name).write_text(PRICED, encoding="utf-8")
    code, document = report(repo, repo / "specs" / "a.yaml")
    assert (code, [found(f) for f in document["files"]]) == (1, [[
        (1, 7, "spec.duplicate-name", "error", "name 'llama-x' is also the name of specs/b.yaml; each spec needs "
                                               "its own name (it names its resolved artifact)")]])


def test_a_clash_names_the_specs_left_out_first_then_the_checked_ones(repo: Path) -> None:
    for name in ("a.yaml", "b.yaml", "c.yaml", "d.yaml"):
        (repo / "specs" / name).write_text(PRICED, encoding="utf-8")
    code, document = report(repo, repo / "specs" / "d.yaml", repo / "specs" / "b.yaml")
    assert (code, {f["file"]: [p[4] for p in found(f)] for f in document["files"]}) == (1, {
        "specs/b.yaml": ["name 'llama-x' is also the name of specs/a.yaml, specs/c.yaml, specs/d.yaml; each spec "
                         "needs its own name (it names its resolved artifact)"],
        "specs/d.yaml": ["name 'llama-x' is also the name of specs/a.yaml, specs/c.yaml, specs/b.yaml; each spec "
                         "needs its own name (it names its resolved artifact)"]})


def test_a_clash_with_a_spec_shown_under_the_same_path_names_it(repo: Path) -> None:
    # A control character in a file name is shown escaped, as a name holding the escape itself is: two files,
    # one path in the report. The other is still named, not left out as if it were the file itself.
    for name in ("a\x01.yaml", "a\\x01.yaml"):
        (repo / "specs" / name).write_text(PRICED, encoding="utf-8")
    code, document = report(repo)
    assert (code, [(f["file"], [p[4] for p in found(f)]) for f in document["files"]]) == (1, [
        ("specs/a\\x01.yaml", ["name 'llama-x' is also the name of specs/a\\x01.yaml; each spec needs its own name (it "
                               "names its resolved artifact)"])] * 2)


@pytest.mark.parametrize("named", ["a.yaml", "link.yml"])
@pytest.mark.parametrize("cache", [[], ["--no-cache"]])
def test_a_named_spec_does_not_clash_with_a_link_to_itself(repo: Path, named: str, cache: List[str]) -> None:
    # The catalogue takes a file reached by two names once, so checking it by either name is no duplicate
    # name, as checking the whole catalogue finds none; a copy still clashes.
    (repo / "specs" / "a.yaml").write_text(PRICED, encoding="utf-8")
    (repo / "specs" / "link.yml").symlink_to(repo / "specs" / "a.yaml")
    for _ in range(2):  # the second run from the cache, if any
        assert run_check(repo, *cache, str(repo / "specs" / named)) == (0, "1 file checked, no problems\n")
    assert run_check(repo, *cache) == (0, "1 file checked, no problems\n")
    (repo / "specs" / "copy.yaml").write_text(PRICED, encoding="utf-8")
    code, document = report(repo, repo / "specs" / named)
    assert (code, [found(f) for f in document["files"]]) == (1, [[
        (1, 7, "spec.duplicate-name", "error", "name 'llama-x' is also the name of specs/copy.yaml; each spec needs "
                                               "its own name (it names its resolved artifact)")]])


def test_every_output_is_written_even_when_one_cannot_be(repo: Path) -> None:
    (repo / "specs" / "ok.yaml").write_text(PRICED, encoding="utf-8")
    result = CliRunner().invoke(main, ["check", "--root", str(repo), "--output", f"json={repo / 'no' / 'x.json'}",
                                       "--output", f"sarif={repo / 'good.sarif'}"])
    assert (result.exit_code, (repo / "good.sarif").exists()) == (2, True)
    assert result.stdout == "1 file checked, no problems\n"
    assert f"modelspec: cannot write the report to {repo / 'no' / 'x.json'}: No such file or directory" in \
        result.stderr
