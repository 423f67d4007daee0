"""Every fast path of the parameter count held to its slow path, on every catalogue spec and on generated ones.

- ``count_totals`` (what ``check`` compares a stated figure with: one evaluation of each kind's compiled sums) is
  ``count_parameters``'s ``(total, active)`` (the full breakdown, tensor by tensor), and both refuse the same
  spec with the same reason.
- An inventory's compiled expression (:func:`~pipeline.pricing.weights.sizes`' one ``eval``) lists the same
  tensors as its interpreted path (the loop over weights a compiled-less inventory takes) and as
  :func:`~pipeline.pricing.weights.resolve` (the records the artifact lists), and
  :func:`~pipeline.pricing.weights.layer_sums` is their sum by ``per``.

Generated specs are catalogue specs with their sizes redrawn (``tests/test_fuzz_reach.py``'s generator) and the
stated figures dropped, so every one reaches the stack and is counted.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings

from pipeline.check.runner import CheckedSpec, check_document, check_file
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.pricing.parameters import Unpriced, count_parameters, count_totals, model_symbols, tower_symbols
from pipeline.pricing.weights import PER, Inventory, layer_sums, resolve, sizes
from pipeline.spec.yaml_source import load_bytes
from budget import examples
from test_fuzz_reach import valid_specs

ROOT = Path(__file__).resolve().parent.parent
PROFILES = load_op_profiles(ROOT / "op_profiles")
SPECS = sorted((ROOT / "specs").glob("*/*.yaml"))


def checked_file(path: Path) -> CheckedSpec:
    """The checked catalogue spec at *path*, stack resolved."""
    item = check_file(path, str(path.relative_to(ROOT)), PROFILES)
    assert item.spec is not None and item.stack is not None, item.result.problems
    return item


def checked_data(data: Dict[str, Any]) -> CheckedSpec:
    """The check of the spec *data* (its stated parameters dropped: nothing is compared, everything counted)."""
    data = {key: value for key, value in data.items() if key != "parameters"}
    return check_document(load_bytes(json.dumps(data).encode(), "x.yaml"), PROFILES)


def outcome(call: Any) -> Tuple[str, Any]:
    """``("counted", value)`` of *call*, or ``("unpriced", (field, reason))`` when it raises Unpriced."""
    try:
        return "counted", call()
    except Unpriced as missing:
        return "unpriced", (missing.field, missing.reason)


def totals_agree(item: CheckedSpec) -> Tuple[str, Any]:
    """Assert count_totals is count_parameters's (total, active) for *item*; what they found."""
    profile = PROFILES.get(item.stack.arch)
    full = outcome(lambda: count_parameters(item.spec, profile, item.stack, item.tower))
    fast = outcome(lambda: count_totals(item.spec, profile, item.stack, item.tower))
    if full[0] == "counted":
        assert fast == ("counted", (full[1].total, full[1].active))
    else:
        assert fast == full
    return fast


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.stem)
def test_count_totals_is_count_parameters_on_every_catalogue_spec(path: Path) -> None:
    item = checked_file(path)
    found = totals_agree(item)
    assert found[0] == "counted" and found[1][0] >= found[1][1] > 0
    assert item.parameters == found[1]  # what check compared is the fast path's


def test_count_totals_is_count_parameters_on_generated_specs() -> None:
    found: List[str] = []

    @settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(valid_specs())
    def run(data: Dict[str, Any]) -> None:
        item = checked_data(data)
        assert item.stack is not None, item.result.problems
        found.append(totals_agree(item)[0])

    run()
    # most are counted; some (a width of 2^45 and more) are refused, above 2^63 - 1, by both paths alike
    assert len(found) >= 100 and found.count("counted") >= 0.5 * len(found) and found.count("unpriced") >= 1


def inventories(item: CheckedSpec) -> Iterator[Tuple[str, Inventory, Dict[str, Any]]]:
    """``(where, inventory, symbols)`` of every inventory counting *item*: its kinds', its profile's model, MTP
    and tower inventories, each with the symbols it is evaluated with."""
    profile = PROFILES.get(item.stack.arch)
    symbols = model_symbols(item.spec)
    for kind in item.stack.distinct_kinds():
        yield f"kind {kind.name}", kind.weights, symbols
    yield "model", profile.model_weights, symbols
    yield "mtp", profile.mtp_weights, symbols
    if item.tower is not None and item.spec.vision is not None:
        tower = tower_symbols(item.spec.vision, item.spec.hidden_size)
        yield "tower", profile.vision_weights, tower
        for kind in item.tower.distinct_kinds():
            yield f"tower kind {kind.name}", profile.vision_kinds[kind.name], tower


def interpreted(inventory: Inventory) -> Inventory:
    """*inventory* without its compiled expressions: :func:`sizes` takes the tensor-by-tensor path."""
    return dataclasses.replace(inventory, code=None, sums=None)


def resolved_sizes(inventory: Inventory, symbols: Dict[str, Any]) -> List[Tuple[str, str, int, bool]]:
    """What :func:`resolve` lists, as :func:`sizes` does."""
    return [(tensor.part, tensor.per, math.prod(tensor.shape), tensor.op == "matmul")
            for tensor in resolve(inventory, symbols)]


def _summed(listed: List[Tuple[str, str, int, bool]]) -> Dict[Tuple[str, str, bool], int]:
    """The parameters of *listed* summed by (part, per, matmul)."""
    out: Dict[Tuple[str, str, bool], int] = {}
    for part, per, params, matmul in listed:
        out[(part, per, matmul)] = out.get((part, per, matmul), 0) + params
    return out


def by_per(listed: List[Tuple[str, str, int, bool]]) -> Tuple[int, int, int]:
    """The sums of *listed* by ``per``, in :func:`layer_sums`' order."""
    assert PER == ("layer", "expert", "first_layer")
    return tuple(sum(params for _, per, params, _ in listed if per == name) for name in PER)


def paths_agree(item: CheckedSpec) -> int:
    """Assert the compiled, interpreted and resolved paths agree on every inventory of *item*; how many tensors
    were compared."""
    compared = 0
    for where, inventory, symbols in inventories(item):
        compiled = outcome(lambda: sizes(inventory, symbols))
        slow = outcome(lambda: [entry for entry in sizes(interpreted(inventory), symbols) if entry[2]])
        assert compiled == slow, where
        if compiled[0] == "counted":
            listed = [entry for entry in resolved_sizes(inventory, symbols) if entry[2]]
            if any(weight.copies for weight in inventory):  # resolve lists each copy, sizes all copies as one
                assert _summed(compiled[1]) == _summed(listed), where
            else:
                assert compiled[1] == listed, where
            assert (layer_sums(inventory, symbols) or by_per(compiled[1])) == by_per(compiled[1]), where
            # the compiled sums give up on an empty inventory and on a sum past 2^63 - 1 (the caller then counts
            # tensor by tensor, which refuses the total)
            past = any(total > 2 ** 63 - 1 for total in by_per(compiled[1]))
            assert (layer_sums(inventory, symbols) is None) == (not inventory.weights or past), where
            compared += len(compiled[1])
    return compared


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.stem)
def test_compiled_weights_are_the_interpreted_ones_on_every_catalogue_spec(path: Path) -> None:
    assert paths_agree(checked_file(path)) > 0


def test_compiled_weights_are_the_interpreted_ones_on_generated_specs() -> None:
    compared: List[int] = []

    @settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(valid_specs())
    def run(data: Dict[str, Any]) -> None:
        item = checked_data(data)
        assert item.stack is not None, item.result.problems
        compared.append(paths_agree(item))

    run()
    assert len(compared) >= 100 and sum(count > 0 for count in compared) >= 0.5 * len(compared)


def test_the_interpreted_path_names_the_field_a_shape_reads_and_the_spec_leaves_out() -> None:
    item = checked_file(ROOT / "specs" / "llama" / "llama-3.1-8b.yaml")
    symbols = {**model_symbols(item.spec), "intermediate_size": None}
    kind = next(iter(item.stack.distinct_kinds()))
    assert outcome(lambda: sizes(kind.weights, symbols)) == outcome(lambda: sizes(interpreted(kind.weights), symbols))
    assert outcome(lambda: sizes(kind.weights, symbols))[0] == "unpriced"
    assert outcome(lambda: sizes(kind.weights, symbols))[1] == (
        "intermediate_size", "its inventory needs intermediate_size, which the spec does not state")
    assert layer_sums(kind.weights, symbols) is None


def mtp_layers(item: CheckedSpec) -> int:
    """How many MTP layers *item*'s stack holds."""
    return sum(group.count for group in item.stack.groups if group.mtp)


@pytest.mark.parametrize("path", SPECS, ids=lambda path: path.stem)
def test_mtp_is_counted_only_for_mtp_layers_and_is_the_stated_figure(path: Path) -> None:
    item = checked_file(path)
    counts = count_parameters(item.spec, PROFILES.get(item.stack.arch), item.stack, item.tower)
    stated: Optional[int] = item.spec.parameters.mtp if item.spec.parameters is not None else None
    if mtp_layers(item):
        assert stated is not None and counts.mtp == stated > 0
        per_layer = sum(group.total for group in counts.groups if group.mtp) // mtp_layers(item)
        assert counts.mtp >= per_layer * mtp_layers(item) > 0
    else:
        assert (counts.mtp, stated) == (0, None)
