"""Benchmark: ``modelspec import`` of the whole config corpus in one process, against check-jsonschema.

Imports every ``config.json`` of ``tests/data/configs/`` (the catalogue's, and the refused ones under
``refused/``) the way the command does (strict JSON read, the mapping, the five check passes on the text it
would write; nothing is written), all in one Python process, and times each whole round. The first round pays the
imports of the library and the first load of the op profiles; later rounds are the warm cost a long-lived process
(an editor, a service) pays.

The reference is check-jsonschema (with its C YAML parser, as the project's other benches use it) validating the
catalogue's spec files against ``schemas/model-spec.schema.json``: one process per round that reads as many files
as the import round reads configs. The two run in alternating rounds and the medians are reported, with the ratio
modelspec / check-jsonschema. The target of issue 10 is the whole corpus under 3 s in one process.

Usage: ``python bench/bench_import_corpus.py [--rounds 5]`` (check-jsonschema from ``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "data" / "configs"

#: The import rounds, run in a fresh interpreter so that its first round includes the library's import.
_ROUNDS = """
import sys, time
from pathlib import Path
start = time.perf_counter()
from click.testing import CliRunner
from pipeline.cli import main
paths = [Path(p) for p in sys.argv[2:]]
runner = CliRunner()
for _ in range(int(sys.argv[1])):
    codes = [runner.invoke(main, ["import", str(p), "--root", "."]).exit_code for p in paths]
    now = time.perf_counter()
    print(f"{now - start:.6f} {codes.count(0)} {codes.count(1)} {len(codes) - codes.count(0) - codes.count(1)}")
    start = now
"""


def main() -> int:
    """Run the rounds and print the medians; exit 1 when a config ends in neither 0 nor 1."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    configs = sorted(CONFIGS.glob("*.json")) + sorted((CONFIGS / "refused").glob("*.json"))
    specs = sorted((ROOT / "specs").rglob("*.yaml"))
    beside = Path(sys.executable).parent / "check-jsonschema"
    reference = shutil.which("check-jsonschema") or (str(beside) if beside.exists() else None)
    done = subprocess.run([sys.executable, "-c", _ROUNDS, str(args.rounds), *map(str, configs)], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    rounds = [line.split() for line in done.stdout.splitlines()]
    imported, refused, other = (int(value) for value in rounds[0][1:])
    import_times = [float(row[0]) for row in rounds]
    print(f"configs: {len(configs)} ({imported} imported, {refused} refused with exit 1, {other} other)")
    print(f"import, first round (library import and profile load included): {import_times[0]:.3f} s")
    if len(import_times) > 1:
        print(f"import, warm rounds, median of {len(import_times) - 1}: "
              f"{statistics.median(import_times[1:]):.3f} s")
    if reference is None:
        print("check-jsonschema is not on PATH: no ratio (pip install -e '.[bench]')")
        return 1 if other else 0
    reference_times, whole_times = [], []
    for _ in range(args.rounds):  # alternating: one import process, one check-jsonschema process
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _ROUNDS, "1", *map(str, configs)], cwd=ROOT, capture_output=True,
                       check=True)
        whole_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        subprocess.run([reference, "--schemafile", str(ROOT / "schemas" / "model-spec.schema.json"),
                        *map(str, specs[:len(configs)])], cwd=ROOT, capture_output=True, check=False)
        reference_times.append(time.perf_counter() - start)
    ours, theirs = statistics.median(whole_times), statistics.median(reference_times)
    print(f"one process importing the corpus (start-up included), median of {args.rounds}: {ours:.3f} s")
    print(f"check-jsonschema on {min(len(specs), len(configs))} spec files, median of {args.rounds}: {theirs:.3f} s")
    print(f"ratio modelspec import / check-jsonschema: {ours / theirs:.2f}")
    return 1 if other else 0


if __name__ == "__main__":
    sys.exit(main())
