#!/usr/bin/env python
"""Agent-loop benchmark: episodes of several model turns through pytest-jeval, run by hand.

Not part of the test suite. From the repository root::

    .venv/bin/python tests/perf/bench_agent.py                    # 500 episodes x 4 turns, 0.2 s, 64 slots
    .venv/bin/python tests/perf/bench_agent.py --episodes 200 --turns 6 --repeat 3

It starts the fake OpenAI-compatible server (``python -m pytest_jeval.testing.openai_server
--tool-turns N``) as a subprocess: each conversation gets N-1 turns of one ``calculator``
tool call and then a final answer. A benchmark of ``--episodes`` samples runs with
``backend = "agent"`` and ``tools = ["calculator"]`` (cache off) in one pytest process, and
then against a zero-latency server for the harness CPU per turn. Printed per run:

* in-call time: the server's last completion minus its first request (its stats line);
* the ideal: episodes x turns x latency / slots (every slot busy from first to last request),
  and the ratio in-call / ideal (the goal is <= 1.10: issue 34);
* whole-process wall and CPU time, and CPU per model turn (pytest, the episode loop, the
  tools and the HTTP client together, from ``os.wait4``), at zero latency.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_throughput import PY, Server  # the fake server CLI as a subprocess, with its stats

BENCH = '''
from pytest_jeval import Benchmark, Sample
from pytest_jeval.core.score import Score


def to_sample(row, index, ctx):
    return Sample(id=f"ep-{index}", input=row["q"], target="OK")


BENCHMARK = Benchmark(name="episodes", to_sample=to_sample, prompt=lambda s: s.input, backends=("agent",))


def test_episodes(sample, episode, score):
    score(Score(correct=episode.stop_reason == "final" and episode.final_text == "OK"))
'''


def write_project(work: Path, episodes: int, base_url: str, slots: int, turns: int,
                  in_flight: int | None = None) -> Path:
    """The benchmark module, its data and a suite in ``work``."""
    (work / "bench_episodes.py").write_text(BENCH)
    (work / "episodes.jsonl").write_text("".join(json.dumps({"q": f"task {i}: add things up"}) + "\n"
                                                 for i in range(episodes)))
    suite = work / "suite.toml"
    suite.write_text(f"""
[run]
output_dir = "out"
max_concurrency = {slots}
cache = false
max_turns = {turns + 1}
{"" if in_flight is None else f"max_episodes_in_flight = {in_flight}"}

[[models]]
name = "test-model"
base_url = "{base_url}"

[[benchmarks]]
name = "episodes"
module = "bench_episodes.py"
data_files = "episodes.jsonl"
tools = ["calculator"]
""")
    return suite


def run_pytest(suite: Path, work: Path) -> tuple[float, float, int, str]:
    """Wall, CPU (process and descendants), exit status and output of one pytest run."""
    cmd = [PY, "-m", "pytest", "--jeval-config", str(suite), "-q", "-p", "no:cacheprovider"]
    log = work / "out.txt"
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), log.read_text(errors="replace")


def one(args: argparse.Namespace, latency: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="jeval-bench-agent-") as tmp:
        work = Path(tmp)
        with Server(None, latency, args.slots, default="OK", extra=("--tool-turns", str(args.turns))) as server:
            suite = write_project(work, args.episodes, server.url, args.slots, args.turns, args.episodes_in_flight)
            wall, cpu, code, output = run_pytest(suite, work)
            stats = server.stop()
        if code != 0:
            raise SystemExit(f"pytest exited {code}:\n{output[-3000:]}")
        records = [json.loads(line) for line in (work / "out" / "episodes_test-model.jsonl").read_text().splitlines()]
    turns = sum(r["turn_count"] for r in records)
    assert len(records) == args.episodes and turns == args.episodes * args.turns, (len(records), turns)
    in_call = stats["last_completion_at"] - stats["first_request_at"]
    return {"wall": wall, "cpu": cpu, "in_call": in_call, "turns": turns, "requests": stats["request_count"], "peak": stats["max_in_flight"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=500)
    p.add_argument("--turns", type=int, default=4, help="model turns per episode")
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--slots", type=int, default=64)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--episodes-in-flight", type=int, default=None,
                   help="[run] max_episodes_in_flight (default: the suite's default, twice the concurrency)")
    args = p.parse_args(argv)
    ideal = args.episodes * args.turns * args.latency / args.slots
    print(f"{args.episodes} episodes x {args.turns} turns, latency {args.latency}s, {args.slots} slots; "
          f"ideal in-call {ideal:.2f}s; {os.cpu_count()} cores; load average before "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
    runs = [one(args, args.latency) for _ in range(args.repeat)]
    for r in runs:
        print(f"  in-call {r['in_call']:.2f}s  ({r['in_call'] / ideal:.2f}x ideal)  wall {r['wall']:.2f}s  "
              f"cpu {r['cpu']:.2f}s  requests {r['requests']}  peak in flight {r['peak']}")
    ratio = statistics.median(r["in_call"] / ideal for r in runs)
    print(f"ideal in-call {ideal:.2f}s, measured (median) {statistics.median(r['in_call'] for r in runs):.2f}s: "
          f"{ratio:.2f}x (goal <= 1.10x)")
    fast = one(args, 0.0)
    print(f"zero latency: wall {fast['wall']:.2f}s, cpu {fast['cpu']:.2f}s, "
          f"harness cpu per turn {1000 * fast['cpu'] / fast['turns']:.2f} ms, "
          f"wall per turn {1000 * fast['wall'] / fast['turns']:.2f} ms")
    print(f"load average after: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
