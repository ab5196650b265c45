#!/usr/bin/env python
"""Records and summaries of two checkouts, byte for byte except timings: run by hand.

    PYTHONPATH=$PWD .venv/bin/python tests/perf/compare_records.py /tmp/before          # this checkout vs /tmp/before
    PYTHONPATH=$PWD .venv/bin/python tests/perf/compare_records.py /tmp/before --samples 500 --latency 0.2

``BEFORE`` is another checkout of the repository (``git worktree add /tmp/before <commit>`` or
``git archive <commit> | tar -x -C /tmp/before``). The same MCQ suite as ``bench_peers.py`` (the built-in
``mmlu-pro`` benchmark on a local JSONL, 64 in flight, the test server) runs once with each checkout first
on ``PYTHONPATH``; then every file under the two output directories is compared after dropping the fields
that hold timings (:data:`TIMING`), and the script prints each file's verdict. Exit status 1 on a difference.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PY = sys.executable

#: Field names that hold wall-clock figures (a run's own timing), left out of the comparison.
TIMING = re.compile(r"latency|seconds|ttft|throughput|call_windows|_at$|^started|^finished|elapsed|duration|"
                    r"wall|timestamp|^time$|per_sec|mfu|mbu|ipw|ipj")


def strip(value: Any, dropped: set[str]) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if TIMING.search(str(key)):
                dropped.add(str(key))
                continue
            out[key] = strip(item, dropped)
        return out
    if isinstance(value, list):
        return [strip(v, dropped) for v in value]
    return value


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two JSON values differ (paths), at most a few."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            out += differences(a.get(key), b.get(key), f"{where}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where or '.'}: {json.dumps(a)[:120]} != {json.dumps(b)[:120]}"]


def canonical(path: Path, dropped: set[str]) -> list[str]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.dumps(strip(json.loads(line), dropped)) for line in text.splitlines() if line.strip()]
    if path.suffix == ".json":
        return [json.dumps(strip(json.loads(text), dropped))]
    return text.splitlines()


def run(checkout: Path, work: Path, name: str, rows: Path, answers: Path, latency: float) -> Path:
    from bench_throughput import Server, run_measured

    out = work / "run"  # the same directory for both runs: the summary names the suite file
    out.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(checkout), str(HERE)]),
               HF_DATASETS_CACHE=str(work / "hf-cache"))
    for key in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(key, None)
    with Server(answers, latency, 64) as server:
        suite = out / "suite.toml"
        suite.write_text(
            f'[run]\noutput_dir = "results"\ncache = false\nmax_concurrency = 64\n\n[[models]]\nname = "test-model"\n'
            f'base_url = "{server.url}"\napi_key = "bench"\n\n[[benchmarks]]\nname = "mmlu-pro"\ndata_files = "{rows}"\n')
        m = run_measured([PY, "-m", "pytest", "--jeval-config", str(suite), "-q", "-p", "no:randomly", "-p",
                          "no:cacheprovider", "--rootdir", str(out)], out, env)
        server.stop()
    outcome = (re.findall(r"[0-9]+ passed.*", m.output) or ["?"])[-1]
    print(f"  {name}: {checkout}: rc {m.returncode}, wall {m.wall:.1f} s, {outcome}", flush=True)
    kept = work / name
    out.rename(kept)
    return kept / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path, help="the other checkout (the code before)")
    parser.add_argument("--after", type=Path, default=REPO, help="default: this checkout")
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench_peers import write_mcq

    with tempfile.TemporaryDirectory(prefix="jeval-compare-") as tmp:
        work = Path(tmp)
        rows, _prompts, answers = write_mcq(work, args.samples)
        a = run(args.before.resolve(), work, "before", rows, answers, args.latency)
        b = run(args.after.resolve(), work, "after", rows, answers, args.latency)
        files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
        files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
        status = 0
        if files_a != files_b:
            print(f"different files: before {[str(f) for f in files_a]}, after {[str(f) for f in files_b]}")
            status = 1
        dropped: set[str] = set()
        for rel in sorted(set(files_a) & set(files_b)):
            same = canonical(a / rel, dropped) == canonical(b / rel, dropped)
            print(f"  {rel}: {'identical' if same else 'DIFFERENT'} except timings")
            if not same:
                for one, two in zip(canonical(a / rel, dropped), canonical(b / rel, dropped)):
                    if one != two:
                        for line in (differences(json.loads(one), json.loads(two)) if rel.suffix.startswith(".json")
                                     else [f"{one[:120]} != {two[:120]}"])[:10]:
                            print(f"      {line}")
            status |= 0 if same else 1
        print(f"timing fields left out: {', '.join(sorted(dropped)) or 'none'}")
        print("records and summaries identical except timings" if status == 0 else "DIFFERENCES found")
    return status


if __name__ == "__main__":
    sys.exit(main())
