"""Data tests of ``op_profiles/*.yaml``: every profile well formed, every real model name picked by one profile.

The op profiles are data that the rest of the pipeline trusts: a count
missing or a pattern that also fits a neighbour family would price a model
wrongly and say nothing. These tests pin the files themselves, as written:
:func:`_load_profile` reads each with the project's strict YAML reader
(:mod:`pipeline.spec.yaml_source`, which refuses what a lenient ``safe_load``
would take: ``yes`` for a boolean, a duplicate key), so the key order and
the raw types stay visible to the assertions. One test then checks that the
project's profile loader (:func:`pipeline.pricing.op_profiles.load_op_profiles`)
accepts the folder and reads every file as the raw mapping says. Select
them with ``pytest -k op_profile_data``.

The counting conventions the exact counts below follow are in
``op_profiles/README.md``.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import re
from pathlib import Path
from typing import Any, Dict, Sequence

import pytest

from pipeline.spec import yaml_source
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.pricing.weights import Condition, Weight

PROFILE_DIR = Path(__file__).resolve().parent.parent / "op_profiles"

OPS = ("attMM", "attBMM", "ffMM", "softmax", "dropout", "normOp", "gather", "headCast", "ffAct", "linrec")
ATTENTION_FLAVOURS = {"full", "sliding", "chunked", "mla", "linear", "ssm", "cross", "none"}
FFN_FLAVOURS = {"dense", "moe", "none"}
TOP_KEYS = {"arch", "summary", "source", "model_types", "match", "default", "import", "layer_kinds", "model_weights",
            "mtp_weights", "vision"}
#: The top-level keys a profile may leave out: a default kind, its import rules, an MTP layer's and a vision
#: tower's inventories.
OPTIONAL_TOP_KEYS = {"default", "import", "mtp_weights", "vision"}
KIND_KEYS = {"attention", "ffn", "ops", "weights"}
#: A kind's optional key: the spec values its counts were read under.
ASSUMES = "assumes"
#: The profile of the vision towers: its kinds hold op counts only; each family's ``vision`` holds their tensors.
VISION = "vision"
#: The keys of a family's ``vision``: the tower's own tensors and one block's per vision kind.
VISION_KEYS = {"source", "weights", "layer_kinds"}
#: The families with a vision tower, and the vision kinds their tower's blocks are.
TOWER_KINDS = {
    "gemma3": ["encoder"],
    "llama4": ["uncast_encoder"],
    "llava": ["encoder"],
    "mllama": ["encoder", "global_encoder"],
    "qwen2_5_vl": ["window_encoder", "gated_encoder"],
    "qwen3_5": ["encoder"],
    "qwen3_5_moe": ["encoder"],
    "mistral3": ["gated_encoder"],
    "qwen2_vl": ["encoder"],
    "qwen3_vl": ["encoder"],
    "qwen3_vl_moe": ["encoder"],
    "glm4v": ["gated_encoder"],
    "glm4v_moe": ["gated_encoder"],
    "idefics3": ["encoder"],
    "smolvlm": ["encoder"],
}
#: The families with an MTP layer inventory.
MTP_FAMILIES = ("deepseek_v3", "qwen3_5", "qwen3_5_moe", "qwen3_next")
#: The families that state no weight inventory (none: every bundled family is counted).
UNPRICED = ()

from bundled import ARCHS


def _load_profile(path: Path) -> Dict[str, Any]:
    """Read one profile file as a plain mapping, strictly; a file the reader refuses fails the test. Each test
    gets its own copy of what the reader gave for the file's bytes."""
    return copy.deepcopy(_read_profile(path, path.read_bytes()))


@functools.lru_cache(maxsize=None)
def _read_profile(path: Path, data: bytes) -> Dict[str, Any]:
    """The strict reader's mapping of the profile *path* holding *data*."""
    doc = yaml_source.load_path(path)
    assert [(p.line, p.column, p.code) for p in doc.problems] == []
    return doc.data


def _profile(arch: str) -> Dict[str, Any]:
    return _load_profile(PROFILE_DIR / f"{arch}.yaml")


def _all_profiles() -> Dict[str, Dict[str, Any]]:
    return {path.stem: _load_profile(path) for path in sorted(PROFILE_DIR.glob("*.yaml"))}


def _kinds() -> list:
    return [(arch, kind) for arch in ARCHS for kind in _profile(arch)["layer_kinds"]]


def _condition_as_written(condition: Condition) -> Any:
    """A loaded ``when``/``bias`` as a profile writes it: true, false, ``SYMBOL`` or ``not SYMBOL``."""
    if condition.symbol is None:
        return not condition.negated
    return f"not {condition.symbol}" if condition.negated else condition.symbol


def _weights_as_read(weights: Sequence[Weight]) -> list:
    """A loaded inventory as entries with every key stated, to compare with :func:`_weights_as_written`."""
    return [{"role": weight.role, "name": weight.name, "part": weight.part,
             "shape": [expression.text for expression in weight.shape], "per": weight.per,
             "when": _condition_as_written(weight.when), "op": weight.op,
             **({"bias": _condition_as_written(weight.bias)} if weight.bias is not None else {}),
             **({"copies": weight.copies} if weight.copies is not None else {}),
             **({"stacked": weight.stacked} if weight.stacked != "leading" else {})}
            for weight in weights]


def _weights_as_written(entries: Sequence[Dict[str, Any]]) -> list:
    """A raw inventory with the loader's defaults filled in: ``per: layer``, ``when: true``, and ``op: matmul``
    for two dimensions, ``elementwise`` for others; each dimension as its text (``3`` reads as ``'3'``)."""
    return [{"per": "layer", "when": True, "op": "matmul" if len(entry["shape"]) == 2 else "elementwise",
             **entry, "shape": [str(size) for size in entry["shape"]]}
            for entry in entries]


def test_op_profile_data_files_are_the_known_families():
    assert sorted(path.stem for path in PROFILE_DIR.glob("*.yaml")) == sorted(ARCHS)


@pytest.mark.parametrize("arch", ARCHS)
def test_op_profile_data_the_loader_reads_what_the_file_says(arch):
    """The project's loader accepts the folder (schema and rules) and keeps every field of every file."""
    raw, loaded = _profile(arch), load_op_profiles(PROFILE_DIR).get(arch)
    assert (loaded.arch, loaded.summary, loaded.source, loaded.default) == (
        raw["arch"], raw["summary"], raw["source"], raw.get("default"))
    assert (list(loaded.model_types), list(loaded.match)) == (raw["model_types"], raw["match"])
    assert {name: {"attention": kind.attention, "ffn": kind.ffn, "ops": kind.ops.to_dict(),
                   **({ASSUMES: {a.field: a.value for a in kind.assumes}} if kind.assumes else {}),
                   **({"weights": _weights_as_read(kind.weights)} if kind.weights else {})}
            for name, kind in loaded.layer_kinds.items()} == {
        name: {**kind, **({"weights": _weights_as_written(kind["weights"])} if "weights" in kind else {})}
        for name, kind in raw["layer_kinds"].items()}
    assert list(loaded.layer_kinds) == list(raw["layer_kinds"])
    assert (_weights_as_read(loaded.model_weights), _weights_as_read(loaded.mtp_weights)) == (
        _weights_as_written(raw.get("model_weights", [])), _weights_as_written(raw.get("mtp_weights", [])))
    vision = raw.get("vision", {})
    assert _weights_as_read(loaded.vision_weights) == _weights_as_written(vision.get("weights", []))
    assert {name: _weights_as_read(weights) for name, weights in loaded.vision_kinds.items()} == {
        name: _weights_as_written(kind["weights"]) for name, kind in vision.get("layer_kinds", {}).items()}
    assert list(loaded.vision_kinds) == list(vision.get("layer_kinds", {}))


@pytest.mark.parametrize("arch", ARCHS)
def test_op_profile_data_top_level(arch):
    profile = _profile(arch)
    assert profile["arch"] == arch
    assert set(profile) - TOP_KEYS == set()
    # every family prices its model; the vision towers' profile holds op counts only
    assert TOP_KEYS - OPTIONAL_TOP_KEYS - ({"model_weights"} if arch in (VISION, *UNPRICED) else set()) <= set(profile)
    assert ("model_weights" in profile, "mtp_weights" in profile, "vision" in profile) == (
        arch not in (VISION, *UNPRICED), arch in MTP_FAMILIES, arch in TOWER_KINDS)
    if "vision" in profile:
        assert set(profile["vision"]) == VISION_KEYS
        assert isinstance(profile["vision"]["source"], str) and profile["vision"]["source"]
        # a tower's blocks are kinds of the vision profile, each with its tensors and nothing else
        assert list(profile["vision"]["layer_kinds"]) == TOWER_KINDS[arch]
        assert set(profile["vision"]["layer_kinds"]) <= set(_profile(VISION)["layer_kinds"])
        assert [set(kind) for kind in profile["vision"]["layer_kinds"].values()] == [{"weights"}] * len(
            TOWER_KINDS[arch])
    assert isinstance(profile["summary"], str) and "\n" not in profile["summary"].strip()
    assert isinstance(profile["source"], str) and profile["source"]
    assert all(isinstance(item, str) and item for item in profile["model_types"] + profile["match"])
    if "default" in profile:
        assert profile["default"] in profile["layer_kinds"]


@pytest.mark.parametrize(("arch", "kind"), _kinds())
def test_op_profile_data_kind_is_complete(arch, kind):
    spec = _profile(arch)["layer_kinds"][kind]
    # a family's kind lists its tensors; a vision kind's tensors are each family's (its ``vision``)
    assert set(spec) - {ASSUMES} == (KIND_KEYS - {"weights"} if arch in (VISION, *UNPRICED) else KIND_KEYS)
    assert spec["attention"] in ATTENTION_FLAVOURS
    assert spec["ffn"] in FFN_FLAVOURS
    assert tuple(spec["ops"]) == OPS
    for op, count in spec["ops"].items():
        assert type(count) is int and count >= 0, f"{arch}.{kind}.{op} = {count!r}"


@pytest.mark.parametrize("arch", ARCHS)
def test_op_profile_data_every_count_says_what_it_counts(arch):
    """Each op line carries a trailing comment, the calls it counts."""
    text = (PROFILE_DIR / f"{arch}.yaml").read_text(encoding="utf-8")
    # an op line states a count (OPT's import.ignored names its config key dropout, with a reason)
    op_lines = [line for line in text.splitlines() if re.match(rf"^\s+({'|'.join(OPS)}):\s+\d", line)]
    assert len(op_lines) == len(OPS) * len(_profile(arch)["layer_kinds"])
    uncommented = [line for line in op_lines if not re.search(r"\d+\s+#\s*\S", line)]
    assert uncommented == []


@pytest.mark.parametrize("arch", ARCHS)
def test_op_profile_data_every_assumption_says_what_it_counts(arch):
    """Each assumes entry carries a trailing comment: the calls of the counts that depend on it."""
    text = (PROFILE_DIR / f"{arch}.yaml").read_text(encoding="utf-8")
    entries = sum(len(kind.get(ASSUMES, {})) for kind in _profile(arch)["layer_kinds"].values())
    lines = [line for line in text.splitlines()
             if re.match(r"^      [a-z_]+: ", line) and line.split(":")[0].strip() not in OPS]
    assert len(lines) == entries
    assert [line for line in lines if not re.search(r"\S\s+#\s*\S", line)] == []


PLAIN = {"qk_norm": False, "attn_output_gate": False}
QK_NORM = {"qk_norm": True, "attn_output_gate": False}
GATED = {"qk_norm": True, "attn_output_gate": True}
NO_SHARED = {"num_shared_experts": 0, "shared_expert_gate": False}
GATED_SHARED = {"num_shared_experts": 1, "shared_expert_gate": True}
MLA = {"q_lora_rank": "stated", **PLAIN}


@pytest.mark.parametrize(("arch", "expected"), [
    ("deepseek_v3", {"dense": MLA, "moe": {**MLA, "num_shared_experts": "stated", "shared_expert_gate": False},
                     "dense_q_proj": PLAIN, "moe_q_proj": {**PLAIN, "num_shared_experts": "stated",
                                                           "shared_expert_gate": False}}),
    ("gemma3", {"sliding_attention": QK_NORM, "full_attention": QK_NORM}),
    ("gpt2", {"full_attention": PLAIN}),
    ("gpt_oss", {"sliding_attention": {**PLAIN, **NO_SHARED}, "full_attention": {**PLAIN, **NO_SHARED}}),
    ("llama", {"full_attention": PLAIN}),
    ("mistral", {"full_attention": PLAIN, "sliding_attention": PLAIN}),
    ("mixtral", {"full_attention": {**PLAIN, **NO_SHARED}, "sliding_attention": {**PLAIN, **NO_SHARED}}),
    ("qwen2", {"full_attention": PLAIN, "sliding_attention": PLAIN}),
    ("qwen2_5_vl", {"full_attention": PLAIN, "sliding_attention": PLAIN}),
    ("qwen3", {"full_attention": QK_NORM, "sliding_attention": QK_NORM}),
    ("qwen3_5", {"linear_attention": {}, "full_attention": GATED}),
    ("qwen3_5_moe", {"linear_attention": GATED_SHARED, "full_attention": {**GATED, **GATED_SHARED}}),
    ("qwen3_moe", {"dense": QK_NORM, "moe": {**QK_NORM, **NO_SHARED}, "sliding_dense": QK_NORM,
                   "sliding_moe": {**QK_NORM, **NO_SHARED}}),
    ("qwen3_next", {"linear_attention": GATED_SHARED, "full_attention": {**GATED, **GATED_SHARED},
                    "linear_attention_dense": {}, "full_attention_dense": GATED}),
    ("t5", {"encoder": PLAIN, "decoder": PLAIN, "gated_encoder": PLAIN, "gated_decoder": PLAIN}),
    ("vision", {"encoder": {}, "gated_encoder": {}, "window_encoder": {}, "uncast_encoder": {}, "global_encoder": {}}),
    ("mllama", {"full_attention": PLAIN, "cross_attention": {"attn_output_gate": False}}),
    ("phi3", {"full_attention": PLAIN, "sliding_attention": PLAIN}),
    ("granite", {"full_attention": PLAIN}),
    ("starcoder2", {"full_attention": PLAIN, "sliding_attention": PLAIN}),
    ("olmo2", {"full_attention": QK_NORM}),
    ("exaone4", {"sliding_attention": QK_NORM, "full_attention": QK_NORM}),
    ("cohere", {"full_attention": PLAIN, "full_attention_qk_norm": QK_NORM}),
    ("phi", {"full_attention": PLAIN, "full_attention_qk_norm": QK_NORM}),
    ("minimax_m2", {"moe": {**QK_NORM, **NO_SHARED}}),
    ("mistral3", {"full_attention": PLAIN, "sliding_attention": PLAIN}),
    ("roberta", {"full_attention": PLAIN}),
    ("qwen2_vl", {"full_attention": PLAIN, "sliding_attention": PLAIN}),
    ("nemotron_h", {"mamba": {}, "mamba_no_conv_bias": {}, "mamba_proj_bias": {}, "mamba_proj_bias_no_conv_bias": {},
                    "attention": PLAIN, "moe": {"num_shared_experts": 1, "shared_expert_gate": False},
                    "moe_latent": {"num_shared_experts": 1, "shared_expert_gate": False}, "mlp": {}}),
])
def test_op_profile_data_exact_assumptions(arch, expected):
    """What each kind's counts were read under, as its comments say: per-head q/k norms and the query's output
    gate in the attention counts, a (gated) shared expert in the MoE counts, MLA's query low-rank path."""
    assert {name: kind.get(ASSUMES, {}) for name, kind in _profile(arch)["layer_kinds"].items()} == expected


#: The importer's fixed facts that a profile's assumes also state, compared below.
ASSUMED_FACTS = ("qk_norm", "attn_output_gate", "num_shared_experts", "shared_expert_gate")


@pytest.mark.parametrize("arch", [path.stem for path in sorted(PROFILE_DIR.glob("*.yaml"))
                                  if "import" in _load_profile(path)])
def test_op_profile_data_assumptions_agree_with_the_importers_fixed_facts(arch):
    """A config imported under its own model type states what the profile's counts assume, never the opposite."""
    profile = load_op_profiles(PROFILE_DIR).get(arch)
    record = profile.family
    clashes = [(kind.name, assumption.field, assumption.value, record.fixed[assumption.field])
               for kind in profile.layer_kinds.values() for assumption in kind.assumes
               if assumption.field in record.fixed and record.fixed[assumption.field] != assumption.value]
    stated = {field for kind in profile.layer_kinds.values() for field in (a.field for a in kind.assumes)}
    assert clashes == []
    assert sorted(field for field in ASSUMED_FACTS if field in record.fixed and field not in stated) == []


@pytest.mark.parametrize(
    ("arch", "kinds", "default"),
    [
        ("llama", ["full_attention"], "full_attention"),
        ("qwen3_moe", ["dense", "moe", "sliding_dense", "sliding_moe"], "moe"),
        ("deepseek_v3", ["dense", "moe", "dense_q_proj", "moe_q_proj"], None),
        ("qwen3_next", ["linear_attention", "full_attention", "linear_attention_dense", "full_attention_dense"], None),
        ("qwen3_5", ["linear_attention", "full_attention"], None),
        ("qwen3_5_moe", ["linear_attention", "full_attention"], None),
        ("gemma3", ["sliding_attention", "full_attention"], None),
        ("gpt_oss", ["sliding_attention", "full_attention"], None),
        ("t5", ["encoder", "decoder", "gated_encoder", "gated_decoder"], None),
        ("vision", ["encoder", "gated_encoder", "window_encoder", "uncast_encoder", "global_encoder"], "encoder"),
        ("mllama", ["full_attention", "cross_attention"], None),
    ],
)
def test_op_profile_data_kind_names(arch, kinds, default):
    profile = _profile(arch)
    assert list(profile["layer_kinds"]) == kinds
    assert profile.get("default") == default


@pytest.mark.parametrize(
    ("arch", "kind", "attention", "ffn", "counts"),
    [
        ("llama", "full_attention", "full", "dense", (4, 2, 3, 1, 1, 2, 4, 1, 1, 0)),
        ("qwen3", "full_attention", "full", "dense", (4, 2, 3, 1, 1, 4, 4, 1, 1, 0)),
        ("qwen3_moe", "moe", "full", "moe", (4, 2, 4, 2, 1, 4, 4, 1, 1, 0)),
        ("deepseek_v3", "moe", "mla", "moe", (5, 2, 7, 2, 1, 4, 4, 1, 2, 0)),
        ("deepseek_v3", "dense", "mla", "dense", (5, 2, 3, 1, 1, 4, 4, 1, 1, 0)),
        ("qwen3_next", "linear_attention", "linear", "moe", (7, 0, 8, 1, 0, 3, 4, 0, 2, 1)),
        ("qwen3_next", "full_attention", "full", "moe", (5, 2, 8, 2, 1, 4, 4, 1, 2, 0)),
        ("qwen3_next", "linear_attention_dense", "linear", "dense", (7, 0, 3, 0, 0, 3, 4, 0, 1, 1)),
        ("qwen3_next", "full_attention_dense", "full", "dense", (5, 2, 3, 1, 1, 4, 4, 1, 1, 0)),
        ("qwen3_moe", "sliding_moe", "sliding", "moe", (4, 2, 4, 2, 1, 4, 4, 1, 1, 0)),
        ("qwen3_moe", "sliding_dense", "sliding", "dense", (4, 2, 3, 1, 1, 4, 4, 1, 1, 0)),
        ("qwen3_5", "linear_attention", "linear", "dense", (7, 0, 3, 0, 0, 3, 4, 0, 1, 1)),
        ("gemma3", "sliding_attention", "sliding", "dense", (4, 2, 3, 1, 1, 6, 4, 1, 1, 0)),
        ("gpt_oss", "full_attention", "full", "moe", (4, 2, 4, 2, 1, 2, 4, 1, 1, 0)),
        ("gpt2", "full_attention", "full", "dense", (4, 2, 2, 1, 3, 2, 4, 1, 1, 0)),
        ("t5", "encoder", "full", "dense", (4, 2, 2, 1, 4, 2, 4, 0, 1, 0)),
        ("t5", "decoder", "full", "dense", (8, 4, 2, 2, 6, 3, 6, 0, 1, 0)),
        ("vision", "encoder", "full", "dense", (4, 2, 2, 1, 1, 2, 4, 1, 1, 0)),
        ("vision", "window_encoder", "sliding", "dense", (4, 2, 3, 1, 1, 2, 4, 1, 1, 0)),
        ("vision", "global_encoder", "full", "dense", (4, 2, 2, 1, 1, 2, 4, 1, 1, 0)),
        ("mllama", "full_attention", "full", "dense", (4, 2, 3, 1, 1, 2, 4, 1, 1, 0)),
        ("mllama", "cross_attention", "cross", "dense", (4, 2, 3, 1, 1, 4, 4, 1, 1, 0)),
        ("phi3", "sliding_attention", "sliding", "dense", (4, 2, 3, 1, 3, 2, 4, 1, 1, 0)),
        ("granite", "full_attention", "full", "dense", (4, 2, 3, 1, 1, 2, 4, 1, 1, 0)),
        ("starcoder2", "sliding_attention", "sliding", "dense", (4, 2, 2, 1, 3, 2, 4, 1, 1, 0)),
        ("olmo2", "full_attention", "full", "dense", (4, 2, 3, 1, 1, 4, 4, 1, 1, 0)),
        ("exaone4", "sliding_attention", "sliding", "dense", (4, 2, 3, 1, 1, 4, 4, 1, 1, 0)),
        ("cohere", "full_attention", "full", "dense", (4, 2, 3, 1, 1, 1, 4, 1, 1, 0)),
        ("phi", "full_attention", "full", "dense", (4, 2, 2, 1, 3, 1, 4, 1, 1, 0)),
        ("minimax_m2", "moe", "full", "moe", (4, 2, 4, 2, 1, 4, 4, 1, 1, 0)),
        ("roberta", "full_attention", "full", "dense", (4, 2, 2, 1, 3, 2, 4, 0, 1, 0)),
        ("nemotron_h", "mamba", "linear", "none", (6, 0, 0, 0, 0, 2, 2, 0, 0, 1)),
        ("nemotron_h", "attention", "full", "none", (4, 2, 0, 1, 1, 1, 2, 1, 0, 0)),
        ("nemotron_h", "moe", "none", "moe", (0, 0, 5, 1, 0, 1, 2, 0, 2, 0)),
        ("nemotron_h", "moe_latent", "none", "moe", (0, 0, 7, 1, 0, 1, 2, 0, 2, 0)),
        ("nemotron_h", "mamba_proj_bias_no_conv_bias", "linear", "none", (6, 0, 0, 0, 0, 2, 2, 0, 0, 1)),
        ("nemotron_h", "mlp", "none", "dense", (0, 0, 2, 0, 0, 1, 2, 0, 1, 0)),
    ],
)
def test_op_profile_data_exact_counts(arch, kind, attention, ffn, counts):
    spec = _profile(arch)["layer_kinds"][kind]
    assert (spec["attention"], spec["ffn"]) == (attention, ffn)
    assert spec["ops"] == dict(zip(OPS, counts))


#: The input projections of a Gated DeltaNet layer: Qwen3.5 holds them apart, Qwen3-Next packs them in two.
DELTANET_IN_PROJ = "linear_attn.in_proj_"


@pytest.mark.parametrize(
    ("same", "other", "packed"),
    [
        (("qwen2", "full_attention"), ("qwen2_5_vl", "full_attention"), ({}, {})),
        (("mistral", "full_attention"), ("llama", "full_attention"), ({}, {})),
        (("qwen3_5_moe", "linear_attention"), ("qwen3_next", "linear_attention"), (
            {"linear_attn.in_proj_qkv.weight": "qkv_proj", "linear_attn.in_proj_z.weight": "z_proj",
             "linear_attn.in_proj_a.weight": "a_proj", "linear_attn.in_proj_b.weight": "b_proj"},
            {"linear_attn.in_proj_qkvz.weight": "qkvz_proj", "linear_attn.in_proj_ba.weight": "ba_proj"})),
        (("qwen3_5_moe", "full_attention"), ("qwen3_next", "full_attention"), ({}, {})),
        (("granite", "full_attention"), ("llama", "full_attention"), ({}, {})),
        (("mistral3", "full_attention"), ("mistral", "full_attention"), ({}, {})),
        (("mistral3", "sliding_attention"), ("mistral", "sliding_attention"), ({}, {})),
        (("qwen2_vl", "full_attention"), ("qwen2_5_vl", "full_attention"), ({}, {})),
        (("qwen2_vl", "sliding_attention"), ("qwen2_5_vl", "sliding_attention"), ({}, {})),
    ],
)
def test_op_profile_data_shared_layer_shapes_share_counts(same, other, packed):
    """Families whose layers run the same calls carry the same counts, and hold the same tensors; but for
    *packed*, the ``{name: role}`` of the input projections each lays out its own way (the same calls)."""
    ours, theirs = _profile(same[0])["layer_kinds"][same[1]], _profile(other[0])["layer_kinds"][other[1]]
    assert {key: value for key, value in ours.items() if key != "weights"} == {
        key: value for key, value in theirs.items() if key != "weights"}
    assert ([entry for entry in ours["weights"] if not entry["name"].startswith(DELTANET_IN_PROJ)]
            == [entry for entry in theirs["weights"] if not entry["name"].startswith(DELTANET_IN_PROJ)])
    assert tuple({entry["name"]: entry["role"] for entry in kind["weights"]
                  if entry["name"].startswith(DELTANET_IN_PROJ)} for kind in (ours, theirs)) == packed


def test_exaone4_and_olmo2_run_the_same_calls_with_norms_of_other_widths():
    """Both post-norm layouts run the same ops, but Exaone4 normalises q and k per head (head_dim) where Olmo2
    normalises the whole projection (heads x head_dim)."""
    exaone, olmo = _profile("exaone4")["layer_kinds"]["full_attention"], _profile("olmo2")["layer_kinds"]["full_attention"]
    assert exaone["ops"] == olmo["ops"]
    assert [(entry["name"], entry["shape"]) for entry in exaone["weights"] if "_norm." in entry["name"]] == [
        ("self_attn.q_norm.weight", ["head_dim"]), ("self_attn.k_norm.weight", ["head_dim"])]
    assert [(entry["name"], entry["shape"]) for entry in olmo["weights"] if "_norm." in entry["name"]] == [
        ("self_attn.q_norm.weight", ["num_attention_heads * head_dim"]),
        ("self_attn.k_norm.weight", ["num_key_value_heads * head_dim"])]


@pytest.mark.parametrize(
    ("name", "arch"),
    [
        ("deepseek-v3", "deepseek_v3"),
        ("deepseek-r1", "deepseek_v3"),
        ("kimi-k2-instruct", "deepseek_v3"),
        ("llama-3.1-8b", "llama"),
        ("llama-2-7b", "llama"),
        ("mixtral-8x7b", "mixtral"),
        ("qwen2.5-7b-instruct", "qwen2"),
        ("qwen2.5-vl-7b-instruct", "qwen2_5_vl"),
        ("qwen3-8b", "qwen3"),
        ("qwen3-30b-a3b", "qwen3_moe"),
        ("qwen3-next-80b-a3b", "qwen3_next"),
        ("qwen3.5-27b", "qwen3_5"),
        ("qwen3.5-35b-a3b", "qwen3_5_moe"),
        ("gemma-3-27b", "gemma3"),
        ("gpt-oss-20b", "gpt_oss"),
        ("gpt2", "gpt2"),
        ("t5-base", "t5"),
        ("Qwen3-30B-A3B", "qwen3_moe"),
        ("qwen3-0.6b", "qwen3"),
        ("qwen1.5-7b-chat", "qwen2"),
        ("phi-3-mini-4k-instruct", "phi3"),
        ("phi-4", "phi3"),
        ("phi-1", "phi"),
        ("phi-2", "phi"),
        ("granite-3.3-8b-instruct", "granite"),
        ("starcoder2-7b", "starcoder2"),
        ("olmo-2-1124-7b-instruct", "olmo2"),
        ("exaone-4.0-32b", "exaone4"),
        ("command-r-v01", "cohere"),
        ("minimax-m2", "minimax_m2"),
        ("mistral-small-3.1-24b-instruct", "mistral3"),
        ("all-roberta-large-v1-resaved", "roberta"),
        ("qwen2-vl-2b-instruct-awq", "qwen2_vl"),
        ("nemotron-3-nano-30b-a3b", "nemotron_h"),
        ("deepseek-r1-distill-qwen-7b", "qwen2"),
        ("qwen1.5-moe-a2.7b", "qwen2_moe"),
        ("qwen2-57b-a14b", "qwen2_moe"),
        ("olmoe-1b-7b-0924", "olmoe"),
        ("granite-3.0-1b-a400m-instruct", "granitemoe"),
        ("granite-3.0-3b-a800m-base", "granitemoe"),
        ("phi-3.5-moe-instruct", "phimoe"),
        ("phi-mini-moe-instruct", "phimoe"),
        ("dbrx-132b", "dbrx"),
        ("dbrx-instruct", "dbrx"),
        ("dots.llm1.inst", "dots1"),
    ],
)
def test_op_profile_data_name_matches_exactly_one_profile(name, arch):
    matched = [
        stem for stem, profile in _all_profiles().items()
        if any(fnmatch.fnmatchcase(name.lower(), pattern) for pattern in profile["match"])
    ]
    assert matched == [arch]


@pytest.mark.parametrize("name", ["t5-v1_1-base", "flan-t5-base", "gemma-3n-e4b", "deepseek-v3.2-exp", "phi-4-multimodal-instruct",
                                  "granite-4.0-h-small"])
def test_op_profile_data_other_shapes_match_no_profile(name):
    """Neighbours with another layer shape are left for a spec to name, not mispriced."""
    assert [stem for stem, profile in _all_profiles().items()
            if any(fnmatch.fnmatchcase(name, pattern) for pattern in profile["match"])] == []


def test_op_profile_data_model_types_are_unique():
    owners: Dict[str, list] = {}
    for stem, profile in _all_profiles().items():
        for model_type in profile["model_types"]:
            owners.setdefault(model_type, []).append(stem)
    assert {model_type: stems for model_type, stems in owners.items() if len(stems) > 1} == {}
    assert owners["kimi_k2"] == ["deepseek_v3"]


def test_op_profile_data_vision_is_picked_by_no_name():
    vision = _profile("vision")
    assert (vision["match"], vision["model_types"]) == ([], [])
