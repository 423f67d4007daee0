"""The importer's list of what transformers 5.24.0 implements: shipped data, held to the installed transformers.

``pipeline/importer/transformers_types.txt`` (written by ``bench/transformers_types.py``) lets the importer tell
a model type transformers implements natively from one only a hub repository's own code does, and a config's
``architectures`` class of another model type, without importing transformers. The ``reference``-marked test
regenerates the file from ``CONFIG_MAPPING`` and the Auto mappings and asserts it is the shipped one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.importer.transformers_types import parse, transformers_types

FILE = Path(__file__).resolve().parents[1] / "pipeline" / "importer" / "transformers_types.txt"


def test_the_shipped_file_is_transformers_5_24_s_model_types_and_their_classes() -> None:
    known = transformers_types()
    assert (known.version, len(known.classes)) == ("5.24.0", 822)
    assert known.classes["llama"] == ("LlamaForCausalLM", "LlamaModel")
    assert known.classes["aimv2_text_model"] == ()  # a model type no Auto mapping of a language model gives
    assert known.types_of("LlamaForCausalLM") == ("exaone", "internlm3", "iquestcoder", "llama")
    assert (known.implements("phimoe"), known.implements("kimi_k2"), known.implements(["llama"])) == (
        True, False, False)
    assert (known.types_of("Ernie4_5_ForCausalLM"), known.types_of(None)) == ((), ())


def test_the_file_is_one_line_a_model_type_after_its_header() -> None:
    parsed = parse("# transformers 9.9.9: a header\nb BForCausalLM\na\n\n")
    assert (parsed.version, dict(parsed.classes)) == ("9.9.9", {"b": ("BForCausalLM",), "a": ()})


@pytest.mark.reference
def test_the_shipped_file_is_what_the_installed_transformers_implements() -> None:
    """Rerun ``bench/transformers_types.py`` if this fails (after a transformers upgrade)."""
    transformers = pytest.importorskip("transformers", reason="the reference (transformers 5.24.0) is not installed; "
                                                              "pip install torch==2.13.0 transformers==5.24.0")
    assert transformers.__version__ == "5.24.0"
    from transformers_types import transformers_types_text  # pylint: disable=import-outside-toplevel

    assert transformers_types_text() == FILE.read_text(encoding="utf-8")
