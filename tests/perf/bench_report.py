#!/usr/bin/env python
"""The HTML report on an agent run with trajectories: the time to load it and to build the page, the page's size.

Not part of the test suite (pytest only collects ``test_*.py``). From the repository root::

    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_report.py                 # 500 records, 18 messages each
    PYTHONPATH=$PWD .venv/bin/python tests/perf/bench_report.py --records 2000 --repeat 3

It writes, into a temporary folder, ``--records`` agent records and their trajectories in the default
sidecar (``FILE.jsonl.trajectories.jsonl``): each a user message, ``(--messages - 2) / 2`` tool calls
with results of ``--result-chars`` characters, and a final answer. Then, ``--repeat`` times, it loads the
run as ``jeval report`` does (``load_inputs``: the records, the summary and the sidecar) and builds the
page with the default ``--worst 200`` rows (``build_report``). Printed: the sidecar's size, the medians
(min-max) of both times, and the page's size.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_jeval.report import build_report
from pytest_jeval.report._write import load_inputs


def trajectory(rid: str, messages: int, result_chars: int) -> dict[str, Any]:
    """A conversation of ``messages`` messages: a question, tool calls with their results, an answer."""
    calls = max(0, (messages - 2) // 2)
    convo: list[dict[str, Any]] = [{"role": "user", "content": f"question {rid}"}]
    steps = []
    for n in range(calls):
        cid = f"call-{rid}-{n}"
        arguments = json.dumps({"path": f"notes/{n}.txt", "line": n})
        result = (f"line {n} of {rid}: " + "lorem ipsum dolor sit amet " * result_chars)[:result_chars]
        convo.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": cid, "type": "function", "function": {"name": "file_read", "arguments": arguments}}]})
        convo.append({"role": "tool", "tool_call_id": cid, "content": result})
        steps.append({"id": cid, "name": "file_read", "arguments": arguments, "turn": n + 1, "parsed": None,
                      "result": result, "error": None, "duration": 0.002, "truncated": False,
                      "output_chars": len(result)})
    convo.append({"role": "assistant", "content": f"answer {rid}"})
    return {"messages": convo, "tool_calls": steps}


def write_run(folder: Path, records: int, messages: int, result_chars: int) -> Path:
    """The run's JSONL and its trajectories sidecar; returns the JSONL's path."""
    path = folder / "agentic_m.jsonl"
    with path.open("w") as out, (folder / "agentic_m.jsonl.trajectories.jsonl").open("w") as side:
        for i in range(records):
            rid = f"r{i:05d}"
            convo = trajectory(rid, messages, result_chars)
            agent = {"stop_reason": "final", "turns": len(convo["tool_calls"]) + 1,
                     "tool_calls": len(convo["tool_calls"]), "tool_errors": 0, "prompt_tokens": 900,
                     "completion_tokens": 60, "wall_seconds": 1.5, "tool_seconds": 0.02, "limit": None, "error": None}
            out.write(json.dumps({"record_id": rid, "benchmark": "agentic", "model": "m", "backend": "agent",
                                  "question": f"question {rid}", "model_answer": f"answer {rid}",
                                  "is_correct": i % 3 != 0, "error": None, "latency_seconds": 1.5,
                                  "turn_count": agent["turns"], "tool_calls": agent["tool_calls"],
                                  "agent": agent}) + "\n")
            side.write(json.dumps({"record_id": rid, "benchmark": "agentic", "model": "m", **convo}) + "\n")
    return path


def _stat(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def main(argv: list[str] | None = None) -> int:
    """Write the run, time loading and building, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500)
    parser.add_argument("--messages", type=int, default=18, help="messages per trajectory (even)")
    parser.add_argument("--result-chars", type=int, default=1000, help="characters of each tool result")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="jeval-report-") as tmp:
        folder = Path(tmp)
        path = write_run(folder, args.records, args.messages, args.result_chars)
        sidecar = path.with_name(path.name + ".trajectories.jsonl").stat().st_size
        loads, builds, size = [], [], 0
        for _ in range(args.repeat):
            start = time.perf_counter()
            files, aggregate = load_inputs([folder])
            loads.append(time.perf_counter() - start)
            start = time.perf_counter()
            html = build_report(files, aggregate=aggregate, worst=200)
            builds.append(time.perf_counter() - start)
            size = len(html.encode("utf-8"))
    print(f"{args.records} records of {args.messages} messages, sidecar {sidecar / 1e6:.1f} MB; "
          f"{os.cpu_count()} cores, load {'/'.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"loading (records, summary, sidecar): {_stat(loads)}; the page for 200 rows: {_stat(builds)}, "
          f"{size / 1e6:.1f} MB (medians of {args.repeat}, min-max)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
