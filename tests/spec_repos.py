"""Throwaway spec repositories for the regen, git and diff tests: built in ``tmp_path``, real git, no mocks.

``tests/data/repo`` is a small catalogue of its own (DeepSeek-V3, a
Qwen3.5-MoE with a vision tower and linear attention, a Llama whose arch is
inferred from its name) with the four op profiles it needs, pinned here so
these tests do not move when the project's catalogue or profiles do.

Git runs with a fixed identity and fixed dates and without the user's or the
system's configuration, so commit ids are the same on every machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

from click.testing import CliRunner, Result

from pipeline.cli import main

#: The fixture repository.
FIXTURE = Path(__file__).parent / "data" / "repo"

#: The spec files of the fixture, root-relative.
SPECS = ("specs/deepseek/deepseek-v3.yaml", "specs/llama/llama-3.1-8b.yaml", "specs/qwen/qwen3.5-35b-a3b.yaml")

#: What ``check`` says of each fixture spec: its pinned profiles state no weight inventories, so nothing counts it.
UNCOUNTED = {
    "specs/deepseek/deepseek-v3.yaml": "2:1: warning [params.uncounted] the spec cannot be counted and states no "
                                       "parameters: the op profile states no weights for kind 'dense'",
    "specs/llama/llama-3.1-8b.yaml": "2:1: warning [params.uncounted] the spec cannot be counted and states no "
                                     "parameters: the op profile states no weights for kind 'full_attention'",
    "specs/qwen/qwen3.5-35b-a3b.yaml": "3:1: warning [params.uncounted] the spec cannot be counted and states no "
                                       "parameters: the op profile states no weights for kind 'linear_attention'",
}


def uncounted(*specs: str) -> str:
    """The report lines of :data:`UNCOUNTED` for *specs* (fixture paths) and their summary, as ``check`` prints
    them when nothing else is wrong."""
    return "".join(f"{spec}:{UNCOUNTED[spec]}\n" for spec in sorted(specs)) + \
        f"0 errors, {len(specs)} warning{'s' if len(specs) != 1 else ''} in {len(specs)} file" \
        f"{'s' if len(specs) != 1 else ''} (0 files clean)\n"


#: The environment git runs in: fixed identity and dates, no global or system configuration.
GIT_ENV: Dict[str, str] = {
    "GIT_AUTHOR_NAME": "modelspec tests", "GIT_AUTHOR_EMAIL": "tests@modelspec.invalid",
    "GIT_COMMITTER_NAME": "modelspec tests", "GIT_COMMITTER_EMAIL": "tests@modelspec.invalid",
    "GIT_AUTHOR_DATE": "2025-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2025-01-01T00:00:00+0000",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


def make_repo(dest: Path) -> Path:
    """Copy the fixture repository to *dest* and return *dest*."""
    shutil.copytree(FIXTURE, dest)
    return dest


def git(repo: Path, *args: str) -> str:
    """Run ``git args`` in *repo* under :data:`GIT_ENV`; return its stdout (raises on failure)."""
    done = subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True,
                          capture_output=True, text=True)
    return done.stdout


def commit_all(repo: Path, message: str) -> str:
    """Stage everything in *repo* and commit it; return the commit id."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def git_repo(dest: Path) -> Path:
    """The fixture as a git repository on branch ``main`` with one commit, ``resolved/`` lock ignored."""
    make_repo(dest)
    (dest / ".gitignore").write_text("resolved/.regen.lock\n", encoding="utf-8")
    git(dest, "init", "-q", "-b", "main")
    commit_all(dest, "catalogue")
    return dest


def edit(path: Path, old: str, new: str) -> None:
    """Replace the one occurrence of *old* in the text file *path* with *new*."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in {path} exactly once"
    path.write_text(text.replace(old, new), encoding="utf-8")


def run(root: Path, command: str, *args: str) -> Result:
    """Run ``modelspec command --root root args`` in-process (git under :data:`GIT_ENV`) and return the result."""
    return CliRunner().invoke(main, [command, "--root", str(root), *args], env=GIT_ENV, catch_exceptions=False)


def run_in(cwd: Path, args: List[str]) -> Tuple[int, str, str]:
    """``modelspec args`` in-process from the folder *cwd* (as a user runs it there): exit code, stdout, stderr."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, args, catch_exceptions=False)
    finally:
        os.chdir(here)
    return result.exit_code, result.stdout, result.stderr


def modelspec_argv(*args: str) -> List[str]:
    """The command line that runs ``modelspec args`` in a fresh interpreter."""
    return [sys.executable, "-c", "from pipeline.cli import main; main()", *args]


#: What :func:`put_irregular` can put in a cache file's place.
IRREGULAR = ("a FIFO", "a link to a device", "a link to a folder")


def put_irregular(path: Path, kind: str) -> Path:
    """Replace the file *path* by *kind* (one of :data:`IRREGULAR`); the folder a link to a folder points at
    (``elsewhere`` beside the repository, created empty), which nothing may be written into."""
    path.unlink()
    elsewhere = path.parent.parent.parent / "elsewhere"
    if kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "a link to a device":
        path.symlink_to(os.devnull)
    else:
        elsewhere.mkdir()
        path.symlink_to(elsewhere)
    return elsewhere


def tree(folder: Path) -> Dict[str, bytes]:
    """Every regular file under *folder*, by its path relative to it."""
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}
