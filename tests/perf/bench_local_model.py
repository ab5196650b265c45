#!/usr/bin/env python
"""The bundled local model: pytest-jeval's server and demo against llama-cpp-python's ``Llama`` used directly.

Not part of the test suite (pytest only collects ``test_*.py``). From the repository root::

    .venv/bin/python tests/perf/bench_local_model.py                # all figures, --repeat 3
    .venv/bin/python tests/perf/bench_local_model.py --repeat 1 --prompts 8 --no-demo   # a quick look

The prompts are the demo's 36 requests exactly as the plugin sends them: ``configs/quickstart.toml``
is run once with its model pointed at the OpenAI-compatible test server
(``pytest_jeval.testing.openai_server``), which records the request bodies (the request builder
depends on the model's name and settings, not on its engine). Then, interleaved, ``--repeat`` times,
each in a fresh process:

  (a) ``llama_cpp.Llama`` used directly: the bundled GGUF, the server's ``n_ctx``, ``n_threads``
      (also for prompt evaluation), seed and sampling arguments (``LocalModel._kwargs`` of each
      body), one ``create_chat_completion`` after another, ``reset()`` before each as the server's
      determinism needs (``direct``), and once more without it (``direct-noreset``: llama-cpp-python
      reuses the longest common prefix, which makes answers depend on the previous prompt);
  (b) the bundled server (``LocalServer``) over HTTP, one request at a time through the ``openai``
      client, as the plugin calls it (the local engine's ``max_concurrency`` is 1);
  (c) ``make demo``'s command (``pytest --jeval-config configs/quickstart.toml -p no:cacheprovider
      -v``, results into a temporary ``--jeval-output``), the whole process; with
      ``--demo-noconftest`` also (c') the same with ``--noconftest`` (pytest then skips the test
      suite's ``tests/conftest.py``, which it imports from the repository root by ``testpaths``).

  (d) ``--pair``: two requests at once on two cores: two children of (a) at the same time, each with
      one llama.cpp thread and every other body (llama-cpp-python's ``Llama`` decodes one sequence per
      context; llama.cpp's multi-sequence batching is not exposed by its chat API, so two contexts,
      one per process, is how two requests run at once). Compared with (a): its calls' span (first
      call's start to last call's end, over both children) and its whole wall time (both processes).

Printed: completion tokens per second over the calls' wall time for (a) and (b) and their ratio
(goal: (b)/(a) >= 0.90), llama.cpp's own generation and prompt-evaluation rates (its perf counters,
in (a)), and (c)'s wall time against the serial process of (a) (Python start, import, model load and
the 36 calls) and against the 36 calls alone (goal: the demo not slower). Medians, with min-max.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PY = sys.executable
REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "configs" / "quickstart.toml"


def threads() -> int:
    """The server's thread count (``pytest_jeval.calls.engines.local.LocalServer.launch``)."""
    return max(1, (os.cpu_count() or 2) // 2)


# --------------------------------------------------------------------------- prompts

def record_bodies(directory: Path) -> list[dict[str, Any]]:
    """The quickstart run's chat-completion request bodies, in the order the plugin sent them."""
    from pytest_jeval.testing.openai_server import FakeOpenAIServer

    text = QUICKSTART.read_text(encoding="utf-8")
    if 'engine = "local"' not in text:
        raise SystemExit(f"{QUICKSTART} no longer uses the local engine")
    server = FakeOpenAIServer(models=("smollm2-135m",))
    url = server.start()
    try:
        suite = directory / "record.toml"
        suite.write_text(text.replace('engine = "local"', f'engine = "openai"\nbase_url = "{url}"\napi_key = "x"'),
                         encoding="utf-8")
        cmd = [PY, "-m", "pytest", "--jeval-config", str(suite), "--jeval-output", str(directory / "record-out"),
               "-p", "no:cacheprovider", "-q"]
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
        if done.returncode not in (0, 1):
            raise SystemExit(f"recording the quickstart requests failed ({done.returncode}):\n{done.stdout[-2000:]}")
        bodies = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    finally:
        server.stop()
    if not bodies:
        raise SystemExit("recording the quickstart requests: no request reached the test server")
    return bodies


# --------------------------------------------------------------------------- (a) Llama directly, in a child

def child_direct(bodies_file: Path, reset: bool, part: int | None = None) -> dict[str, Any]:
    """Serial ``create_chat_completion`` calls on a plain ``llama_cpp.Llama``; timings as JSON.

    ``part`` (0 or 1): every other body from that one, on one llama.cpp thread (one of (d)'s pair).
    """
    import llama_cpp

    from pytest_jeval.calls.engines.local import find_bundled_gguf
    from pytest_jeval.calls.engines.local_server import LocalModel

    bodies = json.loads(bodies_file.read_text(encoding="utf-8"))
    if part is not None:
        bodies = bodies[part::2]
    started = time.perf_counter()
    n = threads() if part is None else 1
    llm: Any = llama_cpp.Llama(model_path=str(find_bundled_gguf()), n_ctx=2048, n_threads=n, n_threads_batch=n,
                          logits_all=False, verbose=False, seed=0)
    load_s = time.perf_counter() - started
    calls_s = gen_ms = prompt_ms = 0.0
    completion = prompt = evaluated = generated = 0
    answers = []
    first_call = time.time()
    for body in bodies:
        if reset:
            llm.reset()
        llama_cpp.llama_perf_context_reset(llm.ctx)
        t = time.perf_counter()
        result: dict[str, Any] = llm.create_chat_completion(**LocalModel._kwargs(body))  # the server's own arguments
        calls_s += time.perf_counter() - t
        perf = llama_cpp.llama_perf_context(llm.ctx)
        gen_ms += perf.t_eval_ms
        prompt_ms += perf.t_p_eval_ms
        generated += perf.n_eval
        evaluated += perf.n_p_eval
        completion += result["usage"]["completion_tokens"]
        prompt += result["usage"]["prompt_tokens"]
        answers.append(result["choices"][0]["message"]["content"])
    return {"load_s": load_s, "calls_s": calls_s, "completion_tokens": completion, "prompt_tokens": prompt,
            "calls_from": first_call, "calls_to": time.time(),
            "gen_tok_s": generated / gen_ms * 1000 if gen_ms else 0.0,
            "prompt_tok_s": evaluated / prompt_ms * 1000 if prompt_ms else 0.0,
            "prompt_evaluated": evaluated, "answers": answers}


def run_direct(bodies_file: Path, reset: bool) -> dict[str, Any]:
    """(a) in a fresh process; ``process_s`` is its whole wall time, from ``exec`` to exit."""
    cmd = [PY, __file__, "--child", "direct" if reset else "direct-noreset", "--bodies", str(bodies_file)]
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"direct run failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_s"] = wall
    return result


def run_pair(bodies_file: Path) -> dict[str, Any]:
    """(d) two children of (a) at once, one llama.cpp thread each, every other body each."""
    cmds = [[PY, __file__, "--child", "direct", "--part", str(k), "--bodies", str(bodies_file)] for k in (0, 1)]
    started = time.perf_counter()
    procs = [subprocess.Popen(c, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for c in cmds]
    outs = [p.communicate(timeout=1800) for p in procs]
    wall = time.perf_counter() - started
    if any(p.returncode for p in procs):
        raise SystemExit(f"pair run failed:\n{outs[0][1][-1500:]}\n{outs[1][1][-1500:]}")
    halves = [json.loads(out.strip().splitlines()[-1]) for out, _err in outs]
    answers = [a for pair in itertools.zip_longest(halves[0]["answers"], halves[1]["answers"]) for a in pair
               if a is not None]
    return {"process_s": wall, "calls_s": max(h["calls_to"] for h in halves) - min(h["calls_from"] for h in halves),
            "completion_tokens": sum(h["completion_tokens"] for h in halves), "answers": answers,
            "gen_tok_s": statistics.median(h["gen_tok_s"] for h in halves)}


# --------------------------------------------------------------------------- (b) the bundled server over HTTP

def run_server(bodies: list[dict[str, Any]]) -> dict[str, Any]:
    """(b) ``LocalServer`` started here, the bodies sent one at a time through the ``openai`` client."""
    import openai

    from pytest_jeval.calls.engines.local import LocalServer

    started = time.perf_counter()
    server = LocalServer(name="smollm2-135m")
    url = server.start()
    start_s = time.perf_counter() - started
    client = openai.OpenAI(base_url=url, api_key="local", max_retries=0, timeout=600)
    calls_s = 0.0
    completion = 0
    answers = []
    try:
        for body in bodies:
            extra = {k: v for k, v in body.items() if k not in ("model", "messages")}
            t = time.perf_counter()
            reply = client.chat.completions.create(model=body["model"], messages=body["messages"], **extra)
            calls_s += time.perf_counter() - t
            completion += reply.usage.completion_tokens if reply.usage else 0
            answers.append(reply.choices[0].message.content)
    finally:
        client.close()
        t = time.perf_counter()
        server.stop()
        stop_s = time.perf_counter() - t
    return {"start_s": start_s, "calls_s": calls_s, "stop_s": stop_s, "completion_tokens": completion,
            "answers": answers}


# --------------------------------------------------------------------------- (c) the demo

def run_demo(directory: Path, verbose: bool, noconftest: bool = False) -> dict[str, Any]:
    """(c) ``make demo``'s pytest command in the repository root; the whole process's wall time.

    ``noconftest`` adds ``--noconftest``: run from the repository root, pytest otherwise imports
    ``tests/conftest.py`` (``testpaths``), which imports datasets, scipy and openai for the test suite.
    """
    out = directory / ("demo-nc-out" if noconftest else "demo-out")
    cmd = [PY, "-m", "pytest", "--jeval-config", str(QUICKSTART.relative_to(REPO)), "-p", "no:cacheprovider",
           "--jeval-output", str(out)] + (["-v"] if verbose else []) + (["--noconftest"] if noconftest else [])
    started = time.perf_counter()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"the demo failed ({done.returncode}):\n{done.stdout[-3000:]}")
    records = [json.loads(line) for path in out.glob("*.jsonl") for line in path.read_text().splitlines()]
    return {"process_s": wall, "samples": len(records),
            "answers": {r["record_id"]: r["model_answer"] for r in records}}


# --------------------------------------------------------------------------- report

def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """Median with min-max."""
    if not values:
        return "-"
    med = statistics.median(values)
    return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def load_average() -> str:
    """The 1/5/15-minute load averages, as ``uptime`` prints them."""
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of (a), (b), (c), interleaved")
    parser.add_argument("--prompts", type=int, default=None, help="only the first N prompts for (a) and (b)")
    parser.add_argument("--no-demo", action="store_true", help="skip (c)")
    parser.add_argument("--quiet-demo", action="store_true", help="run the demo without -v")
    parser.add_argument("--demo-noconftest", action="store_true",
                        help="also run the demo with --noconftest (without the test suite's tests/conftest.py)")
    parser.add_argument("--pair", action="store_true",
                        help="also (d): two requests at once, two processes of one llama.cpp thread each")
    parser.add_argument("--child", choices=("direct", "direct-noreset"), help=argparse.SUPPRESS)
    parser.add_argument("--part", type=int, choices=(0, 1), default=None, help=argparse.SUPPRESS)
    parser.add_argument("--bodies", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child_direct(args.bodies, reset=args.child == "direct", part=args.part)))
        return 0
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")

    print(f"load average at start: {load_average()} ({os.cpu_count()} CPUs, {threads()} llama.cpp thread(s))")
    with tempfile.TemporaryDirectory(prefix="bench-local-") as tmp:
        directory = Path(tmp)
        bodies = record_bodies(directory)
        if args.prompts:
            bodies = bodies[: args.prompts]
        bodies_file = directory / "bodies.json"
        bodies_file.write_text(json.dumps(bodies), encoding="utf-8")
        print(f"{len(bodies)} request bodies recorded from {QUICKSTART.relative_to(REPO)}"
              f" (e.g. {json.dumps(bodies[0])[:160]})")
        rows: dict[str, list[dict[str, Any]]] = {"direct": [], "direct-noreset": [], "server": [], "demo": [],
                                                 "demo-noconftest": [], "pair": []}
        for i in range(args.repeat):
            steps = ["direct", "server", "direct-noreset"] + ([] if args.no_demo else ["demo"])
            steps += ["demo-noconftest"] if args.demo_noconftest and not args.no_demo else []
            steps += ["pair"] if args.pair else []
            steps = steps[i % len(steps):] + steps[: i % len(steps)]  # rotate the order between rounds
            for step in steps:
                if step == "server":
                    rows[step].append(run_server(bodies))
                elif step == "pair":
                    rows[step].append(run_pair(bodies_file))
                elif step.startswith("demo"):
                    rows[step].append(run_demo(directory / f"round{i}", verbose=not args.quiet_demo,
                                               noconftest=step == "demo-noconftest"))
                else:
                    rows[step].append(run_direct(bodies_file, reset=step == "direct"))
                print(f"  round {i + 1}: {step} done (load {load_average()})", flush=True)
        report(rows, len(bodies))
    print(f"load average at end: {load_average()}")
    return 0


def report(rows: dict[str, list[dict[str, Any]]], n: int) -> None:
    """Print the figures and the goals' ratios (median of the per-round ratios, with min-max)."""
    direct, noreset, server, demo = rows["direct"], rows["direct-noreset"], rows["server"], rows["demo"]

    def rate(r: dict[str, Any]) -> float:
        return float(r["completion_tokens"]) / float(r["calls_s"])

    print(f"\n(a) llama_cpp.Llama directly, {n} prompts, serial:")
    print(f"    reset() before each:   {spread([rate(r) for r in direct], '{:.1f}')} completion tok/s over the calls;"
          f" calls {spread([r['calls_s'] for r in direct])} s, load {spread([r['load_s'] for r in direct])} s,"
          f" whole process {spread([r['process_s'] for r in direct])} s")
    print(f"      llama.cpp's counters: generation {spread([r['gen_tok_s'] for r in direct], '{:.1f}')} tok/s,"
          f" prompt eval {spread([r['prompt_tok_s'] for r in direct], '{:.1f}')} tok/s"
          f" ({direct[0]['prompt_evaluated']} prompt tokens evaluated)")
    print(f"    no reset (llama-cpp-python's own prefix reuse): {spread([rate(r) for r in noreset], '{:.1f}')} tok/s;"
          f" calls {spread([r['calls_s'] for r in noreset])} s,"
          f" whole process {spread([r['process_s'] for r in noreset])} s"
          f" ({noreset[0]['prompt_evaluated']} prompt tokens evaluated)")
    print(f"(b) bundled server over HTTP: {spread([rate(r) for r in server], '{:.1f}')} completion tok/s;"
          f" calls {spread([r['calls_s'] for r in server])} s, start {spread([r['start_s'] for r in server])} s,"
          f" stop {spread([r['stop_s'] for r in server])} s")
    ratios = [rate(s) / rate(d) for s, d in zip(server, direct)]
    print(f"    (b)/(a) tokens/s: {spread(ratios)}   goal >= 0.90")
    print(f"    (b)/(a, no reset) tokens/s: {spread([rate(s) / rate(d) for s, d in zip(server, noreset)])}")
    same = sum(a == b for a, b in zip(server[0]["answers"], direct[0]["answers"]))
    print(f"    answers: server = direct (reset) on {same}/{n} prompts")
    if demo:
        print(f"(c) the demo, whole process: {spread([r['process_s'] for r in demo])} s ({demo[0]['samples']} samples)")
        to_process = [d["process_s"] / a["process_s"] for d, a in zip(demo, direct)]
        to_calls = [d["process_s"] / (a["load_s"] + a["calls_s"]) for d, a in zip(demo, direct)]
        to_calls_only = [d["process_s"] / a["calls_s"] for d, a in zip(demo, direct)]
        print(f"    demo / serial Llama process (Python start, import, model load, {n} calls): {spread(to_process)}"
              "   goal <= 1.00")
        print(f"    demo / serial Llama (model load + calls): {spread(to_calls)}")
        print(f"    demo / serial Llama calls only (no load): {spread(to_calls_only)}")
        print(f"    demo / serial Llama process without reset: "
              f"{spread([d['process_s'] / a['process_s'] for d, a in zip(demo, noreset)])}")
    pair = rows["pair"]
    if pair:
        print(f"(d) two at once (two processes, one llama.cpp thread each): {spread([rate(r) for r in pair], '{:.1f}')}"
              f" completion tok/s over the calls' span; calls {spread([r['calls_s'] for r in pair])} s,"
              f" whole {spread([r['process_s'] for r in pair])} s; each one's generation"
              f" {spread([r['gen_tok_s'] for r in pair], '{:.1f}')} tok/s")
        print(f"    (d)/(a) tokens/s: {spread([rate(p) / rate(d) for p, d in zip(pair, direct)])};"
              f" (d)/(a) whole process: {spread([p['process_s'] / d['process_s'] for p, d in zip(pair, direct)])}")
        same = sum(a == b for a, b in zip(pair[0]["answers"], direct[0]["answers"]))
        print(f"    answers: two at once = direct (reset) on {same}/{n} prompts")
    nc = rows["demo-noconftest"]
    if nc:
        print(f"(c') the demo with --noconftest: {spread([r['process_s'] for r in nc])} s;"
              f" / serial Llama process: {spread([d['process_s'] / a['process_s'] for d, a in zip(nc, direct)])},"
              f" without reset: {spread([d['process_s'] / a['process_s'] for d, a in zip(nc, noreset)])}")


if __name__ == "__main__":
    raise SystemExit(main())
