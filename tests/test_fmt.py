"""Tests of ``modelspec fmt`` and the canonical layout, :mod:`pipeline.spec.layout`.

A hand-written file (keys in any order, flow style, quoted scalars) formats
to the bytes ``modelspec import`` writes; the header block is kept as
written, its schema line added or corrected; every comment below it stays at
its key through a reordering; a ``---`` is written (and a user's kept); a
file that does not load is reported and left alone; values never change;
``--check`` writes nothing and exits 1 saying what would change, ``--diff``
prints the unified diff; the output passes real yamllint's default
configuration on every shipped spec.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Dict, Sequence

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.spec.layout import Formatted, canonical_data, format_text, split_header, wrap_comment
from pipeline.spec.problems import Location
from pipeline.spec.yaml_source import comment_locations, load_bytes

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_LINE = "# yaml-language-server: $schema=../../schemas/model-spec.schema.json"


def run(args: Sequence[str]):
    """Run ``modelspec ARGS``; stdout and stderr apart."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def repo(tmp_path: Path, files: Dict[str, str], schemas: bool = True) -> Path:
    """A spec repository in *tmp_path* holding *files* (paths relative to it)."""
    if schemas:
        (tmp_path / "schemas").mkdir()
        shutil.copy(ROOT / "schemas" / "model-spec.schema.json", tmp_path / "schemas")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def hand_written(data: Dict[str, Any]) -> str:
    """*data* as a person might write it: keys in reverse order, nested values in flow style (JSON)."""
    return "".join(f"{key}: {json.dumps(value)}\n" for key, value in reversed(list(data.items())))


@pytest.mark.parametrize("spec", ["specs/qwen/qwen2.5-vl-7b-instruct.yaml", "specs/deepseek/deepseek-v3.yaml",
                                  "specs/gemma/gemma-3-27b.yaml"])
def test_a_hand_written_file_formats_to_the_imported_layout(tmp_path, spec):
    imported = (ROOT / spec).read_text(encoding="utf-8")
    header, count = split_header(imported)
    body = load_bytes(imported.encode("utf-8"), spec).data
    root = repo(tmp_path, {spec: "\n".join(header[1:]) + "\n\n" + hand_written(body)})
    result = run(["fmt", "--root", str(root)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, f"reformatted {spec}\n", "")
    assert (root / spec).read_bytes() == imported.encode("utf-8")
    result = run(["fmt", "--check", "--root", str(root)])
    assert (result.exit_code, result.stdout) == (0, "")


HEADER = "# source: somewhere\n#\n#   kept as written, # and all\n"
BODY = "name: tiny\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n"


@pytest.mark.parametrize("text, expected", [
    (HEADER + BODY, SCHEMA_LINE + "\n" + HEADER + "---\n" + BODY),
    ("# yaml-language-server: $schema=../schemas/model-spec.schema.json\n" + HEADER + BODY,
     SCHEMA_LINE + "\n" + HEADER + "---\n" + BODY),
    (SCHEMA_LINE + "\n" + HEADER + "\n\n" + BODY, SCHEMA_LINE + "\n" + HEADER + "---\n" + BODY),
    (SCHEMA_LINE + "\n" + HEADER + "---\n" + BODY.replace("\n", "  \n"), SCHEMA_LINE + "\n" + HEADER + "---\n" + BODY),
    (BODY, SCHEMA_LINE + "\n---\n" + BODY),
])
def test_the_header_is_kept_and_its_schema_line_added_or_corrected(tmp_path, text, expected):
    root = repo(tmp_path, {"specs/a/tiny.yaml": text})
    result = run(["fmt", "--root", str(root)])
    assert (result.exit_code, result.stdout) == (0, "reformatted specs/a/tiny.yaml\n")
    assert (root / "specs/a/tiny.yaml").read_text(encoding="utf-8") == expected


def test_without_schemas_the_header_is_left_as_written(tmp_path):
    root = repo(tmp_path, {"specs/a/tiny.yaml": HEADER + "\n" + BODY}, schemas=False)
    result = run(["fmt", "--root", str(root)])
    assert result.exit_code == 0
    assert (root / "specs/a/tiny.yaml").read_text(encoding="utf-8") == HEADER + "---\n" + BODY


#: Comments everywhere below the header, keys out of order: each comment must stay at its key.
COMMENTED = """\
# source: here
---
# the width, checked against the config
hidden_size: 64
name: tiny  # the name
num_hidden_layers: 2

# why 2: see the paper
#   (section 3)
num_attention_heads: 4
layers:
  # the dense layer first
  - {count: 1, kind: dense}  # flow style
  - count: 1
    # one MoE layer
    kind: moe
vision:
  num_attention_heads: 2  # heads of the tower
  # tower width
  hidden_size: 8
  num_hidden_layers: 1
vocab_size: 100  # modelspec: ignore[roundtrip.null]
# the end
"""

COMMENTED_FORMATTED = """\
# source: here
---
name: tiny  # the name
# the width, checked against the config
hidden_size: 64
num_hidden_layers: 2

# why 2: see the paper
#   (section 3)
num_attention_heads: 4
vocab_size: 100  # modelspec: ignore[roundtrip.null]
layers:
  # the dense layer first
  - kind: dense
    count: 1  # flow style
  # one MoE layer
  - kind: moe
    count: 1
vision:
  # tower width
  hidden_size: 8
  num_hidden_layers: 1
  num_attention_heads: 2  # heads of the tower
# the end
"""


def test_every_comment_stays_at_its_key():
    result = format_text(COMMENTED, "f.yaml")
    assert (result.problems, result.text) == ((), COMMENTED_FORMATTED)
    assert format_text(COMMENTED_FORMATTED, "f.yaml") == Formatted(COMMENTED_FORMATTED, False)


def test_a_comment_in_a_file_without_a_header_is_kept(tmp_path):
    text = "\nname: tiny\n# why 2\nnum_hidden_layers: 2\n"
    root = repo(tmp_path, {"specs/a/tiny.yaml": text}, schemas=False)
    result = run(["fmt", "--root", str(root)])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "reformatted specs/a/tiny.yaml\n", "")
    assert (root / "specs/a/tiny.yaml").read_text(encoding="utf-8") == "---\nname: tiny\n# why 2\nnum_hidden_layers: 2\n"


@pytest.mark.parametrize("line, expected", [
    ("# short", ["# short"]),
    ("# " + "x" * 100, ["# " + "x" * 100]),
    ("# source: " + "word " * 20, ["# source: " + "word " * 13 + "word", "# " + "word " * 5 + "word"]),
    ("  # " + "ab " * 30, ["  # " + "ab " * 24 + "ab", "  # " + "ab " * 4 + "ab"]),
    (SCHEMA_LINE + "x" * 80, [SCHEMA_LINE + "x" * 80]),
])
def test_a_long_comment_line_is_wrapped_at_its_spaces(line, expected):
    assert wrap_comment(line) == expected
    assert all(len(part) <= 80 or " " not in part.strip()[2:] for part in wrap_comment(line)
               if not part.startswith(SCHEMA_LINE))


def test_a_spec_reached_first_by_its_real_path_is_formatted_and_its_link_kept(tmp_path, monkeypatch):
    messy = hand_written(load_bytes(BODY.encode(), "b").data)
    root = repo(tmp_path, {"specs/a/real.yaml": messy})
    link = root / "specs" / "b" / "link.yaml"
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.relpath(root / "specs/a/real.yaml", link.parent))
    monkeypatch.chdir(root)
    result = run(["fmt"])  # the folder search reaches the file itself first: the link is the same file, taken once
    assert (result.exit_code, result.stdout, result.stderr) == (0, "reformatted specs/a/real.yaml\n", "")
    schema = os.path.relpath(root / "schemas" / "model-spec.schema.json", (root / "specs/a").parent / "a")
    assert (link.is_symlink(), (root / "specs/a/real.yaml").read_text(encoding="utf-8")) == (
        True, f"# yaml-language-server: $schema={schema}\n---\n" + BODY)


@pytest.mark.parametrize("target, args", [
    ("specs/a/real.yaml", ["specs/b/link.yaml"]),
    ("elsewhere/real.yaml", ["specs/b/link.yaml"]),
    ("elsewhere/real.yaml", []),
])
def test_fmt_never_writes_through_a_symlinked_spec(tmp_path, monkeypatch, target, args):
    # issue 25: fmt rewrote a symlinked spec's target, outside the repository; the write rule refuses the link
    messy = hand_written(load_bytes(BODY.encode(), "b").data)
    root = repo(tmp_path, {target: messy})
    link = root / "specs" / "b" / "link.yaml"
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.relpath(root / target, link.parent))
    monkeypatch.chdir(root)
    result = run(["fmt", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (  # 2: a file fmt will not touch, as ruff's errors
        2, "", f"modelspec: not reformatted: {root}/specs/b/link.yaml is a symbolic link; modelspec never writes "
               "through one (a checkout may carry a link to any file): remove the link, or write the file it names "
               "yourself\n")
    assert (link.is_symlink(), (root / target).read_text(encoding="utf-8")) == (True, messy)


def test_a_hash_inside_a_scalar_is_not_a_comment():
    text = SCHEMA_LINE + '\nname: "a # b"\narch: x#y\n' + BODY.split("\n", 1)[1]
    result = format_text(text, "f.yaml", SCHEMA_LINE)
    assert (result.problems, result.changed) == ((), True)
    assert result.text == SCHEMA_LINE + '\n---\nname: "a # b"\n' + BODY.split("\n", 1)[1] + "arch: x#y\n"


def test_a_file_that_does_not_load_is_reported_and_left_alone(tmp_path):
    text = "name: tiny\nname: again\n"
    root = repo(tmp_path, {"specs/a/tiny.yaml": text, "specs/a/fine.yaml": SCHEMA_LINE + "\n---\n" + BODY})
    result = run(["fmt", "--root", str(root)])
    assert (result.exit_code, result.stdout) == (2, "")  # ruff's exit for a file it cannot parse
    assert result.stderr == ("specs/a/tiny.yaml:2:1: error [yaml.duplicate-key] name: already stated on line 1; keep "
                             "one of the two\n")
    assert (root / "specs/a/tiny.yaml").read_text(encoding="utf-8") == text


def test_values_never_change(tmp_path):
    text = ("wibble: [1, 2]\nmtp_depth: null\ntorch_dtype: torch.bfloat16\nlayers: [{mtp: false, count: 2, kind: a}]\n"
            + BODY)
    result = format_text(text, "f.yaml")
    assert result.text == "---\n" + BODY + ("mtp_depth: null\ntorch_dtype: torch.bfloat16\nlayers:\n  - kind: a\n"
                                            "    count: 2\n    mtp: false\nwibble:\n  - 1\n  - 2\n")
    assert load_bytes(result.text.encode(), "f").data == load_bytes(text.encode(), "f").data


MESSY_SAYS = ("would reformat specs/a/messy.yaml: 10 lines change, first line 1: '# yaml-language-server: "
              "$schema=../../schemas/model-spec.sc…' is added\n")


@pytest.mark.parametrize("args, code, stdout", [
    ([], 0, ""),
    (["specs/a/messy.yaml"], 1, MESSY_SAYS),
    (["specs"], 1, MESSY_SAYS),
    (["specs/a/tidy.yaml"], 0, ""),
])
def test_check_writes_nothing_and_exits_1_naming_what_would_change(tmp_path, monkeypatch, args, code, stdout):
    tidy = SCHEMA_LINE + "\n---\n" + BODY
    root = repo(tmp_path, {"specs/a/tidy.yaml": tidy, "specs/a/messy.yaml": hand_written(
        load_bytes(BODY.encode(), "b").data)})
    if not args:
        (root / "specs/a/messy.yaml").unlink()
    monkeypatch.chdir(root)
    result = run(["fmt", "--check", *args])
    assert (result.exit_code, result.stdout, result.stderr) == (code, stdout, "")
    assert (root / "specs/a/tidy.yaml").read_text(encoding="utf-8") == tidy
    if args:
        assert (root / "specs/a/messy.yaml").read_text(encoding="utf-8").startswith("vocab_size: 100\n")


def test_a_missing_path_is_a_usage_error(tmp_path):
    result = run(["fmt", "--root", str(repo(tmp_path, {})), str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == f"Error: {tmp_path / 'nope.yaml'}: no such file or folder"


def test_canonical_data_orders_every_record_and_keeps_unknown_keys_last():
    ops = {"linrec": 0, "attMM": 4, "other": 1}
    data = {"activations": {"k": {"seq_length": 1, "saved": 2, "ops": ops}}, "ops": {"k": {"ffMM": 3, "attMM": 4}},
            "vision": {"layers": [{"count": 1, "kind": "encoder"}], "hidden_size": 8}, "x": 1, "name": "n"}
    assert json.dumps(canonical_data(data)) == json.dumps({
        "name": "n", "ops": {"k": {"attMM": 4, "ffMM": 3}},
        "activations": {"k": {"saved": 2, "seq_length": 1, "ops": {"attMM": 4, "linrec": 0, "other": 1}}},
        "vision": {"hidden_size": 8, "layers": [{"kind": "encoder", "count": 1}]}, "x": 1})


@pytest.mark.parametrize("text, expected", [
    ("# a\nb: 1 # c\n", (Location(1, 1), Location(2, 6))),
    ("a: '# not'\nb: \"# not\"\nc: x#y\nd: |\n  # not\n", ()),
    ("e: [1, # yes\n  2]\n---\n# yes\n", (Location(1, 8), Location(4, 1))),
])
def test_comment_locations(text, expected):
    assert comment_locations(text) == expected


def test_split_header():
    assert split_header("# a\n\n  \n# b\n\nx: 1\n# c\n") == (["# a", "", "", "# b"], 5)
    assert split_header("x: 1\n") == ([], 0)


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path, monkeypatch):
    messy = "name: tiny\nvocab_size: 100  # kept\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\n"
    root = repo(tmp_path, {"specs/a/messy.yaml": messy}, schemas=False)
    monkeypatch.chdir(root)
    result = run(["fmt", "--diff"])
    assert (result.exit_code, result.stdout, result.stderr) == (1, (
        "--- a/specs/a/messy.yaml\n"
        "+++ b/specs/a/messy.yaml\n"
        "@@ -1,5 +1,6 @@\n"
        "+---\n"
        " name: tiny\n"
        "-vocab_size: 100  # kept\n"
        " hidden_size: 64\n"
        " num_hidden_layers: 2\n"
        " num_attention_heads: 4\n"
        "+vocab_size: 100  # kept\n"), "")
    assert (root / "specs/a/messy.yaml").read_text(encoding="utf-8") == messy


@pytest.mark.parametrize("spec", sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "specs").rglob("*.yaml")))
def test_every_shipped_spec_after_fmt_passes_yamllint_default_config(spec):
    from yamllint import linter
    from yamllint.config import YamlLintConfig

    text = (ROOT / spec).read_text(encoding="utf-8")
    formatted = format_text(text, spec, SCHEMA_LINE)
    assert (formatted.problems, formatted.changed) == ((), False)  # the catalogue is kept formatted
    problems = [f"{p.line}:{p.column} {p.rule} {p.desc}" for p in linter.run(text, YamlLintConfig("extends: default"))]
    assert problems == []


def test_yamllint_flags_what_fmt_fixes():
    """The yamllint test can fail: the old layout (no ---, unindented list, a long header line) is flagged."""
    from yamllint import linter
    from yamllint.config import YamlLintConfig

    old = "# source: " + "word " * 20 + "\nname: tiny\nlayer_types:\n- a\n"
    rules = sorted({p.rule for p in linter.run(old, YamlLintConfig("extends: default"))})
    assert rules == ["document-start", "indentation", "line-length", "trailing-spaces"]
    new = format_text(old, "f.yaml").text
    assert [p.rule for p in linter.run(new, YamlLintConfig("extends: default"))] == []


def test_a_3999_digit_integer_and_a_long_float_keep_their_spelling():
    digits = "9" * 3999
    text = f"---\nname: tiny\nhidden_size: {digits}\nffn_dim_multiplier: 1.0e-05\n"
    result = format_text(text, "f.yaml")
    assert (result.problems, result.text) == ((), text)


def test_fmt_refuses_what_ruamel_cannot_read_with_its_location_never_a_traceback(tmp_path: Path) -> None:
    # The red team's crashes: a tab after key: and a << key (now refused at load, as check does), and the class
    # of them: a tab inside a plain value, which the strict reader takes and ruamel.yaml's scanner does not.
    (tmp_path / "specs").mkdir()
    for name, text in (("a", "name: a\nhidden_size: 64\ntorch_dtype: x\ty\n"), ("b", "name: b\nhidden_size:\t64\n"),
                       ("c", "name: c\n<<: {hidden_size: 64}\n")):
        (tmp_path / "specs" / f"{name}.yaml").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["fmt", "--check", "--root", str(tmp_path)], catch_exceptions=False)
    assert (result.exit_code, result.output.splitlines()) == (2, [
        "specs/a.yaml:3:15: error [fmt.unreadable] ruamel.yaml, which fmt rewrites through, refuses this (found "
        "character '\\t' that cannot start any token); the file is left as it is: write a space for a tab in a plain "
        "value, or quote the value",
        "specs/b.yaml:2:13: error [yaml.tab] hidden_size: a tab after the key's colon; YAML 1.1 readers (PyYAML, "
        "ruamel.yaml, so fmt) refuse the file: write a space",
        "specs/c.yaml:2:1: error [yaml.merge-key] a << key merges another mapping in YAML 1.1 (PyYAML, ruamel.yaml) "
        "but is a plain key in YAML 1.2; write the keys out in full"])
    check = CliRunner().invoke(main, ["check", "--root", str(tmp_path), "--no-cache", str(tmp_path / "specs/b.yaml"),
                                      str(tmp_path / "specs/c.yaml")])
    assert check.exit_code == 1 and "[yaml.tab]" in check.output and "[yaml.merge-key]" in check.output
