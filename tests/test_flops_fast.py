"""The FLOPs' per-kind fast path held to the slow one on every catalogue spec (issue 28: a cold regen's cost).

:func:`~pipeline.pricing.flops.flops_document` computes what does not depend on the sequence's length (each
distinct kind's layer at each length; the MTP extras' and the head's weights) once, for every group and every
length; :func:`~pipeline.pricing.flops.model_flops` without it computes them per group and per length. The two
must give the same figures, ``ModelFlops.to_dict`` (each convention's forward summed once) what each figure's own
method gives, and the artifact's ``flops`` block the slow path's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest

from pipeline.check.runner import check_file
from pipeline.pricing.flops import CONVENTIONS, ModelFlops, _KindFigures, artifact_seq_lens, flops_document, \
    model_flops
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.pricing.parameters import count_parameters
from pipeline.pricing.weights import Unpriced

ROOT = Path(__file__).resolve().parents[1]
PROFILES = load_op_profiles(ROOT / "op_profiles")
SPECS = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "specs").rglob("*.yaml"))


def _by_methods(figures: ModelFlops) -> Dict[str, Any]:
    """:meth:`ModelFlops.to_dict` as each figure's own method gives it (what to_dict's shared sums are held to)."""
    return {"seq_len": figures.seq_len,
            **{f"forward_{c}": figures.forward(c) for c in CONVENTIONS},
            **{f"per_token_{c}": figures.per_token(c) for c in CONVENTIONS},
            **{f"training_{c}": figures.training(c) for c in CONVENTIONS},
            **{f"attention_{c}": figures.attention(c) for c in CONVENTIONS},
            "head": figures.head, "mtp_dense": figures.mtp("dense"), "mtp_causal": figures.mtp("causal"),
            "kv_cache_bytes": figures.kv_bytes(), "groups": [g.to_dict() for g in figures.groups]}


def test_the_catalogue_has_specs_to_compare() -> None:
    assert len(SPECS) > 40


@pytest.mark.parametrize("relative", SPECS)
def test_the_per_kind_figures_are_the_per_group_ones_at_every_length(relative: str) -> None:
    checked = check_file(ROOT / relative, relative, PROFILES)
    if checked.stack is None:
        pytest.skip("no resolved stack")
    spec, stack = checked.spec, checked.stack
    profile = PROFILES.get(stack.arch)
    try:
        total = count_parameters(spec, profile, stack, checked.tower).total
    except Unpriced:
        pytest.skip("cannot be counted")
    kinds = _KindFigures(spec, profile, stack.arch)
    for seq_len in (*artifact_seq_lens(spec), 1, 7, 4097):
        fast = model_flops(spec, profile, stack, seq_len, total, kinds)
        slow = model_flops(spec, profile, stack, seq_len, total)
        assert fast == slow and fast.to_dict() == slow.to_dict() == _by_methods(slow)
    document = flops_document(spec, profile, stack, checked.tower, total)
    assert document["at"] == [model_flops(spec, profile, stack, n, total).to_dict() for n in artifact_seq_lens(spec)]
