"""Report paths are relative to the git work tree, so CI finds the files when the specs sit in a subfolder.

A spec repository under ``catalogue/`` of a git work tree, checked with
``--root catalogue`` from the work tree's top and from inside ``catalogue/``:
the GitHub annotation's ``file=``, the SARIF ``uri`` resolved against its
``originalUriBaseIds`` and the text report's path each name a file that exists
in the work tree. Outside git, paths are relative to the current folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from click.testing import CliRunner

from pipeline.cli import main

BAD = ("name: acme-bad\nhidden_size: 896\nnum_hidden_layers: 4\nnum_attention_heads: 7\nvocab_size: 32000\n"
       "num_key_value_heads: 2\nintermediate_size: 4864\narch: llama\n")


@pytest.fixture
def work_tree(tmp_path: Path) -> Path:
    """A git work tree whose spec repository is ``catalogue/``, with one bad spec."""
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    spec = tmp_path / "catalogue" / "specs" / "acme" / "bad.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(BAD, encoding="utf-8")
    return tmp_path


def _check(cwd: Path, *args: str) -> str:
    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, ["check", *args], catch_exceptions=False)
    finally:
        os.chdir(here)
    assert result.exit_code == 1, result.output
    return result.stdout


@pytest.mark.parametrize("where", [".", "catalogue", "catalogue/specs"])
def test_github_annotations_name_the_file_in_the_work_tree(work_tree: Path, where: str) -> None:
    root = os.path.relpath(work_tree / "catalogue", work_tree / where)
    out = _check(work_tree / where, "--root", root, "--format", "github")
    files = re.findall(r"^::error file=([^,]+),", out, re.M)
    assert files == ["catalogue/specs/acme/bad.yaml"]
    assert (work_tree / files[0]).is_file()


def test_sarif_locations_resolve_to_files_that_exist(work_tree: Path) -> None:
    log = json.loads(_check(work_tree, "--root", "catalogue", "--format", "sarif"))
    run = log["runs"][0]
    base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == work_tree.resolve().as_uri() + "/"
    locations = [result["locations"][0]["physicalLocation"]["artifactLocation"] for result in run["results"]]
    assert [location["uri"] for location in locations] == ["catalogue/specs/acme/bad.yaml"]
    for location in locations:
        absolute = urllib.parse.urljoin(run["originalUriBaseIds"][location["uriBaseId"]]["uri"], location["uri"])
        assert Path(urllib.request.url2pathname(urllib.parse.urlparse(absolute).path)).is_file()


def test_outside_git_paths_are_relative_to_the_current_folder(tmp_path: Path) -> None:
    spec = tmp_path / "catalogue" / "specs" / "acme" / "bad.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(BAD, encoding="utf-8")
    out = _check(tmp_path, "--root", "catalogue")
    assert out.startswith("catalogue/specs/acme/bad.yaml:6:22: error [spec.kv-heads-divide] ")


@given(st.lists(st.lists(st.sampled_from(["a", "b.yaml", ".", "..", "", "x:y", "é", "c d", "#", "\udcff", "s+p"]),
                         min_size=1, max_size=4), max_size=6))
def test_report_names_of_many_paths_are_each_ones_report_name(tmp_path_factory, parts) -> None:
    from pipeline.check.repo import SpecRepo

    root = tmp_path_factory.mktemp("repo")
    (root / ".git").mkdir(exist_ok=True)
    repo = SpecRepo(root)
    paths = [str(root) + "/" + "/".join(segments) for segments in parts] + ["relative/x.yaml", "/elsewhere/y.yaml"]
    assert repo.report_names(paths) == [repo.report_name(path) for path in paths]
    assert repo.displays(paths) == [repo.display(path) for path in paths]
