"""NaturalReasoning: open-ended reasoning questions back-translated from pretraining corpora.

Hub: ``facebook/natural_reasoning`` (split ``train``, 1,145,824 rows); schema
``question``, ``reference_answer`` (the gold, extracted from the source
document; empty or null for about 18% of the rows), ``responses`` (a list of
``{"response_model", "response"}``, a Llama-3.3-70B answer; not used). There is
no id column, so ids are ``natural-reasoning-<row index>``.

Rows without a ``reference_answer`` are skipped (counted as ``skipped_rows``).
The reply is judged by the ``[judge]`` model against ``reference_answer`` with
the structured verdict (``correct: yes|no``). The reference read a column that
does not exist, so every sample was compared with nothing. Without a judge the
items are unscored.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample
from pytest_jeval.scoring.llm_judge.prompts import structured_score

PROMPT = (
    "Answer the following question. Reason step by step, then state your final answer on the last "
    "line in the form 'Final answer: <answer>'.\n\n{question}"
)

GUIDANCE = (
    "The [correct_answer] was extracted from a reference document and may be longer than needed or "
    "phrased differently: judge whether the response's final answer is equivalent to it in substance "
    "(same value, expression, or conclusion), not whether the wording matches."
)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One question with its ``reference_answer``; None (skipped) when the reference is missing."""
    reference = row["reference_answer"]
    if reference is None or not str(reference).strip():
        return None
    return Sample(id=ctx.default_id(index), input=str(row["question"]), target=str(reference).strip())


BENCHMARK = Benchmark(
    name="natural-reasoning",
    category="math",
    description="NaturalReasoning open-ended reasoning, judged against reference_answer",
    dataset=HubDataset(path="facebook/natural_reasoning", split="train"),
    to_sample=to_sample,
    prompt=lambda s: PROMPT.format(question=s.input),
    scorer="judge",
    scoring="llm-judge vs reference_answer (structured verdict)",
    needs_judge=True,
    sample_count=1145824,
)


def test_natural_reasoning(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The judge finds the reply's final answer equivalent to ``reference_answer``."""
    score(structured_score(judge, question=sample.input, response=response.text,
                           correct_answer=sample.target, guidance=GUIDANCE))
