"""coding_assistant: fix a bug in a small Python module; scored by running its tests in the sandbox.

Synthetic, shipped as ``data/coding_assistant.jsonl`` (30 items). Schema: ``id``,
``subject`` (kind of bug), ``title``, ``issue`` (the bug report), ``entry_point`` (the
function or class under repair), ``buggy_code``, ``tests`` (pytest-style ``test_*``
functions shown to the model; at least one fails on the buggy code), ``hidden_tests``
(more ``test_*`` functions, not shown, so special-casing the visible asserts does not
pass) and ``fixed_code`` (a reference fix: the gold, checked to pass every test while
the buggy code fails at least one).

Scoring: the model's code (the fenced Python block that defines ``entry_point``, else
the last one) is loaded in the sandbox by the trusted harness (``run_harness``, mode
``tests``), which then calls every visible and hidden test function, each in its own
``try``, and reports a verdict per test (passed, wrong answer = AssertionError,
exception, or the run's timeout / memory / killed status for the test that was
running, then "not run"). The tests run in the solution's process (they use its
classes and objects); their results reach the harness as nonce-tagged frames on a
close-on-exec pipe, never through stdout, ``json`` or anything the solution's module
namespace holds (see docs/sandbox.md for what this does and does not stop).
``score`` is the share of tests passed; ``is_correct`` requires all of them (threshold 1.0).
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._codeexec import (
    defines,
    exec_workers,
    extract_code,
    last_error_line,
    run_jobs,
    summarize_code,
)
from pytest_jeval.sandbox import ExecResult, run_harness
from pytest_jeval.scoring.registry import answer_of, register_scorer

#: Wall-clock seconds for one item's whole test run.
TIMEOUT = 10.0
#: Address-space limit, in MiB.
MEMORY_MB = 512
#: ``is_correct`` needs this share of tests passed.
THRESHOLD = 1.0

PROMPT = """You are a careful Python developer. Fix the bug described in this report.

Bug report: {issue}

```python
{code}```

These tests fail on the code above:

```python
{tests}```

Reply with the complete corrected code (every function, class and import of the module) in a single ```python code block."""  # noqa: E501 - prompt text kept verbatim


def list_tests(source: str) -> list[str]:
    """Names of the top-level ``test_*`` functions of a test source, in order."""
    return [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One bug-fix task."""
    visible, hidden = list_tests(row["tests"]), list_tests(row["hidden_tests"])
    if not visible or not hidden:
        raise ValueError(f"{row['id']}: tests and hidden_tests must define test_* functions")
    if len(set(visible + hidden)) != len(visible) + len(hidden):
        raise ValueError(f"{row['id']}: test function names must be unique")
    return Sample(
        id=row["id"],
        input=row["issue"],
        target=f"all {len(visible) + len(hidden)} tests pass",
        subject=row["subject"],
        metadata={
            "title": row["title"],
            "entry_point": row["entry_point"],
            "buggy_code": row["buggy_code"],
            "tests": row["tests"],
            "hidden_tests": row["hidden_tests"],
            "fixed_code": row["fixed_code"],
        },
    )


def prompt(sample: Sample) -> str:
    """Bug report, code and the failing tests."""
    m = sample.metadata
    return PROMPT.format(issue=sample.input, code=m["buggy_code"], tests=m["tests"])


def harness_job(code: str, tests: list[tuple[str, str]]) -> dict[str, Any]:
    """The harness job running each ``(source, name)`` test against ``code``, in order."""
    sources = sorted({src for src, _ in tests}, key=[src for src, _ in tests].index)
    calls = [[sources.index(src), name] for src, name in tests]
    return {"mode": "tests", "code": code, "sources": sources, "calls": calls}


def judge_run(result: ExecResult, names: list[str]) -> list[dict[str, Any]]:
    """Per-test verdicts from the harness's report; tests it never reached get the run's outcome."""
    reported = list((result.verdict or {}).get("tests") or [])[: len(names)]
    verdicts = [{"name": n, "verdict": r["verdict"], "detail": r.get("detail", "")} for n, r in zip(names, reported)]
    if len(verdicts) == len(names):
        return verdicts
    status = {"timeout": "timeout", "memory": "memory", "killed": "killed"}.get(result.status, "exception")
    detail = (result.verdict or {}).get("detail") or last_error_line(result.stderr) or (
        "the program exited before the tests finished" if result.status == "ok" else result.status)
    if not verdicts and status == "exception":
        # the module itself failed (syntax error, import-time crash): every test fails with it
        return [{"name": n, "verdict": "exception", "detail": detail} for n in names]
    verdicts.append({"name": names[len(verdicts)], "verdict": status, "detail": detail})
    verdicts.extend({"name": n, "verdict": "not run", "detail": ""} for n in names[len(verdicts):])
    return verdicts


def score_fix(reply_text: str, sample: Sample, *, timeout: float = TIMEOUT, memory_mb: int = MEMORY_MB) -> Score:
    """Run the visible and hidden tests against the model's code; score = share of tests passed."""
    m = sample.metadata
    visible, hidden = list_tests(m["tests"]), list_tests(m["hidden_tests"])
    names = visible + hidden
    expected = sample.target
    code, how = extract_code(reply_text, prefer_defining=m["entry_point"])
    if code is None or not code.strip():
        return Score.unscorable("no Python code in the reply", expected=expected, extraction=how)
    tests = [(m["tests"], n) for n in visible] + [(m["hidden_tests"], n) for n in hidden]
    result = run_harness(harness_job(code, tests), timeout=timeout, memory_mb=memory_mb)
    verdicts = judge_run(result, names)
    for v, name in zip(verdicts, names):
        v["hidden"] = name in hidden and name not in visible
    passed = sum(v["verdict"] == "passed" for v in verdicts)
    share = passed / len(names)
    first = next((v for v in verdicts if v["verdict"] != "passed"), None)
    reason = "passed" if first is None else first["verdict"]
    metadata = {
        "reason": reason,
        "passed": passed,
        "total": len(names),
        "visible_passed": sum(v["verdict"] == "passed" and not v["hidden"] for v in verdicts),
        "hidden_passed": sum(v["verdict"] == "passed" and v["hidden"] for v in verdicts),
        "threshold": THRESHOLD,
        "extraction": how,
        "defines_entry_point": defines(code, m["entry_point"]),
        "tests": verdicts,
        "status": result.status,
        "duration": round(result.duration, 4),
        "isolation": list(result.isolation),
    }
    extracted = f"{passed}/{len(names)} tests passed" + (f"; {first['name']}: {first['verdict']}" if first else "")
    return Score(correct=share >= THRESHOLD, value=round(share, 4), extracted=extracted, expected=expected,
                 metadata=metadata)


BENCHMARK = Benchmark(
    name="coding_assistant",
    category="use-case",
    description="Bug fixes in small Python modules, scored by running visible and hidden tests in the sandbox",
    bundled_files=("data/coding_assistant.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="coding_assistant",
    scoring="sandboxed tests (score = share passed; correct = all pass)",
    sample_count=30,
    summarize_extra=summarize_code,
)


def test_coding_assistant(sample: Sample, response: Reply, score: Any, request: pytest.FixtureRequest) -> None:
    """Correct iff the fixed code passes every visible and hidden test."""
    (result,) = run_jobs([lambda: score_fix(response.text, sample)], exec_workers(request.config))
    assert result is not None
    score(result)


@register_scorer("coding_assistant", needs_sample=True)
def record_coding_assistant(record: dict[str, Any], sample: Sample) -> Score:
    """coding_assistant: the visible and hidden tests, in the sandbox."""

    result: Score = score_fix(answer_of(record), sample)
    return result
