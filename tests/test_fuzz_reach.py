"""The property tests' reach: generated input gets to every pass, and the share that did is asserted.

A fuzzer whose every example stops at the load pass proves nothing about the stack or the round trip. Here each
example's outcomes (the runner's pass-by-pass record, :attr:`FileResult.outcomes`) are counted, and after the
run the share of examples that reached each pass is asserted, so a generator that drifts into input the first
pass refuses fails its test. Two generators: schema-valid specs (a catalogue spec with its sizes redrawn and its
stated count sometimes dropped), and raw bytes made by editing a catalogue spec's bytes (a character replaced,
inserted or deleted), beside wholly random dictionaries and bytes in ``tests/test_check.py``.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any, Callable, Counter, Dict, List, Tuple

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.check.runner import check_document
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.spec.problems import PASSES, FileResult, Outcome
from pipeline.spec.yaml_source import load_bytes
from budget import examples

ROOT = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted((ROOT / "specs").rglob("*.yaml"))
SPECS: List[Dict[str, Any]] = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in SPEC_FILES]
SPEC_BYTES: List[bytes] = [path.read_bytes() for path in SPEC_FILES]
PROFILES = load_op_profiles()

#: The sizes a generated spec redraws (each independently, or keeps).
#: What an edit of a spec's bytes writes.
PRINTABLE = [*range(0x20, 0x7F), 0x0A]

#: The sizes a generated spec redraws (each independently, or keeps); its depth is multiplied.
SIZES = ("vocab_size", "intermediate_size", "max_position_embeddings")


@st.composite
def valid_specs(draw: Callable[..., Any]) -> Dict[str, Any]:
    """A catalogue spec with some of its sizes redrawn, its depth multiplied and its stated parameters sometimes
    dropped."""
    spec = dict(draw(st.sampled_from(SPECS)))
    for key in SIZES:
        if key in spec and draw(st.booleans()):
            spec[key] = draw(st.integers(1, 1 << 17) | st.integers(1 << 45, 1 << 52))  # or a layer past 2^63
    if "layers" not in spec:  # a deeper model: every layer type, dense layer and encoder half kept
        times = draw(st.integers(1, 3))
        spec["num_hidden_layers"] *= times
        if "layer_types" in spec:
            spec["layer_types"] = list(spec["layer_types"]) * times
    if draw(st.booleans()):
        spec.pop("parameters", None)
    return spec


@st.composite
def edited_spec_bytes(draw: Callable[..., Any]) -> bytes:
    """A catalogue spec's bytes with one to three edits: a byte replaced, inserted or deleted (a printable ASCII
    byte or a line break: a control byte is refused at the load pass, and every such case is in test_check.py)."""
    data = bytearray(draw(st.sampled_from(SPEC_BYTES)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data) - 1))
        edit = draw(st.sampled_from(["replace", "insert", "delete"]))
        if edit == "delete":
            del data[at]
        else:
            data[at:at + (edit == "replace")] = bytes([draw(st.sampled_from(PRINTABLE))])
    return bytes(data)


def reached(result: FileResult) -> Tuple[str, ...]:
    """The passes that ran on *result*'s file (passed or failed, not skipped)."""
    return tuple(name for name, outcome in result.outcomes if outcome is not Outcome.SKIPPED)


def shares(counted: Counter[str], runs: int) -> Dict[str, float]:
    """Each pass's share of *runs* that reached it, *counted* being how many did."""
    return {name: counted[name] / runs for name in PASSES}


def test_schema_valid_specs_reach_the_stack_and_round_trip_passes() -> None:
    counted: Counter[str] = collections.Counter()
    passed: Counter[str] = collections.Counter()
    runs: List[int] = []

    @settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(valid_specs())
    def run(spec: Dict[str, Any]) -> None:
        result = check_document(load_bytes(json.dumps(spec).encode(), "x.yaml"), PROFILES).result
        assert all(problem.code != "check.internal" for problem in result.problems)
        runs.append(1)
        counted.update(reached(result))
        passed.update(name for name, outcome in result.outcomes if outcome is Outcome.PASSED)

    run()
    share = shares(counted, len(runs))
    assert len(runs) >= 100
    assert share["load"] == share["schema"] == share["semantic"] == 1.0  # valid: nothing stops before the stack
    assert share["stack"] == 1.0 and share["roundtrip"] == 1.0
    assert passed["roundtrip"] / len(runs) >= 0.5  # the round trip holds for what the stack priced or not
    assert 0.2 <= passed["stack"] / len(runs) < 1.0  # some counts agree, some were redrawn away from the stated


def test_edited_spec_bytes_reach_every_pass() -> None:
    counted: Counter[str] = collections.Counter()
    runs: List[int] = []

    @settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(edited_spec_bytes())
    def run(raw: bytes) -> None:
        result = check_document(load_bytes(raw, "x.yaml"), PROFILES).result
        assert all(problem.code != "check.internal" for problem in result.problems)
        runs.append(1)
        counted.update(reached(result))

    run()
    share = shares(counted, len(runs))
    assert len(runs) >= 100 and share["load"] == 1.0
    assert share["stack"] >= 0.5 and share["roundtrip"] >= 0.5
