"""Benchmark: what importing the library costs, from ``python -X importtime``.

Runs ``import pipeline.spec.model, pipeline.pricing.op_profiles, pipeline.pricing.stack`` in a
fresh interpreter several times and prints, as medians over the runs, the
cumulative microseconds of each ``pipeline.*`` module and the total of every
module the statement imported (the interpreter's own start-up imports, read
from a run of ``pass``, left out). The target is a total under 50 ms.

It measures twice: with the modules' bytecode cached (as an installed
package has it; the cache goes to a temporary ``PYTHONPYCACHEPREFIX``, never
into the tree), and compiled from source on every run (what a shell with
``PYTHONDONTWRITEBYTECODE`` set pays, as this project's dev shells do).

It then does the same for the first :func:`pipeline.pricing.op_profiles.load_op_profiles`
call, which imports the YAML reader and the schema validator on first use,
and prints the wall time of that call and its heaviest imports, so a change
that moves one of them to import time shows up here. Run:
``.venv/bin/python bench/bench_import.py [runs]``.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List, Mapping, Set, Tuple

LIBRARY = "import pipeline.spec.model, pipeline.pricing.op_profiles, pipeline.pricing.stack"
FIRST_LOAD = ("import time; import pipeline.pricing.op_profiles as p; start = time.perf_counter(); p.load_op_profiles(); "
              "print(round((time.perf_counter() - start) * 1e6))")
TARGET_US = 50_000

# One line of -X importtime: "import time:   self |  cumulative | <indent>name".
_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)$")


def importtime(code: str, env: Mapping[str, str]) -> Tuple[List[Tuple[int, int, str]], str]:
    """Run *code* under ``-X importtime``; return ``(cumulative us, depth, module)`` per import, and stdout."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                          check=True, env=dict(env))
    rows = []
    for line in done.stderr.splitlines():
        match = _LINE.match(line)
        if match:
            rows.append((int(match.group(2)), len(match.group(3)) // 2, match.group(4)))
    return rows, done.stdout


def startup_modules(env: Mapping[str, str]) -> Set[str]:
    """The modules the interpreter imports before running any code."""
    rows, _ = importtime("pass", env)
    return {name for _, _, name in rows}


def measure(code: str, before: Set[str], env: Mapping[str, str]) -> Tuple[Dict[str, int], Dict[str, int], str]:
    """One run of *code*: the cumulative time of each module it imported that is not in *before*, of the
    top-level ones among them (whose sum is the total), and its stdout."""
    rows, out = importtime(code, env)
    fresh = [(cumulative, depth, name) for cumulative, depth, name in rows if name not in before]
    return ({name: us for us, _, name in fresh}, {name: us for us, depth, name in fresh if depth == 0}, out)


def medians(code: str, runs: int, before: Set[str],
            env: Mapping[str, str]) -> Tuple[Dict[str, float], Dict[str, float], List[str]]:
    """:func:`measure` over *runs* runs (after one to warm the caches): median times per module and per
    top-level module, and the stdouts."""
    measure(code, before, env)
    results = [measure(code, before, env) for _ in range(runs)]

    def median_of(index: int) -> Dict[str, float]:
        names = set().union(*(result[index] for result in results))
        return {name: statistics.median(result[index].get(name, 0) for result in results) for name in names}

    return median_of(0), median_of(1), [result[2] for result in results]


def report(runs: int, env: Mapping[str, str], title: str) -> None:
    """Print the figures of one setting."""
    startup = startup_modules(env)
    per_module, top_level, _ = medians(LIBRARY, runs, startup, env)
    total = sum(top_level.values())
    print(f"== {title}\n{LIBRARY}  (median of {runs} runs, cumulative microseconds)")
    for name in sorted(n for n in per_module if n == "pipeline" or n.startswith("pipeline.")):
        print(f"  {name:<28}{per_module[name]:>10.0f}")
    print(f"  {'total':<28}{total:>10.0f}   target < {TARGET_US}: {'met' if total < TARGET_US else 'MISSED'}")
    heavy = ("yaml", "jsonschema", "git", "click")
    print(f"  imported of {list(heavy)}: {[n for n in heavy if n in per_module]}")

    library = set(per_module) | startup | {"time"}
    _, top_level, outs = medians(FIRST_LOAD, runs, library, env)
    load_us = statistics.median(int(out.strip()) for out in outs)
    print(f"\nfirst load_op_profiles() of the bundled folder: {load_us:.0f} us wall, "
          f"{sum(top_level.values()):.0f} us of it in the imports it makes; the heaviest:")
    for name, us in sorted(top_level.items(), key=lambda item: -item[1])[:5]:
        print(f"  {name:<28}{us:>10.0f}")
    print()


def main() -> None:
    """Print the figures, with bytecode cached and without."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    base = {key: value for key, value in os.environ.items()
            if key not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    with tempfile.TemporaryDirectory(prefix="modelspec-pycache-") as cache:
        report(runs, {**base, "PYTHONPYCACHEPREFIX": cache}, "bytecode cached (an installed package)")
    report(runs, {**base, "PYTHONDONTWRITEBYTECODE": "1"}, "compiled from source on every run")


if __name__ == "__main__":
    main()
