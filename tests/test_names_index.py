"""The duplicate-name rule of a check of a few files (pipeline/cache/names.py): the other specs' names come from
the snapshot of the catalogue's names while only the checked files changed, and a full walk after any other
change, with the same report as a check without the cache."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path
from typing import Callable, Iterator, Tuple

import pytest
from click.testing import CliRunner

from pipeline.cache import results as result_cache

from pipeline.check import discovery

from pipeline.cache import snapshot, stamps
from pipeline.cli import main
from pipeline.cache.names import SNAPSHOT
from pipeline.check.repo import SpecRepo
from pipeline.cache.stamps import CACHE_DIR_ENV, stat_text
from spec_repos import commit_all, git
from test_snapshot import OLD, age, age_written

#: The cache's clock stopped at each test's start (tests/conftest.py): no verdict depends on the run's speed.
pytestmark = pytest.mark.usefixtures("frozen_clock")

ROOT = Path(__file__).resolve().parent.parent
TARGET = "specs/llama/llama-3.1-8b.yaml"
OTHER = "specs/llama/llama-2-7b.yaml"
CLASH = ("name 'llama-3.1-8b' is also the name of {}; each spec needs its own name (it names its resolved "
         "artifact)")


@pytest.fixture(autouse=True, params=["in the process", "in a child"])
def stats_checked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: the snapshot's stats checked by the check itself, and by a child process while it checks
    its files (:func:`pipeline.cache.snapshot.holds_soon`; the shipped catalogue is far below ``CHILD_LINES``)."""
    if request.param == "in a child":
        monkeypatch.setattr(snapshot, "CHILD_LINES", 1)
    return request.param


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository of the shipped catalogue, everything aged (every stat stands for its file's bytes)."""
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    dest = tmp_path / "repo"
    shutil.copytree(ROOT / "specs", dest / "specs")
    (dest / ".git").mkdir()
    age(dest / "specs")
    return dest


def check(repo: Path, *args: str) -> Tuple[int, str]:
    """``modelspec check --root repo --format json ARGS``: (exit code, stdout)."""
    result = CliRunner().invoke(main, ["check", "--root", str(repo), "--format", "json", *args],
                                catch_exceptions=False)
    return result.exit_code, result.stdout


def uncached(repo: Path, *args: str) -> Tuple[int, str]:
    """:func:`check` with ``--no-cache``: the reference every cached run must equal."""
    return check(repo, "--no-cache", *args)


@pytest.fixture
def no_long_way(monkeypatch: pytest.MonkeyPatch) -> Callable[[], contextlib.AbstractContextManager]:
    """Within ``with no_long_way():``, the pass over the other specs' names fails the test."""
    @contextlib.contextmanager
    def forbid() -> Iterator[None]:
        with monkeypatch.context() as patched:
            patched.setattr(result_cache.CatalogueIndex, "known_names",
                            lambda *a, **k: pytest.fail("read the other specs' names a full walk"))
            yield
    return forbid


def names_snapshot(repo: Path) -> Path:
    return repo / ".modelspec_cache" / f"snapshot-{snapshot.repo_key(SpecRepo(repo), SNAPSHOT, str(repo))}"


def test_a_check_of_one_file_again_takes_the_other_names_from_the_snapshot(repo: Path, no_long_way) -> None:
    expected = uncached(repo, str(repo / TARGET))
    assert expected == (0, check(repo, str(repo / TARGET))[1])  # a full walk, which records the snapshot
    assert names_snapshot(repo).exists()
    (repo / TARGET).write_text((repo / TARGET).read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    expected = uncached(repo, str(repo / TARGET))
    with no_long_way():  # the checked file itself changed: left out of the snapshot's question
        assert check(repo, str(repo / TARGET)) == expected
        assert check(repo, str(repo / TARGET)) == expected


def make_racy(path: Path) -> None:
    """Make *path* racy for every reading this test makes: its mtime is the cache's clock, which the test has
    stopped (``frozen_clock``), so it is within RACY_NS of every reading however late a loaded machine runs it."""
    now = stamps.now_ns()
    os.utime(path, ns=(now, now))


def test_the_snapshot_records_the_checked_file_and_a_new_one_as_racy(repo: Path) -> None:
    make_racy(repo / OTHER)  # its stat may not yet stand for its bytes
    assert check(repo, str(repo / TARGET))[0] == 0
    text = names_snapshot(repo).read_text(encoding="utf-8")
    assert f"\n{repo / TARGET}\t{snapshot.RACY}\n" in text and f"\n{repo / OTHER}\t{snapshot.RACY}\n" in text
    assert text.count(f"\t{snapshot.RACY}\n") == 2


def test_a_racy_other_file_sends_the_next_check_the_long_way(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_racy(repo / OTHER)
    assert check(repo, str(repo / TARGET))[0] == 0
    (repo / OTHER).write_text((repo / OTHER).read_text(encoding="utf-8").replace("name: llama-2-7b",
                                                                                 "name: llama-3.1-8b"),
                              encoding="utf-8")
    os.utime(repo / OTHER, ns=(stamps.now_ns(), stamps.now_ns()))  # edited now: racy
    assert check(repo, str(repo / TARGET)) == uncached(repo, str(repo / TARGET))
    assert CLASH.format(OTHER) in check(repo, str(repo / TARGET))[1]


def _edit_in_place(repo: Path) -> None:
    with open(repo / OTHER, "r+", encoding="utf-8") as handle:  # same inode, the folder untouched
        text = handle.read().replace("name: llama-2-7b", "name: llama-3.1-8b")
        handle.seek(0)
        handle.write(text)
        handle.truncate()


def _add_beside(repo: Path) -> None:
    shutil.copyfile(repo / TARGET, repo / "specs" / "llama" / "copy.yaml")


def _add_folder(repo: Path) -> None:
    (repo / "specs" / "new").mkdir()
    shutil.copyfile(repo / TARGET, repo / "specs" / "new" / "copy.yaml")


def _link_folder(repo: Path) -> None:
    (repo / "vendor").mkdir()
    shutil.copyfile(repo / TARGET, repo / "vendor" / "copy.yaml")
    (repo / "specs" / "vendor").symlink_to(repo / "vendor")


def _fill_linked_folder(repo: Path) -> None:
    shutil.copyfile(repo / TARGET, repo / "vendor" / "copy.yaml")


CHANGES = {"edited in place": _edit_in_place, "added beside it": _add_beside, "added in a new folder": _add_folder,
           "a linked folder added": _link_folder, "a linked folder filled": _fill_linked_folder}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_another_spec_taking_the_name_is_seen_after_any_change(repo: Path, change: str) -> None:
    if change == "a linked folder filled":
        (repo / "vendor").mkdir()
        (repo / "specs" / "vendor").symlink_to(repo / "vendor")
        age(repo)
    assert check(repo, str(repo / TARGET)) == uncached(repo, str(repo / TARGET))
    assert uncached(repo, str(repo / TARGET))[0] == 0 and names_snapshot(repo).exists()
    CHANGES[change](repo)
    age_written(repo)  # the change is no racy one: only the stats can tell the next run of it
    expected = uncached(repo, str(repo / TARGET))
    assert expected[0] == 1 and "spec.duplicate-name" in expected[1]
    assert check(repo, str(repo / TARGET)) == expected


@pytest.mark.parametrize("changed_since", [False, True])
def test_a_spec_added_while_the_names_are_read_is_seen_by_the_next_check(
        repo: Path, monkeypatch: pytest.MonkeyPatch, changed_since: bool) -> None:
    # Added after the walk read its folder, and made to look old: the folder's stat taken right after the walk
    # and again before the snapshot is recorded differ (its ctime), so no snapshot misses it.
    if changed_since:
        shutil.rmtree(repo / ".git")
        git(repo, "init", "-q", "-b", "main")
        commit_all(repo, "catalogue")
        _edit_in_place(repo)
        (repo / OTHER).write_text((repo / OTHER).read_text(encoding="utf-8").replace("llama-3.1-8b", "other"),
                                  encoding="utf-8")
        age(repo / "specs")
    args = ["--changed-since", "HEAD"] if changed_since else [str(repo / TARGET)]
    real = result_cache.CatalogueIndex.known_names

    def adding(self, files):
        _add_beside(repo)
        age_written(repo / "specs")
        return real(self, files)

    with monkeypatch.context() as patched:
        patched.setattr(result_cache.CatalogueIndex, "known_names", adding)
        check(repo, *args)
    expected = uncached(repo, str(repo / TARGET))
    assert expected[0] == 1 and CLASH.format("specs/llama/copy.yaml") in expected[1]
    assert check(repo, str(repo / TARGET)) == expected


def test_a_clash_removed_is_seen(repo: Path) -> None:
    _add_beside(repo)
    age(repo)
    clashing = uncached(repo, str(repo / TARGET))
    assert check(repo, str(repo / TARGET)) == clashing and clashing[0] == 1
    assert CLASH.format("specs/llama/copy.yaml") in clashing[1]
    (repo / "specs" / "llama" / "copy.yaml").unlink()
    age_written(repo)
    assert check(repo, str(repo / TARGET)) == uncached(repo, str(repo / TARGET))
    assert uncached(repo, str(repo / TARGET))[0] == 0


def test_a_check_of_another_file_goes_the_long_way_once(repo: Path, no_long_way) -> None:
    # The first file was checked by the run that recorded the snapshot, so its stat there is racy; the next
    # snapshot, recorded by a check of the second file, has the first file's own stat.
    assert check(repo, str(repo / TARGET))[0] == 0
    expected = uncached(repo, str(repo / OTHER))
    assert check(repo, str(repo / OTHER)) == expected
    with no_long_way():
        assert check(repo, str(repo / OTHER)) == expected


def test_a_file_outside_the_catalogue_clashes_the_long_way_every_time(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    shutil.copyfile(repo / TARGET, outside)
    age(repo)
    os.utime(outside, (OLD, OLD))
    expected = uncached(repo, str(outside))
    assert expected[0] == 1 and CLASH.format(TARGET) in expected[1]
    for _ in range(2):
        assert check(repo, str(outside)) == expected


@pytest.mark.parametrize("damage", ["a name changed", "truncated", "emptied"])
def test_a_damaged_snapshot_is_ignored(repo: Path, damage: str) -> None:
    # Each damage leaves every recorded stat as it is: only the checksum can tell the snapshot is not what
    # was recorded (trusted, the changed name would be a clash).
    assert check(repo, str(repo / TARGET))[0] == 0
    path = names_snapshot(repo)
    data = path.read_bytes()
    changed = data.replace(b'"llama-2-7b"\t"llama-2-7b"', b'"llama-3.1-8b"\t"llama-3.1-8b"')
    assert changed != data
    path.write_bytes({"a name changed": changed, "truncated": data[:len(data) - 100], "emptied": b""}[damage])
    assert check(repo, str(repo / TARGET)) == uncached(repo, str(repo / TARGET))
    assert uncached(repo, str(repo / TARGET))[0] == 0


def test_changed_since_takes_the_other_names_from_the_snapshot(repo: Path, no_long_way) -> None:
    shutil.rmtree(repo / ".git")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "catalogue")
    age(repo / "specs")
    for edit in ("# one\n", "# two\n"):
        (repo / TARGET).write_text((repo / TARGET).read_text(encoding="utf-8") + edit, encoding="utf-8")
        expected = uncached(repo, "--changed-since", "HEAD")
        assert check(repo, "--changed-since", "HEAD") == expected
    _edit_in_place(repo)
    age_written(repo / "specs")
    expected = uncached(repo, "--changed-since", "HEAD")  # both changed files checked, each the other's clash
    assert expected[0] == 1
    with no_long_way():
        assert check(repo, "--changed-since", "HEAD") == expected


# ---- a check of the whole catalogue keeps the snapshot for the first check of a few files after it ----------------

def test_after_a_whole_check_the_first_check_of_one_file_takes_the_names_from_the_snapshot(repo: Path,
                                                                                          no_long_way) -> None:
    assert check(repo)[0] == 0
    assert names_snapshot(repo).exists()
    (repo / TARGET).write_text((repo / TARGET).read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    expected = uncached(repo, str(repo / TARGET))
    with no_long_way():
        assert check(repo, str(repo / TARGET)) == expected


def test_a_whole_check_records_each_spec_as_the_index_does_and_a_racy_one_as_racy(repo: Path) -> None:
    make_racy(repo / OTHER)  # the index learns no line for it
    assert check(repo)[0] == 0
    lines = names_snapshot(repo).read_text(encoding="utf-8").split("\n")
    stats = {line.rpartition("\t")[0]: line.rpartition("\t")[2] for line in lines if line.startswith(str(repo))}
    assert stats[str(repo / OTHER)] == snapshot.RACY
    assert stats[str(repo / TARGET)] == stat_text(os.stat(repo / TARGET))
    assert sum(stat == snapshot.RACY for stat in stats.values()) == 1
    assert len([path for path in stats if path.endswith(".yaml")]) == len(list((repo / "specs").rglob("*.yaml")))


def test_a_whole_check_leaves_a_recorded_snapshot_alone(repo: Path) -> None:
    assert check(repo, str(repo / TARGET))[0] == 0
    before = names_snapshot(repo).read_bytes()
    assert check(repo)[0] == 0
    assert names_snapshot(repo).read_bytes() == before


@pytest.mark.parametrize("change", ["edited in place", "added beside it"])
def test_after_a_whole_check_a_change_to_another_spec_is_seen(repo: Path, change: str) -> None:
    assert check(repo)[0] == 0
    CHANGES[change](repo)
    age_written(repo)
    expected = uncached(repo, str(repo / TARGET))
    assert expected[0] == 1 and "spec.duplicate-name" in expected[1]
    assert check(repo, str(repo / TARGET)) == expected


@pytest.mark.parametrize("racy", [False, True])
def test_a_whole_check_records_no_name_its_index_line_was_not_read_under(repo: Path, racy: bool) -> None:
    # A spec edited since the index learnt it is re-checked and learnt anew; edited within the racy window, it
    # is not learnt, and its index line still says what it stated under its old stat: so does the snapshot.
    assert check(repo)[0] == 0
    _edit_in_place(repo)
    if not racy:
        age_written(repo)
    names_snapshot(repo).unlink()
    whole = uncached(repo)
    assert check(repo) == whole and whole[0] == 1
    expected = uncached(repo, str(repo / TARGET))
    assert expected[0] == 1 and CLASH.format(OTHER) in expected[1]
    assert check(repo, str(repo / TARGET)) == expected


# ---- --changed-since reads its walk of specs/ from the snapshot while the folders are unchanged ----------------

@pytest.fixture
def git_catalogue(repo: Path) -> Path:
    """The repository as a git work tree, the catalogue committed, everything aged."""
    shutil.rmtree(repo / ".git")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "catalogue")
    age(repo / "specs")
    return repo


def test_changed_since_reads_no_folder_while_the_snapshot_stands(git_catalogue: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 no_long_way) -> None:
    repo = git_catalogue
    assert check(repo)[0] == 0  # keeps the snapshot
    (repo / TARGET).write_text((repo / TARGET).read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    expected = uncached(repo, "--changed-since", "HEAD")
    with no_long_way(), monkeypatch.context() as patched:
        patched.setattr(discovery, "spec_file_names", lambda *a, **k: pytest.fail("walked specs/"))
        patched.setattr(SpecRepo, "displays", lambda *a, **k: pytest.fail("made the displays the snapshot has"))
        assert check(repo, "--changed-since", "HEAD") == expected


def test_changed_since_below_the_work_tree_s_top_makes_the_displays_the_snapshot_does_not_have(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # With the catalogue in a subfolder of the git work tree, the snapshot's report names start with that
    # subfolder and the displays do not: the recorded walk gives its paths, and the displays are made from them.
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)
    top = tmp_path / "top"
    shutil.copytree(ROOT / "specs", top / "catalogue" / "specs")
    git(top, "init", "-q", "-b", "main")
    commit_all(top, "catalogue")
    age(top / "catalogue" / "specs")
    repo = top / "catalogue"
    assert check(repo)[0] == 0  # keeps the snapshot
    (repo / TARGET).write_text((repo / TARGET).read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    expected = uncached(repo, "--changed-since", "HEAD")
    report = json.loads(expected[1])
    assert ([item["file"] for item in report["files"]], report["scope"]["specs_total"]) == \
        ([f"catalogue/{TARGET}"], len(list((repo / "specs").rglob("*.yaml"))))
    made = []
    real = SpecRepo.displays
    with monkeypatch.context() as patched:
        patched.setattr(discovery, "spec_file_names", lambda *a, **k: pytest.fail("walked specs/"))
        patched.setattr(SpecRepo, "displays", lambda self, paths: made.append(real(self, paths)) or made[-1])
        assert check(repo, "--changed-since", "HEAD") == expected
    # The catalogue's displays were made from the recorded walk's paths: root-relative, not the report names.
    assert [displays for displays in made if len(displays) == report["scope"]["specs_total"]] == [
        sorted(path.relative_to(repo).as_posix() for path in (repo / "specs").rglob("*.yaml"))]


def _remove_other(repo: Path) -> None:
    (repo / OTHER).unlink()


WALK_CHANGES = {"added beside it": _add_beside, "added in a new folder": _add_folder,
                "a linked folder added": _link_folder, "removed": _remove_other}


@pytest.mark.parametrize("change", sorted(WALK_CHANGES))
def test_changed_since_walks_again_after_a_folder_changed(git_catalogue: Path, change: str) -> None:
    repo = git_catalogue
    assert check(repo)[0] == 0
    (repo / TARGET).write_text((repo / TARGET).read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert check(repo, "--changed-since", "HEAD") == uncached(repo, "--changed-since", "HEAD")
    WALK_CHANGES[change](repo)
    age_written(repo / "specs")
    if change == "a linked folder added":
        age_written(repo / "vendor")
    expected = uncached(repo, "--changed-since", "HEAD")
    assert check(repo, "--changed-since", "HEAD") == expected
    report = json.loads(expected[1])  # what the walk found anew is in the report
    assert ([item["file"] for item in report["files"]], report["scope"]["removed"]) == {
        "added beside it": (["specs/llama/copy.yaml", TARGET], []),
        "added in a new folder": ([TARGET, "specs/new/copy.yaml"], []),
        "a linked folder added": ([TARGET, "specs/vendor/copy.yaml"], []),
        "removed": ([TARGET], [OTHER])}[change]


def test_changed_since_walks_again_after_a_spec_link_is_retargeted_outside(git_catalogue: Path) -> None:
    # A spec that is a link to a link outside the repository: retargeted to a spec of the catalogue, it is that
    # spec, which the walk takes once (under its own name, first in path order). No folder of specs/ changed, so
    # only the link's own stat, watched as the walk watches the links it passes over, can tell of it.
    repo = git_catalogue
    path = _link_through_outside(repo)
    commit_all(repo, "a spec linked from outside")
    age(repo, repo.parent)
    assert check(repo)[0] == 0  # keeps the snapshot, the link a spec of its own
    (repo.parent / "hop.yaml").unlink()
    (repo.parent / "hop.yaml").symlink_to(repo / TARGET)
    with open(repo / TARGET, "a", encoding="utf-8") as handle:  # edited in place: its folder unchanged
        handle.write("# edited\n")
    age_written(repo / "specs", repo.parent)
    expected = uncached(repo, "--changed-since", "HEAD")
    report = json.loads(expected[1])
    assert (expected[0], report["scope"]["specs_total"]) == (0, len(list((repo / "specs").rglob("*.yaml"))) - 1)
    assert "spec.duplicate-name" not in expected[1] and path.is_symlink()
    assert check(repo, "--changed-since", "HEAD") == expected


# ---- a checked file the snapshot does not record as a spec of its own ---------------------------------------------

def _link_beside(repo: Path) -> Path:
    """A link in specs/llama/ to the target spec, after it in path order: the walk takes the spec, not it."""
    (repo / "specs" / "llama" / "zlink.yaml").symlink_to("llama-3.1-8b.yaml")
    return repo / "specs" / "llama" / "zlink.yaml"


def _link_not_a_spec(repo: Path) -> Path:
    """A link to the target spec without a spec's suffix: the walk passes over it, and the user may name it."""
    (repo / "specs" / "llama" / "alias.txt").symlink_to("llama-3.1-8b.yaml")
    return repo / "specs" / "llama" / "alias.txt"


def _link_through_outside(repo: Path) -> Path:
    """A spec that is a link to a link outside the repository, to a spec of another name: retargeting the
    outer link changes no stat the snapshot records but the checked file's own."""
    outside = repo.parent / "outside.yaml"
    outside.write_text((repo / OTHER).read_text(encoding="utf-8").replace("name: llama-2-7b", "name: elsewhere"),
                       encoding="utf-8")
    (repo.parent / "hop.yaml").symlink_to(outside)
    (repo / "specs" / "llama" / "zz.yaml").symlink_to(repo.parent / "hop.yaml")
    return repo / "specs" / "llama" / "zz.yaml"


LINKS = {"a link beside the spec": _link_beside, "a link named without a spec's suffix": _link_not_a_spec,
         "a link retargeted outside the repository": _link_through_outside}


@pytest.mark.parametrize("recorded_by", ["a whole check", "a check of another file"])
@pytest.mark.parametrize("link", sorted(LINKS))
def test_a_link_to_another_spec_checked_is_no_clash_with_it(repo: Path, link: str, recorded_by: str) -> None:
    # Checked, a link to a spec of the catalogue is that spec: a full walk leaves it out of the others, as a
    # snapshot must, which recorded the link as a link passed over (or its stat, now skipped, as another file's).
    path = LINKS[link](repo)
    age(repo, repo.parent)
    assert check(repo, *([] if recorded_by == "a whole check" else [str(repo / OTHER)]))[0] == 0
    assert names_snapshot(repo).exists()
    if link == "a link retargeted outside the repository":
        (repo.parent / "hop.yaml").unlink()
        (repo.parent / "hop.yaml").symlink_to(repo / TARGET)
    args = [str(repo / OTHER), str(path)]  # the file the snapshot has as racy, if any, checked with the link
    expected = uncached(repo, *args)
    assert expected[0] == 0 and "spec.duplicate-name" not in expected[1]
    assert check(repo, *args) == expected
