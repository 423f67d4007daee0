"""Re-importing over a spec keeps its header (sources, hand-edit notes) and shows a diff before it reverts a value."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[1]
CONFIG = Path(__file__).parent / "data" / "configs" / "llama-3.1-8b.json"
NOTE = "# hand edit: vocab_size is the padded table, 128512 (see the tokenizer)"


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """An imported spec with a hand-edit note in its header."""
    (tmp_path / "schemas").mkdir()
    shutil.copy(ROOT / "schemas" / "model-spec.schema.json", tmp_path / "schemas")
    out = tmp_path / "specs" / "llama" / "llama-3.1-8b.yaml"
    out.parent.mkdir(parents=True)
    result = run("import", str(CONFIG), "--name", "llama-3.1-8b", "-o", str(out), "--root", str(tmp_path),
                 "--source", "meta-llama/Llama-3.1-8B config.json at abc123")
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8").replace("# explain any hand edit in this header\n",
                                                   "# explain any hand edit in this header\n" + NOTE + "\n")
    out.write_text(text, encoding="utf-8")
    return out


def _import(spec: Path, *args: str):
    return run("import", str(CONFIG), "--name", "llama-3.1-8b", "-o", str(spec), "--root", str(spec.parents[2]),
               "--force", *args)


def test_reimport_without_source_keeps_the_header_and_every_note(spec: Path) -> None:
    before = spec.read_text(encoding="utf-8")
    result = _import(spec)
    assert (result.exit_code, result.stderr) == (0, "wrote specs/llama/llama-3.1-8b.yaml\n")
    assert spec.read_text(encoding="utf-8") == before


def test_a_new_source_replaces_the_old_one_and_keeps_the_notes(spec: Path) -> None:
    result = _import(spec, "--source", "meta-llama/Llama-3.1-8B config.json at def456")
    assert result.exit_code == 0
    assert spec.read_text(encoding="utf-8").splitlines()[:6] == [
        "# yaml-language-server: $schema=../../schemas/model-spec.schema.json",
        "# source: meta-llama/Llama-3.1-8B config.json at def456",
        "# imported by modelspec import from llama-3.1-8b.json",
        "# explain any hand edit in this header",
        NOTE,
        "---"]


def test_a_hand_edited_value_is_shown_and_not_reverted_without_yes(spec: Path) -> None:
    edited = spec.read_text(encoding="utf-8").replace("vocab_size: 128256", "vocab_size: 128512")
    spec.write_text(edited, encoding="utf-8")
    result = _import(spec)
    assert result.exit_code == 1
    assert result.stderr == (
        "specs/llama/llama-3.1-8b.yaml: the import changes values the file states (a hand edit the config does not "
        "state?):\n"
        "--- a/specs/llama/llama-3.1-8b.yaml\n"
        "+++ b/specs/llama/llama-3.1-8b.yaml\n"
        "@@ -8,7 +8,7 @@\n"
        " hidden_size: 4096\n"
        " num_hidden_layers: 32\n"
        " num_attention_heads: 32\n"
        "-vocab_size: 128512\n"
        "+vocab_size: 128256\n"
        " num_key_value_heads: 8\n"
        " intermediate_size: 14336\n"
        " max_position_embeddings: 131072\n"
        "specs/llama/llama-3.1-8b.yaml: not overwritten; pass --yes to overwrite it, or keep the hand edit\n")
    assert spec.read_text(encoding="utf-8") == edited
    result = _import(spec, "--yes")
    assert result.exit_code == 0
    assert spec.read_text(encoding="utf-8") == edited.replace("vocab_size: 128512", "vocab_size: 128256")


def test_fresh_header_writes_a_new_one(spec: Path) -> None:
    result = _import(spec, "--fresh-header", "--source", "elsewhere")
    assert result.exit_code == 0
    assert spec.read_text(encoding="utf-8").splitlines()[:5] == [
        "# yaml-language-server: $schema=../../schemas/model-spec.schema.json", "# source: elsewhere",
        "# imported by modelspec import from llama-3.1-8b.json", "# explain any hand edit in this header", "---"]
