"""Tests of the model IR, :mod:`pipeline.spec.model`.

Every refusal is asserted as its exact ``(path, code, message)`` triples, in
tables of ``(input, expected issues)``: the reference model spec's refusals,
and the rules where this project is stricter (integers refuse ``true``,
``12.5``, ``4096.0`` and ``"12"``; numbers refuse NaN and infinities; a tower
refuses unknown keys; every independent problem is reported at once). The
derived reads are checked on real models' numbers. Two properties close it:
a valid spec survives ``to_dict``/``from_dict`` unchanged, and ``from_dict``
on anything at all raises :class:`ModelSpecError` or returns a spec, never
another exception.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Mapping, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.spec.model import (
    CODES,
    ImportGaps,
    INT_LIMIT,
    LINEAR_FIELDS,
    MODEL_KEYS,
    MODEL_KEYS_ORDERED,
    KindActivations,
    LayerGroup,
    ModelSpec,
    ModelSpecError,
    OpCounts,
    SpecIssue,
    StatedParameters,
    VisionSpec,
    activations_from_dict,
    check_layer_counts,
    layers_from_list,
    model_fields,
    ops_from_dict,
    unknown_key_message,
)
from budget import examples

Issue = Tuple[Tuple[Any, ...], str, str]

# ---- inputs ------------------------------------------------------------------

#: The smallest valid spec: the four required fields.
BASE: Dict[str, Any] = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100}
#: Distinct counts, so a test can tell the ops apart.
OPS: Dict[str, int] = {"attMM": 4, "attBMM": 2, "ffMM": 3, "softmax": 1, "dropout": 2, "normOp": 2, "gather": 0,
                       "headCast": 1, "ffAct": 1, "linrec": 0}
#: A census record with only its required fields.
RECORD: Dict[str, Any] = {"saved": 10.0, "saved_tp": 20.0, "working": 30.0, "working_tp": 40.0, "seq_length": 4096}
#: The smallest valid vision tower.
TOWER: Dict[str, Any] = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2}
#: A stack of BASE's two layers.
DENSE_STACK = [{"kind": "dense", "count": 2}]

#: Marks a key to remove from BASE.
DROP = object()

# The lists the messages name, written out so that a rename fails a test.
OP_NAMES = "['attMM', 'attBMM', 'ffMM', 'softmax', 'dropout', 'normOp', 'gather', 'headCast', 'ffAct', 'linrec']"
OP_NAMES_OTHER = OP_NAMES[:-1] + ", 'other']"
RECORD_KEYS = ("['saved', 'saved_tp', 'working', 'working_tp', 'seq_length', 'selective', 'selective_tp', "
               "'selective_attention_mm', 'selective_ffn_mm', 'ops', 'ops_tp']")
TOWER_KEYS = ("['hidden_size', 'num_hidden_layers', 'num_attention_heads', 'name', 'intermediate_size', "
              "'out_hidden_size', 'projector_input_dim', 'projector_output_dim', 'patch_size', 'in_channels', 'temporal_patch_size', 'spatial_merge_size', "
              "'num_position_embeddings', 'num_deepstack_mergers', 'max_num_tiles', 'num_aspect_ratios', "
              "'max_position_embeddings', 'pooling_head', 'projector_bias', 'layers']")
LINEAR_NAMES = ("['linear_num_key_heads', 'linear_key_head_dim', 'linear_num_value_heads', 'linear_value_head_dim', "
                "'linear_conv_kernel_dim']")
PRECISION_HINT = ("states a run's precision, not a model fact; a run takes its precision from its execution spec "
                  "(fsdp_config.mix_precision.param_dtype, else model_init_dtype), and the model states only the "
                  "dtype its checkpoint is saved in, as torch_dtype")
NOT_A_MODEL_FACT = ("a model spec states the model only (its fields are in the schema, "
                    "schemas/model-spec.schema.json), and a run's strategy, such as its parallel degrees or "
                    "recompute, belongs in its execution spec")
NO_OP = "declare 0 for an op the layer does not run"


def spec_data(*changes: Mapping[Any, Any], **more: Any) -> Dict[Any, Any]:
    """BASE with the mappings *changes*, then *more*, applied; a change to :data:`DROP` removes the key."""
    data: Dict[Any, Any] = dict(BASE)
    for change in (*changes, more):
        data.update(change)
    return {key: value for key, value in data.items() if value is not DROP}


def issues_of(parse: Callable[..., Any], *args: Any) -> List[Issue]:
    """The ``(path, code, message)`` of every issue ``parse(*args)`` raises; fails if it raises none."""
    with pytest.raises(ModelSpecError) as caught:
        parse(*args)
    return [(issue.path, issue.code, issue.message) for issue in caught.value.issues]


def one(path: Tuple[Any, ...], code: str, message: str) -> List[Issue]:
    """A single expected issue."""
    return [(path, code, message)]


# ---- refusals: tables of (input, expected issues) ---------------------------------

NOT_A_MAPPING = [
    pytest.param(None, "None", id="none"),
    pytest.param([], "[]", id="empty-list"),
    pytest.param([BASE], f"[{BASE!r}]", id="list-of-spec"),
    pytest.param("hidden_size: 64", "'hidden_size: 64'", id="string"),
    pytest.param(7, "7", id="int"),
    pytest.param(float("nan"), "nan", id="nan"),
    pytest.param(True, "True", id="bool"),
]


@pytest.mark.parametrize("data, shown", NOT_A_MAPPING)
def test_from_dict_refuses_a_non_mapping(data: Any, shown: str) -> None:
    assert issues_of(ModelSpec.from_dict, data) == one(
        (), "spec.not-a-mapping", f"a model spec must be a mapping of field names to values, got {shown}")


# Top-level refusals at parse time: unknown keys, missing fields, wrong types.
PARSE_REFUSALS = [
    # unknown keys; a run's precision keys are told where a run's precision belongs
    pytest.param({"compute_dtype": "bfloat16"}, one(
        ("compute_dtype",), "spec.unknown-key",
        f"unknown model spec key 'compute_dtype': compute_dtype {PRECISION_HINT}"),
        id="unknown-compute_dtype"),
    pytest.param({"param_init_type": "float32"}, one(
        ("param_init_type",), "spec.unknown-key",
        f"unknown model spec key 'param_init_type': param_init_type {PRECISION_HINT}"), id="unknown-param_init_type"),
    pytest.param({"tensor_parallel": 8}, one(
        ("tensor_parallel",), "spec.unknown-key", f"unknown model spec key 'tensor_parallel': {NOT_A_MODEL_FACT}"),
        id="unknown-strategy-key"),
    pytest.param({"num_local_experts": 8}, one(
        ("num_local_experts",), "spec.unknown-key", f"unknown model spec key 'num_local_experts': {NOT_A_MODEL_FACT}"),
        id="unknown-hf-key"),
    pytest.param({3: 1}, one((3,), "spec.unknown-key", f"unknown model spec key 3: {NOT_A_MODEL_FACT}"),
                 id="unknown-int-key"),
    # required fields, absent or null
    pytest.param({"hidden_size": DROP}, one(
        ("hidden_size",), "spec.required", "hidden_size is required and was not supplied"), id="required-hidden_size"),
    pytest.param({"num_hidden_layers": None}, one(
        ("num_hidden_layers",), "spec.required", "num_hidden_layers is required and was not supplied"),
        id="required-null-is-absent"),
    pytest.param({"num_attention_heads": DROP}, one(
        ("num_attention_heads",), "spec.required", "num_attention_heads is required and was not supplied"),
        id="required-num_attention_heads"),
    pytest.param({"vocab_size": DROP}, one(
        ("vocab_size",), "spec.required", "vocab_size is required and was not supplied"), id="required-vocab_size"),
    # integer fields: no bool, float (even integral), string, NaN, infinity, or number beyond 64 bits
    pytest.param({"hidden_size": True}, one(
        ("hidden_size",), "spec.not-integer",
        "hidden_size must be a whole number, got true; a count is not true or false"),
        id="int-true"),
    pytest.param({"num_key_value_heads": False}, one(
        ("num_key_value_heads",), "spec.not-integer",
        "num_key_value_heads must be a whole number, got false; a count is not true or false"), id="int-false"),
    pytest.param({"hidden_size": 12.5}, one(
        ("hidden_size",), "spec.not-integer", "hidden_size must be a whole number, got 12.5"), id="int-fraction"),
    pytest.param({"hidden_size": 4096.0}, one(
        ("hidden_size",), "spec.not-integer", "hidden_size must be an integer, got the float 4096.0; write 4096"),
        id="int-integral-float"),
    pytest.param({"intermediate_size": 7e3}, one(
        ("intermediate_size",), "spec.not-integer",
        "intermediate_size must be an integer, got the float 7000.0; write 7000"), id="int-exponent-float"),
    pytest.param({"vocab_size": "12"}, one(
        ("vocab_size",), "spec.not-integer",
        "vocab_size must be an integer, got the string '12'; write 12 without quotes"),
        id="int-string"),
    pytest.param({"vocab_size": " +12 "}, one(
        ("vocab_size",), "spec.not-integer",
        "vocab_size must be an integer, got the string ' +12 '; write 12 without quotes"), id="int-string-signed"),
    pytest.param({"hidden_size": "²"}, one(
        ("hidden_size",), "spec.not-integer", "hidden_size must be an integer, got '²'"), id="int-superscript-string"),
    pytest.param({"hidden_size": "+-1"}, one(
        ("hidden_size",), "spec.not-integer", "hidden_size must be an integer, got '+-1'"), id="int-two-signs"),
    pytest.param({"hidden_size": "1" * 5000}, one(
        ("hidden_size",), "spec.not-integer", f"hidden_size must be an integer, got '{'1' * 5000}'"),
        id="int-string-beyond-int-conversion"),
    pytest.param({"hidden_size": "wide"}, one(
        ("hidden_size",), "spec.not-integer", "hidden_size must be an integer, got 'wide'"), id="int-word"),
    pytest.param({"hidden_size": [64]}, one(
        ("hidden_size",), "spec.not-integer", "hidden_size must be an integer, got [64]"), id="int-list"),
    pytest.param({"hidden_size": float("nan")}, one(
        ("hidden_size",), "spec.not-finite", "hidden_size must be a finite whole number, got nan"), id="int-nan"),
    pytest.param({"hidden_size": float("inf")}, one(
        ("hidden_size",), "spec.not-finite", "hidden_size must be a finite whole number, got inf"), id="int-inf"),
    pytest.param({"num_experts": float("-inf")}, one(
        ("num_experts",), "spec.not-finite",
        "num_experts must be a finite whole number, got -inf"), id="int-minus-inf"),
    pytest.param({"hidden_size": 2**63}, one(
        ("hidden_size",), "spec.too-large",
        "hidden_size is an integer of 64 bits; no count or width is beyond 2**63 - 1"),
        id="int-beyond-64-bits"),
    pytest.param({"first_k_dense_replace": -(2**70)}, one(
        ("first_k_dense_replace",), "spec.too-large",
        "first_k_dense_replace is an integer of 71 bits; no count or width is beyond 2**63 - 1"),
        id="int-beyond-64-bits-negative"),
    pytest.param({"num_experts_per_tok": 16**4000}, one(
        ("num_experts_per_tok",), "spec.too-large",
        "num_experts_per_tok is an integer of 16001 bits; no count or width is beyond 2**63 - 1"),
        id="int-too-long-to-print"),
    # a width, head or expert count stated as 0 is the silent zero the IR refuses
    pytest.param({"head_dim": 0}, one(("head_dim",), "spec.not-positive", "head_dim must be positive, got 0"),
                 id="positive-zero"),
    pytest.param({"intermediate_size": -5}, one(
        ("intermediate_size",), "spec.not-positive",
        "intermediate_size must be positive, got -5"), id="positive-negative"),
    pytest.param({"num_experts": 0}, one(("num_experts",), "spec.not-positive", "num_experts must be positive, got 0"),
                 id="positive-num_experts"),
    pytest.param({"linear_conv_kernel_dim": 0}, one(
        ("linear_conv_kernel_dim",), "spec.not-positive", "linear_conv_kernel_dim must be positive, got 0"),
        id="positive-linear"),
    # the counts for which 0 is real refuse only negatives
    pytest.param({"num_shared_experts": -1}, one(
        ("num_shared_experts",), "spec.negative", "num_shared_experts must not be negative, got -1"),
        id="count-num_shared_experts"),
    pytest.param({"first_k_dense_replace": -1}, one(
        ("first_k_dense_replace",), "spec.negative", "first_k_dense_replace must not be negative, got -1"),
        id="count-first_k_dense_replace"),
    pytest.param({"mtp_depth": -2}, one(("mtp_depth",), "spec.negative", "mtp_depth must not be negative, got -2"),
                 id="count-mtp_depth"),
    # float fields: no bool, string, NaN, infinity; a multiplier of a width is positive
    pytest.param({"ffn_dim_multiplier": True}, one(
        ("ffn_dim_multiplier",), "spec.not-number", "ffn_dim_multiplier must be a number, got True"), id="float-bool"),
    pytest.param({"ffn_dim_multiplier": "1.3"}, one(
        ("ffn_dim_multiplier",), "spec.not-number",
        "ffn_dim_multiplier must be a number, got '1.3'"), id="float-string"),
    pytest.param({"ffn_dim_multiplier": [1.3]}, one(
        ("ffn_dim_multiplier",), "spec.not-number", "ffn_dim_multiplier must be a number, got [1.3]"), id="float-list"),
    pytest.param({"ffn_dim_multiplier": float("nan")}, one(
        ("ffn_dim_multiplier",), "spec.not-finite", "ffn_dim_multiplier must be a finite number, got nan"),
        id="float-nan"),
    pytest.param({"ffn_dim_multiplier": float("inf")}, one(
        ("ffn_dim_multiplier",), "spec.not-finite", "ffn_dim_multiplier must be a finite number, got inf"),
        id="float-inf"),
    pytest.param({"ffn_dim_multiplier": 10**400}, one(
        ("ffn_dim_multiplier",), "spec.not-finite",
        "ffn_dim_multiplier is an integer beyond a float's range (about 1.8e308); a finite number is required"),
        id="float-int-beyond-float-range"),
    pytest.param({"ffn_dim_multiplier": 0}, one(
        ("ffn_dim_multiplier",), "spec.not-positive", "ffn_dim_multiplier must be positive, got 0.0"), id="float-zero"),
    pytest.param({"ffn_dim_multiplier": -1.3}, one(
        ("ffn_dim_multiplier",), "spec.not-positive", "ffn_dim_multiplier must be positive, got -1.3"),
        id="float-negative"),
    # flags
    pytest.param({"qk_norm": "yes"}, one(("qk_norm",), "spec.not-boolean", "qk_norm must be true or false, got 'yes'"),
                 id="flag-yes"),
    pytest.param({"tie_word_embeddings": 1}, one(
        ("tie_word_embeddings",), "spec.not-boolean",
        "tie_word_embeddings must be true or false, got 1"), id="flag-one"),
    pytest.param({"shared_expert_gate": [2**80, 16**4000]}, one(
        ("shared_expert_gate",), "spec.not-boolean", "shared_expert_gate must be true or false, got a value too large "
                                                     "to print (list)"), id="flag-unprintable-list"),
    # names
    pytest.param({"name": 5}, one(("name",), "spec.not-string", "name must be a non-empty string, got 5"),
                 id="name-int"),
    pytest.param({"name": ""}, one(("name",), "spec.not-string", "name must be a non-empty string, got ''"),
                 id="name-empty"),
    pytest.param({"arch": ["llama"]}, one(
        ("arch",), "spec.not-string", "arch must be a non-empty string, got ['llama']"), id="arch-list"),
    pytest.param({"torch_dtype": 16}, one(
        ("torch_dtype",), "spec.not-string", "torch_dtype must be a non-empty string, got 16"), id="dtype-int"),
    pytest.param({"torch_dtype": "torch."}, one(
        ("torch_dtype",), "spec.dtype", "torch_dtype must be one of bfloat16, float16, float32, float64, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn_x2, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, got 'torch.'"),
        id="dtype-prefix-only"),
    pytest.param({"torch_dtype": "torch.torch.bfloat16"}, one(
        ("torch_dtype",), "spec.dtype",
        "torch_dtype must be one of bfloat16, float16, float32, float64, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn_x2, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, got 'torch.torch.bfloat16'"), id="dtype-prefix-twice"),
    pytest.param({"torch_dtype": "bf16\n::error::x"}, one(
        ("torch_dtype",), "spec.dtype",
        "torch_dtype must be one of bfloat16, float16, float32, float64, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn_x2, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, got 'bf16\\n::error::x'"), id="dtype-free-text"),
    pytest.param({"torch_dtype": "float8_torch.e4m3"}, one(
        ("torch_dtype",), "spec.dtype",
        "torch_dtype must be one of bfloat16, float16, float32, float64, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn_x2, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, got 'float8_torch.e4m3'"), id="dtype-not-a-prefix"),
    # layer_types
    pytest.param({"layer_types": []}, one(
        ("layer_types",), "spec.not-a-list", "layer_types must list layer type names, got []"), id="layer_types-empty"),
    pytest.param({"layer_types": "full_attention"}, one(
        ("layer_types",), "spec.not-a-list", "layer_types must list layer type names, got 'full_attention'"),
        id="layer_types-string"),
    pytest.param({"layer_types": ["full_attention", 3, ""]}, [
        (("layer_types", 1), "spec.not-string", "layer_types[1] must be a non-empty string, got 3"),
        (("layer_types", 2), "spec.not-string", "layer_types[2] must be a non-empty string, got ''"),
    ], id="layer_types-entries"),
    # the containers
    pytest.param({"layers": []}, one(
        ("layers",), "spec.not-a-list", "layers must list at least one group of {kind, count}, got []"),
        id="layers-empty"),
    pytest.param({"layers": {"kind": "dense", "count": 2}}, one(
        ("layers",), "spec.not-a-list",
        "layers must list at least one group of {kind, count}, got {'kind': 'dense', 'count': 2}"),
        id="layers-mapping"),
    pytest.param({"ops": {}}, one(
        ("ops",), "spec.not-a-mapping", "ops must map at least one layer kind to its op counts; leave it out instead"),
        id="ops-empty"),
    pytest.param({"ops": [OPS]}, one(
        ("ops",), "spec.not-a-mapping", f"ops must be a mapping of layer kinds to their op counts, got [{OPS!r}]"),
        id="ops-list"),
    pytest.param({"activations": "dense"}, one(
        ("activations",), "spec.not-a-mapping",
        "activations must be a mapping of layer kinds to their activations records, got 'dense'"),
        id="activations-string"),
    pytest.param({"output_activations": 3}, one(
        ("output_activations",), "spec.not-a-mapping",
        "output_activations must be a mapping of the activations record's fields to their values, got 3"),
        id="output_activations-int"),
    pytest.param({"vision": True}, one(
        ("vision",), "spec.not-a-mapping", "vision must be a mapping of the tower's fields to their values, got True"),
        id="vision-bool"),
    pytest.param({"relative_attention_num_buckets": 0}, one(
        ("relative_attention_num_buckets",), "spec.not-positive",
        "relative_attention_num_buckets must be positive, got 0"), id="relative_attention_num_buckets-zero"),
    pytest.param({"relative_attention_num_buckets": "32"}, one(
        ("relative_attention_num_buckets",), "spec.not-integer",
        "relative_attention_num_buckets must be an integer, got the string '32'; write 32 without quotes"),
        id="relative_attention_num_buckets-string"),
]


@pytest.mark.parametrize("changes, expected", PARSE_REFUSALS)
def test_from_dict_refuses_a_field(changes: Dict[str, Any], expected: List[Issue]) -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(changes)) == expected


# Refusals of a group of layers, read through a spec so the paths are the spec's.
LAYER_REFUSALS = [
    pytest.param(["dense", "moe"], [
        (("layers", 0), "spec.not-a-mapping", "layers[0] must be a mapping of kind, count and mtp, got 'dense'"),
        (("layers", 1), "spec.not-a-mapping", "layers[1] must be a mapping of kind, count and mtp, got 'moe'"),
    ], id="not-a-mapping"),
    pytest.param([{"count": 2}], one(
        ("layers", 0, "kind"), "spec.layer-kind", "layers[0].kind must name a layer kind of the op profile, got None"),
        id="kind-missing"),
    pytest.param([{"kind": "", "count": 2}], one(
        ("layers", 0, "kind"), "spec.layer-kind", "layers[0].kind must name a layer kind of the op profile, got ''"),
        id="kind-empty"),
    pytest.param([{"kind": 7, "count": 2}], one(
        ("layers", 0, "kind"), "spec.layer-kind", "layers[0].kind must name a layer kind of the op profile, got 7"),
        id="kind-int"),
    pytest.param([{"kind": "dense"}], one(("layers", 0, "count"), "spec.required", "layers[0].count is required"),
                 id="count-missing"),
    pytest.param([{"kind": "dense", "count": None}], one(
        ("layers", 0, "count"), "spec.required", "layers[0].count is required"), id="count-null"),
    pytest.param([{"kind": "dense", "count": 0}], one(
        ("layers", 0, "count"), "spec.layer-count",
        "layers[0].count must be positive; leave out a group with no layers"),
        id="count-zero"),
    pytest.param([{"kind": "dense", "count": -1}], one(
        ("layers", 0, "count"), "spec.negative", "layers[0].count must not be negative, got -1"), id="count-negative"),
    pytest.param([{"kind": "dense", "count": 2.0}], one(
        ("layers", 0, "count"), "spec.not-integer", "layers[0].count must be an integer, got the float 2.0; write 2"),
        id="count-float"),
    pytest.param([{"kind": "dense", "count": True}], one(
        ("layers", 0, "count"), "spec.not-integer",
        "layers[0].count must be a whole number, got true; a count is not true or false"), id="count-bool"),
    pytest.param([{"kind": "dense", "count": 2, "mtp": "yes"}], one(
        ("layers", 0, "mtp"), "spec.not-boolean", "layers[0].mtp must be true or false, got 'yes'"), id="mtp-string"),
    pytest.param([{"kind": "dense", "count": 2, "repeat": 2}], one(
        ("layers", 0, "repeat"), "spec.unknown-key",
        "layers[0] declares unknown key 'repeat'; the keys are kind, count, mtp"),
        id="unknown-key"),
    pytest.param([{"kind": "dense", "count": 2}, {"kind": None, "count": 0, "mtp": 1, "x": 1}], [
        (("layers", 1, "x"), "spec.unknown-key", "layers[1] declares unknown key 'x'; the keys are kind, count, mtp"),
        (("layers", 1, "kind"), "spec.layer-kind", "layers[1].kind must name a layer kind of the op profile, got None"),
        (("layers", 1, "count"), "spec.layer-count",
         "layers[1].count must be positive; leave out a group with no layers"),
        (("layers", 1, "mtp"), "spec.not-boolean", "layers[1].mtp must be true or false, got 1"),
    ], id="every-problem-of-a-group"),
]


@pytest.mark.parametrize("layers, expected", LAYER_REFUSALS)
def test_from_dict_refuses_a_layer_group(layers: Any, expected: List[Issue]) -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(layers=layers)) == expected


def with_op(**changes: Any) -> Dict[str, Any]:
    """OPS with *changes* applied; a change to :data:`DROP` removes the op."""
    return {op: count for op, count in {**OPS, **changes}.items() if count is not DROP}


OPS_REFUSALS = [
    pytest.param({"dense": with_op(fooMM=1)}, one(
        ("ops", "dense", "fooMM"), "spec.op-unknown", f"ops.dense declares unknown op 'fooMM'; the ops are {OP_NAMES}"),
        id="unknown-op"),
    pytest.param({"dense": with_op(linrec=DROP, ffAct=DROP)}, one(
        ("ops", "dense"), "spec.op-missing", f"ops.dense is missing counts for ['ffAct', 'linrec']; {NO_OP}"),
        id="missing-ops"),
    pytest.param({"dense": with_op(linrec=None)}, one(
        ("ops", "dense", "linrec"), "spec.op-missing", f"ops.dense.linrec is null; {NO_OP}"), id="null-op"),
    pytest.param({"dense": with_op(attMM=-1)}, one(
        ("ops", "dense", "attMM"), "spec.negative", "ops.dense.attMM must not be negative, got -1"), id="negative"),
    pytest.param({"dense": with_op(ffMM=3.0)}, one(
        ("ops", "dense", "ffMM"), "spec.not-integer", "ops.dense.ffMM must be an integer, got the float 3.0; write 3"),
        id="float"),
    pytest.param({"dense": with_op(gather=False)}, one(
        ("ops", "dense", "gather"), "spec.not-integer",
        "ops.dense.gather must be a whole number, got false; a count is not true or false"), id="bool"),
    pytest.param({"dense": 4}, one(
        ("ops", "dense"), "spec.not-a-mapping", "ops.dense must be a mapping of op names to counts, got 4"),
        id="table-not-a-mapping"),
    pytest.param({1: OPS}, one(
        ("ops", 1), "spec.layer-kind", "ops is keyed by 1, which is not a layer kind's name; write the kind as text"),
        id="kind-int"),
    pytest.param({"": OPS}, one(
        ("ops", ""), "spec.layer-kind", "ops is keyed by '', which is not a layer kind's name; write the kind as text"),
        id="kind-empty"),
    pytest.param({"dense": with_op(attMM=None, bogus=1), "moe": {}}, [
        (("ops", "dense", "bogus"), "spec.op-unknown",
         f"ops.dense declares unknown op 'bogus'; the ops are {OP_NAMES}"),
        (("ops", "dense", "attMM"), "spec.op-missing", f"ops.dense.attMM is null; {NO_OP}"),
        (("ops", "moe"), "spec.op-missing", f"ops.moe is missing counts for {OP_NAMES}; {NO_OP}"),
    ], id="every-problem-of-every-table"),
]


@pytest.mark.parametrize("ops, expected", OPS_REFUSALS)
def test_from_dict_refuses_op_counts(ops: Any, expected: List[Issue]) -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(ops=ops)) == expected


def record(**changes: Any) -> Dict[str, Any]:
    """RECORD with *changes* applied; a change to :data:`DROP` removes the field."""
    return {key: value for key, value in {**RECORD, **changes}.items() if value is not DROP}


OA = ("output_activations",)

RECORD_REFUSALS = [
    pytest.param(record(saved=DROP), one(OA + ("saved",), "spec.required", "output_activations.saved is required"),
                 id="required-missing"),
    pytest.param(record(seq_length=None), one(
        OA + ("seq_length",), "spec.required", "output_activations.seq_length is required"), id="required-null"),
    pytest.param(record(peak=1.0), one(
        OA + ("peak",), "spec.unknown-key",
        f"output_activations declares unknown key 'peak'; the keys are {RECORD_KEYS}"),
        id="unknown-key"),
    pytest.param(record(selective=1.0), one(
        OA, "spec.activations-pair",
        "output_activations states one of ['selective', 'selective_tp'] without the other; state both or neither"),
        id="pair-selective"),
    pytest.param(record(selective=None, selective_tp=2.0), one(
        OA, "spec.activations-pair",
        "output_activations states one of ['selective', 'selective_tp'] without the other; state both or neither"),
        id="pair-selective-null-half"),
    pytest.param(record(selective_ffn_mm=0.5), one(
        OA, "spec.activations-pair", "output_activations states one of ['selective_attention_mm', 'selective_ffn_mm'] "
                                     "without the other; state both or neither"), id="pair-shares"),
    pytest.param(record(ops={"attMM": 1.0}), one(
        OA, "spec.activations-pair",
        "output_activations states one of ['ops', 'ops_tp'] without the other; state both or neither"), id="pair-ops"),
    pytest.param(record(saved=-1), one(
        OA + ("saved",), "spec.negative", "output_activations.saved: bytes per token cannot be negative, got -1.0"),
        id="size-negative"),
    pytest.param(record(working="1"), one(
        OA + ("working",), "spec.not-number",
        "output_activations.working must be a number, got '1'"), id="size-string"),
    pytest.param(record(working_tp=True), one(
        OA + ("working_tp",), "spec.not-number", "output_activations.working_tp must be a number, got True"),
        id="size-bool"),
    pytest.param(record(saved_tp=float("nan")), one(
        OA + ("saved_tp",), "spec.not-finite", "output_activations.saved_tp must be a finite number, got nan"),
        id="size-nan"),
    pytest.param(record(saved_tp=float("-inf")), one(
        OA + ("saved_tp",), "spec.not-finite", "output_activations.saved_tp must be a finite number, got -inf"),
        id="size-minus-inf"),
    pytest.param(record(saved=10**400), one(
        OA + ("saved",), "spec.not-finite",
        "output_activations.saved is an integer beyond a float's range (about 1.8e308); a finite number is required"),
        id="size-int-beyond-float-range"),
    pytest.param(record(seq_length=0), one(
        OA + ("seq_length",), "spec.not-positive", "output_activations.seq_length must be positive, got 0"),
        id="seq_length-zero"),
    pytest.param(record(seq_length=4096.0), one(
        OA + ("seq_length",), "spec.not-integer",
        "output_activations.seq_length must be an integer, got the float 4096.0; write 4096"), id="seq_length-float"),
    pytest.param(record(selective_attention_mm=1.5, selective_ffn_mm=0.5), one(
        OA + ("selective_attention_mm",), "spec.share-above-one",
        "output_activations.selective_attention_mm is a share of FLOPs and cannot exceed 1, got 1.5"),
        id="share-above-one"),
    pytest.param(record(selective_attention_mm=0.5, selective_ffn_mm=-0.25), one(
        OA + ("selective_ffn_mm",), "spec.negative",
        "output_activations.selective_ffn_mm is a share of FLOPs and cannot be negative, got -0.25"),
        id="share-negative"),
    pytest.param(record(ops={"attMM": 1.0, "bogus": 2.0}, ops_tp={}), one(
        OA + ("ops", "bogus"), "spec.op-unknown",
        f"output_activations.ops names unknown op 'bogus'; the ops are {OP_NAMES_OTHER}"), id="ops-unknown-op"),
    pytest.param(record(ops={}, ops_tp={"other": -1}), one(
        OA + ("ops_tp", "other"), "spec.negative",
        "output_activations.ops_tp.other: bytes per token cannot be negative, got -1.0"), id="ops-negative"),
    pytest.param(record(ops="x", ops_tp={}), one(
        OA + ("ops",), "spec.not-a-mapping",
        f"output_activations.ops must be a mapping of ops of {OP_NAMES_OTHER} to bytes per token, got 'x'"),
        id="ops-not-a-mapping"),
    pytest.param({"saved": -1, "selective": 1.0, "seq_length": 0, "peak": 1}, [
        (OA + ("peak",), "spec.unknown-key",
         f"output_activations declares unknown key 'peak'; the keys are {RECORD_KEYS}"),
        (OA + ("saved_tp",), "spec.required", "output_activations.saved_tp is required"),
        (OA + ("working",), "spec.required", "output_activations.working is required"),
        (OA + ("working_tp",), "spec.required", "output_activations.working_tp is required"),
        (OA, "spec.activations-pair",
         "output_activations states one of ['selective', 'selective_tp'] without the other; state both or neither"),
        (OA + ("saved",), "spec.negative", "output_activations.saved: bytes per token cannot be negative, got -1.0"),
        (OA + ("seq_length",), "spec.not-positive", "output_activations.seq_length must be positive, got 0"),
    ], id="every-problem-of-a-record"),
]


@pytest.mark.parametrize("data, expected", RECORD_REFUSALS)
def test_from_dict_refuses_an_activations_record(data: Any, expected: List[Issue]) -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(output_activations=data)) == expected


ACTIVATIONS_REFUSALS = [
    pytest.param({"dense": record(saved=DROP)}, one(
        ("activations", "dense", "saved"), "spec.required", "activations.dense.saved is required"), id="record-path"),
    pytest.param({"dense": [RECORD]}, one(
        ("activations", "dense"), "spec.not-a-mapping",
        f"activations.dense must be a mapping of the activations record's fields to their values, got [{RECORD!r}]"),
        id="record-not-a-mapping"),
    pytest.param({2: RECORD}, one(
        ("activations", 2), "spec.layer-kind",
        "activations is keyed by 2, which is not a layer kind's name; write the kind as text"), id="kind-int"),
    pytest.param({True: RECORD, "dense": record(saved=-1)}, [
        (("activations", True), "spec.layer-kind",
         "activations is keyed by True, which is not a layer kind's name; write the kind as text"),
        (("activations", "dense", "saved"), "spec.negative",
         "activations.dense.saved: bytes per token cannot be negative, got -1.0"),
    ], id="every-record"),
]


@pytest.mark.parametrize("activations, expected", ACTIVATIONS_REFUSALS)
def test_from_dict_refuses_activations(activations: Any, expected: List[Issue]) -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(layers=DENSE_STACK, activations=activations)) == expected


def tower(**changes: Any) -> Dict[str, Any]:
    """TOWER with *changes* applied; a change to :data:`DROP` removes the field."""
    return {key: value for key, value in {**TOWER, **changes}.items() if value is not DROP}


TOWER_PARSE_REFUSALS = [
    pytest.param({}, [
        (("vision", "hidden_size"), "spec.required", "vision.hidden_size is required"),
        (("vision", "num_hidden_layers"), "spec.required", "vision.num_hidden_layers is required"),
        (("vision", "num_attention_heads"), "spec.required", "vision.num_attention_heads is required"),
    ], id="empty"),
    pytest.param(tower(num_attention_heads=None), one(
        ("vision", "num_attention_heads"), "spec.required", "vision.num_attention_heads is required"), id="null"),
    pytest.param(tower(depth=24), one(
        ("vision", "depth"), "spec.unknown-key", f"vision declares unknown key 'depth'; a tower states {TOWER_KEYS}"),
        id="unknown-key"),
    pytest.param(tower(hidden_size=0), one(
        ("vision", "hidden_size"), "spec.not-positive", "vision.hidden_size must be positive, got 0"), id="zero"),
    pytest.param(tower(num_deepstack_mergers=-1), one(  # 0 is a tower without them (Qwen3-VL's [] indexes)
        ("vision", "num_deepstack_mergers"), "spec.negative", "vision.num_deepstack_mergers must not be negative, "
                                                               "got -1"), id="negative-count"),
    pytest.param(tower(patch_size=14.0), one(
        ("vision", "patch_size"), "spec.not-integer",
        "vision.patch_size must be an integer, got the float 14.0; write 14"),
        id="float"),
    pytest.param(tower(in_channels=0), one(
        ("vision", "in_channels"), "spec.not-positive", "vision.in_channels must be positive, got 0"),
        id="in_channels-zero"),
    pytest.param(tower(temporal_patch_size=2.0), one(
        ("vision", "temporal_patch_size"), "spec.not-integer",
        "vision.temporal_patch_size must be an integer, got the float 2.0; write 2"), id="temporal_patch_size-float"),
    pytest.param(tower(spatial_merge_size=True), one(
        ("vision", "spatial_merge_size"), "spec.not-integer",
        "vision.spatial_merge_size must be a whole number, got true; a count is not true or false"), id="bool"),
    pytest.param(tower(out_hidden_size="2048"), one(
        ("vision", "out_hidden_size"), "spec.not-integer",
        "vision.out_hidden_size must be an integer, got the string '2048'; write 2048 without quotes"), id="string"),
    pytest.param(tower(name=""), one(
        ("vision", "name"), "spec.not-string", "vision.name must be a non-empty string, got ''"), id="name-empty"),
    pytest.param(tower(layers=[]), one(
        ("vision", "layers"), "spec.not-a-list", "vision.layers must list at least one group of {kind, count}, got []"),
        id="layers-empty"),
    pytest.param(tower(layers=[{"kind": "encoder", "count": 0}]), one(
        ("vision", "layers", 0, "count"), "spec.layer-count",
        "vision.layers[0].count must be positive; leave out a group with no layers"), id="layers-group"),
    pytest.param({"depth": 27, "num_heads": 16, "hidden_size": 1152}, [
        (("vision", "depth"), "spec.unknown-key", f"vision declares unknown key 'depth'; a tower states {TOWER_KEYS}"),
        (("vision", "num_heads"), "spec.unknown-key",
         f"vision declares unknown key 'num_heads'; a tower states {TOWER_KEYS}"),
        (("vision", "num_hidden_layers"), "spec.required", "vision.num_hidden_layers is required"),
        (("vision", "num_attention_heads"), "spec.required", "vision.num_attention_heads is required"),
    ], id="hf-vision-config-keys"),
]


@pytest.mark.parametrize("vision, expected", TOWER_PARSE_REFUSALS)
def test_from_dict_refuses_a_vision_tower(vision: Any, expected: List[Issue]) -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(vision=vision)) == expected


def test_a_tower_may_hold_no_deepstack_mergers() -> None:
    assert ModelSpec.from_dict(spec_data(vision=tower(num_deepstack_mergers=0))).vision.num_deepstack_mergers == 0


# The stated parameter count, read through a spec so the paths are the spec's.
PARAMETERS_HINT = ("parameters must be a mapping of total (and active, mtp, vision, for the parts a model has) to "
                   "parameter counts")
PARAMETERS_REFUSALS = [
    pytest.param({"total": 46_702_792_704, "active": 46_702_792_705}, one(
        ("parameters", "active"), "spec.active-above-total",
        "parameters.active is 46,702,792,705, above the total of 46,702,792,704; a token cannot pass through more "
        "parameters than the model has"), id="active-above-total"),
    pytest.param({"total": 100, "actve": 20}, one(
        ("parameters", "actve"), "spec.unknown-key",
        "parameters declares unknown key 'actve'; it states total, active, mtp and vision"), id="unknown-key"),
    pytest.param({"total": 100, "vision": 101}, one(
        ("parameters", "vision"), "spec.vision-above-total",
        "parameters.vision is 101, above the total of 100; the tower is part of the total"), id="vision-above-total"),
    pytest.param({"active": 20}, one(("parameters", "total"), "spec.required", "parameters.total is required"),
                 id="no-total"),
    pytest.param({}, one(("parameters", "total"), "spec.required", "parameters.total is required"), id="empty"),
    pytest.param(6_738_415_616, one(("parameters",), "spec.not-a-mapping", f"{PARAMETERS_HINT}, got 6738415616"),
                 id="a-bare-number"),
    pytest.param([100], one(("parameters",), "spec.not-a-mapping", f"{PARAMETERS_HINT}, got [100]"), id="list"),
    pytest.param({"total": 0}, one(
        ("parameters", "total"), "spec.not-positive", "parameters.total must be positive, got 0"), id="zero-total"),
    pytest.param({"total": "7"}, one(
        ("parameters", "total"), "spec.not-integer",
        "parameters.total must be an integer, got the string '7'; write 7 without quotes"), id="string-total"),
    # an unreadable total is its own problem, not also a comparison with active
    pytest.param({"total": 100.0, "active": 200}, one(
        ("parameters", "total"), "spec.not-integer",
        "parameters.total must be an integer, got the float 100.0; write 100"), id="float-total"),
    pytest.param({"total": 10, "active": True}, one(
        ("parameters", "active"), "spec.not-integer",
        "parameters.active must be a whole number, got true; a count is not true or false"), id="bool-active"),
]


IMPORT_GAPS_FINDINGS = [
    pytest.param({"dropped": ["frobnicate", "text_config.wibble"]}, one(
        ("import_gaps",), "spec.import-gaps",
        "modelspec import dropped the config keys frobnicate, text_config.wibble (--allow-unknown), so nothing "
        "vouches that this spec's layers are the model's; compare it with the reference (modelspec reference), then "
        "remove import_gaps"), id="dropped"),
    pytest.param({"model_type": "my_llama", "dropped": ["x"]}, one(
        ("import_gaps",), "spec.import-gaps",
        "modelspec import dropped the config keys x (--allow-unknown) and read model_type 'my_llama' as another "
        "family's (--arch), so nothing vouches that this spec's layers are the model's; compare it with the reference "
        "(modelspec reference), then remove import_gaps"), id="both"),
    pytest.param({"dropped": []}, one(
        ("import_gaps",), "spec.import-gaps-empty",
        "import_gaps states neither dropped keys nor a model_type; remove it"), id="empty"),
    pytest.param({"dropped": "frobnicate", "why": 1}, [
        (("import_gaps", "why"), "spec.unknown-key",
         "import_gaps declares unknown key 'why'; it states dropped and model_type"),
        (("import_gaps", "dropped"), "spec.not-string",
         "import_gaps.dropped must list config key names, got 'frobnicate'")], id="not-a-list"),
]


@pytest.mark.parametrize("gaps, expected", IMPORT_GAPS_FINDINGS)
def test_import_gaps_are_refused_or_warned_on(gaps: Any, expected: List[Issue]) -> None:
    """A spec stating import_gaps parses to a record whose warning check reports for as long as it is stated."""
    try:
        spec = ModelSpec.from_dict(spec_data(import_gaps=gaps))
    except ModelSpecError:
        assert issues_of(ModelSpec.from_dict, spec_data(import_gaps=gaps)) == expected
        return
    warning = spec.import_gaps.warning()
    assert [(warning.path, warning.code, warning.message)] == expected
    assert ModelSpec.from_dict(spec.to_dict()) == spec and isinstance(spec.import_gaps, ImportGaps)


@pytest.mark.parametrize("parameters, expected", PARAMETERS_REFUSALS)
def test_from_dict_refuses_stated_parameters(parameters: Any, expected: List[Issue]) -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(parameters=parameters)) == expected


@pytest.mark.parametrize("parameters, expected", [
    pytest.param({"total": 6_738_415_616}, StatedParameters(6_738_415_616), id="dense"),
    pytest.param({"total": 100, "active": 100}, StatedParameters(100, 100), id="active-equals-total"),
    pytest.param({"total": 46_702_792_704, "active": 12_879_925_248}, StatedParameters(46_702_792_704, 12_879_925_248),
                 id="moe"),
])
def test_stated_parameters_are_read_and_written_back(parameters: Dict[str, int], expected: StatedParameters) -> None:
    spec = ModelSpec.from_dict(spec_data(parameters=parameters))
    assert spec.parameters == expected
    assert spec.to_dict()["parameters"] == parameters


# The rules of validate(): the spec parses, but its fields contradict each other.
MOE = {"num_experts": 8, "moe_intermediate_size": 64}

VALIDATE_REFUSALS = [
    pytest.param({"hidden_size": 0}, one(
        ("hidden_size",), "spec.not-positive", "hidden_size is required and must be positive, got 0"),
        id="required-zero"),
    pytest.param({"num_hidden_layers": -3}, one(
        ("num_hidden_layers",), "spec.not-positive", "num_hidden_layers is required and must be positive, got -3"),
        id="required-negative"),
    pytest.param({"num_attention_heads": 7, "num_key_value_heads": 2, "head_dim": 16}, one(
        ("num_key_value_heads",), "spec.kv-heads-divide",
        "num_attention_heads (7) must be a multiple of num_key_value_heads (2); each key/value head serves a whole "
        "group of query heads"), id="kv-heads-divide"),
    pytest.param({"num_attention_heads": 3}, one(
        ("num_attention_heads",), "spec.head-dim-divide",
        "hidden_size (64) is not a multiple of num_attention_heads (3), so no head width derives from them; "
        "declare head_dim"), id="head-dim-divide"),
    pytest.param({"num_experts_per_tok": 2}, one(
        ("num_experts_per_tok",), "spec.experts-per-tok-without-experts",
        "num_experts_per_tok (2) is set but num_experts is not; declare num_experts, or leave num_experts_per_tok out "
        "for a dense model"), id="experts-per-tok-without-experts"),
    pytest.param({**MOE, "num_experts_per_tok": 9}, one(
        ("num_experts_per_tok",), "spec.experts-per-tok-above",
        "num_experts_per_tok (9) is larger than num_experts (8); a token cannot be routed to more experts than there "
        "are"), id="experts-per-tok-above"),
    pytest.param({"first_k_dense_replace": 3}, one(
        ("first_k_dense_replace",), "spec.first-k-dense-above",
        "first_k_dense_replace (3) is larger than num_hidden_layers (2)"), id="first-k-dense-above"),
    pytest.param({"num_experts": 8}, one(
        ("num_experts",), "spec.moe-width",
        "no feed-forward width resolves for 8 routed experts; declare moe_intermediate_size, or intermediate_size if "
        "the experts run at the dense width"), id="moe-width"),
    pytest.param({"num_shared_experts": 1}, one(
        ("num_shared_experts",), "spec.shared-expert-width",
        "num_shared_experts is set but no width resolves for it; declare shared_expert_intermediate_size or "
        "moe_intermediate_size"), id="shared-expert-width"),
    pytest.param({"shared_expert_intermediate_size": 512, "shared_expert_gate": True}, one(
        ("shared_expert_intermediate_size",), "spec.shared-without-count",
        "shared_expert_intermediate_size and shared_expert_gate describe a shared expert, but num_shared_experts is "
        "not stated; declare num_shared_experts, or leave them out"), id="shared-without-count"),
    pytest.param({"shared_expert_gate": True, "num_shared_experts": 0}, one(
        ("shared_expert_gate",), "spec.shared-without-count",
        "shared_expert_gate describes a shared expert, but num_shared_experts is 0; declare num_shared_experts, or "
        "leave them out"), id="shared-gate-with-zero"),
    pytest.param({"linear_num_key_heads": 16, "linear_key_head_dim": 128}, one(
        ("linear_num_key_heads",), "spec.linear-partial",
        "linear attention states ['linear_num_key_heads', 'linear_key_head_dim'] but not ['linear_num_value_heads', "
        f"'linear_value_head_dim', 'linear_conv_kernel_dim']; declare all of {LINEAR_NAMES}"), id="linear-partial"),
    pytest.param({"linear_value_head_dim": 128}, one(
        ("linear_value_head_dim",), "spec.linear-partial",
        "linear attention states ['linear_value_head_dim'] but not ['linear_num_key_heads', 'linear_key_head_dim', "
        f"'linear_num_value_heads', 'linear_conv_kernel_dim']; declare all of {LINEAR_NAMES}"), id="linear-one"),
    pytest.param({"layers": [{"kind": "dense", "count": 3}]}, one(
        ("layers",), "spec.body-layer-count", "layers lists 3 body layers, but num_hidden_layers is 2"),
        id="body-layer-count"),
    pytest.param({"layers": [{"kind": "dense", "count": 2}, {"kind": "dense", "count": 1, "mtp": True}]}, one(
        ("layers",), "spec.mtp-layer-count", "layers lists 1 MTP layers, but mtp_depth is 0"), id="mtp-without-depth"),
    pytest.param({"mtp_depth": 2, "layers": [{"kind": "dense", "count": 2},
                                             {"kind": "dense", "count": 1, "mtp": True}]}, one(
        ("layers",), "spec.mtp-layer-count", "layers lists 1 MTP layers, but mtp_depth is 2"), id="mtp-short"),
    pytest.param({"mtp_depth": 1, "layers": [{"kind": "dense", "count": 1}, {"kind": "dense", "count": 1, "mtp": True},
                                             {"kind": "dense", "count": 1}]}, one(
        ("layers", 2), "spec.mtp-order", "layers[2] is a body group after an MTP group; MTP layers come last"),
        id="mtp-order"),
    pytest.param({"layers": DENSE_STACK, "activations": {"moe": RECORD, "dense": RECORD, "attn": RECORD}}, [
        (("activations", "attn"), "spec.activations-kind",
         "activations.attn is a kind no group of layers has; state layers with that kind, or leave the record out"),
        (("activations", "moe"), "spec.activations-kind",
         "activations.moe is a kind no group of layers has; state layers with that kind, or leave the record out"),
    ], id="activations-kind"),
    pytest.param({"activations": {"dense": RECORD}}, one(
        ("activations", "dense"), "spec.activations-kind",
        "activations.dense is a kind no group of layers has; state layers with that kind, or leave the record out"),
        id="activations-without-layers"),
    pytest.param({"vision": tower(layers=[{"kind": "encoder", "count": 2}, {"kind": "encoder", "count": 1,
                                                                             "mtp": True}])}, one(
        ("vision", "layers", 1, "mtp"), "spec.vision-mtp", "vision.layers[1] marks MTP layers; a tower has none"),
        id="vision-mtp"),
    pytest.param({"vision": tower(layers=[{"kind": "encoder", "count": 1, "mtp": True}])}, [
        (("vision", "layers", 0, "mtp"), "spec.vision-mtp", "vision.layers[0] marks MTP layers; a tower has none"),
        (("vision", "layers"), "spec.body-layer-count",
         "vision.layers lists 0 body layers, but num_hidden_layers is 2"),
    ], id="vision-mtp-only"),
    pytest.param({"vision": tower(layers=[{"kind": "encoder", "count": 3}])}, one(
        ("vision", "layers"), "spec.body-layer-count", "vision.layers lists 3 body layers, but num_hidden_layers is 2"),
        id="vision-body-layer-count"),
]


@pytest.mark.parametrize("changes, expected", VALIDATE_REFUSALS)
def test_validate_refuses_an_incoherent_spec(changes: Dict[str, Any], expected: List[Issue]) -> None:
    data = spec_data(changes)
    assert issues_of(ModelSpec.from_dict, data) == expected
    partial = ModelSpec.from_dict(data, strict=False)
    assert [(issue.path, issue.code, issue.message) for issue in partial.problems()] == expected
    assert issues_of(partial.validate) == expected


TOWER_VALIDATE_REFUSALS = [
    pytest.param({"hidden_size": 0}, one(
        ("vision", "hidden_size"), "spec.not-positive",
        "vision.hidden_size must be positive, got 0"), id="hidden_size"),
    pytest.param({"num_hidden_layers": -1, "num_attention_heads": 0}, [
        (("vision", "num_hidden_layers"), "spec.not-positive", "vision.num_hidden_layers must be positive, got -1"),
        (("vision", "num_attention_heads"), "spec.not-positive", "vision.num_attention_heads must be positive, got 0"),
    ], id="both"),
    # SigLIP's 1152 channels split into 16 heads of 72; into 5 they do not split, and a tower has no head_dim
    pytest.param({"hidden_size": 1152, "num_attention_heads": 5}, one(
        ("vision", "num_attention_heads"), "spec.vision-head-divide",
        "vision.hidden_size (1152) is not a multiple of vision.num_attention_heads (5), so no head width derives "
        "from them (a tower states no head_dim); state the tower's head count as its vision_config gives it"),
                 id="heads-do-not-split-the-width"),
    # a width that is not positive is reported once, not again as heads that do not divide it
    pytest.param({"hidden_size": -3, "num_attention_heads": 2}, one(
        ("vision", "hidden_size"), "spec.not-positive", "vision.hidden_size must be positive, got -3"),
                 id="negative-width-not-also-undivided"),
]


@pytest.mark.parametrize("changes, expected", TOWER_VALIDATE_REFUSALS)
def test_vision_validate_refuses_a_tower_built_in_code(changes: Dict[str, Any], expected: List[Issue]) -> None:
    built = VisionSpec(**{**TOWER, **changes})
    assert issues_of(built.validate) == expected


def test_vision_validate_returns_a_coherent_tower() -> None:
    built = VisionSpec(hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                       layers=(LayerGroup("encoder", 2), LayerGroup("merger", 1)))
    assert built.validate() is built
    assert VisionSpec.from_dict(built.to_dict()) == built


# ---- the parsers on their own, with their default paths ------------------------------

STANDALONE_REFUSALS = [
    pytest.param(OpCounts.from_dict, (with_op(ffAct=DROP),), one(
        ("ops",), "spec.op-missing", f"ops is missing counts for ['ffAct']; {NO_OP}"), id="OpCounts"),
    pytest.param(OpCounts.from_dict, (None, ("vision_ops", "encoder")), one(
        ("vision_ops", "encoder"), "spec.not-a-mapping", "vision_ops.encoder must be a mapping of op names to counts, "
                                                         "got None"), id="OpCounts-where"),
    pytest.param(ops_from_dict, (None,), one(
        ("ops",), "spec.not-a-mapping", "ops must be a mapping of layer kinds to their op counts, got None"),
        id="ops_from_dict"),
    pytest.param(LayerGroup.from_dict, ({"kind": "dense", "count": 0},), one(
        ("layers", 0, "count"), "spec.layer-count",
        "layers[0].count must be positive; leave out a group with no layers"),
        id="LayerGroup"),
    pytest.param(layers_from_list, ((),), one(
        ("layers",), "spec.not-a-list", "layers must list at least one group of {kind, count}, got ()"),
        id="layers_from_list"),
    pytest.param(layers_from_list, ([{"kind": "x", "count": 1}, {"kind": "x"}], ("decoder", "layers")), one(
        ("decoder", "layers", 1, "count"), "spec.required", "decoder.layers[1].count is required"),
        id="layers_from_list-where"),
    pytest.param(KindActivations.from_dict, (record(saved=DROP),), one(
        ("output_activations", "saved"), "spec.required", "output_activations.saved is required"),
        id="KindActivations"),
    pytest.param(activations_from_dict, ([],), one(
        ("activations",), "spec.not-a-mapping",
        "activations must be a mapping of layer kinds to their activations records, got []"),
        id="activations_from_dict"),
    pytest.param(VisionSpec.from_dict, (tower(depth=1),), one(
        ("vision", "depth"), "spec.unknown-key", f"vision declares unknown key 'depth'; a tower states {TOWER_KEYS}"),
        id="VisionSpec"),
    pytest.param(StatedParameters.from_dict, ({"total": 10, "active": 11},), one(
        ("parameters", "active"), "spec.active-above-total",
        "parameters.active is 11, above the total of 10; a token cannot pass through more parameters than the "
        "model has"), id="StatedParameters"),
    pytest.param(StatedParameters.from_dict, ("x", ("mtp", "parameters")), one(
        ("mtp", "parameters"), "spec.not-a-mapping",
        "mtp.parameters must be a mapping of total (and active, mtp, vision, for the parts a model has) to parameter "
        "counts, got 'x'"),
        id="StatedParameters-where"),
    pytest.param(check_layer_counts, ((LayerGroup("a", 1, True), LayerGroup("b", 2)), 3, 2), [
        (("layers", 1), "spec.mtp-order", "layers[1] is a body group after an MTP group; MTP layers come last"),
        (("layers",), "spec.body-layer-count", "layers lists 2 body layers, but num_hidden_layers is 3"),
        (("layers",), "spec.mtp-layer-count", "layers lists 1 MTP layers, but mtp_depth is 2"),
    ], id="check_layer_counts-every-problem"),
    pytest.param(check_layer_counts, ((LayerGroup("a", 4),), 3, 0, ("encoder", "layers")), one(
        ("encoder", "layers"), "spec.body-layer-count",
        "encoder.layers lists 4 body layers, but num_hidden_layers is 3"),
        id="check_layer_counts-where"),
]


@pytest.mark.parametrize("parse, args, expected", STANDALONE_REFUSALS)
def test_a_parser_refuses_on_its_own(parse: Callable[..., Any], args: Tuple[Any, ...], expected: List[Issue]) -> None:
    assert issues_of(parse, *args) == expected


ALL_TABLES = (PARSE_REFUSALS, LAYER_REFUSALS, OPS_REFUSALS, RECORD_REFUSALS, ACTIVATIONS_REFUSALS,
              TOWER_PARSE_REFUSALS, PARAMETERS_REFUSALS, VALIDATE_REFUSALS, TOWER_VALIDATE_REFUSALS,
              STANDALONE_REFUSALS, IMPORT_GAPS_FINDINGS)


def test_every_code_is_exercised_by_a_table() -> None:
    tested = set()
    for table in ALL_TABLES:
        for param in table:
            tested.update(code for _, code, _ in param.values[-1])
    assert tested == set(CODES)


# ---- every independent problem at once ----------------------------------------------------

def test_from_dict_reports_every_parse_problem_at_once() -> None:
    data = {"name": 5, "hidden_size": 4096.0, "num_attention_heads": 32, "vocab_size": "32000",
            "compute_dtype": "bfloat16", "qk_norm": "yes", "layers": [{"kind": "dense", "count": 0}],
            "vision": {"depth": 24}}
    assert issues_of(ModelSpec.from_dict, data) == [
        (("compute_dtype",), "spec.unknown-key",
         f"unknown model spec key 'compute_dtype': compute_dtype {PRECISION_HINT}"),
        (("name",), "spec.not-string", "name must be a non-empty string, got 5"),
        (("hidden_size",), "spec.not-integer", "hidden_size must be an integer, got the float 4096.0; write 4096"),
        (("vocab_size",), "spec.not-integer",
         "vocab_size must be an integer, got the string '32000'; write 32000 without quotes"),
        (("qk_norm",), "spec.not-boolean", "qk_norm must be true or false, got 'yes'"),
        (("layers", 0, "count"), "spec.layer-count",
         "layers[0].count must be positive; leave out a group with no layers"),
        (("vision", "depth"), "spec.unknown-key", f"vision declares unknown key 'depth'; a tower states {TOWER_KEYS}"),
        (("vision", "hidden_size"), "spec.required", "vision.hidden_size is required"),
        (("vision", "num_hidden_layers"), "spec.required", "vision.num_hidden_layers is required"),
        (("vision", "num_attention_heads"), "spec.required", "vision.num_attention_heads is required"),
        (("num_hidden_layers",), "spec.required", "num_hidden_layers is required and was not supplied"),
    ]


def test_validate_reports_every_independent_problem_at_once() -> None:
    data = spec_data(
        vocab_size=0, num_hidden_layers=4, num_attention_heads=6, num_key_value_heads=4, head_dim=16,
        num_experts=8, moe_intermediate_size=64, num_experts_per_tok=9, first_k_dense_replace=5,
        linear_conv_kernel_dim=4, mtp_depth=2,
        layers=[{"kind": "dense", "count": 1, "mtp": True}, {"kind": "moe", "count": 3}],
        activations={"ghost": RECORD, "moe": RECORD},
        vision=tower(layers=[{"kind": "encoder", "count": 1}]))
    expected = [
        (("vocab_size",), "spec.not-positive", "vocab_size is required and must be positive, got 0"),
        (("num_key_value_heads",), "spec.kv-heads-divide",
         "num_attention_heads (6) must be a multiple of num_key_value_heads (4); each key/value head serves a whole "
         "group of query heads"),
        (("num_experts_per_tok",), "spec.experts-per-tok-above",
         "num_experts_per_tok (9) is larger than num_experts (8); a token cannot be routed to more experts than there "
         "are"),
        (("first_k_dense_replace",), "spec.first-k-dense-above",
         "first_k_dense_replace (5) is larger than num_hidden_layers (4)"),
        (("linear_conv_kernel_dim",), "spec.linear-partial",
         "linear attention states ['linear_conv_kernel_dim'] but not ['linear_num_key_heads', 'linear_key_head_dim', "
         f"'linear_num_value_heads', 'linear_value_head_dim']; declare all of {LINEAR_NAMES}"),
        (("layers", 1), "spec.mtp-order", "layers[1] is a body group after an MTP group; MTP layers come last"),
        (("layers",), "spec.body-layer-count", "layers lists 3 body layers, but num_hidden_layers is 4"),
        (("layers",), "spec.mtp-layer-count", "layers lists 1 MTP layers, but mtp_depth is 2"),
        (("activations", "ghost"), "spec.activations-kind",
         "activations.ghost is a kind no group of layers has; state layers with that kind, or leave the record out"),
        (("vision", "layers"), "spec.body-layer-count",
         "vision.layers lists 1 body layers, but num_hidden_layers is 2"),
    ]
    assert issues_of(ModelSpec.from_dict, data) == expected
    assert [(issue.path, issue.code, issue.message)
            for issue in ModelSpec.from_dict(data, strict=False).problems()] == expected


def test_model_spec_error_carries_its_issues() -> None:
    first = SpecIssue(("a",), "spec.required", "a is required")
    second = SpecIssue(("b", 0), "spec.negative", "b[0] must not be negative, got -1")
    error = ModelSpecError([first, second])
    assert isinstance(error, ValueError)
    assert error.issues == (first, second)
    assert str(error) == "a is required; b[0] must not be negative, got -1"
    assert ModelSpecError(first).issues == (first,)


# ---- what is accepted, and how ---------------------------------------------------

def test_null_is_absent() -> None:
    # c11: an importer's explicit nulls equal leaving the keys out, at every level.
    nulls = spec_data(name=None, num_key_value_heads=None, head_dim=None, intermediate_size=11008,
                      layers=[{"kind": "dense", "count": 2, "mtp": None}],
                      output_activations=record(selective=None, selective_tp=None, ops=None, ops_tp=None),
                      vision=tower(patch_size=None, layers=None))
    plain = spec_data(intermediate_size=11008, layers=[{"kind": "dense", "count": 2}], output_activations=RECORD,
                      vision=TOWER)
    spec = ModelSpec.from_dict(nulls)
    assert spec == ModelSpec.from_dict(plain)
    assert (spec.num_key_value_heads, spec.head_dim, spec.layers[0].mtp) == (None, None, False)


@pytest.mark.parametrize("name, expected", [
    pytest.param(DROP, "custom", id="absent"),
    pytest.param(None, "custom", id="null"),
    pytest.param("llama-3.1-8b", "llama-3.1-8b", id="stated"),
])
def test_name_defaults_to_custom(name: Any, expected: str) -> None:
    assert ModelSpec.from_dict(spec_data(name=name)).name == expected


@pytest.mark.parametrize("dtype, expected", [
    pytest.param("torch.bfloat16", "bfloat16", id="prefixed"),
    pytest.param("bfloat16", "bfloat16", id="plain"),
    pytest.param("torch.float32", "float32", id="float32"),
    pytest.param("torch.float8_e4m3fn", "float8_e4m3fn", id="float8"),
])
def test_torch_dtype_drops_the_torch_prefix(dtype: str, expected: str) -> None:
    spec = ModelSpec.from_dict(spec_data(torch_dtype=dtype))
    assert spec.torch_dtype == expected
    assert spec.to_dict()["torch_dtype"] == expected


@pytest.mark.parametrize("changes", [
    pytest.param({"hidden_size": INT_LIMIT, "num_attention_heads": 1}, id="int-limit"),
    pytest.param({"first_k_dense_replace": 0, "num_shared_experts": 0, "mtp_depth": 0}, id="zero-counts"),
    pytest.param({"first_k_dense_replace": 2}, id="first-k-equals-layers"),
    pytest.param({**MOE, "num_experts_per_tok": 8}, id="experts-per-tok-equals-experts"),
    pytest.param({"num_experts": 1, "num_experts_per_tok": 1}, id="one-expert-needs-no-width"),
    pytest.param({"num_key_value_heads": 4}, id="mha"),
    pytest.param({"num_key_value_heads": 1}, id="mqa"),
    pytest.param({"ffn_dim_multiplier": 1}, id="int-multiplier"),
    pytest.param({"layers": [{"kind": "dense", "count": 2, "mtp": False}]}, id="mtp-false"),
    pytest.param({"ops": {"dense": OPS}, "layers": DENSE_STACK, "activations": {}}, id="empty-activations"),
    pytest.param({"output_activations": record(selective_attention_mm=0, selective_ffn_mm=1)}, id="share-bounds"),
    pytest.param({"layer_types": ("full_attention", "sliding_attention")}, id="layer_types-tuple"),
])
def test_from_dict_accepts(changes: Dict[str, Any]) -> None:
    spec = ModelSpec.from_dict(spec_data(changes))
    assert spec.problems() == []
    assert spec.validate() is spec


def test_from_dict_not_strict_still_refuses_what_does_not_parse() -> None:
    assert issues_of(ModelSpec.from_dict, spec_data(hidden_size=True, num_experts=8), False) == one(
        ("hidden_size",), "spec.not-integer",
        "hidden_size must be a whole number, got true; a count is not true or false")
    partial = ModelSpec.from_dict(spec_data(num_experts=8), strict=False)
    assert partial.num_experts == 8 and [issue.code for issue in partial.problems()] == ["spec.moe-width"]


def test_from_dict_accepts_any_mapping() -> None:
    assert ModelSpec.from_dict(MappingProxyType(BASE)) == ModelSpec.from_dict(dict(BASE))


def test_from_dict_keeps_the_parsed_types() -> None:
    spec = ModelSpec.from_dict(spec_data(
        ffn_dim_multiplier=2, layer_types=["full_attention", "full_attention"], layers=DENSE_STACK,
        output_activations=record(saved=3, ops={"attMM": 1, "other": 2}, ops_tp={})))
    assert type(spec.ffn_dim_multiplier) is float
    assert spec.layer_types == ("full_attention", "full_attention")
    assert spec.layers == (LayerGroup("dense", 2),)
    assert spec.output_activations == KindActivations(saved=3.0, saved_tp=20.0, working=30.0, working_tp=40.0,
                                                      seq_length=4096, ops={"attMM": 1.0, "other": 2.0}, ops_tp={})
    assert type(spec.output_activations.saved) is float


# ---- unknown keys, model_fields ------------------------------------------------

@pytest.mark.parametrize("key, expected", [
    pytest.param("compute_dtype", f"unknown model spec key 'compute_dtype': compute_dtype {PRECISION_HINT}",
                 id="compute_dtype"),
    pytest.param("param_init_type", f"unknown model spec key 'param_init_type': param_init_type {PRECISION_HINT}",
                 id="param_init_type"),
    pytest.param("recompute", f"unknown model spec key 'recompute': {NOT_A_MODEL_FACT}", id="other"),
    pytest.param(16**4000, f"unknown model spec key a value too large to print (int): {NOT_A_MODEL_FACT}",
                 id="unprintable"),
])
def test_unknown_key_message(key: Any, expected: str) -> None:
    assert unknown_key_message(key) == expected


def test_model_fields_keeps_only_the_model_keys() -> None:
    mixed = {"compute_dtype": "bfloat16", **BASE, "tensor_parallel": 8, "vision": TOWER, "offset": 0}
    assert model_fields(mixed) == {**BASE, "vision": TOWER}
    assert list(model_fields(mixed)) == [*BASE, "vision"]


def test_model_keys_are_the_schema_properties_in_order() -> None:
    schema = json.loads((Path(__file__).parents[1] / "schemas" / "model-spec.schema.json").read_text("utf-8"))
    assert MODEL_KEYS_ORDERED == tuple(schema["properties"])
    assert MODEL_KEYS == frozenset(MODEL_KEYS_ORDERED)
    assert set(LINEAR_FIELDS) <= MODEL_KEYS


# ---- derived reads on real models ------------------------------------------------

def qwen35_35b_a3b(**changes: Any) -> Dict[str, Any]:
    """Qwen3.5-35B-A3B as an import of its config.json states it: all-MoE, no dense width, 1 MTP layer."""
    data = {
        "name": "qwen3.5-35b-a3b", "hidden_size": 2048, "num_hidden_layers": 40, "num_attention_heads": 16,
        "num_key_value_heads": 2, "head_dim": 256, "vocab_size": 248320, "max_position_embeddings": 262144,
        "num_experts": 256, "num_experts_per_tok": 8, "num_shared_experts": 1, "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512, "mtp_depth": 1, "attn_output_gate": True,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "linear_num_key_heads": 16, "linear_key_head_dim": 128, "linear_num_value_heads": 32,
        "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
        "layers": [{"kind": "linear_attention", "count": 3}, {"kind": "full_attention", "count": 1}] * 10
        + [{"kind": "full_attention", "count": 1, "mtp": True}],
        "vision": {"hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16, "intermediate_size": 4304,
                   "out_hidden_size": 2048, "patch_size": 16, "spatial_merge_size": 2,
                   "num_position_embeddings": 2304},
    }
    return {key: value for key, value in {**data, **changes}.items() if value is not DROP}


MIXTRAL_8X7B = {"name": "mixtral-8x7b", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "vocab_size": 32000, "intermediate_size": 14336, "num_experts": 8,
                "num_experts_per_tok": 2}
# c09: hidden / heads is 80, but each head is 128 wide.
C09 = {"name": "tiny-wide-heads", "hidden_size": 2560, "num_hidden_layers": 4, "num_attention_heads": 32,
       "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 151936, "intermediate_size": 9728}
LLAMA_2_7B = {"name": "llama-2-7b", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "vocab_size": 32000, "intermediate_size": 11008}

DERIVED = [
    # (spec, effective_head_dim, attention_width, is_moe, routed_expert_width, shared_expert_width)
    pytest.param(qwen35_35b_a3b(), 256, 4096, True, 512, 512, id="qwen3.5-35b-a3b"),
    pytest.param(qwen35_35b_a3b(shared_expert_intermediate_size=DROP), 256, 4096, True, 512, 512,
                 id="qwen3.5-shared-width-from-routed"),
    pytest.param(qwen35_35b_a3b(shared_expert_intermediate_size=1024), 256, 4096, True, 512, 1024,
                 id="qwen3.5-own-shared-width"),
    pytest.param(MIXTRAL_8X7B, 128, 4096, True, 14336, 0, id="mixtral-8x7b"),
    pytest.param(C09, 128, 4096, False, 9728, 0, id="c09-explicit-head-dim"),
    pytest.param(LLAMA_2_7B, 128, 4096, False, 11008, 0, id="llama-2-7b-derived-head-dim"),
    pytest.param({**LLAMA_2_7B, "num_experts": 1}, 128, 4096, False, 11008, 0, id="one-expert-is-dense"),
]


@pytest.mark.parametrize("data, head_dim, width, moe, routed, shared", DERIVED)
def test_derived_reads(data: Dict[str, Any], head_dim: int, width: int, moe: bool, routed: int, shared: int) -> None:
    spec = ModelSpec.from_dict(data)
    assert (spec.effective_head_dim, spec.attention_width, spec.is_moe, spec.routed_expert_width,
            spec.shared_expert_width) == (head_dim, width, moe, routed, shared)


def test_qwen35_states_no_dense_width_and_is_valid() -> None:
    spec = ModelSpec.from_dict(qwen35_35b_a3b())
    assert spec.intermediate_size is None
    assert spec.layers[-1] == LayerGroup("full_attention", 1, mtp=True)
    assert sum(group.count for group in spec.layers if not group.mtp) == 40
    assert spec.vision == VisionSpec(hidden_size=1152, num_hidden_layers=27, num_attention_heads=16,
                                     intermediate_size=4304, out_hidden_size=2048, patch_size=16,
                                     spatial_merge_size=2, num_position_embeddings=2304)


# ---- the serialised form ------------------------------------------------

def test_to_dict_omits_unset_fields_and_keeps_field_order() -> None:
    data = qwen35_35b_a3b(ops={"full_attention": OPS}, output_activations=record(ops_tp={"other": 1.0},
                                                                               ops={"attMM": 2.0}))
    written = ModelSpec.from_dict(data).to_dict()
    assert list(written) == [key for key in MODEL_KEYS_ORDERED if key in data]
    assert written["layers"][0] == {"kind": "linear_attention", "count": 3}
    assert written["layers"][-1] == {"kind": "full_attention", "count": 1, "mtp": True}
    assert list(written["ops"]["full_attention"]) == list(OPS)
    assert list(written["vision"]) == ["hidden_size", "num_hidden_layers", "num_attention_heads", "name",
                                       "intermediate_size", "out_hidden_size", "patch_size", "spatial_merge_size",
                                       "num_position_embeddings"]
    assert written["vision"]["name"] == "vision"
    assert list(written["output_activations"]) == ["saved", "saved_tp", "working", "working_tp", "seq_length", "ops",
                                                   "ops_tp"]


def test_to_dict_of_the_smallest_spec() -> None:
    assert ModelSpec.from_dict(BASE).to_dict() == {"name": "custom", **BASE}


def test_records_to_dict() -> None:
    assert LayerGroup("dense", 3).to_dict() == {"kind": "dense", "count": 3}
    assert LayerGroup("moe", 1, mtp=True).to_dict() == {"kind": "moe", "count": 1, "mtp": True}
    assert OpCounts(**OPS).to_dict() == OPS
    assert OpCounts.names() == tuple(OPS)
    assert VisionSpec(1, 2, 3).to_dict() == {"hidden_size": 1, "num_hidden_layers": 2, "num_attention_heads": 3,
                                             "name": "vision"}
    assert KindActivations(1.0, 2.0, 3.0, 4.0, 5).to_dict() == {"saved": 1.0, "saved_tp": 2.0, "working": 3.0,
                                                                "working_tp": 4.0, "seq_length": 5}


# ---- properties ------------------------------------------------------------

KIND_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
SIZES = st.floats(min_value=0, max_value=1e12) | st.integers(0, 10**9)
SHARES = st.floats(min_value=0, max_value=1)


def _split(draw: Callable[..., Any], total: int, kinds: List[str], mtp: bool) -> List[Dict[str, Any]]:
    """Cut *total* layers into groups of *kinds*, MTP-marked when *mtp*."""
    groups = []
    while total:
        count = draw(st.integers(1, total))
        groups.append({"kind": draw(st.sampled_from(kinds)), "count": count, **({"mtp": True} if mtp else {})})
        total -= count
    return groups


def _maybe(draw: Callable[..., Any], out: Dict[str, Any], key: str, strategy: st.SearchStrategy) -> None:
    """Set ``out[key]`` from *strategy*, or leave it out."""
    if draw(st.booleans()):
        out[key] = draw(strategy)


@st.composite
def records(draw: Callable[..., Any]) -> Dict[str, Any]:
    """A valid census record, each pair whole or absent."""
    out = {name: draw(SIZES) for name in ("saved", "saved_tp", "working", "working_tp")}
    out["seq_length"] = draw(st.integers(1, 1 << 20))
    for pair, values in ((("selective", "selective_tp"), SIZES),
                         (("selective_attention_mm", "selective_ffn_mm"), SHARES),
                         (("ops", "ops_tp"), st.dictionaries(st.sampled_from(OpCounts.names() + ("other",)), SIZES))):
        if draw(st.booleans()):
            out.update({name: draw(values) for name in pair})
    return out


@st.composite
def towers(draw: Callable[..., Any]) -> Dict[str, Any]:
    """A valid vision tower, with or without a stack."""
    heads = draw(st.integers(1, 32))
    out = {"hidden_size": heads * draw(st.integers(1, 128)), "num_hidden_layers": draw(st.integers(1, 32)),
           "num_attention_heads": heads}
    _maybe(draw, out, "name", st.text(min_size=1, max_size=8))
    for key in ("intermediate_size", "out_hidden_size", "patch_size", "in_channels", "temporal_patch_size",
                "spatial_merge_size", "num_position_embeddings", "max_position_embeddings"):
        _maybe(draw, out, key, st.integers(1, 1 << 16))
    if draw(st.booleans()):
        out["layers"] = _split(draw, out["num_hidden_layers"], draw(st.lists(KIND_NAMES, min_size=1, max_size=2)),
                               mtp=False)
    return out


@st.composite
def valid_specs(draw: Callable[..., Any]) -> Dict[str, Any]:
    """A coherent spec: dense or MoE (shared experts or not), MLA fields, linear_* all or none, a stack that adds
    up with its MTP groups, activations of the stack's kinds, a vision tower."""
    heads = draw(st.integers(1, 64))
    layers = draw(st.integers(1, 48))
    out: Dict[str, Any] = {"hidden_size": heads * draw(st.integers(1, 1024)), "num_hidden_layers": layers,
                           "num_attention_heads": heads, "vocab_size": draw(st.integers(1, 1 << 18))}
    _maybe(draw, out, "name", st.text(min_size=1, max_size=20))
    _maybe(draw, out, "num_key_value_heads", st.sampled_from([kv for kv in range(1, heads + 1) if heads % kv == 0]))
    for key in ("head_dim", "intermediate_size", "max_position_embeddings", "multiple_of", "layer_norms",
                "sliding_window", "relative_attention_num_buckets"):
        _maybe(draw, out, key, st.integers(1, 1 << 16))
    _maybe(draw, out, "ffn_dim_multiplier", st.floats(min_value=0.01, max_value=8))
    if draw(st.booleans()):  # MLA
        for key in ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"):
            _maybe(draw, out, key, st.integers(1, 2048))
    for key in ("attn_output_gate", "tie_word_embeddings", "qk_norm", "qkv_bias", "o_bias", "mlp_bias", "norm_bias",
                "head_bias"):
        _maybe(draw, out, key, st.booleans())
    _maybe(draw, out, "torch_dtype", st.sampled_from(["bfloat16", "torch.bfloat16", "float16", "torch.float32"]))
    _maybe(draw, out, "arch", KIND_NAMES)
    if draw(st.booleans()):  # MoE
        experts = draw(st.integers(1, 256))
        out["num_experts"] = experts
        _maybe(draw, out, "num_experts_per_tok", st.integers(1, experts))
        out[draw(st.sampled_from(["moe_intermediate_size", "intermediate_size"]))] = draw(st.integers(1, 1 << 15))
        _maybe(draw, out, "num_shared_experts", st.integers(0, 4))
        if out.get("num_shared_experts"):  # a shared expert's own width and gate only beside a count
            _maybe(draw, out, "shared_expert_intermediate_size", st.integers(1, 1 << 15))
            _maybe(draw, out, "shared_expert_gate", st.booleans())
        _maybe(draw, out, "first_k_dense_replace", st.integers(0, layers))
    if draw(st.booleans()):
        out.update({key: draw(st.integers(1, 256)) for key in LINEAR_FIELDS})
    _maybe(draw, out, "mtp_depth", st.integers(0, 3))
    if draw(st.booleans()):  # a published count: a total, and an active count not above it, or none
        total = draw(st.integers(1, 1 << 45))
        out["parameters"] = {"total": total}
        _maybe(draw, out["parameters"], "active", st.integers(1, total))
    kinds = draw(st.lists(KIND_NAMES, min_size=1, max_size=3, unique=True))
    if draw(st.booleans()):
        out["layers"] = _split(draw, layers, kinds, mtp=False) + _split(draw, out.get("mtp_depth", 0), kinds, mtp=True)
        stated = sorted({group["kind"] for group in out["layers"]})
        _maybe(draw, out, "activations", st.dictionaries(st.sampled_from(stated), records()))
    _maybe(draw, out, "layer_types", st.lists(KIND_NAMES, min_size=1, max_size=8))
    _maybe(draw, out, "ops", st.dictionaries(KIND_NAMES, st.fixed_dictionaries(
        {op: st.integers(0, 8) for op in OpCounts.names()}), min_size=1, max_size=3))
    _maybe(draw, out, "output_activations", records())
    _maybe(draw, out, "vision", towers())
    return out


@settings(deadline=None, max_examples=examples(150))
@given(valid_specs())
def test_a_valid_spec_round_trips(data: Dict[str, Any]) -> None:
    spec = ModelSpec.from_dict(data)
    written = spec.to_dict()
    assert ModelSpec.from_dict(written) == spec
    assert list(written) == [key for key in MODEL_KEYS_ORDERED if key in data or key == "name"]
    assert spec.effective_head_dim >= 0 and spec.attention_width >= 0
    assert spec.routed_expert_width >= 0 and spec.shared_expert_width >= 0


# Junk: every kind of value a YAML or JSON file (or a careless producer) can hold.
HUGE_INTS = (10**400, -(10**400), 2**63, -(2**63) - 1, INT_LIMIT, 16**4000)
TRAPS = ("12", " 12", "4096.0", "7e3", "²", "+-1", "1" * 5000, "torch.", "torch.torch.x", "yes", "", "nan")
# Drawn by index: Hypothesis cannot describe a strategy holding an integer too long to print.
HUGE = st.sampled_from(range(len(HUGE_INTS))).map(HUGE_INTS.__getitem__)
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | HUGE
           | st.sampled_from(TRAPS))
KEYS = (st.sampled_from(sorted(MODEL_KEYS)) | st.sampled_from(["kind", "count", "mtp", "saved", "ops", "other"])
        | st.text(max_size=8) | st.integers() | st.booleans() | st.floats() | HUGE)
JUNK = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
                    max_leaves=16)


def assert_refused_or_round_trips(data: Any) -> None:
    """``from_dict(data)`` raises ModelSpecError with well-formed issues, or returns a spec that round-trips."""
    try:
        spec = ModelSpec.from_dict(data)
    except ModelSpecError as error:
        assert error.issues
        for issue in error.issues:
            assert isinstance(issue, SpecIssue)
            assert isinstance(issue.path, tuple)
            assert issue.code in CODES
            assert isinstance(issue.message, str) and issue.message
        return
    assert spec.problems() == []
    assert ModelSpec.from_dict(spec.to_dict()) == spec


@settings(deadline=None, max_examples=examples(300))
@given(JUNK | st.dictionaries(KEYS, JUNK, max_size=8))
def test_from_dict_on_anything_raises_only_model_spec_error(data: Any) -> None:
    assert_refused_or_round_trips(data)


def _paths(node: Any, path: Tuple[Any, ...] = ()) -> List[Tuple[Any, ...]]:
    """Every path to a value inside *node*, a tree of dicts and lists."""
    found = [path] if path else []
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        found.extend(_paths(child, path + (key,)))
    return found


def _replace(node: Any, path: Tuple[Any, ...], value: Any) -> Any:
    """A copy of *node* with the value at *path* replaced (or, for a missing key, added)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {**node, head: _replace(node.get(head), rest, value)}
    copy = list(node)
    copy[head] = _replace(copy[head], rest, value)
    return copy


@settings(deadline=None, max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
@given(valid_specs(), st.data())
def test_from_dict_on_a_damaged_valid_spec_raises_only_model_spec_error(data: Dict[str, Any], draw: Any) -> None:
    damaged = data
    for _ in range(draw.draw(st.integers(1, 3))):
        target = draw.draw(st.sampled_from(_paths(damaged)) | st.tuples(KEYS))
        damaged = _replace(damaged, target, draw.draw(JUNK | st.integers(-3, 64)))
    assert_refused_or_round_trips(damaged)


# Values no field takes, whatever its type.
NO_FIELD_TAKES = [float("nan"), float("inf"), float("-inf"), 10**400, 16**4000, [[[]]], {1: {}}]


@pytest.mark.parametrize("value", NO_FIELD_TAKES, ids=["nan", "inf", "-inf", "1e400", "16^4000", "nested-lists",
                                                        "int-keyed"])
@pytest.mark.parametrize("key", MODEL_KEYS_ORDERED)
def test_every_field_refuses_junk_under_its_own_name(key: str, value: Any) -> None:
    found = issues_of(ModelSpec.from_dict, spec_data({key: value}))
    assert found and all(path[0] == key for path, _, _ in found)
