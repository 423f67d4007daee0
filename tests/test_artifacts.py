"""The resolved-stack artifact: exact documents of real models, the schema, the digest's inputs, safe names,
and how regen tells its own files from copies and hand-made ones."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, Iterator, Tuple

import jsonschema
import pytest

from pipeline.catalogue import artifacts
from pipeline.catalogue.artifacts import (ArtifactInputs, IndexEntry, artifact_file, build_artifact, build_index,
                                generated_problem, is_generated, name_problem, render, widths)
from pipeline.spec.model import ModelSpec
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.check.runner import CheckedSpec, check_file
from spec_repos import FIXTURE

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "resolved-stack.schema.json"
SCHEMA = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
SPEC_SCHEMA = json.loads((SCHEMA_PATH.parent / "model-spec.schema.json").read_text(encoding="utf-8"))
PROFILES = FIXTURE / "op_profiles"

OPS_MLA_DENSE = {"attMM": 5, "attBMM": 2, "ffMM": 3, "softmax": 1, "dropout": 1, "normOp": 4, "gather": 4,
                 "headCast": 1, "ffAct": 1, "linrec": 0}
OPS_MLA_MOE = {**OPS_MLA_DENSE, "ffMM": 7, "softmax": 2, "ffAct": 2}
OPS_LLAMA = {"attMM": 4, "attBMM": 2, "ffMM": 3, "softmax": 1, "dropout": 1, "normOp": 2, "gather": 4,
             "headCast": 1, "ffAct": 1, "linrec": 0}
OPS_ENCODER = {**OPS_LLAMA, "ffMM": 2}


def checked(relative: str) -> CheckedSpec:
    """The fixture spec *relative* checked against the fixture's profiles."""
    return check_file(FIXTURE / relative, relative, load_op_profiles(PROFILES))


def inputs_of(relative: str) -> ArtifactInputs:
    """The artifact inputs of the fixture spec *relative*, as regen reads them."""
    item = checked(relative)
    profile = (PROFILES / f"{item.stack.arch}.yaml").read_bytes()
    vision = (PROFILES / "vision.yaml").read_bytes() if item.tower else None
    return ArtifactInputs(relative, (FIXTURE / relative).read_bytes(), profile, vision)


def artifact(relative: str) -> Dict[str, Any]:
    """The artifact document of the fixture spec *relative*."""
    item = checked(relative)
    return build_artifact(item, inputs_of(relative), load_op_profiles(PROFILES).get(item.stack.arch))


def test_llama_artifact_is_exact() -> None:
    relative = "specs/llama/llama-3.1-8b.yaml"
    assert artifact(relative) == {
        "format_version": 4,
        "generator": "modelspec regen",
        "name": "llama-3.1-8b",
        "path": relative,
        "arch": "llama",
        "digest": inputs_of(relative).digest(),
        "groups": [{"kind": "full_attention", "count": 32, "mtp": False, "attention": "full", "ffn": "dense"}],
        # The fixture's profiles predate weight inventories: no kind is priced, and the block says why.
        "kinds": {"full_attention": {"attention": "full", "ffn": "dense", "ops": OPS_LLAMA, "weights": None}},
        "layers": {"body": 32, "mtp": 0},
        "parameters": {"unpriced": "the op profile states no weights for kind 'full_attention'"},
        "flops": {"unpriced": "the op profile states no weights for kind 'full_attention'"},
        "weights": {"model": None, "mtp": None},
        "linear_attention": None,
        "spec": {"name": "llama-3.1-8b", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                 "vocab_size": 128256, "num_key_value_heads": 8, "intermediate_size": 14336,
                 "max_position_embeddings": 131072, "torch_dtype": "bfloat16"},
        # A dense model states no expert width: the IR's fallback to intermediate_size is no expert's width.
        "widths": {"effective_head_dim": 128, "attention_width": 4096, "routed_expert_width": None,
                   "shared_expert_width": None},
        "vision": None,
    }


def test_deepseek_artifact_has_dense_moe_and_mtp_groups() -> None:
    document = artifact("specs/deepseek/deepseek-v3.yaml")
    assert document["groups"] == [
        {"kind": "dense", "count": 3, "mtp": False, "attention": "mla", "ffn": "dense"},
        {"kind": "moe", "count": 58, "mtp": False, "attention": "mla", "ffn": "moe"},
        {"kind": "moe", "count": 1, "mtp": True, "attention": "mla", "ffn": "moe"},
    ]
    assert document["kinds"] == {"dense": {"attention": "mla", "ffn": "dense", "ops": OPS_MLA_DENSE, "weights": None},
                                 "moe": {"attention": "mla", "ffn": "moe", "ops": OPS_MLA_MOE, "weights": None}}
    assert document["layers"] == {"body": 61, "mtp": 1}
    assert (document["parameters"], document["weights"]) == (
        {"unpriced": "the op profile states no weights for kind 'dense'"}, {"model": None, "mtp": None})
    assert document["widths"] == {"effective_head_dim": 56, "attention_width": 7168, "routed_expert_width": 2048,
                                  "shared_expert_width": 2048}
    assert (document["arch"], document["linear_attention"], document["vision"]) == ("deepseek_v3", None, None)
    # What prices MLA and the experts, which no stack member carries, is in the spec facts.
    assert {key: document["spec"][key] for key in (
        "num_experts", "num_experts_per_tok", "num_shared_experts", "num_key_value_heads", "kv_lora_rank",
        "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "vocab_size")} == {
        "num_experts": 256, "num_experts_per_tok": 8, "num_shared_experts": 1, "num_key_value_heads": 128,
        "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
        "v_head_dim": 128, "vocab_size": 129280}


def test_qwen_artifact_has_linear_dims_and_tower() -> None:
    document = artifact("specs/qwen/qwen3.5-35b-a3b.yaml")
    assert [(group["kind"], group["count"], group["mtp"]) for group in document["groups"]] == \
        [("linear_attention", 3, False), ("full_attention", 1, False)] * 10 + [("full_attention", 1, True)]
    assert document["layers"] == {"body": 40, "mtp": 1}
    assert document["linear_attention"] == {"num_key_heads": 16, "key_head_dim": 128, "num_value_heads": 32,
                                            "value_head_dim": 128, "conv_kernel_dim": 4}
    assert document["widths"] == {"effective_head_dim": 256, "attention_width": 4096, "routed_expert_width": 512,
                                  "shared_expert_width": 512}
    assert (document["spec"]["attn_output_gate"], document["spec"]["head_dim"], document["spec"]["vision"]) == (
        True, 256, {"hidden_size": 1152, "num_hidden_layers": 27, "num_attention_heads": 16, "name": "vision",
                    "intermediate_size": 4304, "out_hidden_size": 2048, "patch_size": 16, "spatial_merge_size": 2,
                    "num_position_embeddings": 2304})
    assert document["vision"] == {
        "arch": "vision",
        "groups": [{"kind": "encoder", "count": 27, "mtp": False, "attention": "full", "ffn": "dense"}],
        "kinds": {"encoder": {"attention": "full", "ffn": "dense", "ops": OPS_ENCODER, "weights": None}},
        "layers": {"body": 27, "mtp": 0},
        "weights": None,
    }
    assert (document["parameters"], document["weights"]) == (
        {"unpriced": "the op profile states no weights for kind 'linear_attention'"}, {"model": None, "mtp": None})


@pytest.mark.parametrize("relative", [
    "specs/deepseek/deepseek-v3.yaml", "specs/llama/llama-3.1-8b.yaml", "specs/qwen/qwen3.5-35b-a3b.yaml"])
def test_artifact_matches_schema(relative: str) -> None:
    jsonschema.Draft202012Validator(SCHEMA, registry=_registry()).validate(json.loads(render(artifact(relative))))


def test_the_spec_member_is_every_field_the_spec_serialises() -> None:
    item = checked("specs/qwen/qwen3.5-35b-a3b.yaml")
    assert artifact("specs/qwen/qwen3.5-35b-a3b.yaml")["spec"] == item.spec.to_dict()
    assert SCHEMA["properties"]["spec"]["$ref"] == SPEC_SCHEMA["$id"]


def _spec(**fields: Any) -> ModelSpec:
    """A spec of the four required fields and *fields*."""
    return ModelSpec.from_dict({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                                "vocab_size": 32000, **fields})


@pytest.mark.parametrize("fields, expected", [
    ({"intermediate_size": 14336}, (128, 4096, None, None)),
    # Mixtral: the experts run at the dense width, and no moe_intermediate_size is stated.
    ({"intermediate_size": 14336, "num_experts": 8, "num_experts_per_tok": 2}, (128, 4096, 14336, None)),
    ({"num_experts": 64, "moe_intermediate_size": 512, "num_shared_experts": 1}, (128, 4096, 512, 512)),
    ({"num_experts": 64, "moe_intermediate_size": 512, "num_shared_experts": 0}, (128, 4096, 512, None)),
    ({"num_experts": 64, "moe_intermediate_size": 512, "num_shared_experts": 2,
      "shared_expert_intermediate_size": 1024}, (128, 4096, 512, 1024)),
    # One expert is no routing: the IR's is_moe is false, so no routed width is stated.
    ({"intermediate_size": 11008, "num_experts": 1}, (128, 4096, None, None)),
    ({"head_dim": 256, "intermediate_size": 11008}, (256, 8192, None, None)),
], ids=["dense", "mixtral", "shared", "no-shared", "shared-width", "one-expert", "head-dim"])
def test_widths_state_expert_widths_only_for_models_with_such_experts(fields, expected) -> None:
    stated = widths(_spec(**fields))
    assert tuple(stated[name] for name in artifacts.WIDTHS) == expected


def test_index_matches_schema() -> None:
    index = build_index([IndexEntry("b", "b.json", "specs/b.yaml", "sha256:" + "1" * 64, current=False),
                         IndexEntry("a", "a.json", "specs/a.yaml", "sha256:" + "0" * 64)])
    validator = jsonschema.Draft202012Validator({"$ref": "urn:modelspec:schemas:resolved-stack#/$defs/index"},
                                                registry=_registry())
    validator.validate(index)
    assert [entry["file"] for entry in index["artifacts"]] == ["a.json", "b.json"]
    assert index["artifacts"][1] == {"name": "b", "file": "b.json", "path": "specs/b.yaml",
                                     "digest": "sha256:" + "1" * 64, "current": False}


def _registry():
    """A registry holding the resolved-stack and model-spec schemas by their ``$id``."""
    from referencing import Registry, Resource

    return Registry().with_resources((schema["$id"], Resource.from_contents(schema)) for schema in (SCHEMA,
                                                                                                    SPEC_SCHEMA))


def _properties(node: Any, where: str) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """Every ``properties`` entry of the schema, with its place."""
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            yield f"{where}/properties/{name}", sub
        for key, sub in node.items():
            yield from _properties(sub, f"{where}/{key}")
    elif isinstance(node, list):
        for index, sub in enumerate(node):
            yield from _properties(sub, f"{where}/{index}")


def test_every_schema_property_is_described() -> None:
    def described(sub: Dict[str, Any]) -> bool:
        if "description" in sub:
            return True
        ref = sub.get("$ref", "")
        return ref.startswith("#/$defs/") and "description" in SCHEMA["$defs"][ref.split("/")[-1]]

    assert SCHEMA["$id"] == "urn:modelspec:schemas:resolved-stack"
    assert [where for where, sub in _properties(SCHEMA, "#") if not described(sub)] == []


def test_schema_refuses_an_unknown_key_and_a_bad_digest() -> None:
    document = artifact("specs/llama/llama-3.1-8b.yaml")
    errors = sorted(error.message for error in jsonschema.Draft202012Validator(SCHEMA, registry=_registry())
                    .iter_errors({**document, "extra": 1, "digest": "md5:00"}))
    assert errors == ["'md5:00' does not match '^sha256:[0-9a-f]{64}$'",
                      "Additional properties are not allowed ('extra' was unexpected)"]


@pytest.mark.parametrize("change, expected", [
    ({"widths": {"effective_head_dim": 128, "attention_width": 4096, "routed_expert_width": 0,
                 "shared_expert_width": None}}, "0 is not valid under any of the given schemas"),
    ({"spec": {"name": "llama-3.1-8b", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32}},
     "'vocab_size' is a required property"),
    ({"spec": {"name": "llama-3.1-8b", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
               "vocab_size": 128256, "compute_dtype": "bf16"}},
     "Additional properties are not allowed ('compute_dtype' was unexpected)"),
], ids=["zero-width", "spec-missing-field", "spec-unknown-key"])
def test_schema_refuses_a_zero_expert_width_and_a_spec_that_is_no_spec(change: Dict[str, Any],
                                                                       expected: str) -> None:
    document = {**artifact("specs/llama/llama-3.1-8b.yaml"), **change}
    errors = [error.message for error in jsonschema.Draft202012Validator(SCHEMA, registry=_registry())
              .iter_errors(document)]
    assert errors == [expected]


def _framed(*parts: Tuple[str, bytes]) -> str:
    """The digest computed independently of the module: SHA-256 over ``label length\\n bytes`` for each part."""
    hasher = hashlib.sha256()
    for label, data in parts:
        hasher.update(f"{label} {len(data)}\n".encode() + data)
    return "sha256:" + hasher.hexdigest()


def test_digest_is_framed_sha256_of_exactly_the_inputs() -> None:
    assert ArtifactInputs("specs/a.yaml", b"spec", b"profile").digest() == _framed(
        ("format", b"4"), ("path", b"specs/a.yaml"), ("spec", b"spec"), ("profile", b"profile"))
    assert ArtifactInputs("specs/a.yaml", b"spec", b"profile", b"tower").digest() == _framed(
        ("format", b"4"), ("path", b"specs/a.yaml"), ("spec", b"spec"), ("profile", b"profile"),
        ("vision-profile", b"tower"))


BASE = ArtifactInputs("specs/a.yaml", b"name: a\n", b"arch: x\n", b"arch: vision\n")


@pytest.mark.parametrize("changed", [
    ArtifactInputs("specs/b.yaml", BASE.spec, BASE.profile, BASE.vision_profile),
    ArtifactInputs(BASE.path, b"name: a\n# a comment\n", BASE.profile, BASE.vision_profile),
    ArtifactInputs(BASE.path, BASE.spec, b"arch: y\n", BASE.vision_profile),
    ArtifactInputs(BASE.path, BASE.spec, BASE.profile, b"arch: vision \n"),
    ArtifactInputs(BASE.path, BASE.spec, BASE.profile, None),
    # Moving a byte from one input to the next must not give the same digest.
    ArtifactInputs(BASE.path, b"name: a", b"\narch: x\n", BASE.vision_profile),
], ids=["path", "spec", "profile", "vision-profile", "no-tower", "boundary"])
def test_any_changed_input_changes_the_digest(changed: ArtifactInputs) -> None:
    assert changed.digest() != BASE.digest()


def test_the_format_version_is_an_input(monkeypatch: pytest.MonkeyPatch) -> None:
    before = BASE.digest()
    monkeypatch.setattr(artifacts, "FORMAT_VERSION", 5)
    assert BASE.digest() != before


@pytest.mark.parametrize("name, expected", [
    ("deepseek-v3", None),
    ("qwen3.5-35b-a3b", None),
    ("Llama_3.1-8B", None),
    ("x" * 250, None),
    ("../../x", "name '../../x' cannot name the artifact file resolved/<name>.json: a name is letters, digits, '.', "
                "'_' and '-', not starting with a dot; rename the model, e.g. deepseek-v3"),
    ("a/b", "name 'a/b' cannot name the artifact file resolved/<name>.json: a name is letters, digits, '.', "
            "'_' and '-', not starting with a dot; rename the model, e.g. deepseek-v3"),
    (".hidden", "name '.hidden' cannot name the artifact file resolved/<name>.json: a name is letters, digits, "
                "'.', '_' and '-', not starting with a dot; rename the model, e.g. deepseek-v3"),
    ("..", "name '..' cannot name the artifact file resolved/<name>.json: a name is letters, digits, '.', '_' and "
           "'-', not starting with a dot; rename the model, e.g. deepseek-v3"),
    ("a b", "name 'a b' cannot name the artifact file resolved/<name>.json: a name is letters, digits, '.', '_' and "
            "'-', not starting with a dot; rename the model, e.g. deepseek-v3"),
    ("qwen\\x", "name 'qwen\\\\x' cannot name the artifact file resolved/<name>.json: a name is letters, digits, "
                "'.', '_' and '-', not starting with a dot; rename the model, e.g. deepseek-v3"),
    ("模型", "name '模型' cannot name the artifact file resolved/<name>.json: a name is letters, digits, '.', '_' "
           "and '-', not starting with a dot; rename the model, e.g. deepseek-v3"),
    ("x" * 251, "name is 251 characters long; resolved/<name>.json must stay a file name of at most 255 bytes, "
                "so shorten it to at most 250"),
    ("index", "name 'index' would write resolved/index.json, the artifacts' index; rename the model"),
])
def test_name_problem(name: str, expected: str) -> None:
    assert name_problem(name) == expected


def test_artifact_file_refuses_an_unsafe_name() -> None:
    assert artifact_file("deepseek-v3") == "deepseek-v3.json"
    with pytest.raises(ValueError, match=r"^name '\.\./x' cannot name the artifact file"):
        artifact_file("../x")


def test_render_is_sorted_indented_ascii_with_a_final_newline() -> None:
    assert render({"b": [2, 1], "a": {"d": None, "c": "é"}}) == (
        '{\n  "a": {\n    "c": "\\u00e9",\n    "d": null\n  },\n  "b": [\n    2,\n    1\n  ]\n}\n')


def test_build_artifact_refuses_a_spec_without_a_stack() -> None:
    item = checked("specs/llama/llama-3.1-8b.yaml")
    with pytest.raises(ValueError, match=r"^specs/x.yaml: no resolved stack to build an artifact from$"):
        build_artifact(CheckedSpec(item.result, item.spec), ArtifactInputs("specs/x.yaml", b"", b""),
                       load_op_profiles(PROFILES).get("llama"))


def test_build_artifact_refuses_a_tower_without_the_vision_profile() -> None:
    relative = "specs/qwen/qwen3.5-35b-a3b.yaml"
    inputs = inputs_of(relative)
    with pytest.raises(ValueError, match="a tower's artifact needs the vision profile's bytes, and only a tower's"):
        build_artifact(checked(relative), ArtifactInputs(relative, inputs.spec, inputs.profile),
                       load_op_profiles(PROFILES).get("qwen3_5_moe"))


LLAMA_DOC = json.loads(render(artifact("specs/llama/llama-3.1-8b.yaml")))
OLD_FORMAT = {"format_version": 1, "generator": "modelspec regen", "name": "llama-3.1-8b",
              "path": "specs/llama/llama-3.1-8b.yaml", "digest": "sha256:" + "0" * 64, "widths": {}}
INDEX = build_index([IndexEntry("a", "a.json", "specs/a.yaml", "sha256:" + "0" * 64)])


@pytest.mark.parametrize("file, document, expected", [
    ("llama-3.1-8b.json", LLAMA_DOC, None),
    ("index.json", INDEX, None),
    # An artifact of an earlier format is regen's, so an upgrade replaces it.
    ("llama-3.1-8b.json", OLD_FORMAT, None),
    ("index.json", {**INDEX, "format_version": 1}, None),
    # Format 2, before parameters and weights: not of the current shape, but regen's all the same.
    ("llama-3.1-8b.json", {**{key: value for key, value in LLAMA_DOC.items() if key not in ("parameters", "weights")},
                           "format_version": 2}, None),
    # A copy under another file name is not: regen would remove or overwrite a file it never wrote.
    ("gpt2-backup.json", {**LLAMA_DOC, "name": "gpt2"},
     "its name 'gpt2' is not its file name (that would be gpt2.json)"),
    ("llama-3.1-8b-backup.json", OLD_FORMAT,
     "its name 'llama-3.1-8b' is not its file name (that would be llama-3.1-8b.json)"),
    ("mine.json", {"generator": "modelspec regen"}, "it states no format_version"),
    ("mine.json", {"generator": "modelspec regen", "format_version": 2}, "it states no name"),
    ("mine.json", {"generator": "modelspec regen", "format_version": True, "name": "mine"},
     "it states no format_version"),
    ("mine.json", {"generator": "modelspec regen", "format_version": 4, "name": "mine"},
     "it is not an artifact of format 4 ('path' is a required property at /)"),
    ("llama-3.1-8b.json", {**LLAMA_DOC, "widths": {**LLAMA_DOC["widths"], "routed_expert_width": "wide"}},
     "it is not an artifact of format 4 ('wide' is not valid under any of the given schemas at "
     "/widths/routed_expert_width)"),
    ("llama-3.1-8b.json", {key: value for key, value in LLAMA_DOC.items() if key != "parameters"},
     "it is not an artifact of format 4 ('parameters' is a required property at /)"),
    ("llama-3.1-8b.json", {key: value for key, value in OLD_FORMAT.items() if key != "path"},
     "it lacks the name, path or digest every artifact has"),
    ("index.json", {**INDEX, "artifacts": {}}, "it is not an artifact of format 4 ({} is not of type 'array' at "
                                               "/artifacts)"),
    ("index.json", {"generator": "modelspec regen", "format_version": 1}, "it lists no artifacts"),
    ("notes.json", {"generator": "a person"}, "it does not carry the mark of modelspec regen"),
    ("notes.json", ["modelspec regen"], "it does not carry the mark of modelspec regen"),
    ("notes.json", None, "it does not carry the mark of modelspec regen"),
], ids=["artifact", "index", "old-artifact", "old-index", "format-2-artifact", "copy", "old-copy", "mark-only",
        "no-name", "boolean-version", "no-path", "bad-width", "no-parameters", "old-without-path", "index-not-a-list",
        "old-index-no-list", "other-mark", "list", "null"])
def test_generated_problem(file: str, document: Any, expected: Any) -> None:
    assert generated_problem(file, document) == expected
    assert is_generated(file, document) is (expected is None)


def test_the_op_counts_are_the_model_specs_own_record() -> None:
    spec_schema = json.loads((SCHEMA_PATH.parent / "model-spec.schema.json").read_text(encoding="utf-8"))
    assert SCHEMA["$defs"]["ops"] == spec_schema["$defs"]["opCounts"]
