"""HumanEval: 164 hand-written Python functions, scored by running their unit tests in the sandbox.

Hub: ``openai/openai_humaneval`` (split ``test``); the same rows are published as
``data/HumanEval.jsonl.gz`` in https://github.com/openai/human-eval. Schema:
``task_id`` (``HumanEval/<n>``, the record id), ``prompt`` (imports, signature and
docstring), ``canonical_solution`` (a reference body), ``test`` (defines
``check(candidate)``), ``entry_point`` (the function under test).

Scoring: the code is extracted from the reply (see ``_codeexec.extract_code`` and
``humaneval_completion``: a fenced or raw reply, a full function or only its body),
and checked in the sandbox (``pytest_jeval.sandbox.check_humaneval``): a trusted harness
runs the prompt's definitions and ``check`` against a proxy of the candidate function,
which runs in a separate process; only plain built-in values cross (type-aware equality),
and the verdict comes back on a channel the solution cannot write (docs/sandbox.md).
The verdict and the failure reason (wrong answer, exception, timeout, memory, killed)
are kept in ``scoring_metadata``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_jeval import Benchmark, HubDataset, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._codeexec import (
    exec_workers,
    extract_code,
    humaneval_completion,
    run_jobs,
    summarize_code,
)
from pytest_jeval.sandbox import check_humaneval, score_execution
from pytest_jeval.scoring.registry import answer_of, register_scorer

#: Wall-clock seconds for one problem's check (the CPU limit follows it).
TIMEOUT = 10.0
#: Address-space limit of the checking process, in MiB.
MEMORY_MB = 1024

PROMPT = (
    "Complete the following Python function. Reply with the complete function, signature "
    "included, in a single ```python code block.\n\n```python\n{prompt}```"
)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One HumanEval problem; the record id is its ``task_id``."""
    entry_point = row["entry_point"]
    return Sample(
        id=row["task_id"],
        input=row["prompt"],
        target=f"check({entry_point}) passes",
        metadata={"test": row["test"], "entry_point": entry_point},
    )


def score_humaneval(reply_text: str, sample: Sample, *, timeout: float = TIMEOUT, memory_mb: int = MEMORY_MB) -> Score:
    """Extract the code, run HumanEval's ``check`` on it in the sandbox, and say why it failed."""
    entry_point = sample.metadata["entry_point"]
    expected = sample.target
    code, how = extract_code(reply_text, prefer_defining=entry_point)
    if code is None or not code.strip():
        return Score.unscorable("no Python code in the reply", expected=expected, extraction=how)
    completion, mode = humaneval_completion(code, sample.input, entry_point)
    result = check_humaneval(sample.input, completion, sample.metadata["test"], entry_point,
                             timeout=timeout, memory_mb=memory_mb)
    base = score_execution(result)
    reason = base.metadata["reason"]
    metadata = {
        **base.metadata,
        "extraction": how,
        "mode": mode,
        "passed": int(result.ok),
        "total": 1,
        "tests": [{"name": "check", "verdict": reason, "duration": round(result.duration, 4)}],
    }
    return dataclasses.replace(base, extracted=reason, expected=expected, metadata=metadata)


BENCHMARK = Benchmark(
    name="humaneval",
    category="coding",
    description="Python function synthesis, checked by running HumanEval's unit tests in the sandbox",
    dataset=HubDataset(path="openai/openai_humaneval", split="test", id_column="task_id"),
    to_sample=to_sample,
    prompt=lambda s: PROMPT.format(prompt=s.input),
    scorer="humaneval",
    scoring="sandboxed unit tests (pass@1)",
    sample_count=164,
    summarize_extra=summarize_code,
)


def test_humaneval(sample: Sample, response: Reply, score: Any, request: pytest.FixtureRequest) -> None:
    """Correct iff ``check(entry_point)`` passes on the extracted code in the sandbox."""
    workers = exec_workers(request.config)
    (result,) = run_jobs([lambda: score_humaneval(response.text, sample)], workers)
    assert result is not None
    score(result)


@register_scorer("humaneval", needs_sample=True)
def record_humaneval(record: dict[str, Any], sample: Sample) -> Score:
    """HumanEval: ``check(entry_point)`` on the extracted code, in the sandbox."""

    result: Score = score_humaneval(answer_of(record), sample)
    return result
