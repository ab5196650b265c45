#!/usr/bin/env python
"""Where pytest-jeval's client CPU per sample goes: a profile table, run by hand.

From the repository root::

    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_item_cpu.py                 # 1,000 MCQ samples, 3 repeats
    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_item_cpu.py --samples 500 --repeat 1 --latency 0.2

The same MCQ samples as ``bench_peers.py`` (the built-in ``mmlu-pro`` benchmark on a local JSONL, one call
each) against the test server (``--latency``, default 0: the harness's own cost alone), 64 in flight.

1. CPU without a profiler, ``--repeat`` times: the pytest process's own CPU and its helper's (the call
   process, ``call_executor = "auto"``), from ``resource.getrusage`` at ``pytest_unconfigure`` (a probe
   plugin, ``-p bench_item_cpu``), beside a bare ``AsyncOpenAI`` loop's (``bench_peers.py --bare-loop``);
   per sample, and pytest-jeval's minus the bare loop's.
2. One run under cProfile with a CPU clock (``time.process_time``: waiting for a reply costs nothing), the
   pytest process only, split into: start-up and collection, pytest's own per-item machinery (the runner,
   fixtures, logging and output capture, reports, the terminal), the plugin's per-item hooks, the fixtures
   that build the request, the test function (scoring), record building, writing the JSONL, and the end of
   the session. The profiler inflates small calls, so read the shares; the milliseconds are scaled to the
   unprofiled CPU of step 1.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PY = sys.executable


# --------------------------------------------------------------------------- the probe plugin (-p bench_item_cpu)

def pytest_unconfigure(config: Any) -> None:
    """Print this process's CPU and its reaped children's (the call helper) as one JSON line."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = os.environ.get("JEVAL_CPU_PROBE")
    if out:
        Path(out).write_text(json.dumps({"self": own.ru_utime + own.ru_stime,
                                         "children": kids.ru_utime + kids.ru_stime}))


# --------------------------------------------------------------------------- the profile

PROFILE_DRIVER = """
import cProfile, sys, time
import pytest
prof = cProfile.Profile(time.process_time)
prof.enable()
try:
    rc = pytest.main(sys.argv[2:])
finally:
    prof.disable()
    prof.dump_stats(sys.argv[1])
sys.exit(int(rc))
"""

#: (label, file suffix, function): cumulative CPU of these, per item; nested parts are subtracted below.
HOOKS = (
    ("prefetch (send the upcoming items' calls)", "pytest_jeval/session/prefetch.py", "pytest_runtest_protocol"),
    ("case set-up (runtime.pytest_runtest_setup)", "pytest_jeval/session/runtime.py", "pytest_runtest_setup"),
    ("report hooks: redaction", "pytest_jeval/session/redaction.py", "pytest_runtest_makereport"),
    ("report hooks: episode mode", "pytest_jeval/session/sequence.py", "pytest_runtest_makereport"),
    ("report hooks: progress line", "pytest_jeval/session/progress.py", "pytest_runtest_logreport"),
    ("report hooks: judge gate", "pytest_jeval/session/judge_gate.py", "pytest_runtest_logreport"),
    ("resume (pytest_pyfunc_call)", "pytest_jeval/results/resume.py", "pytest_pyfunc_call"),
)
FIXTURES = ("sample", "model", "judge", "response", "score", "jeval_model", "benchmark_entry", "episode")


def cum(rows: dict[tuple[str, str], tuple[float, float, int]], suffix: str, func: str) -> float:
    return sum(v[1] for (f, fn), v in rows.items() if f.endswith(suffix) and fn == func)


def calls(rows: dict[tuple[str, str], tuple[float, float, int]], suffix: str, func: str) -> int:
    return sum(v[2] for (f, fn), v in rows.items() if f.endswith(suffix) and fn == func)


def profile_table(prof: Path, n: int, scale: float) -> list[tuple[str, float]]:
    stats = pstats.Stats(str(prof))
    rows: dict[tuple[str, str], tuple[float, float, int]] = {}
    for (filename, _line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        old = rows.get((filename, func), (0.0, 0.0, 0))
        rows[(filename, func)] = (old[0] + tt, max(old[1], ct), old[2] + nc)
    total = cum(rows, "_pytest/config/__init__.py", "main") or stats.total_tt  # type: ignore[attr-defined]
    loop = cum(rows, "_pytest/main.py", "pytest_runtestloop")
    protocol = cum(rows, "_pytest/runner.py", "runtestprotocol")
    build = cum(rows, "pytest_jeval/results/records.py", "build_record")
    ship = cum(rows, "pytest_jeval/results/shipping.py", "pytest_runtest_makereport")
    write = cum(rows, "pytest_jeval/results/writer.py", "pytest_runtest_logreport")
    test = cum(rows, "bench_mmlu_pro.py", "test_mmlu_pro")
    fixtures = sum(cum(rows, "pytest_jeval/session/fixtures.py", f) for f in FIXTURES)
    wait = cum(rows, "pytest_jeval/calls/client.py", "chat") - 0.0
    hooks = [(label, cum(rows, suffix, func)) for label, suffix, func in HOOKS]
    terminal = cum(rows, "_pytest/terminal.py", "pytest_runtest_logreport") + \
        cum(rows, "_pytest/terminal.py", "pytest_runtest_logstart") + \
        cum(rows, "_pytest/terminal.py", "pytest_runtest_logfinish")
    plugin = sum(v for _, v in hooks) + (ship - build) + fixtures + build + write
    pytest_own = max(0.0, protocol - plugin - test)
    per = 1000 * scale / n
    table = [
        ("start-up, collection and session end (outside the run loop)", total - loop),
        ("pytest's own per-item machinery (runner, fixture set-up, logging/output capture, reports)",
         pytest_own - terminal),
        ("  of which the terminal reporter", terminal),
        ("the plugin's per-item hooks (below)", sum(v for _, v in hooks) + (ship - build)),
        *[("  " + label, v) for label, v in hooks],
        ("  record shipping (shipping.pytest_runtest_makereport minus build_record)", ship - build),
        ("fixtures sample/model/judge/response/score (the request; response waits for its reply)", fixtures),
        ("  of which ModelClient.chat (submit, take the reply)", wait),
        ("the test function: scoring (regex)", test),
        ("record building (results.records.build_record)", build),
        ("writing the JSONL (writer.pytest_runtest_logreport)", write),
        ("run loop outside runtestprotocol", loop - protocol),
    ]
    print(f"\n# cProfile with a CPU clock (pytest process only): whole {total:.2f} s profiled CPU; "
          f"scaled by {scale:.3f} to the unprofiled CPU; {calls(rows, '_pytest/runner.py', 'runtestprotocol')} items")
    print("\n| where | ms per sample | share of the pytest process |")
    print("|---|---|---|")
    for label, value in table:
        print(f"| {label} | {value * per:.3f} | {value / total * 100:.1f}% |")
    top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:20]  # type: ignore[attr-defined]
    print("\n  top functions by own CPU (profiled):")
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in top:
        short = "/".join(Path(filename).parts[-2:])
        print(f"    {tt:6.3f} s own {ct:6.3f} s cum {nc:8d} calls  {short}:{line}({func})")
    return table


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.0, help="server latency, default 0 (the harness alone)")
    parser.add_argument("--slots", type=int, default=64)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3,
                        help="unprofiled runs of each, default 3 (0: the profile alone, in profiled milliseconds)")
    parser.add_argument("--executor", default="auto", help='[run] call_executor, default "auto"')
    parser.add_argument("--keep", type=Path, default=None, help="work in this directory and keep it")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench_peers import write_mcq
    from bench_throughput import Server, run_measured

    env = dict(os.environ)
    for key in ("PYTHONDONTWRITEBYTECODE", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER"):
        env.pop(key, None)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE)])
    n = args.samples
    with tempfile.TemporaryDirectory(prefix="jeval-itemcpu-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        env.setdefault("HF_DATASETS_CACHE", str(work / "hf-cache"))
        rows, prompts, answers = write_mcq(work, n)

        def suite(url: str) -> Path:
            path = work / "suite.toml"
            path.write_text(
                f'[run]\noutput_dir = "out"\ncache = false\nmax_concurrency = {args.concurrency}\n'
                f'call_executor = "{args.executor}"\n\n[[models]]\nname = "test-model"\nbase_url = "{url}"\n'
                f'api_key = "bench"\n\n[[benchmarks]]\nname = "mmlu-pro"\ndata_files = "{rows}"\n')
            return path

        pytest_args = ["-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "bench_item_cpu"]
        print(f"# {n} MCQ samples, server latency {args.latency} s, {args.slots} slots, {args.concurrency} in flight, "
              f"call_executor = {args.executor!r}; load: {os.getloadavg()[0]:.2f} (1 min)", flush=True)
        own: list[float] = []
        helper: list[float] = []
        bare: list[float] = []
        for r in range(args.repeat + 1 if args.repeat else 0):  # the first of each is a warm-up
            probe = work / "probe.json"
            with Server(answers, args.latency, args.slots) as server:
                m = run_measured([PY, "-m", "pytest", "--jeval-config", str(suite(server.url)), *pytest_args], work,
                                 dict(env, JEVAL_CPU_PROBE=str(probe)))
                server.stop()
            cpu = json.loads(probe.read_text())
            with Server(answers, args.latency, args.slots) as server:
                b = run_measured([PY, str(HERE / "bench_peers.py"), "--bare-loop", server.url, str(prompts),
                                  str(args.concurrency)], work, env)
                server.stop()
            if m.returncode != 0 or b.returncode != 0:
                print(m.output[-2000:], b.output[-2000:], file=sys.stderr)
            if r == 0:
                continue
            own.append(cpu["self"])
            helper.append(cpu["children"])
            bare.append(b.cpu)
            print(f"  run {r}: pytest process {cpu['self']:.2f} s, helper {cpu['children']:.2f} s, "
                  f"total {m.cpu:.2f} s (wall {m.wall:.2f} s) | bare loop {b.cpu:.2f} s (wall {b.wall:.2f} s)",
                  flush=True)
        mo = statistics.median(own) if own else 0.0
        if own:
            mh, mb = statistics.median(helper), statistics.median(bare)
            print(f"\nCPU per sample (medians of {args.repeat}): pytest process {mo / n * 1000:.2f} ms, call helper "
                  f"{mh / n * 1000:.2f} ms, together {(mo + mh) / n * 1000:.2f} ms; bare loop {mb / n * 1000:.2f} ms; "
                  f"pytest-jeval minus the bare loop {(mo + mh - mb) / n * 1000:+.2f} ms")
        prof = work / "item.prof"
        with Server(answers, args.latency, args.slots) as server:
            p = run_measured([PY, "-c", PROFILE_DRIVER, str(prof), "--jeval-config", str(suite(server.url)),
                              *pytest_args], work, dict(env, JEVAL_CPU_PROBE=str(work / "probe-prof.json")))
            server.stop()
        if p.returncode != 0:
            print(p.output[-3000:], file=sys.stderr)
            return 1
        profiled = json.loads((work / "probe-prof.json").read_text())["self"]
        profile_table(prof, n, mo / profiled if profiled and mo else 1.0)
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    status = main()
    print(f"({time.perf_counter() - t0:.0f} s)")
    sys.exit(status)
