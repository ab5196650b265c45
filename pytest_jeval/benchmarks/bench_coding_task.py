"""coding_task: write one Python function from its signature, a specification and an example or two.

Synthetic, shipped as ``data/coding_task.jsonl`` (32 tasks written for this set: strings,
lists, dicts, math, parsing; the gold of 20 imports a standard-library module:
``datetime``, ``collections``, ``re``, ``itertools``, ``json``, ``heapq``, ``csv``,
``statistics``, ``bisect``, ``urllib.parse``, ...). Unlike ``humaneval`` the prompt is not a
docstring to complete: it is a specification. Schema: ``id``, ``subject``, ``entry_point``
(the function's name), ``signature`` (its ``def`` line), ``spec`` (what it must do),
``examples`` (one or two ``call == result`` lines shown to the model), ``hidden_tests``
(``test_*`` functions, never shown), ``solution`` (the reference: the gold, checked by the
tests to pass every hidden test) and ``stdlib`` (the modules the reference imports).

Scoring: the fenced Python block of the reply that defines ``entry_point`` (else the last
one, else the raw reply) is loaded in the sandbox by the trusted harness, which calls each
hidden test in turn and reports a verdict per test (as ``coding_assistant`` does, see
docs/sandbox.md). ``score`` is the share of hidden tests passed; ``is_correct`` needs all of
them. A reply without code is unscored.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._codeexec import defines, exec_workers, extract_code, run_jobs, summarize_code
from pytest_jeval.benchmarks.bench_coding_assistant import harness_job, judge_run, list_tests
from pytest_jeval.sandbox import run_harness
from pytest_jeval.scoring.registry import answer_of, register_scorer

#: Wall-clock seconds for one task's whole test run.
TIMEOUT = 10.0
#: Address-space limit, in MiB.
MEMORY_MB = 512

PROMPT = """Write this Python function.

```python
{signature}
```

Specification: {spec}

Example{plural}:
{examples}

You may import modules of the Python standard library. Reply with the complete function (imports included) in a single ```python code block."""  # noqa: E501 - prompt text kept verbatim


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One function to write; its hidden tests must define ``test_*`` functions."""
    names = list_tests(row["hidden_tests"])
    if not names or len(set(names)) != len(names):
        raise ValueError(f"{row['id']}: hidden_tests must define uniquely named test_* functions")
    if not row["examples"]:
        raise ValueError(f"{row['id']}: at least one example is shown")
    if not row["signature"].lstrip().startswith(f"def {row['entry_point']}("):
        raise ValueError(f"{row['id']}: the signature does not define {row['entry_point']}")
    return Sample(
        id=row["id"],
        input=row["spec"],
        target=f"all {len(names)} hidden tests pass",
        subject=row["subject"],
        metadata={
            "entry_point": row["entry_point"],
            "signature": row["signature"],
            "examples": list(row["examples"]),
            "hidden_tests": row["hidden_tests"],
            "solution": row["solution"],
            "stdlib": list(row.get("stdlib") or []),
        },
    )


def prompt(sample: Sample) -> str:
    """Signature, specification and the visible examples (never the hidden tests)."""
    m = sample.metadata
    examples = "\n".join(f"    {e}" for e in m["examples"])
    return PROMPT.format(signature=m["signature"], spec=sample.input, examples=examples,
                         plural="s" if len(m["examples"]) > 1 else "")


def score_task(reply_text: str, sample: Sample, *, timeout: float = TIMEOUT, memory_mb: int = MEMORY_MB) -> Score:
    """Run the hidden tests against the model's function in the sandbox; score = share passed."""
    m = sample.metadata
    names = list_tests(m["hidden_tests"])
    expected = sample.target
    code, how = extract_code(reply_text, prefer_defining=m["entry_point"])
    if code is None or not code.strip():
        return Score.unscorable("no Python code in the reply", expected=expected, extraction=how)
    result = run_harness(harness_job(code, [(m["hidden_tests"], n) for n in names]), timeout=timeout,
                         memory_mb=memory_mb)
    verdicts = judge_run(result, names)
    passed = sum(v["verdict"] == "passed" for v in verdicts)
    first = next((v for v in verdicts if v["verdict"] != "passed"), None)
    metadata = {
        "reason": "passed" if first is None else first["verdict"],
        "passed": passed,
        "total": len(names),
        "extraction": how,
        "defines_entry_point": defines(code, m["entry_point"]),
        "tests": verdicts,
        "status": result.status,
        "duration": round(result.duration, 4),
        "isolation": list(result.isolation),
    }
    extracted = f"{passed}/{len(names)} hidden tests passed"
    if first is not None:
        extracted += f"; {first['name']}: {first['verdict']}"
    return Score(correct=passed == len(names), value=round(passed / len(names), 4), extracted=extracted,
                 expected=expected, metadata=metadata)


BENCHMARK = Benchmark(
    name="coding_task",
    category="use-case",
    description="Function-level code generation from a specification, checked by hidden unit tests in the sandbox",
    bundled_files=("data/coding_task.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="coding_task",
    scoring="sandboxed hidden tests (score = share passed; correct = all pass)",
    sample_count=32,
    summarize_extra=summarize_code,
)


def test_coding_task(sample: Sample, response: Reply, score: Any, request: pytest.FixtureRequest) -> None:
    """Correct iff the function passes every hidden test."""
    (result,) = run_jobs([lambda: score_task(response.text, sample)], exec_workers(request.config))
    assert result is not None
    score(result)


@register_scorer("coding_task", needs_sample=True)
def record_coding_task(record: dict[str, Any], sample: Sample) -> Score:
    """coding_task: the hidden tests, in the sandbox."""

    result: Score = score_task(answer_of(record), sample)
    return result
