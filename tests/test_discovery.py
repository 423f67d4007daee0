"""The discovery policy (issue 12, class 3): which files under ``specs/`` a run takes, the same for every run.

Hidden files and folders are skipped (editor locks, archives); ``.gitignore``
is not read; a symlinked folder is followed once, a loop cut; ``--exclude`` and
the configuration's ``exclude`` leave files out by pattern; a folder that
cannot be read is an error, never a silent skip, and regen never removes an
artifact because it could not read its spec. ``--changed-since`` picks among
the same files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest

from pipeline.check.discovery import find_spec_files
from tests.spec_repos import SPECS, commit_all, git_repo, make_repo, run, uncounted

LLAMA = "specs/llama/llama-3.1-8b.yaml"


def _found(repo: Path) -> List[str]:
    return [path.relative_to(repo).as_posix() for path in find_spec_files([repo / "specs"])]


def test_hidden_files_and_folders_are_skipped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "specs" / "llama" / ".#llama-3.1-8b.yaml").symlink_to("user@host.1234:1700000000")  # an Emacs lock
    (repo / "specs" / ".archive").mkdir()
    (repo / "specs" / ".archive" / "llama-3.1-8b.yaml").write_bytes((repo / LLAMA).read_bytes())
    (repo / "specs" / "llama" / ".hidden.yml").write_text("{", encoding="utf-8")
    assert _found(repo) == list(SPECS)
    result = run(repo, "check")
    assert (result.exit_code, result.stdout) == (0, uncounted(*SPECS))


def test_a_hidden_file_named_is_checked(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    hidden = repo / "specs" / "llama" / ".draft.yaml"
    hidden.write_text("{", encoding="utf-8")
    result = run(repo, "check", str(hidden))
    assert result.exit_code == 1
    assert "[yaml.syntax]" in result.stdout


def test_a_symlinked_folder_is_followed_once_and_a_loop_is_cut(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "tiny.yaml").write_text("name: llama-tiny\nhidden_size: 64\nnum_hidden_layers: 2\n"
                                       "num_attention_heads: 4\nvocab_size: 100\nintermediate_size: 128\n"
                                       "arch: llama\n", encoding="utf-8")
    (repo / "specs" / "linked").symlink_to(outside)
    (repo / "specs" / "llama" / "again").symlink_to(repo / "specs" / "llama")  # a loop
    (repo / "specs" / "twice").symlink_to(outside)  # the same folder by a second link
    assert _found(repo) == [SPECS[0], "specs/linked/tiny.yaml", *SPECS[1:]]
    result = run(repo, "check")
    # Each file once (the fixture's profiles price nothing, so each is warned as uncounted, once).
    assert (result.exit_code, [line.split(":")[0] for line in result.stdout.splitlines()]) == \
        (0, [SPECS[0], "specs/linked/tiny.yaml", *SPECS[1:], "0 errors, 4 warnings in 4 files (0 files clean)"])


def test_a_broken_spec_in_a_symlinked_folder_fails_the_run_as_named_directly(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "bad.yaml").write_text("name: bad\nhidden_size: -1\n", encoding="utf-8")
    (repo / "specs" / "linked").symlink_to(outside)
    through = run(repo, "check")
    direct = run(repo, "check", str(outside))
    assert through.exit_code == direct.exit_code == 1
    assert through.stdout.count("error [") == direct.stdout.count("error [") > 0


@pytest.mark.parametrize("how", ["option", "configuration"])
def test_exclude_leaves_files_out_by_pattern(tmp_path: Path, how: str) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "specs" / "drafts").mkdir()
    (repo / "specs" / "drafts" / "broken.yaml").write_text("{", encoding="utf-8")
    args = ["--exclude", "specs/drafts/*"] if how == "option" else []
    if how == "configuration":
        (repo / "modelspec.toml").write_text('exclude = ["specs/drafts/*"]\n', encoding="utf-8")
    result = run(repo, "check", *args)
    assert (result.exit_code, result.stdout) == (0, uncounted(*SPECS))
    formatted = run(repo, "fmt", "--check", *args)
    assert "drafts" not in formatted.output and "yaml.syntax" not in formatted.output


def test_exclude_matches_a_file_by_the_path_it_was_found_at(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "broken.yaml").write_text("{", encoding="utf-8")
    (repo / "specs" / "linked").symlink_to(outside)
    assert run(repo, "check").exit_code == 1
    assert run(repo, "check", "--exclude", "specs/linked/*").exit_code == 0


def test_changed_since_takes_the_same_files(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "specs" / ".archive").mkdir()
    (repo / "specs" / ".archive" / "copy.yaml").write_bytes((repo / LLAMA).read_bytes())
    (repo / "specs" / "llama" / ".#lock.yaml").symlink_to("user@host")
    commit_all(repo, "leftovers")
    result = run(repo, "check", "--changed-since", "HEAD~1")
    assert result.exit_code == 0, result.output
    assert "copy.yaml" not in result.output and ".#lock" not in result.output


def _unreadable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make *folder* unlistable, as ``chmod 000`` would for a user who is not root (the tests may run as root)."""
    real_scandir = os.scandir

    def scandir(path=".", *args, **kwargs):
        if os.path.abspath(os.fspath(path)) == str(folder):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path, *args, **kwargs)

    monkeypatch.setattr(os, "scandir", scandir)


def test_an_unreadable_folder_fails_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    _unreadable(monkeypatch, repo / "specs" / "qwen")
    result = run(repo, "check")
    assert result.exit_code == 1
    lines = uncounted(*SPECS[:2]).splitlines()
    assert result.stdout.splitlines() == lines[:2] + [
        "specs/qwen:1:1: error [yaml.unreadable] a folder that cannot be read (Permission denied), so the specs in "
        "it are not checked; give it read permission, or exclude it",
        "specs/qwen: skipped schema, semantic, stack, roundtrip (an earlier pass failed; fix its errors and check "
        "again)",
        "1 error, 2 warnings in 3 files (0 files clean)"]


def test_regen_never_removes_an_artifact_because_its_folder_could_not_be_read(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    assert run(repo, "regen").exit_code == 0
    artifact = repo / "resolved" / "qwen3.5-35b-a3b.json"
    before = artifact.read_bytes()
    _unreadable(monkeypatch, repo / "specs" / "qwen")
    checked = run(repo, "regen", "--check")
    assert checked.exit_code == 1
    assert "orphaned" not in checked.stdout and "is gone" not in checked.stdout
    written = run(repo, "regen")
    assert written.exit_code == 1
    assert "specs/qwen:1:1: error [regen.spec-fails]" in written.stdout
    assert artifact.read_bytes() == before
