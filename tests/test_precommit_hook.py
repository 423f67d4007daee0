"""The pre-commit hooks another spec repository takes from this one: the manifest, and real ``pre-commit try-repo``.

The slow test runs ``pre-commit try-repo`` the way a user tries a hook
source, in a throwaway git repository holding spec files, and asserts what
each hook prints and its exit status. It tries this checkout's HEAD commit
(``--ref`` with HEAD's id), not the working tree: without ``--ref``,
try-repo on a local folder adds the tracked files' uncommitted changes (not
the untracked files) in a temporary commit, which would test a mix of
committed and half-done work. So a change to the hooks or the package is
tried once it is committed; in CI, a fresh clone, HEAD is the submission.

try-repo installs the hook repository (this project, from PyPI's
dependencies) into a virtual environment of its own, once per run, in a
temporary store; ``PRE_COMMIT_HOME`` points into ``tmp_path`` so nothing
is left in the user's cache. About ten seconds a run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from pre_commit.clientlib import load_manifest

from pipeline.cli import _COMMANDS
from pipeline.check.repo import find_repo
from pipeline.check.discovery import find_spec_files

#: pip and pre-commit build environments: over a minute each under load, so 600 s, not the suite's 120.
pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parents[1]

#: The hooks, by id, as a user's ``.pre-commit-config.yaml`` names them, with the command each runs.
EXPECTED_HOOKS: Dict[str, str] = {"modelspec-check": "modelspec check", "modelspec-fmt": "modelspec fmt"}

GOOD = ("---\nname: tiny-good\nhidden_size: 896\nnum_hidden_layers: 4\nnum_attention_heads: 8\nvocab_size: 32000\n"
        "num_key_value_heads: 2\nintermediate_size: 4864\ntie_word_embeddings: false\nqkv_bias: false\n"
        "o_bias: false\nmlp_bias: false\nnorm_bias: false\narch: llama\n")  # its biases and tie stated: countable
#: Canonical layout, but 7 query heads cannot share 2 key/value heads.
BAD = GOOD.replace("tiny-good", "tiny-bad").replace("num_attention_heads: 8", "num_attention_heads: 7")
#: A valid spec with two keys out of the canonical order.
MESSY = ("name: tiny-messy\nhidden_size: 896\nnum_hidden_layers: 4\nnum_attention_heads: 8\n"
         "num_key_value_heads: 2\nvocab_size: 32000\nintermediate_size: 4864\narch: llama\ntie_word_embeddings: false\n"
         "qkv_bias: false\no_bias: false\nmlp_bias: false\nnorm_bias: false\n")

BAD_LINE = ("specs/tiny/bad.yaml:7:22: error [spec.kv-heads-divide] num_attention_heads (7) must be a multiple of "
            "num_key_value_heads (2); each key/value head serves a whole group of query heads\n"
            "specs/tiny/bad.yaml: skipped stack, roundtrip (an earlier pass failed; fix its errors and check again)")

#: (files in the throwaway repository, try-repo's exit status, the hook results as printed, the files after).
SCENARIOS = {
    "good specs pass": (
        {"specs/tiny/good.yaml": GOOD},
        0,
        "modelspec check ... Passed\n"
        "modelspec fmt ... Passed\n",
        {"specs/tiny/good.yaml": GOOD},
    ),
    "a bad spec fails check, a messy one is reformatted": (
        {"specs/tiny/good.yaml": GOOD, "specs/tiny/bad.yaml": BAD, "specs/tiny/messy.yaml": MESSY,
         "docs/notes.yaml": "not: a spec, and outside the hooks' files\n"},
        1,
        "modelspec check ... Failed\n"
        "- hook id: modelspec-check\n"
        "- exit code: 1\n"
        "\n"
        f"{BAD_LINE}\n"
        "1 error, 0 warnings in 1 file (2 files clean)\n"
        "\n"
        "modelspec fmt ... Failed\n"
        "- hook id: modelspec-fmt\n"
        "- files were modified by this hook\n"
        "\n"
        "reformatted specs/tiny/messy.yaml\n"
        "\n",
        {"specs/tiny/good.yaml": GOOD, "specs/tiny/bad.yaml": BAD,
         "specs/tiny/messy.yaml": GOOD.replace("tiny-good", "tiny-messy")},
    ),
}


def _manifest() -> List[dict]:
    """The hooks of ``.pre-commit-hooks.yaml``, read and validated by pre-commit itself."""
    return load_manifest(str(REPO / ".pre-commit-hooks.yaml"))


def test_manifest_has_the_expected_hooks() -> None:
    assert {hook["id"]: hook["entry"] for hook in _manifest()} == EXPECTED_HOOKS


@pytest.mark.parametrize("hook_id", sorted(EXPECTED_HOOKS))
def test_hook_entry_is_a_modelspec_command(hook_id: str) -> None:
    program, subcommand = EXPECTED_HOOKS[hook_id].split()
    assert (program, subcommand in _COMMANDS) == ("modelspec", True)


@pytest.mark.parametrize("hook_id", sorted(EXPECTED_HOOKS))
@pytest.mark.parametrize(("path", "taken"), [
    ("specs/qwen/qwen3-8b.yaml", True),
    ("specs/tiny.yml", True),
    ("specs/README.md", False),
    ("op_profiles/qwen3.yaml", False),
    ("resolved/qwen3-8b.json", False),
    ("other/specs/qwen3-8b.yaml", False),
    ("specs.yaml", False),
])
def test_hook_takes_only_spec_files(hook_id: str, path: str, taken: bool) -> None:
    hook = next(hook for hook in _manifest() if hook["id"] == hook_id)
    assert (re.search(hook["files"], path) is not None and re.search(hook["exclude"], path) is None) == taken


@pytest.mark.parametrize("hook_id", sorted(EXPECTED_HOOKS))
def test_hook_takes_every_catalogue_spec(hook_id: str) -> None:
    hook = next(hook for hook in _manifest() if hook["id"] == hook_id)
    specs = [path.relative_to(REPO).as_posix() for path in find_spec_files([find_repo(REPO).specs])]
    assert specs and [path for path in specs if not re.search(hook["files"], path)] == []


def _git(cwd: Path, *args: str) -> str:
    """Run git in *cwd* with no user or system configuration; return its stdout."""
    env = dict(_clean_env(), GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def _clean_env() -> Dict[str, str]:
    """This process's environment without git's ``GIT_*`` variables (set when the tests run inside a git hook)."""
    return {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}


def _hook_results(output: str) -> str:
    """try-repo's output from the first hook result on, each run of dots shortened to `` ... ``."""
    return re.sub(r"\.{3,}", " ... ", output[output.index("modelspec check."):])


@pytest.mark.slow
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_try_repo(tmp_path: Path, scenario: str) -> None:
    files, status, results, after = SCENARIOS[scenario]
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout, so pre-commit has no commit to try")
    head = _git(REPO, "rev-parse", "HEAD").strip()
    specs_repo = tmp_path / "specs-repo"
    specs_repo.mkdir()
    _git(specs_repo, "init", "--quiet")
    for name, text in files.items():
        (specs_repo / name).parent.mkdir(parents=True, exist_ok=True)
        (specs_repo / name).write_text(text, encoding="utf-8")
    _git(specs_repo, "add", ".")
    env = dict(_clean_env(), PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), GIT_CONFIG_NOSYSTEM="1")
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "--ref", head, "--all-files", "--color", "never"],
        cwd=specs_repo, env=env, capture_output=True, text=True, check=False, timeout=600)
    output = result.stdout + result.stderr
    assert "modelspec check." in result.stdout, output
    assert (result.returncode, _hook_results(result.stdout)) == (status, results)
    assert {name: (specs_repo / name).read_text(encoding="utf-8") for name in after} == after
