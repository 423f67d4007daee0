"""Writes that went too far (issue 12, class 4): each refused, or kept to exactly what the command owns.

A checkout is a pull request's, so a link in it may point anywhere: a report is
never written through one, nor onto a spec; ``regen`` never writes through or
over a user's link in ``resolved/``; ``regen --commit`` commits exactly the
artifacts of committed specs, with no hook run, or refuses naming why; ``fmt``
keeps what a ``yaml-language-server`` header line says beyond the schema.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.spec.layout import format_text
from pipeline.spec.writes import write_refusal
from budget import examples
from tests.spec_repos import commit_all, git, git_repo, make_repo, run

LLAMA_SPEC = "specs/llama/llama-3.1-8b.yaml"
NEW_SPEC = "specs/llama/llama-tiny.yaml"
TINY = ("name: llama-tiny\nhidden_size: 64\nnum_hidden_layers: 2\nnum_attention_heads: 4\nvocab_size: 100\n"
        "intermediate_size: 128\narch: llama\n")


def _check(repo: Path, *args: str):
    return CliRunner().invoke(main, ["check", "--root", str(repo), *args], catch_exceptions=False)


# --- check --output ----------------------------------------------------------------------------------------

def test_a_report_is_not_written_through_a_committed_symlink(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    victim = tmp_path / "victim"
    victim.write_text("precious\n", encoding="utf-8")
    (repo / "modelspec.sarif").symlink_to(victim)
    monkeypatch.chdir(repo)
    result = _check(repo, "--output", "sarif=modelspec.sarif")
    assert result.exit_code == 2
    assert ("Error: Invalid value for --output sarif=modelspec.sarif: modelspec.sarif is a symbolic link; a report "
            "is never written through one (a checkout may carry a link to any file): remove the link or name another "
            "file\n") in result.stderr
    assert victim.read_text(encoding="utf-8") == "precious\n"


def test_a_report_is_not_written_through_a_symlinked_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    (tmp_path / "elsewhere").mkdir()
    (repo / "out").symlink_to(tmp_path / "elsewhere")
    monkeypatch.chdir(repo)
    result = _check(repo, "--output", "junit=out/report.xml")
    assert result.exit_code == 2
    assert "out is a symbolic link; a report is never written through one" in result.stderr
    assert list((tmp_path / "elsewhere").iterdir()) == []


@pytest.mark.parametrize(("named", "target", "said"), [
    ((), LLAMA_SPEC, f"{LLAMA_SPEC} is a spec being checked; a report never replaces it: name another file"),
    ((LLAMA_SPEC,), "specs/deepseek/deepseek-v3.yaml", "is in "),
    ((LLAMA_SPEC,), "op_profiles/llama.yaml", "is in "),
])
def test_a_report_never_replaces_a_spec_or_a_repository_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            named: tuple, target: str, said: str) -> None:
    repo = make_repo(tmp_path / "repo")
    before = (repo / target).read_bytes()
    monkeypatch.chdir(repo)
    result = _check(repo, *named, "--output", f"json={target}")
    assert result.exit_code == 2
    assert said in result.stderr
    assert (repo / target).read_bytes() == before


def test_a_report_is_written_to_a_plain_file_and_through_a_link_to_a_pipe(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "repo")
    monkeypatch.chdir(repo)
    assert _check(repo, "-q", "--output", "json=report.json").exit_code == 0
    assert (repo / "report.json").read_text(encoding="utf-8").startswith("{")
    if hasattr(os, "mkfifo"):
        import threading

        os.mkfifo(tmp_path / "pipe")
        (repo / "to-pipe").symlink_to(tmp_path / "pipe")
        got = []
        reader = threading.Thread(target=lambda: got.append((tmp_path / "pipe").read_text(encoding="utf-8")))
        reader.start()
        assert _check(repo, "-q", "--output", "json=to-pipe").exit_code == 0
        reader.join(30)
        assert got and got[0].startswith("{")


# --- regen and a user's link in resolved/ ------------------------------------------------------------------

def test_regen_never_writes_through_or_over_a_user_s_link(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert run(repo, "regen").exit_code == 0
    victim = tmp_path / "victim.json"
    victim.write_text("mine\n", encoding="utf-8")
    link = repo / "resolved" / "llama-3.1-8b.json"
    link.unlink()
    link.symlink_to(victim)
    expected = ("resolved/llama-3.1-8b.json:1:1: error [regen.not-generated] resolved/llama-3.1-8b.json was not "
                "written by modelspec regen (it is a symbolic link, which regen never writes through or over), so "
                f"the artifact of {LLAMA_SPEC} is not written over it; move that file out of resolved/ or rename the "
                "model\n")
    checked = run(repo, "regen", "--check")
    assert checked.exit_code == 1
    assert expected in checked.stdout
    assert "missing" not in checked.stdout
    written = run(repo, "regen")
    assert written.exit_code == 1
    assert expected in written.stdout
    assert link.is_symlink() and victim.read_text(encoding="utf-8") == "mine\n"


# --- regen --commit ----------------------------------------------------------------------------------------

def _head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def test_commit_refuses_the_artifact_of_an_untracked_spec(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / NEW_SPEC).write_text(TINY, encoding="utf-8")
    head = _head(repo)
    result = run(repo, "regen", "--commit")
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: regen --commit refused, nothing was written: {NEW_SPEC} is not committed, so the artifacts would be "
        "committed without their source and a clean checkout would fail modelspec regen --check; commit the specs "
        "and profiles first (git add, git commit), then run regen --commit\n")
    assert _head(repo) == head and not (repo / "resolved").exists()


def test_commit_refuses_an_untracked_op_profile(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    profile = (repo / "op_profiles" / "llama.yaml").read_text(encoding="utf-8")
    lines = [line for line in profile.splitlines() if not line.startswith("  - ")]
    text = "\n".join(lines).replace("arch: llama", "arch: extra").replace("model_types: [llama]",
                                                                         "model_types: [extra]")
    text = text.replace("match:", "match: []")
    (repo / "op_profiles" / "extra.yaml").write_text(text + "\n", encoding="utf-8")
    result = run(repo, "regen", "--commit")
    assert result.exit_code == 2
    assert "op_profiles/extra.yaml is not committed" in result.stderr


def test_commit_refuses_files_the_user_staged_in_resolved(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    assert run(repo, "regen").exit_code == 0
    commit_all(repo, "artifacts")
    (repo / "resolved" / "notes.json").write_text("{}\n", encoding="utf-8")
    git(repo, "add", "resolved/notes.json")
    head = _head(repo)
    result = run(repo, "regen", "--commit")
    assert result.exit_code == 2
    assert ("resolved/notes.json is staged already, and regen --commit commits only the artifacts it writes: unstage "
            "(git restore --staged) or commit them first\n") in result.stderr
    assert _head(repo) == head


def test_commit_refuses_a_detached_head(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "--detach")
    head = _head(repo)
    result = run(repo, "regen", "--commit")
    assert result.exit_code == 2
    assert f"HEAD is detached (at {head[:12]}), so the commit would be on no branch; check out the branch to " \
           "commit on" in result.stderr
    assert _head(repo) == head and not (repo / "resolved").exists()


def test_commit_runs_no_hook_and_holds_only_resolved(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name, body in (("pre-commit", "echo hooked > sneaky.txt\ngit add sneaky.txt\n"),
                       ("commit-msg", "echo ran > ../ran-commit-msg\nexit 1\n"),
                       ("prepare-commit-msg", "echo ran > ../ran-prepare\n")):
        (hooks / name).write_text("#!/bin/sh\n" + body, encoding="utf-8")
        (hooks / name).chmod(0o755)
    head = _head(repo)
    result = run(repo, "regen", "--commit")
    assert result.exit_code == 0, result.output
    changed = git(repo, "diff-tree", "-r", "--name-only", "--no-commit-id", head, "HEAD").split()
    assert changed and all(path.startswith("resolved/") for path in changed)
    assert git(repo, "rev-parse", "HEAD~1").strip() == head
    assert git(repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert not (repo / "sneaky.txt").exists()
    assert not (repo / ".git" / "ran-commit-msg").exists() and not (repo / ".git" / "ran-prepare").exists()
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_commit_after_the_readme_steps_passes_regen_check_on_a_clean_checkout(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / NEW_SPEC).write_text(TINY, encoding="utf-8")
    commit_all(repo, "add llama-tiny")
    assert run(repo, "regen", "--commit").exit_code == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert run(clone, "regen", "--check").exit_code == 0


# --- fmt and the yaml-language-server line -----------------------------------------------------------------

SCHEMA = "# yaml-language-server: $schema=../../schemas/model-spec.schema.json"


@pytest.mark.parametrize(("first", "kept"), [
    ("# yaml-language-server: $schema=old.json  # pinned for the editor",
     [f"{SCHEMA}  # pinned for the editor", "# source: x"]),
    ("# yaml-language-server: $schema=../../schemas/model-spec.schema.json", [SCHEMA, "# source: x"]),
    ("# yaml-language-server: format.enable=false", [SCHEMA, "# yaml-language-server: format.enable=false",
                                                     "# source: x"]),
])
def test_fmt_keeps_what_a_yaml_language_server_line_says_beside_the_schema(first: str, kept: list) -> None:
    text = f"{first}\n# source: x\n{TINY}"
    formatted = format_text(text, "s.yaml", SCHEMA)
    assert formatted.text.splitlines()[:len(kept)] == kept


def test_fmt_check_of_a_kept_yaml_language_server_line_is_stable(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "schemas").mkdir()
    (repo / "schemas" / "model-spec.schema.json").write_text("{}", encoding="utf-8")
    spec = repo / NEW_SPEC
    spec.write_text(f"# yaml-language-server: $schema=old.json  # note\n{TINY}", encoding="utf-8")
    assert CliRunner().invoke(main, ["fmt", "--root", str(repo), str(spec)]).exit_code == 0
    assert spec.read_text(encoding="utf-8").splitlines()[0] == f"{SCHEMA}  # note"
    assert CliRunner().invoke(main, ["fmt", "--root", str(repo), "--check", str(spec)]).exit_code == 0



# --- write_refusal: strings held to Path's reading -----------------------------------------------------------

def _refusal_by_path(path: str, within: str):
    """The rule as ``Path`` reads it (what write_refusal was before it took strings): the slow path."""
    target, base = Path(os.path.abspath(path)), Path(os.path.abspath(within))
    if target != base and base not in target.parents:
        return "outside"
    current = base
    for part in target.relative_to(base).parts:
        current = current / part
        if current.is_symlink():
            return str(current)
    return None


_PARTS = ("a", "b", "link", "ab", "..", ".", "")


@settings(max_examples=examples(300), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.lists(st.sampled_from(_PARTS), min_size=0, max_size=5),
       within=st.lists(st.sampled_from(_PARTS), min_size=0, max_size=3), trailing=st.booleans())
@example(path=["a", "b"], within=["a"], trailing=False)  # may
@example(path=["a", "..", "b"], within=["a"], trailing=True)  # outside
@example(path=["a", "link", "b"], within=[], trailing=False)  # through a link
@example(path=["a"], within=["a"], trailing=False)  # the folder itself
def test_write_refusal_reads_a_path_as_path_does(tmp_path: Path, path: list, within: list, trailing: bool) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True, exist_ok=True)
    for folder in (tmp_path, tmp_path / "a", tmp_path / "a" / "b"):
        if not (folder / "link").is_symlink():
            (folder / "link").symlink_to(tmp_path / "a")
    target = os.path.join(str(tmp_path), *path) if path else str(tmp_path)
    base = os.path.join(str(tmp_path), *within) + (os.sep if trailing else "")
    why = write_refusal(target, base)
    slow = _refusal_by_path(target, base)
    if slow is None:
        assert why is None
    elif slow == "outside":
        assert why == f"{target} is outside {base}; modelspec writes only inside it"
    else:
        assert why is not None and why.startswith(f"{slow} is a symbolic link;")


def test_write_refusal_says_why_in_each_case(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "link").symlink_to(tmp_path)
    assert write_refusal(tmp_path / "a" / "x.json", tmp_path / "a") is None
    assert write_refusal(tmp_path / "b.json", tmp_path / "a") == \
        f"{tmp_path}/b.json is outside {tmp_path}/a; modelspec writes only inside it"
    assert write_refusal(tmp_path / "a" / "link" / "x.json", tmp_path) == \
        (f"{tmp_path}/a/link is a symbolic link; modelspec never writes through one (a checkout may carry a link "
         "to any file): remove the link, or write the file it names yourself")
