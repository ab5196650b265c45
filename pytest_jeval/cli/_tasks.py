"""``jeval tasks check DIR``: validate a set of task folders with the ``oracle`` and ``nop`` agents.

A suite is written (into ``--output``, default a temporary folder) with the task folders' benchmark
twice, labelled ``oracle`` (``agent = "oracle"``: the task's reference solution) and ``nop``
(``agent = "nop"``: nothing), and pytest runs it in a subprocess (arguments after ``--`` pass
through, ``-n 2`` say). Neither agent calls a model. The table then gives, per task, the oracle's
and nop's rewards, the environment's build time (and whether it came from the cache), and why a
task cannot run here. A task set is trustworthy when the oracle scores 1 and nop 0 on every task
that runs; the exit status is 0 then, 1 otherwise, 2 for bad input.

The benchmark is the one the folders' layout names (``--benchmark`` overrides it): Harbor task
folders (``task.toml`` with ``environment/Dockerfile``) are ``terminalbench-v2.1``, Terminal-Bench 1
folders (``task.yaml``) ``terminalbench``, and ``task.toml`` folders without a Dockerfile
``terminal_lite``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_jeval.results.reader import ResultFileError, load_result

USAGE = 2
#: The benchmark of each layout (declared names: the CLI imports no benchmark).
LAYOUT_BENCHMARKS = {"harbor": "terminalbench-v2.1", "tb1": "terminalbench", "lite": "terminal_lite"}
AGENTS = ("oracle", "nop")


def add_parsers(sub: Any) -> None:
    """``jeval tasks check``."""
    tasks = sub.add_parser("tasks", help="work on task folders (Terminal-Bench layouts)",
                           description="Work on task folders in the Terminal-Bench layouts.")
    tasks_sub = tasks.add_subparsers(dest="tasks_command", required=True, metavar="ACTION")
    p = tasks_sub.add_parser("check", help="run every task with the oracle and with nop; a table of rewards, build "
                             "times and why a task cannot run here",
                             description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("folder", metavar="DIR", help="a folder of task folders (or one task folder)")
    p.add_argument("--benchmark", default=None,
                   help="the benchmark that reads DIR (default: from the layout: " +
                        ", ".join(f"{k}: {v}" for k, v in LAYOUT_BENCHMARKS.items()) + ")")
    p.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="where the suite and the results go (default: a temporary folder, removed afterwards)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(run=run)


def layout_benchmark(folder: Path) -> str | None:
    """The benchmark that reads ``folder``'s task folders, from their layout; None when there are none."""
    tasks = [folder] if (folder / "task.toml").is_file() or (folder / "task.yaml").is_file() else \
        sorted(p for p in folder.iterdir() if p.is_dir())
    kinds = []
    for task in tasks:
        if (task / "task.yaml").is_file():
            kinds.append("tb1")
        elif (task / "task.toml").is_file():
            kinds.append("harbor" if (task / "environment" / "Dockerfile").is_file() else "lite")
    if not kinds:
        return None
    for kind in ("harbor", "tb1", "lite"):  # a set with any Dockerfile task is a Harbor set
        if kind in kinds:
            return LAYOUT_BENCHMARKS[kind]
    return None


SUITE = """# jeval tasks check: the reference solution (oracle) and doing nothing (nop) on every task
[run]
output_dir = "results"

[[models]]
name = "check"
base_url = "http://127.0.0.1:9/v1"   # never called: neither agent calls a model
{entries}"""
ENTRY = """
[[benchmarks]]
name = "{benchmark}"
label = "{agent}"
agent = "{agent}"
data_dir = {folder}
"""


def run(args: argparse.Namespace) -> int:
    """Write the suite, run it, print the table; 0 when the set is trustworthy."""
    folder = Path(args.folder).expanduser().resolve()
    if not folder.is_dir():
        print(f"jeval tasks check: error: {folder} is not a folder", file=sys.stderr)
        return USAGE
    benchmark = args.benchmark or layout_benchmark(folder)
    if benchmark is None:
        print(f"jeval tasks check: error: no task folder in {folder} (task.toml or task.yaml); give --benchmark for "
              "another layout", file=sys.stderr)
        return USAGE
    with tempfile.TemporaryDirectory(prefix="jeval-tasks-") as tmp:
        work = Path(args.output).resolve() if args.output else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        suite = work / "tasks-check.toml"
        entries = "".join(ENTRY.format(benchmark=benchmark, agent=a, folder=json.dumps(str(folder))) for a in AGENTS)
        suite.write_text(SUITE.format(entries=entries), encoding="utf-8")
        print(f"jeval tasks check: {benchmark} on {folder} (suite: {suite})", flush=True)
        proc = subprocess.run([sys.executable, "-m", "pytest", "--jeval-config", str(suite), "-p", "no:cacheprovider",
                               "-q", "--no-header", "-rN", *getattr(args, "passthrough", [])],
                              cwd=work, capture_output=True, text=True, check=False)
        if proc.returncode not in (0, 1):
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
            print(f"jeval tasks check: error: the run failed (pytest exit status {proc.returncode})", file=sys.stderr)
            return USAGE
        try:
            runs = {a: load_result(work / "results" / f"{a}_check.jsonl").records for a in AGENTS}
        except ResultFileError as exc:
            print(f"jeval tasks check: error: {exc}", file=sys.stderr)
            return USAGE
    rows = table_rows(runs)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print_table(rows)
    return 0 if rows and all(r["verdict"] in ("ok", "cannot run here") for r in rows) else 1


def _reward(record: dict[str, Any] | None) -> float | None:
    if record is None or record.get("is_correct") is None:
        return None
    value = record.get("score")
    return float(value) if isinstance(value, (int, float)) else None


def table_rows(runs: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per task: oracle and nop rewards (None: unscored), build time, the verdict and its reason."""
    by_agent = {agent: {str(r.get("record_id")): r for r in records} for agent, records in runs.items()}
    rows = []
    for task in sorted(set(by_agent["oracle"]) | set(by_agent["nop"])):
        oracle, nop = by_agent["oracle"].get(task), by_agent["nop"].get(task)
        meta = (oracle or {}).get("scoring_metadata") or {}
        o_reward, n_reward = _reward(oracle), _reward(nop)
        reason = None
        if meta.get("not_runnable") or (o_reward is None and meta.get("unscored_reason")):
            verdict, reason = "cannot run here", str(meta.get("unscored_reason") or "")
        elif oracle is None or nop is None or (oracle.get("error") or (nop or {}).get("error")):
            verdict = "error"
            reason = str((oracle or {}).get("error") or (nop or {}).get("error") or "a run is missing")
        elif o_reward is None or o_reward < 1.0:
            verdict, reason = "oracle fails", str(meta.get("verifier_problem") or meta.get("test_output") or "")[-300:]
        elif n_reward is not None and n_reward >= 1.0:
            verdict, reason = "nop passes", "a do-nothing agent passes: the tests check too little"
        else:
            verdict = "ok"
        rows.append({"task": task, "oracle": o_reward, "nop": n_reward, "verdict": verdict, "reason": reason,
                     "build_seconds": meta.get("first_build_seconds"), "cached": meta.get("environment_cached"),
                     "startup_seconds": meta.get("startup_seconds"), "kind": meta.get("unscored_kind")})
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def print_table(rows: list[dict[str, Any]]) -> None:
    """The rows as an aligned table and a one-line verdict on the whole set."""
    header = ["task", "oracle", "nop", "build s", "start s", "verdict"]
    cells = [[r["task"], _cell(r["oracle"]), _cell(r["nop"]),
              _cell(r["build_seconds"]) + (" (cached)" if r["cached"] else ""), _cell(r["startup_seconds"]),
              r["verdict"]] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for row, line in zip(rows, cells):
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip())
        if row["reason"]:
            print(f"    {row['reason']}")
    runnable = [r for r in rows if r["verdict"] != "cannot run here"]
    good = [r for r in runnable if r["verdict"] == "ok"]
    trusted = "trustworthy" if runnable and len(good) == len(runnable) else "NOT trustworthy"
    print(f"{len(rows)} tasks: {len(runnable)} run here, {len(rows) - len(runnable)} cannot; oracle 1 and nop 0 on "
          f"{len(good)} of {len(runnable)}: the set is {trusted} here")
