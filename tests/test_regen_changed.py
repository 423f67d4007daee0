"""regen from the last clean regen's answer (:mod:`pipeline.catalogue.regen_changed`) held to the whole regen: the
same report, exit code and ``resolved/``, byte for byte, as ``regen --no-cache`` of a twin of the tree, and only the
changed specs checked and built; anything the answer cannot stand for falls back to the whole regen.

Each test regenerates the fixture, ages every file past the racy window and regenerates again (so the answer
stands for every file), then changes one thing in the tree and in its twin.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Callable, Dict, List, Optional

import pytest

from pipeline.cache import regen_answer
from pipeline.catalogue import regen_changed
from spec_repos import IRREGULAR, SPECS, edit, make_repo, modelspec_argv, put_irregular, run, tree
from test_artifact_cache import OLD, age, counted  # noqa: F401  pylint: disable=unused-import

pytestmark = pytest.mark.usefixtures("frozen_clock")

DEEPSEEK, LLAMA, QWEN = SPECS


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> List[Optional[object]]:
    """What each run's :func:`~pipeline.catalogue.regen_changed.regen_changed` returned (``None``: fell back)."""
    seen: List[Optional[object]] = []
    real = regen_changed.regen_changed

    def spy(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]
    monkeypatch.setattr(regen_changed, "regen_changed", spy)
    return seen


@pytest.fixture
def repo(tmp_path: Path, counted: Dict[str, List[str]], answered: List[Optional[object]]) -> Path:  # noqa: F811
    """The fixture regenerated, aged and regenerated again: the answer stands for every file; counts start empty."""
    root = make_repo(tmp_path / "repo")
    assert run(root, "regen").exit_code == 0
    age(root)
    assert run(root, "regen").exit_code == 0
    assert (root / ".modelspec_cache" / regen_answer.ANSWER_FILE).is_file()
    counted["checked"].clear()
    counted["built"].clear()
    answered.clear()
    return root


def both(root: Path, change: Callable[[Path], None], counted: Optional[Dict[str, List[str]]] = None) -> str:
    """Make *change* in *root* and in a twin of it, then ``regen`` *root* (with its answer) and ``regen --no-cache``
    the twin: the same exit code, report and ``resolved/``. Returns the report; *counted* keeps what the first run
    checked and built."""
    twin = root.parent / "twin"
    shutil.copytree(root, twin, symlinks=True)
    shutil.rmtree(twin / ".modelspec_cache")
    change(root)
    change(twin)
    fast = run(root, "regen")
    seen = {key: list(value) for key, value in (counted or {}).items()}
    slow = run(twin, "regen", "--no-cache")
    for key, value in seen.items():
        counted[key][:] = value
    assert (fast.exit_code, fast.stdout) == (slow.exit_code, slow.stdout)
    assert tree(root / "resolved") == tree(twin / "resolved")
    shutil.rmtree(twin)
    return fast.stdout


def test_an_unchanged_catalogue_is_answered_without_checking_or_building(repo: Path, counted, answered) -> None:
    out = both(repo, lambda root: None, counted)
    assert out == "regen: resolved/ is up to date (3 artifacts)\n"
    assert answered[0] is not None and (counted["checked"], counted["built"]) == ([], [])


def test_an_edited_spec_is_checked_built_and_written_alone(repo: Path, counted, answered) -> None:
    out = both(repo, lambda root: edit(root / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 30"), counted)
    assert out.splitlines() == ["wrote resolved/llama-3.1-8b.json", "wrote resolved/index.json",
                                "regen: 2 files written, 0 removed, 2 unchanged in resolved/"]
    assert answered[0] is not None and (counted["checked"], counted["built"]) == ([LLAMA], [LLAMA])
    # and again: what it wrote is read once (racy), found as planned, and the next run answers from the stats
    age(repo)
    assert run(repo, "regen").stdout == "regen: resolved/ is up to date (3 artifacts)\n"
    assert run(repo, "regen").stdout == "regen: resolved/ is up to date (3 artifacts)\n"
    assert all(done is not None for done in answered)
    assert run(repo, "regen", "--check").exit_code == 0


def test_a_spec_touched_but_not_changed_writes_nothing(repo: Path, counted, answered) -> None:
    out = both(repo, lambda root: os.utime(root / QWEN), counted)
    assert out == "regen: resolved/ is up to date (3 artifacts)\n"
    assert answered[0] is not None and counted["built"] == []


def test_an_artifact_rewritten_with_its_own_bytes_is_read_and_left(repo: Path, answered) -> None:
    def rewrite(root: Path) -> None:
        path = root / "resolved" / "llama-3.1-8b.json"
        path.write_bytes(path.read_bytes())
    assert both(repo, rewrite) == "regen: resolved/ is up to date (3 artifacts)\n"
    assert answered[0] is not None


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.mark.parametrize("change", [
    pytest.param(lambda root: edit(root / LLAMA, "name: llama-3.1-8b", "name: llama-renamed"), id="renamed"),
    pytest.param(lambda root: edit(root / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: -1"), id="fails"),
    pytest.param(lambda root: edit(root / "resolved" / "llama-3.1-8b.json", '"arch"', '"arch" '),
                 id="artifact-edited"),
    pytest.param(lambda root: (root / "resolved" / "index.json").write_text("{}\n", encoding="utf-8"),
                 id="index-edited"),
    pytest.param(lambda root: (root / "resolved" / "notes.json").write_text("{}\n", encoding="utf-8"),
                 id="stray-file"),
    pytest.param(lambda root: (root / "resolved" / "llama-3.1-8b.json").unlink(), id="artifact-removed"),
    pytest.param(lambda root: (root / LLAMA).unlink(), id="spec-removed"),
    pytest.param(lambda root: shutil.copy(root / LLAMA, root / "specs" / "llama" / "llama-copy.yaml"),
                 id="spec-copied"),
    pytest.param(lambda root: _append(root / "op_profiles" / "llama.yaml", "# a comment\n"), id="profile-edited"),
])
def test_what_the_answer_cannot_stand_for_falls_back_to_the_whole_regen(repo: Path, answered, change) -> None:
    both(repo, change)
    assert answered in ([], [None])


def test_a_damaged_answer_is_ignored(repo: Path, answered) -> None:
    path = repo / ".modelspec_cache" / regen_answer.ANSWER_FILE
    path.write_text(path.read_text(encoding="utf-8").replace("llama-3.1-8b.json", "llama-3.1-9b.json"),
                    encoding="utf-8")
    both(repo, lambda root: edit(root / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 30"))
    assert answered == []


def test_a_regen_that_is_not_clean_forgets_the_answer(repo: Path) -> None:
    edit(repo / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: -1")
    assert run(repo, "regen").exit_code == 1
    assert not (repo / ".modelspec_cache" / regen_answer.ANSWER_FILE).exists()


def test_check_and_changed_since_and_no_cache_leave_the_answer_alone(repo: Path, answered) -> None:
    edit(repo / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 30")
    assert run(repo, "regen", "--check").exit_code == 1
    assert run(repo, "regen", "--no-cache").exit_code == 0
    assert answered == []
    age(repo)
    assert run(repo, "regen").stdout == "regen: resolved/ is up to date (3 artifacts)\n"
    assert answered[0] is not None


@pytest.mark.parametrize("kind", IRREGULAR)
def test_an_answer_that_is_no_regular_file_is_no_answer_and_is_never_written_through(
        repo: Path, kind: str, answered: List[Optional[object]]) -> None:
    # A FIFO in the answer's place blocked regen's read forever; a link there must not be written through either.
    answer = repo / ".modelspec_cache" / regen_answer.ANSWER_FILE
    elsewhere = put_irregular(answer, kind)
    done = subprocess.run(modelspec_argv("regen", "--root", str(repo)), capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "regen: resolved/ is up to date (3 artifacts)\n", "")
    assert not elsewhere.exists() or list(elsewhere.iterdir()) == []
    assert run(repo, "regen").stdout == "regen: resolved/ is up to date (3 artifacts)\n"
    if kind == "a FIFO":  # the whole regen recorded its answer in a file of its own, renamed over the FIFO
        assert stat.S_ISREG(answer.lstat().st_mode) and answered[-1] is not None
    else:  # the cache writes no file over a link (refuse_write): no answer, so every regen is a whole one
        assert answer.is_symlink() and answered == []  # none loaded, so none taken up


def test_the_walk_a_check_recorded_is_the_walk_regen_takes_until_a_folder_changes(
        repo: Path, answered: List[Optional[object]], monkeypatch: pytest.MonkeyPatch) -> None:
    from pipeline.cache import names
    from pipeline.check import discovery

    walked: List[Path] = []
    real = discovery.spec_file_names

    def walk(paths, watched=None):
        walked.append(Path(paths[0]))
        return real(paths, watched)
    for module in (discovery, names):
        monkeypatch.setattr(module, "spec_file_names", walk)
    for folder in [repo / "specs", *(path for path in (repo / "specs").rglob("*") if path.is_dir())]:
        os.utime(folder, (OLD, OLD))  # past the racy window: a whole check records its walk
    assert run(repo, "check", "-q").exit_code == 0
    walked.clear()
    both(repo, lambda root: edit(root / LLAMA, "num_hidden_layers: 32", "num_hidden_layers: 30"))
    assert answered[-1] is not None and repo / "specs" not in walked  # the specs and their displays: the snapshot's
    # a spec added changes its folder's mtime: the snapshot no longer stands for the walk, which is walked again
    walked.clear()
    copy = (repo / LLAMA).read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: llama-copy")
    both(repo, lambda root: (root / "specs" / "llama" / "copy.yaml").write_text(copy, encoding="utf-8"))
    assert walked.count(repo / "specs") == 1
