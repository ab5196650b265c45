#!/usr/bin/env python
"""Throughput benchmark: pytest-jeval against a bare ``AsyncOpenAI`` loop, run by hand.

Not part of the test suite (pytest only collects ``test_*.py``). From the repository root::

    .venv/bin/python tests/perf/bench_throughput.py                  # 1,000 samples, latency 0.2 s, 64 slots
    .venv/bin/python tests/perf/bench_throughput.py --repeat 5 --samples 2000 --latency 0.1
    .venv/bin/python tests/perf/bench_throughput.py --collect         # collect 100,000 samples
    .venv/bin/python tests/perf/bench_throughput.py --collect 20000 --profile
    .venv/bin/python tests/perf/bench_throughput.py --all            # and the subset, local model, router figures

Throughput mode starts the fake OpenAI-compatible server
(``python -m pytest_jeval.testing.openai_server``) as a subprocess on 127.0.0.1, once
per run, with ``--latency`` and ``--slots``, and a lookup table so that every answer
is correct. The same synthetic GSM8K-format samples (one call each) then go through

  (a) pytest-jeval in one process (``[run] max_concurrency = --concurrency``, cache off,
      ``call_executor = "process"``: the HTTP client in a helper process, what ``auto`` picks here),
  (a') the same with ``call_executor = "thread"`` (the client on a thread of pytest),
  (b) pytest-jeval with ``-n 2`` (each worker gets the same ``max_concurrency``),
  (c) a bare ``openai.AsyncOpenAI`` loop with ``--concurrency`` requests in flight,

each in a fresh Python process, interleaved, ``--repeat`` times. For each it prints the
whole-process wall time, the in-call time (the server's last completion minus its first
request, from the stats line it prints on SIGTERM), samples/s over the in-call time, and
the ratios to the bare loop. Then, against a zero-latency server, the per-sample harness
overhead: (pytest-jeval wall - bare-loop wall) / samples, and the same for CPU time.

It prints the issue's goals with their measured ratios (in-call rate >= 1.13x the bare
loop's, whole process <= 1.3x, harness CPU <= 2 ms per sample). ``--subset``,
``--local-model`` and ``--router`` run ``bench_collect.py``, ``bench_local_model.py`` and
``bench_router.py`` instead (``--all``: after the throughput runs).

``--collect N`` measures ``pytest --jeval-config ... --collect-only -q`` over an
N-sample benchmark: wall time and peak RSS (from ``os.wait4``), with a cold and a warm
``datasets`` cache, and (``--profile``) a cProfile breakdown of where the time goes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PY = sys.executable
REPO = Path(__file__).resolve().parents[2]

#: The prompt of the built-in gsm8k benchmark (pytest_jeval/benchmarks/bench_gsm8k.py), so the bare loop
#: sends the very same requests as pytest-jeval.
GSM8K_PROMPT = (
    "Solve the following math problem step by step. "
    "On the last line, write the final answer as 'Answer: <number>'.\n\n{question}"
)


# --------------------------------------------------------------------------- data

def write_gsm(directory: Path, n: int, seed: int = 0) -> tuple[Path, dict[str, str]]:
    """A GSM8K-format JSONL of ``n`` synthetic problems, and the lookup answers (tag -> correct reply)."""
    rng = random.Random(seed)
    data = directory / f"gsm_{n}.jsonl"
    table = {}
    with data.open("w", encoding="utf-8") as fh:
        for i in range(n):
            a, b = rng.randint(2, 999), rng.randint(2, 999)
            tag = f"[q{i:07d}]"
            question = f"{tag} Tom has {a} marbles and wins {b} more. How many marbles does he have now?"
            fh.write(json.dumps({"question": question, "answer": f"{a} + {b} = {a + b}\n#### {a + b}"}) + "\n")
            table[tag] = f"He has {a} + {b} = {a + b} marbles.\nAnswer: {a + b}"
    return data, table


def write_samples(directory: Path, n: int, seed: int = 0) -> tuple[Path, Path]:
    """:func:`write_gsm`, with the answers in a file for the server's ``--answers``."""
    data, table = write_gsm(directory, n, seed)
    answers = directory / f"answers_{n}.json"
    answers.write_text(json.dumps(table))
    return data, answers


def write_suite(directory: Path, data: Path, base_url: str, concurrency: int, name: str = "suite.toml",
                executor: str = "auto") -> Path:
    suite = directory / name
    suite.write_text(
        f"""[meta]
name = "throughput"

[run]
output_dir = "out"
cache = false
max_concurrency = {concurrency}
max_retries = 2
request_timeout = 60
call_executor = "{executor}"

[[models]]
name = "test-model"
base_url = "{base_url}"
api_key = "bench"

[[benchmarks]]
name = "gsm8k"
data_files = "{data.name}"
"""
    )
    return suite


# --------------------------------------------------------------------------- processes

@dataclass
class Measured:
    start: float
    end: float
    wall: float
    cpu: float
    maxrss_mb: float
    returncode: int
    output: str


def run_measured(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 900) -> Measured:
    """Run ``cmd``; wall time, CPU time and peak RSS of it and its descendants (os.wait4)."""
    log = cwd / f".out-{time.monotonic_ns()}.txt"
    with log.open("wb") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
            time.sleep(0.002)
        end = time.perf_counter()
        wall = end - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = log.read_text(errors="replace")
    log.unlink()
    return Measured(start, end, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, text)


class Server:
    """The fake server CLI as a subprocess; its stats come back on stop()."""

    def __init__(self, answers: Path | None, latency: float, slots: int, *, default: str = "no idea",
                 extra: tuple[str, ...] = ()) -> None:
        self.cmd = [PY, "-m", "pytest_jeval.testing.openai_server", "--port", "0", "--latency", str(latency),
                    "--slots", str(slots), *(("--answers", str(answers)) if answers is not None else ()),
                    "--default-answer", default, *extra]

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("READY "):
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r}")
        self.url = line.split()[1]
        return self

    def stop(self) -> dict[str, Any]:
        self.proc.send_signal(signal.SIGTERM)
        out, _ = self.proc.communicate(timeout=60)
        return json.loads(out.strip().splitlines()[-1])

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------- the bare loop

async def bare_loop(url: str, rows: list[dict[str, Any]], prompt_of: Callable[[dict[str, Any]], str],
                    correct_of: Callable[[str, dict[str, Any]], bool], concurrency: int, max_retries: int = 2,
                    timeout: float = 60) -> dict[str, Any]:
    """The bare ``AsyncOpenAI`` loop: ``concurrency`` workers take the rows from one queue, one chat call each
    (``prompt_of(row)`` as the user message); ``correct_of(reply text, row)`` counts the right answers.
    Also the bare loop of ``bench_peers.py``."""
    import asyncio

    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="bench", max_retries=max_retries, timeout=timeout)
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for row in rows:
        queue.put_nowait(row)
    correct = 0

    async def worker() -> None:
        nonlocal correct
        while not queue.empty():
            row = queue.get_nowait()
            reply = await client.chat.completions.create(
                model="test-model",
                messages=[{"role": "user", "content": prompt_of(row)}],
                temperature=0.0,
                max_tokens=2048,
            )
            correct += correct_of(reply.choices[0].message.content or "", row)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    await client.close()
    return {"samples": len(rows), "correct": correct}


def _gsm_prompt(row: dict[str, Any]) -> str:
    return GSM8K_PROMPT.format(question=row["question"])


def _gsm_correct(text: str, row: dict[str, Any]) -> bool:
    found = re.findall(r"Answer:\s*(-?\d+)", text)
    return bool(found) and found[-1] == row["answer"].rsplit("####", 1)[1].strip()


def bare_main(url: str, data: Path, concurrency: int) -> int:
    import asyncio

    questions = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    print(json.dumps(asyncio.run(bare_loop(url, questions, _gsm_prompt, _gsm_correct, concurrency))))
    return 0


# --------------------------------------------------------------------------- throughput mode

@dataclass
class Run:
    config: str
    wall: float
    in_call: float | None
    requests: int
    max_in_flight: int
    cpu: float
    maxrss_mb: float
    correct: int | None
    lead: float
    """Process start to the server's first request (startup, collection, preflight)."""
    tail: float
    """The server's last completion to process exit (reporting, summaries, shutdown)."""


@dataclass
class Config:
    name: str
    label: str
    runs: list[Run] = field(default_factory=list)


def pytest_cmd(suite: Path, workers: int) -> list[str]:
    cmd = [PY, "-m", "pytest", "--jeval-config", str(suite), "-q", "-p", "no:randomly"]
    if workers:
        cmd += ["-n", str(workers)]
    return cmd


def one_run(config: str, work: Path, data: Path, answers: Path, n: int, latency: float, slots: int,
            concurrency: int, env: dict[str, str]) -> Run:
    with Server(answers, latency, slots) as server:
        if config == "bare":
            cmd = [PY, str(Path(__file__).resolve()), "--bare-loop", server.url, str(data), str(concurrency)]
        else:
            executor = {"thread": "thread", "pytest": "process"}.get(config, "auto")
            suite = write_suite(work, data, server.url, concurrency, executor=executor)
            cmd = pytest_cmd(suite, 2 if config == "xdist" else 0)
        m = run_measured(cmd, work, env)
        stats = server.stop()
    correct: int | None = None
    if config == "bare":
        if m.returncode == 0:
            correct = json.loads(m.output.strip().splitlines()[-1])["correct"]
    else:
        found = re.search(r"(\d+) passed", m.output)
        correct = int(found.group(1)) if found else 0
    if m.returncode != 0 or correct != n or stats["request_count"] != n:
        print(f"  !! {config}: rc={m.returncode} correct={correct} requests={stats['request_count']}\n"
              + m.output[-3000:], file=sys.stderr)
    # perf_counter is CLOCK_MONOTONIC on Linux: the server's times compare with ours
    first, last = stats["first_request_at"] or m.start, stats["last_completion_at"] or m.end
    return Run(config, m.wall, stats["in_call_seconds"], stats["request_count"], stats["max_in_flight"], m.cpu,
               m.maxrss_mb, correct, first - m.start, m.end - last)


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    values = sorted(values)
    if len(values) == 1:
        return fmt.format(values[0])
    return f"{fmt.format(statistics.median(values))} ({fmt.format(values[0])}-{fmt.format(values[-1])})"


def throughput(args: argparse.Namespace, work: Path, env: dict[str, str]) -> None:
    n = args.samples
    data, answers = write_samples(work, n)
    configs = [Config("pytest", "pytest-jeval, 1 process, `call_executor = \"process\"` (what `auto` picks here)"),
               Config("thread", "pytest-jeval, 1 process, `call_executor = \"thread\"`"),
               Config("xdist", "pytest-jeval, -n 2 (`auto`: a helper per worker)"),
               Config("bare", f"bare AsyncOpenAI loop, {args.concurrency} in flight")]
    if args.skip_xdist:
        configs = [c for c in configs if c.name != "xdist"]
    if args.skip_thread:
        configs = [c for c in configs if c.name != "thread"]
    print(f"# throughput: {n} samples x 1 call, server latency {args.latency} s, {args.slots} slots "
          f"(server limit {n / args.slots * args.latency:.2f} s), max_concurrency {args.concurrency}, "
          f"{args.repeat} repeats, {os.cpu_count()} CPUs")
    # one small warm-up run each (.pyc files, page cache), not reported
    warm_data, warm_answers = write_samples(work, 64, seed=1)
    for c in configs:
        one_run(c.name, work, warm_data, warm_answers, 64, 0.0, args.slots, args.concurrency, env)
    for r in range(args.repeat):
        for c in configs:
            run = one_run(c.name, work, data, answers, n, args.latency, args.slots, args.concurrency, env)
            c.runs.append(run)
            print(f"  run {r + 1} {c.name:6s} wall {run.wall:6.2f} s  in-call {run.in_call or 0:6.2f} s  "
                  f"(start {run.lead:5.2f} s, end {run.tail:5.2f} s)  cpu {run.cpu:6.2f} s  peak in flight {run.max_in_flight:3d}  rss {run.maxrss_mb:5.0f} MB  "
                  f"correct {run.correct}/{n}", flush=True)
    bare = next(c for c in configs if c.name == "bare")
    bare_in_call = statistics.median(r.in_call or 0 for r in bare.runs)
    bare_wall = statistics.median(r.wall for r in bare.runs)
    print()
    print("| harness | whole process (s) | in-call (s) | samples/s (in-call) | in-call rate / bare | "
          "whole process / bare | start to 1st request (s) | last reply to exit (s) | CPU (s) | peak in flight |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in configs:
        in_calls = [r.in_call or float("nan") for r in c.runs]
        walls = [r.wall for r in c.runs]
        rates = [n / x for x in in_calls]
        rate_ratio = [bare_in_call / x for x in in_calls]
        wall_ratio = [w / bare_wall for w in walls]
        peaks = sorted({r.max_in_flight for r in c.runs})
        print(f"| {c.label} | {spread(walls)} | {spread(in_calls)} | {spread(rates, '{:.0f}')} | "
              f"{spread(rate_ratio)} | {spread(wall_ratio)} | {spread([r.lead for r in c.runs])} | "
              f"{spread([r.tail for r in c.runs])} | {spread([r.cpu for r in c.runs])} | "
              f"{'/'.join(map(str, peaks))} |")
    print("(median (min-max) over the repeats; ratios against the bare loop's median)")
    main_runs = next(c for c in configs if c.name == "pytest").runs
    rate = statistics.median(bare_in_call / (r.in_call or float("nan")) for r in main_runs)
    whole = statistics.median(r.wall for r in main_runs) / bare_wall
    ideal = n / args.slots * args.latency
    print(f"goal: in-call rate >= 1.13x the bare loop's: {rate:.2f}x ({'met' if rate >= 1.13 else 'NOT met'}); "
          f"within {statistics.median(r.in_call or 0 for r in main_runs) / ideal - 1:+.0%} of the endpoint's ideal "
          f"{ideal:.2f} s (the bare loop: {bare_in_call / ideal - 1:+.0%})")
    print(f"goal: whole process <= 1.3x the bare loop's: {whole:.2f}x ({'met' if whole <= 1.3 else 'NOT met'})")

    if args.overhead_samples == 0:
        return
    m = args.overhead_samples
    odata, oanswers = write_samples(work, m, seed=2)
    print(f"\n# harness overhead: {m} samples against a zero-latency server ({args.slots} slots)")
    pairs = []
    for r in range(args.repeat):
        p = one_run("pytest", work, odata, oanswers, m, 0.0, args.slots, args.concurrency, env)
        b = one_run("bare", work, odata, oanswers, m, 0.0, args.slots, args.concurrency, env)
        pairs.append((p, b))
        print(f"  run {r + 1} pytest wall {p.wall:6.2f} s cpu {p.cpu:6.2f} s in-call {p.in_call or 0:5.2f} s | "
              f"bare wall {b.wall:6.2f} s cpu {b.cpu:6.2f} s in-call {b.in_call or 0:5.2f} s | "
              f"overhead {(p.wall - b.wall) / m * 1000:5.2f} ms/sample wall, "
              f"{(p.cpu - b.cpu) / m * 1000:5.2f} ms/sample CPU", flush=True)
    print(f"per-sample harness overhead: wall {spread([(p.wall - b.wall) / m * 1000 for p, b in pairs])} ms, "
          f"CPU {spread([(p.cpu - b.cpu) / m * 1000 for p, b in pairs])} ms, "
          f"in-call {spread([((p.in_call or 0) - (b.in_call or 0)) / m * 1000 for p, b in pairs])} ms")
    cpu = statistics.median((p.cpu - b.cpu) / m * 1000 for p, b in pairs)
    print(f"goal: harness CPU <= 2 ms per sample above the bare loop's: {cpu:.2f} ms ({'met' if cpu <= 2 else 'NOT met'})")


# --------------------------------------------------------------------------- collect mode

def collect(args: argparse.Namespace, work: Path, env: dict[str, str]) -> None:
    n = args.collect
    data, _ = write_samples(work, n)
    suite = write_suite(work, data, "http://127.0.0.1:9/v1", 32)
    cmd = [PY, "-m", "pytest", "--jeval-config", str(suite), "--collect-only", "-q", "-p", "no:randomly"]
    print(f"# collect: {n} samples, `pytest --jeval-config suite.toml --collect-only -q`")
    hf = work / "hf-cache"
    for r in range(args.repeat):
        cold_env = dict(env, HF_DATASETS_CACHE=str(hf / f"cold-{r}"))
        cold = run_measured(cmd, work, cold_env)
        warm = run_measured(cmd, work, cold_env)
        for label, m in (("cold datasets cache", cold), ("warm datasets cache", warm)):
            found = re.search(r"(\d+) tests? collected", m.output)
            print(f"  run {r + 1} {label}: wall {m.wall:6.2f} s  cpu {m.cpu:6.2f} s  peak RSS {m.maxrss_mb:6.0f} MB  "
                  f"({found.group(0) if found else 'rc=' + str(m.returncode)})", flush=True)
            if not found:
                print(m.output[-3000:], file=sys.stderr)
    if args.profile:
        profile_collect(cmd, work, dict(env, HF_DATASETS_CACHE=str(hf / "cold-0")))


def profile_collect(cmd: list[str], work: Path, env: dict[str, str]) -> None:
    import pstats

    prof = work / "collect.prof"
    m = run_measured([PY, "-m", "cProfile", "-o", str(prof), *cmd[1:]], work, env)
    stats = pstats.Stats(str(prof))
    rows: dict[tuple[str, str], float] = {}
    for (filename, _line, func), (_cc, _nc, _tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows[(filename, func)] = max(ct, rows.get((filename, func), 0.0))

    def cum(path_part: str, func: str) -> float:
        return max((v for (f, fn), v in rows.items() if f.endswith(path_part) and fn == func), default=0.0)

    total = cum("_pytest/config/__init__.py", "main") or m.wall
    parts = [
        ("whole pytest.main", total),
        ("  startup: plugin loading, suite validation (pytest_configure)", cum("_pytest/config/__init__.py", "_prepareconfig")),
        ("  collection (pytest_collection)", cum("_pytest/main.py", "perform_collect")),
        ("    dataset loading: datasets.load_dataset (load_rows)", cum("pytest_jeval/suite/dataset.py", "load_rows")),
        ("    dataset loading: to_sample + ids (load_samples - load_rows)",
         cum("pytest_jeval/suite/dataset.py", "load_samples") - cum("pytest_jeval/suite/dataset.py", "load_rows")),
        ("    parametrize (metafunc.parametrize)", cum("_pytest/python.py", "parametrize")),
        ("    item creation (Function objects, _genfunctions minus generate_tests)",
         cum("_pytest/python.py", "_genfunctions") - cum("pytest_jeval/session/collect.py", "pytest_generate_tests")),
        ("    -k/-m deselection, modifyitems (pytest_collection_modifyitems)",
         cum("_pytest/main.py", "pytest_collection_modifyitems")),
        ("  printing the ids (pytest_collection_finish)", cum("_pytest/terminal.py", "pytest_collection_finish")),
    ]
    print(f"\n# cProfile of one cold collection (wall {m.wall:.1f} s under the profiler; cumulative seconds)")
    for label, value in parts:
        print(f"  {label:70s} {value:7.2f} s  {value / total * 100 if total else 0:5.1f}%")
    print("\n  top functions by own time:")
    top = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:15]  # type: ignore[attr-defined]
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in top:
        short = "/".join(Path(filename).parts[-2:])
        print(f"    {tt:6.2f} s own {ct:6.2f} s cum {nc:9d} calls  {short}:{line}({func})")


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--bare-loop":
        return bare_main(argv[1], Path(argv[2]), int(argv[3]))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000, help="samples (one call each), default 1000")
    parser.add_argument("--latency", type=float, default=0.2, help="server latency per request, default 0.2 s")
    parser.add_argument("--slots", type=int, default=64, help="requests the server processes at once, default 64")
    parser.add_argument("--concurrency", type=int, default=64, help="max_concurrency and bare-loop in-flight, default 64")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration, default 3")
    parser.add_argument("--overhead-samples", type=int, default=None,
                        help="samples for the zero-latency overhead runs (default --samples; 0 skips them)")
    parser.add_argument("--skip-xdist", action="store_true", help="leave out the -n 2 runs")
    parser.add_argument("--skip-thread", action="store_true",
                        help='leave out the one-process runs with call_executor = "thread"')
    parser.add_argument("--collect", type=int, nargs="?", const=100_000, default=None, metavar="N",
                        help="measure collecting an N-sample benchmark instead (default N 100000)")
    parser.add_argument("--profile", action="store_true", help="with --collect: a cProfile breakdown")
    parser.add_argument("--keep", type=Path, default=None, help="work in this directory and keep it")
    parser.add_argument("--subset", action="store_true",
                        help="a max_samples = 500 subset of a 1,000,000-row benchmark instead (bench_collect.py)")
    parser.add_argument("--local-model", action="store_true",
                        help="the bundled local model against llama_cpp.Llama instead (bench_local_model.py)")
    parser.add_argument("--router", action="store_true",
                        help="replicas behind a LiteLLM proxy instead (bench_router.py; needs make litellm)")
    parser.add_argument("--all", action="store_true",
                        help="every figure of the scale goals: throughput, the subset, the local model, the router")
    args = parser.parse_args(argv)
    others = [(flag, script) for flag, script in (("subset", "bench_collect"), ("local_model", "bench_local_model"),
                                                   ("router", "bench_router")) if args.all or getattr(args, flag)]
    if others and not args.all:
        return run_others(others)
    if args.overhead_samples is None:
        args.overhead_samples = args.samples
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure with .pyc files, as users run it
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    with tempfile.TemporaryDirectory(prefix="jeval-bench-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        env.setdefault("HF_DATASETS_CACHE", str(work / "hf-cache" / "shared"))
        if args.collect is not None:
            collect(args, work, env)
        else:
            throughput(args, work, env)
    return run_others(others) if others else 0


def run_others(others: list[tuple[str, str]]) -> int:
    """Run the sibling benchmark scripts (``tests/perf/<name>.py``) with their defaults, one after another."""
    import importlib

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    status = 0
    for _flag, script in others:
        print(f"\n# ---- {script}.py (its defaults; run it alone for its options)", flush=True)
        status = max(status, int(importlib.import_module(script).main([]) or 0))
    return status


if __name__ == "__main__":
    sys.exit(main())
