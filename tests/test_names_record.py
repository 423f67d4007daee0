"""The names a check of a few files leaves out (pipeline/cache/names.py), in-process: from the record of the
catalogue's names the same names a full walk finds (without the cache, with it), the record's walk the same walk,
a hit counted by what it never calls, and a miss after a touched stat (bench/mutate.py runs this file;
tests/test_names_index.py runs the same through the command)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, List

import pytest

from pipeline.cache import names, snapshot, verdicts
from pipeline.cache.results import ResultCache, cache_keys
from pipeline.check.discovery import spec_files_and_reals
from pipeline.check.repo import SpecRepo
from pipeline.check.verdict import Verdict
from pipeline.pricing.op_profiles import load_op_profiles
from pipeline.spec.problems import FileResult
from pipeline.spec.resources import bundled_profiles_dir

OLD_NS = 1_577_836_800 * 10**9  # 2020-01-01: never racy
SPECS = {"specs/a.yaml": "alpha", "specs/c.yaml": "ALPHA", "specs/sub/b.yaml": "Beta"}


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A catalogue of three specs, two of one name case-folded, every stat aged; the current folder its root."""
    root = tmp_path.resolve() / "repo"
    for name, stated in SPECS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"name: {stated}\n", encoding="utf-8")
    for path in [*(root / name for name in SPECS), root / "specs" / "sub", root / "specs"]:
        os.utime(path, ns=(OLD_NS, OLD_NS))
    monkeypatch.chdir(root)
    return root


#: Each result cache a test opened: saved at its end (a cache that learnt a name spools it to a temporary file).
_OPENED: List[ResultCache] = []


@pytest.fixture(autouse=True)
def _saved() -> Iterator[None]:
    yield
    while _OPENED:
        _OPENED.pop().save()


def _cache(root: Path) -> ResultCache:
    _OPENED.append(ResultCache(root / ".modelspec_cache", cache_keys(load_op_profiles(bundled_profiles_dir()))))
    return _OPENED[-1]


def _walk(repo: SpecRepo) -> names.Walked:
    seen: set = set()
    found = spec_files_and_reals([repo.specs], seen)
    return names.walk([path for path, _ in found], seen)


def _checked(display: str) -> Verdict:
    return Verdict(FileResult(display, (), ()), SPECS[display], stated_name=SPECS[display])


def test_without_the_cache_the_others_names_are_every_other_spec_s(root: Path) -> None:
    repo = SpecRepo(root)
    assert names.names_outside_run(repo, [str(root / "specs/a.yaml")], None, [_checked("specs/a.yaml")]) == \
        {"alpha": [("ALPHA", "specs/c.yaml")], "beta": [("Beta", "specs/sub/b.yaml")]}
    assert names.names_outside_run(SpecRepo(root / "none"), ["x.yaml"], None, []) == {}


def test_the_record_gives_the_names_a_full_walk_found_and_reads_nothing_else(root: Path, monkeypatch) -> None:
    repo = SpecRepo(root)
    files = [str(root / "specs/a.yaml")]
    first = names.names_outside_run(repo, files, _cache(root), [_checked("specs/a.yaml")])
    assert first == {"alpha": [("ALPHA", "specs/c.yaml")], "beta": [("Beta", "specs/sub/b.yaml")]}
    assert snapshot.exists(root / ".modelspec_cache", names._snapshot_key(repo))
    monkeypatch.setattr(names, "spec_files_and_reals", lambda *a: pytest.fail("walked specs/"))
    monkeypatch.setattr(ResultCache, "stated_names", lambda *a: pytest.fail("read the other specs"))
    again = names.names_outside_run(repo, files, _cache(root), [_checked("specs/a.yaml")])
    assert again == {"alpha": first["alpha"]}  # the names the checked specs state, nothing else
    recorded = names.recorded_name_map(repo, files, root / ".modelspec_cache")
    assert names.names_outside_run(repo, files, _cache(root), [_checked("specs/a.yaml")], recorded=recorded) == again


def test_a_changed_spec_is_a_miss_and_its_new_name_is_seen(root: Path) -> None:
    repo = SpecRepo(root)
    files = [str(root / "specs/a.yaml")]
    names.names_outside_run(repo, files, _cache(root), [_checked("specs/a.yaml")])
    (root / "specs/c.yaml").write_text("name: gamma\n", encoding="utf-8")
    os.utime(root / "specs/c.yaml", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    assert names.recorded_name_map(repo, files, root / ".modelspec_cache")() is None
    assert names.names_outside_run(repo, files, _cache(root), [_checked("specs/a.yaml")]) == \
        {"gamma": [("gamma", "specs/c.yaml")], "beta": [("Beta", "specs/sub/b.yaml")]}


def test_the_record_s_walk_is_the_walk_until_a_folder_changes(root: Path) -> None:
    repo = SpecRepo(root)
    folder = root / ".modelspec_cache"
    assert names.recorded_walk(repo, folder) is None  # none recorded
    names.names_outside_run(repo, [str(root / "specs/a.yaml")], _cache(root), [_checked("specs/a.yaml")])
    walked, recorded = _walk(repo), names.recorded_walk(repo, folder)
    assert (recorded.files, recorded.seen, recorded.taken) == (walked.files, walked.seen, walked.taken)
    assert recorded.displays == repo.displays(walked.files) == ["specs/a.yaml", "specs/c.yaml", "specs/sub/b.yaml"]
    assert recorded.record == snapshot.load(folder, names._snapshot_key(repo), repo.specs)
    assert names.still_walked(walked) == walked.taken.split("\n")
    assert names.recorded_walk(SpecRepo(Path("repo")), folder) is None  # relative: the record's paths are not
    os.utime(root / "specs" / "sub", ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    assert names.recorded_walk(repo, folder) is None and names.still_walked(walked) is None


def test_a_spec_checked_under_a_link_is_walked_for_and_never_recorded(root: Path) -> None:
    repo = SpecRepo(root)
    (root / "specs" / "link.yaml").symlink_to(root / "specs" / "c.yaml")
    os.utime(root / "specs", ns=(OLD_NS, OLD_NS))
    found = names.names_outside_run(repo, [str(root / "specs/link.yaml")], _cache(root),
                                    [Verdict(FileResult("specs/link.yaml", (), ()), "ALPHA", stated_name="ALPHA")])
    assert found == {"alpha": [("alpha", "specs/a.yaml")], "beta": [("Beta", "specs/sub/b.yaml")]}
    assert not snapshot.exists(root / ".modelspec_cache", names._snapshot_key(repo))


@pytest.mark.usefixtures("frozen_clock")  # the cache's clock stopped: the spec written now stays racy
def test_a_whole_check_records_the_names_from_its_index_once(root: Path) -> None:
    repo = SpecRepo(root)
    (root / "specs" / "fresh.yaml").write_text("name: fresh\n", encoding="utf-8")  # racy: the index lacks it
    os.utime(root / "specs", ns=(OLD_NS, OLD_NS))
    walked = _walk(repo)
    cache = _cache(root)
    cache.rebuild_index()
    profiles = load_op_profiles(bundled_profiles_dir())
    checked = verdicts.verdicts(list(zip(map(Path, walked.files), repo.report_names(walked.files))), profiles,
                                jobs=1, cache=cache)
    assert cache.save() is None
    names.record_whole(repo, cache, walked, checked)
    key = names._snapshot_key(repo)
    record = snapshot.load(root / ".modelspec_cache", key, repo.specs)
    assert record.answer == "".join(snapshot.name_line(stated, display, path) for stated, display, path in [
        ("alpha", "specs/a.yaml", str(root / "specs/a.yaml")), ("ALPHA", "specs/c.yaml", str(root / "specs/c.yaml")),
        ("fresh", "specs/fresh.yaml", str(root / "specs/fresh.yaml")),
        ("Beta", "specs/sub/b.yaml", str(root / "specs/sub/b.yaml"))])
    assert record.lines[-2] == f"{root / 'specs/fresh.yaml'}\t{snapshot.RACY}"
    (root / ".modelspec_cache" / f"snapshot-{key}").write_text("left alone\n", encoding="utf-8")
    names.record_whole(repo, cache, walked, checked)
    assert (root / ".modelspec_cache" / f"snapshot-{key}").read_text(encoding="utf-8") == "left alone\n"
    linked = root.parent / "linked"
    linked.symlink_to(root)
    assert not SpecRepo(linked).spelled_real
    names.record_whole(SpecRepo(linked), cache, walked, checked)
    assert not snapshot.exists(root / ".modelspec_cache", names._snapshot_key(SpecRepo(linked)))


def test_a_walk_made_now_reads_the_record_from_the_folder(root: Path) -> None:
    repo = SpecRepo(root)
    files = [str(root / "specs/a.yaml")]
    names.names_outside_run(repo, files, _cache(root), [_checked("specs/a.yaml")])
    recorded = names.recorded_name_map(repo, files, root / ".modelspec_cache", _walk(repo))()
    assert recorded == snapshot.load(root / ".modelspec_cache", names._snapshot_key(repo), repo.specs).answer


@pytest.mark.usefixtures("frozen_clock")  # the cache's clock stopped: a folder touched now stays racy
def test_a_racy_folder_leaves_the_walk_unrecorded(root: Path) -> None:
    os.utime(root / "specs" / "sub", None)  # now: within the racy window
    walked = _walk(SpecRepo(root))
    assert walked.taken is None and names.still_walked(walked) is None


def test_a_relative_root_s_record_gives_no_walk(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root.parent)
    repo = SpecRepo(Path("repo"))
    checked = Verdict(FileResult("repo/specs/a.yaml", (), ()), "alpha", stated_name="alpha")  # its report name
    names.names_outside_run(repo, [str(root / "specs/a.yaml")], _cache(root), [checked])
    assert snapshot.exists(root / ".modelspec_cache", names._snapshot_key(repo))
    assert names.recorded_walk(repo, root / ".modelspec_cache") is None


@pytest.mark.parametrize("odd", ["dangling link", "line break", "fifo"])
def test_a_spec_no_stat_can_stand_for_leaves_the_names_unrecorded(root: Path, odd: str) -> None:
    if odd == "dangling link":
        (root / "specs" / "d.yaml").symlink_to(root / "nowhere.yaml")
    elif odd == "fifo":
        os.mkfifo(root / "specs" / "pipe.yaml")  # a spec that is no regular file: no stat stands for its name
        os.utime(root / "specs" / "pipe.yaml", ns=(OLD_NS, OLD_NS))
    else:
        (root / "specs" / "n\nl.yaml").write_text("name: odd\n", encoding="utf-8")
        os.utime(root / "specs" / "n\nl.yaml", ns=(OLD_NS, OLD_NS))
    os.utime(root / "specs", ns=(OLD_NS, OLD_NS))
    found = names.names_outside_run(SpecRepo(root), [str(root / "specs/a.yaml")], _cache(root),
                                    [_checked("specs/a.yaml")])
    assert found["alpha"] == [("ALPHA", "specs/c.yaml")]
    assert not snapshot.exists(root / ".modelspec_cache", names._snapshot_key(SpecRepo(root)))
