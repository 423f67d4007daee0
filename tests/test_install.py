"""The README's install lines for another repository work: pip from a git URL, a pre-commit config, try-repo.

Each line is read from the README (between its ``<!-- pip-install -->``,
``<!-- pre-commit-config -->`` and ``<!-- try-repo -->`` markers) and run as
written, with two substitutions only: the repository URL
``https://github.com/<org>/modelspec`` becomes the ``file://`` URL of a bare
clone of this checkout, and ``<commit>`` becomes that clone's ``HEAD`` commit
id, the pinned revision. So what is tried is exactly what a user copies, at a
revision that exists, through real git, real pip and real pre-commit; the
tested commit is HEAD (uncommitted work is not in the clone; in CI, a fresh
clone, HEAD is the submission).

Slow (a fresh virtual environment with the project's dependencies from PyPI,
and pre-commit's own environment): about a minute each.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

#: pip and pre-commit build environments: over a minute each under load, so 600 s, not the suite's 120.
pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

#: The placeholders the README's install lines carry.
URL_PLACEHOLDER = "https://github.com/<org>/modelspec"
COMMIT_PLACEHOLDER = "<commit>"

GOOD = ("---\nname: tiny-good\nhidden_size: 896\nnum_hidden_layers: 4\nnum_attention_heads: 8\nvocab_size: 32000\n"
        "num_key_value_heads: 2\nintermediate_size: 4864\ntie_word_embeddings: false\nqkv_bias: false\n"
        "o_bias: false\nmlp_bias: false\nnorm_bias: false\narch: llama\n")  # its biases and tie stated: countable
BAD = GOOD.replace("tiny-good", "tiny-bad").replace("num_attention_heads: 8", "num_attention_heads: 7")

BAD_LINE = ("specs/tiny/bad.yaml:7:22: error [spec.kv-heads-divide] num_attention_heads (7) must be a multiple of "
            "num_key_value_heads (2); each key/value head serves a whole group of query heads\n"
            "specs/tiny/bad.yaml: skipped stack, roundtrip (an earlier pass failed; fix its errors and check again)")


def readme_block(marker: str) -> str:
    """The code block between ``<!-- marker -->`` and ``<!-- /marker -->`` in the README, without its fences."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {marker} -->\n```[a-z]*\n(.*?)```\n<!-- /{marker} -->", text, re.S)
    assert match, f"README.md has no {marker} block"
    return match.group(1)


def test_the_install_lines_name_this_distribution() -> None:
    assert readme_block("pip-install") == (
        'python -m pip install "modelspec-catalogue @ git+https://github.com/<org>/modelspec@<commit>"\n')
    assert "rev: <commit>" in readme_block("pre-commit-config")
    project = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^name = "modelspec-catalogue"$', project, re.M)


def _clean_env(**extra: str) -> Dict[str, str]:
    """This process's environment without git's ``GIT_*`` variables, no user git config, plus *extra*."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", **extra)
    return env


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=_clean_env(), capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture(scope="module")
def bare_clone(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    """A bare clone of this checkout: its ``file://`` URL and its HEAD commit id."""
    if not (REPO / ".git").exists():
        pytest.skip(f"{REPO} is not a git checkout, so there is no commit to install")
    bare = tmp_path_factory.mktemp("upstream") / "modelspec.git"
    _git(REPO, "clone", "--quiet", "--bare", str(REPO), str(bare))
    return {"url": bare.as_uri(), "commit": _git(bare, "rev-parse", "HEAD").strip()}


def _substituted(text: str, clone: Dict[str, str]) -> str:
    assert URL_PLACEHOLDER in text and COMMIT_PLACEHOLDER in text, text
    return text.replace(URL_PLACEHOLDER, clone["url"]).replace(COMMIT_PLACEHOLDER, clone["commit"])


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit store for the module, so its hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def _spec_repo(root: Path, files: Dict[str, str]) -> Path:
    """A throwaway git repository holding *files*, all staged."""
    root.mkdir()
    _git(root, "init", "--quiet")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    _git(root, "add", ".")
    return root


@pytest.mark.slow
def test_pip_installs_from_a_git_url_at_a_pinned_commit(tmp_path: Path, bare_clone: Dict[str, str]) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # The pip a Python 3.11 venv bundles (23.2) refuses "name @ git+file:///..." (a URL with an empty host),
    # which a user's https URL never is; a current pip reads both.
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
                   env=_clean_env(), check=True, capture_output=True, timeout=600)
    words = shlex.split(_substituted(readme_block("pip-install"), bare_clone))
    assert words[:4] == ["python", "-m", "pip", "install"]
    subprocess.run([str(venv / "bin" / "python"), *words[1:], "--quiet"], env=_clean_env(), check=True,
                   capture_output=True, timeout=600)
    show = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", "modelspec-catalogue"],
                          capture_output=True, text=True, check=True).stdout
    assert re.search(r"^Name: modelspec-catalogue$", show, re.M), show
    specs = _spec_repo(tmp_path / "specs-repo", {"specs/tiny/good.yaml": GOOD, "specs/tiny/bad.yaml": BAD})
    run = subprocess.run([str(venv / "bin" / "modelspec"), "check"], cwd=specs, capture_output=True, text=True,
                         env=_clean_env())
    assert (run.returncode, run.stdout) == (1, f"{BAD_LINE}\n1 error, 0 warnings in 1 file (1 file clean)\n")


def _hook_results(output: str) -> str:
    """pre-commit's output from the first hook result on, each run of dots shortened to `` ... ``."""
    return re.sub(r"\.{3,}", " ... ", output[output.index("modelspec check."):])


@pytest.mark.slow
def test_the_pre_commit_config_runs_the_pinned_hooks(tmp_path: Path, bare_clone: Dict[str, str],
                                                      pre_commit_home: Path) -> None:
    config = _substituted(readme_block("pre-commit-config"), bare_clone)
    specs = _spec_repo(tmp_path / "specs-repo", {"specs/tiny/good.yaml": GOOD, ".pre-commit-config.yaml": config})
    run = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"], cwd=specs,
                         env=_clean_env(PRE_COMMIT_HOME=str(pre_commit_home)), capture_output=True, text=True,
                         timeout=600)
    assert (run.returncode, _hook_results(run.stdout)) == (
        0, "modelspec check ... Passed\nmodelspec fmt ... Passed\n"), run.stdout + run.stderr


@pytest.mark.slow
def test_try_repo_at_the_pinned_commit(tmp_path: Path, bare_clone: Dict[str, str], pre_commit_home: Path) -> None:
    words = shlex.split(_substituted(readme_block("try-repo"), bare_clone))
    assert words[:2] == ["pre-commit", "try-repo"]
    specs = _spec_repo(tmp_path / "specs-repo", {"specs/tiny/good.yaml": GOOD, "specs/tiny/bad.yaml": BAD})
    run = subprocess.run([sys.executable, "-m", "pre_commit", *words[1:], "--color", "never"], cwd=specs,
                         env=_clean_env(PRE_COMMIT_HOME=str(pre_commit_home)), capture_output=True, text=True,
                         timeout=600)
    assert (run.returncode, _hook_results(run.stdout)) == (
        1, "modelspec check ... Failed\n- hook id: modelspec-check\n- exit code: 1\n\n"
           f"{BAD_LINE}\n1 error, 0 warnings in 1 file (1 file clean)\n\n"), run.stdout + run.stderr


def test_the_github_actions_snippet_installs_with_the_tested_pip_line() -> None:
    """The workflow snippet cannot run here; its install step is the pip line the slow test runs."""
    text = README.read_text(encoding="utf-8")
    snippet = text[text.index("# .github/workflows/specs.yml"):]
    snippet = snippet[:snippet.index("```")]
    assert f"      - run: {readme_block('pip-install').strip()}\n" in snippet
    assert re.findall(r"uses: (\S+)@", snippet) == ["actions/checkout", "actions/setup-python",
                                                   "github/codeql-action/upload-sarif"]
    assert all(re.fullmatch(r"[0-9a-f]{40}", sha) for sha in re.findall(r"uses: \S+@(\S+)", snippet))
