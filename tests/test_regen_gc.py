"""Loading a spec leaves nothing for the cyclic collector (issue 28: a cold regen's cost).

regen pauses Python's cyclic garbage collector for its run, so every cycle a spec's check leaves is walked by the
first collection after it: the YAML builder's handlers, its own bound methods, kept each builder and every location
it recorded (0.23 s of a regen of 2,000 specs). :func:`~pipeline.spec.yaml_source.load_bytes` breaks that cycle.
"""

from __future__ import annotations

import gc
from pathlib import Path

from pipeline.spec import yaml_source
from pipeline.spec.yaml_source import load_bytes

ROOT = Path(__file__).resolve().parents[1]


def test_a_loaded_spec_leaves_no_builder_for_the_cyclic_collector() -> None:
    raw = (ROOT / "specs" / "gpt2" / "gpt2.yaml").read_bytes()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        doc = load_bytes(raw, "specs/gpt2/gpt2.yaml")
        assert doc.data and doc.data["name"] == "gpt2"
        del doc
        gc.collect()
        left = [item for item in gc.garbage if isinstance(item, yaml_source._Builder)]  # pylint: disable=protected-access
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not left
