"""Tests of the layer stack, :mod:`pipeline.stack`.

Three parts. The rules, each on a small profile built in the test (so a
rule is pinned whatever the bundled files say): :func:`derive_layers`,
:func:`resolve_layers`, :func:`spec_layer_stack` and
:func:`tower_layer_stack`, every refusal and warning as its exact
``(path, code, message)``. Then real models' stacks, exactly, from specs
written here with the numbers of their published ``config.json`` files and
resolved against the bundled op profiles. Last, what importing the library
costs in modules: it must not import the command line's or the loaders'
dependencies.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pytest

from pipeline.model import LayerGroup, ModelSpec, ModelSpecError, OpCounts, SpecIssue, VisionSpec
from pipeline.op_profiles import LayerKind, OpProfile, OpProfiles, load_op_profile
from pipeline.stack import (
    CODES,
    LayerStack,
    LinearAttentionDims,
    StackGroup,
    derive_layers,
    resolve_kinds,
    resolve_layers,
    spec_arch,
    spec_layer_stack,
    tower_layer_stack,
)

Issue = Tuple[Tuple[Any, ...], str, str]
#: A group as ``(kind, count, mtp)``.
Group = Tuple[str, int, bool]

# ---- small profiles, built here ---------------------------------------------------

#: Distinct counts per kind, so a test can tell which kind's counts it got.
COUNTS_A = OpCounts(attMM=4, attBMM=2, ffMM=3, softmax=1, dropout=1, normOp=2, gather=4, headCast=1, ffAct=1,
                    linrec=0)
COUNTS_B = OpCounts(attMM=7, attBMM=0, ffMM=3, softmax=0, dropout=0, normOp=3, gather=4, headCast=0, ffAct=1,
                    linrec=1)
COUNTS_C = OpCounts(attMM=5, attBMM=2, ffMM=7, softmax=2, dropout=1, normOp=4, gather=4, headCast=1, ffAct=2,
                    linrec=0)
#: Counts no profile has, for declared ``ops``.
DECLARED = OpCounts(attMM=9, attBMM=9, ffMM=9, softmax=9, dropout=9, normOp=9, gather=9, headCast=9, ffAct=9,
                    linrec=9)

LINEAR = {"linear_num_key_heads": 16, "linear_key_head_dim": 128, "linear_num_value_heads": 32,
          "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4}
LINEAR_DIMS = LinearAttentionDims(16, 128, 32, 128, 4)


def _profile(arch: str, kinds: Sequence[Tuple[str, str, str, OpCounts]], default: Optional[str] = None,
             match: Tuple[str, ...] = ()) -> OpProfile:
    """A profile of *kinds* ``(name, attention, ffn, counts)``, in that order."""
    return OpProfile(arch, f"{arch} family.", "tests", (arch,), match, default,
                     {name: LayerKind(name, counts, attention, ffn) for name, attention, ffn, counts in kinds},
                     Path(f"{arch}.yaml"))


#: One kind, the default (Llama-like).
PLAIN = _profile("plain", [("full_attention", "full", "dense", COUNTS_A)], default="full_attention",
                 match=("plain-*",))
#: Two kinds named as ``layer_types`` names them, no default (Qwen3.5-like).
HYBRID = _profile("hybrid", [("linear_attention", "linear", "dense", COUNTS_B),
                             ("full_attention", "full", "dense", COUNTS_A)], match=("hybrid-*",))
#: Dense then MoE, no default (DeepSeek-like).
DENSE_MOE = _profile("densemoe", [("dense", "mla", "dense", COUNTS_A), ("moe", "mla", "moe", COUNTS_C)])
#: Dense then MoE with a default (Qwen3-MoE-like): the structural rule still wins.
DENSE_MOE_DEFAULT = _profile("densemoed", [("dense", "full", "dense", COUNTS_A), ("moe", "full", "moe", COUNTS_C)],
                             default="moe")
#: Encoder and decoder halves (T5-like).
ENC_DEC = _profile("encdec", [("encoder", "full", "dense", COUNTS_A), ("decoder", "full", "dense", COUNTS_C)])
#: Sliding and full attention, no default (gpt-oss-like, with dense feed-forwards).
SLIDING = _profile("sliding", [("sliding_attention", "sliding", "dense", COUNTS_A),
                               ("full_attention", "full", "dense", COUNTS_C)])
#: A second profile whose pattern also fits ``plain-*`` names.
PLAIN_TOO = _profile("plaintoo", [("full_attention", "full", "dense", COUNTS_A)], default="full_attention",
                     match=("plain-x*",))

PROFILES = OpProfiles(Path("profiles"), {p.arch: p for p in (PLAIN, HYBRID, DENSE_MOE, DENSE_MOE_DEFAULT,
                                                             ENC_DEC, SLIDING)})
AMBIGUOUS = OpProfiles(Path("ambiguous"), {p.arch: p for p in (PLAIN, PLAIN_TOO)})
PROFILE_NAMES = "['densemoe', 'densemoed', 'encdec', 'hybrid', 'plain', 'sliding']"


def groups_of(layers: Sequence[LayerGroup]) -> List[Group]:
    """Groups as comparable ``(kind, count, mtp)`` triples."""
    return [(group.kind, group.count, group.mtp) for group in layers]


def stack_groups(stack: LayerStack) -> List[Group]:
    """A resolved stack's groups as ``(kind, count, mtp)`` triples."""
    return [(group.kind.name, group.count, group.mtp) for group in stack.groups]


def as_issues(issues: Sequence[SpecIssue]) -> List[Issue]:
    """Issues as ``(path, code, message)`` triples."""
    return [(issue.path, issue.code, issue.message) for issue in issues]


def issues_of(call: Any, *args: Any, **kwargs: Any) -> List[Issue]:
    """The ``(path, code, message)`` of every issue ``call`` raises; fails if it raises none."""
    with pytest.raises(ModelSpecError) as caught:
        call(*args, **kwargs)
    return as_issues(caught.value.issues)


def spec(**fields: Any) -> ModelSpec:
    """A valid spec: the required fields of a small model, then *fields*."""
    data: Dict[str, Any] = {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
                            "vocab_size": 100, "intermediate_size": 128}
    data.update(fields)
    return ModelSpec.from_dict({key: value for key, value in data.items() if value is not None})


# ---- derive_layers ------------------------------------------------------------------

LIN, FULL, SLIDE = "linear_attention", "full_attention", "sliding_attention"

DERIVED = [
    # layer_types names each layer's kind when the profile has those kinds, in runs
    pytest.param(HYBRID, 4, 0, (LIN, LIN, FULL, LIN), 0, [(LIN, 2, False), (FULL, 1, False), (LIN, 1, False)],
                 id="layer-types"),
    pytest.param(HYBRID, 4, 2, (LIN, LIN, LIN, FULL), 0, [(LIN, 3, False), (FULL, 1, False), (FULL, 2, True)],
                 id="layer-types-then-mtp-repeats-the-last"),
    pytest.param(HYBRID, 2, 1, (FULL, LIN), 0, [(FULL, 1, False), (LIN, 1, False), (LIN, 1, True)],
                 id="mtp-repeats-a-linear-last-kind"),
    # layer_types wins over the dense-then-MoE rule (Qwen3-MoE's mlp_only_layers, written out)
    pytest.param(DENSE_MOE, 3, 0, ("dense", "moe", "dense"), 2, [("dense", 1, False), ("moe", 1, False),
                                                                  ("dense", 1, False)],
                 id="layer-types-over-first-k-dense"),
    # dense then MoE by first_k_dense_replace
    pytest.param(DENSE_MOE, 61, 0, None, 0, [("moe", 61, False)], id="first-k-dense-0"),
    pytest.param(DENSE_MOE, 61, 0, None, 3, [("dense", 3, False), ("moe", 58, False)], id="first-k-dense-3"),
    pytest.param(DENSE_MOE, 61, 0, None, 61, [("dense", 61, False)], id="first-k-dense-all"),
    pytest.param(DENSE_MOE, 4, 0, None, 9, [("dense", 4, False)], id="first-k-dense-beyond-the-body-is-cut"),
    pytest.param(DENSE_MOE, 4, 0, None, -1, [("moe", 4, False)], id="first-k-dense-below-zero-is-none"),
    pytest.param(DENSE_MOE, 61, 1, None, 3, [("dense", 3, False), ("moe", 58, False), ("moe", 1, True)],
                 id="first-k-dense-then-mtp-moe"),
    pytest.param(DENSE_MOE, 4, 1, None, 4, [("dense", 4, False), ("dense", 1, True)], id="all-dense-then-mtp-dense"),
    pytest.param(DENSE_MOE_DEFAULT, 4, 0, None, 1, [("dense", 1, False), ("moe", 3, False)],
                 id="first-k-dense-over-a-default"),
    # encoder and decoder halves
    pytest.param(ENC_DEC, 24, 0, None, 0, [("encoder", 12, False), ("decoder", 12, False)], id="halves"),
    pytest.param(ENC_DEC, 2, 0, None, 0, [("encoder", 1, False), ("decoder", 1, False)], id="halves-of-two"),
    pytest.param(ENC_DEC, 0, 0, None, 0, [], id="halves-of-nothing"),
    # the default kind throughout
    pytest.param(PLAIN, 32, 0, None, 0, [(FULL, 32, False)], id="default"),
    pytest.param(PLAIN, 32, 0, None, 5, [(FULL, 32, False)], id="default-ignores-first-k-dense"),
    pytest.param(PLAIN, 32, 2, None, 0, [(FULL, 32, False), (FULL, 2, True)], id="default-then-mtp"),
    # MTP with an empty body takes the default
    pytest.param(PLAIN, 0, 1, None, 0, [(FULL, 1, True)], id="mtp-of-an-empty-body-is-the-default"),
    pytest.param(PLAIN, 0, 0, None, 0, [], id="nothing"),
]


@pytest.mark.parametrize("profile, num_layers, mtp, layer_types, first_k, expected", DERIVED)
def test_derive_layers(profile: OpProfile, num_layers: int, mtp: int, layer_types: Optional[Tuple[str, ...]],
                       first_k: int, expected: List[Group]) -> None:
    warnings: List[SpecIssue] = []
    layers = derive_layers(profile, num_layers, mtp, layer_types=layer_types, first_k_dense=first_k,
                           warnings=warnings)
    assert groups_of(layers) == expected
    assert warnings == []


UNKNOWN_TYPES = ("layer_types names ['sliding_attention'], which op profile {arch!r} does not have (its kinds are "
                 "{kinds}); the stack is derived from the profile's other rules instead")

DERIVED_WITH_WARNINGS = [
    # a profile that lacks the kinds: a warning, and the other rules give the stack
    pytest.param(PLAIN, 4, 0, (SLIDE, FULL, SLIDE, FULL), 0, [(FULL, 4, False)], [
        (("layer_types",), "stack.layer-types-unknown",
         UNKNOWN_TYPES.format(arch="plain", kinds="['full_attention']"))], id="unknown-falls-back-to-default"),
    pytest.param(DENSE_MOE, 4, 1, (SLIDE, SLIDE, SLIDE, SLIDE), 1,
                 [("dense", 1, False), ("moe", 3, False), ("moe", 1, True)], [
        (("layer_types",), "stack.layer-types-unknown",
         UNKNOWN_TYPES.format(arch="densemoe", kinds="['dense', 'moe']"))], id="unknown-falls-back-to-dense-moe"),
    # longer than the body: a warning, and the list is cut to the body
    pytest.param(HYBRID, 3, 0, (LIN, LIN, FULL, LIN, LIN), 0, [(LIN, 2, False), (FULL, 1, False)], [
        (("layer_types",), "stack.layer-types-long",
         "layer_types lists 5 layers, but num_hidden_layers is 3; the last 2 are ignored")], id="long-truncated"),
    # a name the profile lacks past the body is ignored with the rest, not reported as unknown
    pytest.param(HYBRID, 2, 1, (LIN, FULL, SLIDE), 0, [(LIN, 1, False), (FULL, 1, False), (FULL, 1, True)], [
        (("layer_types",), "stack.layer-types-long",
         "layer_types lists 3 layers, but num_hidden_layers is 2; the last 1 are ignored")],
                 id="long-unknown-tail-ignored"),
    # both at once
    pytest.param(PLAIN, 1, 0, (SLIDE, FULL), 0, [(FULL, 1, False)], [
        (("layer_types",), "stack.layer-types-long",
         "layer_types lists 2 layers, but num_hidden_layers is 1; the last 1 are ignored"),
        (("layer_types",), "stack.layer-types-unknown",
         UNKNOWN_TYPES.format(arch="plain", kinds="['full_attention']"))], id="long-and-unknown"),
]


@pytest.mark.parametrize("profile, num_layers, mtp, layer_types, first_k, expected, expected_warnings",
                         DERIVED_WITH_WARNINGS)
def test_derive_layers_warns(profile: OpProfile, num_layers: int, mtp: int, layer_types: Tuple[str, ...],
                             first_k: int, expected: List[Group], expected_warnings: List[Issue]) -> None:
    warnings: List[SpecIssue] = []
    layers = derive_layers(profile, num_layers, mtp, layer_types=layer_types, first_k_dense=first_k,
                           warnings=warnings)
    assert groups_of(layers) == expected
    assert as_issues(warnings) == expected_warnings


def test_derive_layers_warns_before_a_fallback_refuses() -> None:
    # the hybrid profile has no default, so the fallback refuses; the warning says why it was needed
    warnings: List[SpecIssue] = []
    assert [code for _, code, _ in issues_of(derive_layers, HYBRID, 2, layer_types=("mamba", SLIDE),
                                             warnings=warnings)] == ["stack.no-default"]
    assert as_issues(warnings) == [
        (("layer_types",), "stack.layer-types-unknown",
         "layer_types names ['mamba', 'sliding_attention'], which op profile 'hybrid' does not have (its kinds are "
         "['full_attention', 'linear_attention']); the stack is derived from the profile's other rules instead")]


def test_derive_layers_without_a_warnings_list_still_derives() -> None:
    assert groups_of(derive_layers(PLAIN, 2, layer_types=(SLIDE, SLIDE, SLIDE))) == [(FULL, 2, False)]


NO_DEFAULT = ("op profile {arch!r} has several kinds {kinds} and names no default; state the stack in layers")
MTP_KIND = ("op profile {arch!r} gives the MTP layers no kind: there is no body layer and no default; state the "
            "stack in layers")

DERIVE_REFUSALS = [
    pytest.param(HYBRID, 4, 0, (LIN, LIN, FULL), [
        (("layer_types",), "stack.layer-types-short",
         "layer_types lists 3 layers, but num_hidden_layers is 4; list one type per body layer")], id="short"),
    # short is refused even when the profile lacks the kinds and the list would be ignored
    pytest.param(PLAIN, 4, 0, (SLIDE,), [
        (("layer_types",), "stack.layer-types-short",
         "layer_types lists 1 layers, but num_hidden_layers is 4; list one type per body layer")],
                 id="short-of-unknown-kinds"),
    pytest.param(ENC_DEC, 5, 0, None, [
        (("num_hidden_layers",), "stack.odd-encoder-decoder",
         "an encoder-decoder stack splits num_hidden_layers in halves, but it is 5; state the halves in layers")],
                 id="odd-halves"),
    pytest.param(HYBRID, 4, 0, None, [
        (("layers",), "stack.no-default",
         NO_DEFAULT.format(arch="hybrid", kinds="['full_attention', 'linear_attention']"))], id="no-default"),
    pytest.param(SLIDING, 4, 1, None, [
        (("layers",), "stack.no-default",
         NO_DEFAULT.format(arch="sliding", kinds="['full_attention', 'sliding_attention']"))],
                 id="no-default-before-mtp"),
    pytest.param(DENSE_MOE, 0, 1, None, [(("mtp_depth",), "stack.mtp-kind", MTP_KIND.format(arch="densemoe"))],
                 id="mtp-of-an-empty-body-without-default"),
    pytest.param(ENC_DEC, 0, 2, None, [(("mtp_depth",), "stack.mtp-kind", MTP_KIND.format(arch="encdec"))],
                 id="mtp-of-empty-halves"),
]


@pytest.mark.parametrize("profile, num_layers, mtp, layer_types, expected", DERIVE_REFUSALS)
def test_derive_layers_refuses(profile: OpProfile, num_layers: int, mtp: int,
                               layer_types: Optional[Tuple[str, ...]], expected: List[Issue]) -> None:
    assert issues_of(derive_layers, profile, num_layers, mtp, layer_types=layer_types) == expected


# ---- resolve_layers -------------------------------------------------------------------


def test_resolve_layers_resolves_each_kind_from_the_profile() -> None:
    stack = resolve_layers("densemoe", (LayerGroup("dense", 3), LayerGroup("moe", 58), LayerGroup("moe", 1, True)),
                           profiles=PROFILES)
    assert stack == LayerStack("densemoe", (StackGroup(LayerKind("dense", COUNTS_A, "mla", "dense"), 3),
                                            StackGroup(LayerKind("moe", COUNTS_C, "mla", "moe"), 58),
                                            StackGroup(LayerKind("moe", COUNTS_C, "mla", "moe"), 1, True)))
    assert stack.linear is None and stack.warnings == ()


def test_resolve_layers_reports_every_unknown_kind() -> None:
    layers = (LayerGroup("mamba", 1), LayerGroup(FULL, 2), LayerGroup("moe", 1, True))
    assert issues_of(resolve_layers, "plain", layers, profiles=PROFILES) == [
        (("layers", 0, "kind"), "stack.unknown-kind",
         "layers[0] names kind 'mamba', but op profile 'plain' has ['full_attention']"),
        (("layers", 2, "kind"), "stack.unknown-kind",
         "layers[2] names kind 'moe', but op profile 'plain' has ['full_attention']"),
    ]


def test_resolve_layers_names_the_field_it_was_given() -> None:
    assert issues_of(resolve_layers, "plain", (LayerGroup("encoder", 2),), profiles=PROFILES,
                     where=("vision", "layers")) == [
        (("vision", "layers", 0, "kind"), "stack.unknown-kind",
         "vision.layers[0] names kind 'encoder', but op profile 'plain' has ['full_attention']")]


def test_resolve_layers_refuses_a_linear_kind_without_its_dimensions() -> None:
    assert issues_of(resolve_layers, "hybrid", (LayerGroup(LIN, 3), LayerGroup(FULL, 1)), profiles=PROFILES) == [
        (("layers",), "stack.linear-dims",
         "op profile 'hybrid' prices linear-attention layers, but the model declares none of linear_num_key_heads, "
         "linear_key_head_dim, linear_num_value_heads, linear_value_head_dim, linear_conv_kernel_dim")]


def test_resolve_layers_keeps_linear_dimensions_only_for_a_linear_kind() -> None:
    hybrid = resolve_layers("hybrid", (LayerGroup(LIN, 3), LayerGroup(FULL, 1)), linear=LINEAR_DIMS,
                            profiles=PROFILES)
    assert hybrid.linear == LINEAR_DIMS
    # the same profile, no linear layer in this stack: the dimensions are not the stack's
    assert resolve_layers("hybrid", (LayerGroup(FULL, 4),), linear=LINEAR_DIMS, profiles=PROFILES).linear is None


def test_resolve_layers_declared_ops_replace_a_kinds_counts() -> None:
    stack = resolve_layers("densemoe", (LayerGroup("dense", 1), LayerGroup("moe", 3)), ops={"moe": DECLARED},
                           profiles=PROFILES)
    assert [(kind.name, kind.ops, kind.attention, kind.ffn) for kind in stack.distinct_kinds()] == [
        ("dense", COUNTS_A, "mla", "dense"), ("moe", DECLARED, "mla", "moe")]


def test_resolve_layers_refuses_ops_of_kinds_the_profile_lacks() -> None:
    assert issues_of(resolve_layers, "plain", (LayerGroup(FULL, 2),), ops={"moe": DECLARED, "dense": DECLARED},
                     profiles=PROFILES) == [
        (("ops", "dense"), "stack.ops-kind",
         "ops.dense names a kind op profile 'plain' does not have; its kinds are ['full_attention']"),
        (("ops", "moe"), "stack.ops-kind",
         "ops.moe names a kind op profile 'plain' does not have; its kinds are ['full_attention']"),
    ]


def test_resolve_layers_refuses_an_unknown_arch() -> None:
    assert issues_of(resolve_layers, "bert", (LayerGroup(FULL, 2),), profiles=PROFILES) == [
        (("arch",), "stack.unknown-arch", f"arch 'bert' names no op profile; the profiles are {PROFILE_NAMES}")]


def test_resolve_layers_defaults_to_the_bundled_profiles() -> None:
    stack = resolve_layers("llama", (LayerGroup(FULL, 2),))
    assert stack.groups == (StackGroup(load_op_profile("llama").layer_kinds[FULL], 2),)


def test_resolve_kinds_keeps_every_kind_in_profile_order() -> None:
    assert resolve_kinds(HYBRID, {FULL: DECLARED}) == {
        LIN: LayerKind(LIN, COUNTS_B, "linear", "dense"), FULL: LayerKind(FULL, DECLARED, "full", "dense")}
    assert list(resolve_kinds(HYBRID)) == [LIN, FULL]


# ---- LinearAttentionDims --------------------------------------------------------------


def test_linear_dimensions_from_fields() -> None:
    assert LinearAttentionDims.from_fields(LINEAR) == LINEAR_DIMS
    assert LinearAttentionDims.from_fields({"hidden_size": 8}) is None


def test_linear_dimensions_refuse_a_partial_or_non_positive_set() -> None:
    partial = dict(LINEAR, linear_key_head_dim=None, linear_conv_kernel_dim=None)
    assert issues_of(LinearAttentionDims.from_fields, partial) == [
        (("linear_key_head_dim",), "spec.linear-partial",
         "linear attention is missing ['linear_key_head_dim', 'linear_conv_kernel_dim']; declare all of "
         "['linear_num_key_heads', 'linear_key_head_dim', 'linear_num_value_heads', 'linear_value_head_dim', "
         "'linear_conv_kernel_dim']")]
    bad = dict(LINEAR, linear_num_key_heads=0, linear_conv_kernel_dim=True)
    assert issues_of(LinearAttentionDims.from_fields, bad) == [
        (("linear_num_key_heads",), "spec.not-positive", "linear_num_key_heads must be a positive whole number, got 0"),
        (("linear_conv_kernel_dim",), "spec.not-positive",
         "linear_conv_kernel_dim must be a positive whole number, got True"),
    ]


# ---- spec_layer_stack -------------------------------------------------------------------


@pytest.mark.parametrize("name, arch, expected", [
    pytest.param("anything", "plain", "plain", id="stated"),
    pytest.param("plain-7b", None, "plain", id="inferred"),
    pytest.param("Plain-7B", None, "plain", id="inferred-case-blind"),
    pytest.param("plain-x1", "plaintoo", "plaintoo", id="stated-settles-an-ambiguous-name"),
])
def test_spec_arch(name: str, arch: Optional[str], expected: str) -> None:
    assert spec_arch(spec(name=name, arch=arch), AMBIGUOUS) == expected


def test_spec_layer_stack_refuses_a_name_no_profile_matches() -> None:
    assert issues_of(spec_layer_stack, spec(name="bert-base"), PROFILES) == [
        (("name",), "stack.no-arch",
         "no arch is stated and no op profile's match pattern fits the name 'bert-base', so the layer stack cannot "
         f"be resolved; state arch: one of {PROFILE_NAMES}")]


def test_spec_layer_stack_refuses_a_name_several_profiles_match() -> None:
    assert issues_of(spec_layer_stack, spec(name="plain-x1"), AMBIGUOUS) == [
        (("name",), "stack.ambiguous-arch",
         "no arch is stated and the name 'plain-x1' matches the profiles ['plain', 'plaintoo']; "
         "state arch: one of them")]


def test_spec_layer_stack_refuses_a_stated_arch_no_profile_has() -> None:
    assert issues_of(spec_layer_stack, spec(arch="bert"), PROFILES) == [
        (("arch",), "stack.unknown-arch", f"arch 'bert' names no op profile; the profiles are {PROFILE_NAMES}")]


def test_spec_layer_stack_derives_and_keeps_the_warnings() -> None:
    stack = spec_layer_stack(spec(arch="plain", layer_types=[SLIDE, FULL, FULL, FULL, FULL]), PROFILES)
    assert stack_groups(stack) == [(FULL, 4, False)]
    assert as_issues(stack.warnings) == [
        (("layer_types",), "stack.layer-types-long",
         "layer_types lists 5 layers, but num_hidden_layers is 4; the last 1 are ignored"),
        (("layer_types",), "stack.layer-types-unknown",
         UNKNOWN_TYPES.format(arch="plain", kinds="['full_attention']")),
    ]
    # the warnings say how the stack was reached; they are not part of what it is
    assert stack == LayerStack("plain", (StackGroup(LayerKind(FULL, COUNTS_A, "full", "dense"), 4),))


#: The multi-head latent attention ranks a stack of the densemoe profile (attention mla) needs.
MLA = {"kv_lora_rank": 8, "qk_rope_head_dim": 4, "qk_nope_head_dim": 8, "v_head_dim": 8}


def test_spec_layer_stack_takes_stated_layers_over_the_rules() -> None:
    stated = spec(arch="densemoe", first_k_dense_replace=1,
                  layers=[{"kind": "moe", "count": 2}, {"kind": "dense", "count": 2}], num_experts=4,
                  moe_intermediate_size=32, **MLA)
    assert stack_groups(spec_layer_stack(stated, PROFILES)) == [("moe", 2, False), ("dense", 2, False)]


def test_spec_layer_stack_declared_ops_and_linear_dimensions() -> None:
    hybrid = spec(arch="hybrid", layer_types=[LIN, LIN, LIN, FULL], ops={LIN: DECLARED.to_dict()}, **LINEAR)
    stack = spec_layer_stack(hybrid, PROFILES)
    assert [(kind.name, kind.ops) for kind in stack.distinct_kinds()] == [(LIN, DECLARED), (FULL, COUNTS_A)]
    assert stack.linear == LINEAR_DIMS


def test_spec_layer_stack_refuses_a_dense_kind_without_intermediate_size() -> None:
    assert issues_of(spec_layer_stack, spec(arch="plain", intermediate_size=None), PROFILES) == [
        (("intermediate_size",), "stack.dense-without-intermediate",
         "the stack has layers of kind ['full_attention'] with a dense feed-forward, but intermediate_size is not "
         "declared; declare the dense width")]


def test_spec_layer_stack_refuses_a_sliding_kind_without_a_window() -> None:
    sliding = spec(arch="sliding", layer_types=[SLIDE, FULL, SLIDE, FULL])
    assert issues_of(spec_layer_stack, sliding, PROFILES) == [
        (("sliding_window",), "stack.sliding-without-window",
         "the stack has layers of kind ['sliding_attention'] with sliding-window attention, but sliding_window is "
         "not declared; declare the window in tokens")]
    assert stack_groups(spec_layer_stack(spec(arch="sliding", layer_types=[SLIDE, FULL, SLIDE, FULL],
                                              sliding_window=128), PROFILES)) == [
        (SLIDE, 1, False), (FULL, 1, False), (SLIDE, 1, False), (FULL, 1, False)]


def test_spec_layer_stack_refuses_a_moe_kind_without_experts() -> None:
    # the profile's counts price one routed expert per token; without num_experts nothing says how many there are
    moe = spec(arch="densemoe", first_k_dense_replace=1, **MLA)
    assert issues_of(spec_layer_stack, moe, PROFILES) == [
        (("num_experts",), "stack.moe-without-experts",
         "the stack has layers of kind ['moe'] with routed experts, but num_experts is not declared; declare the "
         "number of routed experts")]
    # an all-dense stack of the same profile needs no experts
    assert stack_groups(spec_layer_stack(spec(arch="densemoe", first_k_dense_replace=4, **MLA), PROFILES)) == [
        ("dense", 4, False)]


def test_spec_layer_stack_refuses_mla_without_its_ranks() -> None:
    no_ranks = spec(arch="densemoe", first_k_dense_replace=4, kv_lora_rank=8)
    assert issues_of(spec_layer_stack, no_ranks, PROFILES) == [
        ((name,), "stack.mla-without-ranks",
         f"the stack has layers of kind ['dense'] with multi-head latent attention, but {name} is not declared; "
         "declare the rank or per-head width of the latent attention")
        for name in ("qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")]


@pytest.mark.parametrize(("fields", "words"), [
    ({"num_experts": 8}, "routed experts"),
    ({"num_experts": 8, "num_experts_per_tok": 2}, "routed experts"),
    ({"moe_intermediate_size": 32}, "routed experts"),
    ({"kv_lora_rank": 8}, "multi-head latent attention"),
    ({"q_lora_rank": 8}, "multi-head latent attention"),
])
def test_spec_layer_stack_refuses_a_field_no_kind_of_the_stack_reads(fields: Dict[str, int], words: str) -> None:
    # a cost model prices kinds, so experts or MLA ranks beside a plain dense stack would be silently ignored
    assert issues_of(spec_layer_stack, spec(arch="plain", **fields), PROFILES) == [
        ((name,), "stack.field-without-kind",
         f"{name} is declared, but no layer of the stack has {words} (its kinds are ['full_attention']); state an "
         f"arch or layers whose kinds have it, or leave {name} out")
        for name in fields]


def test_spec_layer_stack_reports_both_missing_widths_at_once() -> None:
    both = spec(arch="sliding", layer_types=[SLIDE, SLIDE, FULL, FULL], intermediate_size=None)
    assert [(path, code) for path, code, _ in issues_of(spec_layer_stack, both, PROFILES)] == [
        (("intermediate_size",), "stack.dense-without-intermediate"),
        (("sliding_window",), "stack.sliding-without-window"),
    ]


def test_spec_layer_stack_judges_only_the_kinds_the_stack_uses() -> None:
    # the profile has a dense kind, but a stack of MoE layers only needs no dense width
    moe_only = spec(arch="densemoe", intermediate_size=None, num_experts=4, moe_intermediate_size=32, **MLA)
    assert stack_groups(spec_layer_stack(moe_only, PROFILES)) == [("moe", 4, False)]


# ---- tower_layer_stack ------------------------------------------------------------------

TOWER = {"hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16}


def test_tower_layer_stack_defaults_to_one_encoder_group() -> None:
    stack = tower_layer_stack(VisionSpec.from_dict(TOWER))
    assert stack.arch == "vision"
    assert [(group.kind.name, group.kind.attention, group.kind.ffn, group.count, group.mtp)
            for group in stack.groups] == [("encoder", "full", "dense", 27, False)]
    assert stack.groups[0].kind.ops == OpCounts(attMM=4, attBMM=2, ffMM=2, softmax=1, dropout=1, normOp=2, gather=4,
                                                headCast=1, ffAct=1, linrec=0)


def test_tower_layer_stack_takes_stated_layers() -> None:
    # Qwen2.5-VL-7B's tower: 32 blocks, full attention at fullatt_block_indexes [7, 15, 23, 31]
    layers = [{"kind": "window_encoder", "count": 7}, {"kind": "gated_encoder", "count": 1}] * 4
    tower = VisionSpec.from_dict(dict(TOWER, num_hidden_layers=32, layers=layers)).validate()
    stack = tower_layer_stack(tower)
    assert stack_groups(stack) == [("window_encoder", 7, False), ("gated_encoder", 1, False)] * 4
    assert [(kind.name, kind.attention, kind.ops.ffMM) for kind in stack.distinct_kinds()] == [
        ("window_encoder", "sliding", 3), ("gated_encoder", "full", 3)]


def test_tower_layer_stack_refuses_an_unknown_kind() -> None:
    layers = [{"kind": "encoder", "count": 26}, {"kind": "decoder", "count": 1}]
    tower = VisionSpec.from_dict(dict(TOWER, layers=layers))
    assert issues_of(tower_layer_stack, tower) == [
        (("vision", "layers", 1, "kind"), "stack.unknown-kind",
         "vision.layers[1] names kind 'decoder', but op profile 'vision' has "
         "['encoder', 'gated_encoder', 'window_encoder']")]


def test_tower_layer_stack_without_a_vision_profile() -> None:
    assert issues_of(tower_layer_stack, VisionSpec.from_dict(TOWER), PROFILES) == [
        (("arch",), "stack.unknown-arch", f"arch 'vision' names no op profile; the profiles are {PROFILE_NAMES}")]


# ---- LayerStack -----------------------------------------------------------------------


def test_layer_stack_kinds_distinct_kinds_and_layers() -> None:
    layers = (LayerGroup(LIN, 2), LayerGroup(FULL, 1), LayerGroup(LIN, 1), LayerGroup(FULL, 2, True))
    stack = resolve_layers("hybrid", layers, linear=LINEAR_DIMS, profiles=PROFILES)
    assert [kind.name for kind in stack.kinds()] == [LIN, LIN, FULL, LIN, FULL, FULL]
    assert stack.kinds()[0] is stack.groups[0].kind
    assert [kind.name for kind in stack.distinct_kinds()] == [LIN, FULL]
    assert stack.to_layers() == layers
    assert LayerStack("empty", ()).kinds() == () and LayerStack("empty", ()).distinct_kinds() == ()


# ---- real models, from their published config.json ------------------------------------------------

#: Each spec carries the numbers of the model's config.json on the Hugging Face hub, renamed to the IR's keys.
DEEPSEEK_V3 = {
    "name": "deepseek-v3", "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 128,
    "num_key_value_heads": 128, "vocab_size": 129280, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_experts": 256, "num_experts_per_tok": 8, "num_shared_experts": 1, "first_k_dense_replace": 3,
    "mtp_depth": 1, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
    "v_head_dim": 128, "max_position_embeddings": 163840,
}
KIMI_K2 = {
    "name": "kimi-k2-instruct", "hidden_size": 7168, "num_hidden_layers": 61, "num_attention_heads": 64,
    "num_key_value_heads": 64, "vocab_size": 163840, "intermediate_size": 18432, "moe_intermediate_size": 2048,
    "num_experts": 384, "num_experts_per_tok": 8, "num_shared_experts": 1, "first_k_dense_replace": 1,
    "mtp_depth": 0, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
    "v_head_dim": 128, "max_position_embeddings": 131072,
}
# text_config of Qwen/Qwen3.5-35B-A3B; num_shared_experts 1 for its one shared expert of
# shared_expert_intermediate_size; mtp_depth from mtp_num_hidden_layers.
QWEN35_35B_A3B = {
    "name": "qwen3.5-35b-a3b", "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
    "num_key_value_heads": 2, "head_dim": 256, "vocab_size": 248320, "num_experts": 256, "num_experts_per_tok": 8,
    "num_shared_experts": 1, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "mtp_depth": 1,
    "attn_output_gate": True, "max_position_embeddings": 262144,
    "linear_num_key_heads": 16, "linear_key_head_dim": 128, "linear_num_value_heads": 32,
    "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    "layer_types": [
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
        "linear_attention", "linear_attention", "linear_attention", "full_attention",
    ],
}
MIXTRAL_8X7B = {
    "name": "mixtral-8x7b", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 32000, "intermediate_size": 14336, "num_experts": 8,
    "num_experts_per_tok": 2, "max_position_embeddings": 32768,
}
# t5-base: d_model, num_layers + num_decoder_layers, num_heads, d_kv, d_ff.
T5_BASE = {
    "name": "t5-base", "hidden_size": 768, "num_hidden_layers": 24, "num_attention_heads": 12, "head_dim": 64,
    "vocab_size": 32128, "intermediate_size": 3072,
}
LLAMA_31_8B = {
    "name": "llama-3.1-8b", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "vocab_size": 128256, "intermediate_size": 14336, "max_position_embeddings": 131072,
}
GPT_OSS_20B = {
    "name": "gpt-oss-20b", "hidden_size": 2880, "num_hidden_layers": 24, "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088, "intermediate_size": 2880, "num_experts": 32,
    "num_experts_per_tok": 4, "sliding_window": 128, "max_position_embeddings": 131072,
    "layer_types": [
        "sliding_attention", "full_attention", "sliding_attention", "full_attention",
        "sliding_attention", "full_attention", "sliding_attention", "full_attention",
        "sliding_attention", "full_attention", "sliding_attention", "full_attention",
        "sliding_attention", "full_attention", "sliding_attention", "full_attention",
        "sliding_attention", "full_attention", "sliding_attention", "full_attention",
        "sliding_attention", "full_attention", "sliding_attention", "full_attention",
    ],
}

REAL_STACKS = [
    pytest.param(DEEPSEEK_V3, "deepseek_v3", [("dense", 3, False), ("moe", 58, False), ("moe", 1, True)],
                 id="deepseek-v3"),
    pytest.param(KIMI_K2, "deepseek_v3", [("dense", 1, False), ("moe", 60, False)], id="kimi-k2"),
    pytest.param(QWEN35_35B_A3B, "qwen3_5_moe",
                 [("linear_attention", 3, False), ("full_attention", 1, False)] * 10 + [("full_attention", 1, True)],
                 id="qwen3.5-35b-a3b"),
    pytest.param(MIXTRAL_8X7B, "mixtral", [("full_attention", 32, False)], id="mixtral-8x7b"),
    pytest.param(T5_BASE, "t5", [("encoder", 12, False), ("decoder", 12, False)], id="t5-base"),
    pytest.param(LLAMA_31_8B, "llama", [("full_attention", 32, False)], id="llama-3.1-8b"),
    pytest.param(GPT_OSS_20B, "gpt_oss", [("sliding_attention", 1, False), ("full_attention", 1, False)] * 12,
                 id="gpt-oss-20b"),
]


@pytest.mark.parametrize("data, arch, expected", REAL_STACKS)
def test_real_stack(data: Dict[str, Any], arch: str, expected: List[Group]) -> None:
    stack = spec_layer_stack(ModelSpec.from_dict(data))
    assert stack.arch == arch
    assert stack_groups(stack) == expected
    assert stack.warnings == ()
    assert len(stack.kinds()) == data["num_hidden_layers"] + data.get("mtp_depth", 0)


# (kind, attention, ffn, attMM, ffMM, softmax, gather, ffAct, linrec), as the bundled profile states them
REAL_KINDS = [
    pytest.param(DEEPSEEK_V3, [("dense", "mla", "dense", 5, 3, 1, 4, 1, 0), ("moe", "mla", "moe", 5, 7, 2, 4, 2, 0)],
                 id="deepseek-v3"),
    pytest.param(KIMI_K2, [("dense", "mla", "dense", 5, 3, 1, 4, 1, 0), ("moe", "mla", "moe", 5, 7, 2, 4, 2, 0)],
                 id="kimi-k2"),
    pytest.param(QWEN35_35B_A3B, [("linear_attention", "linear", "moe", 7, 8, 1, 4, 2, 1),
                                  ("full_attention", "full", "moe", 5, 8, 2, 4, 2, 0)], id="qwen3.5-35b-a3b"),
    pytest.param(MIXTRAL_8X7B, [("full_attention", "full", "moe", 4, 4, 2, 4, 1, 0)], id="mixtral-8x7b"),
    pytest.param(T5_BASE, [("encoder", "full", "dense", 4, 2, 1, 4, 1, 0),
                           ("decoder", "full", "dense", 8, 2, 2, 6, 1, 0)], id="t5-base"),
    pytest.param(LLAMA_31_8B, [("full_attention", "full", "dense", 4, 3, 1, 4, 1, 0)], id="llama-3.1-8b"),
    pytest.param(GPT_OSS_20B, [("sliding_attention", "sliding", "moe", 4, 4, 2, 4, 1, 0),
                               ("full_attention", "full", "moe", 4, 4, 2, 4, 1, 0)], id="gpt-oss-20b"),
]


@pytest.mark.parametrize("data, expected", REAL_KINDS)
def test_real_stack_kinds(data: Dict[str, Any], expected: List[Tuple[Any, ...]]) -> None:
    stack = spec_layer_stack(ModelSpec.from_dict(data))
    assert [(k.name, k.attention, k.ffn, k.ops.attMM, k.ops.ffMM, k.ops.softmax, k.ops.gather, k.ops.ffAct,
             k.ops.linrec) for k in stack.distinct_kinds()] == expected


def test_deepseek_v3_stack_in_full() -> None:
    stack = spec_layer_stack(ModelSpec.from_dict(DEEPSEEK_V3))
    profile = load_op_profile("deepseek_v3")
    dense, moe = profile.layer_kinds["dense"], profile.layer_kinds["moe"]
    assert stack == LayerStack("deepseek_v3", (StackGroup(dense, 3), StackGroup(moe, 58), StackGroup(moe, 1, True)))
    assert moe.ops == OpCounts(attMM=5, attBMM=2, ffMM=7, softmax=2, dropout=1, normOp=4, gather=4, headCast=1,
                               ffAct=2, linrec=0)
    kinds = stack.kinds()
    assert (len(kinds), kinds[2].name, kinds[3].name, kinds[-1].name) == (62, "dense", "moe", "moe")
    assert stack.to_layers() == (LayerGroup("dense", 3), LayerGroup("moe", 58), LayerGroup("moe", 1, mtp=True))


def test_qwen35_35b_a3b_resolves_without_a_dense_width() -> None:
    model = ModelSpec.from_dict(QWEN35_35B_A3B)
    stack = spec_layer_stack(model)
    assert stack.linear == LinearAttentionDims(num_key_heads=16, key_head_dim=128, num_value_heads=32,
                                               value_head_dim=128, conv_kernel_dim=4)
    assert (model.effective_head_dim, model.attention_width, model.shared_expert_width, model.intermediate_size) == (
        256, 4096, 512, None)
    assert stack.groups[-1] == StackGroup(load_op_profile("qwen3_5_moe").layer_kinds["full_attention"], 1, True)


def test_mixtral_experts_run_at_the_dense_width() -> None:
    model = ModelSpec.from_dict(MIXTRAL_8X7B)
    assert (model.moe_intermediate_size, model.routed_expert_width) == (None, 14336)
    assert [kind.ffn for kind in spec_layer_stack(model).distinct_kinds()] == ["moe"]


def test_gpt_oss_without_its_window_is_refused() -> None:
    data = {key: value for key, value in GPT_OSS_20B.items() if key != "sliding_window"}
    assert [code for _, code, _ in issues_of(spec_layer_stack, ModelSpec.from_dict(data))] == [
        "stack.sliding-without-window"]


def test_mixtral_without_its_expert_count_is_refused() -> None:
    data = {key: value for key, value in MIXTRAL_8X7B.items() if key not in ("num_experts", "num_experts_per_tok")}
    assert [code for _, code, _ in issues_of(spec_layer_stack, ModelSpec.from_dict(data))] == [
        "stack.moe-without-experts"]


def test_gpt_oss_without_layer_types_is_refused() -> None:
    data = {key: value for key, value in GPT_OSS_20B.items() if key != "layer_types"}
    assert issues_of(spec_layer_stack, ModelSpec.from_dict(data)) == [
        (("layers",), "stack.no-default",
         "op profile 'gpt_oss' has several kinds ['full_attention', 'sliding_attention'] and names no default; "
         "state the stack in layers")]


# ---- import cost ---------------------------------------------------------------------------

#: What the library must not pull in: the command line's and the loaders' dependencies (imported where used).
HEAVY = ("jsonschema", "git", "click", "yaml")


def test_importing_the_library_imports_no_heavy_dependency() -> None:
    code = ("import sys, pipeline.model, pipeline.op_profiles, pipeline.stack; "
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_loading_the_profiles_imports_the_yaml_reader_not_the_command_line() -> None:
    """The import test above can fail: the first load does import yaml, where it is used."""
    code = ("import sys, pipeline.op_profiles; pipeline.op_profiles.load_op_profiles(); "
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules and name not in ('jsonschema',)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['yaml']"
