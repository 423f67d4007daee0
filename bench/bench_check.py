"""Benchmark: the gate at catalogue scale, every row of issue 11's table in one run.

For each size (default 1,000, 10,000 and 30,000 files) it builds a git
repository of copies of the real catalogue (``specs/``, each copy's ``name``
made unique) and one of generated specs (dense, MoE with MTP, hybrid with a
vision tower), then times, in alternating rounds (A B C, A B C, ...), the
median wall time of the rows below. Those that take under a second (the warm
check, ``--help``, ``show`` and ``list`` again, one file edited) are sampled
``--repeats`` times a round, alternating too (help show list, help show list,
...): one sample of a 0.1 s command is mostly the machine's noise.

- the references: ``check-jsonschema --schemafile schemas/model-spec.schema.json FILES``
  (with its C YAML parser, ``ruamel.yaml.clib``, installed: the ``bench`` extra
  installs it) and ``yamllint`` on the same files;
- ``modelspec check``, cold (no result cache) with the default jobs and with
  ``-j1``, and warm (the same unchanged tree again);
- ``check specs/<one>.yaml`` and ``check --changed-since HEAD`` with that one
  spec edited, against ``check`` of the same file in a repository holding only
  it, and ``git diff --name-status``: as a check leaves the catalogue (the other
  specs' names answered from the snapshot it recorded, :mod:`pipeline.cache.names`),
  and ``check specs/<one>.yaml`` once more with no snapshot (a full walk);
- ``show NAME`` against ``modelspec --help``, ``list`` against the cold check, each three ways: the first
  run after the checks (it walks every spec and records a catalogue snapshot), the next run with nothing
  changed (answered from the snapshot), and a run just after that spec was edited;
- ``regen`` (cold: no ``resolved/``, no cache), ``regen --check`` of the tree it
  wrote, ``regen`` again with nothing to do, ``diff HEAD``
  with one spec edited (sizes up to ``--regen-max``, ``--regen-rounds`` rounds: they are slow);
- peak RSS (the child's ``ru_maxrss``, started from a small launcher: see :data:`LAUNCHER`) of ``check -j1`` and
  of check-jsonschema;
- per file: ``check -j1`` against reading and parsing the file with libyaml alone.

A benchmark prints figures; no test times anything. Both tools run with
their bytecode written (``PYTHONDONTWRITEBYTECODE`` is dropped), as an
installed package has it.

Usage: ``python bench/bench_check.py [--sizes 1000 10000 30000] [--rounds 3] [--repeats 5] [--regen-max 10000]
[--regen-rounds 1] [--generated-sizes 1000 10000] [--regen-only]`` (``--regen-only``: only the regen and
diff rows, ``--regen-rounds`` rounds of them).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "model-spec.schema.json"
ENV = {key: value for key, value in os.environ.items()
       if key not in ("PYTHONDONTWRITEBYTECODE", "MODELSPEC_CACHE_DIR")}
GIT_ENV = {**ENV, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@invalid", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@invalid", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

GENERATED = ("""\
name: dense-{i}
arch: llama
hidden_size: {hidden}
num_hidden_layers: {layers}
num_attention_heads: 32
vocab_size: 128256
num_key_value_heads: 8
intermediate_size: {ffn}
max_position_embeddings: 131072
tie_word_embeddings: false
qkv_bias: false
mlp_bias: false
torch_dtype: bfloat16
""", """\
name: moe-{i}
arch: deepseek_v3
hidden_size: 7168
num_hidden_layers: {layers}
num_attention_heads: 128
vocab_size: 129280
num_key_value_heads: 128
intermediate_size: 18432
max_position_embeddings: 163840
num_experts: 256
num_experts_per_tok: 8
num_shared_experts: 1
moe_intermediate_size: {ffn}
mtp_depth: 1
kv_lora_rank: 512
q_lora_rank: 1536
qk_rope_head_dim: 64
qk_nope_head_dim: 128
v_head_dim: 128
tie_word_embeddings: false
qkv_bias: false
torch_dtype: bfloat16
""", """\
name: vl-{i}
arch: qwen2_5_vl
hidden_size: 3584
num_hidden_layers: {layers}
num_attention_heads: 28
vocab_size: 152064
num_key_value_heads: 4
intermediate_size: 18944
max_position_embeddings: 128000
tie_word_embeddings: false
qkv_bias: true
torch_dtype: bfloat16
vision:
  hidden_size: 1280
  num_hidden_layers: 32
  num_attention_heads: 16
  intermediate_size: 3420
  out_hidden_size: 3584
  patch_size: 14
  spatial_merge_size: 2
""")


def tool(name: str) -> str:
    """*name*'s script beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else (shutil.which(name) or name)


def git(repo: Path, *args: str) -> str:
    """Run git in *repo*; its stdout."""
    return subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True, text=True).stdout


def real_copies(dest: Path, count: int) -> None:
    """*count* copies of the catalogue's specs under *dest*/specs, each copy's name suffixed ``-cNNNNN``."""
    sources = sorted((ROOT / "specs").rglob("*.yaml"))
    for index in range(count):
        source = sources[index % len(sources)]
        copy = index // len(sources)
        text = re.sub(r"^name: (.*)$", lambda m: f"name: {m.group(1)}-c{copy:05d}", source.read_text(), count=1,
                      flags=re.M)
        folder = dest / "specs" / source.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{source.stem}-c{copy:05d}.yaml").write_text(text)


def generated(dest: Path, count: int) -> None:
    """*count* generated specs (three shapes) under *dest*/specs/gen."""
    folder = dest / "specs" / "gen"
    folder.mkdir(parents=True)
    for i in range(count):
        text = GENERATED[i % 3].format(i=i, hidden=4096 + 64 * (i % 7), layers=32 + i % 30, ffn=512 + 64 * (i % 9))
        (folder / f"spec-{i:05d}.yaml").write_text(text)


def make_repo(dest: Path, fill: Callable[[Path, int], None], count: int) -> Path:
    """A git repository at *dest* filled by *fill*, committed."""
    dest.mkdir(parents=True)
    fill(dest, count)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "catalogue")
    return dest


#: Runs a command and writes its wall time and peak RSS to a file. A child started from a big process reports
#: that process's peak as its own (Linux carries the old image's high-water mark across exec, and subprocess
#: spawns with vfork), so every command is started from this small launcher instead of from the bench.
LAUNCHER = """\
import os, subprocess, sys, time
report, command = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
child = subprocess.Popen(command)
_, status, usage = os.wait4(child.pid, 0)
elapsed = time.perf_counter() - started
with open(report, "w") as handle:
    handle.write(f"{elapsed!r} {usage.ru_maxrss}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run(command: Sequence[str], cwd: Path, ok: Sequence[int] = (0,)) -> Tuple[float, int]:
    """Run *command* (through :data:`LAUNCHER`); (wall seconds, peak RSS in KiB). Fails loudly on an exit code
    not in *ok*."""
    with tempfile.NamedTemporaryFile("r", suffix=".run") as report:
        process = subprocess.run([sys.executable, "-c", LAUNCHER, report.name, *command], cwd=cwd, env=ENV,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        if process.returncode not in ok:
            stderr = process.stderr.decode(errors="replace")
            raise SystemExit(f"{' '.join(command[:4])} ... exited {process.returncode}:\n{stderr[-2000:]}")
        elapsed, rss = report.read().split()
    return float(elapsed), int(rss)


class Rounds:
    """Named measurements taken in alternating rounds; the median of each."""

    def __init__(self) -> None:
        self.times: Dict[str, List[float]] = {}
        self.rss: Dict[str, int] = {}

    def add(self, name: str, measured: Tuple[float, int]) -> None:
        self.times.setdefault(name, []).append(measured[0])
        self.rss[name] = max(self.rss.get(name, 0), measured[1])

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])


def edit(path: Path, round_index: int) -> None:
    """Change *path*'s bytes (a comment line), as an edit would, different each round."""
    text = path.read_text()
    text = re.sub(r"\n# bench edit \d+\n", "\n", text)
    path.write_text(text + f"# bench edit {round_index}\n")


def parse_alone_us(files: Sequence[Path]) -> float:
    """Microseconds per file to read it and build its data with libyaml (PyYAML's CSafeLoader), nothing else."""
    import yaml  # pylint: disable=import-outside-toplevel

    started = time.perf_counter()
    for path in files:
        yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
    return (time.perf_counter() - started) / len(files) * 1e6


def bench_size(scratch: Path, size: int, rounds: int, repeats: int, regen_max: int, regen_rounds: int,
               yamllint_max: int, kind: str, regen_only: bool = False) -> None:
    """Measure every row for one corpus of *size* files and print them (only the regen and diff rows when
    *regen_only*); the rows that take under a second are sampled *repeats* times a round."""
    modelspec, cjs, yamllint = tool("modelspec"), tool("check-jsonschema"), tool("yamllint")
    fill = real_copies if kind == "real" else generated
    repo = make_repo(scratch / f"{kind}-{size}", fill, size)
    files = sorted(str(path.relative_to(repo)) for path in (repo / "specs").rglob("*.yaml"))
    cache = repo / ".modelspec_cache"
    results = Rounds()
    one_file = files[len(files) // 2]
    alone = scratch / f"alone-{kind}-{size}"
    (alone / Path(one_file).parent).mkdir(parents=True)
    shutil.copyfile(repo / one_file, alone / one_file)
    (alone / ".git").mkdir()
    name = re.search(r"^name: (.*)$", (repo / one_file).read_text(), re.M).group(1)
    full = kind == "real"
    for index in range(regen_rounds if regen_only else rounds):
        if regen_only:
            if full and size <= regen_max and index < regen_rounds:
                bench_regen(repo, one_file, index, results)
            continue
        results.add("check-jsonschema", run([cjs, "--schemafile", str(SCHEMA), *files], repo))
        if index == 0 and size <= yamllint_max:  # a second reference, slow: one round
            results.add("yamllint", run([yamllint, "-f", "parsable", "specs"], repo, ok=(0, 1, 2)))
        shutil.rmtree(cache, ignore_errors=True)
        results.add("cold default", run([modelspec, "check", "-q"], repo))
        shutil.rmtree(cache, ignore_errors=True)
        results.add("cold -j1", run([modelspec, "check", "-q", "-j1"], repo))
        for _ in range(repeats):
            results.add("warm", run([modelspec, "check", "-q"], repo))
        if not full:
            continue
        # show and list as a check leaves the catalogue: the first run of each walks every spec and records a
        # snapshot (pipeline/cache/snapshot.py), the next ones are answered from it
        results.add("show NAME, first", run([modelspec, "show", name], repo))
        results.add("list, first", run([modelspec, "list"], repo))
        for _ in range(repeats):
            results.add("--help", run([modelspec, "--help"], repo))
            results.add("show NAME", run([modelspec, "show", name], repo))
            results.add("list", run([modelspec, "list"], repo))
        for repeat in range(repeats):  # each time the spec edited anew, as a commit's pre-commit run finds it
            tag = index * repeats + repeat
            edit(repo / one_file, tag)
            results.add("check ONE_FILE", run([modelspec, "check", "-q", one_file], repo))
            edit(repo / one_file, tag + 10000)
            results.add("--changed-since HEAD", run([modelspec, "check", "-q", "--changed-since", "HEAD"], repo))
            results.add("git diff --name-status", run(["git", "diff", "--name-status", "HEAD"], repo))
            edit(alone / one_file, tag)
            results.add("one file alone", run([modelspec, "check", "-q", one_file], alone))
        for recorded in cache.glob("snapshot-*"):  # the other specs' names by a full walk, as after a cache's loss
            recorded.unlink()
        edit(repo / one_file, index + 30000)
        results.add("check ONE_FILE, no snapshot", run([modelspec, "check", "-q", one_file], repo))
        results.add("show NAME, edited", run([modelspec, "show", name], repo))
        results.add("list, one spec edited", run([modelspec, "list"], repo))
        if size <= regen_max and index < regen_rounds:
            bench_regen(repo, one_file, index, results)
        git(repo, "checkout", "-q", "--", one_file)
    print(f"\n## {kind} catalogue, {size} files ({rounds} rounds, the rows under a second {repeats} times a round; "
          "medians)\n")
    print("| work | modelspec | reference | ratio | target |")
    print("| --- | --- | --- | --- | --- |")

    def row(work: str, mine: str, reference: str, ratio: Optional[float], target: str) -> None:
        shown = "" if ratio is None else f"{ratio:.3f}"
        print(f"| {work} | {mine} | {reference} | {shown} | {target} |")

    if regen_only:
        if "regen cold" in results.times:
            regen_rows(results, row)
        sys.stdout.flush()
        return
    cjs_time = results.median("check-jsonschema")

    shown_yamllint = f", yamllint {results.median('yamllint'):.2f} s" if "yamllint" in results.times else ""
    row("cold check, default jobs", f"{results.median('cold default'):.2f} s",
        f"check-jsonschema {cjs_time:.2f} s{shown_yamllint}",
        results.median("cold default") / cjs_time, "<= 0.35 at 10k")
    row("cold check, -j1", f"{results.median('cold -j1'):.2f} s", f"check-jsonschema {cjs_time:.2f} s",
        results.median("cold -j1") / cjs_time, "<= 0.6 at 10k")
    row("second check, unchanged", f"{results.median('warm'):.3f} s", f"check-jsonschema {cjs_time:.2f} s",
        results.median("warm") / cjs_time, "<= 0.03 at 10k")
    per_file = results.median("cold -j1") / size * 1e6
    alone_us = parse_alone_us([repo / file for file in files[:2000]])
    row("per file, -j1", f"{per_file:.0f} us", f"read + libyaml parse alone {alone_us:.0f} us", None, "")
    row("peak RSS, check -j1", f"{results.rss['cold -j1'] / 1024:.0f} MB",
        f"check-jsonschema {results.rss['check-jsonschema'] / 1024:.0f} MB", None, "<= 100 MB at 30k")
    if full:
        single = results.median("one file alone")
        row("check ONE_FILE (edited), cached catalogue", f"{results.median('check ONE_FILE'):.3f} s",
            f"the file alone in a 1-spec repo {single:.3f} s", results.median("check ONE_FILE") / single,
            "<= 1.5 at 10k")
        row("check ONE_FILE (edited), no snapshot", f"{results.median('check ONE_FILE, no snapshot'):.3f} s",
            f"the file alone in a 1-spec repo {single:.3f} s", results.median("check ONE_FILE, no snapshot") / single,
            "")
        row("check --changed-since HEAD, 1 spec edited", f"{results.median('--changed-since HEAD'):.3f} s",
            f"1-spec repo {single:.3f} s; git diff --name-status {results.median('git diff --name-status'):.3f} s",
            results.median("--changed-since HEAD") / single, "<= 1.5 at 10k")
        help_time, cold = results.median("--help"), results.median("cold default")
        for work, label, target in (("show NAME", "show NAME, again (unchanged)", "<= 2 at 10k"),
                                    ("show NAME, first", "show NAME, first after a check", ""),
                                    ("show NAME, edited", "show NAME, its spec just edited", "")):
            row(label, f"{results.median(work):.3f} s", f"modelspec --help {help_time:.3f} s",
                results.median(work) / help_time, target)
        for work, label, target in (("list", "list, again (unchanged)", "<= 0.05 at 10k"),
                                    ("list, first", "list, first after a check", ""),
                                    ("list, one spec edited", "list, one spec just edited", "")):
            row(label, f"{results.median(work):.3f} s", f"cold check {cold:.2f} s", results.median(work) / cold,
                target)
        if size <= regen_max:
            regen_rows(results, row)
    sys.stdout.flush()


def bench_regen(repo: Path, one_file: str, index: int, results: "Rounds") -> None:
    """One round of the regen rows: ``regen`` with no ``resolved/`` and no cache, ``regen --check`` of the tree
    it wrote (right after it, as CI runs them), ``regen`` again (nothing to do), ``diff HEAD`` with one spec
    edited."""
    modelspec = tool("modelspec")
    shutil.rmtree(repo / "resolved", ignore_errors=True)
    shutil.rmtree(repo / ".modelspec_cache", ignore_errors=True)
    git(repo, "checkout", "-q", "--", one_file)
    results.add("regen cold", run([modelspec, "regen"], repo))
    results.add("regen --check", run([modelspec, "regen", "--check"], repo))
    results.add("regen, nothing to do", run([modelspec, "regen"], repo))
    edit(repo / one_file, index + 200)
    results.add("diff HEAD", run([modelspec, "diff", "HEAD"], repo))
    git(repo, "checkout", "-q", "--", one_file)


def regen_rows(results: "Rounds", row: Callable[..., None]) -> None:
    """Print the regen and diff rows."""
    cold = results.median("regen cold")
    row("regen --check, regenerated tree", f"{results.median('regen --check'):.2f} s", f"cold regen {cold:.2f} s",
        results.median("regen --check") / cold, "<= 0.05 at 10k")
    row("regen, nothing to do", f"{results.median('regen, nothing to do'):.2f} s", f"cold regen {cold:.2f} s",
        results.median("regen, nothing to do") / cold, "")
    row("diff HEAD, 1 spec edited", f"{results.median('diff HEAD'):.2f} s", "", None, "")


def main() -> None:
    """Run the benchmark and print one table per corpus."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 30000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5,
                        help="samples a round of each row that takes under a second (warm, show, list, one file)")
    parser.add_argument("--regen-max", type=int, default=10000, help="largest size the regen and diff rows run at")
    parser.add_argument("--regen-rounds", type=int, default=1, help="rounds of the regen and diff rows (slow)")
    parser.add_argument("--large-rounds", type=int, default=None, help="rounds at sizes over 10,000 (default: --rounds)")
    parser.add_argument("--yamllint-max", type=int, default=30000, help="largest size yamllint runs at (slow)")
    parser.add_argument("--generated-sizes", type=int, nargs="*", default=[1000, 10000],
                        help="the sizes the generated corpus runs at")
    parser.add_argument("--regen-only", action="store_true",
                        help="run only the regen and diff rows (--regen-rounds rounds), on the real catalogue")
    args = parser.parse_args()
    import ruamel.yaml  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import

    try:
        import _ruamel_yaml  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
        parser_note = "ruamel.yaml.clib installed: check-jsonschema parses with its C parser"
    except ImportError:
        parser_note = "ruamel.yaml.clib NOT installed: check-jsonschema parses in pure Python"
    cores = len(os.sched_getaffinity(0))
    print(f"# modelspec at catalogue scale\n\n{cores} usable cores, load average {os.getloadavg()[0]:.2f} at start; "
          f"{parser_note}; Python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="modelspec-bench-") as scratch:
        run([tool("modelspec"), "--help"], Path(scratch))  # write the bytecode once
        for size in args.sizes:
            for kind in ["real"] + (["generated"] if size in args.generated_sizes else []):
                rounds = args.rounds if size <= 10000 or args.large_rounds is None else args.large_rounds
                bench_size(Path(scratch), size, rounds, args.repeats, args.regen_max, args.regen_rounds,
                           args.yamllint_max, kind, args.regen_only)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
