"""Run the suite's property-based (Hypothesis) tests longer than CI does, on demand.

CI runs each property test with a fixed example budget (``tests/budget.py``),
together well under two minutes. This runs the same tests with every budget
multiplied (``MODELSPEC_FUZZ``), a fresh random seed each time, and prints
the seed, so a failure can be replayed with ``--hypothesis-seed``.

Usage: ``python bench/fuzz.py [--factor 50] [--seed N] [-- extra pytest arguments]``
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The test modules that hold property tests.
PROPERTY_TESTS = ("tests/test_properties.py", "tests/test_yaml_source.py", "tests/test_check.py",
                  "tests/test_importer.py", "tests/test_model.py")


def main() -> int:
    """Run pytest on the property tests with a larger budget; its exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factor", type=int, default=50, help="multiply every example budget by this")
    parser.add_argument("--seed", type=int, default=None, help="Hypothesis seed (default: a random one)")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2 ** 32)
    print(f"MODELSPEC_FUZZ={args.factor} --hypothesis-seed={seed}", flush=True)
    # The modules' other tests run too (once each, some seconds): a budget only scales the property tests.
    command = [sys.executable, "-m", "pytest", "-q", "-m", "not slow", f"--hypothesis-seed={seed}",
               *PROPERTY_TESTS, *args.pytest_args]
    return subprocess.call(command, cwd=ROOT, env={**os.environ, "MODELSPEC_FUZZ": str(args.factor)})


if __name__ == "__main__":
    raise SystemExit(main())
