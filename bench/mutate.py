"""Mutation testing of one module: sample mutants with a printed seed, run the tests that cover the module on
each, and report which the tests killed, which survived (with their diff) and which ran out of time.

    .venv/bin/python bench/mutate.py pipeline/pricing/parameters.py              # 40 mutants, a fresh seed
    .venv/bin/python bench/mutate.py pipeline/spec/escape.py --seed 7 -n 40       # the same 40 again
    .venv/bin/python bench/mutate.py pipeline/cache/names.py --list               # the mutants, not run

Mutants are made with the standard library's ``ast``, one change each: an arithmetic or boolean operator swapped
(``+``/``-``, ``*``/``//``, ``and``/``or``...), a comparison flipped (``<``/``<=``, ``==``/``!=``, ``in``/``not in``,
``is``/``is not``), a constant changed (a number by one, ``True``/``False``, a string emptied or extended, ``None``
for a value), a ``not`` dropped, a statement dropped (replaced by ``pass``). Docstrings are left alone. The change
is made in the module's source text at the node's position, so a survivor's diff is one hunk of the real file.

Why not mutmut: mutmut 3 runs every mutant of a module (no sampling, no seed), copies the project into
``mutants/`` and runs the suite through its own trampoline; on a loaded 2-core machine a module's few hundred
mutants take hours. This script samples 40 and runs only the tests the module's row of :data:`COVERS` names.

Each mutant runs in a copy of the worktree (``pipeline/`` and ``tests/`` copied, the rest linked), its working
folder, put first on ``PYTHONPATH`` (``python -P``: the worktree is not), so the worktree is never edited, an edit
to it during a run changes nothing, and a child ``modelspec`` process imports the mutant too. A
mutant has ``--timeout`` seconds (default: five times the unmutated run, at least 60 s), then its process group is
killed and it counts as ``timeout``. The score is (killed + timeout) / (sampled - equivalent); equivalent mutants
(a change no test can see, e.g. a cache size) are listed in ``bench/mutate_equivalent.txt`` by their stable id
``path:line:col:change`` with the reason, and left out of the score, listed as such.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent

#: The tests that cover each module: what a mutant of it is run against.
COVERS: Dict[str, Tuple[str, ...]] = {
    "pipeline/pricing/parameters.py": ("tests/test_parameters.py", "tests/test_fast_paths.py"),
    "pipeline/pricing/weights.py": ("tests/test_fast_paths.py", "tests/test_parameters.py", "tests/test_op_profiles.py",
                                    "tests/test_shape_bounds.py"),
    "pipeline/spec/escape.py": ("tests/test_escape.py", "tests/test_hostile_text.py"),
    # the cache's modules: each against its in-process test file (seconds a run; the command-level files,
    # tests/test_result_cache.py, test_snapshot.py, test_names_index.py, test_whole_check.py and
    # test_artifact_cache.py, take minutes under load and cover the same through the CLI)
    "pipeline/cache/stamps.py": ("tests/test_stamps.py",),
    "pipeline/cache/results.py": ("tests/test_result_records.py",),
    "pipeline/cache/verdicts.py": ("tests/test_verdicts.py",),
    "pipeline/cache/snapshot.py": ("tests/test_snapshot_file.py",),
    "pipeline/cache/names.py": ("tests/test_names_record.py",),
    "pipeline/cache/whole_check.py": ("tests/test_answer_record.py",),
    "pipeline/cache/artifacts.py": ("tests/test_artifact_entries.py",),
}

#: Where equivalent mutants are listed: ``id  # why`` a line.
EQUIVALENT_FILE = ROOT / "bench" / "mutate_equivalent.txt"

_BINOPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult, ast.Div: ast.Mult,
           ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult, ast.BitOr: ast.BitAnd, ast.BitAnd: ast.BitOr,
           ast.LShift: ast.RShift, ast.RShift: ast.LShift}
_COMPARES = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
             ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BOOLOPS = {ast.And: ast.Or, ast.Or: ast.And}


@dataclass(frozen=True)
class Mutant:
    """One change to a module's source: where (1-based line, 0-based column, end), what it becomes, and a name."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str
    change: str

    def ident(self, path: str) -> str:
        """The stable id of this mutant of *path* (the same whatever the seed)."""
        return f"{path}:{self.line}:{self.col}:{self.change}"


def _docstrings(tree: ast.AST) -> set:
    """The ids of the constant nodes that are docstrings (left alone)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
                found.add(id(first))
    return found


def _constant_changes(value: object) -> List[Tuple[str, str]]:
    """What a constant *value* can become: (source text, change name)."""
    if isinstance(value, bool):
        return [(repr(not value), f"{value!r}->{not value!r}")]
    if isinstance(value, int):
        return [(repr(value + 1), f"{value}->{value + 1}")]
    if isinstance(value, float):
        return [(repr(value * 2 or 1.0), f"{value!r}->{value * 2 or 1.0!r}")]
    if isinstance(value, str):
        return [(repr(value + "X"), "str+X")] if value else [(repr("X"), "''->'X'")]
    if value is None:
        return [("0", "None->0")]
    return []


def _node_mutants(node: ast.AST) -> Iterator[Tuple[str, str]]:
    """The (new source text, change name) of each mutant of *node*."""
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        swapped = ast.BinOp(node.left, _BINOPS[type(node.op)](), node.right)
        yield f"({ast.unparse(swapped)})", f"{type(node.op).__name__}->{_BINOPS[type(node.op)].__name__}"
    elif isinstance(node, ast.Compare):
        for index, op in enumerate(node.ops):
            if type(op) in _COMPARES:
                ops = list(node.ops)
                ops[index] = _COMPARES[type(op)]()
                flipped = ast.Compare(node.left, ops, node.comparators)
                yield f"({ast.unparse(flipped)})", f"{type(op).__name__}->{type(ops[index]).__name__}@{index}"
    elif isinstance(node, ast.BoolOp):
        other = _BOOLOPS[type(node.op)]()
        yield f"({ast.unparse(ast.BoolOp(other, node.values))})", f"{type(node.op).__name__}->{type(other).__name__}"
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield f"({ast.unparse(node.operand)})", "not-dropped"
    elif isinstance(node, ast.Constant):
        yield from _constant_changes(node.value)


def _droppable(node: ast.AST) -> bool:
    """Whether dropping the statement *node* makes a mutant (not a definition, an import, a bare ``pass``)."""
    return isinstance(node, ast.stmt) and not isinstance(
        node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Pass,
               ast.Global, ast.Nonlocal))


def _in_annotation(tree: ast.AST) -> set:
    """The ids of nodes inside annotations (mutating a type hint changes nothing at run time)."""
    found = set()
    for node in ast.walk(tree):
        hints = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            hints = [node.returns, *(arg.annotation for arg in [*node.args.args, *node.args.kwonlyargs,
                                                                   *node.args.posonlyargs])]
        elif isinstance(node, ast.AnnAssign):
            hints = [node.annotation]
        for hint in hints:
            if hint is not None:
                found.update(id(child) for child in ast.walk(hint))
    return found


def mutants(source: str) -> List[Mutant]:
    """Every mutant of *source*, in source order."""
    tree = ast.parse(source)
    skipped = _docstrings(tree) | _in_annotation(tree)
    found: List[Mutant] = []
    for node in ast.walk(tree):
        if id(node) in skipped or not hasattr(node, "lineno") or node.end_lineno is None:
            continue
        where = (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
        for text, change in _node_mutants(node):
            found.append(Mutant(*where, text, change))
        if _droppable(node) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            found.append(Mutant(*where, "pass", f"drop-{type(node).__name__}"))
    return sorted(set(found), key=lambda m: (m.line, m.col, m.change))


def apply(source: str, mutant: Mutant) -> str:
    """*source* with *mutant*'s change made."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    start = offsets[mutant.line - 1] + mutant.col
    end = offsets[mutant.end_line - 1] + mutant.end_col
    return (data[:start] + mutant.text.encode("utf-8") + data[end:]).decode("utf-8")


def diff(source: str, changed: str, path: str) -> str:
    """The unified diff of *source* to *changed*."""
    return "".join(difflib.unified_diff(source.splitlines(keepends=True), changed.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}", n=1))


#: What a mutant's tree copies (the rest of the worktree is linked): the package mutated and the tests run, so
#: that an edit to the worktree during a long run changes neither.
COPIED = ("pipeline", "tests")


def _copy_tree(into: Path) -> Path:
    """A copy of the worktree under *into*: ``pipeline/`` and ``tests/`` copied, everything else linked."""
    for entry in ROOT.iterdir():
        if entry.name in COPIED:
            shutil.copytree(entry, into / entry.name, ignore=shutil.ignore_patterns("__pycache__"))
        elif entry.name not in (".venv", ".git"):
            (into / entry.name).symlink_to(entry)
    return into


def run_tests(tree: Optional[Path], tests: Sequence[str], timeout: float) -> Tuple[str, float]:
    """Run *tests* in *tree* with its package first on the path (the worktree's when ``None``): ``"survived"``
    (they pass), ``"killed"`` (a failure or an error), ``"timeout"``; and the seconds taken. ``python -P``: the
    working directory (the worktree) is not put before ``PYTHONPATH``, so the mutant is what is imported."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
    command = [sys.executable, "-P", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow",
               "-o", "addopts=", "--timeout", str(int(timeout)), *tests]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=tree or ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "timeout", time.monotonic() - started
    return ("survived" if code == 0 else "killed"), time.monotonic() - started


def equivalents() -> Dict[str, str]:
    """The equivalent mutants' ids with why each is one (:data:`EQUIVALENT_FILE`)."""
    if not EQUIVALENT_FILE.exists():
        return {}
    found = {}
    for line in EQUIVALENT_FILE.read_text(encoding="utf-8").splitlines():
        ident, _, why = line.partition("#")
        if ident.strip():
            found[ident.strip()] = why.strip()
    return found


def _arguments(argv: Optional[Sequence[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the module's path from the repository's root, e.g. pipeline/spec/escape.py")
    parser.add_argument("-n", type=int, default=40, help="how many mutants to sample (default 40)")
    parser.add_argument("--seed", type=int, default=None, help="the sampling seed (default: a fresh one, printed)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per mutant (default: five times the unmutated run, at least 60)")
    parser.add_argument("--tests", nargs="+", default=None, help="the test files (default: the module's COVERS row)")
    parser.add_argument("--list", action="store_true", help="print the sampled mutants' diffs, run nothing")
    parser.add_argument("--only", nargs="+", default=None, metavar="ID",
                        help="run only the sampled mutants of these ids (a run's survivors, again after new tests)")
    return parser.parse_args(argv)


def _imports_the_copy(tree: Path) -> bool:
    """Whether a child run with *tree* on the path imports the package from it (not the worktree's)."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    found = subprocess.run([sys.executable, "-P", "-c", "import pipeline; print(pipeline.__file__)"], cwd=ROOT,
                           env=env, capture_output=True, text=True, check=False).stdout.strip()
    return found.startswith(str(tree))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Sample, run and report; exit 0 (the report is the output), 2 when the unmutated tests fail."""
    args = _arguments(argv)
    path = args.module
    source = (ROOT / path).read_text(encoding="utf-8")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    every = mutants(source)
    sample = sorted(random.Random(seed).sample(every, min(args.n, len(every))), key=lambda m: (m.line, m.col))
    sample = [mutant for mutant in sample if args.only is None or mutant.ident(path) in args.only]
    tests = args.tests or [test for test in COVERS.get(path, ()) if (ROOT / test).exists()]
    print(f"{path}: {len(sample)} of {len(every)} mutants, seed {seed}, tests {' '.join(tests)}", flush=True)
    if args.list:
        for mutant in sample:
            print(mutant.ident(path), diff(source, apply(source, mutant), path), sep="\n")
        return 0
    known = equivalents()
    results: List[Tuple[Mutant, str]] = []
    with tempfile.TemporaryDirectory(prefix="mutate-") as folder:
        tree = _copy_tree(Path(folder))
        if not _imports_the_copy(tree):
            print("a run with the copy on PYTHONPATH still imports the worktree's package: nothing to measure")
            return 2
        outcome, seconds = run_tests(tree, tests, args.timeout or 3600)
        if outcome != "survived":
            print(f"the unmutated tests do not pass ({outcome}): nothing to measure")
            return 2
        timeout = args.timeout or max(60.0, 5 * seconds)
        print(f"unmutated run {seconds:.0f} s; {timeout:.0f} s a mutant", flush=True)
        target = tree / path
        for number, mutant in enumerate(sample, 1):
            target.write_text(apply(source, mutant), encoding="utf-8")
            outcome, seconds = run_tests(tree, tests, timeout)
            if outcome == "survived" and mutant.ident(path) in known:
                outcome = "equivalent"
            results.append((mutant, outcome))
            print(f"[{number}/{len(sample)}] {outcome:10} {seconds:5.0f} s  {mutant.ident(path)}", flush=True)
        target.write_text(source, encoding="utf-8")
    return _report(path, seed, source, results, known)


def _report(path: str, seed: int, source: str, results: List[Tuple[Mutant, str]], known: Dict[str, str]) -> int:
    """Print the counts, the score and each survivor's diff."""
    counts = {name: sum(outcome == name for _, outcome in results)
              for name in ("killed", "timeout", "survived", "equivalent")}
    scored = len(results) - counts["equivalent"]
    score = 100.0 * (counts["killed"] + counts["timeout"]) / scored if scored else 100.0
    print(f"\n{path} seed {seed}: killed {counts['killed']}, timeout {counts['timeout']}, "
          f"survived {counts['survived']}, equivalent {counts['equivalent']}; score {score:.1f}% "
          f"({counts['killed'] + counts['timeout']}/{scored})")
    for mutant, outcome in results:
        if outcome in ("survived", "equivalent"):
            why = f"  (equivalent: {known[mutant.ident(path)]})" if outcome == "equivalent" else ""
            print(f"\n{outcome}: {mutant.ident(path)}{why}\n{diff(source, apply(source, mutant), path)}", end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
