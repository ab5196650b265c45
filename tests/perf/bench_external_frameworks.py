#!/usr/bin/env python
"""Seconds per episode of the real Hermes Agent and OpenClaw, started as their adapters start them; run by hand.

Not part of the test suite. From the repository root, after ``make hermes`` and/or ``make openclaw``::

    .venv/bin/python tests/perf/bench_external_frameworks.py --repeat 3

Each episode is one chat turn against the OpenAI-compatible test server (it answers ``42``,
no tools): the adapter's ``invocation()`` for a fresh home and workspace, its files written,
the process run to the end, the answer read. What is measured is the framework's own
start-up and one turn, without the recording proxy (docs/external-agents.md measures that).
Printed per framework: the ``check()`` time and each episode's seconds, with the median.
A framework that is not installed is reported as such and skipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from pytest_jeval.agents.external.hermes import HermesAgent
from pytest_jeval.agents.external.openclaw import OpenClawAgent
from pytest_jeval.testing.openai_server import FakeOpenAIServer, lookup_responder

KEY = "jeval-bench-" + "0" * 16


def episode(agent: HermesAgent | OpenClawAgent, server: FakeOpenAIServer) -> float:
    """Run one episode; its wall seconds (AssertionError when the answer is not ``42``)."""
    with tempfile.TemporaryDirectory() as home_dir, tempfile.TemporaryDirectory() as workspace_dir:
        home, workspace = Path(home_dir), Path(workspace_dir)
        (home / "prompt.md").write_text("What is 6*7?", encoding="utf-8")
        inv = agent.invocation(prompt_file=home / "prompt.md", workspace=workspace, home=home, model="bench-model",
                               base_url=server.base_url, api_key=KEY)
        for rel, content in inv.files.items():
            (home / rel).parent.mkdir(parents=True, exist_ok=True)
            (home / rel).write_text(content, encoding="utf-8")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
               "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY, "JEVAL_MODEL": "bench-model", **inv.env}
        started = time.monotonic()
        done = subprocess.run(inv.argv, env=env, cwd=workspace, capture_output=True, text=True, timeout=600)
        seconds = time.monotonic() - started
        answer = inv.answer_from(done.stdout, done.stderr, done.returncode)
        assert answer == "42", f"{agent.name} answered {answer!r} (exit {done.returncode}): {done.stderr[-500:]}"
        return seconds


def main() -> int:
    """Measure every installed framework and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="episodes per framework")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[2]
    local_hermes, local_openclaw = root / ".venv-hermes/bin/hermes", root / ".openclaw-npm/node_modules/.bin/openclaw"
    agents: list[HermesAgent | OpenClawAgent] = [
        HermesAgent(local_hermes if local_hermes.is_file() else None),
        OpenClawAgent(local_openclaw if local_openclaw.exists() else None)]
    with FakeOpenAIServer(lookup_responder({}, default="42"), models=("bench-model",), api_key=KEY) as server:
        for agent in agents:
            started = time.monotonic()
            problem = agent.check()
            check_seconds = time.monotonic() - started
            if problem is not None:
                print(f"{agent.name}: skipped: {problem}")
                continue
            times = [episode(agent, server) for _ in range(args.repeat)]
            print(f"{agent.name}: check {check_seconds:.2f} s; episodes {[round(t, 1) for t in times]} s, "
                  f"median {statistics.median(times):.1f} s (cores {os.cpu_count()}, "
                  f"load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
