"""The checked op profiles kept in the result cache folder (``profiles``): a hit builds exactly the profiles a
fresh read does; a miss, a damaged entry, a profile edit or another environment reads and checks them again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

import pipeline
from pipeline.pricing import op_profiles
from pipeline.cache import results as result_cache
from pipeline.cache import stamps
from pipeline.pricing.op_profiles import OpProfileError, bundled_profiles_dir, forget_read_profiles, load_op_profiles
from pipeline.cache.results import PROFILES_FILE, PROFILES_HEADER, ProfileCache, json_exact

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> List[Path]:
    """The profiles folders read and checked from their YAML (the profile cache's misses)."""
    folders: List[Path] = []
    real = op_profiles._checked_folder

    def counting(root, paths):
        folders.append(root)
        return real(root, paths)

    monkeypatch.setattr(op_profiles, "_checked_folder", counting)
    forget_read_profiles()
    yield folders
    forget_read_profiles()


def load(root: Path, cache: Path):
    """A fresh process's :func:`load_op_profiles` (the per-process memo cleared), the cache folder made (the
    result cache's save makes it)."""
    forget_read_profiles()
    if cache is not None and not cache.exists():
        cache.mkdir()
    return load_op_profiles(root, ProfileCache(cache) if cache is not None else None)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the bundled op profiles."""
    return Path(shutil.copytree(bundled_profiles_dir(), tmp_path / "op_profiles"))


def test_a_hit_builds_exactly_what_a_fresh_read_does(folder: Path, tmp_path: Path, reads: List[Path]) -> None:
    cache = tmp_path / "cache"
    fresh = load(folder, None)
    assert reads == [folder.resolve()]
    reads.clear()
    first = load(folder, cache)
    assert reads == [folder.resolve()]  # a miss: read, checked, kept
    text = (cache / PROFILES_FILE).read_text(encoding="utf-8")
    assert text.startswith(PROFILES_HEADER) and text.endswith("\n") and text.count("\n") == 2
    reads.clear()
    second = load(folder, cache)
    assert reads == []  # a hit
    assert second == first == fresh
    assert list(second.profiles) == list(fresh.profiles)
    assert (cache / PROFILES_FILE).read_text(encoding="utf-8") == text  # a hit writes nothing


def test_a_copy_of_a_folder_this_process_checked_is_built_from_its_documents(folder: Path, tmp_path: Path,
                                                                            reads: List[Path]) -> None:
    # Each test's repository is a fresh copy of the same profiles: the check is a function of the files' names and
    # bytes, so the process checks them once. An edit or a renamed file is another folder, read from its YAML.
    cache = tmp_path / "cache"
    cache.mkdir()
    first = load_op_profiles(folder)
    copy = Path(shutil.copytree(folder, tmp_path / "copy")).resolve()
    again = load_op_profiles(copy, ProfileCache(cache))
    assert reads == [folder.resolve()]
    assert again.root == copy and {arch: again.profiles.path_of(arch) for arch in again.profiles} == {
        arch: copy / profile.path.name for arch, profile in first.profiles.items()}
    assert (cache / PROFILES_FILE).is_file()  # the profile cache keeps what the memo gave
    forget_read_profiles()
    assert dict(again.profiles) == dict(load_op_profiles(copy).profiles)  # built as a fresh read builds them
    assert reads == [folder.resolve(), copy]
    edited = Path(shutil.copytree(folder, tmp_path / "edited")).resolve()
    (edited / "llama.yaml").write_bytes((edited / "llama.yaml").read_bytes() + b"# edited\n")
    renamed = Path(shutil.copytree(folder, tmp_path / "renamed")).resolve()
    (renamed / "llama.yaml").rename(renamed / "llama2.yaml")
    load_op_profiles(edited)
    with pytest.raises(OpProfileError):
        load_op_profiles(renamed)  # its arch is not its file's stem: a name is part of what is checked
    assert reads == [folder.resolve(), copy, edited, renamed]


@pytest.mark.parametrize("damage", ["truncated", "flipped", "other key", "other format", "garbage", "empty"])
def test_a_damaged_entry_is_ignored_and_rewritten(folder: Path, tmp_path: Path, reads: List[Path],
                                                 damage: str) -> None:
    cache = tmp_path / "cache"
    fresh = load(folder, cache)
    entry = cache / PROFILES_FILE
    good = entry.read_bytes()
    header, key, rest = good.split(b"\n", 1)[0] + b"\n", *good.split(b"\n", 1)[1].split(b"\t", 1)
    damaged = {
        "truncated": good[:len(good) // 2],
        "flipped": good.replace(b'"arch":"llama"', b'"arch":"llamb"'),
        "other key": header + b"0" * len(key) + b"\t" + rest,
        "other format": good.replace(PROFILES_HEADER.encode(), b"modelspec op profile cache, format 0\n"),
        "garbage": b"\xff\xfe not a cache\n",
        "empty": b"",
    }[damage]
    assert damaged != good
    entry.write_bytes(damaged)
    reads.clear()
    assert load(folder, cache) == fresh
    assert reads == [folder.resolve()]
    assert entry.read_bytes() == good  # rewritten valid
    reads.clear()
    assert load(folder, cache) == fresh and reads == []


def test_a_profile_edit_invalidates(folder: Path, tmp_path: Path, reads: List[Path]) -> None:
    cache = tmp_path / "cache"
    load(folder, cache)
    llama = folder / "llama.yaml"
    text = llama.read_text(encoding="utf-8")
    assert "      attMM: 4  " in text
    llama.write_text(text.replace("      attMM: 4  ", "      attMM: 5  ", 1), encoding="utf-8")
    reads.clear()
    edited = load(folder, cache)
    assert reads == [folder.resolve()]
    assert edited == load(folder, None)
    assert edited.profiles["llama"].layer_kinds["full_attention"].ops.attMM == 5
    reads.clear()
    assert load(folder, cache) == edited and reads == []
    # a file added or removed changes the key too
    shutil.copyfile(llama, folder / "llama_copy.yaml")
    reads.clear()
    with pytest.raises(OpProfileError):  # its arch is not its stem: refused, never kept
        load(folder, cache)
    assert reads == [folder.resolve()]
    (folder / "llama_copy.yaml").unlink()
    reads.clear()
    assert load(folder, cache) == edited and reads == []


def test_a_broken_folder_is_never_kept(folder: Path, tmp_path: Path, reads: List[Path]) -> None:
    cache = tmp_path / "cache"
    (folder / "llama.yaml").write_text("arch: llama\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(OpProfileError):
            load(folder, cache)
    assert len(reads) == 2 and not (cache / PROFILES_FILE).exists()


def test_another_version_is_a_miss(folder: Path, tmp_path: Path, reads: List[Path],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    fresh = load(folder, cache)
    monkeypatch.setattr(pipeline, "__version__", pipeline.__version__ + ".post1")
    reads.clear()
    assert load(folder, cache) == fresh and reads == [folder.resolve()]


def test_an_unwritable_cache_folder_costs_only_the_reading(folder: Path, tmp_path: Path, reads: List[Path]) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder would be\n", encoding="utf-8")
    assert load(folder, blocker) == load(folder, None)
    assert blocker.read_text(encoding="utf-8") == "a file where the folder would be\n"


def test_no_cache_folder_is_made_for_the_profiles(folder: Path, tmp_path: Path, reads: List[Path]) -> None:
    forget_read_profiles()
    load_op_profiles(folder, ProfileCache(tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()
    # the entry waits for the folder: the run that makes it (the results' save) keeps the profiles
    result_cache.prepare_folder(tmp_path / "cache")
    forget_read_profiles()
    assert load_op_profiles(folder, ProfileCache(tmp_path / "cache")) == load(folder, None) and len(reads) == 2


@pytest.mark.parametrize("value, exact", [
    ({"a": [1, 2.5, True, None, "x"]}, True),
    ({"a": float("nan")}, False),
    ({"a": float("inf")}, False),
    ({1: "int key"}, False),
    ({"a": (1, 2)}, False),
    ({"a": {"b": [{"c": -0.0}]}}, True),
    ({"a": 2 ** 70}, True),
])
def test_json_exact(value, exact: bool) -> None:
    assert json_exact(value) is exact


def test_check_reports_the_same_from_kept_profiles(tmp_path: Path) -> None:
    """Across processes (the memo cannot hide the cache): a cold run, then a run that builds the profiles from
    the kept documents, then ``--no-cache``; the same report byte for byte."""
    repo = Path(shutil.copytree(TESTS / "data" / "repo", tmp_path / "repo"))
    (repo / ".git").mkdir()
    env_cache = tmp_path / "cache"

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-c", "from pipeline.cli import main; main()", "check", "--root", str(repo),
                   "--jobs", "1", "--format", "json", *args]
        return subprocess.run(command, capture_output=True, text=True, check=False,
                              env={**os.environ, stamps.CACHE_DIR_ENV: str(env_cache)})

    cold = run()
    # the folder is made by the results' save, at the end, and the profiles checked before it are kept then
    assert (env_cache / PROFILES_FILE).exists()
    (env_cache / "results").unlink()  # only the profiles are kept: every spec is checked against them
    warm = run()
    uncached = run("--no-cache")
    assert cold.returncode == warm.returncode == uncached.returncode
    assert cold.stdout == warm.stdout == uncached.stdout and cold.stdout


def test_a_worker_loads_the_profiles_as_the_command_did(folder: Path, tmp_path: Path, reads: List[Path]) -> None:
    """A worker is handed the command's cache folder: it takes the kept profiles rather than checking them
    (and, forked, finds them in the memo it inherited, keyed by the same folder)."""
    from pipeline.cache import verdicts as runner

    cache = tmp_path / "cache"
    load(folder, cache)
    spec = TESTS.parent / "specs" / "llama" / "llama-3.1-8b.yaml"
    forget_read_profiles()
    reads.clear()
    [(verdict, _)] = runner._check_chunk([(str(spec), "specs/llama/llama-3.1-8b.yaml", None)], str(folder), None,
                                         False, str(cache))
    assert reads == [] and verdict.result.problems == ()
    forget_read_profiles()
    [(uncached, _)] = runner._check_chunk([(str(spec), "specs/llama/llama-3.1-8b.yaml", None)], str(folder), None,
                                          False)
    assert reads == [folder.resolve()] and uncached == verdict
