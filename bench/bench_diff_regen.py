"""Benchmark: ``diff`` and ``regen`` at the cost of the change (issue 28, item 1), as ratios to ``check``.

Builds a git repository of ``--size`` copies of the real catalogue (default 10,000, as
:func:`bench_check.real_copies` makes them) in a temporary folder, then times in alternating rounds (the order of
the two commands of each pair swapped every round) the medians of:

- ``diff HEAD`` with one spec edited, against ``check --changed-since HEAD`` of the same change (target <= 2);
- ``regen`` from empty (no ``resolved/``, no result cache), against a cold ``check -j1`` (target <= 1.5); and at
  like jobs, ``regen -j1`` against ``check -j1`` and ``regen`` against ``check`` (both with the default jobs: the
  cores other work leaves idle);
- ``regen`` with one spec changed (after a regen of the whole tree), against ``check`` of that spec (target <= 2).

The machine is shared: the load average (``uptime``) is printed beside each figure; the ratios are what count.
No test times anything.

Usage: ``python bench/bench_diff_regen.py [--size 10000] [--rounds 3] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check import edit, git, make_repo, real_copies, run, tool  # noqa: E402  pylint: disable=wrong-import-position


def load() -> str:
    """The 1-minute load average, as ``uptime`` tells it."""
    return f"{os.getloadavg()[0]:.2f}"


class Samples:
    """Wall times by row, and the load average at each sample."""

    def __init__(self) -> None:
        self.times: Dict[str, List[float]] = {}
        self.loads: Dict[str, List[float]] = {}

    def add(self, row: str, seconds: float) -> None:
        self.times.setdefault(row, []).append(seconds)
        self.loads.setdefault(row, []).append(os.getloadavg()[0])

    def median(self, row: str) -> float:
        return statistics.median(self.times[row])

    def told(self, row: str) -> str:
        return f"{self.median(row):.3f} s (load {statistics.median(self.loads[row]):.2f})"


def cold_pair(repo: Path, modelspec: str, samples: Samples, swap: bool) -> None:
    """A cold ``check -j1`` and a ``regen`` from empty (the issue's pair), then the same at like jobs: ``regen -j1``
    and a cold ``check`` with the default jobs (the cores other work leaves idle, as ``regen``'s default); each
    pair in the order *swap* says."""
    def check(row: str, *jobs: str) -> None:
        shutil.rmtree(repo / ".modelspec_cache", ignore_errors=True)
        samples.add(row, run([modelspec, "check", "-q", *jobs], repo)[0])

    def regen(row: str, *jobs: str) -> None:
        shutil.rmtree(repo / ".modelspec_cache", ignore_errors=True)
        shutil.rmtree(repo / "resolved", ignore_errors=True)
        samples.add(row, run([modelspec, "regen", *jobs], repo)[0])

    for pair in (((check, "check -j1, cold", "-j1"), (regen, "regen, from empty")),
                 ((check, "check, cold"), (regen, "regen -j1, from empty", "-j1"))):
        for step, row, *jobs in (pair[::-1] if swap else pair):
            step(row, *jobs)


def edited_rounds(repo: Path, modelspec: str, one_file: str, samples: Samples, tag: int, swap: bool) -> None:
    """One spec edited: ``check --changed-since HEAD`` and ``diff HEAD`` of it; edited again, ``check`` of it and
    ``regen``; each pair in the order *swap* says (``resolved/`` and the cache as a whole regen left them)."""
    edit(repo / one_file, tag)
    pair = [("check --changed-since HEAD", [modelspec, "check", "-q", "--changed-since", "HEAD"]),
            ("diff HEAD", [modelspec, "diff", "HEAD"])]
    for row, command in (pair[::-1] if swap else pair):
        samples.add(row, run(command, repo)[0])
    edit(repo / one_file, tag + 50000)
    check = ("check ONE_FILE", [modelspec, "check", "-q", one_file])
    regen = ("regen, one spec changed", [modelspec, "regen"])
    if swap:
        samples.add(regen[0], run(regen[1], repo)[0])
        edit(repo / one_file, tag + 60000)
        samples.add(check[0], run(check[1], repo)[0])
    else:
        samples.add(check[0], run(check[1], repo)[0])
        samples.add(regen[0], run(regen[1], repo)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3, help="edited rounds per round")
    args = parser.parse_args()
    modelspec = tool("modelspec")
    samples = Samples()
    with tempfile.TemporaryDirectory(prefix="bench-diff-regen-") as scratch:
        repo = make_repo(Path(scratch) / "repo", real_copies, args.size)
        (repo / ".gitignore").write_text(".modelspec_cache/\n")
        git(repo, "add", ".gitignore")
        git(repo, "commit", "-q", "-m", "ignore the cache")
        files = sorted(str(path.relative_to(repo)) for path in (repo / "specs").rglob("*.yaml"))
        one_file = files[len(files) // 2]
        for index in range(args.rounds):
            print(f"round {index + 1}, load {load()}", file=sys.stderr, flush=True)
            cold_pair(repo, modelspec, samples, swap=index % 2 == 1)
            run([modelspec, "regen"], repo)  # the whole tree in step, its cache kept
            for repeat in range(args.repeats):
                edited_rounds(repo, modelspec, one_file, samples, index * args.repeats + repeat,
                              swap=(index + repeat) % 2 == 1)
            git(repo, "checkout", "-q", "--", one_file)
    print(f"\n## diff and regen at the cost of the change: {args.size} specs, {args.rounds} rounds "
          f"(x{args.repeats} for the edited rows), medians; load now {load()}\n")
    print("| work | modelspec | against | ratio | target |")
    print("| --- | --- | --- | --- | --- |")
    for row, against, target in (("diff HEAD", "check --changed-since HEAD", "<= 2"),
                                 ("regen, from empty", "check -j1, cold", "<= 1.5"),
                                 ("regen -j1, from empty", "check -j1, cold", "(like jobs)"),
                                 ("regen, from empty", "check, cold", "(like jobs)"),
                                 ("regen, one spec changed", "check ONE_FILE", "<= 2")):
        ratio = samples.median(row) / samples.median(against)
        print(f"| {row} | {samples.told(row)} | {against} {samples.told(against)} | {ratio:.2f} | {target} |")


if __name__ == "__main__":
    main()
