"""Run the differential suite (tests/test_reference.py) with a fresh seed and more variants than CI does.

CI draws 40 variants a model type from a fixed seed; this draws ``--count``
of them from a seed it prints (or ``--seed``), so a failure can be replayed
with ``MODELSPEC_REFERENCE_SEED=<seed> MODELSPEC_REFERENCE_VARIANTS=<count>
pytest -m reference tests/test_reference.py``. Needs the reference extra.

Usage: ``python bench/reference_variants.py [--count 200] [--seed N] [-- extra pytest arguments]``
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    """Run the suite's variant tests with the seed and count given; pytest's exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="variants a model type (CI: 40)")
    parser.add_argument("--seed", type=int, default=None, help="the draw's seed (default: a random one)")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2 ** 32)
    print(f"MODELSPEC_REFERENCE_SEED={seed} MODELSPEC_REFERENCE_VARIANTS={args.count}", flush=True)
    command = [sys.executable, "-m", "pytest", "-q", "-m", "reference", "-p", "no:cacheprovider",
               "tests/test_reference.py", "-k", "variant or the_table", *args.pytest_args]
    env = {**os.environ, "MODELSPEC_REFERENCE_SEED": str(seed), "MODELSPEC_REFERENCE_VARIANTS": str(args.count)}
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
