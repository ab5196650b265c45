#!/usr/bin/env python
"""Collection benchmark: a ``max_samples`` subset of a million-row benchmark, run by hand.

Not part of the test suite (pytest only collects ``test_*.py``). From the repository root::

    .venv/bin/python tests/perf/bench_collect.py                       # 1,000,000 rows, max_samples = 500
    .venv/bin/python tests/perf/bench_collect.py --rows 100000 --repeat 1 --full-rows 0
    .venv/bin/python tests/perf/bench_collect.py --profile

It writes a JSONL of ``--rows`` rows in the format of ``facebook/natural_reasoning``
(``question``, ``reference_answer``, ``responses``: a list of one
``{"response_model", "response"}``; 9% of the references null and 9% empty, so about
18% of the rows are skipped, as in the hub copy) for the built-in ``natural-reasoning``
benchmark, and a suite with ``max_samples = --max-samples``. Then it measures
``pytest --jeval-config suite.toml --collect-only -q`` in a fresh Python process: wall
time, CPU time and peak RSS (``os.wait4``), once with a cold ``datasets`` cache (a new
``HF_DATASETS_CACHE`` directory: the JSON is converted to Arrow first) and once warm
(the same directory again), ``--repeat`` times, and prints each run and the medians
with min-max. ``--full-rows N`` adds the same for collecting all of an N-row file
(no ``max_samples``) for comparison; ``--profile`` a cProfile breakdown of one cold and
one warm subset collection.

``main(argv)`` can be called from another script (``bench_throughput.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench_throughput import Measured, run_measured, spread  # tests/perf, the directory of this script

PY = sys.executable

#: Words the synthetic questions and responses are made of.
WORDS = ("the of a function prove let value energy matrix integral show that if then given find derive system "
         "rate probability particle field temperature series converge limit mass velocity").split()


# --------------------------------------------------------------------------- data

def write_rows(path: Path, n: int, response_chars: int = 300, seed: int = 0) -> None:
    """A natural_reasoning-format JSONL of ``n`` rows (deterministic for ``seed``)."""
    rng = random.Random(seed)

    def text(words: int) -> str:
        return json.dumps(" ".join(rng.choices(WORDS, k=words)))[1:-1]

    questions = [text(rng.randint(20, 60)) + "?" for _ in range(4096)]
    responses = [text(max(1, response_chars // 7)) for _ in range(4096)]
    bits, draw = rng.getrandbits, rng.random
    with path.open("w", encoding="utf-8", buffering=1 << 20) as fh:
        for i in range(n):
            r = draw()
            reference = "null" if r < 0.09 else '""' if r < 0.18 else f'"{bits(20)}"'
            fh.write(f'{{"question": "[q{i:07d}] {questions[bits(12)]}", "reference_answer": {reference}, '
                     f'"responses": [{{"response_model": "Llama-3.3-70B-Instruct", '
                     f'"response": "{responses[bits(12)]}"}}]}}\n')


def write_suite(directory: Path, data: Path, max_samples: int | None, name: str) -> Path:
    """A suite of the natural-reasoning benchmark over ``data`` (an unreachable endpoint: collection only)."""
    limit = f"max_samples = {max_samples}\n" if max_samples is not None else ""
    suite = directory / name
    suite.write_text(
        f"""[meta]
name = "collect"

[run]
output_dir = "out"
cache = false
seed = 42

[[models]]
name = "test-model"
base_url = "http://127.0.0.1:9/v1"
api_key = "bench"

[judge]
model = "judge-model"
base_url = "http://127.0.0.1:9/v1"
api_key = "bench"

[[benchmarks]]
name = "natural-reasoning"
data_files = "{data.name}"
{limit}"""
    )
    return suite


# --------------------------------------------------------------------------- processes

def pytest_cmd(suite: Path) -> list[str]:
    """The collection command measured."""
    return [PY, "-m", "pytest", "--jeval-config", str(suite), "--collect-only", "-q", "-p", "no:randomly",
            "-p", "no:cacheprovider"]


def collected(m: Measured) -> str:
    """``N tests collected`` from the output, else the exit status."""
    found = re.search(r"(\d+) tests? collected", m.output)
    return found.group(0) if found else f"rc={m.returncode}"


def measure(label: str, suite: Path, work: Path, env: dict[str, str], repeat: int) -> None:
    """``repeat`` pairs of a cold and a warm ``datasets`` cache run; each run, then the medians."""
    cmd = pytest_cmd(suite)
    runs: dict[str, list[Measured]] = {"cold": [], "warm": []}
    for r in range(repeat):
        cache = work / "hf-cache" / f"{suite.stem}-{r}"
        run_env = dict(env, HF_DATASETS_CACHE=str(cache))
        for kind in ("cold", "warm"):
            m = run_measured(cmd, work, run_env)
            runs[kind].append(m)
            print(f"  {label} run {r + 1} {kind} datasets cache: wall {m.wall:6.2f} s  cpu {m.cpu:6.2f} s  "
                  f"peak RSS {m.maxrss_mb:6.0f} MB  ({collected(m)})", flush=True)
            if m.returncode != 0:
                print(m.output[-3000:], file=sys.stderr)
        shutil.rmtree(cache, ignore_errors=True)
    for kind, ms in runs.items():
        print(f"  {label} {kind}: wall {spread([m.wall for m in ms], '{:.2f}')} s, "
              f"cpu {spread([m.cpu for m in ms], '{:.2f}')} s, "
              f"peak RSS {spread([m.maxrss_mb for m in ms], '{:.0f}')} MB  (median (min-max) of {len(ms)})")


def profile(suite: Path, work: Path, env: dict[str, str]) -> None:
    """cProfile of one cold and one warm collection: the plugin's loading steps and the top functions."""
    import pstats

    cache = work / "hf-cache" / "profile"
    run_env = dict(env, HF_DATASETS_CACHE=str(cache))
    for kind in ("cold", "warm"):
        prof = work / f"collect-{kind}.prof"
        m = run_measured([PY, "-m", "cProfile", "-o", str(prof), *pytest_cmd(suite)[1:]], work, run_env)
        stats = pstats.Stats(str(prof))
        rows: dict[tuple[str, str], float] = {}
        for (filename, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
            rows[(filename, func)] = max(ct, rows.get((filename, func), 0.0))

        def cum(path_part: str, func: str, rows: dict[tuple[str, str], float] = rows) -> float:
            return max((v for (f, fn), v in rows.items() if f.endswith(path_part) and fn == func), default=0.0)

        total = cum("_pytest/config/__init__.py", "main") or m.wall
        parts = [
            ("whole pytest.main", total),
            ("  startup: plugin loading, suite validation", cum("_pytest/config/__init__.py", "_prepareconfig")),
            ("  collection (perform_collect)", cum("_pytest/main.py", "perform_collect")),
            ("    load_samples", cum("pytest_jeval/suite/dataset.py", "load_samples")),
            ("      UTF-8 check of the file (check_utf8)", cum("pytest_jeval/suite/dataset.py", "check_utf8")),
            ("      datasets.load_dataset (load_rows - check_utf8)",
             cum("pytest_jeval/suite/dataset.py", "load_rows") - cum("pytest_jeval/suite/dataset.py", "check_utf8")),
            ("      scan and subset (_load_subset)", cum("pytest_jeval/suite/dataset.py", "_load_subset")),
            ("        the benchmark's to_sample, every row", cum("bench_natural_reasoning.py", "to_sample")),
            ("          of which Sample() (Sample.__init__)", cum("pytest_jeval/core/sample.py", "__init__")),
            ("        making the rows (_scan_batches)", cum("pytest_jeval/suite/dataset.py", "_scan_batches")),
        ]
        print(f"\n# cProfile of one {kind} collection ({collected(m)}; wall {m.wall:.1f} s under the profiler, "
              f"which inflates per-call costs; cumulative seconds)")
        for label, value in parts:
            print(f"  {label:58s} {value:7.2f} s  {value / total * 100 if total else 0:5.1f}%")
        print("  top functions by own time:")
        top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:10]  # type: ignore[attr-defined]
        for (filename, line, func), (_cc, nc, tt, ct, _callers) in top:
            short = "/".join(Path(filename).parts[-2:])
            print(f"    {tt:6.2f} s own {ct:6.2f} s cum {nc:9d} calls  {short}:{line}({func})")
    shutil.rmtree(cache, ignore_errors=True)


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    """Write the data, run the measurements, print the figures; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows in the subset file, default 1000000")
    parser.add_argument("--max-samples", type=int, default=500, help="the suite's max_samples, default 500")
    parser.add_argument("--repeat", type=int, default=3, help="cold + warm pairs, default 3")
    parser.add_argument("--response-chars", type=int, default=300,
                        help="characters of each row's response (the column no sample uses), default 300")
    parser.add_argument("--full-rows", type=int, default=100_000,
                        help="also collect all of a file of this many rows (no max_samples); 0 skips it")
    parser.add_argument("--profile", action="store_true", help="a cProfile breakdown of the subset collection")
    parser.add_argument("--keep", type=Path, default=None, help="work in this directory and keep it")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure with .pyc files, as users run it
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    with tempfile.TemporaryDirectory(prefix="jeval-collect-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        uptime = os.getloadavg()
        print(f"# load average at start: {uptime[0]:.2f} {uptime[1]:.2f} {uptime[2]:.2f} on {os.cpu_count()} CPUs")
        data = work / f"natural_reasoning_{args.rows}.jsonl"
        start = time.perf_counter()
        write_rows(data, args.rows, args.response_chars)
        print(f"# wrote {args.rows} natural_reasoning-format rows, {data.stat().st_size / 1e6:.0f} MB, "
              f"in {time.perf_counter() - start:.1f} s")
        suite = write_suite(work, data, args.max_samples, "subset.toml")
        print(f"# subset: max_samples = {args.max_samples} of {args.rows} rows, "
              f"`pytest --jeval-config subset.toml --collect-only -q`")
        measure("subset", suite, work, env, args.repeat)
        if args.profile:
            profile(suite, work, env)
        data.unlink()
        if args.full_rows:
            full_data = work / f"natural_reasoning_{args.full_rows}.jsonl"
            write_rows(full_data, args.full_rows, args.response_chars)
            full = write_suite(work, full_data, None, "full.toml")
            print(f"\n# full: every sample of {args.full_rows} rows (no max_samples), "
                  f"{full_data.stat().st_size / 1e6:.0f} MB")
            measure("full", full, work, env, max(1, min(args.repeat, 2)))
        uptime = os.getloadavg()
        print(f"# load average at end: {uptime[0]:.2f} {uptime[1]:.2f} {uptime[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
