"""Tests of the catalogue (``specs/``), ``modelspec show`` and ``modelspec list``.

The catalogue passes ``check --strict`` (no warnings) and ``fmt --check``.
Facts of real models are asserted through ``show --format json``, the view a
tool reads: DeepSeek-V3's MLA and dense-then-MoE stack, Kimi-K2 on the same
profile without MTP, Qwen3.5-35B-A3B's hybrid stack, MTP layer and tower,
Qwen3-Next's layer types derived from its attention interval, gpt-oss's
alternation, T5's halves and Qwen2.5-VL's windowed tower. The text forms are
asserted whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Sequence

import pytest

from bundled import CATALOGUE_SPECS
from click.testing import CliRunner

from pipeline.catalogue.views import CatalogueError, Entry, find
from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(args: Sequence[str]):
    """Run ``modelspec ARGS``; stdout and stderr apart."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def show(name: str) -> Dict[str, Any]:
    result = run(["show", name, "--format", "json", "--root", str(ROOT)])
    assert (result.exit_code, result.stderr) == (0, "")
    return json.loads(result.stdout)


def test_the_catalogue_count_is_the_folders() -> None:
    assert len(sorted((ROOT / "specs").glob("*/*.yaml"))) == CATALOGUE_SPECS


def runs(view: Dict[str, Any]) -> list:
    """The groups as ``(kind, count, mtp)``."""
    return [(group["kind"], group["count"], group["mtp"]) for group in view["groups"]]


# ---- the catalogue passes its gates ----------------------------------------------------

def test_check_on_the_whole_catalogue_exits_0_with_no_warnings():
    result = run(["check", "--strict", "--root", str(ROOT)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, f"{CATALOGUE_SPECS} files checked, no problems\n", "")


def test_fmt_check_on_the_whole_catalogue_exits_0():
    result = run(["fmt", "--check", "--root", str(ROOT)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_every_spec_records_where_its_numbers_come_from():
    for path in sorted((ROOT / "specs").rglob("*.yaml")):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines[0] == "# yaml-language-server: $schema=../../schemas/model-spec.schema.json", path
        # fmt wraps a header line at 80 columns, so the source runs on until the import note
        note = next(index for index, line in enumerate(lines) if line.startswith("# imported by modelspec import "))
        assert lines[1].startswith("# source: ") and " config.json" in " ".join(lines[1:note]), path


# ---- facts of real models ----------------------------------------------------------------

def test_deepseek_v3():
    view = show("deepseek-v3")
    assert view["layers"] == {"body": 61, "mtp": 1}
    assert runs(view) == [("dense", 3, False), ("moe", 58, False), ("moe", 1, True)]
    assert view["kinds"]["dense"]["attention"] == view["kinds"]["moe"]["attention"] == "mla"
    assert (view["kinds"]["dense"]["ffn"], view["kinds"]["moe"]["ffn"]) == ("dense", "moe")
    assert view["mla"] == {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
                           "qk_nope_head_dim": 128, "v_head_dim": 128}
    assert view["experts"] == {"routed": 256, "per_token": 8, "shared": 1}
    assert view["tower"] is None


def test_kimi_k2_is_deepseek_v3_without_mtp():
    view, deepseek = show("kimi-k2-instruct"), show("deepseek-v3")
    assert view["arch"] == deepseek["arch"] == "deepseek_v3"
    assert view["kinds"] == deepseek["kinds"]
    assert view["layers"] == {"body": 61, "mtp": 0}
    assert runs(view) == [("dense", 1, False), ("moe", 60, False)]
    assert view["experts"] == {"routed": 384, "per_token": 8, "shared": 1}


def test_qwen3_5_35b_a3b():
    view = show("qwen3.5-35b-a3b")
    assert runs(view) == [("linear_attention", 3, False), ("full_attention", 1, False)] * 10 + [
        ("full_attention", 1, True)]
    assert view["layers"] == {"body": 40, "mtp": 1}
    assert view["linear"] == {"num_key_heads": 16, "key_head_dim": 128, "num_value_heads": 32,
                              "value_head_dim": 128, "conv_kernel_dim": 4}
    assert view["widths"] == {"hidden_size": 2048, "intermediate_size": None, "effective_head_dim": 256,
                              "attention_width": 4096, "routed_expert_width": 512, "shared_expert_width": 512}
    assert {kind: (k["attention"], k["ffn"]) for kind, k in view["kinds"].items()} == {
        "linear_attention": ("linear", "moe"), "full_attention": ("full", "moe")}
    tower = view["tower"]
    assert (tower["layers"], tower["arch"], runs(tower)) == (27, "vision", [("encoder", 27, False)])
    assert tower["widths"] == {"hidden_size": 1152, "intermediate_size": 4304, "out_hidden_size": 2048,
                               "patch_size": 16, "spatial_merge_size": 2, "num_position_embeddings": 2304}


def test_qwen3_next_layer_types_come_from_full_attention_interval_4():
    view = show("qwen3-next-80b-a3b")
    # and its one MTP layer, which the config does not state (vLLM's default; the checkpoint ships it)
    assert runs(view) == [("linear_attention", 3, False), ("full_attention", 1, False)] * 12 + [
        ("full_attention", 1, True)]
    assert view["layers"] == {"body": 48, "mtp": 1}
    spec = (ROOT / "specs" / "qwen" / "qwen3-next-80b-a3b.yaml").read_text(encoding="utf-8")
    assert "layer_types:\n" + "  - linear_attention\n  - linear_attention\n  - linear_attention\n  - full_attention\n" \
        * 12 in spec


def test_gpt_oss_20b_alternates_sliding_and_full():
    view = show("gpt-oss-20b")
    assert runs(view) == [("sliding_attention", 1, False), ("full_attention", 1, False)] * 12
    assert (view["kinds"]["sliding_attention"]["attention"], view["sliding_window"]) == ("sliding", 128)
    assert view["experts"] == {"routed": 32, "per_token": 4, "shared": 0}


def test_t5_base_is_12_plus_12():
    view = show("t5-base")
    assert runs(view) == [("encoder", 12, False), ("decoder", 12, False)]
    assert view["layers"] == {"body": 24, "mtp": 0}


def test_qwen2_5_vl_7b_tower():
    tower = show("qwen2.5-vl-7b-instruct")["tower"]
    assert runs(tower) == [("window_encoder", 7, False), ("gated_encoder", 1, False)] * 4
    assert {kind: (k["attention"], k["ffn"], k["ops"]["ffMM"]) for kind, k in tower["kinds"].items()} == {
        "window_encoder": ("sliding", "dense", 3), "gated_encoder": ("full", "dense", 3)}
    assert (tower["layers"], tower["num_attention_heads"], tower["widths"]["hidden_size"]) == (32, 16, 1280)


def test_gemma_3_27b():
    view = show("gemma-3-27b")
    assert runs(view) == [("sliding_attention", 5, False), ("full_attention", 1, False)] * 10 + [
        ("sliding_attention", 2, False)]
    assert (view["widths"]["effective_head_dim"], view["sliding_window"]) == (128, 1024)
    assert view["tower"]["widths"]["num_position_embeddings"] == 4096


def test_op_totals_sum_each_kind_over_its_layers():
    view = show("t5-base")
    encoder, decoder = view["kinds"]["encoder"]["ops"], view["kinds"]["decoder"]["ops"]
    assert view["op_totals"] == {op: 12 * encoder[op] + 12 * decoder[op] for op in encoder}


# ---- the text forms ----------------------------------------------------------------------

def test_show_draws_groups_kinds_mtp_and_the_tower():
    result = run(["show", "qwen3.5-35b-a3b", "--root", str(ROOT)])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == """\
qwen3.5-35b-a3b  qwen3_5_moe  specs/qwen/qwen3.5-35b-a3b.yaml
40 layers + 1 MTP, 256 experts (top 8, 1 shared)

  layers  repeat  kind              count  attention  ffn
  0-39    x10     linear_attention      3  linear     moe
                  full_attention        1  full       moe
  40              full_attention        1  full       moe  MTP

35,107,181,936 parameters, 3,901,560,176 active; MTP 1 layer, 844,640,768 parameters apart
  embedding 508,559,360, head 508,559,360, final norm 2,048, vision tower 446,571,248

  kind                  layers      attention             mlp  routed experts  shared experts      router    norms           total
  linear_attention          30  1,011,553,920  24,269,352,960  24,159,191,040      94,371,840  15,728,640  122,880  25,281,029,760
  full_attention            10    272,634,880   8,089,784,320   8,053,063,680      31,457,280   5,242,880   40,960   8,362,460,160
  full_attention (MTP)       1     27,263,488     808,978,432     805,306,368       3,145,728     524,288    4,096     836,246,016

flops at 4,096 tokens (forward; a FMA is 2; training = 3 x forward): dense 2.746e+13 (6,705,153,440/token), causal 2.6e+13 (6,346,466,720/token)
  head 4.166e+12, MTP apart 8.032e+11

  kind                  layers  attention    weights  attn dense  attn causal  kv B/token     state B
  linear_attention          30  linear     1.537e+13   5.879e+11    4.928e+11           0  33,423,360
  full_attention            10  full       4.596e+12   2.749e+12    1.375e+12      20,480           0
  full_attention (MTP)       1  full       5.283e+11   2.749e+11    1.375e+11       2,048           0

bfloat16: weights 70,214,363,872 bytes, KV cache 20,480 bytes/token, 117,309,440 bytes at 4,096 tokens (state 33,423,360 bytes/sequence)

linear attention: num_key_heads 16, key_head_dim 128, num_value_heads 32, value_head_dim 128, conv_kernel_dim 4
widths: hidden_size 2048, intermediate_size -, effective_head_dim 256, attention_width 4096, routed_expert_width 512, shared_expert_width 512

vision tower: 27 layers, 16 heads

  layers  repeat  kind     count  attention  ffn
  0-26            encoder     27  full       dense

widths: hidden_size 1152, intermediate_size 4304, out_hidden_size 2048, patch_size 16, spatial_merge_size 2, num_position_embeddings 2304
"""


def test_show_draws_a_dense_model_without_expert_widths():
    result = run(["show", "deepseek-v3", "--root", str(ROOT)])
    assert result.stdout == """\
deepseek-v3  deepseek_v3  specs/deepseek/deepseek-v3.yaml
61 layers + 1 MTP, 256 experts (top 8, 1 shared)

  layers  repeat  kind   count  attention  ffn
  0-2             dense      3  mla        dense
  3-60            moe       58  mla        moe
  61              moe        1  mla        moe    MTP

671,026,404,352 parameters, 37,552,282,624 active; MTP 1 layer, 11,610,067,968 parameters apart
  embedding 926,679,040, head 926,679,040, final norm 7,168

  kind       layers       attention              mlp   routed experts  shared experts       router    norms            total
  dense           3     561,321,984    1,189,085,184                0               0            0   43,008    1,750,450,176
  moe            58  10,852,225,024  656,569,532,416  653,908,770,816   2,554,331,136  106,430,464  831,488  667,422,588,928
  moe (MTP)       1     187,107,328   11,320,164,352   11,274,289,152      44,040,192    1,835,008   14,336   11,507,286,016

flops at 4,096 tokens (forward; a FMA is 2; training = 3 x forward): dense 3.839e+14 (93,717,397,504/token), causal 3.42e+14 (83,485,794,304/token)
  head 7.591e+12, MTP apart 7.011e+12

  kind       layers  attention    weights  attn dense  attn causal  kv B/token  state B
  dense           3  mla        1.434e+13   4.123e+12    2.062e+12       3,456        0
  moe            58  mla        2.781e+14   7.971e+13    3.987e+13      66,816        0
  moe (MTP)       1  mla        5.637e+12   1.374e+12    6.874e+11       1,152        0

bfloat16: weights 1,342,052,808,704 bytes, KV cache 70,272 bytes/token, 287,834,112 bytes at 4,096 tokens

mla: q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128
widths: hidden_size 7168, intermediate_size 18432, effective_head_dim 56, attention_width 7168, routed_expert_width 2048, shared_expert_width 2048
vision tower: none
"""
    result = run(["show", "llama-3.1-8b", "--root", str(ROOT)])
    assert result.stdout.splitlines()[-2:] == [
        "widths: hidden_size 4096, intermediate_size 14336, effective_head_dim 128, attention_width 4096",
        "vision tower: none"]


def test_list_is_a_table_of_the_catalogue():
    result = run(["list", "--root", str(ROOT)])
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == """\
name                                arch          layers  experts               mtp  tower                  total          active  flops/token@4k
all-roberta-large-v1-resaved        roberta           24  -                       -  -                355,412,057     355,412,057           1.11G
bart-large                          bart              24  -                       -  -                406,291,456     406,291,456           1.41G
command-r-v01                       cohere            40  -                       -  -             34,980,831,232  34,980,831,232          75.33G
dbrx-132b                           dbrx              40  16 top-4                -  -            131,596,523,520  36,469,708,800          75.73G
deepseek-r1                         deepseek_v3       61  256 top-8 +1 shared     1  -            671,026,404,352  37,552,282,624          93.72G
deepseek-v2-lite                    deepseek_v2       27  64 top-6 +2 shared      -  -             15,706,484,224   2,661,150,208           6.04G
deepseek-v3                         deepseek_v3       61  256 top-8 +1 shared     1  -            671,026,404,352  37,552,282,624          93.72G
ernie-4.5-0.3b-base                 ernie4_5          18  -                       -  -                360,748,032     360,748,032           1.33G
exaone-4.0-32b                      exaone4           64  -                       -  -             32,003,216,384  32,003,216,384          68.33G
falcon-mamba-7b                     falcon_mamba      64  -                       -  -              7,272,665,088   7,272,665,088          14.01G
gemma-3-1b                          gemma3            26  -                       -  -                999,885,952     999,885,952           2.44G
gemma-3-27b                         gemma3            62  -                       -  27 layers     27,432,406,640  27,432,406,640          58.18G
gpt-oss-20b                         gpt_oss           24  32 top-4                -  -             20,914,757,184   4,187,440,704           8.82G
gpt2                                gpt2              12  -                       -  -                124,439,808     124,439,808           0.40G
granite-3.3-8b-instruct             granite           40  -                       -  -              8,170,864,640   8,170,864,640          19.03G
kimi-k2-instruct                    deepseek_v3       61  384 top-8 +1 shared     0  -          1,026,408,209,408  32,861,477,888          73.61G
llama-2-7b                          llama             32  -                       -  -              6,738,415,616   6,738,415,616          15.36G
llama-3.1-70b                       llama             80  -                       -  -             70,553,706,496  70,553,706,496         149.74G
llama-3.1-8b                        llama             32  -                       -  -              8,030,261,248   8,030,261,248          17.16G
llama-3.2-11b-vision-instruct       mllama            40  -                       -  40 layers     10,670,220,835  10,670,220,835          21.56G
llama-3.2-1b-instruct               llama             16  -                       -  -              1,235,814,400   1,235,814,400           3.01G
llama-4-maverick-17b-128e-instruct  llama4            48  128 top-1 +1 shared     -  34 layers    401,583,781,376  18,056,623,616          36.33G
llama-4-scout-17b-16e-instruct      llama4            48  16 top-1 +1 shared      -  34 layers    108,641,793,536  18,044,827,136          36.30G
mamba-130m-hf                       mamba             24  -                       -  -                129,135,360     129,135,360           0.26G
minimax-m2                          minimax_m2        62  256 top-8               -  -            228,689,748,992  11,030,537,216          27.07G
mistral-7b-instruct-v0.3            mistral           32  -                       -  -              7,248,023,552   7,248,023,552          16.37G
mistral-small-3.1-24b-instruct      mistral3          40  -                       -  24 layers     23,340,272,640  23,340,272,640          48.49G
mixtral-8x7b                        mixtral           32  8 top-2                 -  -             46,702,792,704  12,879,925,248          27.64G
nemotron-3-nano-30b-a3b             nemotron_h        52  128 top-6 +1 shared     -  -             31,577,937,344   3,580,073,408           6.98G
olmo-2-1124-7b-instruct             olmo2             32  -                       -  -              7,298,617,344   7,298,617,344          15.92G
olmo-3.1-32b-instruct               olmo3             64  -                       -  -             32,233,522,176  32,233,522,176          68.81G
phi-1                               phi               24  -                       -  -              1,414,562,935   1,414,562,935           3.43G
phi-3-mini-4k-instruct              phi3              32  -                       -  -              3,821,079,552   3,821,079,552           9.06G
phi-4                               phi3              40  -                       -  -             14,659,507,200  14,659,507,200          31.65G
phi-mini-moe-instruct               phimoe            32  16 top-2                -  -              7,647,632,704   2,362,809,664           6.61G
qwen1.5-7b-chat                     qwen2             32  -                       -  -              7,721,324,544   7,721,324,544          16.34G
qwen2-vl-2b-instruct-awq            qwen2_vl          28  -                       -  32 layers      2,208,985,600   2,208,985,600           3.79G
qwen2.5-32b-instruct                qwen2             64  -                       -  -             32,763,876,352  32,763,876,352          69.34G
qwen2.5-7b-instruct                 qwen2             28  -                       -  -              7,615,616,512   7,615,616,512          15.78G
qwen2.5-vl-7b-instruct              qwen2_5_vl        28  -                       -  32 layers      8,292,166,656   8,292,166,656          15.78G
qwen3-0.6b                          qwen3             28  -                       -  -                596,049,920     596,049,920           2.13G
qwen3-30b-a3b                       qwen3_moe         48  128 top-8               -  -             30,532,122,624   3,353,032,704           9.30G
qwen3-32b                           qwen3             64  -                       -  -             32,762,123,264  32,762,123,264          72.56G
qwen3-8b                            qwen3             36  -                       -  -              8,190,735,360   8,190,735,360          17.55G
qwen3-next-80b-a3b                  qwen3_next        48  512 top-10 +1 shared    1  -             79,674,391,296   3,874,929,408           8.10G
qwen3-vl-2b-instruct                qwen3_vl          28  -                       -  24 layers      2,127,532,032   2,127,532,032           4.38G
qwen3-vl-30b-a3b-instruct           qwen3_vl_moe      48  128 top-8               -  27 layers     31,070,754,032   3,891,664,112           9.30G
qwen3.5-27b                         qwen3_5           64  -                       1  27 layers     27,356,728,560  27,356,728,560          53.20G
qwen3.5-35b-a3b                     qwen3_5_moe       40  256 top-8 +1 shared     1  27 layers     35,107,181,936   3,901,560,176           6.71G
smollm3-3b                          smollm3           36  -                       -  -              3,075,098,624   3,075,098,624           7.36G
starcoder2-7b                       starcoder2        32  -                       -  -              7,173,923,840   7,173,923,840          16.76G
starcoderbase-7b                    gpt_bigcode       42  -                       -  -              7,327,263,232   7,327,263,232          17.40G
t5-base                             t5                24  -                       -  -                222,903,552     222,903,552           0.90G
"""


def test_list_json_has_one_record_per_model():
    result = run(["list", "--format", "json", "--root", str(ROOT)])
    rows = json.loads(result.stdout)
    assert len(rows) == CATALOGUE_SPECS
    assert next(row for row in rows if row["name"] == "deepseek-r1") == {"name": "deepseek-r1", "file": "specs/deepseek/deepseek-r1.yaml", "arch": "deepseek_v3",
                       "layers": 61, "mtp": 1, "experts": {"routed": 256, "per_token": 8, "shared": 1},
                       "tower_layers": None, "total": 671_026_404_352, "active": 37_552_282_624,
                       "flops_per_token_4k": 93_717_397_504}


# ---- names and broken specs ----------------------------------------------------------------

def _repo(tmp_path: Path, specs: Dict[str, str]) -> Path:
    for name, text in specs.items():
        path = tmp_path / "specs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


GOOD = "name: {}\narch: llama\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n" \
       "intermediate_size: 128\n"


def test_show_an_unknown_name_is_a_usage_error_naming_close_ones(tmp_path):
    root = _repo(tmp_path, {"a/tiny.yaml": GOOD.format("tiny-1b")})
    result = run(["show", "tiny-2b", "--root", str(root)])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == ("Error: Invalid value for NAME: no spec in the catalogue is named "
                                              "'tiny-2b'; did you mean tiny-1b?")


def test_show_a_name_two_specs_state_exits_1(tmp_path):
    root = _repo(tmp_path, {"a/one.yaml": GOOD.format("twin"), "b/two.yaml": GOOD.format("twin")})
    result = run(["show", "twin", "--root", str(root)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == ("modelspec: the name 'twin' is stated by specs/a/one.yaml and specs/b/two.yaml; a name "
                             "picks one spec, so rename one of them\n")


def test_show_a_spec_that_fails_its_check_shows_its_problems(tmp_path):
    bad = GOOD.format("bad").replace("num_attention_heads: 4", "num_attention_heads: 3")
    root = _repo(tmp_path, {"a/bad.yaml": bad})
    result = run(["show", "bad", "--root", str(root)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.splitlines()[-1] == "modelspec: specs/a/bad.yaml fails its check; fix it to show its stack"


def test_list_leaves_out_a_spec_that_fails_and_exits_1(tmp_path):
    bad = GOOD.format("bad").replace("intermediate_size: 128\n", "")
    root = _repo(tmp_path, {"a/good.yaml": GOOD.format("good"), "a/bad.yaml": bad})
    result = run(["list", "--root", str(root)])
    assert result.exit_code == 1
    # good states no biases, so its parameters cannot be counted: no total, no active
    assert result.stdout == ("name  arch   layers  experts  mtp  tower  total  active  flops/token@4k\n"
                             "good  llama       2  -          -  -          -       -               -\n")
    assert result.stderr == ("specs/a/bad.yaml:1:1: error [stack.dense-without-intermediate] the stack has layers of "
                             "kind ['full_attention'] with a dense feed-forward, but intermediate_size is not "
                             "declared; declare the dense width\n")


def test_find_refuses_an_absent_name_listing_the_names_when_none_is_close():
    catalogue = [Entry(Path("a.yaml"), "a.yaml", "alpha"), Entry(Path("b.yaml"), "b.yaml", None)]
    with pytest.raises(CatalogueError) as caught:
        find(catalogue, "zzz")
    assert str(caught.value) == ("no spec in the catalogue is named 'zzz'; the names are alpha; b.yaml states no "
                                 "name that can be read (modelspec check says why)")
    assert find(catalogue, "alpha").file == "a.yaml"


def test_find_tells_names_apart_case_folded_as_check_does():
    catalogue = [Entry(Path("a.yaml"), "a.yaml", "gpt2"), Entry(Path("b.yaml"), "b.yaml", "GPT2"),
                 Entry(Path("c.yaml"), "c.yaml", "Llama")]
    for asked in ("gpt2", "GPT2", "Gpt2"):
        with pytest.raises(CatalogueError) as caught:
            find(catalogue, asked)
        assert caught.value.stated
        assert str(caught.value) == (f"the name {asked!r} is stated by a.yaml and b.yaml (as 'GPT2', 'gpt2': names "
                                     "are compared case-folded); a name picks one spec, so rename one of them")
    with pytest.raises(CatalogueError) as caught:
        find(catalogue, "llama")
    assert not caught.value.stated
    assert str(caught.value) == "no spec in the catalogue is named 'llama'; did you mean Llama?"
    assert find(catalogue, "Llama").file == "c.yaml"
    twice = [Entry(Path("a.yaml"), "a.yaml", "x"), Entry(Path("b.yaml"), "b.yaml", "x")]
    with pytest.raises(CatalogueError) as caught:
        find(twice, "x")
    assert str(caught.value) == "the name 'x' is stated by a.yaml and b.yaml; a name picks one spec, so rename one of them"


@pytest.mark.parametrize(("catalogue", "unnamed"), [
    ([], ""),
    ([Entry(Path("b.yaml"), "b.yaml", None)], "; b.yaml states no name that can be read (modelspec check says why)"),
    ([Entry(Path(f"{n}.yaml"), f"{n}.yaml", None) for n in "abcde"],
     "; a.yaml, b.yaml, c.yaml and 2 more state no name that can be read (modelspec check says why)"),
])
def test_find_in_a_catalogue_without_names_says_so(catalogue, unnamed):
    with pytest.raises(CatalogueError) as caught:
        find(catalogue, "zzz")
    assert str(caught.value) == f"no spec in the catalogue is named 'zzz'; no spec under specs/ states a name{unnamed}"


@pytest.mark.parametrize("args", [["list"], ["list", "--format", "json"], ["show", "deepseek-v3"]])
def test_list_and_show_outside_a_spec_repository_say_there_is_no_specs_folder(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    for root in ([], ["--root", str(tmp_path)]):
        result = run([*args, *root])
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr.splitlines()[-1] == f"Error: {tmp_path / 'specs'}: no such file or folder"


@pytest.mark.parametrize("args, code, stdout", [
    (["list"], 0, "name  arch  layers  experts  mtp  tower  total  active\n"),
    (["list", "--format", "json"], 0, "[]\n"),
])
def test_list_of_an_empty_specs_folder_is_an_empty_table(tmp_path, args, code, stdout):
    (tmp_path / "specs").mkdir()
    result = run([*args, "--root", str(tmp_path)])
    assert (result.exit_code, result.stdout, result.stderr) == (code, stdout, "")
