"""Smoke test of the bundled local model: the demo suite's engine, over its own HTTP server."""

from __future__ import annotations

import json

import pytest


def test_local_model_answers_and_is_deterministic(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("suite.toml").write_text(
        """
[defaults]
max_tokens = 16

[run]
output_dir = "out"
cache = false

[[models]]
name = "smollm2-135m"
engine = "local"

[[benchmarks]]
name = "quickstart"
record_ids = ["qs-fact-01", "qs-arith-01"]
"""
    )
    first = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-n", "2")
    assert first.ret in (0, 1), first.stderr.str()
    first.stdout.fnmatch_lines(["*jeval results*", "quickstart*smollm2-135m*2*"])
    path = pytester.path / "out" / "quickstart_smollm2-135m.jsonl"
    answers = {r["record_id"]: r["model_answer"] for r in map(json.loads, path.read_text().splitlines())}
    assert set(answers) == {"qs-fact-01", "qs-arith-01"}
    assert all(a and a.strip() for a in answers.values())
    # identical temperature-0 requests give identical answers (no cache: the model answers again)
    pytester.runpytest_subprocess("--jeval-config", "suite.toml")
    again = {r["record_id"]: r["model_answer"] for r in map(json.loads, path.read_text().splitlines())}
    assert again == answers
