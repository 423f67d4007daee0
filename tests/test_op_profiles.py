"""Tests of the op profile loader, :mod:`pipeline.pricing.op_profiles`.

Every refusal of a broken profile is asserted on a profile written into a
folder of the test's own (``tmp_path``), as the exact ``(file, line, column,
code, message)`` of each :class:`OpProfileError` problem: the strict YAML
reading, the schema, and the rules the schema cannot state. Then the cache
(one load per folder), and the lookups on the bundled profiles: by arch, by
spec name, by Hugging Face ``model_type``, and each kind's op counts.
"""

from __future__ import annotations

import json

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from pipeline.spec.model import ModelSpecError, OpCounts
from pipeline.pricing.op_profiles import (
    CODES,
    VISION_ARCH,
    Assumption,
    LayerKind,
    OpProfile,
    OpProfileError,
    assumable_fields,
    bundled_profiles_dir,
    load_op_profile,
    load_op_profiles,
    resolve_ops,
)
from pipeline.spec.problems import Severity
from pipeline.pricing.weights import NONE, parse_weights

from bundled import ARCHS, LANGUAGE_ARCHS, MODEL_TYPES

_SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "op-profile.schema.json").read_text())


def _enum(definition: str, *properties: str) -> List[str]:
    """The values the op-profile schema allows at ``$defs/<definition>/properties/...`` (the flavours and layouts
    grow with the families: a message lists them as the schema states them)."""
    node = _SCHEMA["$defs"][definition]
    for name in properties:
        node = node["properties"][name]
    return node["enum"]

#: A valid profile of one kind; ``{arch}`` is the file's stem. Line numbers below count from its first line.
GOOD = """\
arch: {arch}
summary: A test family.
source: tests
model_types: [{arch}]
match: ["{arch}-*"]
default: dense
layer_kinds:
  dense:
    attention: full
    ffn: dense
    ops:
      attMM: 4
      attBMM: 2
      ffMM: 3
      softmax: 1
      dropout: 1
      normOp: 2
      gather: 4
      headCast: 1
      ffAct: 1
      linrec: 0
"""
LLAMA_COUNTS = OpCounts(attMM=4, attBMM=2, ffMM=3, softmax=1, dropout=1, normOp=2, gather=4, headCast=1, ffAct=1,
                        linrec=0)
BUNDLED = ARCHS
#: The profiles a message offers for ``arch``: every bundled one but the vision towers'.
ARCH_CHOICES = str(list(LANGUAGE_ARCHS))

#: A problem as ``(file name, line, column, pass, code, message)``.
Found = Tuple[str, int, int, str, str, str]


def write_folder(root: Path, files: Dict[str, str]) -> Path:
    """Write ``{stem: text}`` as ``root/<stem>.yaml`` and return *root*."""
    for stem, text in files.items():
        (root / f"{stem}.yaml").write_text(text, encoding="utf-8")
    return root


def problems_of(root: Path) -> List[Found]:
    """The problems loading *root* raises, with file names relative to it; fails if it raises none."""
    with pytest.raises(OpProfileError) as caught:
        load_op_profiles(root)
    for problem in caught.value.problems:
        assert problem.severity is Severity.ERROR
        assert Path(problem.file).parent == root.resolve()
    return [(Path(p.file).name, p.line, p.column, p.pass_name, p.code, p.message) for p in caught.value.problems]


def good(arch: str = "fam") -> str:
    """The valid profile :data:`GOOD` for *arch*."""
    return GOOD.format(arch=arch)


def edited(old: str, new: str, arch: str = "fam") -> str:
    """:data:`GOOD` with *old* replaced by *new*, once."""
    text = good(arch)
    assert text.count(old) == 1, old
    return text.replace(old, new)


# ---- refusals of a broken profile ---------------------------------------------------------

BROKEN = [
    pytest.param(edited("summary:", "colour: red\nsummary:"), [
        ("fam.yaml", 2, 1, "schema", "profile.invalid",
         "unknown key 'colour' in the top level; the keys are ['arch', 'default', 'import', 'layer_kinds', 'match', "
         "'model_types', 'model_weights', 'mtp_weights', 'source', 'summary', 'vision']")], id="unknown-key"),
    pytest.param(edited("    ffn: dense\n", "    ffn: dense\n    width: 3\n"), [
        ("fam.yaml", 11, 5, "schema", "profile.invalid",
         "unknown key 'width' in layer_kinds.dense; the keys are ['assumes', 'attention', 'ffn', 'ops', 'weights']")],
                 id="unknown-kind-key"),
    # weight inventories: what the schema cannot state (pipeline.pricing.weights.parse_weights)
    pytest.param(edited("      linrec: 0\n", "      linrec: 0\n    weights:\n"
                        "      - {role: q_proj, name: q.weight, part: attention, shape: [hidden_size, hidden_size]}\n"
                        "      - {role: k_proj, name: q.weight, part: attention, shape: [hidden_size, hidden_size]}\n"),
                 [
        ("fam.yaml", 24, 30, "schema", "profile.weights", "'q.weight' is listed twice")], id="weight-listed-twice"),
    pytest.param(edited("      linrec: 0\n", "      linrec: 0\n    weights:\n"
                        "      - {role: q_proj, name: q.weight, part: embedding, shape: [hidden_size, hidden_size]}\n"),
                 [
        ("fam.yaml", 23, 46, "schema", "profile.weights",
         "part 'embedding' is not one of ['attention', 'norms', 'mlp', 'router', 'routed_experts', 'shared_experts', "
         "'shared_expert_gate'] here")], id="weight-part-of-another-place"),
    pytest.param(edited("      linrec: 0\n", "      linrec: 0\n    weights:\n"
                        "      - {role: q_proj, name: q.weight, part: attention, shape: [hidden_size ** 2]}\n"), [
        ("fam.yaml", 23, 65, "schema", "profile.weights",
         "'hidden_size ** 2' uses Pow; a dimension takes + - * // and parentheses only")],
                 id="weight-shape-not-arithmetic"),
    pytest.param(edited("linrec: 0", "linrec: 0\n      convs: 1"), [
        ("fam.yaml", 22, 7, "schema", "profile.invalid",
         "unknown key 'convs' in layer_kinds.dense.ops; the keys are ['attBMM', 'attMM', 'dropout', 'ffAct', 'ffMM', "
         "'gather', 'headCast', 'linrec', 'normOp', 'softmax']")], id="unknown-op"),
    pytest.param(edited("default: dense", "default: moe"), [
        ("fam.yaml", 6, 10, "schema", "profile.default-kind", "default 'moe' is not one of the layer_kinds ['dense']")],
                 id="default-not-a-kind"),
    pytest.param(edited("      linrec: 0\n", ""), [
        ("fam.yaml", 12, 7, "schema", "profile.invalid", "layer_kinds.dense.ops.linrec is required and not stated")],
                 id="kind-missing-an-op"),
    pytest.param(edited("    attention: full\n", ""), [
        ("fam.yaml", 9, 5, "schema", "profile.invalid", "layer_kinds.dense.attention is required and not stated")],
                 id="kind-missing-attention"),
    pytest.param(edited("source: tests\n", ""), [
        ("fam.yaml", 1, 1, "schema", "profile.invalid", "source is required and not stated")], id="missing-source"),
    pytest.param(edited("ffMM: 3", "ffMM: -3"), [
        ("fam.yaml", 14, 13, "schema", "profile.invalid", "layer_kinds.dense.ops.ffMM must be at least 0, got -3")],
                 id="negative-count"),
    pytest.param(edited("attention: full", "attention: ful"), [
        ("fam.yaml", 9, 16, "schema", "profile.invalid",
         f"layer_kinds.dense.attention must be one of {_enum('layerKind', 'attention')}, got 'ful'")],
                 id="bad-attention-flavour"),
    pytest.param(edited("ffn: dense", "ffn: mlp"), [
        ("fam.yaml", 10, 10, "schema", "profile.invalid",
         "layer_kinds.dense.ffn must be one of ['dense', 'moe', 'none'], got 'mlp'")], id="bad-ffn-flavour"),
    pytest.param(good().split("layer_kinds:")[0] + "layer_kinds: {}\n", [
        ("fam.yaml", 7, 14, "schema", "profile.invalid", "layer_kinds must not be empty; leave the key out instead")],
                 id="no-kinds"),
    # counts JSON Schema takes as integers and OpCounts does not
    pytest.param(edited("attMM: 4", "attMM: 4.0"), [
        ("fam.yaml", 12, 14, "schema", "profile.invalid",
         "layer_kinds.dense.ops.attMM must be an integer, got the float 4.0; write 4")], id="integral-float-count"),
    pytest.param(edited("attMM: 4", "attMM: 99999999999999999999999"), [
        ("fam.yaml", 12, 14, "schema", "profile.invalid",
         "layer_kinds.dense.ops.attMM is an integer of 77 bits; no count or width is beyond 2**63 - 1")],
                 id="count-beyond-64-bits"),
    # strict YAML: the reading refuses, and the schema is not asked
    pytest.param(edited("      ffMM: 3\n", "      ffMM: 3\n      ffMM: 3\n"), [
        ("fam.yaml", 15, 7, "load", "yaml.duplicate-key",
         "layer_kinds.dense.ops.ffMM: already stated on line 14; keep one of the two")], id="duplicate-key"),
    pytest.param(edited("linrec: 0", "linrec: yes"), [
        ("fam.yaml", 21, 15, "load", "yaml.ambiguous-bool",
         "layer_kinds.dense.ops.linrec: yes is a boolean in YAML 1.1 but text in YAML 1.2; write true or false "
         "(or quote it if you mean the text)")], id="yes"),
    # a draft of modelspec reference --draft, its questions unanswered: refused before the schema is asked
    pytest.param('draft:\n  - "layer_kinds.kind_1: name this kind"\n  - "import.x: mapped?"\n' + GOOD, [
        ("fam.yaml", 1, 1, "schema", "profile.draft",
         "this op profile is a draft of modelspec reference --draft with 2 open questions under draft; answer each "
         "against the modelling code, then delete the draft key")], id="draft"),
    pytest.param("", [
        ("fam.yaml", 1, 1, "load", "yaml.empty",
         "empty file; a spec is a mapping of fields, one `key: value` per line")], id="empty-file"),
]


def importing(section: str) -> str:
    """:data:`GOOD` with an ``import:`` section of *section*'s lines (indented two spaces), which start on line 7."""
    lines = "".join(f"  {line}\n" for line in section.splitlines())
    return edited("layer_kinds:\n", f"import:\n{lines}layer_kinds:\n")


_LAYOUT = "source: tests\nlayout: {attention: full, ffn: dense}\n"

BROKEN_IMPORT = [
    pytest.param(importing(_LAYOUT + "fixed: {qk_nrom: true}"), [
        ("fam.yaml", 10, 11, "schema", "profile.import", "import.fixed names 'qk_nrom', which is no model spec field")],
                 id="fixed-not-a-field"),
    pytest.param(importing(_LAYOUT + "fixed: {qk_norm: 1}"), [
        ("fam.yaml", 10, 11, "schema", "profile.import", "import.fixed qk_norm must be true or false, not 1")],
                 id="fixed-wrong-type"),
    pytest.param(importing(_LAYOUT + "keys: {n_embd: {field: width, source: x}}"), [
        ("fam.yaml", 10, 19, "schema", "profile.import",
         "import.keys.n_embd maps to 'width', which is no model spec field")], id="key-to-no-field"),
    pytest.param(importing(_LAYOUT + "defaults: {n_inner: 4}"), [
        ("fam.yaml", 10, 14, "schema", "profile.import",
         "import.defaults gives 'n_inner', a key no rule reads; map it under keys first")], id="default-unread"),
    pytest.param(importing(_LAYOUT + "defaults: {intermediate_size: {expression: 4 * width}}"), [
        ("fam.yaml", 10, 34, "schema", "profile.import",
         "import.defaults.intermediate_size: '4 * width' reads width, which is no whole-number model spec field")],
                 id="expression-name"),
    pytest.param(importing(_LAYOUT + "defaults: {intermediate_size: {expression: 2 ** hidden_size}}"), [
        ("fam.yaml", 10, 34, "schema", "profile.import",
         "import.defaults.intermediate_size: '2 ** hidden_size' may use only whole numbers, spec fields, + - * // "
         "and parentheses")], id="expression-operator"),
    pytest.param(importing(_LAYOUT + "keys: {mq: {field: num_key_value_heads, if_true: 1, if_false: {expression: "
                                     "heads}, source: src}}"), [
        ("fam.yaml", 10, 66, "schema", "profile.import",
         "import.keys.mq.if_false: 'heads' reads heads, which is no whole-number model spec field")],
                 id="flag-expression-name"),
    pytest.param(importing(_LAYOUT + "keys: {r: {field: ssm_dt_rank, named: {auto: {expression: width // 16}}, "
                                     "source: src}}"), [
        ("fam.yaml", 10, 49, "schema", "profile.import",
         "import.keys.r.named.auto: 'width // 16' reads width, which is no whole-number model spec field")],
                 id="named-expression-name"),
    pytest.param(importing(_LAYOUT + "keys: {w: {equals: width, source: src}}"), [
        ("fam.yaml", 10, 14, "schema", "profile.import", "import.keys.w equals 'width', which is no model spec field")],
                 id="equals-no-field"),
    pytest.param(importing(_LAYOUT + "keys: {mq: {field: num_key_value_heads, if_true: 1, source: src}}"), [
        ("fam.yaml", 10, 43, "schema", "profile.invalid",
         "import.keys.mq.if_true is stated without if_false; state both or neither")],
                 id="flag-one-branch"),
    pytest.param(importing(_LAYOUT + "keys: {x: {field: hidden_size, source: src}}\nignored: {x: why}"), [
        ("fam.yaml", 11, 13, "schema", "profile.import", "import.ignored.x is also mapped under keys; keep one")],
                 id="mapped-and-ignored"),
    pytest.param(importing("source: tests\nlayout: {attention: slide, ffn: dense}"), [
        ("fam.yaml", 9, 23, "schema", "profile.invalid",
         f"import.layout.attention must be one of {_enum('family', 'layout', 'attention')}, got 'slide'")],
                 id="unknown-layout"),
    pytest.param(importing(_LAYOUT + "keys: {x: {source: src}}"), [
        ("fam.yaml", 10, 13, "schema", "profile.invalid", "import.keys.x.field is required and not stated")],
                 id="key-of-nothing"),
    pytest.param(importing(_LAYOUT + "defaults: {parallel_attn: true}\nkeys: {parallel_attn: {field: qkv_bias, "
                                     "source: s}}\nunrunnable: [{when: {paralel_attn: false}, source: s}]"), [
        ("fam.yaml", 12, 24, "schema", "profile.import",
         "import.unrunnable[0] reads 'paralel_attn', which the section names nowhere else; name it under keys, "
         "defaults, ignored or a variant first")], id="unrunnable-misspelt-key"),
    pytest.param(importing(_LAYOUT + "keys: {x: {field: hidden_size, source: src}}\nnull_false: {x: why}"), [
        ("fam.yaml", 11, 16, "schema", "profile.import",
         "import.null_false names 'x', which is no true-or-false key of keys (if_true, if_false)")],
                 id="null-false-not-a-flag"),
    pytest.param(importing(_LAYOUT + "unrunnable: [{when: {x: {in: [1]}}, source: s}]"), [
        ("fam.yaml", 10, 27, "schema", "profile.invalid", "import.unrunnable[0].when.x.not_in is required and not stated"),
        ("fam.yaml", 10, 28, "schema", "profile.invalid",
         "unknown key 'in' in import.unrunnable[0].when.x; the keys are ['not_in']")], id="unrunnable-unknown-condition"),
]


@pytest.mark.parametrize("text, expected", BROKEN_IMPORT)
def test_a_broken_import_section_is_refused_at_its_entry(tmp_path: Path, text: str, expected: List[Found]) -> None:
    assert problems_of(write_folder(tmp_path, {"fam": text})) == expected


@pytest.mark.parametrize("text, expected", BROKEN)
def test_a_broken_profile_is_refused(tmp_path: Path, text: str, expected: List[Found]) -> None:
    assert problems_of(write_folder(tmp_path, {"fam": text})) == expected


def assuming(entries: str, arch: str = "fam") -> str:
    """:data:`GOOD` for *arch* whose kind states ``assumes:`` with *entries*, one ``field: value`` per line.

    The entries start on line 12, the first after ``    assumes:``.
    """
    lines = "".join(f"      {entry}\n" for entry in entries.splitlines())
    return edited("    ffn: dense\n", f"    ffn: dense\n    assumes:\n{lines}", arch)


#: What the field checks of ``assumes`` say before the entry's own words.
AT = "layer_kinds.dense.assumes: "

ASSUMES_REFUSED = [
    # a typo, at the key, with the field it was meant to be
    pytest.param("fam", "qk_nrom: true", [
        ("fam.yaml", 12, 7, "schema", "profile.assumes-field",
         AT + "'qk_nrom' is not a flag or a count of a model spec, so no spec could contradict it; did you mean "
              "'qk_norm'?")], id="typo"),
    pytest.param("fam", "colour: true", [
        ("fam.yaml", 12, 7, "schema", "profile.assumes-field",
         AT + "'colour' is not a flag or a count of a model spec, so no spec could contradict it")],
                 id="no-such-field"),
    # a field of the spec that is no flag or count
    pytest.param("fam", "torch_dtype: stated", [
        ("fam.yaml", 12, 7, "schema", "profile.assumes-field",
         AT + "'torch_dtype' is not a flag or a count of a model spec, so no spec could contradict it")],
                 id="not-a-flag-or-count"),
    pytest.param("fam", "layers: stated", [
        ("fam.yaml", 12, 7, "schema", "profile.assumes-field",
         AT + "'layers' is not a flag or a count of a model spec, so no spec could contradict it; did you mean "
              "'layer_norms'?")], id="a-list-field"),
    # values of the wrong type, at the value
    pytest.param("fam", "qk_norm: 1", [
        ("fam.yaml", 12, 16, "schema", "profile.assumes-value",
         AT + "qk_norm is a flag: assume true, false or stated, not 1")], id="count-for-a-flag"),
    pytest.param("fam", "num_shared_experts: true", [
        ("fam.yaml", 12, 27, "schema", "profile.assumes-value",
         AT + "num_shared_experts is a count a spec states as a whole number from 0: assume one, or stated, not "
              "True")], id="flag-for-a-count"),
    pytest.param("fam", "num_shared_experts: 1.0", [
        ("fam.yaml", 12, 27, "schema", "profile.assumes-value",
         AT + "num_shared_experts is a count a spec states as a whole number from 0: assume one, or stated, not "
              "1.0")], id="integral-float"),
    # 0 is a value only a count that may be 0 has; a spec cannot state q_lora_rank: 0
    pytest.param("fam", "q_lora_rank: 0", [
        ("fam.yaml", 12, 20, "schema", "profile.assumes-value",
         AT + "q_lora_rank is a count a spec states as a whole number from 1: assume one, or stated, not 0")],
                 id="zero-for-a-positive-count"),
    # a text other than stated
    pytest.param("fam", "q_lora_rank: present", [
        ("fam.yaml", 12, 20, "schema", "profile.assumes-value",
         AT + "q_lora_rank is a count a spec states as a whole number from 1: assume one, or stated, not "
              "'present'")], id="other-text"),
    pytest.param("fam", "qk_norm: yes please", [
        ("fam.yaml", 12, 16, "schema", "profile.assumes-value",
         AT + "qk_norm is a flag: assume true, false or stated, not 'yes please'")], id="other-text-for-a-flag"),
    # the schema: a negative count
    pytest.param("fam", "first_k_dense_replace: -1", [
        ("fam.yaml", 12, 30, "schema", "profile.invalid",
         "layer_kinds.dense.assumes.first_k_dense_replace must be at least 0, got -1")], id="negative"),
    # the vision profile's fields are a tower's
    pytest.param("vision", "qk_norm: true", [
        ("vision.yaml", 12, 7, "schema", "profile.assumes-field",
         AT + "'qk_norm' is not a flag or a count of a vision tower, so no spec could contradict it")],
                 id="vision-takes-tower-fields"),
    # every bad entry at once, each at its own line
    pytest.param("fam", "qk_norm: 2\nnum_shared_experts: stated\nqkv_bais: false\nhead_dim: 0", [
        ("fam.yaml", 12, 16, "schema", "profile.assumes-value",
         AT + "qk_norm is a flag: assume true, false or stated, not 2"),
        ("fam.yaml", 14, 7, "schema", "profile.assumes-field",
         AT + "'qkv_bais' is not a flag or a count of a model spec, so no spec could contradict it; did you mean "
              "'qkv_bias'?"),
        ("fam.yaml", 15, 17, "schema", "profile.assumes-value",
         AT + "head_dim is a count a spec states as a whole number from 1: assume one, or stated, not 0"),
    ], id="every-entry"),
    # the schema first: its problems stop the rules
    pytest.param("fam", "qk_norm: 2\nnum_shared_experts: -2", [
        ("fam.yaml", 13, 27, "schema", "profile.invalid",
         "layer_kinds.dense.assumes.num_shared_experts must be at least 0, got -2"),
    ], id="schema-first"),
]


@pytest.mark.parametrize("arch, entries, expected", ASSUMES_REFUSED)
def test_a_bad_assumption_is_refused(tmp_path: Path, arch: str, entries: str, expected: List[Found]) -> None:
    assert problems_of(write_folder(tmp_path, {arch: assuming(entries, arch)})) == expected


def test_assumptions_load_in_file_order(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": assuming("q_lora_rank: stated\nqk_norm: false\nnum_shared_experts: 0"),
                            "vision": assuming("intermediate_size: 4304", "vision")})
    profiles = load_op_profiles(tmp_path)
    assert profiles.get("fam").layer_kinds["dense"].assumes == (
        Assumption("q_lora_rank", "stated"), Assumption("qk_norm", False), Assumption("num_shared_experts", 0))
    assert profiles.get("vision").layer_kinds["dense"].assumes == (Assumption("intermediate_size", 4304),)


@pytest.mark.parametrize("assumption, stated, holds", [
    # a flag: the value, or absent, which is unstated and leaves the counts to decide
    (Assumption("qk_norm", True), True, True),
    (Assumption("qk_norm", True), False, False),
    (Assumption("qk_norm", False), None, True),
    # a count whose absence is 0 for pricing
    (Assumption("num_shared_experts", 1), 1, True),
    (Assumption("num_shared_experts", 1), 2, False),
    (Assumption("num_shared_experts", 1), None, False),
    (Assumption("num_shared_experts", 0), None, True),
    (Assumption("num_shared_experts", 0), 0, True),
    # another count: absent is unstated
    (Assumption("head_dim", 128), None, True),
    (Assumption("head_dim", 128), 64, False),
    # stated: any value, never absent
    (Assumption("q_lora_rank", "stated"), 1536, True),
    (Assumption("q_lora_rank", "stated"), None, False),
    (Assumption("num_shared_experts", "stated"), None, False),
    (Assumption("num_shared_experts", "stated"), 0, True),
    # a count of 1 is not the flag true, though Python finds them equal
    (Assumption("num_shared_experts", 1), True, False),
])
def test_assumption_holds_for(assumption: Assumption, stated: Any, holds: bool) -> None:
    assert assumption.holds_for(stated) is holds


def test_assumable_fields_are_the_flags_and_counts() -> None:
    spec_fields = assumable_fields("model spec")
    assert (spec_fields["qk_norm"], spec_fields["num_shared_experts"], spec_fields["hidden_size"]) == (bool, int, int)
    assert [name for name in ("name", "arch", "torch_dtype", "ffn_dim_multiplier", "layers", "ops", "vision")
            if name in spec_fields] == []
    assert dict(assumable_fields("vision tower")) == {
        "hidden_size": int, "num_hidden_layers": int, "num_attention_heads": int, "intermediate_size": int,
        "out_hidden_size": int, "projector_input_dim": int, "projector_output_dim": int, "patch_size": int, "spatial_merge_size": int, "num_position_embeddings": int,
        "num_deepstack_mergers": int, "max_num_tiles": int, "num_aspect_ratios": int, "max_position_embeddings": int,
        "in_channels": int, "temporal_patch_size": int, "pooling_head": bool, "projector_bias": bool}


def test_an_arch_that_is_not_the_file_stem_is_refused(tmp_path: Path) -> None:
    write_folder(tmp_path, {"other": good("fam")})
    assert problems_of(tmp_path) == [
        ("other.yaml", 1, 7, "schema", "profile.arch-stem",
         "arch is 'fam' but the file is other.yaml; write arch: other")]


def test_both_rules_the_schema_cannot_state_are_reported_together(tmp_path: Path) -> None:
    write_folder(tmp_path, {"other": good("fam").replace("default: dense", "default: moe")})
    assert [(line, column, code) for _, line, column, _, code, _ in problems_of(tmp_path)] == [
        (1, 7, "profile.arch-stem"), (6, 10, "profile.default-kind")]


def test_two_profiles_claiming_one_model_type_are_refused(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": good("fam"),
                            "kin": edited("model_types: [kin]", "model_types: [kin, fam]", arch="kin")})
    assert problems_of(tmp_path) == [
        ("kin.yaml", 4, 20, "schema", "profile.model-type-twice",
         "model_type 'fam' is claimed by both fam and kin; keep it in one profile")]


def test_a_model_type_three_profiles_claim_names_its_first_owner(tmp_path: Path) -> None:
    write_folder(tmp_path, {"a": good("a"), "b": edited("model_types: [b]", "model_types: [a]", arch="b"),
                            "c": edited("model_types: [c]", "model_types: [c, a]", arch="c"),
                            "d": edited("ffn: dense", "ffn: mlp", arch="d")})
    # the clashes are found after every file is read, and still reported in file order
    assert [(name, line, column, code, message) for name, line, column, _, code, message in problems_of(tmp_path)] == [
        ("b.yaml", 4, 15, "profile.model-type-twice",
         "model_type 'a' is claimed by both a and b; keep it in one profile"),
        ("c.yaml", 4, 18, "profile.model-type-twice",
         "model_type 'a' is claimed by both a and c; keep it in one profile"),
        ("d.yaml", 10, 10, "profile.invalid",
         "layer_kinds.dense.ffn must be one of ['dense', 'moe', 'none'], got 'mlp'"),
    ]


def test_every_broken_file_of_a_folder_is_reported_in_file_order(tmp_path: Path) -> None:
    write_folder(tmp_path, {"b": edited("ffn: dense", "ffn: mlp", arch="b"),
                            "a": edited("linrec: 0", "linrec: on", arch="a"),
                            "c": good("c")})
    assert [(name, line, code) for name, line, _, _, code, _ in problems_of(tmp_path)] == [
        ("a.yaml", 21, "yaml.ambiguous-bool"), ("b.yaml", 10, "profile.invalid")]


def test_op_profile_error_message(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": edited("ffn: dense", "ffn: mlp"), "kin": good("fam")})
    with pytest.raises(OpProfileError) as caught:
        load_op_profiles(tmp_path)
    root = tmp_path.resolve()
    assert str(caught.value) == (
        f"{root}/fam.yaml:10:10: [profile.invalid] layer_kinds.dense.ffn must be one of ['dense', 'moe', 'none'], "
        "got 'mlp'\n"
        f"{root}/kin.yaml:1:7: [profile.arch-stem] arch is 'fam' but the file is kin.yaml; write arch: kin")


def test_a_refusal_is_not_cached(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": edited("ffn: dense", "ffn: mlp")})
    assert [code for *_, code, _ in problems_of(tmp_path)] == ["profile.invalid"]
    write_folder(tmp_path, {"fam": good()})
    assert list(load_op_profiles(tmp_path).profiles) == ["fam"]


# ---- what a good folder loads as ---------------------------------------------------------------


def test_a_good_profile_loads_as_written(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": good(), "kin": edited("default: dense\n", "", arch="kin")})
    (tmp_path / "README.md").write_text("not a profile", encoding="utf-8")
    profiles = load_op_profiles(tmp_path)
    assert profiles.root == tmp_path.resolve()
    assert list(profiles.profiles) == ["fam", "kin"]
    # A profile that lists no tensors loads each inventory as the empty one, the records' default.
    assert profiles.get("fam") == OpProfile(
        "fam", "A test family.", "tests", ("fam",), ("fam-*",), "dense",
        {"dense": LayerKind("dense", LLAMA_COUNTS, "full", "dense")}, tmp_path.resolve() / "fam.yaml")
    assert parse_weights((), ()) is NONE and (len(NONE), list(NONE)) == (0, [])
    assert profiles.get("kin").default is None


def test_an_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OpProfileError) as caught:
        load_op_profiles(tmp_path)
    assert [(p.code, p.message) for p in caught.value.problems] == [(
        "profile.none", f"{tmp_path.resolve()} holds no op profile (*.yaml); add the families' profiles, or remove "
                        "the folder to use the ones bundled with modelspec")]


# ---- the cache ---------------------------------------------------------------------------------


def test_the_same_folder_loads_once(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": good()})
    first = load_op_profiles(tmp_path)
    assert load_op_profiles(tmp_path) is first
    (tmp_path / "sub").mkdir()
    assert load_op_profiles(tmp_path / "sub" / "..") is first
    # once loaded, a folder is not read again in this process
    write_folder(tmp_path, {"fam": edited("ffn: dense", "ffn: mlp")})
    assert load_op_profiles(tmp_path) is first


def test_different_folders_are_independent(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one = write_folder(tmp_path / "one", {"fam": good()})
    two = write_folder(tmp_path / "two", {"kin": good("kin")})
    assert (list(load_op_profiles(one).profiles), list(load_op_profiles(two).profiles)) == (["fam"], ["kin"])
    assert load_op_profiles(one) is not load_op_profiles(two)


def test_the_bundled_folder_is_the_default() -> None:
    assert load_op_profiles() is load_op_profiles(bundled_profiles_dir())
    assert tuple(load_op_profiles().profiles) == BUNDLED
    assert load_op_profile("llama") is load_op_profiles().profiles["llama"]


# ---- lookups on the bundled profiles -------------------------------------------------------------


def test_get_refuses_an_unknown_arch() -> None:
    with pytest.raises(ModelSpecError) as caught:
        load_op_profile("bert")
    assert [(i.path, i.code, i.message) for i in caught.value.issues] == [
        (("arch",), "stack.unknown-arch", f"arch 'bert' names no op profile; the profiles are {ARCH_CHOICES}")]


@pytest.mark.parametrize("name, arch", [
    ("deepseek-v3", "deepseek_v3"),
    ("kimi-k2-instruct", "deepseek_v3"),
    ("Qwen3-30B-A3B", "qwen3_moe"),
    ("qwen3.5-35b-a3b", "qwen3_5_moe"),
    ("qwen3.5-27b", "qwen3_5"),
    ("t5-base", "t5"),
])
def test_infer_arch(name: str, arch: str) -> None:
    assert load_op_profiles().infer_arch(name) == arch


def test_infer_arch_refuses_a_name_no_profile_matches() -> None:
    with pytest.raises(ModelSpecError) as caught:
        load_op_profiles().infer_arch("flan-t5-base")
    assert [(i.path, i.code, i.message) for i in caught.value.issues] == [
        (("name",), "stack.no-arch",
         "no arch is stated and no op profile's match pattern fits the name 'flan-t5-base', so the layer stack "
         f"cannot be resolved; state arch: one of {ARCH_CHOICES}")]


def test_infer_arch_refuses_a_name_several_profiles_match(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": good(), "kin": edited('match: ["kin-*"]', 'match: ["fam-x*", "kin-*"]', "kin")})
    with pytest.raises(ModelSpecError) as caught:
        load_op_profiles(tmp_path).infer_arch("FAM-X1")
    assert [(i.path, i.code, i.message) for i in caught.value.issues] == [
        (("name",), "stack.ambiguous-arch",
         "no arch is stated and the name 'FAM-X1' matches the profiles ['fam', 'kin']; state arch: one of them")]


@pytest.mark.parametrize("model_type, arch", [
    ("kimi_k2", "deepseek_v3"),
    ("deepseek_v3", "deepseek_v3"),
    ("qwen3_5_moe_text", "qwen3_5_moe"),
    ("gemma3_text", "gemma3"),
    ("t5", "t5"),
])
def test_for_model_type(model_type: str, arch: str) -> None:
    assert load_op_profiles().for_model_type(model_type).arch == arch


def test_for_model_type_refuses_an_unknown_type_naming_the_known_ones() -> None:
    with pytest.raises(ModelSpecError) as caught:
        load_op_profiles().for_model_type("bert")
    assert [(i.path, i.code, i.message) for i in caught.value.issues] == [
        (("model_type",), "stack.unknown-arch",
         f"no op profile prices model_type 'bert'; the known model types are {list(MODEL_TYPES)}")]


DECLARED = OpCounts(attMM=9, attBMM=9, ffMM=9, softmax=9, dropout=9, normOp=9, gather=9, headCast=9, ffAct=9,
                    linrec=9)


@pytest.mark.parametrize("arch, ops, expected", [
    pytest.param("llama", None, {"full_attention": LLAMA_COUNTS}, id="profile-counts"),
    pytest.param("llama", {"full_attention": DECLARED}, {"full_attention": DECLARED}, id="declared-replace"),
    pytest.param("t5", {"decoder": DECLARED}, {
        "encoder": OpCounts(attMM=4, attBMM=2, ffMM=2, softmax=1, dropout=4, normOp=2, gather=4, headCast=0, ffAct=1,
                            linrec=0),
        "decoder": DECLARED,
        "gated_encoder": OpCounts(attMM=4, attBMM=2, ffMM=3, softmax=1, dropout=4, normOp=2, gather=4, headCast=0,
                                  ffAct=1, linrec=0),
        "gated_decoder": OpCounts(attMM=8, attBMM=4, ffMM=3, softmax=2, dropout=6, normOp=3, gather=6, headCast=0,
                                  ffAct=1, linrec=0)}, id="declared-replace-one-kind"),
])
def test_resolve_ops(arch: str, ops: Optional[Dict[str, OpCounts]], expected: Dict[str, OpCounts]) -> None:
    assert resolve_ops(arch, ops) == expected


@pytest.mark.parametrize("arch, ops, expected", [
    pytest.param("llama", {"moe": DECLARED}, [
        (("ops", "moe"), "stack.ops-kind",
         "ops.moe names a kind op profile 'llama' does not have; its kinds are ['full_attention']")], id="ops-kind"),
    pytest.param("bert", None, [
        (("arch",), "stack.unknown-arch", f"arch 'bert' names no op profile; the profiles are {ARCH_CHOICES}")],
                 id="unknown-arch"),
])
def test_resolve_ops_refuses(arch: str, ops: Any, expected: List[Tuple[Any, ...]]) -> None:
    with pytest.raises(ModelSpecError) as caught:
        resolve_ops(arch, ops)
    assert [(i.path, i.code, i.message) for i in caught.value.issues] == expected


def test_resolve_ops_of_another_folder(tmp_path: Path) -> None:
    write_folder(tmp_path, {"fam": good()})
    assert resolve_ops("fam", root=tmp_path) == {"dense": LLAMA_COUNTS}


def test_the_vision_profile() -> None:
    vision = load_op_profile(VISION_ARCH)
    assert (VISION_ARCH, vision.arch, vision.default, vision.match, vision.model_types) == (
        "vision", "vision", "encoder", (), ())
    assert [(k.name, k.attention, k.ffn, k.ops.ffMM) for k in vision.layer_kinds.values()] == [
        ("encoder", "full", "dense", 2), ("gated_encoder", "full", "dense", 3),
        ("window_encoder", "sliding", "dense", 3), ("uncast_encoder", "full", "dense", 2),
        ("global_encoder", "full", "dense", 2)]


def test_matches_compares_the_name_lower_cased() -> None:
    profile = load_op_profile("mixtral")
    assert (profile.matches("Mixtral-8x7B-Instruct-v0.1"), profile.matches("mistral-7b")) == (True, False)


def test_codes() -> None:
    assert sorted(CODES) == ["profile.arch-stem", "profile.assumes-field", "profile.assumes-value",
                             "profile.default-kind", "profile.draft", "profile.import", "profile.invalid",
                             "profile.model-type-twice", "profile.none", "profile.weights", "stack.ambiguous-arch", "stack.no-arch",
                             "stack.ops-kind", "stack.unknown-arch"]
