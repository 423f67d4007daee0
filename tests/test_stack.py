"""Tests of the layer stack, :mod:`pipeline.pricing.stack`.

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

from pipeline.spec.model import LayerGroup, ModelSpec, ModelSpecError, OpCounts, SpecIssue, VisionSpec
from pipeline.pricing.op_profiles import Assumption, LayerKind, OpProfile, OpProfiles, load_op_profile, load_op_profiles
from pipeline.spec.problems import Severity
from pipeline.check.runner import check_document
from pipeline.spec.yaml_source import load_bytes
from pipeline.pricing.stack import (
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


UNKNOWN_TYPES = ("layer_types[{index}] names {name!r}, which op profile {arch!r} does not have{hint} kinds are "
                 "{kinds}; the stack is derived from the profile's other rules instead")


def unknown_type(index: int, name: str, arch: str, kinds: str, close: Optional[str] = None) -> Issue:
    """The warning for a layer_types name the profile lacks, at its first entry."""
    hint = f": did you mean {close!r}? Its" if close else ". Its"
    return (("layer_types", index), "stack.layer-types-unknown",
            UNKNOWN_TYPES.format(index=index, name=name, arch=arch, hint=hint, kinds=kinds))


DERIVED_WITH_WARNINGS = [
    # a profile that lacks the kinds: a warning, and the other rules give the stack
    # one warning per name, at its first entry, with the closest kind when one is close
    pytest.param(PLAIN, 4, 0, (SLIDE, FULL, SLIDE, FULL), 0, [(FULL, 4, False)], [
        unknown_type(0, SLIDE, "plain", "['full_attention']", close=FULL)], id="unknown-falls-back-to-default"),
    pytest.param(DENSE_MOE, 4, 1, (SLIDE, SLIDE, SLIDE, SLIDE), 1,
                 [("dense", 1, False), ("moe", 3, False), ("moe", 1, True)], [
        unknown_type(0, SLIDE, "densemoe", "['dense', 'moe']")], id="unknown-falls-back-to-dense-moe"),
    pytest.param(PLAIN, 4, 0, (FULL, "full_atention", "mamba", "full_atention"), 0, [(FULL, 4, False)], [
        unknown_type(1, "full_atention", "plain", "['full_attention']", close=FULL),
        unknown_type(2, "mamba", "plain", "['full_attention']")], id="each-unknown-name-once-in-order"),
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
        unknown_type(0, SLIDE, "plain", "['full_attention']", close=FULL)], id="long-and-unknown"),
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


HYBRID_KINDS = "['full_attention', 'linear_attention']"
NO_DEFAULT_AFTER_TYPES = ("op profile 'hybrid' has several kinds ['full_attention', 'linear_attention'] and names no "
                          "default; name the profile's kinds in layer_types, or state the stack in layers")


def test_derive_layers_keeps_the_warnings_when_a_fallback_refuses() -> None:
    # the hybrid profile has no default, so the fallback refuses; the unknown names are why, and stay in the list
    warnings: List[SpecIssue] = [SpecIssue(("earlier",), "stack.layer-types-long", "a warning from before")]
    assert issues_of(derive_layers, HYBRID, 2, layer_types=("mamba", "sliding_attention", "x"),
                     warnings=warnings) == [(("layer_types",), "stack.no-default", NO_DEFAULT_AFTER_TYPES)]
    assert [(w.path, w.code, w.message) for w in warnings[1:]] == [
        (("layer_types",), "stack.layer-types-long",
         "layer_types lists 3 layers, but num_hidden_layers is 2; the last 1 are ignored"),
        unknown_type(0, "mamba", "hybrid", HYBRID_KINDS),
        unknown_type(1, SLIDE, "hybrid", HYBRID_KINDS, close=LIN)]


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
    # at arch, the field that picked the profile: there is no layers key to point at
    pytest.param(HYBRID, 4, 0, None, [
        (("arch",), "stack.no-default",
         NO_DEFAULT.format(arch="hybrid", kinds="['full_attention', 'linear_attention']"))], id="no-default"),
    pytest.param(SLIDING, 4, 1, None, [
        (("arch",), "stack.no-default",
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
        unknown_type(0, SLIDE, "plain", "['full_attention']", close=FULL),
    ]
    # the warnings say how the stack was reached; they are not part of what it is
    assert stack == LayerStack("plain", (StackGroup(LayerKind(FULL, COUNTS_A, "full", "dense"), 4),))


#: The multi-head latent attention ranks a stack of the densemoe profile (attention mla) needs.
MLA = {"kv_lora_rank": 8, "qk_rope_head_dim": 4, "qk_nope_head_dim": 8, "v_head_dim": 8}


def test_spec_layer_stack_takes_stated_layers_over_the_rules() -> None:
    stated = spec(arch="densemoe", first_k_dense_replace=1,
                  layers=[{"kind": "moe", "count": 2}, {"kind": "dense", "count": 2}], num_experts=4,
                  num_experts_per_tok=2,
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
        ((name,), "stack.moe-without-experts",
         f"the stack has layers of kind ['moe'] with routed experts, but {name} is not declared; declare how many "
         "routed experts there are and how many each token is sent to")
        for name in ("num_experts", "num_experts_per_tok")]
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
    ({"num_shared_experts": 1}, "routed experts"),
    ({"num_shared_experts": 1, "shared_expert_intermediate_size": 32}, "routed experts"),
    ({"num_shared_experts": 1, "shared_expert_gate": True}, "routed experts"),
    ({"kv_lora_rank": 8}, "multi-head latent attention"),
    ({"q_lora_rank": 8}, "multi-head latent attention"),
    ({"sliding_window": 4096}, "sliding-window attention"),
    (LINEAR, "linear attention"),
])
def test_spec_layer_stack_refuses_a_field_no_kind_of_the_stack_reads(fields: Dict[str, Any], words: str) -> None:
    # a cost model prices kinds, so experts, shared experts, MLA ranks, a window or DeltaNet dimensions beside a
    # plain dense stack would be silently ignored
    assert issues_of(spec_layer_stack, spec(arch="plain", **fields), PROFILES) == [
        ((name,), "stack.field-without-kind",
         f"{name} is declared, but no layer of the stack has {words} (its kinds are ['full_attention']); state an "
         f"arch or layers whose kinds have it, or leave {name} out")
        for name in fields]


@pytest.mark.parametrize("fields", [
    pytest.param({"num_shared_experts": 0}, id="no-shared-expert"),
    pytest.param({"shared_expert_gate": False}, id="no-shared-expert-gate"),
    pytest.param({"first_k_dense_replace": 0}, id="no-leading-dense-layer"),
])
def test_spec_layer_stack_takes_a_field_that_states_nothing(fields: Dict[str, Any]) -> None:
    # 0 shared experts, no gate, no leading dense layer: true of a plain dense stack, and nothing goes unpriced
    assert stack_groups(spec_layer_stack(spec(arch="plain", **fields), PROFILES)) == [(FULL, 4, False)]


def test_spec_layer_stack_judges_a_window_and_linear_dimensions_by_the_kinds_the_stack_uses() -> None:
    # the sliding profile has a sliding kind, but this stack does not use it; the hybrid one's stack is all full
    sliding_unused = spec(arch="sliding", layers=[{"kind": FULL, "count": 4}], sliding_window=128)
    assert [code for _, code, _ in issues_of(spec_layer_stack, sliding_unused, PROFILES)] == [
        "stack.field-without-kind"]
    full_only = spec(arch="hybrid", layer_types=[FULL] * 4, **LINEAR)
    assert [path for path, _, _ in issues_of(spec_layer_stack, full_only, PROFILES)] == [
        (name,) for name in LINEAR]


FIRST_K_UNREAD = ("first_k_dense_replace is declared, but op profile {arch!r} has no 'dense' and 'moe' kinds for it to "
                  "split the body into (its kinds are {kinds}), so no stack rule reads it; state an arch whose "
                  "profile has them, or layers, or leave first_k_dense_replace out")


@pytest.mark.parametrize("arch, fields, kinds", [
    pytest.param("plain", {}, "['full_attention']", id="dense-profile"),
    # a profile whose kinds have routed experts but are not named dense and moe: the rule never splits its body
    pytest.param("hybrid", {"layer_types": [LIN, LIN, LIN, FULL], **LINEAR}, HYBRID_KINDS, id="hybrid-profile"),
])
def test_spec_layer_stack_refuses_first_k_dense_no_rule_reads(arch: str, fields: Dict[str, Any], kinds: str) -> None:
    assert issues_of(spec_layer_stack, spec(arch=arch, first_k_dense_replace=2, **fields), PROFILES) == [
        (("first_k_dense_replace",), "stack.field-without-kind", FIRST_K_UNREAD.format(arch=arch, kinds=kinds))]


def test_spec_layer_stack_takes_first_k_dense_that_makes_every_layer_dense() -> None:
    # the dense-then-MoE rule reads it even when no MoE layer is left: it is what made the stack all dense
    all_dense = spec(arch="densemoe", first_k_dense_replace=4, **MLA)
    assert stack_groups(spec_layer_stack(all_dense, PROFILES)) == [("dense", 4, False)]


def test_spec_layer_stack_reports_both_missing_widths_at_once() -> None:
    both = spec(arch="sliding", layer_types=[SLIDE, SLIDE, FULL, FULL], intermediate_size=None)
    assert [(path, code) for path, code, _ in issues_of(spec_layer_stack, both, PROFILES)] == [
        (("intermediate_size",), "stack.dense-without-intermediate"),
        (("sliding_window",), "stack.sliding-without-window"),
    ]


def test_spec_layer_stack_judges_only_the_kinds_the_stack_uses() -> None:
    # the profile has a dense kind, but a stack of MoE layers only needs no dense width
    moe_only = spec(arch="densemoe", intermediate_size=None, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, **MLA)
    assert stack_groups(spec_layer_stack(moe_only, PROFILES)) == [("moe", 4, False)]


# ---- layer_types the profile lacks, and where a derived stack is refused ------------------------------------------

#: A one-kind profile whose default is linear attention, so a derived stack needs the linear_* dimensions.
LINEAR_DEFAULT = _profile("lineardefault", [(LIN, "linear", "dense", COUNTS_B)], default=LIN, match=("linear-*",))
LOCATING = OpProfiles(Path("locating"), {p.arch: p for p in (HYBRID, LINEAR_DEFAULT)})
LINEAR_DIMS_MISSING = ("op profile {arch!r} prices linear-attention layers, but the model declares none of "
                       "linear_num_key_heads, linear_key_head_dim, linear_num_value_heads, linear_value_head_dim, "
                       "linear_conv_kernel_dim")


def test_spec_layer_stack_keeps_the_unknown_names_when_the_fallback_refuses() -> None:
    typo = spec(arch="hybrid", layer_types=[LIN, LIN, "full_atention", LIN], **LINEAR)
    with pytest.raises(ModelSpecError) as caught:
        spec_layer_stack(typo, PROFILES)
    assert [(i.path, i.code, i.message) for i in caught.value.issues] == [
        (("layer_types",), "stack.no-default", NO_DEFAULT_AFTER_TYPES)]
    assert [(w.path, w.code, w.message) for w in caught.value.warnings] == [
        unknown_type(2, "full_atention", "hybrid", HYBRID_KINDS, close=FULL)]


def test_spec_layer_stack_keeps_the_unknown_names_when_a_later_rule_refuses() -> None:
    # the fallback resolves, but the stack it gives then contradicts the spec: the typo is why
    typo = spec(arch="sliding", layer_types=[SLIDE, "sliding_atention", SLIDE, FULL], sliding_window=128)
    with pytest.raises(ModelSpecError) as caught:
        spec_layer_stack(typo, PROFILES)
    assert [w.code for w in caught.value.warnings] == ["stack.layer-types-unknown"]


@pytest.mark.parametrize("fields, where, arch", [
    # the stack comes from layer_types: the list is where it went wrong
    pytest.param({"arch": "hybrid", "layer_types": [LIN, LIN, LIN, FULL]}, ("layer_types",), "hybrid",
                 id="layer-types"),
    # from the profile's default: the field that picked the profile, stated or inferred from the name
    pytest.param({"arch": "lineardefault"}, ("arch",), "lineardefault", id="default-of-the-stated-arch"),
    pytest.param({"name": "linear-1b"}, ("name",), "lineardefault", id="default-of-the-inferred-arch"),
    pytest.param({"arch": "hybrid", "layers": [{"kind": LIN, "count": 4}]}, ("layers",), "hybrid",
                 id="stated-layers"),
])
def test_linear_dimensions_missing_from_a_stack_are_located_where_it_comes_from(
        fields: Dict[str, Any], where: Tuple[str, ...], arch: str) -> None:
    assert issues_of(spec_layer_stack, spec(**fields), LOCATING) == [
        (where, "stack.linear-dims", LINEAR_DIMS_MISSING.format(arch=arch))]


def test_no_default_is_located_at_the_name_that_picked_the_profile() -> None:
    assert issues_of(spec_layer_stack, spec(name="hybrid-2b", **LINEAR), PROFILES) == [
        (("name",), "stack.no-default", NO_DEFAULT.format(arch="hybrid", kinds=HYBRID_KINDS))]


#: A spec file of the hybrid profile whose layer_types has a typo and a name of another family (lines numbered).
HYBRID_FILE = """\
name: hybrid-2b
hidden_size: 64
num_hidden_layers: 4
num_attention_heads: 4
vocab_size: 100
intermediate_size: 128
linear_num_key_heads: 2
linear_key_head_dim: 8
linear_num_value_heads: 2
linear_value_head_dim: 8
linear_conv_kernel_dim: 4
layer_types:
  - linear_attention
  - full_atention
  - mamba
  - full_atention
"""


def test_check_reports_each_unknown_name_at_its_entry_with_the_refusal() -> None:
    checked = check_document(load_bytes(HYBRID_FILE.encode(), "hybrid.yaml"), PROFILES)
    assert [(p.line, p.column, p.code, p.severity, p.message) for p in checked.result.problems] == [
        (13, 3, "stack.no-default", Severity.ERROR, NO_DEFAULT_AFTER_TYPES),
        (14, 5, "stack.layer-types-unknown", Severity.WARNING,
         unknown_type(1, "full_atention", "hybrid", HYBRID_KINDS, close=FULL)[2]),
        (15, 5, "stack.layer-types-unknown", Severity.WARNING, unknown_type(2, "mamba", "hybrid", HYBRID_KINDS)[2]),
    ]


def test_check_reports_an_unknown_name_as_a_warning_when_the_fallback_resolves() -> None:
    text = HYBRID_FILE.replace("name: hybrid-2b", "name: plain-2b").replace("linear_attention", "full_attention")
    text = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("linear_"))
    checked = check_document(load_bytes(text.encode(), "plain.yaml"), PROFILES)
    # (these profiles state no weights: the spec is also params.uncounted, at the top of the file)
    assert [(p.line, p.column, p.code, p.severity) for p in checked.result.problems] == [
        (1, 1, "params.uncounted", Severity.WARNING),
        (9, 5, "stack.layer-types-unknown", Severity.WARNING), (10, 5, "stack.layer-types-unknown", Severity.WARNING)]
    assert stack_groups(checked.stack) == [(FULL, 4, False)]


# ---- what a kind's counts assume -------------------------------------------------------------------------------

#: Kinds whose counts assume spec values: q/k norms in both, one shared expert in the MoE kind, and a head_dim
#: stated (the test's stand-in for DeepSeek's q_lora_rank).
ASSUMING = OpProfile("assuming", "assuming family.", "tests", ("assuming",), ("assuming-*",), None, {
    "dense": LayerKind("dense", COUNTS_A, "full", "dense", (Assumption("qk_norm", True),)),
    "moe": LayerKind("moe", COUNTS_C, "full", "moe", (Assumption("qk_norm", True), Assumption("num_shared_experts", 1),
                                                      Assumption("head_dim", "stated"))),
}, Path("assuming.yaml"))
#: A vision profile whose encoder's counts assume a patch size.
ASSUMING_VISION = OpProfile("vision", "vision towers.", "tests", (), (), "encoder", {
    "encoder": LayerKind("encoder", COUNTS_A, "full", "dense", (Assumption("patch_size", 14),))}, Path("vision.yaml"))
ASSUMING_PROFILES = OpProfiles(Path("assuming"), {"assuming": ASSUMING, "vision": ASSUMING_VISION})
#: A spec whose fields fit every assumption of the profile; a stack of 1 dense and 3 MoE layers.
FITTING = {"arch": "assuming", "first_k_dense_replace": 1, "num_experts": 4, "num_experts_per_tok": 2,
           "num_shared_experts": 1,
           "moe_intermediate_size": 32, "qk_norm": True, "head_dim": 16}
ASSUMED = ("op profile 'assuming' counts the ops of kind {kinds} {assumed}, but {found}: a model that differs there "
           "runs other ops and needs its own; use an arch whose counts fit it, or state {ops} with the model's own "
           "counts")


def test_a_spec_that_fits_the_assumptions_resolves() -> None:
    stack = spec_layer_stack(spec(**FITTING), ASSUMING_PROFILES)
    assert stack_groups(stack) == [("dense", 1, False), ("moe", 3, False)]
    assert stack.groups[1].kind.assumes == ASSUMING.layer_kinds["moe"].assumes
    # a flag left out is unstated: the counts decide what it is
    assert stack_groups(spec_layer_stack(spec(**dict(FITTING, qk_norm=None)), ASSUMING_PROFILES))[0] == (
        "dense", 1, False)


ASSUMPTION_REFUSALS = [
    pytest.param({"qk_norm": False}, [
        (("qk_norm",), ASSUMED.format(kinds="['dense', 'moe']", assumed="for qk_norm: true",
                                      found="this spec states qk_norm: false", ops="ops.dense and ops.moe"))],
                 id="flag-stated-otherwise"),
    pytest.param({"num_shared_experts": 2}, [
        (("num_shared_experts",), ASSUMED.format(kinds="['moe']", assumed="for num_shared_experts: 1",
                                                 found="this spec states num_shared_experts: 2", ops="ops.moe"))],
                 id="count-stated-otherwise"),
    pytest.param({"num_shared_experts": 0}, [
        (("num_shared_experts",), ASSUMED.format(kinds="['moe']", assumed="for num_shared_experts: 1",
                                                 found="this spec states num_shared_experts: 0", ops="ops.moe"))],
                 id="count-stated-zero"),
    # absent shared experts are priced as none (shared_expert_width 0): no line of their own, so at arch
    pytest.param({"num_shared_experts": None}, [
        (("arch",), ASSUMED.format(kinds="['moe']", assumed="for num_shared_experts: 1",
                                   found="this spec leaves num_shared_experts out, which is priced as 0",
                                   ops="ops.moe"))], id="count-absent-priced-as-zero"),
    pytest.param({"head_dim": None}, [
        (("arch",), ASSUMED.format(kinds="['moe']", assumed="with head_dim stated",
                                   found="this spec leaves head_dim out", ops="ops.moe"))], id="stated-absent"),
    # every contradiction at once, in the order of the kinds and their assumes
    pytest.param({"qk_norm": False, "num_shared_experts": None, "head_dim": None}, [
        (("qk_norm",), ASSUMED.format(kinds="['dense', 'moe']", assumed="for qk_norm: true",
                                      found="this spec states qk_norm: false", ops="ops.dense and ops.moe")),
        (("arch",), ASSUMED.format(kinds="['moe']", assumed="for num_shared_experts: 1",
                                   found="this spec leaves num_shared_experts out, which is priced as 0",
                                   ops="ops.moe")),
        (("arch",), ASSUMED.format(kinds="['moe']", assumed="with head_dim stated",
                                   found="this spec leaves head_dim out", ops="ops.moe")),
    ], id="all-at-once"),
    # arch inferred from the name: the name picked the profile
    pytest.param({"arch": None, "name": "assuming-1b", "num_shared_experts": None}, [
        (("name",), ASSUMED.format(kinds="['moe']", assumed="for num_shared_experts: 1",
                                   found="this spec leaves num_shared_experts out, which is priced as 0",
                                   ops="ops.moe"))], id="at-the-name-that-picked-the-profile"),
]


@pytest.mark.parametrize("changes, expected", ASSUMPTION_REFUSALS)
def test_a_spec_that_contradicts_an_assumption_is_refused(changes: Dict[str, Any],
                                                          expected: List[Tuple[Tuple[str, ...], str]]) -> None:
    assert issues_of(spec_layer_stack, spec(**dict(FITTING, **changes)), ASSUMING_PROFILES) == [
        (path, "stack.profile-assumes", message) for path, message in expected]


def test_declared_ops_replace_what_the_profiles_counts_assumed() -> None:
    # the MoE layers run the spec's own counts, so its missing shared expert is no contradiction; the dense ones do not
    own = spec(**dict(FITTING, num_shared_experts=None, head_dim=None, qk_norm=False, ops={"moe": DECLARED.to_dict()}))
    assert issues_of(spec_layer_stack, own, ASSUMING_PROFILES) == [
        (("qk_norm",), "stack.profile-assumes",
         ASSUMED.format(kinds="['dense']", assumed="for qk_norm: true", found="this spec states qk_norm: false",
                        ops="ops.dense"))]
    both = spec(**dict(FITTING, qk_norm=False, ops={"moe": DECLARED.to_dict(), "dense": DECLARED.to_dict()}))
    stack = spec_layer_stack(both, ASSUMING_PROFILES)
    assert [(kind.ops, kind.assumes) for kind in stack.distinct_kinds()] == [(DECLARED, ()), (DECLARED, ())]


def test_only_the_kinds_of_the_stack_are_judged() -> None:
    # every layer dense: what the MoE kind's counts assume is no one's business
    all_dense = spec(arch="assuming", first_k_dense_replace=4, qk_norm=True)
    assert stack_groups(spec_layer_stack(all_dense, ASSUMING_PROFILES)) == [("dense", 4, False)]


# ---- tower_layer_stack ------------------------------------------------------------------

TOWER = {"hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16, "intermediate_size": 4304}


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
         "['encoder', 'gated_encoder', 'global_encoder', 'uncast_encoder', 'window_encoder']")]


@pytest.mark.parametrize("layers, kinds", [
    pytest.param(None, "['encoder']", id="default-kind"),
    pytest.param([{"kind": "window_encoder", "count": 26}, {"kind": "gated_encoder", "count": 1}],
                 "['window_encoder', 'gated_encoder']", id="stated-layers"),
])
def test_tower_layer_stack_refuses_a_dense_kind_without_intermediate_size(layers: Any, kinds: str) -> None:
    tower = VisionSpec.from_dict({**TOWER, "intermediate_size": None, "layers": layers})
    assert issues_of(tower_layer_stack, tower) == [
        (("vision", "intermediate_size"), "stack.dense-without-intermediate",
         f"the stack has layers of kind {kinds} with a dense feed-forward, but vision.intermediate_size is not "
         "declared; declare the dense width")]


@pytest.mark.parametrize("patch_size, where, found", [
    pytest.param(16, ("vision", "patch_size"), "this spec states vision.patch_size: 16", id="stated-otherwise"),
    # absent and not priced as a value: unstated, the counts decide
    pytest.param(None, None, None, id="absent"),
])
def test_tower_layer_stack_judges_what_the_vision_counts_assume(patch_size: Optional[int], where: Any,
                                                                found: Optional[str]) -> None:
    tower = VisionSpec.from_dict({**TOWER, "patch_size": patch_size})
    if where is None:
        assert stack_groups(tower_layer_stack(tower, ASSUMING_PROFILES)) == [("encoder", 27, False)]
        return
    assert issues_of(tower_layer_stack, tower, ASSUMING_PROFILES) == [
        (where, "stack.profile-assumes",
         f"op profile 'vision' counts the ops of kind ['encoder'] for vision.patch_size: 14, but {found}: a tower "
         "that differs there runs other ops; state vision.layers with kinds of op profile 'vision' whose counts fit "
         "it")]


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
    assert [(path, code) for path, code, _ in issues_of(spec_layer_stack, ModelSpec.from_dict(data))] == [
        (("num_experts",), "stack.moe-without-experts"), (("num_experts_per_tok",), "stack.moe-without-experts")]


def test_a_moe_spec_without_its_top_k_is_refused() -> None:
    # routed-expert compute is top-k times one expert: without num_experts_per_tok it cannot be priced
    data = {key: value for key, value in MIXTRAL_8X7B.items() if key != "num_experts_per_tok"}
    assert issues_of(spec_layer_stack, ModelSpec.from_dict(data)) == [
        (("num_experts_per_tok",), "stack.moe-without-experts",
         "the stack has layers of kind ['full_attention'] with routed experts, but num_experts_per_tok is not "
         "declared; declare how many routed experts there are and how many each token is sent to")]


def test_gpt_oss_without_layer_types_is_refused() -> None:
    data = {key: value for key, value in GPT_OSS_20B.items() if key != "layer_types"}
    # no arch is stated: the name picked the profile, so the refusal is located there
    assert issues_of(spec_layer_stack, ModelSpec.from_dict(data)) == [
        (("name",), "stack.no-default",
         "op profile 'gpt_oss' has several kinds ['full_attention', 'sliding_attention'] and names no default; "
         "state the stack in layers")]
    assert issues_of(spec_layer_stack, ModelSpec.from_dict(dict(data, arch="gpt_oss")))[0][0] == ("arch",)


# ---- real models the profiles' counts do not describe ------------------------------------------------

#: Moonlight-16B-A3B (moonshotai): DeepSeek-V3's code and model_type, but no query low-rank projection.
MOONLIGHT = {key: value for key, value in DEEPSEEK_V3.items() if key != "q_lora_rank"}
MOONLIGHT.update(name="moonlight-16b-a3b", arch="deepseek_v3")
DEEPSEEK_ASSUMED = ("op profile 'deepseek_v3' counts the ops of kind {kinds} {assumed}, but {found}: a model that "
                    "differs there runs other ops and needs its own; use an arch whose counts fit it, or state {ops} "
                    "with the model's own counts")

REAL_ASSUMPTION_REFUSALS = [
    # DeepSeek-V3's moe kind counts its one shared MLP (ffMM 7, ffAct 2), of n_shared_experts widths, which a spec
    # must state (DeepseekV3MoE builds and calls it whatever the number)
    pytest.param({key: value for key, value in DEEPSEEK_V3.items() if key != "num_shared_experts"}, [
        (("name",), DEEPSEEK_ASSUMED.format(
            kinds="['moe']", assumed="with num_shared_experts stated",
            found="this spec leaves num_shared_experts out, which is priced as 0", ops="ops.moe"))],
                 id="deepseek-v3-shared-experts-absent"),
    # its MLA counts the query's low-rank path (q_a_proj, q_b_proj, q_a_layernorm): attMM 5, normOp 4
    pytest.param(MOONLIGHT, [
        (("arch",), DEEPSEEK_ASSUMED.format(
            kinds="['dense', 'moe']", assumed="with q_lora_rank stated", found="this spec leaves q_lora_rank out",
            ops="ops.dense and ops.moe"))], id="moonlight-without-q-lora-rank"),
    # Mixtral's counts have no shared expert
    pytest.param(dict(MIXTRAL_8X7B, num_shared_experts=2), [
        (("num_shared_experts",), "op profile 'mixtral' counts the ops of kind ['full_attention'] for "
                                  "num_shared_experts: 0, but this spec states num_shared_experts: 2: a model that "
                                  "differs there runs other ops and needs its own; use an arch whose counts fit it, "
                                  "or state ops.full_attention with the model's own counts")], id="mixtral-shared"),
    # Qwen3.5-MoE's full attention counts the output gate and the q/k norms
    pytest.param(dict(QWEN35_35B_A3B, attn_output_gate=False, qk_norm=False), [
        (("qk_norm",), "op profile 'qwen3_5_moe' counts the ops of kind ['full_attention'] for qk_norm: true, but "
                       "this spec states qk_norm: false: a model that differs there runs other ops and needs its "
                       "own; use an arch whose counts fit it, or state ops.full_attention with the model's own "
                       "counts"),
        (("attn_output_gate",), "op profile 'qwen3_5_moe' counts the ops of kind ['full_attention'] for "
                                "attn_output_gate: true, but this spec states attn_output_gate: false: a model that "
                                "differs there runs other ops and needs its own; use an arch whose counts fit it, "
                                "or state ops.full_attention with the model's own counts")], id="qwen3.5-ungated"),
]


@pytest.mark.parametrize("data, expected", REAL_ASSUMPTION_REFUSALS)
def test_a_real_model_the_profiles_counts_do_not_describe_is_refused(
        data: Dict[str, Any], expected: List[Tuple[Tuple[str, ...], str]]) -> None:
    assert issues_of(spec_layer_stack, ModelSpec.from_dict(data)) == [
        (path, "stack.profile-assumes", message) for path, message in expected]


def test_moonlight_with_its_own_ops_resolves() -> None:
    own = dict(MOONLIGHT, ops={"dense": DECLARED.to_dict(), "moe": DECLARED.to_dict()})
    assert [kind.ops for kind in spec_layer_stack(ModelSpec.from_dict(own)).distinct_kinds()] == [DECLARED, DECLARED]


#: Qwen/Qwen3-8B's config.json as a spec, under arch llama: what `modelspec import --arch llama` of it writes.
QWEN3_AS_LLAMA = """\
name: qwen3-8b
hidden_size: 4096
num_hidden_layers: 36
num_attention_heads: 32
vocab_size: 151936
num_key_value_heads: 8
head_dim: 128
intermediate_size: 12288
qk_norm: true
arch: llama
"""


def test_check_refuses_a_qwen3_config_priced_as_llama() -> None:
    # import checks what it is about to write with these passes; Llama's counts have no q_norm, k_norm
    checked = check_document(load_bytes(QWEN3_AS_LLAMA.encode(), "qwen3-8b.yaml"), load_op_profiles())
    assert [(p.line, p.column, p.pass_name, p.code, p.message) for p in checked.result.problems] == [
        (9, 10, "stack", "stack.profile-assumes",
         "op profile 'llama' counts the ops of kind ['full_attention'] for qk_norm: false, but this spec states "
         "qk_norm: true: a model that differs there runs other ops and needs its own; use an arch whose counts fit "
         "it, or state ops.full_attention with the model's own counts")]


def test_codes() -> None:
    assert sorted(CODES) == [
        "stack.chunked-without-size", "stack.dense-without-intermediate", "stack.field-without-kind", "stack.layer-types-long",
        "stack.layer-types-short", "stack.layer-types-unknown", "stack.linear-dims", "stack.mla-without-ranks",
        "stack.moe-without-experts", "stack.mtp-kind", "stack.no-default", "stack.odd-encoder-decoder",
        "stack.profile-assumes", "stack.sliding-without-window", "stack.ssm-without-state", "stack.unknown-kind"]
    assert all(text.endswith(".") for text in CODES.values())


# ---- import cost ---------------------------------------------------------------------------

#: What the library must not pull in: the command line's and the loaders' dependencies (imported where used).
HEAVY = ("jsonschema", "git", "click", "yaml")


def test_importing_the_library_imports_no_heavy_dependency() -> None:
    code = ("import sys, pipeline.spec.model, pipeline.pricing.op_profiles, pipeline.pricing.stack; "
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_loading_the_profiles_imports_the_yaml_reader_not_the_command_line() -> None:
    """The import test above can fail: the first load does import yaml, where it is used."""
    code = ("import sys, pipeline.pricing.op_profiles; pipeline.pricing.op_profiles.load_op_profiles(); "
            f"print(sorted(name for name in {HEAVY!r} if name in sys.modules and name not in ('jsonschema',)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['yaml']"


def test_spec_layer_stack_refuses_a_state_space_stack_without_its_state_or_taps() -> None:
    profiles = load_op_profiles()
    mamba = spec(arch="mamba", intermediate_size=None, ssm_expand=2, ssm_intermediate_size=128, ssm_dt_rank=4)
    assert issues_of(spec_layer_stack, mamba, profiles) == [
        ((name,), "stack.ssm-without-state",
         f"the stack has layers of kind ['mamba'] with a state-space mixer, but {name} is not declared; declare the "
         "state per channel and the conv taps of the state-space mixer")
        for name in ("ssm_state_size", "ssm_conv_kernel")]
    priced = spec(arch="mamba", intermediate_size=None, ssm_expand=2, ssm_intermediate_size=128, ssm_dt_rank=4,
                  ssm_state_size=16, ssm_conv_kernel=4)
    assert stack_groups(spec_layer_stack(priced, profiles)) == [("mamba", 4, False)]
