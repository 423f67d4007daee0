"""An example of every problem code: the input that gets it, and for the check passes' codes the report itself.

``modelspec rule CODE`` explains a code as ruff's ``rule`` does: what, why, an
example, the fix. The examples are data (``examples.yaml`` beside this module);
a check pass's example is a short spec that :func:`example_report` runs through
the passes and the inline ignores now, so the lines ``rule`` shows are the ones
``check`` would print, never a copy that can go stale.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import List, Mapping, Optional, Tuple

import yaml

from pipeline.check.config import Config
from pipeline.check.runner import check_bytes, run_result, verdict_of
from pipeline.check.suppress import suppress
from pipeline.pricing.op_profiles import OpProfiles
from pipeline.spec.problems import Problem

#: The example spec every ``add`` and ``edit`` starts from: a two-layer Llama that checks clean.
BASE = """\
name: tiny
arch: llama
hidden_size: 64
num_hidden_layers: 2
num_attention_heads: 4
vocab_size: 100
intermediate_size: 128
qkv_bias: false
o_bias: false
mlp_bias: false
tie_word_embeddings: false
norm_bias: false
"""

#: The file name an example's report gives.
EXAMPLE_FILE = "example.yaml"


@dataclass(frozen=True)
class Example:
    """One code's example.

    Attributes:
        about: The input in words, for a code no spec text shows; else ``None``.
        text: The example spec's text, for a code the check passes report; else ``None``.
        shown: The lines of *text* to show (1-based number, line): those the example adds or changes, or every line
            of a whole file.
        dropped: The lines of :data:`BASE` whose key the example leaves out.
        whole: Whether *text* is a file of its own rather than :data:`BASE` edited.
        reported_as: The code check reports for *text* (the code itself, or an earlier pass's).
    """

    about: Optional[str]
    text: Optional[str]
    shown: Tuple[Tuple[int, str], ...]
    dropped: Tuple[str, ...]
    whole: bool
    reported_as: str


@functools.lru_cache(maxsize=1)
def examples() -> Mapping[str, Example]:
    """Every code's example, from ``examples.yaml``."""
    raw = yaml.safe_load((Path(__file__).with_name("examples.yaml")).read_text(encoding="utf-8"))
    return {code: _example(code, entry) for code, entry in raw.items()}


def _example(code: str, entry: Mapping[str, object]) -> Example:
    """*code*'s example from its entry in ``examples.yaml``."""
    if "about" in entry:
        return Example(str(entry["about"]), None, (), (), False, code)
    whole = "spec" in entry
    text = str(entry["spec"]) if whole else _edited(entry.get("edit") or {}, entry.get("add"))
    base, lines = BASE.splitlines(), text.splitlines()
    shown = tuple((number, line) for number, line in enumerate(lines, 1) if whole or line not in base)
    keys = {line.partition(":")[0] for line in lines}
    dropped = () if whole else tuple(line for line in base if line.partition(":")[0] not in keys)
    return Example(None, text, shown, dropped, whole, str(entry.get("reported_as", code)))


def _edited(edit: Mapping[str, str], add: object) -> str:
    """:data:`BASE` with the line of each key of *edit* replaced by its text (dropped for an empty one), then
    *add*'s lines."""
    lines: List[str] = []
    for line in BASE.splitlines():
        key = line.partition(":")[0]
        if key not in edit:
            lines.append(line)
        elif edit[key]:
            lines.extend(str(edit[key]).splitlines())
    if add:
        lines.extend(str(add).splitlines())
    return "".join(line + "\n" for line in lines)


def example_report(example: Example, profiles: OpProfiles, codes: Mapping[str, str]) -> List[Problem]:
    """The problems of code ``example.reported_as`` that ``check`` reports on the example's text, inline ignores
    applied, in report order."""
    assert example.text is not None, "an example in words is not checked"
    checked, name = check_bytes(example.text.encode("utf-8"), EXAMPLE_FILE, profiles)
    result = suppress(run_result([verdict_of(checked, name)], strict=False), Config(), list(codes))
    return [problem for problem in result.problems if problem.code == example.reported_as]
