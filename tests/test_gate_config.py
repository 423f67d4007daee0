"""The configuration cannot hide a change (issue 25, item 4): a changed spec that ``modelspec.toml`` (``exclude``,
``specs``) or the files named leave out of ``check --changed-since`` is named (``gate.excluded-change``: a warning
no configuration silences, an error under ``--strict``), and ``diff`` lists the configuration as a rule change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.spec_repos import commit_all, edit, git, git_repo, run

LLAMA = "specs/llama/llama-3.1-8b.yaml"
ACME = "specs/acme/acme-1b.yaml"
MESSAGE = (f"{ACME} changed since main but is left out of this check (the configuration's exclude or specs, or the "
           "files named): nothing judged the change; check it, or change the configuration in a pull request of "
           "its own")


def _acme(tmp_path: Path, config: str) -> Path:
    """The fixture in git, then (uncommitted, as a pull request's head) a new spec under specs/acme/ with a width
    that does not divide by its heads, and a new modelspec.toml holding *config*."""
    root = git_repo(tmp_path / "repo")
    (root / "specs" / "acme").mkdir()
    (root / ACME).write_text((root / LLAMA).read_text(encoding="utf-8").replace("name: llama-3.1-8b", "name: acme-1b")
                             .replace("hidden_size: 4096", "hidden_size: 771"), encoding="utf-8")
    (root / "modelspec.toml").write_text(config, encoding="utf-8")
    return root


@pytest.mark.parametrize("config", ['exclude = ["specs/acme/*"]\n', 'specs = ["specs/llama", "specs/deepseek"]\n',
                                    'exclude = ["specs/acme/*"]\nignore = ["gate"]\n'])
def test_a_configuration_that_leaves_out_a_changed_spec_is_named(tmp_path: Path, config: str) -> None:
    root = _acme(tmp_path, config)
    result = run(root, "check", "--changed-since", "main", "--strict")
    base = git(root, "rev-parse", "main").strip()[:12]
    assert result.exit_code == 1
    assert f"{ACME}:1:1: warning [gate.excluded-change] {MESSAGE}\n" in result.stdout
    assert result.stderr.endswith(f"changed since main but left out by the configuration or the files named: {ACME} "
                                  "(not checked)\n")
    assert result.stderr.startswith(f"changed since main (merge base {base}): 0 of ")
    relaxed = run(root, "check", "--changed-since", "main")
    assert relaxed.exit_code == 0 and f"[gate.excluded-change] {MESSAGE}" in relaxed.stdout


def test_the_files_named_leave_out_a_changed_spec(tmp_path: Path) -> None:
    # a pre-commit style file list with --changed-since: the changed spec not among the files is named
    root = _acme(tmp_path, "")
    edit(root / LLAMA, "vocab_size: 128256", "vocab_size: 128000")
    result = run(root, "check", str(root / LLAMA), "--changed-since", "main", "--strict", "--format", "json")
    document = json.loads(result.stdout)
    assert (result.exit_code, [item["file"] for item in document["files"]]) == (1, [ACME, LLAMA])
    [problem] = document["files"][0]["problems"]
    assert (problem["code"], problem["severity"], problem["line"], problem["column"], problem["message"]) == \
        ("gate.excluded-change", "warning", 1, 1, MESSAGE)
    assert document["scope"]["specs_checked"] == 1


def test_a_change_the_configuration_takes_is_not_named(tmp_path: Path) -> None:
    root = _acme(tmp_path, "")
    result = run(root, "check", "--changed-since", "main", "--format", "json")
    files = {item["file"]: [p["code"] for p in item["problems"]] for item in json.loads(result.stdout)["files"]}
    assert "gate.excluded-change" not in [code for codes in files.values() for code in codes]
    assert ACME in files  # checked, and refused on its own merits
    assert result.exit_code == 1


def test_diff_lists_the_configuration_as_a_rule_change(tmp_path: Path) -> None:
    root = _acme(tmp_path, 'exclude = ["specs/acme/*"]\n')
    commit_all(root, "acme, and a configuration that hides it")
    result = run(root, "diff", "main~1", "HEAD", "--format", "markdown")
    assert result.stdout.startswith("**this pull request changes the rules**: ")
    assert "| `modelspec.toml` | configuration, added |  |\n" in result.stdout
