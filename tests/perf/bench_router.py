#!/usr/bin/env python
"""Router benchmark: samples/s of one replica direct, one through a LiteLLM proxy, two through it.

Not part of the test suite (pytest only collects ``test_*.py``). Needs ``make litellm``. From
the repository root::

    .venv/bin/python tests/perf/bench_router.py                  # 80 samples, latency 1 s, 4 slots per replica
    .venv/bin/python tests/perf/bench_router.py --samples 400 --latency 0.2 --slots 8 --strategy least-busy

Two test-server replicas (:class:`~pytest_jeval.testing.openai_server.FakeOpenAIServer`, in this
process, each ``--latency`` s per call and ``--slots`` calls at once, so each one is the
bottleneck: ``slots / latency`` calls/s) answer synthetic GSM8K-format samples correctly. One
LiteLLM proxy serves two model groups: ``one`` (replica A) and ``two`` (A and B). The same suite
(``max_concurrency`` = ``--concurrency``, default twice the two replicas' slots: a router that
picks replicas at random keeps both busy only when each has calls queued) then runs in a fresh
pytest process against

  (1) replica A directly, (2) group ``one`` through the proxy, (3) group ``two`` through the proxy,

interleaved, ``--repeat`` times. For each it prints the whole-process wall time, the in-call time
(the replicas' last completion minus their first request; both clocks are ``perf_counter``,
system-wide on Linux), samples/s over the in-call time, each replica's share of the calls, and
the ratios: proxy/direct for one replica, and two/one through the proxy (2.0 is the ideal).
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
from typing import Any

from bench_throughput import write_gsm  # tests/perf, the directory of this script

from pytest_jeval.testing.litellm_proxy import Deployment, LiteLLMProxy, RouterSettings, find_litellm
from pytest_jeval.testing.openai_server import FakeOpenAIServer, lookup_responder

KEY_ENV = "JEVAL_BENCH_ROUTER_KEY"


def write_suite(directory: Path, data: Path, base_url: str, model: str, concurrency: int) -> Path:
    """The suite: one model at ``base_url``, GSM8K from ``data``, no cache, no retries needed."""
    suite = directory / f"suite_{model}.toml"
    suite.write_text(f"""
[meta]
name = "bench-router"

[run]
output_dir = "out_{model}"
max_concurrency = {concurrency}
request_timeout = 60
cache = false

[[models]]
name = "{model}"
base_url = "{base_url}"
api_key_env = "{KEY_ENV}"

[[benchmarks]]
name = "gsm8k"
data_files = "{data.name}"
""")
    return suite


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``; 0.0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_one(config: str, work: Path, data: Path, base_url: str, model: str, key: str,
            replicas: list[FakeOpenAIServer], args: argparse.Namespace, proxy_pid: int) -> dict[str, Any]:
    """One pytest-jeval run; returns wall, in-call time, samples/s, the proxy's CPU and per-replica call counts."""
    proxy_cpu = cpu_seconds(proxy_pid)
    for replica in replicas:
        replica.reset_stats()
    suite = write_suite(work, data, base_url, model, args.concurrency)
    env = {**os.environ, KEY_ENV: key}
    cmd = [sys.executable, "-m", "pytest", "--jeval-config", str(suite), "-p", "no:cacheprovider", "-q"]
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=900, check=False)
    wall = time.perf_counter() - started
    proxy_cpu = cpu_seconds(proxy_pid) - proxy_cpu
    if proc.returncode != 0:
        raise SystemExit(f"{config}: pytest exited {proc.returncode}:\n{proc.stdout[-3000:]}")
    records = [json.loads(line) for line in (work / f"out_{model}" / f"gsm8k_{model}.jsonl").read_text().splitlines()]
    correct = sum(1 for r in records if r["is_correct"] is True)
    if len(records) != args.samples or correct != args.samples:
        raise SystemExit(f"{config}: {len(records)} records, {correct} correct, of {args.samples}")
    stats = [r.stats() for r in replicas]
    firsts = [s["first_request_at"] for s in stats if s["first_request_at"] is not None]
    lasts = [s["last_completion_at"] for s in stats if s["last_completion_at"] is not None]
    in_call = max(lasts) - min(firsts)
    return {"config": config, "wall": wall, "in_call": in_call, "rate": args.samples / in_call,
            "proxy_ms": 1000 * proxy_cpu / args.samples,
            "calls": [s["request_count"] for s in stats]}


def main(argv: list[str] | None = None) -> int:
    """Parse the options, run the three configurations ``--repeat`` times, print the table and ratios."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=80)
    parser.add_argument("--latency", type=float, default=1.0, help="seconds per call at each replica")
    parser.add_argument("--slots", type=int, default=4, help="calls each replica processes at once")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="[run] max_concurrency (default: 4 x --slots, twice the two replicas' slots)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--strategy", default="simple-shuffle", help="the proxy's routing_strategy")
    args = parser.parse_args(argv)
    if args.concurrency is None:
        args.concurrency = 4 * args.slots
    find_litellm()  # says `make litellm` when the proxy is missing

    with tempfile.TemporaryDirectory(prefix="bench-router-") as tmp:
        work = Path(tmp)
        data, table = write_gsm(work, args.samples)
        replica_a = FakeOpenAIServer(lookup_responder(table, "no idea"), latency=args.latency, slots=args.slots)
        replica_b = FakeOpenAIServer(lookup_responder(table, "no idea"), latency=args.latency, slots=args.slots)
        with replica_a, replica_b:
            groups = {"one": [Deployment(replica_a.base_url)],
                      "two": [Deployment(replica_a.base_url), Deployment(replica_b.base_url)]}
            settings = RouterSettings(routing_strategy=args.strategy, num_retries=2, timeout=60)
            with LiteLLMProxy(groups, settings) as proxy:
                print(f"# {args.samples} samples; replicas: latency {args.latency} s, {args.slots} slots each "
                      f"(ideal {args.slots / args.latency:.0f} samples/s each); max_concurrency {args.concurrency}; "
                      f"routing_strategy {args.strategy}; proxy ready in {proxy.startup_seconds:.1f} s")
                print(f"# load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
                      f"{os.getloadavg()[2]:.2f}")
                configs = [
                    ("one replica, direct", replica_a.base_url, "test-model", "EMPTY", [replica_a]),
                    ("one replica, proxy", proxy.base_url, "one", proxy.master_key, [replica_a]),
                    ("two replicas, proxy", proxy.base_url, "two", proxy.master_key, [replica_a, replica_b]),
                ]
                results: dict[str, list[dict[str, Any]]] = {c[0]: [] for c in configs}
                for _ in range(args.repeat):
                    for config, url, model, key, used in configs:
                        results[config].append(run_one(config, work, data, url, model, key, used, args, proxy.pid))
                print(f"# load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
                      f"{os.getloadavg()[2]:.2f}")

    print(f"{'configuration':<22} {'wall s':>8} {'in-call s':>10} {'samples/s':>10} {'proxy CPU ms/call':>18}"
          "  calls per replica")
    medians: dict[str, float] = {}
    for config, runs in results.items():
        medians[config] = statistics.median(r["rate"] for r in runs)
        calls = " / ".join(str(c) for c in runs[-1]["calls"])
        print(f"{config:<22} {statistics.median(r['wall'] for r in runs):>8.2f} "
              f"{statistics.median(r['in_call'] for r in runs):>10.2f} {medians[config]:>10.1f} "
              f"{statistics.median(r['proxy_ms'] for r in runs):>18.1f}  {calls}")
    direct, one, two = (medians[c[0]] for c in configs)
    print(f"ratio one replica proxy / direct: {one / direct:.2f}")
    print(f"ratio two replicas / one replica, both through the proxy: {two / one:.2f} (ideal 2.00)")
    print(f"ratio two replicas through the proxy / one replica direct: {two / direct:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
