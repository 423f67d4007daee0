"""The code-review view: a SARIF 2.1.0 log, for GitHub code scanning and other SARIF viewers.

One run, one result per problem, one rule per code that occurs (sorted; its
descriptions are the codes table's help text). Locations are relative URIs with
forward slashes against ``%SRCROOT%``, the top of the git work tree (which code
scanning resolves to the checkout; ``originalUriBaseIds`` gives its ``file:``
URI on the machine that ran the check), plus a 1-based ``region`` (``columnKind`` says columns count Unicode
code points, as the YAML reader counts them). A problem's field path is given
twice: as a logical location (``fullyQualifiedName`` is the JSON Pointer) for
viewers that show one, and as ``properties.pointer`` for scripts. The verdict
is in ``invocations[0]``: ``exitCode`` is the run's, and ``executionSuccessful``
says whether modelspec itself ran to completion: it is false only when it
crashed on a file (exit code 2). Problems found are results, not a failed
execution (SARIF 2.1.0, section 3.20.14: a tool that found problems still
executed successfully), and code-scanning services treat a false value as a
broken tool.

Written as plain dicts and ``json.dumps`` rather than with Microsoft's
``sarif-om``: its last release is from 2019, its attrs classes use Python
attribute names and need ``jschema-to-python`` (and ``jsonpickle``) to
serialise to SARIF's camelCase, and it validates nothing. What guards the
shape is a test that validates the output against the official 2.1.0 schema.
"""

from __future__ import annotations

import json
import pathlib
import urllib.parse
from dataclasses import dataclass
from importlib import metadata
from typing import Any, Mapping, Optional, Sequence

from pipeline.reporters.summary import TOOL_NAME, TOOL_VERSION, help_text, more_problems, posix_path, scope_sentence
from pipeline.spec.escape import json_text, printable
from pipeline.spec.problems import Problem, RunResult, Severity

#: The schema a SARIF 2.1.0 log names (the OASIS standard's, with its errata).
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

#: The most results in one run: GitHub code scanning refuses a run with more ("SARIF results file is too large":
#: 25,000 results per run). The last one kept counts the rest.
MAX_RESULTS = 25_000

#: The base every relative artifact URI is resolved against; GitHub code scanning maps it to the checkout.
SOURCE_ROOT = "%SRCROOT%"


# What each exit code of check means, as SARIF's exitCodeDescription.
_EXIT_CODE_WORDS = {0: "no problem fails the run", 1: "problems fail the run",
                    2: "modelspec crashed on a file (check.internal)"}


@dataclass(frozen=True)
class SarifReporter:
    """Render a run as a SARIF 2.1.0 log.

    Attributes:
        source_root: The ``file:`` URI (ending in ``/``) of the folder the report's relative paths are
            relative to (the git work tree's top), given as ``originalUriBaseIds`` so a viewer can find the
            files; ``None`` when unknown (the base is then only described).
    """

    source_root: Optional[str] = None

    def render(self, result: RunResult, codes: Mapping[str, str]) -> str:
        """Return the log, indented by 2, with a trailing newline.

        Raises:
            ValueError: If a problem's code is not in *codes* (see :func:`help_text`).
        """
        return json_text(json.dumps(sarif_log(result, codes, self.source_root), indent=2, ensure_ascii=False)) + "\n"


def sarif_log(result: RunResult, codes: Mapping[str, str], source_root: Optional[str] = None) -> dict[str, Any]:
    """The SARIF log as plain JSON values; *source_root* as :attr:`SarifReporter.source_root`.

    Raises:
        ValueError: If a problem's code is not in *codes* (see :func:`help_text`).
    """
    problems = result.problems
    if len(problems) > MAX_RESULTS:
        problems = (*problems[:MAX_RESULTS - 1],
                    more_problems(problems[MAX_RESULTS - 1:], f"GitHub code scanning takes at most {MAX_RESULTS} "
                                                              "results per run"))
    rule_ids = sorted({problem.code for problem in problems})
    rule_index = {code: index for index, code in enumerate(rule_ids)}
    exit_code = result.exit_code
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": TOOL_NAME,
                "version": TOOL_VERSION,
                "rules": [_rule(code, problems, codes) for code in rule_ids],
            }},
            "invocations": [{
                "executionSuccessful": exit_code != 2,
                "exitCode": exit_code,
                "exitCodeDescription": _EXIT_CODE_WORDS[exit_code],
            }],
            "originalUriBaseIds": {SOURCE_ROOT: _base(source_root)},
            "columnKind": "unicodeCodePoints",
            "results": [_result(problem, rule_index[problem.code], result) for problem in problems],
            "properties": {"strict": result.strict, **({"scope": scope_sentence(result)} if result.scope else {})},
        }],
    }


def _base(source_root: Optional[str]) -> dict[str, Any]:
    """The artifact location :data:`SOURCE_ROOT` stands for."""
    description = {"text": "The top of the git work tree holding the spec repository (outside git, the folder "
                           "modelspec ran in); every result's path is relative to it."}
    return {"uri": source_root, "description": description} if source_root else {"description": description}


def _rule(code: str, problems: Sequence[Problem], codes: Mapping[str, str]) -> dict[str, Any]:
    """The reporting descriptor for *code*; its level is error if the run has it as an error anywhere."""
    severities = {problem.severity for problem in problems if problem.code == code}
    level = Severity.ERROR if Severity.ERROR in severities else Severity.WARNING
    text = help_text(codes, code)
    rule = {
        "id": code,
        "shortDescription": {"text": text},
        "help": {"text": rule_help(code, text), "markdown": rule_help(code, text, markdown=True)},
        "defaultConfiguration": {"level": level.value},
    }
    base = docs_base()
    if base:
        rule["helpUri"] = f"{base}/blob/main/docs/problems.md#{code}"  # each row has an anchor: its code
    return rule


def rule_help(code: str, text: str, markdown: bool = False) -> str:
    """A rule's ``help``: what the code means, where every code is listed, and how to accept a warning."""
    quote = "`" if markdown else "'"
    return (f"{text}\n\nEvery modelspec code is listed, by area, in docs/problems.md of the modelspec repository "
            f"({quote}{code.split('.')[0]}.*{quote}). Fix the spec at the reported line; a warning may be "
            f"accepted on its line with {quote}# modelspec: ignore[{code}]{quote}, or for a whole run with "
            f"{quote}ignore = [\"{code}\"]{quote} under [tool.modelspec] in pyproject.toml. An error cannot be "
            f"ignored.")


def docs_base() -> Optional[str]:
    """The modelspec repository's URL from the installed distribution's metadata (its ``Project-URL``
    ``Repository`` or ``Source``), for the rules' ``helpUri``; ``None`` when the metadata states none, so no
    address is made up."""
    try:
        urls = metadata.metadata("modelspec-catalogue").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    for entry in urls:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("repository", "source") and url.strip().startswith("https://"):
            return url.strip().rstrip("/")
    return None


def _result(problem: Problem, rule_index: int, result: RunResult) -> dict[str, Any]:
    """One problem as a SARIF result."""
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": artifact_location(problem.file),
            "region": {"startLine": problem.line, "startColumn": problem.column},
        },
    }
    if problem.path:
        location["logicalLocations"] = [{"name": printable(str(problem.path[-1])),
                                          "fullyQualifiedName": printable(problem.pointer)}]
    return {
        "ruleId": problem.code,
        "ruleIndex": rule_index,
        "level": problem.severity.value,
        "message": {"text": problem.message},
        "locations": [location],
        "properties": {"pass": problem.pass_name, "pointer": printable(problem.pointer), "failing": result.failing(problem)},
    }


def artifact_location(file: str) -> dict[str, str]:
    """The SARIF ``artifactLocation`` of *file*.

    A relative path becomes a percent-encoded relative URI with forward slashes
    against :data:`SOURCE_ROOT` (``specs/my model.yaml`` is ``specs/my%20model.yaml``);
    an absolute path, which has no root to be relative to, a ``file:`` URI.
    """
    path = pathlib.PurePath(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": urllib.parse.quote(posix_path(file), safe="/"), "uriBaseId": SOURCE_ROOT}
