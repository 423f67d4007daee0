"""The one write rule (issue 25, item 5; :mod:`pipeline.spec.writes`): no command writes through a link.

One test per command that writes, each with a link where the command would write (committed, as a pull
request's checkout can carry it) naming a file or folder outside the repository: the command refuses (or, for
the cache, writes nothing there) and the file the link names is left as it was. ``fmt`` and ``import -o`` have
theirs in tests/test_fmt.py (``test_fmt_never_writes_through_a_symlinked_spec``) and tests/test_importer.py
(``test_output_through_a_symlink_is_refused_and_its_target_kept``), ``site``'s folder check in tests/test_site.py,
``check --output`` in tests/test_writes.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline.spec.writes import WriteRefused, home_of, link_refusal, refuse_write, write_refusal
from tests.spec_repos import git_repo, make_repo, run
from tests.test_fix import BROKEN

LLAMA = "specs/llama/llama-3.1-8b.yaml"


# --- the rule itself ---------------------------------------------------------------------------------------

def test_the_rule_refuses_a_link_anywhere_below_the_folder_and_a_path_outside_it(tmp_path: Path) -> None:
    (tmp_path / "repo" / "real").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "repo" / "linked").symlink_to(tmp_path / "outside")
    (tmp_path / "repo" / "real" / "file.yaml").symlink_to(tmp_path / "outside" / "x")
    repo = tmp_path / "repo"
    assert write_refusal(repo / "real" / "new.yaml", repo) is None
    assert write_refusal(repo / "linked" / "new.yaml", repo) == (
        f"{repo}/linked is a symbolic link; modelspec never writes through one (a checkout may carry a link to "
        "any file): remove the link, or write the file it names yourself")
    assert write_refusal(repo / "real" / "file.yaml", repo).startswith(f"{repo}/real/file.yaml is a symbolic link")
    assert write_refusal(tmp_path / "outside" / "x", repo) == \
        f"{tmp_path}/outside/x is outside {repo}; modelspec writes only inside it"
    assert write_refusal(repo / "real" / ".." / ".." / "outside" / "x", repo).endswith("modelspec writes only inside it")
    with pytest.raises(WriteRefused) as refused:
        refuse_write(repo / "linked" / "a", repo)
    assert refused.value.strerror == str(refused.value)
    assert link_refusal(repo / "linked", "the cache folder") == (
        f"{repo}/linked (the cache folder) is a symbolic link; modelspec never writes through one (a checkout may "
        "carry a link to any folder or file): remove the link")
    assert link_refusal(repo / "real", "x") is None


def test_the_folder_a_write_stays_in(tmp_path: Path) -> None:
    assert home_of(tmp_path / "repo" / "specs" / "a.yaml", tmp_path / "repo") == tmp_path / "repo"
    assert home_of(tmp_path / "other" / "a.yaml", tmp_path / "repo") == tmp_path / "other"


# --- check --fix --------------------------------------------------------------------------------------------

def test_check_fix_never_writes_through_a_symlinked_spec(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "specs" / "a").mkdir(parents=True)
    victim = tmp_path / "victim.yaml"
    victim.write_text(BROKEN, encoding="utf-8")
    (root / "specs" / "a" / "a.yaml").symlink_to(victim)
    result = run(root, "check", "--fix")
    assert result.exit_code == 1
    assert (f"modelspec: cannot write the fixes to specs/a/a.yaml: {root}/specs/a/a.yaml is a symbolic link; "
            "modelspec never writes through one") in result.stderr
    assert victim.read_text(encoding="utf-8") == BROKEN


# --- regen ----------------------------------------------------------------------------------------------------

def test_regen_never_writes_through_its_lock_file(tmp_path: Path) -> None:
    # filelock opens (and truncates) the file a committed resolved/.regen.lock link names
    root = make_repo(tmp_path / "repo")
    victim = tmp_path / "victim"
    victim.write_text("precious\n", encoding="utf-8")
    (root / "resolved").mkdir(exist_ok=True)
    (root / "resolved" / ".regen.lock").symlink_to(victim)
    result = run(root, "regen")
    assert result.exit_code == 2
    assert f"{root}/resolved/.regen.lock is a symbolic link; modelspec never writes through one" in result.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_regen_never_writes_through_a_linked_resolved_folder(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    if (root / "resolved").exists():
        os.rename(root / "resolved", tmp_path / "old-resolved")
    (root / "resolved").symlink_to(tmp_path / "elsewhere")
    result = run(root, "regen")
    assert result.exit_code == 2
    assert f"{root}/resolved is a symbolic link" in result.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []


# --- site -----------------------------------------------------------------------------------------------------

def test_site_never_writes_into_a_linked_out_folder(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (tmp_path / "published").mkdir()
    (root / "_site").symlink_to(tmp_path / "published")
    result = run(root, "site", "--out", str(root / "_site"))
    assert result.exit_code == 2
    assert f"{root}/_site (the site's folder) is a symbolic link; modelspec never writes through one" in result.stderr
    assert list((tmp_path / "published").iterdir()) == []


def test_site_refuses_an_out_folder_holding_a_page_it_did_not_write(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    out = tmp_path / "site"
    assert run(root, "site", "--out", str(out)).exit_code == 0
    (out / "planted.html").write_text("<script>", encoding="utf-8")
    result = run(root, "site", "--out", str(out))
    assert result.exit_code == 2
    assert f"{out} holds files modelspec site did not write (planted.html)" in result.stderr


# --- the caches -----------------------------------------------------------------------------------------------

def test_a_cache_folder_that_is_a_link_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 25: a committed .modelspec_cache that is a symlink made check write (and replace a file named
    # results) outside the checkout
    monkeypatch.delenv("MODELSPEC_CACHE_DIR", raising=False)
    root = git_repo(tmp_path / "repo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "results").write_text("precious\n", encoding="utf-8")
    (root / ".modelspec_cache").symlink_to(outside)
    result = run(root, "check", "-q")
    assert result.exit_code == 0
    assert sorted(path.name for path in outside.iterdir()) == ["results"]
    assert (outside / "results").read_text(encoding="utf-8") == "precious\n"


@pytest.mark.parametrize("write", ["append", "replace"])
def test_a_cache_file_that_is_a_link_is_not_written_through(tmp_path: Path, write: str) -> None:
    from pipeline.cache import results

    cache = tmp_path / ".modelspec_cache"
    cache.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious\n", encoding="utf-8")
    (cache / "results").symlink_to(victim)
    with pytest.raises(WriteRefused):
        if write == "append":  # a results file's new records are appended: open(..., "a+b") follows a link
            results._append(cache / "results", ["x\tline\n"])
        else:
            results.replace_file(cache / "results", "x\n")
    assert (cache / "results").is_symlink() and victim.read_text(encoding="utf-8") == "precious\n"


def test_the_cache_s_lock_file_is_not_opened_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODELSPEC_CACHE_DIR", raising=False)
    root = git_repo(tmp_path / "repo")
    cache = root / ".modelspec_cache"
    cache.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("precious\n", encoding="utf-8")
    from pipeline.cache.results import LOCK_FILE

    (cache / LOCK_FILE).symlink_to(victim)
    assert run(root, "check", "-q").exit_code == 0
    assert victim.read_text(encoding="utf-8") == "precious\n"
