"""The round-trip pass's shortcut: skipping the dump and the parse never changes a finding.

:func:`pipeline.roundtrip.roundtrip_findings` builds the spec back from its
``to_dict()`` when :func:`pipeline.yaml_source.survives_dump` vouches that the
YAML would give that mapping back, and dumps and parses otherwise. Here every
spec file the tests hold, and the catalogue's, is checked both ways.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import yaml_source
from pipeline.op_profiles import load_op_profiles
from pipeline.runner import check_file

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted([*(ROOT / "tests" / "data").rglob("*.yaml"), *(ROOT / "specs").rglob("*.yaml")])


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_shortcut_finds_what_the_dump_and_parse_find(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    profiles = load_op_profiles()
    quick = check_file(path, path.name, profiles)
    monkeypatch.setattr(yaml_source, "survives_dump", lambda data: False)
    assert check_file(path, path.name, profiles) == quick


def test_the_shortcut_is_taken_for_the_catalogue() -> None:
    # otherwise the pass costs a dump and a parse per file again
    from pipeline.model import ModelSpec

    for path in sorted((ROOT / "specs").rglob("*.yaml")):
        spec = ModelSpec.from_dict(yaml_source.load_path(path).data)
        assert yaml_source.survives_dump(spec.to_dict()), path
