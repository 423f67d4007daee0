"""Every key a priced family's config class reads is named in its import section, and no shared rule maps a key
the class does not read.

``tests/data/config_keys.json`` lists, for each model type an op profile prices, the keys transformers 5.24.0's
config class declares (its ``__init__``'s parameters, its ``attribute_map`` aliases, what its ``to_dict`` writes
beside them; its ``text_config`` and ``vision_config`` classes' too), written by ``bench/reference_keys.py``. The
torch-free tests hold the op profiles to that file: each declared key is mapped, ignored or refused by the
family's section (or by a shared table the section lists it under, ``shared``), and each ``shared`` key is one the
class declares, so the only unknown key is one the class does not read. The ``reference``-marked test holds the
file to the installed transformers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import pytest

from pipeline.importer import config_json as importer
from pipeline.pricing import config_keys
from pipeline.pricing.families import Family
from pipeline.pricing.op_profiles import load_op_profiles

KEYS_FILE = Path(__file__).parent / "data" / "config_keys.json"
KEYS: Dict[str, Any] = json.loads(KEYS_FILE.read_text(encoding="utf-8"))


def _declared(entry: Dict[str, Any]) -> Set[str]:
    return set(entry["keys"]) | set(entry["aliases"]) | set(entry["written"])


def _families() -> List[Tuple[str, Family, Set[str], Set[str]]]:
    """Each priced family: its arch, its import rules, and the keys its config classes declare (top level and
    text_config; vision_config)."""
    found = []
    for arch, profile in sorted(load_op_profiles().profiles.items()):
        if profile.family is None:
            continue
        top: Set[str] = set()
        tower: Set[str] = set()
        for model_type in profile.model_types:
            entry = KEYS.get(model_type)
            if entry is None:
                continue  # kimi_k2: a hub model type transformers does not implement
            top |= _declared(entry) | (_declared(entry["text_config"]) if "text_config" in entry else set())
            tower |= _declared(entry["vision_config"]) if "vision_config" in entry else set()
        found.append((arch, profile.family, top, tower))
    return found


FAMILIES = _families()
GENERIC = set(KEYS["PreTrainedConfig"]["keys"]) | set(KEYS["PreTrainedConfig"]["popped"])


def _named(family: Family) -> Set[str]:
    """The top-level keys a family's import section names: mapped, ignored, refused, read by a layout rule, or
    read key by key by dotted paths (DBRX's attn_config)."""
    return (set(family.shared or ()) | set(family.keys) | set(family.ignored) | set(family.unread) | family.nested_keys
            | set(family.defaults) | set(family.top_level) | set(family.text_level) | family.variant_keys | set(family.pattern_lists)
            | ({family.pattern_key} if family.pattern_key else set()) | set(family.code_reads))


def test_every_priced_model_type_transformers_implements_is_listed():
    assert sorted(KEYS) == sorted({"PreTrainedConfig"} | {t for _, f, _, _ in FAMILIES for t in _model_types(f)})


def _model_types(family: Family) -> List[str]:
    return [t for arch, profile in load_op_profiles().profiles.items() if profile.family is family
            for t in profile.model_types if t != "kimi_k2"]


@pytest.mark.parametrize("arch, family, declared, tower", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_every_key_the_config_class_declares_is_named(arch, family, declared, tower):
    assert family.shared is not None and family.vision_shared is not None or not tower
    assert sorted(declared - GENERIC - _named(family)) == []
    tower_named = (set(family.vision_shared or ()) | set(family.vision_keys) | set(family.vision_ignored)
                   | set(family.vision_defaults))
    assert sorted(tower - GENERIC - tower_named) == []


@pytest.mark.parametrize("arch, family, declared, tower", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_a_shared_key_is_one_the_class_declares_and_a_shared_table_reads(arch, family, declared, tower):
    assert sorted(set(family.shared) - declared) == []
    assert sorted(set(family.shared) - set(config_keys.shared_keys()) - set(importer.IGNORED)) == []
    assert sorted(set(family.vision_shared or ()) - tower) == []
    assert sorted(set(family.vision_shared or ()) - set(config_keys.shared_tower_keys()) - set(importer.VISION_IGNORED)) \
        == []


@pytest.mark.parametrize("arch, family, declared, tower", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_a_key_read_by_code_or_unread_is_no_key_the_class_declares(arch, family, declared, tower):
    assert sorted(set(family.code_reads) & declared) == []
    assert sorted(set(family.unread) & declared) == []
    assert all(reason and "\n" not in reason for reason in [*family.code_reads.values(), *family.unread.values()])


def test_every_generic_key_is_read_by_every_family():
    """PreTrainedConfig's own keys (and the generation settings it drops) are known at every level."""
    every = set(importer.IGNORED) | {"model_type", "_name_or_path", "torch_dtype", "dtype", "is_encoder_decoder"}
    assert sorted(GENERIC - every) == []
    assert sorted(GENERIC - set(importer.VISION_IGNORED) - {"model_type"}) == []


@pytest.mark.reference
def test_the_committed_keys_are_the_installed_transformers_keys():
    """tests/data/config_keys.json is what transformers 5.24.0 declares (rerun bench/reference_keys.py if not)."""
    transformers = pytest.importorskip("transformers", reason="the reference (transformers 5.24.0) is not installed; "
                                                              "pip install torch==2.13.0 transformers==5.24.0")
    assert transformers.__version__ == "5.24.0"
    from config_keys import reference_keys  # pylint: disable=import-outside-toplevel

    assert reference_keys(sorted(set(KEYS) - {"PreTrainedConfig"})) == KEYS


TOWERS = [(arch, profile.model_types) for arch, profile in sorted(load_op_profiles().profiles.items())
          if profile.family is not None and profile.family.tower is not None]


@pytest.mark.parametrize("arch, model_types", TOWERS, ids=[arch for arch, _ in TOWERS])
def test_a_tower_family_s_first_model_type_is_the_one_whose_config_class_holds_vision_config(arch, model_types):
    # what the importer's refusal of a left-out vision_config reads (_refuse_default_tower): the wrapper's config
    # class builds its default tower for it, its text model's builds none
    assert [model_type for model_type in model_types if "vision_config" in KEYS[model_type]] == [model_types[0]]
