"""Benchmark: what counting parameters adds to ``modelspec check``.

Every catalogue spec states its published parameter count, so ``check``
counts it from the op profiles' weight inventories and compares. This script
copies the catalogue N times (unique names, ``specs/copy-<i>/``), once as it
is and once with the ``parameters`` record removed (the count still runs, for
``list``'s rows; the difference is the record's own schema, parse and round
trip), and
checks both in one process (``check_paths``: every pass, as
``modelspec check -j1`` runs them) in alternating rounds, timing the
process's CPU time so that other work on the machine does not blur the
figure. It prints the median of each, their ratio (what stating the count
costs a check: the record's schema, parsing and round trip as well as the
count), and the CPU time spent in the count itself (``count_totals``, and the
breakdown a mismatch would print) as a share of the rest of the check
(target: under 5%).

Usage: ``.venv/bin/python bench/bench_parameters.py [--copies 60] [--rounds 5]``
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Tuple

ROOT = Path(__file__).resolve().parent.parent
PARAMETERS = re.compile(r"^parameters:\n(?:  .*\n)+", re.MULTILINE)


def catalogue_copies(dest: Path, copies: int, counted: bool) -> None:
    """*copies* copies of every catalogue spec under *dest*/specs, renamed apart; without ``parameters`` unless
    *counted*."""
    for index in range(copies):
        folder = dest / "specs" / f"copy-{index}"
        folder.mkdir(parents=True)
        for spec in sorted((ROOT / "specs").glob("*/*.yaml")):
            text = spec.read_text(encoding="utf-8")
            text = text.replace(f"name: {spec.stem}\n", f"name: {spec.stem}-c{index}\n", 1)
            if not counted:
                text = PARAMETERS.sub("", text)
            (folder / spec.name).write_text(text, encoding="utf-8")


def timed(root: Path) -> Tuple[float, float]:
    """``(CPU seconds of checking every spec under root with one job, of which in the count)``; every spec must
    pass."""
    from pipeline.check import discovery, runner  # pylint: disable=import-outside-toplevel
    from pipeline.pricing.op_profiles import load_op_profiles  # pylint: disable=import-outside-toplevel
    from pipeline.spec.problems import Severity  # pylint: disable=import-outside-toplevel

    profiles = load_op_profiles(ROOT / "op_profiles")
    files = [(path, str(path)) for path in discovery.find_spec_files([root / "specs"])]
    in_count = [0.0]
    count = runner._counted  # pylint: disable=protected-access

    def timed_count(*args: Any) -> Any:
        begun = time.process_time()
        try:
            return count(*args)
        finally:
            in_count[0] += time.process_time() - begun

    runner._counted = timed_count  # pylint: disable=protected-access
    try:
        start = time.process_time()
        checked = runner.check_paths(files, profiles)
        elapsed = time.process_time() - start
    finally:
        runner._counted = count  # pylint: disable=protected-access
    failed = [p for item in checked for p in item.result.problems if p.severity is Severity.ERROR]
    if failed:
        raise SystemExit(f"the copies do not pass check: {failed[0]}")
    return elapsed, in_count[0]


def main() -> None:
    """Build both catalogues, time them alternately, print medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=60, help="copies of the catalogue (default 60)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="modelspec-bench-params-"))
    try:
        with_counts, without = scratch / "counted", scratch / "uncounted"
        catalogue_copies(with_counts, args.copies, counted=True)
        catalogue_copies(without, args.copies, counted=False)
        files = len(list((with_counts / "specs").rglob("*.yaml")))
        counted, plain, shares = [], [], []
        for _ in range(args.rounds):
            elapsed, in_count = timed(with_counts)
            counted.append(elapsed)
            shares.append(in_count / (elapsed - in_count))
            plain.append(timed(without)[0])
        a, b = statistics.median(counted), statistics.median(plain)
        print(f"{files} specs, every pass, one job, CPU time, medians of {args.rounds} alternating rounds")
        print(f"  with parameters stated:           {a:.3f} s")
        print(f"  without the record:               {b:.3f} s  (stating the record costs {100 * (a / b - 1):+.1f}%)")
        print(f"  the count itself adds {100 * statistics.median(shares):.1f}% to the rest of the check "
              "(target: under 5%)")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
