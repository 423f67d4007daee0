"""``diff`` at the cost of the change: a spec whose bytes and op profiles are equal on both sides is not resolved
(its resolution is the artifact cache's), and what the comparison says is what every spec resolved says."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import List, Tuple

import pytest

from spec_repos import IRREGULAR, commit_all, edit, git, modelspec_argv, put_irregular, run

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "specs").rglob("*.yaml"))
DEEPSEEK = "specs/deepseek/deepseek-v3.yaml"
LLAMA = "specs/llama/llama-3.1-8b.yaml"


@pytest.fixture
def catalogue(tmp_path: Path) -> Path:
    """The project's catalogue (its specs and op profiles) as a git repository with one commit."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "specs", root / "specs")
    shutil.copytree(ROOT / "op_profiles", root / "op_profiles")
    (root / ".gitignore").write_text("resolved/.regen.lock\n.modelspec_cache/\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "catalogue")
    return root


def both_ways(root: Path, resolved: List[str], *args: str):
    """``diff HEAD`` (the change's way) and ``diff HEAD --no-merge-base`` (every spec exported and resolved on
    each side, a full walk; HEAD is its own merge base, so both compare the same sides): each one's stdout and
    how many specs it resolved. The change's way is run twice, the second time with the memo the first left
    (:mod:`pipeline.cache.diff_memo`), and says the same both times."""
    fast = run(root, "diff", "HEAD", *args)
    fast_count = len(resolved)
    assert run(root, "diff", "HEAD", *args).stdout == fast.stdout
    again = len(resolved)
    slow = run(root, "diff", "HEAD", "--no-merge-base", *args)
    return fast.stdout, fast_count, slow.stdout, len(resolved) - again


def test_the_two_sides_of_one_edited_spec_are_all_a_regenerated_catalogue_resolves(catalogue: Path,
                                                                                   resolved: List[str]) -> None:
    assert run(catalogue, "regen").exit_code == 0
    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    resolved.clear()
    for fmt in ("text", "json", "markdown"):
        fast, fast_count, slow, slow_count = both_ways(catalogue, resolved, "--format", fmt)
        assert fast == slow
        assert (fast_count, slow_count) == (2, len(SPECS) + 1)  # a full walk: every spec, then the edited one again
        resolved.clear()
    assert run(catalogue, "diff", "HEAD").stdout == (
        f"resolved stacks HEAD -> working tree: 0 added, 0 removed, 1 changed, {len(SPECS) - 1} unchanged\n"
        "llama-3.1-8b: max_position_embeddings 131072 -> 65536\n")


def test_without_the_cache_each_spec_left_alone_is_resolved_once(catalogue: Path, resolved: List[str]) -> None:
    edit(catalogue / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    fast, fast_count, slow, slow_count = both_ways(catalogue, resolved, "--no-cache")
    assert fast == slow
    assert (fast_count, slow_count) == (len(SPECS) + 1, len(SPECS) + 1)


def test_a_name_taken_from_a_spec_left_alone_is_told_as_the_long_way_tells_it(catalogue: Path,
                                                                              resolved: List[str]) -> None:
    assert run(catalogue, "regen").exit_code == 0
    # deepseek-v3 (earlier by path) takes the Llama's name: the Llama, unchanged, now fails on the head side, and
    # the name pairs deepseek's document at the head with the Llama's at the base, which is then resolved in full
    edit(catalogue / DEEPSEEK, "name: deepseek-v3\n", "name: llama-3.1-8b\n")
    resolved.clear()
    fast, fast_count, slow, _ = both_ways(catalogue, resolved)
    assert fast == slow
    assert fast_count == 3
    assert f"does not resolve at working tree: {LLAMA} (its name is also {DEEPSEEK}'s)" in fast.splitlines()


def test_added_removed_and_renamed_specs_are_told_as_the_long_way_tells_them(catalogue: Path,
                                                                             resolved: List[str]) -> None:
    assert run(catalogue, "regen").exit_code == 0
    (catalogue / LLAMA).rename(catalogue / "specs" / "llama" / "renamed.yaml")
    (catalogue / DEEPSEEK).unlink()
    (catalogue / "specs" / "broken.yaml").write_text("name: broken\nhidden_size: 0\n", encoding="utf-8")
    resolved.clear()
    fast, fast_count, slow, _ = both_ways(catalogue, resolved)
    assert fast == slow
    assert fast_count == 4  # deepseek at the base, the Llama on each side, the broken spec at the head
    assert fast.splitlines()[0] == (f"resolved stacks HEAD -> working tree: 0 added, 1 removed, 1 changed, "
                                    f"{len(SPECS) - 2} unchanged, 1 newly failing")


def test_a_profile_edited_takes_the_long_way(catalogue: Path, resolved: List[str]) -> None:
    assert run(catalogue, "regen").exit_code == 0
    profile = catalogue / "op_profiles" / "llama.yaml"
    profile.write_text(profile.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    resolved.clear()
    fast, fast_count, slow, slow_count = both_ways(catalogue, resolved)
    assert fast == slow
    assert fast_count == slow_count == 2 * len(SPECS)


def test_an_untracked_file_among_the_profiles_takes_the_long_way(catalogue: Path, resolved: List[str]) -> None:
    (catalogue / ".gitignore").write_text("resolved/.regen.lock\n.modelspec_cache/\nop_profiles/notes.txt\n",
                                          encoding="utf-8")
    commit_all(catalogue, "ignore notes")
    (catalogue / "op_profiles" / "notes.txt").write_text("not tracked\n", encoding="utf-8")
    edit(catalogue / DEEPSEEK, "mtp_depth: 1", "mtp_depth: 2")
    fast, fast_count, slow, slow_count = both_ways(catalogue, resolved, "--no-cache")
    assert fast == slow
    assert fast_count == slow_count == len(SPECS) + 1


OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01: past any racy window


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> List[Tuple[Path, int]]:
    """Each walk (:func:`pipeline.check.discovery.spec_file_names`), in order: the folder it walked (the first
    named, resolved) and how many spec files it found."""
    from pipeline.cache import names
    from pipeline.check import discovery

    found: List[Tuple[Path, int]] = []
    real = discovery.spec_file_names

    def walk(paths, watched=None):
        files = real(paths, watched)
        found.append((Path(paths[0]).resolve(), len(files)))
        return files
    for module in (discovery, names):
        monkeypatch.setattr(module, "spec_file_names", walk)
    return found


def test_the_walk_a_check_recorded_is_the_walk_diff_takes_until_a_folder_changes(
        catalogue: Path, walks: List[Tuple[Path, int]]) -> None:
    specs = (catalogue / "specs").resolve()
    for path in [catalogue / "specs", *(catalogue / "specs").rglob("*")]:
        os.utime(path, ns=(OLD_NS, OLD_NS))  # no folder in its racy window: a check records its walk
    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    assert run(catalogue, "check", "-q", "--changed-since", "HEAD").exit_code == 0
    walks.clear()
    fast = run(catalogue, "diff", "HEAD").stdout
    assert [found for folder, found in walks if folder == specs] == []  # the working tree's: the names snapshot's
    assert fast == run(catalogue, "diff", "HEAD", "--no-merge-base").stdout
    assert fast.splitlines()[1] == "llama-3.1-8b: max_position_embeddings 131072 -> 65536"
    # a spec added changes its folder's mtime: the snapshot no longer stands for the walk, which is walked again
    (catalogue / "specs" / "llama" / "copy.yaml").write_text(
        (catalogue / LLAMA).read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: llama-copy"),
        encoding="utf-8")
    walks.clear()
    fast = run(catalogue, "diff", "HEAD").stdout
    assert [found for folder, found in walks if folder == specs] == [len(SPECS) + 1]
    assert fast == run(catalogue, "diff", "HEAD", "--no-merge-base").stdout
    assert fast.splitlines()[1].startswith("added llama-copy: ")


def test_the_long_way_walks_each_side_once(catalogue: Path, walks: List[Tuple[Path, int]]) -> None:
    # the progress bar's total and the specs resolved are one walk, not two
    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    assert run(catalogue, "diff", "HEAD", "--no-merge-base").exit_code == 0
    assert [found for _, found in walks] == [len(SPECS), len(SPECS)]  # HEAD's export, then the working tree
    assert walks[1][0] == (catalogue / "specs").resolve()


@pytest.fixture
def looked_up(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The display of each spec a run looks up in the result and artifact caches
    (:func:`pipeline.catalogue.regen._known`), in order."""
    from pipeline.catalogue import regen

    displays: List[str] = []
    real = regen._known

    def known(display: str, path, cache):
        displays.append(display)
        return real(display, path, cache)
    monkeypatch.setattr(regen, "_known", known)
    return displays


def memo_displays(root: Path) -> List[str]:
    """The displays the memo in *root*'s cache holds, as the file has them."""
    text = (root / ".modelspec_cache" / "diff-memo").read_text(encoding="utf-8")
    return sorted(json.loads(text.partition("\n")[2]))


def test_a_spec_left_alone_is_taken_from_the_memo_by_its_blob_without_a_lookup(
        catalogue: Path, resolved: List[str], looked_up: List[str]) -> None:
    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    first = run(catalogue, "diff", "HEAD").stdout
    assert (len(resolved), len(looked_up)) == (len(SPECS) + 1, len(SPECS) - 1)  # no artifact cache: all built
    assert memo_displays(catalogue) == [path for path in SPECS if path != LLAMA]
    resolved.clear()
    looked_up.clear()
    assert run(catalogue, "diff", "HEAD").stdout == first
    assert (resolved, looked_up) == ([LLAMA, LLAMA], [])  # the edited spec on each side, nothing else read
    # the memo is keyed by the bytes' blob: committing another spec's edit makes its blob new, so it is looked up
    edit(catalogue / DEEPSEEK, "mtp_depth: 1\n", "mtp_depth: 1  # a comment\n")
    git(catalogue, "commit", "-q", "-m", "deepseek", "--", DEEPSEEK)
    resolved.clear()
    looked_up.clear()
    assert run(catalogue, "diff", "HEAD").stdout == first
    assert looked_up == [DEEPSEEK]


def test_without_the_cache_no_memo_is_read_or_written(catalogue: Path, resolved: List[str]) -> None:
    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    run(catalogue, "diff", "HEAD")
    resolved.clear()
    assert run(catalogue, "diff", "HEAD", "--no-cache").exit_code == 0
    assert len(resolved) == len(SPECS) + 1
    shutil.rmtree(catalogue / ".modelspec_cache")
    run(catalogue, "diff", "HEAD", "--no-cache")
    assert not (catalogue / ".modelspec_cache" / "diff-memo").exists()


@pytest.mark.parametrize("memo", [
    {LLAMA: "not a list"}, {DEEPSEEK: [1, 2, 3]}, {DEEPSEEK: ["blob", "name"]}, {DEEPSEEK: [None, None, None]},
], ids=["string", "integers", "two", "nulls"])
def test_a_memo_of_another_shape_is_not_taken(catalogue: Path, resolved: List[str], memo) -> None:
    from pipeline.cache import diff_memo

    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    first = run(catalogue, "diff", "HEAD").stdout
    folder = catalogue / ".modelspec_cache"
    text = (folder / "diff-memo").read_text(encoding="utf-8")
    held = json.loads(text.partition("\n")[2])
    blob = held[DEEPSEEK][0]
    held.update({path: [blob, *value[1:]] if isinstance(value, list) and len(value) == 3 and value[0] else value
                 for path, value in memo.items()})
    profiles = text.split("\t")[2]
    diff_memo.record(folder, profiles, (catalogue / "specs").resolve(), held)
    assert diff_memo.load(folder, profiles, (catalogue / "specs").resolve()) == held  # a memo, of odd values
    resolved.clear()
    assert run(catalogue, "diff", "HEAD").stdout == first
    assert len(resolved) == 2 + (DEEPSEEK in memo)


def test_a_torn_or_edited_memo_is_no_memo(catalogue: Path, resolved: List[str]) -> None:
    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    first = run(catalogue, "diff", "HEAD").stdout
    memo = catalogue / ".modelspec_cache" / "diff-memo"
    memo.write_text(memo.read_text(encoding="utf-8").replace("deepseek-v3", "deepseek-v4"), encoding="utf-8")
    resolved.clear()
    assert run(catalogue, "diff", "HEAD").stdout == first
    assert len(resolved) == len(SPECS) + 1  # the records say they pass, but no artifact entry says what to
    memo.write_text(memo.read_text(encoding="utf-8")[:-100], encoding="utf-8")
    assert run(catalogue, "diff", "HEAD").stdout == first
    assert "deepseek-v4" not in memo.read_text(encoding="utf-8")


@pytest.mark.parametrize("kind", IRREGULAR)
def test_a_memo_that_is_no_regular_file_is_no_memo_and_is_never_written_through(catalogue: Path, kind: str) -> None:
    # the class of regen's answer as a FIFO, which blocked its read forever: the memo is read and written alike
    edit(catalogue / LLAMA, "max_position_embeddings: 131072", "max_position_embeddings: 65536")
    first = run(catalogue, "diff", "HEAD").stdout
    memo = catalogue / ".modelspec_cache" / "diff-memo"
    elsewhere = put_irregular(memo, kind)
    done = subprocess.run(modelspec_argv("diff", "HEAD", "--root", str(catalogue)), capture_output=True, text=True,
                          timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, first, "")
    assert not elsewhere.exists() or list(elsewhere.iterdir()) == []
    if kind == "a FIFO":  # the memo was written in a file of its own, renamed over the FIFO
        assert stat.S_ISREG(memo.lstat().st_mode)
    else:  # never written through the link
        assert memo.is_symlink()
