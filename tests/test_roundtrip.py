"""The round-trip pass's shortcut: skipping the dump and the parse never changes a finding.

:func:`pipeline.spec.roundtrip.roundtrip_findings` builds the spec back from its
``to_dict()`` when :func:`pipeline.spec.yaml_source.survives_dump` vouches that the
YAML would give that mapping back, and dumps and parses otherwise. Here every
spec file the tests hold, and the catalogue's, is checked both ways.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.spec import roundtrip

from pipeline.spec import yaml_source
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.check.runner import check_file

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted([*(ROOT / "tests" / "data").rglob("*.yaml"), *(ROOT / "specs").rglob("*.yaml")])


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_shortcuts_find_what_the_dump_and_parse_find(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    profiles = load_op_profiles()
    quick = check_file(path, path.name, profiles)
    monkeypatch.setattr(roundtrip, "_same", lambda left, right: False)  # the spec built back from to_dict()
    assert check_file(path, path.name, profiles) == quick
    monkeypatch.setattr(roundtrip, "survives_dump", lambda data: False)  # to_dict() dumped and parsed
    assert check_file(path, path.name, profiles) == quick


@pytest.mark.parametrize("left, right, same", [
    ({"a": 1}, {"a": 1}, True),
    ({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}, True),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),  # a mapping's order is no part of its value
    ({"a": 1}, {"a": 1.0}, False),
    ({"a": True}, {"a": 1}, False),
    ({"a": [1, 2]}, {"a": [2, 1]}, False),
    ({"a": [1]}, {"a": [1, 1]}, False),
    ({"a": 1}, {"a": 1, "b": 2}, False),
    ({1: "x"}, {True: "x"}, False),  # equal as lookups, but not text keys
    ({"a": float("nan")}, {"a": float("nan")}, False),
    ({"a": "1"}, {"a": 1}, False),
])
def test_same_tells_values_apart_by_type_as_building_a_spec_would(left, right, same: bool) -> None:
    assert roundtrip._same(left, right) is same


def test_a_file_as_the_ir_writes_it_is_not_built_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.spec.model import ModelSpec

    built = []
    real = ModelSpec.from_dict.__func__
    monkeypatch.setattr(ModelSpec, "from_dict", classmethod(lambda cls, *a, **k: built.append(1) or real(cls, *a, **k)))
    profiles = load_op_profiles()
    for path in sorted((ROOT / "specs").rglob("*.yaml")):
        built.clear()
        result = check_file(path, path.name, profiles).result
        assert (result.problems, len(built)) == ((), 1), path


def test_the_shortcut_is_taken_for_the_catalogue() -> None:
    # otherwise the pass costs a dump and a parse per file again
    from pipeline.spec.model import ModelSpec

    for path in sorted((ROOT / "specs").rglob("*.yaml")):
        spec = ModelSpec.from_dict(yaml_source.load_path(path).data)
        assert yaml_source.survives_dump(spec.to_dict()), path
