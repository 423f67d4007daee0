"""The artifact cache: ``regen --check`` and ``regen`` report byte for byte what they do without it, and skip
checking and building only what the cache really knows.

Each test builds the fixture repository in ``tmp_path``, regenerates it, ages every file (so stats stand for
bytes, past the racy window) and settles the cache with one ``--check``. Then it changes one thing and compares
``regen --check`` with and without the cache. The specs checked
(:func:`pipeline.check.runner.check_document`) and the artifacts built (:func:`pipeline.catalogue.regen.build_artifact`) are
counted, so "reused" is a fact.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from pipeline.catalogue import regen

from pipeline.check import runner
from pipeline.cache.artifacts import ARTIFACTS_FILE, ARTIFACTS_FORMAT, ARTIFACTS_HEADER, ArtifactCache
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.cache.results import PROFILES_FILE, PROFILES_HEADER, cache_keys, line_checksum, now_ns
from pipeline.cache.stamps import CACHE_DIR_ENV
from spec_repos import GIT_ENV, SPECS, commit_all, edit, git_repo, make_repo, modelspec_argv, run

#: The cache's clock stopped at each test's start (tests/conftest.py): no verdict depends on the run's speed.
pytestmark = pytest.mark.usefixtures("frozen_clock")

DEEPSEEK, LLAMA, QWEN = SPECS
OLD = 1_600_000_000  # an mtime (2020) long before any entry's reading: the stat rule applies


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Dict[str, List[str]]:
    """The specs checked and the artifacts built, in order."""
    seen: Dict[str, List[str]] = {"checked": [], "built": []}
    check_document, build_artifact = runner.check_document, regen.build_artifact

    def checking(doc, profiles):
        seen["checked"].append(doc.file)
        return check_document(doc, profiles)

    def building(checked, inputs, profile):
        seen["built"].append(inputs.path)
        return build_artifact(checked, inputs, profile)

    monkeypatch.setattr(runner, "check_document", checking)
    monkeypatch.setattr(regen, "build_artifact", building)
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    return seen


def age(root: Path) -> None:
    """Give every spec, profile and artifact an old mtime (past the racy window of any entry made after)."""
    for folder in ("specs", "op_profiles", "resolved"):
        for path in (root / folder).rglob("*"):
            if path.is_file():
                os.utime(path, (OLD, OLD))


def settled(root: Path) -> Path:
    """*root* regenerated, aged, and its cache settled (every spec recorded, every artifact vouched)."""
    assert run(root, "regen").exit_code == 0
    age(root)
    assert run(root, "regen", "--check").exit_code == 0
    return root


@pytest.fixture
def repo(tmp_path: Path, counted: Dict[str, List[str]]) -> Path:
    """The fixture repository, regenerated and settled; the counts start empty."""
    root = settled(make_repo(tmp_path / "repo"))
    counted["checked"].clear()
    counted["built"].clear()
    return root


def check_both(root: Path, *args: str, counted: Dict[str, List[str]]) -> Tuple[int, str, List[str], List[str]]:
    """``regen --check ARGS`` without the cache, then twice with it: the three must print the same and exit the
    same. Returns that exit code and output, and the specs the first cached run checked and built."""
    cold = run(root, "regen", "--check", "--no-cache", *args)
    counted["checked"].clear()
    counted["built"].clear()
    cached = run(root, "regen", "--check", *args)
    checked, built = list(counted["checked"]), list(counted["built"])
    again = run(root, "regen", "--check", *args)
    assert (cached.exit_code, cached.stdout) == (cold.exit_code, cold.stdout)
    assert (again.exit_code, again.stdout) == (cold.exit_code, cold.stdout)
    return cold.exit_code, cold.stdout, checked, built


def test_an_unchanged_tree_is_found_in_sync_without_checking_or_building(repo: Path, counted) -> None:
    code, out, checked, built = check_both(repo, counted=counted)
    assert (code, out) == (0, "resolved/ is up to date (3 artifacts and the index)\n")
    assert (checked, built) == ([], [])
    for fmt in ("json",):
        assert run(repo, "regen", "--check", "--format", fmt).stdout \
            == run(repo, "regen", "--check", "--format", fmt, "--no-cache").stdout


def test_a_no_op_regen_builds_nothing_and_a_regen_records_what_it_wrote(repo: Path, counted) -> None:
    result = run(repo, "regen")
    assert (result.exit_code, result.stdout) == (0, "regen: resolved/ is up to date (3 artifacts)\n")
    assert (counted["checked"], counted["built"]) == ([], [])
    edit(repo / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 30")
    result = run(repo, "regen")
    assert result.stdout.splitlines()[:2] == ["wrote resolved/llama-3.1-8b.json", "wrote resolved/index.json"]
    assert (counted["checked"], counted["built"]) == ([LLAMA], [LLAMA])
    age(repo)  # past the racy window: what regen wrote is vouched by its stat (after one re-reading)
    assert run(repo, "regen", "--check").exit_code == 0
    counted["checked"].clear()
    counted["built"].clear()
    code, out, checked, built = check_both(repo, counted=counted)
    assert (code, checked, built) == (0, [], [])


def test_a_check_right_after_regen_hashes_the_racy_artifacts_instead_of_building(tmp_path: Path, counted) -> None:
    root = make_repo(tmp_path / "repo")
    assert run(root, "regen").exit_code == 0
    counted["checked"].clear()
    counted["built"].clear()
    code, out, checked, built = check_both(root, counted=counted)
    assert (code, built) == (0, [])


def test_an_edited_spec_is_checked_and_built_alone(repo: Path, counted) -> None:
    edit(repo / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 30")
    code, out, checked, built = check_both(repo, counted=counted)
    assert (code, out) == (1, "resolved/index.json:1:1: error [regen.stale] resolved/index.json is out of date; run "
                              "modelspec regen\n"
                              "resolved/llama-3.1-8b.json:1:1: error [regen.stale] resolved/llama-3.1-8b.json is out "
                              f"of date (from {LLAMA}); run modelspec regen\n"
                              "resolved/ is out of date (2 stale); run modelspec regen\n")
    assert (checked, built) == ([LLAMA], [LLAMA])


def _same_size_edit(path: Path) -> None:
    """Change one digit of *path* keeping its size, then give it back its mtime."""
    status = path.stat()
    text = path.read_text(encoding="utf-8")
    at = text.index('"num_hidden_layers": ') + len('"num_hidden_layers": ')
    digit = text[at]
    path.write_text(text[:at] + ("7" if digit != "7" else "8") + text[at + 1:], encoding="utf-8")
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (status.st_size, status.st_mtime_ns)


def test_a_hand_edit_keeping_size_and_mtime_is_caught(repo: Path, counted) -> None:
    _same_size_edit(repo / "resolved" / "llama-3.1-8b.json")  # the ctime moved: the stat is not the entry's
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1 and "error [regen.stale] resolved/llama-3.1-8b.json is out of date" in out
    assert (checked, built) == ([], [])  # the spec is known; the file's bytes are not the ones its entry records


def _keys(root: Path):
    return cache_keys(load_op_profiles(root / "op_profiles"))


def test_a_racy_stat_is_not_trusted(repo: Path, counted) -> None:
    """An edit in the same clock tick as the entry's reading could leave the stat as it was: the entry is then
    told the edited file's stat with a reading time inside the racy window, and the file's bytes are hashed."""
    artifact = repo / "resolved" / "llama-3.1-8b.json"
    _same_size_edit(artifact)
    os.utime(artifact, ns=(now_ns(), now_ns()))
    cache = ArtifactCache(repo / ".modelspec_cache", _keys(repo))
    cache.add(LLAMA, cache.entry(LLAMA).restated(artifact.stat(), now_ns()))
    assert cache.save() is None
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1 and "error [regen.stale] resolved/llama-3.1-8b.json is out of date" in out


def test_a_stat_equal_past_the_racy_window_stands_for_the_bytes_as_in_git(repo: Path, counted) -> None:
    """The rule's one assumption, stated: an entry whose stat (size, mtime, inode, ctime) is the file's, read
    over RACY_NS after the mtime, is believed; a real edit cannot keep the ctime, so only a forged entry does."""
    artifact = repo / "resolved" / "llama-3.1-8b.json"
    _same_size_edit(artifact)
    cache = ArtifactCache(repo / ".modelspec_cache", _keys(repo))
    cache.add(LLAMA, cache.entry(LLAMA).restated(artifact.stat(), now_ns()))
    assert cache.save() is None
    assert run(repo, "regen", "--check").stdout == "resolved/ is up to date (3 artifacts and the index)\n"
    assert run(repo, "regen", "--check", "--no-cache").exit_code == 1


def test_a_deleted_artifact_is_missing(repo: Path, counted) -> None:
    (repo / "resolved" / "qwen3.5-35b-a3b.json").unlink()
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1 and f"error [regen.missing] resolved/qwen3.5-35b-a3b.json is missing (from {QWEN})" in out


def test_an_orphan_and_an_extra_artifact_are_reported(repo: Path, counted) -> None:
    (repo / DEEPSEEK).unlink()
    ghost = json.loads((repo / "resolved" / "llama-3.1-8b.json").read_text(encoding="utf-8"))
    ghost.update(name="ghost", path="specs/ghost.yaml")
    (repo / "resolved" / "ghost.json").write_text(json.dumps(ghost), encoding="utf-8")
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1
    assert "error [regen.orphaned] resolved/deepseek-v3.json is orphaned" in out
    assert "error [regen.orphaned] resolved/ghost.json is orphaned" in out
    assert built == []


def test_an_edited_index_is_stale(repo: Path, counted) -> None:
    index = repo / "resolved" / "index.json"
    index.write_text(index.read_text(encoding="utf-8").replace('"current": true', '"current": false', 1),
                     encoding="utf-8")
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1 and "error [regen.stale] resolved/index.json is out of date" in out
    assert (checked, built) == ([], [])


def test_an_edited_profile_rebuilds_exactly_its_specs(repo: Path, counted) -> None:
    profile = repo / "op_profiles" / "llama.yaml"
    profile.write_text(profile.read_text(encoding="utf-8") + "\n# a comment changes the bytes\n", encoding="utf-8")
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1 and "resolved/llama-3.1-8b.json is out of date" in out  # its digest covers the profile
    assert (checked, built) == ([LLAMA], [LLAMA])


def test_a_failing_spec_is_reported_from_its_record(repo: Path, counted) -> None:
    edit(repo / QWEN, "num_hidden_layers: 40", "num_hidden_layers: -1")
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1 and f"{QWEN}:" in out and "error [regen.spec-fails] fails modelspec check" in out
    assert (checked, built) == ([QWEN], [])
    counted["checked"].clear()
    assert run(repo, "regen", "--check").stdout == out
    assert counted["checked"] == []  # the second run takes the failure from the result cache


def test_two_specs_of_one_name_are_refused_alike(repo: Path, counted) -> None:
    shutil.copyfile(repo / LLAMA, repo / "specs" / "llama" / "copy.yaml")
    age(repo)
    code, out, checked, built = check_both(repo, counted=counted)
    assert code == 1 and out.count("error [regen.duplicate-name]") == 2


def test_changed_since_reports_alike(tmp_path: Path, counted) -> None:
    root = git_repo(tmp_path / "repo")
    settled(root)
    commit_all(root, "regenerated")
    edit(root / DEEPSEEK, "num_hidden_layers: 61", "num_hidden_layers: 60")
    (root / "resolved" / "llama-3.1-8b.json").unlink()
    code, out, checked, built = check_both(root, "--changed-since", "HEAD", counted=counted)
    assert (code, out) == (1, f"resolved/deepseek-v3.json:1:1: error [regen.stale] resolved/deepseek-v3.json is out "
                              f"of date (from {DEEPSEEK}); run modelspec regen\n"
                              "resolved/index.json:1:1: error [regen.stale] resolved/index.json is out of date; run "
                              "modelspec regen\n"
                              "resolved/ is out of date (2 stale); run modelspec regen\n")
    assert (checked, built) == ([DEEPSEEK], [DEEPSEEK])


def _entry_lines(root: Path) -> List[str]:
    return (root / ".modelspec_cache" / ARTIFACTS_FILE).read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("damage", ["truncated", "another spec's entry", "forged checksum, other environment",
                                    "garbage", "another format"])
def test_a_damaged_entry_is_ignored_and_verified_again(repo: Path, counted, damage: str) -> None:
    path = repo / ".modelspec_cache" / ARTIFACTS_FILE
    lines = _entry_lines(repo)
    latest = {line.split("\t", 1)[0]: line for line in lines[1:] if line}
    llama = latest[LLAMA]
    spec, _, rest = llama.split("\t", 2)
    others = [line for key, line in latest.items() if key != LLAMA]
    if damage == "truncated":
        text = "\n".join([lines[0], *others, llama[:len(llama) // 2]])
    elif damage == "another spec's entry":  # deepseek's record under llama's path, checksum and all
        _, checksum, other = latest[DEEPSEEK].split("\t", 2)
        text = "\n".join([lines[0], *others, "\t".join([LLAMA, checksum, other])]) + "\n"
    elif damage == "forged checksum, other environment":
        fields = rest.split("\t")
        fields[1] = "0" * 32
        forged = "\t".join(fields)
        text = "\n".join([lines[0], *others, "\t".join([LLAMA, line_checksum(LLAMA, forged), forged])]) + "\n"
    elif damage == "garbage":
        text = "\n".join([lines[0], *others, f"{LLAMA}\tnot a checksum\t\x00 not an entry"]) + "\n"
    else:
        text = ARTIFACTS_HEADER.replace(f"format {ARTIFACTS_FORMAT}", "format 0") + "\n".join([*others, llama]) + "\n"
    path.write_text(text, encoding="utf-8")
    code, out, checked, built = check_both(repo, counted=counted)
    assert (code, out) == (0, "resolved/ is up to date (3 artifacts and the index)\n")
    assert LLAMA in built and (built == [LLAMA] or damage == "another format")
    assert set(built) <= set(SPECS)
    counted["built"].clear()
    assert run(repo, "regen", "--check").exit_code == 0 and counted["built"] == []  # rewritten, trusted again


def test_an_unwritable_cache_costs_only_the_reuse(repo: Path, counted, tmp_path: Path, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    result = run(repo, "regen", "--check")
    assert (result.exit_code, result.stdout) == (0, "resolved/ is up to date (3 artifacts and the index)\n")
    assert "cannot write the result cache" in result.stderr


def test_an_index_in_another_layout_is_stale_alike(repo: Path, counted) -> None:
    index = repo / "resolved" / "index.json"
    index.write_text(json.dumps(json.loads(index.read_text(encoding="utf-8"))), encoding="utf-8")
    code, out, checked, built = check_both(repo, counted=counted)
    assert (code, out) == (1, "resolved/index.json:1:1: error [regen.stale] resolved/index.json is out of date; run "
                              "modelspec regen\nresolved/ is out of date (1 stale); run modelspec regen\n")


def _damage(root: Path, how: str) -> None:
    resolved = root / "resolved"
    if how == "artifact deleted":
        (resolved / "llama-3.1-8b.json").unlink()
    elif how == "artifact edited":
        _same_size_edit(resolved / "llama-3.1-8b.json")
    elif how == "index edited":
        index = resolved / "index.json"
        index.write_text(index.read_text(encoding="utf-8").replace('"current": true', '"current": false', 1),
                         encoding="utf-8")
    elif how == "spec deleted":
        (root / DEEPSEEK).unlink()
    else:
        edit(root / QWEN, "num_hidden_layers: 40", "num_hidden_layers: 38")


@pytest.mark.parametrize("how", ["artifact deleted", "artifact edited", "index edited", "spec deleted",
                                 "spec edited"])
def test_regen_repairs_alike_with_and_without_the_cache(tmp_path: Path, counted, how: str) -> None:
    cached, cold = (settled(make_repo(tmp_path / name)) for name in ("cached", "cold"))
    for root in (cached, cold):
        _damage(root, how)
    counted["built"].clear()
    with_cache = run(cached, "regen")
    rebuilt = {"artifact deleted": [LLAMA], "artifact edited": [LLAMA], "spec edited": [QWEN]}
    assert counted["built"] == rebuilt.get(how, [])
    without = run(cold, "regen", "--no-cache")
    assert (with_cache.exit_code, with_cache.stdout) == (without.exit_code, without.stdout)
    assert _tree(cached / "resolved") == _tree(cold / "resolved")
    counted["built"].clear()
    assert run(cached, "regen", "--check").exit_code == 0 and counted["built"] == []


def _tree(folder: Path) -> Dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if not path.name.startswith(".")}


def test_the_first_regen_keeps_the_checked_profiles(tmp_path: Path, counted) -> None:
    root = make_repo(tmp_path / "repo")
    assert not (root / ".modelspec_cache").exists()
    assert run(root, "regen").exit_code == 0
    assert (root / ".modelspec_cache" / PROFILES_FILE).read_text(encoding="utf-8").startswith(PROFILES_HEADER)


def test_a_usage_error_leaves_no_cache_folder(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    assert run(root, "regen", "--check", "--commit").exit_code == 2
    assert not (root / ".modelspec_cache").exists()


def test_concurrent_runs_share_the_cache(tmp_path: Path, counted) -> None:
    root = make_repo(tmp_path / "repo")
    assert run(root, "regen").exit_code == 0
    edit(root / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 30")
    env = {**os.environ, **GIT_ENV}
    env.pop(CACHE_DIR_ENV, None)
    runs = [subprocess.Popen(modelspec_argv(*args, "--root", str(root)), env=env, stdout=subprocess.PIPE, text=True)
            for args in (("regen",), ("regen", "--check"), ("regen", "--check"), ("regen",))]
    for process in runs:
        process.communicate(timeout=120)
        assert process.returncode in (0, 1)
    age(root)
    cold = run(root, "regen", "--check", "--no-cache")
    counted["built"].clear()
    cached = run(root, "regen", "--check")
    assert (cached.exit_code, cached.stdout) == (cold.exit_code, cold.stdout) \
        == (0, "resolved/ is up to date (3 artifacts and the index)\n")
    assert counted["built"] == []  # the entries the four runs left stand: aged files are hashed, not built
