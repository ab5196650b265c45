"""Per-record cost of storing a result: the writer's append path against a bare ``os.write``.

Run: ``.venv/bin/python tests/perf/bench_results_append.py [--records N] [--rounds R]``.
Prints the minimum and median microseconds per record over interleaved rounds, for
``json_line`` + ``JsonlAppender.append`` (sanity checks, whole-line guarantee), for the
bare ``json.dumps`` + ``os.write`` it replaced, and for ``clean_record`` (run once per
record on the process that built it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_jeval.results.jsonl import JsonlAppender
from pytest_jeval.results.records import EXTRA_FIELDS, RECORD_FIELDS
from pytest_jeval.results.sanitize import clean_record, json_line


def _record() -> dict[str, Any]:
    rec: dict[str, Any] = dict.fromkeys(RECORD_FIELDS + EXTRA_FIELDS)
    rec.update(record_id="gsm8k-1", benchmark="gsm8k", model="m", question="q" * 300, model_answer="a" * 200,
               is_correct=True, score=1.0, latency_seconds=0.25, prompt_tokens=120, completion_tokens=80,
               scoring_metadata={"method": "numeric"})
    return rec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rec = _record()
    timings: dict[str, list[float]] = {"append (json_line + JsonlAppender)": [], "bare os.write": [],
                                       "clean_record": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            log = JsonlAppender(Path(tmp) / f"new-{r}.jsonl")
            fd = os.open(Path(tmp) / f"bare-{r}.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            cases: dict[str, Callable[[], object]] = {
                "append (json_line + JsonlAppender)": lambda: log.append(json_line(rec)),  # noqa: B023 - timed in this iteration
                "bare os.write": lambda: os.write(fd,  # noqa: B023 - timed in this iteration
                                                  (json.dumps(rec, ensure_ascii=False) + "\n").encode("utf-8")),
                "clean_record": lambda: clean_record(rec),
            }
            for name, step in cases.items():
                start = time.perf_counter()
                for _ in range(args.records):
                    step()
                timings[name].append((time.perf_counter() - start) / args.records * 1e6)
            log.close()
            os.close(fd)
    for name, values in timings.items():
        print(f"{name:36s} min {min(values):6.1f} us/record, median {statistics.median(values):6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
