"""Configuration and inline ignores: the README's Configure section run as written, and each rule's edge.

The README's ``configure-toml`` block is the ``pyproject.toml`` of a throwaway
repository, its ``configure-inline`` line is in one of its specs, and each
line of its ``configure-commands`` block is run there, verbatim (split as a
shell would), with its exact output and exit code.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pipeline.check.config import Config, load_config, matches
from pipeline.spec.problems import all_codes
from pipeline.check.suppress import inline_ignores
from spec_repos import run_in as run

README = Path(__file__).resolve().parents[1] / "README.md"

SPEC = ("name: {name}\nhidden_size: 896\nnum_hidden_layers: 4\nnum_attention_heads: 8\nvocab_size: 32000\n"
        "num_key_value_heads: 2\nintermediate_size: 4864\n{extra}arch: llama\n"
        # the flags the llama inventory reads, so the spec can be counted (else: params.uncounted)
        "tie_word_embeddings: false\nqkv_bias: false\no_bias: false\nmlp_bias: false\nnorm_bias: false\n")


def readme_block(marker: str) -> str:
    match = re.search(rf"<!-- {marker} -->\n```[a-z]*\n(.*?)```\n<!-- /{marker} -->", README.read_text("utf-8"), re.S)
    assert match, f"README.md has no {marker} block"
    return match.group(1)




@pytest.fixture
def configured(tmp_path: Path) -> Path:
    """A repository with the README's configuration, an inline ignore, a per-file ignore and an excluded draft."""
    (tmp_path / "pyproject.toml").write_text(readme_block("configure-toml"), encoding="utf-8")
    files = {
        "specs/acme/acme-1b.yaml": SPEC.format(name="acme-1b", extra="max_position_embeddings: null\n"
                                               + readme_block("configure-inline")),
        "specs/legacy/old.yaml": SPEC.format(name="old", extra="max_position_embeddings: null\n"),
        "specs/drafts/wip.yaml": "name: [unfinished\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


NULL_LINE = ("specs/acme/acme-1b.yaml:8:26: warning [roundtrip.null] [*] max_position_embeddings is null, which is the "
             "same as leaving it out; remove the line\n")

#: What each README command prints in the configured repository: exit code and stdout.
README_RESULTS = [
    (1, NULL_LINE + "0 errors, 1 warning in 1 file (1 file clean); --strict: warnings fail the run; "
     "1 fixable with `--fix`\n"),
    (0, NULL_LINE + "0 errors, 1 warning in 1 file (1 file clean); 1 fixable with `--fix`\n"),
    (1, NULL_LINE + "0 errors, 1 warning in 1 file (1 file clean); --strict: warnings fail the run; "
     "1 fixable with `--fix`\n"),
]


def test_the_readme_commands_run_as_written(configured: Path) -> None:
    lines = readme_block("configure-commands").splitlines()
    assert len(lines) == len(README_RESULTS)
    results = []
    for line in lines:
        words = shlex.split(line)
        assert words[0] == "modelspec"
        code, out, _ = run(configured, words[1:])
        results.append((code, out))
    assert results == README_RESULTS


def test_without_the_inline_ignore_the_warning_shows(configured: Path) -> None:
    spec = configured / "specs" / "acme" / "acme-1b.yaml"
    spec.write_text(spec.read_text("utf-8").replace("  # modelspec: ignore[roundtrip.torch-prefix]", ""), "utf-8")
    code, out, _ = run(configured, ["check", "--no-strict"])
    assert (code, out) == (0, NULL_LINE + "specs/acme/acme-1b.yaml:9:14: warning [roundtrip.torch-prefix] "
                           "[*] torch_dtype 'torch.bfloat16' is read as 'bfloat16'; write bfloat16\n"
                           "0 errors, 2 warnings in 1 file (1 file clean); 2 fixable with `--fix`\n")


def test_an_excluded_file_named_on_the_command_line_is_checked(configured: Path) -> None:
    code, out, _ = run(configured, ["check", "specs/drafts/wip.yaml"])
    assert code == 1 and out.startswith("specs/drafts/wip.yaml:2:1: error [yaml.syntax] ")


def _write(root: Path, name: str, text: str) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("toml", "stderr"), [
    ('[tool.modelspec]\nselct = ["roundtrip"]\n',
     "pyproject.toml:2:1: error [config.unknown-key] unknown key tool.modelspec.selct; did you mean 'select'?\n"),
    ('[tool.modelspec]\nignore = ["roundtrip.nul"]\n',
     "pyproject.toml:2:11: error [config.unknown-code] tool.modelspec.ignore: 'roundtrip.nul' names no code "
     "modelspec reports; did you mean roundtrip.null or roundtrip or roundtrip.lost?\n"),
    ('[tool.modelspec]\nstrict = "yes"\nselect = "roundtrip"\n',
     "pyproject.toml:2:1: error [config.type] tool.modelspec.strict must be true or false\n"
     "pyproject.toml:3:1: error [config.type] tool.modelspec.select must be a list of codes or code prefixes, "
     "e.g. select = [\"roundtrip.null\"]\n"),
    ('[tool.modelspec.per-file-ignores]\n"specs/*" = ["nothing.here"]\n',
     "pyproject.toml:2:14: error [config.unknown-code] tool.modelspec.per-file-ignores: 'nothing.here' names no "
     "code modelspec reports; docs/problems.md lists the codes\n"),
    ('[tool.modelspec\nstrict = true\n',
     "pyproject.toml:1:16: error [config.syntax] not valid TOML: Expected ']' at the end of a table declaration "
     "(at line 1, column 16)\n"),
])
def test_a_broken_configuration_is_refused_at_its_line(tmp_path: Path, toml: str, stderr: str) -> None:
    _write(tmp_path, "pyproject.toml", toml)
    _write(tmp_path, "specs/a.yaml", SPEC.format(name="a", extra=""))
    assert run(tmp_path, ["check"]) == (2, "", stderr + "modelspec: the configuration is broken; fix it before "
                                                       "checking specs\n")


#: A regular file whose read fails (EINVAL), as another user's 0600 file fails for one who is not root.
UNREADABLE = Path("/proc/self/clear_refs")


@pytest.mark.skipif(not UNREADABLE.is_file(), reason="needs Linux's /proc/self/clear_refs")
@pytest.mark.parametrize("name", ["modelspec.toml", "pyproject.toml"])
@pytest.mark.parametrize("where", [".", ".."], ids=["at the root", "in the folder above, up to the git top"])
@pytest.mark.parametrize("cached", [True, False], ids=["cached", "no cache"])
def test_a_configuration_file_that_cannot_be_read_is_refused_by_name(tmp_path: Path, name: str, where: str,
                                                                    cached: bool) -> None:
    root = tmp_path / "catalogue"
    _write(root, "specs/a.yaml", SPEC.format(name="a", extra=""))
    (tmp_path / ".git").mkdir()
    (root / where / name).symlink_to(UNREADABLE)
    shown = f"{'catalogue/' if where == '.' else ''}{name}"
    expected = (2, "", f"{shown}:1:1: error [config.syntax] cannot read the configuration ([Errno 22] Invalid "
                       "argument); it must be UTF-8 TOML\nmodelspec: the configuration is broken; fix it before "
                       "checking specs\n")
    assert run(root, ["check", *([] if cached else ["--no-cache"])]) == expected


def test_modelspec_toml_wins_over_pyproject_and_its_keys_are_top_level(tmp_path: Path) -> None:
    _write(tmp_path, "pyproject.toml", '[tool.modelspec]\nstrict = false\n')
    _write(tmp_path, "modelspec.toml", 'strict = true\n')
    _write(tmp_path, "specs/a.yaml", SPEC.format(name="a", extra="max_position_embeddings: null\n"))
    assert run(tmp_path, ["check", "-q"])[0] == 1
    config = load_config(tmp_path, tmp_path, tuple(all_codes()))
    assert (config.file, config.strict) == (tmp_path / "modelspec.toml", True)


def test_a_pyproject_without_the_table_is_no_configuration(tmp_path: Path) -> None:
    _write(tmp_path, "pyproject.toml", '[project]\nname = "x"\n')
    assert load_config(tmp_path, tmp_path, tuple(all_codes())) == Config(base=tmp_path)


def test_an_unknown_code_on_the_command_line_is_a_usage_error(tmp_path: Path) -> None:
    _write(tmp_path, "specs/a.yaml", SPEC.format(name="a", extra=""))
    code, out, err = run(tmp_path, ["check", "--ignore", "roundtrip.nul"])
    assert (code, out) == (2, "")
    assert err.endswith("Error: Invalid value for '--ignore': 'roundtrip.nul' names no code modelspec reports; did "
                        "you mean roundtrip.null or roundtrip or roundtrip.lost?\n")


INLINE_CASES = {
    "an ignore that silences nothing": (
        "max_position_embeddings: 4096  # modelspec: ignore[roundtrip.null]\n", 0,
        "specs/a.yaml:8:32: warning [ignore.unused] ignore[roundtrip.null] silences nothing on this line; remove "
        "it\n"),
    "one code of two used": (
        "max_position_embeddings: null  # modelspec: ignore[roundtrip.null, roundtrip.default]\n", 0,
        "specs/a.yaml:8:32: warning [ignore.unused] ignore[roundtrip.default] silences nothing on this line; "
        "remove it (or those codes)\n"),
    "a prefix silences its codes": (
        "max_position_embeddings: null  # modelspec: ignore[roundtrip]\n", 0, ""),
    "an unknown code": (
        "max_position_embeddings: null  # modelspec: ignore[roundtrip.nul]\n", 0,
        "specs/a.yaml:8:26: warning [roundtrip.null] [*] max_position_embeddings is null, which is the same as leaving "
        "it out; remove the line\n"
        "specs/a.yaml:8:32: warning [ignore.unknown-code] ignore[roundtrip.nul]: 'roundtrip.nul' names no code "
        "modelspec reports; did you mean roundtrip.null or roundtrip or roundtrip.lost?\n"),
    "a directive that is not an ignore": (
        "max_position_embeddings: null  # modelspec: ignore roundtrip.null\n", 0,
        "specs/a.yaml:8:26: warning [roundtrip.null] [*] max_position_embeddings is null, which is the same as leaving "
        "it out; remove the line\n"
        "specs/a.yaml:8:32: warning [ignore.malformed] a '# modelspec:' comment must be '# modelspec: "
        "ignore[CODE, ...]', naming the codes it silences on this line (e.g. # modelspec: ignore[roundtrip.null])\n"),
    # No field is free text (issue 12), so the quoted value is refused as a dtype; the hash in it is still no
    # comment: neither an ignore nor a malformed one is reported.
    "a hash inside a quoted value is no comment": (
        "torch_dtype: \"bfloat16 # modelspec: ignore[roundtrip.null]\"\n", 1, None),
}


@pytest.mark.parametrize("case", sorted(INLINE_CASES))
def test_inline_ignores(tmp_path: Path, case: str) -> None:
    extra, code, lines = INLINE_CASES[case]
    _write(tmp_path, "specs/a.yaml", SPEC.format(name="a", extra=extra))
    result = run(tmp_path, ["check"])
    if lines is None:
        assert result[0] == code and "ignore." not in result[1]
        return
    assert (result[0], "".join(line + "\n" for line in result[1].splitlines()[:-1])) == (code, lines)


def test_an_error_cannot_be_ignored_and_the_ignore_says_so(tmp_path: Path) -> None:
    spec = SPEC.format(name="a", extra="").replace(
        "num_key_value_heads: 2", "num_key_value_heads: 3  # modelspec: ignore[spec.kv-heads-divide]")
    _write(tmp_path, "specs/a.yaml", spec)
    code, out, _ = run(tmp_path, ["check", "--ignore", "spec"])
    assert (code, out) == (1, (
        "specs/a.yaml:6:22: error [spec.kv-heads-divide] num_attention_heads (8) must be a multiple of "
        "num_key_value_heads (3); each key/value head serves a whole group of query heads\n"
        "specs/a.yaml:6:25: warning [ignore.unused] ignore[spec.kv-heads-divide] silences nothing on this line; an "
        "error cannot be ignored (spec.kv-heads-divide here is an error): fix the spec; remove it\n"
        "specs/a.yaml: skipped stack, roundtrip (an earlier pass failed; fix its errors and check again)\n"
        "1 error, 1 warning in 1 file (0 files clean)\n"))


def test_an_ignore_is_not_called_unused_when_a_pass_was_skipped(tmp_path: Path) -> None:
    spec = SPEC.format(name="a", extra="torch_dtype: torch.bfloat16  # modelspec: ignore[roundtrip.torch-prefix]\n")
    _write(tmp_path, "specs/a.yaml", spec.replace("hidden_size: 896", "hidden_size: 896.5"))
    code, out, _ = run(tmp_path, ["check"])
    assert code == 1 and "ignore.unused" not in out


def test_inline_ignores_are_read_only_from_comments() -> None:
    raw = (b"# header: modelspec import\nname: 'a # modelspec: ignore[x]'\n"
           b"vocab_size: 1  #modelspec:ignore[roundtrip.null,  roundtrip.default ]\n")
    found = inline_ignores(raw)
    assert [(item.line, item.column, item.codes) for item in found] == [
        (3, 16, ("roundtrip.null", "roundtrip.default"))]


@pytest.mark.parametrize(("selector", "code", "matched"), [
    ("roundtrip", "roundtrip.null", True),
    ("roundtrip.", "roundtrip.null", True),
    ("roundtrip.null", "roundtrip.null", True),
    ("round", "roundtrip.null", False),
    ("roundtrip.nul", "roundtrip.null", False),
])
def test_a_selector_is_a_code_or_a_dotted_prefix(selector: str, code: str, matched: bool) -> None:
    assert matches(selector, code) is matched
