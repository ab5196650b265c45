"""MATH-500: the 500-problem test subset of MATH used by "Let's Verify Step by Step".

Hub: ``HuggingFaceH4/MATH-500`` (split ``test``, 500 rows); the same file as
``prm800k/math_splits/test.jsonl``. Schema ``problem``, ``solution``, ``answer``
(the LaTeX gold), ``subject`` (per_subject), ``level`` (1-5), ``unique_id`` (the
record id, e.g. ``test/precalculus/807.json``).

Scored by :func:`pytest_jeval.scoring.math_equiv.score_math`: the last
``\\boxed{}`` (balanced braces) or final stated answer, compared as normalised
LaTeX, then numerically, then symbolically. Percent convention ``either``
(docs/scoring.md): ``20\\%`` matches the gold 20 or 0.2, and a gold ``20\\%`` the reply
20 or 0.2.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, Reply, Sample
from pytest_jeval.scoring.math_equiv import score_math
from pytest_jeval.scoring.numeric import PercentConvention

PERCENT: PercentConvention = "either"
"""How a percent sign is read (docs/scoring.md, "Percentages")."""

PROMPT = (
    "Solve the following math problem. Think step by step, then put your final answer "
    "within \\boxed{{}}.\n\n{problem}"
)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One MATH-500 row; the gold is the ``answer`` column."""
    uid = row.get("unique_id")
    return Sample(
        id=str(uid) if uid else ctx.default_id(index),
        input=str(row["problem"]),
        target=str(row["answer"]),
        subject=row.get("subject"),
        metadata={"level": row.get("level")},
    )


BENCHMARK = Benchmark(
    name="math500",
    category="math",
    description="MATH-500 competition math, LaTeX answers checked for equivalence",
    dataset=HubDataset(path="HuggingFaceH4/MATH-500", split="test", id_column="unique_id"),
    to_sample=to_sample,
    prompt=lambda s: PROMPT.format(problem=s.input),
    scorer="math",
    scoring="math-equivalence (string, numeric, symbolic)",
    sample_count=500,
)


def test_math500(sample: Sample, response: Reply, score: Any) -> None:
    """The final answer is mathematically equal to the gold answer."""
    score(score_math(response.text, sample.target, percent=PERCENT))
