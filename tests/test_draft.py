"""``modelspec reference --draft``: the reference writes a family's first draft (pipeline/reference/draft.py).

A draft's shape expressions are solved from builds with the widths drawn anew; here they are held against a
build the draft never saw: the catalogue's real config of the family, whose every layer tensor the draft's
expression must give exactly, evaluated over the spec ``modelspec import`` makes of that config.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.reference
pytest.importorskip("torch", reason="the reference extra (torch 2.13.0, transformers 5.24.0) is not installed: "
                                    "pip install -e '.[reference]'")

from pipeline.cli import main  # noqa: E402
from pipeline.importer.config_json import import_config  # noqa: E402
from pipeline.pricing.op_profiles import load_op_profiles  # noqa: E402
from pipeline.reference.census import census  # noqa: E402
from pipeline.reference.draft import Draft, _Solver, draft, render  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@functools.lru_cache(maxsize=None)
def _drafted(model_type: str, config: Optional[str] = None) -> Draft:
    """One draft per family and config for the whole module (a draft builds the family four times)."""
    return draft(model_type, _config(config) if config else None)


#: The layers each config keeps: enough for every kind (DeepSeek-V3's three dense-first layers and a MoE one), few
#: enough for builds in seconds.
_LAYERS = {"deepseek-v3.json": 5, "qwen3-30b-a3b.json": 3, "olmo-2-1124-7b-instruct.json": 3}


def _config(name: str) -> Dict[str, Any]:
    data = json.loads((CONFIGS / name).read_text(encoding="utf-8"))
    if name in _LAYERS:
        data["num_hidden_layers"] = _LAYERS[name]
    return data


def _fields(spec: Any) -> Dict[str, int]:
    return {name: value for name, value in vars(spec).items() if type(value) is int}


def _evaluate(expression: str, fields: Dict[str, int]) -> int:
    return eval(expression, {"__builtins__": {}}, fields)  # noqa: S307  # the draft's own arithmetic over ints


@pytest.mark.parametrize("config, model_type", [
    ("olmo-2-1124-7b-instruct.json", "olmo2"),     # q/k norms over the whole projections
    ("gpt2.json", "gpt2"),                          # fused c_attn of 3 x hidden_size, a position table
    ("qwen3-30b-a3b.json", "qwen3_moe"),            # fused routed experts, a router
    ("deepseek-v3.json", "deepseek_v3"),            # MLA's sums of ranks, dense-first layers, a shared expert
])
def test_a_draft_gives_every_tensor_of_a_config_it_never_built(config, model_type):
    data = _config(config)
    result = _drafted(model_type, config)
    spec = import_config(data, load_op_profiles(), fallback_name="x").spec
    fields = {**_fields(spec), "head_dim": spec.head_dim or spec.hidden_size // spec.num_attention_heads}
    real = census(data).tensors
    checked = 0
    for kind in result.kinds:
        for layer in kind.layers:
            for tensor in kind.tensors:
                shape = real[f"{kind.stack}.{layer}.{tensor.name}"]
                assert tuple(_evaluate(e, fields) for e in tensor.shape) == shape, (kind.name, layer, tensor)
                checked += 1
    for tensor in result.model_tensors:
        assert tuple(_evaluate(e, fields) for e in tensor.shape) == real[tensor.name], tensor
        checked += 1
    assert checked == len(real)  # every tensor of the model, none left out


def test_a_draft_draws_a_towers_widths_and_gives_every_tower_tensor_of_a_config_it_never_built():
    data = json.loads((CONFIGS / "qwen3-vl-2b-instruct.json").read_text(encoding="utf-8"))
    data["text_config"]["num_hidden_layers"], data["vision_config"]["depth"] = 2, 2
    result = draft("qwen3_vl", data)
    spec = import_config(data, load_op_profiles(), fallback_name="x").spec
    fields = {**_fields(spec.vision), "head_dim": spec.vision.hidden_size // spec.vision.num_attention_heads,
              "text_hidden_size": spec.hidden_size}
    real = census(data).tensors
    tower = [(f"{kind.stack}.{layer}.{tensor.name}", tensor) for kind in result.kinds if kind.tower
             for layer in kind.layers for tensor in kind.tensors]
    tower += [(tensor.name, tensor) for tensor in result.model_tensors if tensor.tower]
    assert sorted(name for name, _ in tower) == sorted(name for name in real if name.startswith("model.visual."))
    for name, tensor in tower:
        assert tuple(_evaluate(e, fields) for e in tensor.shape) == real[name], tensor
    assert [(kind.name, kind.stack) for kind in result.kinds if kind.tower] == [
        ("encoder", "model.visual.blocks"), ("encoder_2", "model.visual.deepstack_merger_list")]
    merger = {tensor.name: tensor for tensor in result.model_tensors}["model.visual.merger.linear_fc2.weight"]
    assert (merger.shape, merger.part) == (("out_hidden_size", "hidden_size * spatial_merge_size * spatial_merge_size"),
                                           "projector")
    assert not [question for question in result.questions if "dimension" in question]  # no tower width left open
    text = render(result)
    assert "vision:\n" in text and "    - {role: pos_embed, name: model.visual.pos_embed.weight, part: tower, shape: " \
                                    "[num_position_embeddings, hidden_size]}\n" in text


def test_deepseek_v3s_draft_solves_mla_and_the_shared_expert_and_splits_dense_from_moe_layers():
    result = _drafted("deepseek_v3", "deepseek-v3.json")
    assert [(kind.name, kind.layers[0], len(kind.layers)) for kind in result.kinds] == [("dense", 0, 3), ("moe", 3, 2)]
    moe = {tensor.name: tensor.shape for tensor in result.kinds[1].tensors}
    assert moe["self_attn.kv_a_proj_with_mqa.weight"] == ("kv_lora_rank + qk_rope_head_dim", "hidden_size")
    assert moe["mlp.shared_experts.up_proj.weight"] == ("moe_intermediate_size * num_shared_experts", "hidden_size")
    assert moe["mlp.experts.gate_up_proj"] == ("num_experts", "2 * moe_intermediate_size", "hidden_size")
    parts = {tensor.name: tensor.part for tensor in result.kinds[1].tensors}
    assert (parts["mlp.gate.weight"], parts["mlp.experts.down_proj"], parts["mlp.shared_experts.down_proj.weight"],
            parts["self_attn.q_a_layernorm.weight"], parts["input_layernorm.weight"]) == \
        ("router", "routed_experts", "shared_experts", "attention", "norms")


def test_a_draft_lists_the_ops_each_layer_issued_with_the_module_that_issued_them():
    result = _drafted("olmo2")
    ops = {(module, op): count for module, op, count in result.kinds[0].ops}
    assert ops[("self_attn", "aten.bmm (batched matmul)")] == 2          # QK^T and AV: attBMM 2
    assert ops[("self_attn", "aten._softmax (softmax)")] == 1
    assert ops[("self_attn", "aten.bernoulli_ (dropout)")] == 1           # the dropout on the probabilities
    assert sum(count for (module, op), count in ops.items() if op == "aten.mm (matmul)") == 7  # attMM 4 + ffMM 3
    assert sum(count for (module, op), count in ops.items() if op == "norm module call") == 4  # normOp 4
    assert ops[("mlp.act_fn", "aten.silu (activation)")] == 1             # ffAct 1


def test_a_dimension_no_expression_explains_is_a_question_never_a_guess():
    solver = _Solver([{"hidden_size": 10, "vocab_size": 50}, {"hidden_size": 14, "vocab_size": 30}], {4: ["conv"]})
    assert solver.solve((20, 28)) == "2 * hidden_size"
    assert solver.solve((60, 44)) == "hidden_size + vocab_size"
    assert solver.solve((1, 1)) == "1"                 # the code's own number (Linear(hidden_size, 1))
    assert solver.solve((4, 4)) is None                # equals an unvaried config value: which one is a question
    assert solver.hint((4, 4)) == " (it never moved, and equals the config's conv)"
    assert solver.solve((7, 7)) is None                # a number no build moved may be a value no build varies
    assert solver.hint((7, 7)) == " (it never moved: the code's own number, or a config value the builds do not vary)"
    assert solver.solve((11, 13)) is None              # moves, but with no field: a question


def test_the_draft_command_prints_a_profile_that_check_refuses_until_its_questions_are_answered(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["reference", "--draft", "qwen2_moe"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("# A DRAFT op profile for model_type qwen2_moe, written by modelspec reference "
                                    "--draft\n")
    text = result.output
    assert "      - {role: gate, name: mlp.gate.weight, part: router, shape: [num_experts, hidden_size]}\n" in text
    assert "shape: [1, hidden_size]" in text                 # shared_expert_gate: Linear(hidden_size, 1)
    drafted = render(_drafted("qwen2_moe"))
    assert drafted == text                                   # the command prints the module's draft, as it is
    (tmp_path / "op_profiles").mkdir()
    (tmp_path / "specs").mkdir()
    (tmp_path / "op_profiles" / "qwen2_moe.yaml").write_text(text, encoding="utf-8")
    checked = runner.invoke(main, ["check", "--root", str(tmp_path)])
    assert checked.exit_code == 2
    assert "op_profiles/qwen2_moe.yaml:5:1: error [profile.draft] this op profile is a draft of modelspec " \
           "reference --draft with" in checked.output


def test_the_draft_command_refuses_a_type_transformers_does_not_know_and_a_spec_beside_it():
    runner = CliRunner()
    unknown = runner.invoke(main, ["reference", "--draft", "no_such_model"])
    assert unknown.exit_code == 1
    assert unknown.output == "modelspec: --draft no_such_model: transformers 5.24.0 has no model type " \
                             "'no_such_model'\n"
    both = runner.invoke(main, ["reference", "--draft", "olmo2", "--spec", "gpt2"])
    assert both.exit_code == 2
    assert "--draft takes a MODEL_TYPE and, optionally, a CONFIG file; not --spec or --arch" in both.output
