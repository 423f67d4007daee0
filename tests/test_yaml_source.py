"""Tests for pipeline.spec.yaml_source: strict reading, located problems, canonical dump.

Each fault is tested as a class (every spelling, every place it can sit),
not only by the example in tests/data/cases/. The value-level checks run on
both parsers, libyaml and pure Python, which must agree on codes, places and
messages; syntax errors are checked on libyaml, whose problem texts differ.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path
from types import MappingProxyType

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.spec import yaml_source
from pipeline.spec.problems import FILE_START, Location, Problem, Severity
from pipeline.spec.yaml_source import (CODES, FATAL_CODES, MAX_BYTES, MAX_DEPTH, MAX_NUMBER_CHARS, MAX_VALUES,
                                  SourceDoc, dump, load_bytes, load_path, survives_dump)
from budget import examples

CASES = Path(__file__).parent / "data" / "cases"

MAPPING_HINT = "a spec is a mapping of fields, one `key: value` per line"
QUOTE_HINT = "(or quote it if you mean the text)"
EMPTY = f"empty file; {MAPPING_HINT}"

LOADERS = [pytest.param(yaml.SafeLoader, id="python")]
if yaml.__with_libyaml__:
    LOADERS.insert(0, pytest.param(yaml.CSafeLoader, id="libyaml"))


@pytest.fixture(params=LOADERS)
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type:
    """Run the test once per available parser."""
    monkeypatch.setattr(yaml_source, "_LOADER", request.param)
    return request.param


def found(source: str | bytes, file: str = "spec.yaml") -> list[tuple[str, int, int, str]]:
    """(code, line, column, message) of each problem of *source*, in report order."""
    raw = source.encode() if isinstance(source, str) else source
    return [(p.code, p.line, p.column, p.message) for p in load_bytes(raw, file).problems]


def typed(value: object) -> object:
    """*value* with every scalar paired with its exact type, so True != 1 != 1.0 and -0.0 != 0.0."""
    if isinstance(value, dict):
        return {key: typed(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [typed(item) for item in value]
    return type(value).__name__, repr(value)


# ---- the cases from tests/data/cases --------------------------------------

CASE_PROBLEMS = {
    "c01-exponent-number.yaml": [],
    "c02-yes-no-flags.yaml": [
        ("yaml.ambiguous-bool", 7, 10,
         f"qk_norm: yes is a boolean in YAML 1.1 but text in YAML 1.2; write true or false {QUOTE_HINT}"),
        ("yaml.ambiguous-bool", 8, 22,
         f"tie_word_embeddings: off is a boolean in YAML 1.1 but text in YAML 1.2; write true or false {QUOTE_HINT}"),
    ],
    "c03-duplicate-key.yaml": [
        ("yaml.duplicate-key", 7, 1, "num_hidden_layers: already stated on line 3; keep one of the two"),
    ],
    "c04-alias-bomb.yaml": [
        ("yaml.anchor", 6, 5, "a1: the anchor &a1 is not allowed (anchors and aliases can expand without bound); "
                              "write the value out in full"),
    ],
    "c05-python-tag.yaml": [
        ("yaml.tag", 2, 14, "hidden_size: the tag !!python/object/apply:os.system is not allowed; "
                            "remove it and write the plain value"),
    ],
    "c17-empty-file.yaml": [("yaml.empty", 1, 1, EMPTY)],
    "c18-two-documents.yaml": [
        ("yaml.multiple-documents", 6, 1,
         "a second YAML document starts here; a spec file holds one: move it to a file of its own"),
    ],
    "c19-not-a-number.yaml": [
        ("yaml.non-finite", 8, 21, "ffn_dim_multiplier: .nan is not a finite number; a finite number is required"),
    ],
}


@pytest.mark.parametrize("name", sorted(CASE_PROBLEMS))
def test_case_problems(loader: type, name: str) -> None:
    doc = load_path(CASES / name, name)
    assert [(p.file, p.code, p.line, p.column, p.message) for p in doc.problems] == [
        (name, *problem) for problem in CASE_PROBLEMS[name]]
    assert all(p.pass_name == "load" and p.severity is Severity.ERROR for p in doc.problems)
    assert doc.fatal == (doc.data is None) == any(p.code in FATAL_CODES for p in doc.problems)


@pytest.mark.parametrize("name, expected", [
    ("c01-exponent-number.yaml", {"name": "tiny-dense", "hidden_size": 7000.0, "num_hidden_layers": 4,
                                  "num_attention_heads": 8, "vocab_size": 32000, "intermediate_size": 11008,
                                  "ffn_dim_multiplier": 1.3}),
    ("c02-yes-no-flags.yaml", {"name": "tiny-dense", "hidden_size": 1024, "num_hidden_layers": 4,
                               "num_attention_heads": 8, "vocab_size": 32000, "intermediate_size": 4096,
                               "qk_norm": "yes", "tie_word_embeddings": "off"}),
    ("c03-duplicate-key.yaml", {"name": "tiny-dense", "hidden_size": 2048, "num_hidden_layers": 24,
                                "num_attention_heads": 16, "vocab_size": 32000, "intermediate_size": 5632}),
    ("c05-python-tag.yaml", {"name": "tiny-dense", "hidden_size": ["touch /tmp/modelspec-tag-ran"],
                             "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 32000}),
    ("c19-not-a-number.yaml", {"name": "tiny-dense", "hidden_size": 4096, "num_hidden_layers": 32,
                               "num_attention_heads": 32, "vocab_size": 32000, "intermediate_size": 11008,
                               "multiple_of": 256, "ffn_dim_multiplier": ".nan"}),
])
def test_case_data_survives_value_level_refusals(loader: type, name: str, expected: dict) -> None:
    doc = load_path(CASES / name)
    assert typed(doc.data) == typed(expected)
    assert doc.fatal is False


def test_python_tag_runs_nothing(loader: type) -> None:
    load_path(CASES / "c05-python-tag.yaml")
    assert not Path("/tmp/modelspec-tag-ran").exists()


def test_alias_bomb_stops_at_the_first_anchor(loader: type) -> None:
    doc = load_path(CASES / "c04-alias-bomb.yaml")
    assert [p.code for p in doc.problems] == ["yaml.anchor"]
    assert doc.data is None and doc.fatal


# ---- YAML 1.2 core schema resolution --------------------------------------

@pytest.mark.parametrize("text, value", [
    ("", None), ("~", None), ("null", None), ("Null", None), ("NULL", None),
    ("true", True), ("True", True), ("TRUE", True), ("false", False), ("False", False), ("FALSE", False),
    ("0", 0), ("7", 7), ("-5", -5), ("+5", 5), ("-0", 0), ("1" * 30, int("1" * 30)),
    ("7e3", 7000.0), ("1.3e0", 1.3), ("1E3", 1000.0), ("1e+3", 1000.0), ("-2.5e-3", -0.0025), ("1.5", 1.5),
    (".5", 0.5), ("-.5", -0.5), ("+.5e1", 5.0), ("1.", 1.0), ("01.5", 1.5), ("4096.0", 4096.0), ("1e-999", 0.0),
    ("tRUE", "tRUE"), ("nULL", "nULL"), ("0o8", "0o8"), ("+0o17", "+0o17"), ("0x", "0x"), ("0xG", "0xG"),
    ("1.2.3", "1.2.3"), ("1e", "1e"), ("e3", "e3"), ("0:30", "0:30"), ("1:60", "1:60"), ("._", "._"),
    ("0b", "0b"), ("0b2", "0b2"), ("1_e+5", "1_e+5"), ("silu", "silu"), ("deepseek_v3", "deepseek_v3"),
    ("a b", "a b"), ("v1.0", "v1.0"), ("yesno", "yesno"), ("nan", "nan"), ("inf", "inf"), ("2024-01-01", "2024-01-01"),
    ("=", "="), ("<<", "<<"),
])
def test_plain_scalars_resolve_by_the_core_schema(loader: type, text: str, value: object) -> None:
    doc = load_bytes(f"a: {text}\n".encode(), "spec.yaml")
    assert doc.problems == ()
    assert typed(doc.data) == typed({"a": value})


@pytest.mark.parametrize("source, value", [
    ('"yes"', "yes"), ("'010'", "010"), ('"7e3"', "7e3"), ("'.nan'", ".nan"), ('"1:30"', "1:30"),
    ('"null"', "null"), ("''", ""), ('"true"', "true"), ("'12'", "12"), ("|\n  10\n", "10\n"), (">-\n  yes\n", "yes"),
])
def test_quoted_and_block_scalars_are_text(loader: type, source: str, value: str) -> None:
    doc = load_bytes(f"a: {source}\n".encode(), "spec.yaml")
    assert doc.problems == ()
    assert typed(doc.data) == typed({"a": value})


# ---- YAML 1.1 surprises ---------------------------------------------------

BOOL_WORDS = ["yes", "no", "on", "off", "y", "n"]
# Every word in every mix of cases: yes, yeS, yEs, ..., YES.
BOOL_SPELLINGS = sorted("".join(letters) for word in BOOL_WORDS
                        for letters in itertools.product(*({c, c.upper()} for c in word)))


def test_bool_spellings_cover_every_case() -> None:
    assert len(BOOL_SPELLINGS) == 8 + 4 + 4 + 8 + 2 + 2
    assert {"yEs", "yeS", "oN", "OfF", "Y", "n"} <= set(BOOL_SPELLINGS)


@pytest.mark.parametrize("word", BOOL_SPELLINGS)
def test_yaml11_booleans_are_refused_and_kept_as_text(loader: type, word: str) -> None:
    doc = load_bytes(f"name: x\nqk_norm: {word}\n".encode(), "spec.yaml")
    assert found(f"name: x\nqk_norm: {word}\n") == [
        ("yaml.ambiguous-bool", 2, 10,
         f"qk_norm: {word} is a boolean in YAML 1.1 but text in YAML 1.2; write true or false {QUOTE_HINT}")]
    assert doc.data == {"name": "x", "qk_norm": word} and not doc.fatal


@pytest.mark.parametrize("source, line, column, path, word", [
    ("flags: [true, yes]\n", 1, 15, "flags[1]", "yes"),
    ("flags:\n- no\n", 2, 3, "flags[0]", "no"),
    ("rope:\n  scaling:\n    on: 1\n", 3, 5, "rope.scaling.on", "on"),
    ("a: {b: Off}\n", 1, 8, "a.b", "Off"),
])
def test_yaml11_booleans_are_refused_anywhere(loader: type, source: str, line: int, column: int, path: str,
                                              word: str) -> None:
    assert found(source) == [
        ("yaml.ambiguous-bool", line, column,
         f"{path}: {word} is a boolean in YAML 1.1 but text in YAML 1.2; write true or false {QUOTE_HINT}")]


@pytest.mark.parametrize("text, meaning, fix", [
    ("010", "has a leading zero, which means octal in YAML 1.1", "10"),
    ("-010", "has a leading zero, which means octal in YAML 1.1", "-10"),
    ("+007", "has a leading zero, which means octal in YAML 1.1", "7"),
    ("08", "has a leading zero, which means octal in YAML 1.1", "8"),
    ("00", "has a leading zero, which means octal in YAML 1.1", "0"),
    ("1:30", "is a base-60 number in YAML 1.1 but text in YAML 1.2", "90"),
    ("-1:30", "is a base-60 number in YAML 1.1 but text in YAML 1.2", "-90"),
    ("1:30:00", "is a base-60 number in YAML 1.1 but text in YAML 1.2", "5400"),
    ("190:20:30", "is a base-60 number in YAML 1.1 but text in YAML 1.2", "685230"),
    ("1:30.5", "is a base-60 number in YAML 1.1 but text in YAML 1.2", "90.5"),
    ("0:30.", "is a base-60 number in YAML 1.1 but text in YAML 1.2", "30.0"),
    ("0b1010", "is a binary number in YAML 1.1 but text in YAML 1.2", "10"),
    ("-0b1_0", "is a binary number in YAML 1.1 but text in YAML 1.2", "-2"),
    ("-0x1F", "is a hexadecimal number in YAML 1.1 but text in YAML 1.2", "-31"),
    ("+0xff", "is a hexadecimal number in YAML 1.1 but text in YAML 1.2", "255"),
    ("0x1_F", "is a hexadecimal number in YAML 1.1 but text in YAML 1.2", "31"),
    ("0o17", "is an octal number in YAML 1.2 but text in YAML 1.1", "15"),
    ("0o2000", "is an octal number in YAML 1.2 but text in YAML 1.1", "1024"),
    ("0o0", "is an octal number in YAML 1.2 but text in YAML 1.1", "0"),
    ("0x1F", "is a hexadecimal number, which JSON and many readers do not take", "31"),
    ("0xff", "is a hexadecimal number, which JSON and many readers do not take", "255"),
    ("1_000", "has digit separators (_), a number in YAML 1.1 but text in YAML 1.2", "1000"),
    ("+1_0", "has digit separators (_), a number in YAML 1.1 but text in YAML 1.2", "10"),
    ("1_000.5", "has digit separators (_), a number in YAML 1.1 but text in YAML 1.2", "1000.5"),
    ("1_0.5e+3", "has digit separators (_), a number in YAML 1.1 but text in YAML 1.2", "10500.0"),
    ("._5", "has digit separators (_), a number in YAML 1.1 but text in YAML 1.2", "0.5"),
])
def test_yaml11_numbers_are_refused_with_the_number_to_write(loader: type, text: str, meaning: str,
                                                           fix: str) -> None:
    doc = load_bytes(f"hidden_size: {text}\n".encode(), "spec.yaml")
    assert found(f"hidden_size: {text}\n") == [
        ("yaml.ambiguous-number", 1, 14, f"hidden_size: {text} {meaning}; write {fix} {QUOTE_HINT}")]
    assert doc.data == {"hidden_size": text} and not doc.fatal


@pytest.mark.parametrize("text, message", [
    (".nan", ".nan is not a finite number"), (".NaN", ".NaN is not a finite number"),
    (".NAN", ".NAN is not a finite number"), (".nAn", ".nAn is not a finite number"),
    ("-.nan", "-.nan is not a finite number"), (".inf", ".inf is not a finite number"),
    (".Inf", ".Inf is not a finite number"), (".INF", ".INF is not a finite number"),
    ("+.inf", "+.inf is not a finite number"), ("-.inf", "-.inf is not a finite number"),
    ("-.Inf", "-.Inf is not a finite number"), (".iNF", ".iNF is not a finite number"),
    ("1e999", "1e999 is too large for a float"), ("-1.5e400", "-1.5e400 is too large for a float"),
])
def test_non_finite_numbers_are_refused(loader: type, text: str, message: str) -> None:
    doc = load_bytes(f"rope:\n  factor: {text}\n".encode(), "spec.yaml")
    assert found(f"rope:\n  factor: {text}\n") == [
        ("yaml.non-finite", 2, 11, f"rope.factor: {message}; a finite number is required")]
    assert doc.data == {"rope": {"factor": text}}


@pytest.mark.parametrize("text", ["1" * (MAX_NUMBER_CHARS + 1), "0" * (MAX_NUMBER_CHARS + 1),
                                  "1." + "5" * MAX_NUMBER_CHARS, "0x" + "f" * MAX_NUMBER_CHARS])
def test_numbers_too_long_to_read_are_refused(loader: type, text: str) -> None:
    assert found(f"a: {text}\n") == [
        ("yaml.huge-number", 1, 4,
         f"a: a number of {len(text)} characters is too long; write at most {MAX_NUMBER_CHARS} characters")]


def test_the_longest_number_is_read(loader: type) -> None:
    assert load_bytes(b"a: " + b"9" * MAX_NUMBER_CHARS, "spec.yaml").data == {"a": int("9" * MAX_NUMBER_CHARS)}


# ---- tags -----------------------------------------------------------------

@pytest.mark.parametrize("source, shown, value", [
    ("!!str 1", "!!str", "1"),
    ("!!int '1'", "!!int", "1"),
    ("!!float 1", "!!float", "1"),
    ("!!bool yes", "!!bool", "yes"),
    ("!!null ''", "!!null", ""),
    ("!!binary aGVsbG8=", "!!binary", "aGVsbG8="),
    ("!!timestamp 2024-01-01", "!!timestamp", "2024-01-01"),
    ("!!python/name:os.system", "!!python/name:os.system", ""),
    ("!!python/object/apply:os.system [\"touch SENTINEL\"]", "!!python/object/apply:os.system", ["touch SENTINEL"]),
    ("!!python/object/new:os.system {args: [\"touch SENTINEL\"]}", "!!python/object/new:os.system",
     {"args": ["touch SENTINEL"]}),
    ("!foo bar", "!foo", "bar"),
    ("! 12", "!", "12"),
    ("!<tag:yaml.org,2002:str> x", "!!str", "x"),
    ("!<tag:example.com,2024:thing> x", "tag:example.com,2024:thing", "x"),
    ("!!map {b: 1}", "!!map", {"b": 1}),
    ("!!seq [1]", "!!seq", [1]),
    ("!!set {p, q}", "!!set", {"p": None, "q": None}),
])
def test_tags_are_refused_never_constructed(loader: type, tmp_path: Path, source: str, shown: str,
                                            value: object) -> None:
    sentinel = str(tmp_path / "ran")
    doc = load_bytes(f"a: {source}\nb: 2\n".replace("SENTINEL", sentinel).encode(), "spec.yaml")
    assert [(p.code, p.line, p.column, p.message) for p in doc.problems] == [
        ("yaml.tag", 1, 4, f"a: the tag {shown} is not allowed; remove it and write the plain value")]
    expected = json.loads(json.dumps({"a": value, "b": 2}).replace("SENTINEL", sentinel))
    assert typed(doc.data) == typed(expected)
    assert not Path(sentinel).exists()


def test_tags_on_keys_and_list_items_are_refused(loader: type) -> None:
    assert found("!!str a: [!x 1, 2]\n") == [
        ("yaml.tag", 1, 1, "the tag !!str is not allowed; remove it and write the plain value"),
        ("yaml.tag", 1, 11, "a[0]: the tag !x is not allowed; remove it and write the plain value"),
    ]


# ---- anchors and aliases --------------------------------------------------

ANCHOR = "is not allowed (anchors and aliases can expand without bound); write the value out in full"


@pytest.mark.parametrize("source, expected", [
    ("a: &x 1\nb: *x\n", [("yaml.anchor", 1, 4, f"a: the anchor &x {ANCHOR}")]),
    ("--- &root\na: 1\n", [("yaml.anchor", 1, 5, f"the anchor &root {ANCHOR}")]),
    ("&k a: 1\n", [("yaml.anchor", 1, 1, f"the anchor &k {ANCHOR}")]),
    ("a:\n  b: &m\n    c: 1\n", [("yaml.anchor", 2, 6, f"a.b: the anchor &m {ANCHOR}")]),
    ("a: [1, &s 2]\n", [("yaml.anchor", 1, 8, f"a[1]: the anchor &s {ANCHOR}")]),
    ("a:\n- x\n- &i {b: 1}\n", [("yaml.anchor", 3, 3, f"a[1]: the anchor &i {ANCHOR}")]),
    ("a: {b: &f c}\n", [("yaml.anchor", 1, 8, f"a.b: the anchor &f {ANCHOR}")]),
    ("a: *x\n", [("yaml.alias", 1, 4, "a: the alias *x is not allowed; write the value out in full")]),
    ("a: [1, *x]\n", [("yaml.alias", 1, 8, "a[1]: the alias *x is not allowed; write the value out in full")]),
    ("*x : 1\n", [("yaml.alias", 1, 1, "the alias *x is not allowed; write the value out in full")]),
])
def test_anchors_and_aliases_are_refused_at_the_first(loader: type, source: str, expected: list) -> None:
    doc = load_bytes(source.encode(), "spec.yaml")
    assert found(source) == expected
    assert doc.fatal and doc.data is None


def test_problems_before_a_fatal_one_are_kept_and_none_after(loader: type) -> None:
    assert [p[:3] for p in found("a: yes\nb: &x 1\nc: no\n")] == [
        ("yaml.ambiguous-bool", 1, 4), ("yaml.anchor", 2, 4)]


# ---- keys -----------------------------------------------------------------

DUPLICATE = "already stated on line {}; keep one of the two"


@pytest.mark.parametrize("source, expected, data", [
    ("a: 1\nb: 2\na: 3\n", [("yaml.duplicate-key", 3, 1, "a: " + DUPLICATE.format(1))], {"a": 1, "b": 2}),
    ("a: 1\n'a': 2\n", [("yaml.duplicate-key", 2, 1, "a: " + DUPLICATE.format(1))], {"a": 1}),
    ("a: 1\na: 2\na: 3\n", [("yaml.duplicate-key", 2, 1, "a: " + DUPLICATE.format(1)),
                            ("yaml.duplicate-key", 3, 1, "a: " + DUPLICATE.format(1))], {"a": 1}),
    ("rope:\n  f: 1\n  g: 2\n  f: 3\n", [("yaml.duplicate-key", 4, 3, "rope.f: " + DUPLICATE.format(2))],
     {"rope": {"f": 1, "g": 2}}),
    ("layers:\n- kind: a\n  kind: b\n", [("yaml.duplicate-key", 3, 3, "layers[0].kind: " + DUPLICATE.format(2))],
     {"layers": [{"kind": "a"}]}),
    ("a: {b: 1, b: 2}\n", [("yaml.duplicate-key", 1, 11, "a.b: " + DUPLICATE.format(1))], {"a": {"b": 1}}),
    ("a:\n  b: 1\na:\n  b: yes\n", [("yaml.duplicate-key", 3, 1, "a: " + DUPLICATE.format(1)),
                                   ("yaml.ambiguous-bool", 4, 6,
                                    f"a.b: yes is a boolean in YAML 1.1 but text in YAML 1.2; write true or false "
                                    f"{QUOTE_HINT}")], {"a": {"b": 1}}),
    ("a: 1\nb:\n  a: 2\n", [], {"a": 1, "b": {"a": 2}}),
])
def test_duplicate_keys_are_refused_at_the_second(loader: type, source: str, expected: list, data: dict) -> None:
    doc = load_bytes(source.encode(), "spec.yaml")
    assert found(source) == expected
    assert doc.data == data and not doc.fatal


def test_a_duplicate_does_not_move_the_first_keys_location(loader: type) -> None:
    doc = load_bytes(b"rope:\n  f: 1\n  f: {g: 2}\n", "spec.yaml")
    assert doc.key_location(("rope", "f")) == Location(2, 3)
    assert doc.value_location(("rope", "f")) == Location(2, 6)
    assert doc.value_location(("rope", "f", "g")) is None


KEY_HINT = "not a field name; write a name (quote it to keep it as written)"


@pytest.mark.parametrize("source, expected", [
    ("1: x\n", [("yaml.key-type", 1, 1, f"the key 1 is a number, {KEY_HINT}")]),
    ("1.5: x\n", [("yaml.key-type", 1, 1, f"the key 1.5 is a number, {KEY_HINT}")]),
    ("null: x\n", [("yaml.key-type", 1, 1, f"the key null is null, {KEY_HINT}")]),
    ("~: x\n", [("yaml.key-type", 1, 1, f"the key ~ is null, {KEY_HINT}")]),
    ("? \n: x\n", [("yaml.key-type", 1, 2, f"the key (empty) is null, {KEY_HINT}")]),
    ("true: x\n", [("yaml.key-type", 1, 1, f"the key true is a boolean, {KEY_HINT}")]),
    ("? [a]\n: x\n", [("yaml.key-type", 1, 3, f"the key is a list, {KEY_HINT}")]),
    ("{a: 1}: x\n", [("yaml.key-type", 1, 1, f"the key is a mapping, {KEY_HINT}")]),
    ("rope:\n  ? {a: 1}\n  : x\n", [("yaml.key-type", 2, 5, f"rope: the key is a mapping, {KEY_HINT}")]),
    ("a: [{2: x}]\n", [("yaml.key-type", 1, 6, f"a[0]: the key 2 is a number, {KEY_HINT}")]),
])
def test_keys_that_are_not_text_are_refused_and_dropped(loader: type, source: str, expected: list) -> None:
    doc = load_bytes(f"{source}name: m\n".encode(), "spec.yaml")
    assert found(f"{source}name: m\n") == expected
    assert not doc.fatal and doc.data["name"] == "m" and all(type(key) is str for key in doc.data)


def test_quoted_number_keys_are_names(loader: type) -> None:
    assert load_bytes(b"'1': x\n\"true\": y\n", "spec.yaml").data == {"1": "x", "true": "y"}


# ---- structure: empty, not a mapping, documents, depth, size ---------------

@pytest.mark.parametrize("raw", [b"", b"\n\n", b"   \n", b"# only\n# comments\n", b"---\n", b"---\n...\n",
                                 b"~\n", b"null\n", b"--- null\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf# c\n"])
def test_empty_documents_are_refused(loader: type, raw: bytes) -> None:
    doc = load_bytes(raw, "spec.yaml")
    assert found(raw) == [("yaml.empty", 1, 1, EMPTY)]
    assert doc.fatal and doc.data is None


@pytest.mark.parametrize("source, kind, line, column", [
    ("- a\n- b\n", "a list", 1, 1), ("[1, 2]\n", "a list", 1, 1), ("x\n", "text", 1, 1),
    ("'x'\n", "text", 1, 1), ("yes\n", "text", 1, 1), ("42\n", "a number", 1, 1), ("4.5\n", "a number", 1, 1),
    ("true\n", "a boolean", 1, 1), ("# head\n--- |\n  text\n", "text", 2, 5),
])
def test_a_top_level_other_than_a_mapping_is_refused(loader: type, source: str, kind: str, line: int,
                                                    column: int) -> None:
    assert found(source) == [("yaml.not-a-mapping", line, column, f"the top level is {kind}; {MAPPING_HINT}")]


SECOND = "a second YAML document starts here; a spec file holds one: move it to a file of its own"


@pytest.mark.parametrize("source, line", [
    ("a: 1\n---\nb: 2\n", 2), ("---\na: 1\n---\n", 3), ("a: 1\n...\n---\nb: 1\n", 3),
    ("a: yes\n--- [unclosed\n", 2),
])
def test_a_second_document_is_refused_at_its_start(loader: type, source: str, line: int) -> None:
    assert [p for p in found(source) if p[0] != "yaml.ambiguous-bool"] == [
        ("yaml.multiple-documents", line, 1, SECOND)]


def test_an_explicit_single_document_is_fine(loader: type) -> None:
    assert load_bytes(b"%YAML 1.2\n---\na: 1\n...\n", "spec.yaml").data == {"a": 1}


DEEP = (f"nesting deeper than {MAX_DEPTH} levels; a spec nests a few: "
        "close the brackets or indentation that run away here")


def block_mappings(depth: int) -> str:
    """*depth* nested block mappings, each under the key ``k``."""
    return "".join("  " * level + "k:\n" for level in range(depth - 1)) + "  " * (depth - 1) + "k: 1\n"


def flow_sequences(depth: int) -> str:
    """A top mapping holding *depth* - 1 nested flow sequences."""
    return "a: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n"


@pytest.mark.parametrize("nest", [block_mappings, flow_sequences])
def test_the_deepest_nesting_allowed_is_read(loader: type, nest) -> None:
    doc = load_bytes(nest(MAX_DEPTH).encode(), "spec.yaml")
    assert doc.problems == () and not doc.fatal


@pytest.mark.parametrize("source, line, column", [
    (block_mappings(MAX_DEPTH + 1), MAX_DEPTH + 1, 2 * MAX_DEPTH + 1),
    (flow_sequences(MAX_DEPTH + 1), 1, 4 + MAX_DEPTH - 1),
    ("a:\n" + "".join(" " * level + "- \n" for level in range(1, 1100)), MAX_DEPTH + 1, MAX_DEPTH + 1),
])
def test_deeper_nesting_is_refused_as_soon_as_it_is_seen(loader: type, source: str, line: int,
                                                         column: int) -> None:
    doc = load_bytes(source.encode(), "spec.yaml")
    assert [(p.code, p.line, p.column, p.message) for p in doc.problems] == [("yaml.too-deep", line, column, DEEP)]
    assert doc.fatal and len(doc.problems[0].path) == MAX_DEPTH


@pytest.mark.parametrize("parser, column", [
    pytest.param(yaml.SafeLoader, 4 + MAX_DEPTH - 1, id="python"),
    # libyaml's scanner looks ahead over the brackets and meets its own cap of 1000 first.
    pytest.param(yaml.CSafeLoader, 4 + 1000 - 1, id="libyaml", marks=pytest.mark.skipif(
        not yaml.__with_libyaml__, reason="needs libyaml")),
])
def test_runaway_flow_nesting_is_too_deep_on_both_parsers(monkeypatch: pytest.MonkeyPatch, parser: type,
                                                          column: int) -> None:
    monkeypatch.setattr(yaml_source, "_LOADER", parser)
    assert found("a: " + "[" * 200_000) == [("yaml.too-deep", 1, column, DEEP)]


TOO_LARGE = ("the file is larger than 1 MiB (1048576 bytes); a spec is a few kilobytes: "
             "check that this is the right file")


def test_a_file_over_one_mib_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" + b"# padding\n" * (2 * MAX_BYTES // 10))
    assert big.stat().st_size > 2 * MAX_BYTES - 10
    doc = load_path(big)
    assert [(p.file, p.code, p.line, p.column, p.message) for p in doc.problems] == [
        (str(big), "yaml.too-large", 1, 1, TOO_LARGE)]
    assert doc.fatal and doc.data is None


@pytest.mark.parametrize("size, code", [(MAX_BYTES, None), (MAX_BYTES + 1, "yaml.too-large")])
def test_the_size_cap_is_exact(size: int, code: str | None) -> None:
    raw = b"a: " + b"x" * (size - 4) + b"\n"
    assert len(raw) == size
    assert [p.code for p in load_bytes(raw, "spec.yaml").problems] == ([code] if code else [])


# ---- encoding, control characters, line endings ----------------------------

@pytest.mark.parametrize("raw, line, column, byte", [
    (b"a: 1\nname: caf\xe9 au lait\n", 2, 10, "e9"),
    (b"name: \xc3\xa9t\xc3\xa9 \xff\n", 1, 11, "ff"),
    (b"a: 1\r\nb: 2\r\nc: \x80\r\n", 3, 4, "80"),
    (b"a: 1\rb: \xfe\r", 2, 4, "fe"),
    (b"a: \xe2\x82", 1, 4, "e2"),
    (b"\xff\xfea\x00:\x00", 1, 1, "ff"),
    (b"\xef\xbb\xbfa: \xc0\xaf\n", 1, 4, "c0"),
    (b"a: \xed\xa0\x80\n", 1, 4, "ed"),
])
def test_bytes_that_are_not_utf8_are_refused_where_they_are(raw: bytes, line: int, column: int, byte: str) -> None:
    doc = load_bytes(raw, "spec.yaml")
    assert found(raw) == [("yaml.encoding", line, column, f"byte 0x{byte} is not UTF-8; save the file as UTF-8")]
    assert doc.fatal and doc.data is None


@pytest.mark.parametrize("raw, line, column, code_point", [
    (b"a: \x00\n", 1, 4, "0000"), (b"a: 1\nb: x\x1by\n", 2, 5, "001B"), (b"a: \x7f\n", 1, 4, "007F"),
    (b"a: 1\n\x0c\n", 2, 1, "000C"), (b"a: '\xef\xbf\xbe'\n", 1, 5, "FFFE"), (b"a: 1\r\nb: \x08\r\n", 2, 4, "0008"),
    (b"a: 1\n\xef\xbb\xbfb: 2\n", 2, 1, "FEFF"), (b"\xef\xbb\xbf\xef\xbb\xbfa: 1\n", 1, 1, "FEFF"),
    (b"a: x\xef\xbb\xbfy\n", 1, 5, "FEFF"),
])
def test_control_characters_are_refused_where_they_are(raw: bytes, line: int, column: int, code_point: str) -> None:
    assert found(raw) == [
        ("yaml.control-character", line, column,
         f"the character U+{code_point} is not allowed in a spec file; delete it, "
         "or write it as an escape inside double quotes")]


def test_a_bom_is_skipped_and_columns_do_not_count_it(loader: type) -> None:
    doc = load_bytes(b"\xef\xbb\xbfa: yes\nb: 2\n", "spec.yaml")
    assert [(p.code, p.line, p.column) for p in doc.problems] == [("yaml.ambiguous-bool", 1, 4)]
    assert doc.data == {"a": "yes", "b": 2} and doc.key_location(("a",)) == Location(1, 1)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings_do_not_move_locations(loader: type, newline: str) -> None:
    source = newline.join(["name: x", "rope:", "  factor: on", "  factor: 2", "tab: 'a\tb'", ""])
    doc = load_bytes(source.encode(), "spec.yaml")
    assert [(p.code, p.line, p.column) for p in doc.problems] == [
        ("yaml.ambiguous-bool", 3, 11), ("yaml.duplicate-key", 4, 3)]
    assert doc.problems[1].message == "rope.factor: already stated on line 3; keep one of the two"
    assert doc.data == {"name": "x", "rope": {"factor": "on"}, "tab": "a\tb"}


def test_characters_count_as_one_column_whatever_their_bytes(loader: type) -> None:
    doc = load_bytes("note: 'é😀'\nk: ['😀', yes]\n".encode(), "spec.yaml")
    assert doc.value_location(("k", 0)) == Location(2, 5)
    assert [(p.code, p.line, p.column) for p in doc.problems] == [("yaml.ambiguous-bool", 2, 10)]


# ---- syntax errors (libyaml's texts) ----------------------------------------

libyaml_only = pytest.mark.skipif(not yaml.__with_libyaml__, reason="libyaml's problem texts")


@libyaml_only
@pytest.mark.parametrize("source, expected", [
    ("a: 1\n b: 2\n", [("yaml.syntax", 2, 3, "mapping values are not allowed in this context; quote a value that "
                                          "contains ': ', or indent the line like its neighbours")]),
    ('a: "unclosed\n', [("yaml.syntax", 2, 1, "found unexpected end of stream (while scanning a quoted scalar "
                                             "at line 1, column 4); close the quote or bracket opened above")]),
    ("a: [1, 2\nb: 3\n", [("yaml.syntax", 2, 2, "did not find expected ',' or ']' (while parsing a flow sequence "
                                               "at line 1, column 4); close the list with ]")]),
    ("a: {b: 1\nc: 2\n", [("yaml.syntax", 2, 2, "did not find expected ',' or '}' (while parsing a flow mapping "
                                               "at line 1, column 4); close the mapping with }")]),
    ("a:\n\t- b\n", [("yaml.syntax", 2, 1, "found character that cannot start any token (while scanning for the "
                                          "next token at line 2, column 1); indent with spaces, not tabs, and "
                                          "quote a value that starts with @ or `")]),
    ("a: 1\n- b\n", [("yaml.syntax", 2, 1, "did not find expected key (while parsing a block mapping at line 1, "
                                          "column 1); indent the line like the keys around it")]),
    ("a: yes\nb: @x\n", [("yaml.ambiguous-bool", 1, 4, "a: yes is a boolean in YAML 1.1 but text in YAML 1.2; "
                                                       f"write true or false {QUOTE_HINT}"),
                         ("yaml.syntax", 2, 4, "found character that cannot start any token (while scanning for "
                                               "the next token at line 2, column 4); indent with spaces, not "
                                               "tabs, and quote a value that starts with @ or `")]),
    ("a: !<x\n", [("yaml.syntax", 1, 7, "did not find the expected '>' (while scanning a tag at line 1, "
                                        "column 4); fix the YAML here")]),
    ("a: 1\n...\nb: 2\n", [("yaml.syntax", 3, 1, "did not find expected <document start>; a spec file holds "
                                                 "one document: delete what follows the `...` line")]),
    ("...\n", [("yaml.syntax", 1, 1, "did not find expected node content (while parsing a block node at line 1, "
                                     "column 1); fix the YAML here")]),
])
def test_syntax_errors_are_located_with_libyamls_problem(source: str, expected: list) -> None:
    doc = load_bytes(source.encode(), "spec.yaml")
    assert found(source) == expected
    assert doc.fatal and doc.data is None


def test_syntax_errors_are_located_by_the_python_parser_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_source, "_LOADER", yaml.SafeLoader)
    assert found("a: 1\n b: 2\n") == [
        ("yaml.syntax", 2, 3, "mapping values are not allowed here; quote a value that contains ': ', "
                              "or indent the line like its neighbours")]


# ---- several problems in one run --------------------------------------------

def test_every_value_level_problem_of_a_file_is_reported(loader: type) -> None:
    source = "name: x\nqk_norm: yes\nhidden: 010\nhidden: 1\nmult: .inf\nt: !!str 1\n1: x\nlist: [no, 1_0]\n"
    assert [p[:3] for p in found(source)] == [
        ("yaml.ambiguous-bool", 2, 10), ("yaml.ambiguous-number", 3, 9), ("yaml.duplicate-key", 4, 1),
        ("yaml.non-finite", 5, 7), ("yaml.tag", 6, 4), ("yaml.key-type", 7, 1),
        ("yaml.ambiguous-bool", 8, 8), ("yaml.ambiguous-number", 8, 12)]
    assert load_bytes(source.encode(), "spec.yaml").data == {
        "name": "x", "qk_norm": "yes", "hidden": "010", "mult": ".inf", "t": "1", "list": ["no", "1_0"]}


def test_problems_carry_file_pass_path_and_severity(loader: type) -> None:
    (problem,) = load_bytes(b"layers:\n- count: 2\n  mtp: yes\n", "specs/x.yaml").problems
    assert problem == Problem("specs/x.yaml", 3, 8, "load", "yaml.ambiguous-bool", Severity.ERROR,
                              f"layers[0].mtp: yes is a boolean in YAML 1.1 but text in YAML 1.2; write true or "
                              f"false {QUOTE_HINT}", ("layers", 0, "mtp"))


# ---- locations ---------------------------------------------------------------

LOCATED = b"""\
# a spec
name: tiny
rope_scaling:
  type: yarn
  factor: 40
layers:
- kind: dense
  count: 2
- {kind: moe, count: 6}
layer_types: [full, linear]
empty:
"""


@pytest.mark.parametrize("path, value, key", [
    ((), Location(2, 1), None),
    (("name",), Location(2, 7), Location(2, 1)),
    (("rope_scaling",), Location(4, 3), Location(3, 1)),
    (("rope_scaling", "factor"), Location(5, 11), Location(5, 3)),
    (("layers",), Location(7, 1), Location(6, 1)),
    (("layers", 0), Location(7, 3), None),
    (("layers", 0, "count"), Location(8, 10), Location(8, 3)),
    (("layers", 1), Location(9, 3), None),
    (("layers", 1, "count"), Location(9, 22), Location(9, 15)),
    (("layer_types", 1), Location(10, 21), None),
    (("empty",), Location(11, 7), Location(11, 1)),
    (("missing",), None, None),
    (("layers", 5), None, None),
])
def test_values_and_keys_are_located(loader: type, path: tuple, value: Location | None,
                                     key: Location | None) -> None:
    doc = load_bytes(LOCATED, "spec.yaml")
    assert doc.problems == ()
    assert doc.value_location(path) == value
    assert doc.key_location(path) == key


@pytest.mark.parametrize("path, where", [
    (("rope_scaling", "factor"), Location(5, 11)),
    (("rope_scaling", "missing"), Location(4, 3)),
    (("layers", 1, "mtp"), Location(9, 3)),
    (("layers", 7, "count"), Location(7, 1)),
    (("intermediate_size",), Location(2, 1)),
    ((), Location(2, 1)),
])
def test_locate_falls_back_to_the_nearest_stated_ancestor(loader: type, path: tuple, where: Location) -> None:
    assert load_bytes(LOCATED, "spec.yaml").locate(path) == where


def test_locate_prefers_the_key_when_the_value_is_not_stated() -> None:
    doc = SourceDoc("f", {}, (), False, key_locations={("a",): Location(3, 1)})
    assert doc.locate(("a", "b")) == Location(3, 1)


def test_a_refused_file_locates_everything_at_its_start(loader: type) -> None:
    doc = load_bytes(b"", "spec.yaml")
    assert doc.locate(("name",)) == FILE_START and doc.value_location(()) is None


# ---- reading files -----------------------------------------------------------

def test_load_path_names_the_file_as_given(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"a: yes\n")
    assert [p.file for p in load_path(spec).problems] == [str(spec)]
    assert [p.file for p in load_path(spec, "specs/spec.yaml").problems] == ["specs/spec.yaml"]


NOT_A_FILE = ("not a regular file (a FIFO, device or folder would block or mislead the read); a spec is a file")


def _fifo(tmp: Path) -> Path:
    os.mkfifo(tmp / "pipe.yaml")
    return tmp / "pipe.yaml"


def _loop(tmp: Path) -> Path:
    (tmp / "loop.yaml").symlink_to(tmp / "loop.yaml")
    return tmp / "loop.yaml"


@pytest.mark.parametrize("make, message", [
    (lambda tmp: tmp / "missing.yaml",
     "cannot read the file (No such file or directory); check the path and its permissions"),
    (_loop, "cannot read the file (Too many levels of symbolic links); check the path and its permissions"),
    (lambda tmp: tmp, NOT_A_FILE),
    (_fifo, NOT_A_FILE),  # read, it would block forever
])
def test_unreadable_files_are_a_problem(tmp_path: Path, make, message: str) -> None:
    doc = load_path(make(tmp_path), "spec.yaml")
    assert [(p.code, p.line, p.column, p.message) for p in doc.problems] == [("yaml.unreadable", 1, 1, message)]
    assert doc.fatal and doc.data is None


# ---- codes ---------------------------------------------------------------

ONE_OF_EACH = {
    "yaml.too-large": b"#" * (MAX_BYTES + 1), "yaml.encoding": b"\xff", "yaml.control-character": b"\x00",
    "yaml.syntax": b"a: [", "yaml.empty": b"", "yaml.not-a-mapping": b"[]", "yaml.multiple-documents": b"a: 1\n---\n",
    "yaml.too-deep": b"a: " + b"[" * MAX_DEPTH, "yaml.anchor": b"a: &x 1", "yaml.alias": b"a: *x",
    "yaml.too-many-values": b"a: [" + b"1," * MAX_VALUES + b"]",
    "yaml.tag": b"a: !x 1", "yaml.duplicate-key": b"a: 1\na: 1", "yaml.key-type": b"1: a",
    "yaml.ambiguous-bool": b"a: on", "yaml.ambiguous-number": b"a: 010", "yaml.non-finite": b"a: .nan",
    "yaml.huge-number": b"a: " + b"1" * (MAX_NUMBER_CHARS + 1),
    "yaml.tab": b"a:\t1", "yaml.merge-key": b"<<: {a: 1}",
}


@pytest.mark.parametrize("code", sorted(ONE_OF_EACH))
def test_each_code_is_emitted_by_its_input(loader: type, code: str) -> None:
    # PyYAML's own scanner refuses a tab after a colon itself: a syntax error there, refused either way.
    codes = [p.code for p in load_bytes(ONE_OF_EACH[code], "spec.yaml").problems]
    assert codes == (["yaml.syntax", code] if code == "yaml.tab" and loader is yaml.SafeLoader else [code])


def test_codes_table_is_exactly_the_codes_emitted() -> None:
    assert set(CODES) == set(ONE_OF_EACH) | {"yaml.unreadable"}
    assert FATAL_CODES < set(CODES)
    assert all(code.startswith("yaml.") and text for code, text in CODES.items())


# ---- dump ----------------------------------------------------------------

SPEC = {
    "name": "tiny", "hidden_size": 1024, "rms_norm_eps": 1e-06, "ffn_dim_multiplier": 1.3, "qk_norm": True,
    "head_dim": None, "flag": "yes", "code": "010", "exp": "7e3", "date": "2024-01-01", "note": "café: ok",
    "rope_scaling": {"type": "yarn", "factor": 40.0}, "layers": [{"kind": "dense", "count": 2}],
    "layer_types": ["full", "linear"], "empty": [], "none": {},
}

SPEC_TEXT = """\
# generated by modelspec
#
name: tiny
hidden_size: 1024
rms_norm_eps: 1.0e-06
ffn_dim_multiplier: 1.3
qk_norm: true
head_dim: null
flag: 'yes'
code: '010'
exp: '7e3'
date: '2024-01-01'
note: 'café: ok'
rope_scaling:
  type: yarn
  factor: 40.0
layers:
- kind: dense
  count: 2
layer_types:
- full
- linear
empty: []
none: {}
"""


def test_dump_writes_the_canonical_text() -> None:
    assert dump(SPEC, header="# generated by modelspec\n#\n") == SPEC_TEXT


def test_the_pure_python_dumper_writes_the_same_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yaml_source, "_DUMPER", yaml_source._canonical_dumper(yaml.SafeDumper))
    assert dump(SPEC, header="# generated by modelspec\n#\n") == SPEC_TEXT


def test_dump_reads_back_as_the_same_data(loader: type) -> None:
    doc = load_bytes(dump(SPEC).encode(), "spec.yaml")
    assert doc.problems == () and typed(doc.data) == typed(SPEC)


AMBIGUOUS_TEXTS = BOOL_SPELLINGS + [
    "true", "False", "null", "~", "", "010", "08", "1:30", "0b1010", "1_000", "-0x1F", "0x1F", "0o17", "7e3",
    "1.3e0", ".5", "12", "-3", ".nan", ".Inf", "-.inf", "1e999", "2024-01-01", "2024-01-01 10:00:00", "=", "<<",
    "1" * (MAX_NUMBER_CHARS + 1),
]


@pytest.mark.parametrize("text", AMBIGUOUS_TEXTS)
def test_text_either_yaml_would_misread_is_quoted(text: str) -> None:
    written = dump({"a": text, text: 1})
    assert written.count(f"'{text}'") == 2
    doc = load_bytes(written.encode(), "spec.yaml")
    assert doc.problems == () and doc.data == {"a": text, text: 1}
    assert yaml.load(written, Loader=yaml.SafeLoader) == {"a": text, text: 1}


@pytest.mark.parametrize("number", [0.1, 1e-06, 1e16, -2.5e-300, 5e-324, 1.7976931348623157e308, 100.0, -0.0,
                                    1 / 3])
def test_floats_read_back_as_the_same_float_in_both_yaml_versions(number: float) -> None:
    written = dump({"a": number})
    assert typed(load_bytes(written.encode(), "spec.yaml").data) == typed({"a": number})
    assert typed(yaml.load(written, Loader=yaml.SafeLoader)) == typed({"a": number})


@pytest.mark.parametrize("text, written", [
    ("x\x85y", 'a: "x\\Ny"\n'), ("x\u2028y", 'a: "x\\Ly"\n'), ("long text\u2029" * 3, 'a: "' + "long text\\P" * 3 + '"\n'),
])
def test_yaml11_line_breaks_in_text_are_escaped(text: str, written: str) -> None:
    assert dump({"a": text}) == written
    assert load_bytes(written.encode(), "spec.yaml").data == {"a": text}


def test_tuples_are_written_as_lists() -> None:
    assert dump({"a": (1, (2, "x"))}) == "a:\n- 1\n- - 2\n  - x\n"


@pytest.mark.parametrize("data, error, message", [
    ({"a": math.nan}, ValueError, "a is nan; a spec holds finite numbers only"),
    ({"a": [math.inf]}, ValueError, "a[0] is inf; a spec holds finite numbers only"),
    ({"a": {"b": -math.inf}}, ValueError, "a.b is -inf; a spec holds finite numbers only"),
    ({1: "x"}, ValueError, "the top level: key 1 is not text; a spec's keys are field names"),
    ({"a": {None: "x"}}, ValueError, "a: key None is not text; a spec's keys are field names"),
    ({"a": {True: "x"}}, ValueError, "a: key True is not text; a spec's keys are field names"),
    ({"a": 10 ** MAX_NUMBER_CHARS}, ValueError, f"a has more than {MAX_NUMBER_CHARS} digits"),
    ({"a": {1, 2}}, TypeError, "a is a set; a spec holds dicts, lists, str, int, float, bool and None"),
    ({"a": b"x"}, TypeError, "a is a bytes; a spec holds dicts, lists, str, int, float, bool and None"),
    ({"a": Severity.ERROR}, TypeError, "a is a Severity; a spec holds dicts, lists, str, int, float, bool and None"),
    ([1], TypeError, "a spec is a mapping, not a list"),
])
def test_dump_refuses_what_load_would_refuse(data: object, error: type, message: str) -> None:
    with pytest.raises(error) as raised:
        dump(data)  # type: ignore[arg-type]
    assert str(raised.value) == message


def test_dump_refuses_nesting_load_would_refuse() -> None:
    deep: dict = {"k": 1}
    for _ in range(MAX_DEPTH - 1):
        deep = {"k": deep}
    assert load_bytes(dump(deep).encode(), "spec.yaml").data == deep
    with pytest.raises(ValueError) as raised:
        dump({"k": deep})
    assert str(raised.value) == "k" + ".k" * (MAX_DEPTH - 1) + f" nests deeper than {MAX_DEPTH} levels"


@pytest.mark.parametrize("header, written", [
    ("", "a: 1\n"), ("# one", "# one\na: 1\n"), ("# one\n\n#two\n", "# one\n\n#two\na: 1\n"),
])
def test_dump_writes_the_header_comment_first(header: str, written: str) -> None:
    assert dump({"a": 1}, header=header) == written


def test_dump_refuses_a_header_that_is_not_comments() -> None:
    with pytest.raises(ValueError) as raised:
        dump({"a": 1}, header="# ok\nname: x\n")
    assert str(raised.value) == "header line 'name: x' is not a comment; start it with #"


# ---- properties ------------------------------------------------------------

FRAGMENTS = ["a", "b", ": ", ":", "- ", "-", "\n", "\r\n", "\r", "  ", "\t", "[", "]", "{", "}", ", ", "&x ",
             "*x", "!!str ", "!x ", "? ", "'", '"', "#", "---\n", "...\n", "|\n", ">-\n", "yes", "010", "1:30",
             ".nan", "1e3", "~", "\ufeff", "é", "\x00", "\\", "%YAML 1.2\n", "0x1F", "1_0", "true"]

yaml_ish = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


def check_shape(doc: SourceDoc) -> None:
    """What every SourceDoc promises, whatever the input."""
    assert isinstance(doc, SourceDoc)
    assert doc.fatal == (doc.data is None) == any(p.code in FATAL_CODES for p in doc.problems)
    assert doc.fatal or isinstance(doc.data, dict)
    assert all(p.code in CODES and p.line >= 1 and p.column >= 1 for p in doc.problems)
    assert list(doc.problems) == sorted(doc.problems)


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=200) | st.text(max_size=200).map(str.encode) | yaml_ish.map(str.encode))
def test_load_bytes_never_raises(raw: bytes) -> None:
    check_shape(load_bytes(raw, "fuzz.yaml"))


@settings(max_examples=examples(200), suppress_health_check=[HealthCheck.too_slow])
@given(source=yaml_ish)
def test_both_parsers_agree_on_everything_but_syntax_texts(source: str) -> None:
    raw = source.encode()
    docs, default = [], yaml_source._LOADER
    for parser in (yaml.SafeLoader, yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader):
        yaml_source._LOADER = parser
        try:
            docs.append(load_bytes(raw, "fuzz.yaml"))
        finally:
            yaml_source._LOADER = default
    python, libyaml = docs
    check_shape(python)
    if not any(p.code == "yaml.syntax" for p in python.problems + libyaml.problems):
        assert python.problems == libyaml.problems
        assert typed(python.data) == typed(libyaml.data)


scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
           | st.text())
json_like = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                         | st.dictionaries(st.text(), inner, max_size=4), max_leaves=25)


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(st.text(), json_like, max_size=6))
def test_dump_then_load_gives_the_same_data(data: dict) -> None:
    doc = load_bytes(dump(data).encode(), "spec.yaml")
    assert doc.problems == ()
    assert typed(doc.data) == typed(data)


# Text the round-trip pass meets: names, kinds and dtypes, YAML 1.1 words, numbers spelled as text, long keys.
spec_text = (st.from_regex(r"[A-Za-z][A-Za-z0-9._-]{0,200}", fullmatch=True) | st.text()
             | st.sampled_from(["yes", "No", "on", "null", "Null", "true", "010", "7e3", "1_000", "0x1F", "1:30",
                                ".inf", "2024-01-01", "-", "a: b", "a #b", "", " x", "x\n", "<<", "=", "~"]))
spec_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | spec_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(spec_text, inner, max_size=4), max_leaves=25)


@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(spec_text, spec_like, max_size=6))
def test_survives_dump_says_exactly_whether_dump_and_load_keep_the_data(data: dict) -> None:
    # the round-trip pass skips the dump and the parse on its word: True must be a guarantee
    kept = typed(load_bytes(dump(data).encode(), "spec.yaml").data) == typed(data)
    assert survives_dump(data) == kept


@pytest.mark.parametrize("data", [{"a": (1, 2)}, {"a": {1: 2}}, {"a": MappingProxyType({"b": 1})}, {"a": 10 ** 4000}])
def test_survives_dump_does_not_answer_for_what_a_file_cannot_hold(data: dict) -> None:
    assert survives_dump(data) is False


def test_survives_dump_stops_at_the_nesting_cap() -> None:
    nested: dict = {"a": 1}
    for _ in range(MAX_DEPTH):
        nested = {"a": nested}
    assert survives_dump(nested) is False


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029"])
@pytest.mark.parametrize("where", ["a: 1\n# note{c}more\nb: 2\n", "a: 1\nb: x{c}y\n"])
def test_a_yaml_1_1_line_break_is_refused_where_it_stands(char: str, where: str) -> None:
    # libyaml breaks lines at it and editors do not: every later line number would be off by one
    doc = load_bytes(where.format(c=char).encode("utf-8"), "f.yaml")
    column = where.format(c=char).split("\n")[1].index(char) + 1
    assert (doc.data, [(p.line, p.column, p.code, p.message) for p in doc.problems]) == (None, [(
        2, column, "yaml.control-character",
        f"the character U+{ord(char):04X} is a line break in YAML 1.1 but not in YAML 1.2 or an editor; write a "
        "plain newline, or an escape inside double quotes (\\N, \\L, \\P)")])


@pytest.mark.parametrize("escape", ["\\N", "\\L", "\\P"])
def test_the_same_break_escaped_in_double_quotes_is_text(escape: str) -> None:
    doc = load_bytes(f'a: "x{escape}y"\n'.encode(), "f.yaml")
    assert (doc.problems, doc.data) == ((), {"a": "x" + {"\\N": "\x85", "\\L": "\u2028", "\\P": "\u2029"}[escape]
                                              + "y"})


# ---- what YAML 1.1 readers (PyYAML's own, ruamel.yaml: fmt) refuse or read otherwise ----------------------------

@pytest.mark.parametrize("text, where, message", [
    ("hidden_size:\t768\n", (1, 13), "hidden_size: a tab after the key's colon; YAML 1.1 readers (PyYAML, ruamel.yaml, "
                                    "so fmt) refuse the file: write a space"),
    ("a: 1\nhidden_size: \t768\n", (2, 14), "hidden_size: a tab after the key's colon; YAML 1.1 readers (PyYAML, "
                                         "ruamel.yaml, so fmt) refuse the file: write a space"),
    ("v: {hidden_size:\t8}\n", (1, 17), "v.hidden_size: a tab after the key's colon; YAML 1.1 readers (PyYAML, "
                                      "ruamel.yaml, so fmt) refuse the file: write a space"),
])
def test_a_tab_after_a_keys_colon_is_refused_at_the_tab(loader: type, text: str, where: tuple[int, int],
                                                        message: str) -> None:
    if loader is yaml.SafeLoader:  # PyYAML's own scanner refuses the tab itself too, at the same place
        assert [problem[:3] for problem in found(text)] == [("yaml.syntax", *where), ("yaml.tab", *where)]
    else:
        assert found(text) == [("yaml.tab", *where, message)]


def test_a_tab_inside_a_quoted_value_or_a_comment_is_text(loader: type) -> None:
    assert found('a: "x\ty"  #\tnote\nb: 1\n') == []


def test_a_merge_key_is_refused_and_a_quoted_one_is_a_key(loader: type) -> None:
    assert found("name: x\n<<: {vocab_size: 5}\n") == [
        ("yaml.merge-key", 2, 1, "a << key merges another mapping in YAML 1.1 (PyYAML, ruamel.yaml) but is a plain "
                                 "key in YAML 1.2; write the keys out in full")]
    assert found('"<<": 1\n') == []
