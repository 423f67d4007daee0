"""Benchmark: ``modelspec site`` for the whole catalogue, against the target of 2 s.

Times, as medians of alternating rounds (so a slow spell of the shared
machine falls on both alike):

- ``modelspec site --out DIR`` in a fresh process, into a new folder each
  round (every file written), the interpreter's start-up included: what a
  maintainer waits for;
- the same into the folder of the previous round (nothing changed, nothing
  rewritten);
- the reference, ``check-jsonschema --schemafile schemas/model-spec.schema.json``
  on the same spec files, when it is installed (``pip install -e '.[bench]'``),
  and the ratio.

Then, in this process, the phases of one build: resolving the catalogue
(:func:`pipeline.catalogue.diff.load_catalogue`), rendering the pages
(:func:`pipeline.catalogue.site.build_site`) and writing them (:func:`pipeline.catalogue.site.write_site`).
Run: ``.venv/bin/python bench/bench_site.py [rounds]`` from the checkout.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List

ROOT = Path(__file__).resolve().parents[1]
TARGET_S = 2.0


def timed(action: Callable[[], object]) -> float:
    """Seconds *action* takes, wall clock."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main(rounds: int) -> None:
    """Time the command and its phases over *rounds* rounds; print medians and ratios."""
    modelspec = Path(sys.executable).with_name("modelspec")
    cjs = shutil.which("check-jsonschema") or (str(Path(sys.executable).with_name("check-jsonschema"))
                                               if Path(sys.executable).with_name("check-jsonschema").exists()
                                               else None)
    specs = sorted(str(path) for path in (ROOT / "specs").rglob("*.yaml"))
    times: Dict[str, List[float]] = {"site, new folder": [], "site, unchanged folder": [], "check-jsonschema": []}
    with tempfile.TemporaryDirectory(prefix="modelspec-bench-site-") as scratch:
        kept = Path(scratch) / "kept"
        subprocess.run([str(modelspec), "site", "--root", str(ROOT), "--out", str(kept)], check=True,
                       capture_output=True)
        for index in range(rounds):
            out = Path(scratch) / f"round-{index}"
            times["site, new folder"].append(timed(lambda: subprocess.run(
                [str(modelspec), "site", "--root", str(ROOT), "--out", str(out)], check=True, capture_output=True)))
            times["site, unchanged folder"].append(timed(lambda: subprocess.run(
                [str(modelspec), "site", "--root", str(ROOT), "--out", str(kept)], check=True,
                capture_output=True)))
            if cjs:
                times["check-jsonschema"].append(timed(lambda: subprocess.run(
                    [cjs, "--schemafile", str(ROOT / "schemas" / "model-spec.schema.json"), *specs],
                    check=False, capture_output=True)))
        phases = _phases(Path(scratch) / "in-process")
    reference = statistics.median(times["check-jsonschema"]) if times["check-jsonschema"] else None
    print(f"modelspec site, {len(specs)} specs, medians of {rounds} alternating rounds (target < {TARGET_S:.0f} s)")
    for name, values in times.items():
        if not values:
            print(f"  {name:28} not installed (pip install -e '.[bench]')")
            continue
        median = statistics.median(values)
        ratio = f"  {median / reference:.2f}x check-jsonschema" if reference and name != "check-jsonschema" else ""
        verdict = "" if name == "check-jsonschema" else ("  ok" if median < TARGET_S else "  OVER TARGET")
        print(f"  {name:28} {median:6.3f} s{ratio}{verdict}")
    print("one build in this process:")
    for name, seconds in phases.items():
        print(f"  {name:28} {seconds:6.3f} s")


def _phases(out: Path) -> Dict[str, float]:
    """The seconds of each phase of one in-process build into *out*."""
    # pylint: disable=import-outside-toplevel
    from pipeline.catalogue.diff import load_catalogue
    from pipeline.check.repo import SpecRepo
    from pipeline.catalogue.site import build_site, write_site

    start = time.perf_counter()
    catalogue = load_catalogue(SpecRepo(ROOT), "working tree")
    resolved = time.perf_counter()
    texts = {doc["path"]: (ROOT / doc["path"]).read_text(encoding="utf-8") for doc in catalogue.models.values()}
    files = build_site(catalogue, texts)
    rendered = time.perf_counter()
    write_site(out, files)
    written = time.perf_counter()
    return {"resolve the catalogue": resolved - start, "render the pages": rendered - resolved,
            "write the files": written - rendered}


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
