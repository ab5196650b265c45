"""``-n 2`` gives the same set of records as ``-n 0``; only the controller writes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.gsm import JevalProject

VOLATILE = {"latency_seconds", "throughput_tok_per_sec", "attempts", "cached", "call_windows"}


def _stable(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["record_id"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in records}


@pytest.mark.slow
def test_two_workers_write_the_same_records(jeval_project: JevalProject) -> None:
    p = jeval_project
    suite = p.suite(extra_run="cache = false")
    serial = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-output", "serial", "-p", "no:randomly")
    serial.assert_outcomes(passed=6, failed=3, errors=1)
    parallel = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-output", "parallel", "-n", "2")
    parallel.assert_outcomes(passed=6, failed=3, errors=1)
    parallel.stdout.fnmatch_lines(["*2 workers*", "*jeval results*"])
    a, b = p.records(out="serial"), p.records(out="parallel")
    assert len(b) == len(a) == 10  # no duplicates from workers
    assert _stable(a) == _stable(b)
    assert p.summary(out="serial")["accuracy"] == p.summary(out="parallel")["accuracy"]
    # only the controller writes: no per-worker files
    assert sorted(f.name for f in (p.pytester.path / "parallel").iterdir() if f.is_file()) == [
        "gsm8k_test-model.jsonl",
        "gsm8k_test-model.jsonl.summary.json",
        "summary.json",
    ]
