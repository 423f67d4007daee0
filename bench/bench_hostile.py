"""Benchmark: what one hostile spec file costs (issue 12, class 5), against check-jsonschema on the same file.

Builds the red team's files (each under the 1 MiB cap): ``layer_types`` of
520,000 one-character entries, 100,000 unknown keys, and the largest of each
that passes the loader's value cap (:data:`pipeline.spec.yaml_source.MAX_VALUES`).
For each it times, in alternating rounds (modelspec, then check-jsonschema,
then modelspec...), a fresh process of

- ``modelspec check --no-cache FILE --format text`` and ``--format sarif``,
- ``check-jsonschema --schemafile schemas/model-spec.schema.json FILE``
  (its C YAML parser, when installed), and
- ``modelspec --help`` (start-up, subtracted to give the per-file cost),

and prints the median wall time, the report's size in bytes, and the ratio
modelspec / check-jsonschema.

Usage: ``python bench/bench_hostile.py [--rounds 5]``
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "model-spec.schema.json"
sys.path.insert(0, str(ROOT))

from pipeline.spec.yaml_source import MAX_VALUES  # noqa: E402  (the bench runs from a checkout)

BASE = ("name: {name}\nhidden_size: 64\nnum_hidden_layers: {layers}\nnum_attention_heads: 4\nvocab_size: 100\n"
        "intermediate_size: 128\narch: qwen3_next\n")


def files(folder: Path) -> dict:
    """The hostile files, by label."""
    out = {
        "layer_types 520k": BASE.format(name="lt", layers=2) + "layer_types: [" + ",".join(["a"] * 520_000) + "]\n",
        "unknown keys 100k": BASE.format(name="uk", layers=2) + "".join(f"k{i}: 1\n" for i in range(100_000)),
        f"layer_types at the cap ({MAX_VALUES - 20})": BASE.format(name="lt2", layers=MAX_VALUES - 20)
        + "layer_types: [" + ",".join(["linear_attention"] * (MAX_VALUES - 20)) + "]\n",
        f"unknown keys at the cap ({MAX_VALUES // 2 - 20})": BASE.format(name="uk2", layers=2)
        + "".join(f"k{i}: 1\n" for i in range(MAX_VALUES // 2 - 20)),
    }
    paths = {}
    for index, (label, text) in enumerate(out.items()):
        path = folder / f"f{index}.yaml"
        path.write_text(text, encoding="utf-8")
        paths[label] = path
    return paths


def timed(argv: list) -> tuple:
    """Wall time of one run of *argv*, and the bytes it printed."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False)
    return time.perf_counter() - start, len(done.stdout)


def main() -> None:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    modelspec = [sys.executable, "-c", "from pipeline.cli import main; main()"]
    jsonschema = shutil.which("check-jsonschema")
    with tempfile.TemporaryDirectory() as scratch:
        paths = files(Path(scratch))
        start_up = statistics.median(timed([*modelspec, "--help"])[0] for _ in range(args.rounds))
        print(f"modelspec start-up (--help): {start_up:.3f} s")
        print("| file | size | modelspec text | per file | sarif | sarif bytes | check-jsonschema | ratio |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for label, path in paths.items():
            text, sarif, other = [], [], []
            text_bytes = sarif_bytes = 0
            for _ in range(args.rounds):  # alternating rounds
                seconds, text_bytes = timed([*modelspec, "check", "--no-cache", "--root", str(ROOT), str(path)])
                text.append(seconds)
                if jsonschema:
                    other.append(timed([jsonschema, "--schemafile", str(SCHEMA), str(path)])[0])
                seconds, sarif_bytes = timed([*modelspec, "check", "--no-cache", "--root", str(ROOT), str(path),
                                              "--format", "sarif"])
                sarif.append(seconds)
            ours = statistics.median(text)
            theirs = statistics.median(other) if other else None
            print(f"| {label} | {path.stat().st_size} | {ours:.3f} s ({text_bytes} B) | {ours - start_up:.3f} s "
                  f"| {statistics.median(sarif):.3f} s | {sarif_bytes} | "
                  f"{f'{theirs:.3f} s' if theirs else 'not installed'} | "
                  f"{f'{ours / theirs:.2f}' if theirs else '-'} |")


if __name__ == "__main__":
    main()
