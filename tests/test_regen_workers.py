"""regen over worker processes (``--jobs``) held to regen in one process, byte for byte (issue 28: a cold regen).

Workers check, build and render; the command plans and writes what they send back (the check's result, the
record, the text and the members of the document a plan reads). So a regen over two workers must write the very
files one process writes, say the same lines, and leave a cache that answers the next run as well. A writing
regen's workers also stage each artifact file ``resolved/`` does not have yet (a temporary file the command
renames into place, or removes): what is renamed is the text one process writes, and nothing staged is left.
``FILES_PER_WORKER`` is lowered to 1 so that a catalogue of 55 specs is spread at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Dict, List

import pytest

from pipeline.cache.stamps import content_digest
from pipeline.catalogue import atomic, regen
from pipeline.catalogue.artifacts import render
from pipeline.check import runner
from pipeline.check.repo import find_repo
from pipeline.commands.options import run_profiles
from spec_repos import run, tree

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.usefixtures("frozen_clock")


@pytest.fixture
def spread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers for any run of two specs or more."""
    monkeypatch.setattr(runner, "FILES_PER_WORKER", 1)


# The conftest fixture ``checked`` lists the specs this process checks (a worker's checks are not seen here).


def catalogue(dest: Path) -> Path:
    """The shipped catalogue and profiles, with a spec that fails check and two specs of one name."""
    for folder in ("specs", "op_profiles"):
        shutil.copytree(ROOT / folder, dest / folder)
    llama = (dest / "specs" / "llama" / "llama-3.1-8b.yaml").read_text(encoding="utf-8")
    (dest / "specs" / "llama" / "broken.yaml").write_text(
        llama.replace("name: llama-3.1-8b", "name: llama-broken").replace("num_hidden_layers: 32",
                                                                          "num_hidden_layers: -3"), encoding="utf-8")
    (dest / "specs" / "llama" / "twin.yaml").write_text(llama, encoding="utf-8")
    return dest


def resolved(root: Path) -> Dict[str, bytes]:
    return {path: data for path, data in tree(root / "resolved").items() if not path.startswith(".")}


def hidden(root: Path) -> List[str]:
    """The hidden files of ``resolved/``: the lock alone, once no staged file is left."""
    return sorted(path for path in tree(root / "resolved") if path.startswith("."))


@pytest.fixture
def staged_here(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """The files this process stages for writing (a worker's staged files are adopted, not staged here)."""
    names: List[str] = []
    real_stage = atomic.Batch.stage
    monkeypatch.setattr(atomic.Batch, "stage", lambda batch, path, text: names.append(path.name)
                        or real_stage(batch, path, text))
    return names


def test_regen_over_workers_writes_and_says_what_one_process_does(tmp_path: Path, spread: None,
                                                                    checked: List[str], staged_here: List[str]) -> None:
    alone, spread_out = catalogue(tmp_path / "alone"), catalogue(tmp_path / "spread")
    one = run(alone, "regen", "--jobs", "1")
    assert len(staged_here) == 53
    staged_here.clear()
    two = run(spread_out, "regen", "--jobs", "2")
    assert staged_here == ["index.json"]  # the workers staged the 52 artifacts; the twins' files are gone
    assert (two.exit_code, two.stdout, two.stderr) == (one.exit_code, one.stdout, one.stderr)
    assert one.exit_code == 1 and "regen.duplicate-name" in one.stdout and "regen.spec-fails" in one.stdout
    assert resolved(spread_out) == resolved(alone) and len(resolved(alone)) == 53
    assert hidden(spread_out) == hidden(alone) == [".regen.lock"]
    # The records the workers made answer the next runs as one process's do: regen checks again only the two
    # specs of one name (refused, so no artifact entry stands for them), check nothing.
    twins = ["specs/llama/llama-3.1-8b.yaml", "specs/llama/twin.yaml"]
    for command, again in ((["regen", "--jobs", "1"], twins), (["check", "--jobs", "1", "-q"], [])):
        seen = {}
        for root in (spread_out, alone):
            checked.clear()
            seen[root.name] = (run(root, *command).stdout, list(checked))
        assert seen["spread"] == seen["alone"] and seen["spread"][1] == again, command


def test_workers_stage_only_files_resolved_lacks_and_leave_none_behind(tmp_path: Path, spread: None,
                                                                        staged_here: List[str]) -> None:
    """Over a tree one regen wrote, with specs edited and artifacts deleted: a worker stages an artifact only where
    its file is gone; the stale ones (a file of regen's, which the plan may keep) are staged by the command."""
    roots = [catalogue(tmp_path / "alone"), catalogue(tmp_path / "spread")]
    for root in roots:
        run(root, "regen", "--jobs", "1")
        for spec in sorted((root / "specs").rglob("*.yaml"))[:6]:
            spec.write_text("# edited\n" + spec.read_text(encoding="utf-8"), encoding="utf-8")
        for file in ("gpt2.json", "phi-4.json", "qwen3-8b.json"):
            (root / "resolved" / file).unlink()
    staged_here.clear()
    one = run(roots[0], "regen", "--no-cache", "--jobs", "1")
    alone = sorted(staged_here)
    staged_here.clear()
    two = run(roots[1], "regen", "--no-cache", "--jobs", "2")
    assert (two.exit_code, two.stdout) == (one.exit_code, one.stdout) and one.stdout.count("wrote ") == 10
    assert resolved(roots[1]) == resolved(roots[0]) and hidden(roots[1]) == [".regen.lock"]
    assert sorted(staged_here + ["gpt2.json", "phi-4.json", "qwen3-8b.json"]) == alone and len(alone) == 10


def test_a_regen_that_stops_before_writing_leaves_nothing_a_worker_staged(tmp_path: Path, spread: None,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root = catalogue(tmp_path / "repo")

    def unreadable(folder, cache=None):
        raise regen.RegenError(f"cannot read {folder}: test")
    monkeypatch.setattr(regen, "read_resolved", unreadable)
    result = run(root, "regen", "--jobs", "2")
    assert (result.exit_code, result.stderr) == (2, f"Error: cannot read {root / 'resolved'}: test\n")
    assert hidden(root) == [".regen.lock"] and resolved(root) == {}


def test_a_worker_sends_back_the_text_and_the_check_not_the_spec(tmp_path: Path, spread: None) -> None:
    root = catalogue(tmp_path / "repo")
    repo = find_repo(root)
    profiles = run_profiles(repo, False)
    files = sorted((root / "specs").rglob("*.yaml"))
    here = regen.resolve_specs(repo, files, profiles, jobs=1)
    there = regen.resolve_specs(repo, files, profiles, jobs=2)
    assert [item.path for item in there] == [item.path for item in here] and len(here) == 55
    for near, far in zip(here, there):
        assert far.checked.result == near.checked.result and far.checked.name_at == near.checked.name_at
        assert far.checked.spec is None and far.checked.stack is None
        assert far.record is None and near.rendered is None
        if near.document is None:
            assert far.document is None and far.rendered is None
            continue
        assert far.rendered == far.text == near.text == render(near.document)
        assert far.rendered_sha256 == content_digest(near.text.encode("utf-8")) and near.rendered_sha256 is None
        assert far.document == {key: near.document[key] for key in ("name", "path", "digest")}
    assert sum(item.document is None for item in there) == 1  # the broken spec


def test_regen_check_over_workers_reports_what_one_process_does(tmp_path: Path, spread: None) -> None:
    root = catalogue(tmp_path / "repo")
    run(root, "regen", "--jobs", "1")
    for spec in sorted((root / "specs").rglob("*.yaml"))[:7]:  # a comment: new bytes, so a stale artifact
        spec.write_text("# edited\n" + spec.read_text(encoding="utf-8"), encoding="utf-8")
    outputs = [run(root, "regen", "--check", "--no-cache", "--jobs", jobs) for jobs in ("1", "2")]
    assert [(result.exit_code, result.stdout) for result in outputs] == [(1, outputs[0].stdout)] * 2
    assert outputs[0].stdout.count("[regen.stale]") == 8  # the seven and the index
