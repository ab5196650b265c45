"""What redaction costs (CPU time): per record, per sandboxed stderr, per terminal write. Prints numbers.

    .venv/bin/python tests/perf/bench_redaction.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pytest_jeval.core.redact import redact, redact_record, register

KEYS = ("envkey-Qm4Rt8Yp2Wx6Zs0123", "inline-key-Zq7Xw3Vb9Nm2", "judge-key-Pd3Fg6Hj9Kl2")


def _per_call(fn: Callable[[], Any], n: int) -> float:
    fn()
    start = time.process_time()  # CPU time: steadier than wall time on a shared machine
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n


def main() -> None:
    register(*KEYS)
    record = {
        "record_id": "gsm8k-1234", "benchmark": "gsm8k", "model": "test-model", "backend": "direct",
        "model_answer": "Step by step, the total is 18 apples.\nAnswer: 18 " * 8, "is_correct": True, "score": 1.0,
        "latency_seconds": 0.5, "prompt_tokens": 120, "completion_tokens": 80, "cost_usd": None, "error": None,
        "scoring_metadata": {"method": "last_number", "candidates": ["18", "18"], "note": "matched the final line"},
        "ttft": None, "question": "Janet has 3 baskets with 6 apples each. How many apples? " * 4, "expected": "18",
        "extracted": "18", "unscored": False, "cached": False, "attempts": 1, "call_windows": [[1.0, 1.5]],
    }
    errored = dict(record, error="HTTP 401 from http://127.0.0.1:8000/v1: Invalid credentials in header "
                                 "Authorization: Bearer " + KEYS[0])
    stderr = ("Traceback (most recent call last):\n  File \"main.py\", line 3, in <module>\n"
              "AssertionError: expected 3, got 4\n") * 700  # ~64 KiB, the sandbox's output cap
    rows = [
        ("redact_record, clean record", _per_call(lambda: redact_record(record), 20_000)),
        ("redact_record, record with an echoed key", _per_call(lambda: redact_record(errored), 20_000)),
        (f"redact, sandbox stderr of {len(stderr) // 1024} KiB", _per_call(lambda: redact(stderr), 50)),
        ("redact, terminal progress write ('.')", _per_call(lambda: redact("."), 200_000)),
        ("redact, terminal result line (80 chars)",
         _per_call(lambda: redact("suite.toml::gsm8k::test_gsm8k[test-model/gsm8k-1234] PASSED      [ 50%]"), 50_000)),
    ]
    for name, seconds in rows:
        print(f"{name:48s} {seconds * 1e6:10.1f} us")


if __name__ == "__main__":
    main()
