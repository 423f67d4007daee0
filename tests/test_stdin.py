"""``-`` reads stdin: ``check -``, ``fmt -`` (to stdout) and ``import -``, with their exact output."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import main

CONFIG = Path(__file__).parent / "data" / "configs" / "llama-3.1-8b.json"
BAD = ("name: a\nhidden_size: 896\nnum_hidden_layers: 4\nnum_attention_heads: 7\nvocab_size: 32000\n"
       "num_key_value_heads: 2\nintermediate_size: 4864\narch: llama\n"
       # the flags the llama inventory reads, so the spec can be counted
       "tie_word_embeddings: false\nqkv_bias: false\no_bias: false\nmlp_bias: false\nnorm_bias: false\n")


def run(args, stdin: bytes, root: Path):
    return CliRunner().invoke(main, [*args, "--root", str(root)], input=stdin, catch_exceptions=False)


def test_check_reads_stdin_and_names_it(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    result = run(["check", "-"], BAD.encode(), tmp_path)
    assert (result.exit_code, result.stdout) == (1, (
        "-:6:22: error [spec.kv-heads-divide] num_attention_heads (7) must be a multiple of num_key_value_heads (2); "
        "each key/value head serves a whole group of query heads\n"
        "-: skipped stack, roundtrip (an earlier pass failed; fix its errors and check again)\n"
        "1 error, 0 warnings in 1 file (0 files clean)\n"))
    named = run(["check", "-", "--stdin-filename", "specs/a/a.yaml", "--format", "github"], BAD.encode(), tmp_path)
    assert named.stdout.startswith("::error file=specs/a/a.yaml,line=6,col=22,")


def test_check_stdin_takes_no_other_path_nor_fix(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    other = run(["check", "-", "specs"], b"", tmp_path)
    assert (other.exit_code, other.stderr.splitlines()[-1]) == (
        2, "Error: '-' (stdin) is the only spec check takes with it; name files without it")
    fix = run(["check", "-", "--fix"], b"", tmp_path)
    assert (fix.exit_code, fix.stderr.splitlines()[-1]) == (
        2, "Error: --fix and --changed-since work on files; they do not take '-' (stdin)")


def test_fmt_formats_stdin_to_stdout(tmp_path: Path) -> None:
    messy = b"vocab_size: 3  # the table\nname: x\n"
    result = run(["fmt", "-"], messy, tmp_path)
    assert (result.exit_code, result.stdout) == (0, "---\nname: x\nvocab_size: 3  # the table\n")
    check = run(["fmt", "-", "--check"], messy, tmp_path)
    assert (check.exit_code, check.stdout) == (1, "would reformat -: 3 lines change, first line 1: '---' is added\n")
    tidy = run(["fmt", "-", "--check"], result.stdout.encode(), tmp_path)
    assert (tidy.exit_code, tidy.stdout) == (0, "")
    broken = run(["fmt", "-"], b"name: [x\n", tmp_path)
    assert broken.exit_code == 2 and broken.stdout == "" and broken.stderr.startswith("-:2:1: error [yaml.syntax] ")


def test_import_reads_the_config_from_stdin(tmp_path: Path) -> None:
    from_file = run(["import", str(CONFIG), "--name", "llama-3.1-8b"], b"", tmp_path)
    from_stdin = run(["import", "-", "--name", "llama-3.1-8b"], CONFIG.read_bytes(), tmp_path)
    assert from_stdin.exit_code == 0
    assert from_stdin.stdout == from_file.stdout.replace("import from llama-3.1-8b.json", "import from stdin")


def test_check_stdin_named_as_a_spec_shown_under_that_path_names_it(tmp_path: Path, monkeypatch) -> None:
    # From specs/, --stdin-filename specs/a/a.yaml (spelled from the root) is a new file there, and the spec
    # at the root's specs/a/a.yaml is shown under the same path: the clash names it, not nobody.
    (tmp_path / "specs" / "a").mkdir(parents=True)
    (tmp_path / "specs" / "a" / "a.yaml").write_text(BAD.replace("num_attention_heads: 7", "num_attention_heads: 14"),
                                                     encoding="utf-8")
    monkeypatch.chdir(tmp_path / "specs")
    text = BAD.replace("num_attention_heads: 7", "num_attention_heads: 14").encode()
    result = run(["check", "-", "--stdin-filename", "specs/a/a.yaml"], text, tmp_path)
    assert (result.exit_code, result.stdout) == (1, (
        "specs/a/a.yaml:1:7: error [spec.duplicate-name] name 'a' is also the name of specs/a/a.yaml; each spec "
        "needs its own name (it names its resolved artifact)\n1 error, 0 warnings in 1 file (0 files clean)\n"))
