"""The crashes the red-team fuzzing found (issue 12, class 2), each example and its whole class.

A crash is modelspec's fault, never the input's: a ``check.internal`` problem
(exit 2), a traceback or a hang. Each class below is tested over all the
places it can reach: every near-miss suggestion, every field a huge integer
can sit in, every character that splits a ``--source`` line, every place a
config can hold a lone surrogate, every command that reads a path a FIFO can
stand at.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest
from click.testing import CliRunner

from pipeline.cli import main
from pipeline.spec.layout import format_text
from pipeline.spec.model import MODEL_KEYS_ORDERED
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.spec.problems import INTERNAL_CODE, near_misses
from pipeline.check.runner import check_document
from pipeline.spec.yaml_source import MAX_NUMBER_CHARS, dump, load_bytes
from tests.spec_repos import FIXTURE, GIT_ENV, git_repo, make_repo, modelspec_argv

BASE = "name: x\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n" \
       "intermediate_size: 128\narch: llama\n"

PROFILES = load_op_profiles(FIXTURE / "op_profiles")


def check_codes(text: str) -> List[str]:
    """The codes ``check`` finds in *text*, asserting it did not crash (but ``params.uncounted``: the fixture's
    profiles price nothing)."""
    checked = check_document(load_bytes(text.encode("utf-8"), "spec.yaml"), PROFILES)
    codes = [problem.code for problem in checked.result.problems if problem.code != "params.uncounted"]
    assert INTERNAL_CODE not in codes, checked.result.problems
    return codes


# --- near-miss suggestions with entries that are not text ------------------------------------------------

@pytest.mark.parametrize("entry", ["null", "1", "1.5", "true", "[]", "{}", "[full_attention]", "{a: 1}"])
def test_a_layer_types_entry_that_is_not_text_is_refused_not_a_crash(entry: str) -> None:
    codes = check_codes(BASE.replace("num_hidden_layers: 2", "num_hidden_layers: 2") +
                        f"layer_types: [{entry}, full_attention]\n")
    assert "schema.type" in codes


def test_the_issue_s_null_layer_type_keeps_the_file_s_real_errors() -> None:
    text = BASE.replace("vocab_size: 100", "vocab_size: 0\nmax_position_embeddings: true") + \
        "layer_types: [null, full_attention]\n"
    assert sorted(check_codes(text)) == ["schema.range", "schema.type", "schema.type"]


@pytest.mark.parametrize("value", [None, 1, 1.5, True, ["a"], {"a": 1}, ("a",)])
def test_near_misses_of_a_value_that_is_not_text_are_none(value: Any) -> None:
    assert near_misses(value, ["a", "b"]) == []


def test_near_misses_compare_only_text_choices() -> None:
    assert near_misses("ful", [None, 3, "full", ["full"]]) == ["full"]


# --- huge integers wherever a message formats a value ----------------------------------------------------

#: The largest hexadecimal literal the loader reads: at most MAX_NUMBER_CHARS decimal digits.
HUGE_HEX = "0x" + "f" * 3300


@pytest.mark.parametrize("key", MODEL_KEYS_ORDERED)
def test_a_huge_integer_in_any_field_is_refused_not_a_crash(key: str) -> None:
    body = "\n".join(line for line in BASE.splitlines() if not line.startswith(f"{key}:"))
    codes = check_codes(f"{body}\n{key}: {HUGE_HEX}\n")
    assert codes, key


@pytest.mark.parametrize("where", ["layer_types: [{0}]\n", "vision: {{hidden_size: {0}, num_hidden_layers: 1, "
                                   "num_attention_heads: {0}, name: {0}}}\n", "layers: [{{kind: {0}, count: 2}}]\n",
                                   "ops: {{dense: {{attMM: {0}}}}}\n", "{0}: 1\n"])
def test_a_huge_integer_nested_anywhere_is_refused_not_a_crash(where: str) -> None:
    assert check_codes(BASE + where.format(HUGE_HEX))


def test_a_hex_literal_beyond_the_decimal_digits_a_message_prints_is_refused_at_load() -> None:
    text = "0x" + "f" * 3990  # 3992 characters, but some 4800 decimal digits
    assert check_codes(BASE.replace("name: x", f"name: {text}")) == ["yaml.huge-number"]
    problem = load_bytes(f"torch_dtype: {text}\n".encode(), "s").problems[0]
    assert problem.message == ("torch_dtype: a number of more than 4000 decimal digits is too long; write at most "
                               "4000 digits")


@pytest.mark.parametrize("literal", ["9" * MAX_NUMBER_CHARS, "-" + "9" * (MAX_NUMBER_CHARS - 1),
                                     "1" + "0" * (MAX_NUMBER_CHARS - 1)])
def test_every_integer_the_loader_reads_the_writer_writes(literal: str) -> None:
    doc = load_bytes(f"a: {literal}\n".encode(), "s")
    assert doc.problems == ()
    assert load_bytes(dump(doc.data).encode(), "s").data == doc.data


def test_fmt_takes_an_integer_of_exactly_4000_digits() -> None:
    text = BASE.replace("hidden_size: 64", "hidden_size: " + "1" * MAX_NUMBER_CHARS)
    formatted = format_text(text, "spec.yaml", None)
    assert formatted.problems == ()
    assert "1" * MAX_NUMBER_CHARS in formatted.text


def test_fmt_check_on_an_integer_of_exactly_4000_digits_exits_cleanly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    spec = repo / "specs/llama/llama-3.1-8b.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("hidden_size: 4096", "hidden_size: " + "1" * 4000),
                    encoding="utf-8")
    for args, code in ((["--check"], 1), ([], 0), (["--check"], 0)):
        result = CliRunner().invoke(main, ["fmt", "--root", str(repo), *args, str(spec)], catch_exceptions=False)
        assert result.exit_code == code, result.output
    assert "hidden_size: " + "1" * 4000 + "\n" in spec.read_text(encoding="utf-8")


# --- every character that would split a --source line ---------------------------------------------------

#: Every character str.splitlines() splits at, the C0 and C1 controls, the bidi controls and a lone surrogate.
SPLITTING = sorted({*"\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", *map(chr, range(0x20)), *map(chr, range(0x7f, 0xa0)),
                    "\u202e", "\u2066", "\udcff"} - {"\t"})


@pytest.fixture(scope="module")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("config") / "config.json"
    path.write_text(json.dumps({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
                                "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128}),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("char", SPLITTING, ids=lambda char: f"U+{ord(char):04X}")
def test_a_source_with_a_line_breaking_or_control_character_is_a_usage_error(config_file: Path, char: str) -> None:
    result = CliRunner().invoke(main, ["import", "--root", str(FIXTURE), str(config_file), "--source",
                                       f"a{char}# b"], catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (f"Invalid value for '--source': a source is one line of printable text; U+{ord(char):04X} at character "
            "2 is a control character or line break") in result.stderr


def test_a_source_holding_a_legacy_workflow_command_is_a_usage_error(config_file: Path) -> None:
    result = CliRunner().invoke(main, ["import", "--root", str(FIXTURE), str(config_file), "--source",
                                       "org/m ##[error]x"], catch_exceptions=False)
    assert result.exit_code == 2
    assert ("Invalid value for '--source': a source cannot hold the legacy workflow-command prefix (two '#' and a "
            "'['), which a GitHub Actions log runs wherever it stands; write it another way") in result.stderr


def test_a_source_with_a_tab_is_one_header_line(config_file: Path) -> None:
    result = CliRunner().invoke(main, ["import", "--root", str(FIXTURE), str(config_file), "--source", "a\tb"],
                                catch_exceptions=False)
    assert result.exit_code == 0
    assert "# source: a\tb\n" in result.stdout


# --- lone surrogates anywhere in a config ----------------------------------------------------------------

CONFIG = ('{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, '
          '"vocab_size": 100, "intermediate_size": 128%s}')


@pytest.mark.parametrize(("extra", "message"), [
    (', "torch_dtype": "bf\\udfff16"', "1:139: error [import.json] torch_dtype: the text 'bf\\udfff16'"),
    (', "_name_or_path": "org/m\\ud800"', "1:139: error [import.json] _name_or_path: the text 'org/m\\ud800'"),
    (', "k\\udc00": 1', "1:139: error [import.json] the config: the key 'k\\udc00'"),
    (', "text_config": {"x": ["a", "\\udbff"]}', "1:155: error [import.json] text_config.x.1: the text '\\udbff'"),
    (', "text_config": {"\\ud83d": 1}', "1:155: error [import.json] text_config: the key '\\ud83d'"),
])
def test_a_lone_surrogate_anywhere_in_a_config_is_refused_at_its_key(tmp_path: Path, extra: str, message: str) -> None:
    config = tmp_path / "c.json"
    config.write_text(CONFIG % extra, encoding="utf-8")
    result = CliRunner().invoke(main, ["import", "--root", str(FIXTURE), str(config)], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"{config}:{message}"), result.stderr
    assert result.stderr.endswith("holds a lone surrogate escape (half of a UTF-16 pair, no character of its own); "
                                  "write the character it stands for\n")


def test_a_surrogate_pair_is_one_character_and_imports() -> None:
    from pipeline.commands.import_ import read_config

    data, _ = read_config(b'{"a": "\\ud83d\\ude00"}')
    assert data == {"a": "\U0001F600"}


# --- a FIFO where any command reads a path ---------------------------------------------------------------

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def _run(*args: str) -> subprocess.CompletedProcess:
    """Run modelspec in a fresh process; a hang fails the test after 60 s instead of blocking the suite."""
    return subprocess.run(modelspec_argv(*args), capture_output=True, text=True, timeout=60,
                          env={**os.environ, **GIT_ENV})


@needs_fifo
@pytest.mark.parametrize(("args", "code", "said"), [
    (("check", "{fifo}"), 2, "not a regular file or a folder"),
    (("fmt", "--check", "{fifo}"), 2, "not a regular file or a folder"),
    (("import", "{fifo}"), 1, "error [import.json] not a regular file (a FIFO, device or folder would block or "
                              "mislead the read); a config is a file"),
    (("check",), 1, "error [yaml.unreadable] not a regular file"),
    (("fmt", "--check"), 2, "error [yaml.unreadable] not a regular file"),  # fmt cannot read it: 2, as ruff
    (("regen", "--check"), 1, "yaml.unreadable"),
    (("list",), 1, "yaml.unreadable"),
    (("show", "llama-3.1-8b"), 0, ""),
])
def test_a_fifo_is_refused_by_every_command_that_reads_a_path(tmp_path: Path, args: tuple, code: int,
                                                              said: str) -> None:
    repo = make_repo(tmp_path / "repo")
    fifo = repo / "specs" / "llama" / "pipe.yaml"
    os.mkfifo(fifo)
    if "{fifo}" not in args:
        shown = args
    else:
        fifo_named = tmp_path / "named.yaml"
        os.mkfifo(fifo_named)
        fifo.unlink()
        shown = tuple(str(fifo_named) if arg == "{fifo}" else arg for arg in args)
    done = _run(shown[0], "--root", str(repo), *shown[1:])
    assert done.returncode == code, done.stderr + done.stdout
    assert said in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


@needs_fifo
@pytest.mark.parametrize("kind", ["a FIFO", "a link to a device"])
@pytest.mark.parametrize("args", [("check",), ("check", "--no-cache"), ("list",), ("show", "llama-3.1-8b"),
                                  ("regen", "--check")], ids=" ".join)
def test_a_fifo_among_the_op_profiles_is_a_broken_profile_not_a_hang(tmp_path: Path, args: tuple, kind: str) -> None:
    # The profiles folder's bytes are digested (the profile cache's key, the process's memo of checked folders)
    # before the loader reads them: that read must not block either.
    repo = make_repo(tmp_path / "repo")
    pipe = repo / "op_profiles" / "zz.yaml"
    if kind == "a FIFO":
        os.mkfifo(pipe)
    else:
        pipe.symlink_to("/dev/zero")
    done = _run(args[0], "--root", str(repo), *args[1:])
    assert (done.returncode, done.stdout) == (2, "")
    said = done.stderr.splitlines()
    assert said[0] == (f"{pipe}:1:1: error [yaml.unreadable] not a regular file (a FIFO, device or folder would "
                       "block or mislead the read); a spec is a file")
    assert said[1:] == ["modelspec: the op profiles are broken; fix them before checking specs"]


@needs_fifo
@pytest.mark.parametrize("side", ["the working tree", "a link in the working tree"])
def test_diff_tells_a_fifo_in_the_working_tree_as_a_spec_that_does_not_resolve(tmp_path: Path, side: str) -> None:
    # diff digests each spec's bytes to resolve a spec both sides share once: a FIFO must not block that read.
    repo = git_repo(tmp_path / "repo")
    pipe = repo / "specs" / "llama" / "pipe.yaml"
    if side == "the working tree":
        os.mkfifo(pipe)
    else:
        os.mkfifo(tmp_path / "outside")
        pipe.symlink_to(tmp_path / "outside")
    done = _run("diff", "HEAD", "--root", str(repo))
    assert (done.returncode, done.stdout.splitlines()[-1]) == (
        0, "does not resolve at working tree: specs/llama/pipe.yaml (fails modelspec check: line 1: [yaml.unreadable] "
           "not a regular file (a FIFO, device or folder would block or mislead the read); a spec is a file)")
    assert "Traceback" not in done.stderr


@needs_fifo
@pytest.mark.parametrize("kind", ["a FIFO", "a device"])
def test_a_spec_s_bytes_are_read_only_from_a_regular_file(tmp_path: Path, kind: str) -> None:
    # read_spec_bytes serves every digest of a spec (the result cache, regen, diff): in a fresh process, so that
    # a read that blocks fails the test after 60 s instead of hanging the suite.
    path = tmp_path / "spec.yaml"
    if kind == "a FIFO":
        os.mkfifo(path)
    else:
        path.symlink_to(os.devnull)
    done = subprocess.run([sys.executable, "-c", "import sys; from pipeline.check.verdict import read_spec_bytes; "
                           "print(read_spec_bytes(sys.argv[1]))", str(path)],
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout == "None\n"


# --- a FIFO or a device in place of a cache file ----------------------------------------------------------

_COMMANDS = [("check",), ("list",), ("list", "--format", "json"), ("show", "llama-3.1-8b")]


@needs_fifo
def test_a_fifo_in_place_of_a_cache_file_is_an_unreadable_one(tmp_path: Path) -> None:
    """Each file the cache folder holds is read only when it is a regular file: a FIFO there (or a link to one,
    or to ``/dev/zero``) would block the run forever. Ignored, it is a cache that cannot be read."""
    repo = make_repo(tmp_path / "repo")
    old = 1_600_000_000  # stats a snapshot may stand for
    for path in [repo, *repo.rglob("*")]:
        os.utime(path, (old, old))
    commands = [*_COMMANDS, ("check", str(repo / "specs" / "llama" / "llama-3.1-8b.yaml"))]
    expected = [_run(*args, "--root", str(repo), "--no-cache") for args in commands]
    for args in commands:
        _run(*args, "--root", str(repo))
    cache = repo / ".modelspec_cache"
    found = sorted(path for pattern in ("results", "names", "rows", "profiles", "snapshot-*", "views/*")
                   for path in cache.glob(pattern))
    assert [path.relative_to(cache).as_posix().split("-")[0].split("/")[0] for path in found] == [
        "names", "profiles", "results", "rows", *["snapshot"] * 5, "views"]  # check's answer, check's names, list's
    # two and show's
    for path in found:
        path.unlink()
        os.mkfifo(path)
    for args, (code, out, _) in zip(commands, [(e.returncode, e.stdout, e.stderr) for e in expected]):
        done = _run(*args, "--root", str(repo))
        assert (args, done.returncode, done.stdout) == (args, code, out)
        assert "Traceback" not in done.stderr


# --- a current folder that was removed ----------------------------------------------------------------------

@pytest.mark.parametrize("args", [("list",), ("list", "--root", "."), ("show", "llama-3.1-8b", "--root", "."),
                                  ("check", "--root", "{repo}"), ("list", "--root", "{repo}")], ids=" ".join)
def test_a_removed_current_folder_is_a_usage_error(tmp_path: Path, args: tuple) -> None:
    repo = make_repo(tmp_path / "repo")
    shown = [str(repo) if arg == "{repo}" else arg for arg in args]
    gone = tmp_path / "gone"
    gone.mkdir()
    # the shell enters the folder, which is then removed under it
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    done = subprocess.run(["sh", "-c", script, "sh", str(gone), *modelspec_argv(*shown)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.endswith("Error: the current folder no longer exists (it was removed after the shell "
                                "entered it); cd to an existing folder\n")
    assert done.stdout == ""
