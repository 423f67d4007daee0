"""Text a spec, a config or a file name carries is inert in every medium modelspec writes (issue 12, class 1).

A pull request chooses spec values, keys and file names; the PR workflow posts
``diff --format markdown`` as a bot comment and runs ``check --format github``
in an Actions log. These tests feed hostile text to each escaping function,
to every report format and to every command that prints spec or config text,
and assert what the medium must not see: a control character or ANSI escape,
a line that starts a workflow command (``::``, leading blanks stripped, as the
runner strips them) or holds the legacy ``##[`` form, Markdown that leaves its
cell (a heading, an image, a link, HTML, a mention).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.spec.escape import (defuse_commands, json_text, markdown_code, markdown_text, printable, xml_text)
from pipeline.spec import escape
from pipeline.spec.problems import FileResult, Outcome, PASSES, Problem, RunResult, Severity, all_codes
from reporters_registry import REPORTERS
from tests.spec_repos import commit_all, git, git_repo, make_repo


#: Every character a terminal, a line splitter or a bidi-aware editor acts on, one of each class.
CONTROL_CHARACTERS = ["\x00", "\x07", "\x08", "\x0b", "\x0c", "\r", "\x1b", "\x1c", "\x1d", "\x1e", "\x7f",
                      "\x85", "\x9b", "\u2028", "\u2029", "\u202e", "\u2066", "\u200f", "\u061c"]

#: One text with everything at once: workflow commands, Markdown structure, a mention, HTML, ANSI colour.
HOSTILE = ("bf16\n::error::pwned\n  ::add-mask::x ##[error]legacy\n# Heading ![img](https://e.invalid/x.png) "
           "[link](https://e.invalid) @octocat #12 <b>bold</b> www.e.invalid \x1b[31mred\x1b[0m \u2028sep|pipe")

#: The commands GitHub's reporter means, by the start of their lines.
GITHUB_OWN = re.compile(r"^::(error|warning) file=|^::stop-commands::modelspec-|^::modelspec-[0-9a-f]{32}::$"
                        r"|^::(error|warning)::\d+ more problem")


def assert_inert(text: str, own: re.Pattern[str] | None = None) -> None:
    """No line of *text* starts a workflow command or holds ``##[`` (but lines *own* matches), and no control
    character other than a line break or tab is in it."""
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", text), \
        repr(text)
    for line in text.split("\n"):
        if own is not None and own.match(line):
            continue
        assert not line.lstrip().startswith("::"), line
        assert "##[" not in line, line


# --- the escaping functions --------------------------------------------------------------------------------

@pytest.mark.parametrize("char", CONTROL_CHARACTERS)
def test_printable_shows_every_control_character_escaped(char: str) -> None:
    shown = printable(f"a{char}b")
    assert shown == "a" + char.encode("unicode_escape").decode("ascii") + "b"
    assert len(shown.splitlines()) == 1


def test_printable_shows_an_undecodable_byte_of_a_file_name_as_the_byte() -> None:
    assert printable("a\udcffb") == "a\\xffb"


@pytest.mark.parametrize(("text", "defused"), [
    ("::error::x", "\\x3a:error::x"),
    ("  ::warning file=a::x", "  \\x3a:warning file=a::x"),
    ("\t::add-mask::secret", "\t\\x3a:add-mask::secret"),
    ("a ##[error]b ##[group]", "a #\\x23[error]b #\\x23[group]"),
    ("ok\n::stop-commands::t", "ok\n\\x3a:stop-commands::t"),
    ("a::b", "a::b"),
    (": :x", ": :x"),
])
def test_defuse_commands(text: str, defused: str) -> None:
    assert defuse_commands(text) == defused
    assert_inert(defused)


@given(st.text(alphabet="aZ09_./+=@,-:#[ \t\x01\u2028\udcff", max_size=12))
def test_printable_takes_its_shortcut_only_where_escaping_changes_nothing(text: str) -> None:
    # A leading control character and line break send the text down the escaping path whatever it holds; what
    # follows the break is then escaped as the text alone would be, shortcut or not.
    assert printable("\x00\n" + text, keep="\n") == "\\x00\n" + printable(text)


@given(st.text(alphabet="a:#[ \t\n\r\x01\x0b\x85\u2028\u202e\udcff", max_size=16),
       st.sampled_from(["", "\n", "\n\t", "\n\r"]))
def test_printable_keeps_exactly_the_characters_it_is_told_to(text: str, keep: str) -> None:
    # The definition, a character at a time: a kept character stays, any other the escape class holds is
    # escaped, then commands are defused. printable's shortcuts (plain text, nothing to escape but what it
    # keeps) must give the same.
    def shown(char: str) -> str:
        if char in keep or not escape._UNPRINTABLE.fullmatch(char):
            return char
        if "\udc80" <= char <= "\udcff":
            return f"\\x{ord(char) - 0xdc00:02x}"
        return char.encode("unicode_escape").decode("ascii")

    assert printable(text, keep=keep) == defuse_commands("".join(map(shown, text)))


def test_the_escape_class_is_the_documented_code_points() -> None:
    documented = {*range(0x00, 0x20), *range(0x7F, 0xA0), 0x61C, 0x200E, 0x200F, 0x2028, 0x2029,
                  *range(0x202A, 0x202F), *range(0x2066, 0x206A), *range(0xD800, 0xE000), 0xFFFE, 0xFFFF}
    assert {point for point in range(0x10000) if escape._UNPRINTABLE.match(chr(point))} == documented
    assert {point for point in range(0x10000) if escape._unprintable_but("\n\t").match(chr(point))} == \
        documented - {0x0A, 0x09}


def test_printable_defuses_commands_on_every_line_it_keeps() -> None:
    assert printable("x\n::error::y", keep="\n") == "x\n\\x3a:error::y"
    assert printable("x\n::error::y") == "x\\n::error::y"  # one line: the command is mid-line


def test_json_text_is_lossless_and_inert() -> None:
    value = {"k\x85": HOSTILE + "\udcff\x9b"}
    document = json_text(json.dumps(value, ensure_ascii=False))
    assert_inert(document)
    assert json.loads(document) == value
    assert "#\\u0023[" in document


def test_xml_text_is_lossless_and_inert() -> None:
    message = printable(HOSTILE, keep="\n")
    element = ElementTree.Element("failure")
    element.text = message
    document = xml_text(ElementTree.tostring(element, encoding="unicode"))
    assert_inert(document)
    assert ElementTree.fromstring(document).text == message


@pytest.mark.parametrize(("text", "escaped"), [
    ("plain words", "plain words"),
    ("a|b", "a\\|b"),
    ("`code`", "\\`code\\`"),
    ("line1\nline2", "line1<br>line2"),
    ("hidden_size", "hidden\\_size"),
    ("<b>&amp;</b>", "\\<b\\>\\&amp;\\</b\\>"),
    ("*x* ~y~ [z] $w$ \\", "\\*x\\* \\~y\\~ \\[z\\] \\$w\\$ \\\\"),
    ("![i](u)", "\\!\\[i\\](u)"),
    ("# heading", "\\#\u200b heading"),
    ("ask @octocat", "ask \\@\u200boctocat"),
    ("see https://e.invalid", "see https\u200b://e.invalid"),
    ("see www.e.invalid", "see www\u200b.e.invalid"),
    ("a\x1bb", "a\\\\x1bb"),
])
def test_markdown_text(text: str, escaped: str) -> None:
    assert markdown_text(text) == escaped


@pytest.mark.parametrize(("text", "in_table", "span"), [
    ("deepseek-v3", True, "`deepseek-v3`"),
    ("a|`b`", True, "`` a\\|`b` ``"),
    ("a|b", False, "`a|b`"),
    ("x\n# h", True, "`x\\n# h`"),
    ("::error::x", False, "`\\x3a:error::x`"),
])
def test_markdown_code(text: str, in_table: bool, span: str) -> None:
    assert markdown_code(text, in_table) == span


# --- every report format -----------------------------------------------------------------------------------

def _hostile_run() -> RunResult:
    file = "specs/::error::x ##[y] @a.yaml"
    problems = (Problem(file, 3, 1, "schema", "schema.enum", Severity.ERROR, HOSTILE, ("torch_dtype",)),
                Problem(file, 4, 1, "schema", "schema.unknown-key", Severity.ERROR, "unknown key",
                        ("::error::k\n##[x]",)))
    outcomes = tuple((name, Outcome.FAILED if name == "schema" else Outcome.PASSED) for name in PASSES)
    return RunResult((FileResult(file, outcomes, problems),))


@pytest.mark.parametrize("fmt", sorted(REPORTERS))
def test_every_format_is_inert(fmt: str) -> None:
    text = REPORTERS[fmt].render(_hostile_run(), all_codes())
    assert_inert(text, GITHUB_OWN if fmt == "github" else None)


def test_json_and_sarif_carry_the_message_as_the_problem_has_it() -> None:
    run = _hostile_run()
    message = run.problems[0].message
    report = json.loads(REPORTERS["json"].render(run, all_codes()))
    assert report["files"][0]["problems"][0]["message"] == message
    assert report["files"][0]["problems"][1]["path"] == ["::error::k\n##[x]"]
    sarif = json.loads(REPORTERS["sarif"].render(run, all_codes()))
    assert sarif["runs"][0]["results"][0]["message"]["text"] == message
    assert sarif["runs"][0]["results"][1]["locations"][0]["logicalLocations"][0]["name"] == \
        "\\x3a:error::k\\n#\\x23[x]"


def test_junit_is_well_formed_xml_with_the_message() -> None:
    run = _hostile_run()
    root = ElementTree.fromstring(REPORTERS["junit"].render(run, all_codes()).encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert run.problems[0].message.replace("\n", "\n    ") in failure.text


def test_markdown_keeps_each_row_in_its_table() -> None:
    page = REPORTERS["markdown"].render(_hostile_run(), all_codes())
    rows = [line for line in page.splitlines() if line.startswith("| specs/")]
    assert len(rows) == 2
    assert all(row.count(" | ") == 3 for row in rows)
    assert not re.search(r"(?<!\\)[@#!<\[]", page.split("\n", 1)[1].split("| --- |")[1])


def test_a_message_spans_lines_but_every_line_is_inert() -> None:
    text = REPORTERS["text"].render(_hostile_run(), all_codes())
    assert "    \\x3a:error::pwned" in text.splitlines()


# --- every command that prints spec or config text ---------------------------------------------------------

def _invoke(root: Path, *args: str) -> "CliRunner":
    return CliRunner().invoke(main, [args[0], "--root", str(root), *args[1:]], catch_exceptions=False)


HOSTILE_KEY = "::error::k ##[x] @a\u2028y\x1b[2J"


@pytest.fixture
def hostile_repo(tmp_path: Path) -> Path:
    """The fixture catalogue, with a spec whose key, dtype and file name are hostile."""
    repo = make_repo(tmp_path / "repo")
    text = (repo / "specs/llama/llama-3.1-8b.yaml").read_text(encoding="utf-8")
    text = text.replace("torch_dtype: bfloat16", f"torch_dtype: {json.dumps(HOSTILE)}\n{json.dumps(HOSTILE_KEY)}: 1")
    (repo / "specs/llama/::error::f ##[y].yaml").write_text(text.replace("llama-3.1-8b", "llama-hostile"),
                                                            encoding="utf-8")
    return repo


@pytest.mark.parametrize("fmt", sorted(REPORTERS))
def test_check_prints_every_format_inert(hostile_repo: Path, fmt: str) -> None:
    result = _invoke(hostile_repo, "check", "--format", fmt)
    assert result.exit_code == 1
    assert "schema.enum" in result.output
    assert_inert(result.output, GITHUB_OWN if fmt == "github" else None)


def test_check_text_names_the_hostile_key_escaped_on_one_line(hostile_repo: Path) -> None:
    lines = _invoke(hostile_repo, "check").output.splitlines()
    unknown = [line for line in lines if "[schema.unknown-key]" in line]
    assert unknown == ["specs/llama/::error::f #\\x23[y].yaml:11:1: error [schema.unknown-key] unknown model spec "
                       "key '::error::k #\\x23[x] @a\\u2028y\\x1b[2J': a model spec states the model only (its "
                       "fields are in the schema, schemas/model-spec.schema.json), and a run's strategy, such as its "
                       "parallel degrees or recompute, belongs in its execution spec"]


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_diff_prints_inert(hostile_repo: Path, fmt: str) -> None:
    git(hostile_repo, "init", "-q", "-b", "main")
    hostile = next((hostile_repo / "specs/llama").glob("::*"))
    hostile.rename(hostile_repo / "specs/llama/later")
    commit_all(hostile_repo, "catalogue")
    (hostile_repo / "specs/llama/later").rename(hostile)
    result = _invoke(hostile_repo, "diff", "HEAD", "--format", fmt)
    assert result.exit_code == 0, result.output
    assert "does not resolve" in result.output
    assert_inert(result.output)


def test_diff_markdown_keeps_a_changed_value_in_its_cell(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    spec = repo / "specs/llama/llama-3.1-8b.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("torch_dtype: bfloat16", "torch_dtype: float16"),
                    encoding="utf-8")
    lines = _invoke(repo, "diff", "HEAD", "--format", "markdown").output.splitlines()
    assert "| `llama-3.1-8b` | torch\\_dtype bfloat16 → float16 |" in lines


def test_import_names_a_hostile_config_key_inert(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
                                  "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
                                  HOSTILE_KEY: 1}), encoding="utf-8")
    result = CliRunner().invoke(main, ["import", "--root", str(repo), str(config)])
    assert result.exit_code == 1
    assert "error [import.unknown-key] ::error::k #\\x23[x] @a\\u2028y\\x1b[2J is a key" in result.stderr
    assert_inert(result.stderr)
    assert_inert(result.stdout)


def test_regen_and_fmt_name_a_hostile_file_inert(hostile_repo: Path) -> None:
    for args in (("regen", "--check"), ("regen",), ("fmt", "--check"), ("list",), ("show", "llama-3.1-8b")):
        result = CliRunner().invoke(main, [args[0], "--root", str(hostile_repo), *args[1:]])
        assert result.exit_code in (0, 1, 2), (args, result.output)
        assert_inert(result.stdout)
        assert_inert(result.stderr)


# --- the schema leaves no field free text ------------------------------------------------------------------

def _schema_messages(yaml_text: str) -> list:
    from pipeline.spec.schema_pass import schema_problems
    from pipeline.spec.yaml_source import load_bytes

    base = "name: x\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n"
    return [(p.pointer, p.code, p.message) for p in schema_problems(load_bytes((base + yaml_text).encode(), "s"))]


DTYPES = ("bfloat16, float16, float32, float64, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn_x2, int8, "
          "int16, int32, int64, uint8, uint16, uint32, uint64, bool")


@pytest.mark.parametrize(("yaml_text", "expected"), [
    ('torch_dtype: "bf16\\n# x"\n', [("/torch_dtype", "schema.enum", f"torch_dtype must be one of {DTYPES} (a torch. "
                                      "prefix may be written), got 'bf16\\n# x'")]),
    ("torch_dtype: fp8\n", [("/torch_dtype", "schema.enum", f"torch_dtype must be one of {DTYPES} (a torch. prefix "
                             "may be written), got 'fp8'")]),
    ('vision: {hidden_size: 8, num_hidden_layers: 1, num_attention_heads: 1, name: "a b"}\n',
     [("/vision/name", "schema.pattern", "vision.name must be letters, digits, '.', '_' and '-', not starting with "
       "'.' (it names the spec's artifact file), got 'a b'")]),
    ('layer_types: [full_attention, "@x"]\n',
     [("/layer_types/1", "schema.pattern", "layer_types[1] must be lower-case letters, digits and _, starting with a "
       "letter (a layer kind's name), got '@x'")]),
    ('layers: [{kind: "<b>", count: 2}]\n',
     [("/layers/0/kind", "schema.pattern", "layers[0].kind must be lower-case letters, digits and _, starting with a "
       "letter (a layer kind's name), got '<b>'")]),
])
def test_a_free_text_field_is_refused(yaml_text: str, expected: list) -> None:
    assert _schema_messages(yaml_text) == expected


@pytest.mark.parametrize("dtype", ["bfloat16", "torch.bfloat16", "float8_e4m3fn", "torch.float32", "bool"])
def test_a_checkpoint_dtype_is_accepted(dtype: str) -> None:
    assert _schema_messages(f"torch_dtype: {dtype}\n") == []


def test_the_schema_lists_the_model_s_checkpoint_dtypes() -> None:
    from pipeline.spec.model import CHECKPOINT_DTYPES
    from pipeline.spec.resources import schema_path

    schema = json.loads(schema_path("model-spec.schema.json").read_text(encoding="utf-8"))
    assert schema["properties"]["torch_dtype"]["enum"] == [*CHECKPOINT_DTYPES,
                                                            *(f"torch.{d}" for d in CHECKPOINT_DTYPES), None]


def test_no_string_field_of_the_schema_is_free_text() -> None:
    from pipeline.spec.resources import schema_path

    def strings(node, where=""):
        if isinstance(node, dict):
            types = node.get("type")
            if types == "string" or (isinstance(types, list) and "string" in types):
                yield where, node
            for key, value in node.items():
                yield from strings(value, f"{where}/{key}")
        elif isinstance(node, list):
            for index, value in enumerate(node):
                yield from strings(value, f"{where}/{index}")

    schema = json.loads(schema_path("model-spec.schema.json").read_text(encoding="utf-8"))
    free = [where for where, node in strings(schema) if "pattern" not in node and "enum" not in node]
    assert free == []


def test_a_usage_error_naming_a_hostile_path_is_inert(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    result = CliRunner().invoke(main, ["check", "--root", str(repo), str(tmp_path / "a\n::error::x ##[y]")])
    assert result.exit_code == 2
    assert "a\\n::error::x #\\x23[y]: no such file or folder" in result.stderr
    assert_inert(result.stderr)
