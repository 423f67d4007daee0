"""Every priced part of a catalogue spec is pinned by its stated figure: dropping one fails ``check``.

The red team's first finding: deleting ``mtp_depth: 1`` from DeepSeek-V3 passed ``check --strict``, because the
stated ``parameters`` covered the body only. Now ``parameters`` states ``total``, ``active`` (MoE), ``mtp`` (MTP
layers) and ``vision`` (a tower), and ``check`` refuses a mismatch in any of them. Each test below takes every
catalogue spec that has the part, deletes it as a hand edit would, and runs the gate: exit 1, the code, the
``file:line:col`` of the figure (or rule) that refuses it. And a spec the gate cannot count is never quietly
passed: stated, its figure is an error (``params.unpriced``); unstated, a warning no ignore silences.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable, List, Tuple

import pytest
from click.testing import CliRunner, Result

from pipeline.cli import main
from pipeline.spec.yaml_source import load_path

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*/*.yaml"))


def run_cli(*args: str) -> Result:
    """``modelspec args`` in-process, without the result cache."""
    return CliRunner().invoke(main, [*args, "--no-cache"], catch_exceptions=False)


def having(pattern: str) -> List[Path]:
    """The catalogue specs with a line matching *pattern*."""
    return [path for path in SPECS if re.search(pattern, path.read_text(encoding="utf-8"), re.M)]


def line_of(text: str, prefix: str, after: str = "") -> int:
    """The 1-based number of the first line of *text* starting with *prefix* (below the line *after*, when given)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after)) if after else 0
    return next(i for i, line in enumerate(lines) if i >= start and line.startswith(prefix)) + 1


def errors(tmp_path: Path, spec: Path, edit: Callable[[str], str]) -> Tuple[int, List[str]]:
    """Check the catalogue spec *spec* after *edit*, alone in a repository: the exit code and each error's
    ``line:col [code]``."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / spec.name).write_text(edit(spec.read_text(encoding="utf-8")), encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path))
    found = re.findall(rf"^specs/{re.escape(spec.name)}:(\d+:\d+): error \[([^\]]+)\]", result.output, re.M)
    return result.exit_code, [f"{where} [{code}]" for where, code in found]


def without_lines(*keys: str) -> Callable[[str], str]:
    """An edit deleting the top-level lines of *keys*."""
    return lambda text: "".join(line for line in text.splitlines(keepends=True) if not line.startswith(keys))


def without_block(key: str) -> Callable[[str], str]:
    """An edit deleting the top-level block *key* (its line and every indented line under it)."""
    def edit(text: str) -> str:
        lines = text.splitlines(keepends=True)
        start = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
        end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith(" ")), len(lines))
        return "".join(lines[:start] + lines[end:])
    return edit


def one_layer_fewer(layers: int) -> Callable[[str], str]:
    """An edit taking *layers* body layers away: ``num_hidden_layers`` lower, and the last ``layer_types`` entries
    gone, or the last ``layers`` group that many shorter, when it states them (so the stack stays consistent and
    only the count can tell)."""
    def edit(text: str) -> str:
        text = re.sub(r"^num_hidden_layers: (\d+)", lambda m: f"num_hidden_layers: {int(m.group(1)) - layers}",
                      text, flags=re.M)
        counts = list(re.finditer(r"^    count: (\d+)$", text.split("\nlayers:\n", 1)[1], flags=re.M)) \
            if "\nlayers:\n" in text else []
        longer = [count for count in counts if int(count.group(1)) > layers]
        if counts and not longer:  # groups of one layer each (Llama 4 Maverick's): the last ones go
            head, groups = text.split("\nlayers:\n", 1)
            items = re.split(r"(?m)^(?=  - )", groups)
            text = head + "\nlayers:\n" + "".join(items[:-layers])
            counts = []
        counts = longer if longer else counts
        if counts:  # the groups a spec states (DeepSeek-V2-Lite's renamed kinds): the last longer one shorter
            head, groups = text.split("\nlayers:\n", 1)
            last = counts[-1]
            groups = groups[:last.start(1)] + str(int(last.group(1)) - layers) + groups[last.end(1):]
            text = head + "\nlayers:\n" + groups
        lines = text.splitlines(keepends=True)
        if any(line.startswith("layer_types:") for line in lines):
            start = next(i for i, line in enumerate(lines) if line.startswith("layer_types:"))
            end = next((i for i in range(start + 1, len(lines)) if not lines[i].startswith("  - ")), len(lines))
            del lines[end - layers:end]
        return "".join(lines)
    return edit


@pytest.mark.parametrize("spec", having(r"^mtp_depth: [1-9]"), ids=lambda path: path.stem)
def test_a_dropped_mtp_layer_fails_check_at_the_stated_mtp_figure(tmp_path: Path, spec: Path) -> None:
    text = spec.read_text(encoding="utf-8")
    where = f"{line_of(text, '  mtp:', 'parameters:') - 1}:8"  # one line up: mtp_depth's line is gone
    assert errors(tmp_path, spec, without_lines("mtp_depth:")) == (1, [f"{where} [params.mtp-mismatch]"])


def test_the_dropped_mtp_layer_of_deepseek_v3_is_told_with_both_numbers(tmp_path: Path) -> None:
    spec = ROOT / "specs/deepseek/deepseek-v3.yaml"
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / spec.name).write_text(without_lines("mtp_depth:")(spec.read_text(encoding="utf-8")),
                                                encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path), "--strict")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == (
        "specs/deepseek-v3.yaml:38:8: error [params.mtp-mismatch] parameters.mtp states 11,610,067,968 but the "
        "spec's fields count 0 (-11,610,067,968); counted: no MTP layer. Correct the field that is not the model's, "
        "or the stated figure")


@pytest.mark.parametrize("spec", having(r"^vision:"), ids=lambda path: path.stem)
def test_a_dropped_tower_fails_check_at_the_stated_vision_figure(tmp_path: Path, spec: Path) -> None:
    text = spec.read_text(encoding="utf-8")
    total, vision = line_of(text, "  total:", "parameters:"), line_of(text, "  vision:", "parameters:")
    code, found = errors(tmp_path, spec, without_block("vision"))
    assert (code, found[0], found[-1]) == (1, f"{total}:10 [params.total-mismatch]",
                                           f"{vision}:11 [params.vision-mismatch]")


#: What refuses a catalogue spec whose shared expert is deleted (its count, width and gate lines): the profile's
#: ``assumes: num_shared_experts: 1`` (at the spec's ``arch``), or the width left without a count.
SHARED_REFUSAL = {"deepseek-r1": "stack.profile-assumes", "deepseek-v3": "stack.profile-assumes",
                  "deepseek-v2-lite": "stack.profile-assumes",
                  "kimi-k2-instruct": "stack.profile-assumes", "nemotron-3-nano-30b-a3b": "stack.profile-assumes",
                  "qwen3-next-80b-a3b": "stack.profile-assumes", "qwen3.5-35b-a3b": "stack.profile-assumes",
                  "llama-4-scout-17b-16e-instruct": "stack.profile-assumes",
                  "llama-4-maverick-17b-128e-instruct": "stack.profile-assumes"}


@pytest.mark.parametrize("spec", having(r"^num_shared_experts: [1-9]"), ids=lambda path: path.stem)
def test_a_dropped_shared_expert_fails_check(tmp_path: Path, spec: Path) -> None:
    text = spec.read_text(encoding="utf-8")
    edit = without_lines("num_shared_experts:", "shared_expert_intermediate_size:", "shared_expert_gate:")
    arch = [number for number, line in enumerate(edit(text).splitlines(), 1) if line.startswith("arch:")][0]
    assert errors(tmp_path, spec, edit) == (1, [f"{arch}:7 [{SHARED_REFUSAL[spec.stem]}]"])


#: What refuses a catalogue spec whose shared expert count is set to 0: the width left without a count, or (the
#: DeepSeek family, whose MoE kind prices any stated count as transformers builds it: one DeepseekV3MLP of
#: moe_intermediate_size * n_shared_experts, 0 wide for 0) its stated total, which counted the shared expert.
ZERO_SHARED_REFUSAL = {"deepseek-r1": "parameters", "deepseek-v3": "parameters", "kimi-k2-instruct": "parameters",
                       "deepseek-v2-lite": "parameters",
                       "nemotron-3-nano-30b-a3b": "shared", "qwen3-next-80b-a3b": "shared",
                       "qwen3.5-35b-a3b": "shared", "llama-4-scout-17b-16e-instruct": "shared",
                       "llama-4-maverick-17b-128e-instruct": "shared"}


@pytest.mark.parametrize("spec", having(r"^num_shared_experts: [1-9]"), ids=lambda path: path.stem)
def test_a_shared_expert_count_of_zero_fails_check(tmp_path: Path, spec: Path) -> None:
    text = re.sub(r"^num_shared_experts: \d+", "num_shared_experts: 0", spec.read_text(encoding="utf-8"),
                  flags=re.M)
    if ZERO_SHARED_REFUSAL[spec.stem] == "parameters":
        total = line_of(text, '  total:', 'parameters:')
        expected = [f"{total}:10 [params.total-mismatch]", f"{total + 1}:11 [params.active-mismatch]"]
        expected += [f"{total + 2}:8 [params.mtp-mismatch]"] * ("\n  mtp:" in text)  # Kimi-K2 has no MTP
    else:
        expected = [f"{line_of(text, 'shared_expert_intermediate_size:')}:34 [spec.shared-without-count]"]
    assert errors(tmp_path, spec, lambda _: text) == (1, expected)


@pytest.mark.parametrize("spec", SPECS, ids=lambda path: path.stem)
def test_a_dropped_layer_fails_check_at_the_stated_total(tmp_path: Path, spec: Path) -> None:
    text = spec.read_text(encoding="utf-8")
    # T5 and BART are encoder-decoders of two equal halves: a layer dropped from each keeps the stack valid.
    code, found = errors(tmp_path, spec, one_layer_fewer(2 if spec.stem in ("bart-large", "t5-base") else 1))
    assert (code, found[0]) == (1, f"{line_of(text, '  total:', 'parameters:')}:10 [params.total-mismatch]")


@pytest.mark.parametrize("part, spec", [("mtp", "specs/deepseek/deepseek-v3.yaml"),
                                        ("vision", "specs/gemma/gemma-3-27b.yaml"),
                                        ("active", "specs/mistral/mixtral-8x7b.yaml")])
def test_a_stated_count_leaving_out_a_part_the_model_has_is_refused(tmp_path: Path, part: str, spec: str) -> None:
    path = ROOT / spec
    text = path.read_text(encoding="utf-8")
    parameters = line_of(text, "parameters:")
    code, found = errors(tmp_path, path, without_lines(f"  {part}:"))
    assert (code, found) == (1, [f"{parameters + 1}:3 [params.part-unstated]"])  # at its first figure


def test_the_unstated_part_is_named_with_the_figure_to_write(tmp_path: Path) -> None:
    path = ROOT / "specs/deepseek/deepseek-v3.yaml"
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / path.name).write_text(without_lines("  mtp:")(path.read_text(encoding="utf-8")),
                                                encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path))
    assert result.output.splitlines()[0] == (
        "specs/deepseek-v3.yaml:37:3: error [params.part-unstated] parameters states no mtp, but the spec's fields "
        "count 11,610,067,968 (moe MTP layers 1 × 11.51B, MTP extras 0.10B); state mtp: 11610067968 (modelspec "
        "import writes it), so a change to it fails check")


def test_a_stated_part_the_model_does_not_have_is_refused(tmp_path: Path) -> None:
    path = ROOT / "specs/llama/llama-3.1-8b.yaml"
    (tmp_path / "specs").mkdir()
    text = path.read_text(encoding="utf-8").replace("  total: 8030261248\n", "  total: 8030261248\n  vision: 5\n")
    (tmp_path / "specs" / path.name).write_text(text, encoding="utf-8")
    result = run_cli("check", "--root", str(tmp_path))
    assert (result.exit_code, result.output.splitlines()[0]) == (1, (
        "specs/llama-3.1-8b.yaml:26:11: error [params.vision-mismatch] parameters.vision states 5 but the spec's "
        "fields count 0 (-5); counted: no vision tower. Correct the field that is not the model's, or the stated "
        "figure"))


# ---- a spec the gate cannot count --------------------------------------------------------------

UNPRICED = ("name: llama-x\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n"
            "intermediate_size: 128\narch: llama\n")  # no qkv_bias: the llama inventory cannot say its biases
NO_ARCH = "name: foo-x\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n"
UNCOUNTED = ("specs/m.yaml:1:1: warning [params.uncounted] the spec cannot be counted and states no parameters: "
             "kind 'full_attention': whether it holds some tensors depends on qkv_bias, which the spec does not state")
NO_ARCH_STATED = ("specs/n.yaml:7:3: error [params.unpriced] parameters is stated but cannot be checked: it states "
                  "no arch and no op profile's match pattern picks one from its name; state arch (an op profile's "
                  "stem)")


def repository(tmp_path: Path, config: str = "", **specs: str) -> Path:
    """A spec repository holding *specs* (``{stem: text}``) and, when given, a ``modelspec.toml``."""
    (tmp_path / "specs").mkdir()
    for stem, text in specs.items():
        (tmp_path / "specs" / f"{stem}.yaml").write_text(text, encoding="utf-8")
    if config:
        (tmp_path / "modelspec.toml").write_text(config, encoding="utf-8")
    return tmp_path


def test_an_unpriced_spec_without_a_figure_is_a_warning_that_fails_strict(tmp_path: Path) -> None:
    root = repository(tmp_path, m=UNPRICED)
    relaxed = run_cli("check", "--root", str(root))
    assert (relaxed.exit_code, relaxed.output.splitlines()[0]) == (0, UNCOUNTED)
    strict = run_cli("check", "--root", str(root), "--strict")
    assert (strict.exit_code, strict.output.splitlines()[0]) == (1, UNCOUNTED)


@pytest.mark.parametrize("config, option", [('ignore = ["params.uncounted"]\n', ()),
                                            ('ignore = ["params"]\nstrict = true\n', ()),
                                            ('[tool.modelspec]\n', ("--select", "roundtrip")),
                                            ('[per-file-ignores]\n"specs/*" = ["params.uncounted"]\n', ())])
def test_no_configuration_silences_an_uncounted_spec(tmp_path: Path, config: str, option: Tuple[str, ...]) -> None:
    root = repository(tmp_path, config.replace("[tool.modelspec]\n", ""), m=UNPRICED)
    result = run_cli("check", "--root", str(root), "--strict", *option)
    assert (result.exit_code, result.output.splitlines()[0]) == (1, UNCOUNTED)


def test_an_inline_ignore_does_not_silence_an_uncounted_spec(tmp_path: Path) -> None:
    root = repository(tmp_path, m="name: llama-x  # modelspec: ignore[params.uncounted]\n" + UNPRICED[14:])
    result = run_cli("check", "--root", str(root), "--strict")
    assert result.exit_code == 1
    assert result.output.splitlines()[:2] == [
        UNCOUNTED,
        "specs/m.yaml:1:16: warning [ignore.unused] ignore[params.uncounted] silences nothing on this line; nor a "
        "spec nothing resolves or counts (params.uncounted here): fix the spec; remove it"]


def test_a_stated_figure_of_a_spec_without_arch_is_an_error_no_ignore_hides(tmp_path: Path) -> None:
    root = repository(tmp_path, 'ignore = ["stack.no-arch"]\n', n=NO_ARCH + "parameters:\n  total: 5\n")
    result = run_cli("check", "--root", str(root))
    lines = result.output.splitlines()
    assert (result.exit_code, lines[0][:66], lines[1:]) == (
        1, "specs/n.yaml:1:7: warning [stack.no-arch] no arch is stated and no",
        [NO_ARCH_STATED, "1 error, 1 warning in 1 file (0 files clean)"])


def test_a_spec_without_arch_or_figure_is_a_warning_no_ignore_hides(tmp_path: Path) -> None:
    root = repository(tmp_path, 'ignore = ["stack.no-arch"]\n', n=NO_ARCH)
    result = run_cli("check", "--root", str(root), "--strict")
    assert (result.exit_code, result.output.splitlines()[0][:66]) == (
        1, "specs/n.yaml:1:7: warning [stack.no-arch] no arch is stated and no")


def test_every_catalogue_spec_states_every_part_the_reference_counts() -> None:
    """The stated figures are the reference's: transformers' total, active and tower with its projector
    (``tests/data/oracle``); ``mtp`` (which transformers does not build) is in ``test_parameters.py``. A spec with
    no oracle file (test_parameters.WITHOUT_ORACLE) is judged by transformers itself in test_reference.py."""
    for path in [path for path in SPECS if (ROOT / "tests/data/oracle" / f"{path.stem}.json").exists()]:
        stated = load_path(path, str(path)).data["parameters"]
        reference = json.loads((ROOT / "tests/data/oracle" / f"{path.stem}.json").read_text(encoding="utf-8"))
        assert (stated["total"], stated.get("active", stated["total"]), stated.get("vision", 0)) == \
            (reference["total"], reference["active"], reference["vision"] + reference["projector"]), path.stem
