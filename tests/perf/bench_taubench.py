#!/usr/bin/env python
"""taubench benchmark: τ² retail episodes through pytest-jeval, with the oracle and with a scripted pair, by hand.

Not part of the test suite. Needs the real retail data (``make taubench``). From the repository root::

    .venv/bin/python tests/perf/bench_taubench.py                     # 100 episodes, 0.2 s latency, 64 slots
    .venv/bin/python tests/perf/bench_taubench.py --episodes 50 --latency 0.1

Three runs of the first ``--episodes`` retail tasks (``split = "base"``), each ``pytest`` in a subprocess:

* ``oracle``: the gold actions replayed through the tools, no request (episodes/s, CPU per episode and per
  oracle turn);
* ``scripted``: the project's test server (in this process, ``--latency`` s per request, ``--slots`` at once)
  plays both the agent (each gold action as a native tool call, one per turn, then a message saying the
  task's ``communicate_info``) and the ``[user]`` model (an opening line, then ``###STOP###``). Printed: the
  in-call time (the server's last completion minus its first request) against the ideal (every slot busy,
  and no episode's chain of sequential requests cut short: max(requests x latency / slots, longest chain x
  latency)), and episodes/s;
* the same pair at zero latency: the harness CPU (pytest, the episode loop, the tools, the reward, the HTTP
  client: the pytest process and its children, from ``os.wait4``) per model turn (agent and user requests).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks.taubench.data import locate, split_ids
from pytest_jeval.benchmarks.taubench.user import scenario_text
from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, ToolCallSpec, assistant_turns, tool_answer

PY = sys.executable


class GoldPair:
    """The scripted agent and user of the retail tasks (see the module docstring)."""

    def __init__(self, tasks: list[dict[str, Any]]) -> None:
        self.scenarios = [(scenario_text(t["user_scenario"]), str(t["id"])) for t in tasks]
        self.tasks = {str(t["id"]): t for t in tasks}

    def __call__(self, body: dict[str, Any], attempt: int) -> str | Answer:
        messages = body["messages"]
        if body.get("model") == "user":
            if assistant_turns(body) > 0:
                return "###STOP###"
            system = messages[0]["content"]
            task = next(i for text, i in self.scenarios if text in system)
            return f"Hello, this is call {task}."
        opening = next(m["content"] for m in messages if m["role"] == "user")
        criteria = self.tasks[opening.removeprefix("Hello, this is call ").rstrip(".")]["evaluation_criteria"]
        actions = criteria.get("actions") or []
        step = assistant_turns(body) - 1
        if step < len(actions):
            return tool_answer(ToolCallSpec(actions[step]["name"], actions[step]["arguments"]))
        return " ".join(["Done.", *(criteria.get("communicate_info") or [])])


def write_suite(work: Path, agent: str, url: str, episodes: int, slots: int) -> Path:
    suite = work / "suite.toml"
    user = f'[user]\nmodel = "user"\nbase_url = "{url}"\n' if agent != "oracle" else ""
    suite.write_text(f"""
[run]
output_dir = "out"
max_concurrency = {slots}
cache = false
max_tool_calls = 100

[[models]]
name = "agent"
base_url = "{url}"

{user}
[[benchmarks]]
name = "taubench"
agent = "{agent}"
subset = "retail"
max_samples = {episodes}
options = {{ nl_assertions = "skip" }}
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


def one(agent: str, tasks: list[dict[str, Any]], args: argparse.Namespace, latency: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="jeval-bench-taubench-") as tmp:
        work = Path(tmp)
        with FakeOpenAIServer(GoldPair(tasks), latency=latency, slots=args.slots, models=("agent", "user")) as server:
            suite = write_suite(work, agent, server.base_url, args.episodes, args.slots)
            wall, cpu, code, output = run_pytest(suite, work)
            stats = server.stats()
            bodies = [r["body"] for r in server.requests if r["body"] is not None]
        path = work / "out" / "taubench_agent.jsonl"
        if not path.exists():
            raise SystemExit(f"pytest exited {code} with no records:\n{output[-3000:]}")
        records = [json.loads(line) for line in path.read_text().splitlines()]
    chains: dict[str, int] = {}
    for body in bodies:
        key = next((m["content"] for m in body["messages"] if m["role"] == "user"), "")
        key = key if body.get("model") == "agent" else body["messages"][0]["content"][-200:]
        chains[key] = chains.get(key, 0) + 1
    return {"wall": wall, "cpu": cpu, "records": records, "stats": stats, "requests": len(bodies),
            "agent_turns": sum(r["turn_count"] or 0 for r in records),
            "correct": sum(1 for r in records if r["is_correct"])}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--slots", type=int, default=64)
    args = p.parse_args(argv)
    data = locate("retail", None)
    wanted = split_ids(data, "base")
    tasks = [t for t in json.loads((data.folder / "tasks.json").read_text()) if str(t["id"]) in wanted]
    print(f"taubench retail, {args.episodes} episodes; latency {args.latency}s, {args.slots} slots; "
          f"{os.cpu_count()} cores; data {data.source}")

    oracle = one("oracle", tasks, args, 0.0)
    n = len(oracle["records"])
    print(f"oracle: {n} episodes, {oracle['correct']} reward 1; wall {oracle['wall']:.2f}s "
          f"({n / oracle['wall']:.1f} episodes/s); cpu {oracle['cpu']:.2f}s, {1000 * oracle['cpu'] / n:.1f} ms per "
          f"episode, {1000 * oracle['cpu'] / oracle['agent_turns']:.2f} ms per oracle turn")

    pair = one("orchestrator", tasks, args, args.latency)
    stats, requests = pair["stats"], pair["requests"]
    per_episode = [(r["turn_count"] or 0) + 2 for r in pair["records"]]  # agent turns, the user's two
    ideal = max(requests * args.latency / args.slots, max(per_episode) * args.latency)
    in_call = stats["last_completion_at"] - stats["first_request_at"]
    print(f"scripted pair: {len(pair['records'])} episodes, {pair['correct']} reward 1; {requests} requests "
          f"(peak {stats['max_in_flight']} in flight); in-call {in_call:.2f}s vs ideal {ideal:.2f}s "
          f"({in_call / ideal:.2f}x); wall {pair['wall']:.2f}s ({len(pair['records']) / pair['wall']:.1f} episodes/s)")

    fast = one("orchestrator", tasks, args, 0.0)
    turns = fast["requests"]
    print(f"zero latency: wall {fast['wall']:.2f}s, cpu {fast['cpu']:.2f}s for {turns} model turns: harness cpu "
          f"{1000 * fast['cpu'] / turns:.2f} ms per turn, {1000 * fast['cpu'] / len(fast['records']):.1f} ms per "
          f"episode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
