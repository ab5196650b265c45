#!/usr/bin/env python
"""Where pytest-jeval's whole process goes outside its calls: a timeline of the phases, run by hand.

From the repository root (pytest does not collect it)::

    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_startup.py                       # this checkout, 5 runs
    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_startup.py --before /tmp/before   # and another checkout

The peers sitting's suite (``bench_peers.py``: the built-in ``mmlu-pro`` on a local JSONL of ``--samples``
(1,000) questions, 64 in flight, cache off) runs against the test server with ``--latency`` (0: the calls
take as little as they can, so what is left is the harness), interleaved between the checkouts. A plugin
loaded with ``-p`` (this file, imported by the pytest process) stamps the wall time since the process's exec
at each phase (the helper process's start and the session-start endpoint check included), and the script
prints the medians (min-max) of each phase's length:

  start-up       exec to the plugin's import (the interpreter, pytest and its plugins)
  plugins        to the first ``pytest_configure`` (pytest loads the other plugins, parses the options)
  configure      ``pytest_configure`` (the suite, the plan, the helper process started)
  session start  ``pytest_sessionstart`` (the data loaded; the endpoint check, answered by the helper)
  of which wait  the endpoint check's wait for the helper (its interpreter and ``openai`` import)
  collection     ``pytest_collection``
  items          the first item to the session's end (the calls)
  finish         ``pytest_sessionfinish`` (the results written) to the exit
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

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PY = sys.executable
STAMPS = "JEVAL_STARTUP_STAMPS"
PHASES = ("start-up", "plugins", "configure", "session start", "of which wait", "collection", "items", "finish",
          "whole")

# --------------------------------------------------------------------------- the plugin (in the pytest process)

if os.environ.get(STAMPS):
    import atexit

    import pytest

    _T0 = float(os.environ["JEVAL_STARTUP_T0"])
    _marks: dict[str, float] = {}

    def _mark(name: str) -> None:
        _marks.setdefault(name, time.time() - _T0)

    _mark("plugin")

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(config: pytest.Config) -> None:
        _mark("configure")
        from pytest_jeval.calls import callproc

        check = callproc.ProcessCallScheduler.check_endpoints

        def timed(self: Any, endpoints: Any) -> Any:
            _mark("check")
            try:
                return check(self, endpoints)
            finally:
                _mark("checked")

        callproc.ProcessCallScheduler.check_endpoints = timed  # type: ignore[method-assign]

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionstart(session: pytest.Session) -> Any:
        _mark("sessionstart")
        return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(session: pytest.Session) -> Any:
        _mark("collection")
        return (yield)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(item: pytest.Item) -> None:
        _mark("items")

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(session: pytest.Session) -> Any:
        _mark("finish")
        return (yield)

    def _write() -> None:
        _mark("exit")
        Path(os.environ[STAMPS]).write_text(json.dumps(_marks))

    atexit.register(_write)


# --------------------------------------------------------------------------- the driver

def phases(marks: dict[str, float], wall: float) -> dict[str, float]:
    """Each phase's length (s) from the stamps; ``wall`` is the process's wall time measured outside it."""
    check, checked = marks.get("check"), marks.get("checked")
    return {
        "start-up": marks["plugin"],
        "plugins": marks["configure"] - marks["plugin"],
        "configure": marks["sessionstart"] - marks["configure"],
        "session start": marks["collection"] - marks["sessionstart"],
        "of which wait": checked - check if check is not None and checked is not None else 0.0,
        "collection": marks["items"] - marks["collection"],
        "items": marks["finish"] - marks["items"],
        "finish": wall - marks["finish"],
        "whole": wall,
    }


def one_run(checkout: Path, work: Path, rows: Path, answers: Path, latency: float, samples: int) -> dict[str, float]:
    from bench_throughput import Server  # tests/perf/bench_throughput.py

    run = work / f"run-{time.monotonic_ns()}"
    run.mkdir()
    stamps = run / "stamps.json"
    with Server(answers, latency, 64) as server:
        (run / "suite.toml").write_text(
            f'[meta]\nname = "startup"\n\n[run]\noutput_dir = "out"\ncache = false\nmax_concurrency = 64\n'
            f'max_retries = 2\nrequest_timeout = 60\n\n[[models]]\nname = "test-model"\nbase_url = "{server.url}"\n'
            f'api_key = "bench"\n\n[[benchmarks]]\nname = "mmlu-pro"\ndata_files = "{rows}"\n')
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS")}
        env.update({"PYTHONPATH": os.pathsep.join((str(checkout), str(HERE))), STAMPS: str(stamps)})
        started = time.time()
        env["JEVAL_STARTUP_T0"] = repr(started)
        done = subprocess.run([PY, "-m", "pytest", "-p", "bench_startup", "--jeval-config", "suite.toml", "-q",
                               "-p", "no:randomly", "-p", "no:cacheprovider", "--rootdir", "."],
                              cwd=run, env=env, capture_output=True, text=True, timeout=600)
        wall = time.time() - started
        server.stop()
    if done.returncode != 0 or f"{samples} passed" not in done.stdout:
        raise SystemExit(f"the run failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}")
    return phases(json.loads(stamps.read_text()), wall)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None, metavar="CHECKOUT", help="another checkout, interleaved")
    parser.add_argument("--runs", type=int, default=5, help="runs of each checkout, default 5")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.0, help="the server's latency, default 0")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench_peers import write_mcq

    checkouts = {"this checkout": REPO, **({f"{args.before}": args.before} if args.before else {})}
    print(f"# load average before: {', '.join(f'{v:.2f}' for v in os.getloadavg())} ({os.cpu_count()} CPUs); "
          f"{args.samples} samples, server latency {args.latency} s, {args.runs} runs each, interleaved", flush=True)
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        work = Path(tmp)
        rows, _prompts, answers = write_mcq(work, args.samples)
        for checkout in checkouts.values():  # warm-up: .pyc files, the page cache
            one_run(checkout, work, rows, answers, args.latency, args.samples)
        for _ in range(args.runs):
            for name, checkout in checkouts.items():
                results[name].append(one_run(checkout, work, rows, answers, args.latency, args.samples))
    print(f"# load average after: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    names = list(checkouts)
    print("\n| phase (s) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for phase in PHASES:
        cells = []
        for name in names:
            values = [r[phase] for r in results[name]]
            cells.append(f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})")
        print(f"| {phase} | " + " | ".join(cells) + " |")
    print("(medians (min-max) over the runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
