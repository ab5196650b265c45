"""The pytest module of every judge benchmark: one test item per gold item.

The ``judgments`` fixture runs the evaluator ``repeats`` times during setup (so an
endpoint failure is a pytest *error*, as for ordinary benchmarks): run 0 uses the
prefetched ``response`` to the evaluator's first prompt, runs k = 1..N-1 call
``model.chat(..., nonce=k)`` so the response cache does not make repeats
trivially identical. Every call asks for ``logprobs``/``top_logprobs``, the
prefetched one too (through the benchmark's ``request_options``), so run 0 costs
no extra call; an endpoint that returns no logprobs gives a null probability.

``test_judgment`` records a :class:`~pytest_jeval.Score` whose ``fields`` become
the record's ``gold``, ``predicted``, ``probability`` ... and passes when the
judgment is correct under the case's rule (exact for choice, boolean and 0-1
cases; within one level on 0-4 scales).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_jeval.calls.client import ModelClient
from pytest_jeval.core.benchmark import Benchmark
from pytest_jeval.core.chat import EndpointError, PromptLike, Reply
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score
from pytest_jeval.judge_bench.benchmark import gold_item, judge_setup, make_judge_benchmark
from pytest_jeval.judge_bench.summary import judge_metrics
from pytest_jeval.scoring.judging.cases import CaseSpec, expected_level, probability_correct
from pytest_jeval.scoring.judging.probability import LOW_MASS_THRESHOLD, TOP_LOGPROBS
from pytest_jeval.scoring.judging.registry import Chat, Evaluator, EvaluatorError, GoldItem, Judgment
from pytest_jeval.session.keys import case_key
from pytest_jeval.suite.config import BenchmarkEntry


def make_chat(model: ModelClient, nonce: int, first_prompt: PromptLike | None, first_reply: Reply | None) -> Chat:
    """The ``chat`` callable of one run: logprobs requested; run 0 reuses the prefetched reply to its first prompt."""

    def chat(prompt: PromptLike) -> Reply:
        if nonce == 0 and first_reply is not None and prompt == first_prompt:
            return first_reply
        return model.chat(prompt, logprobs=True, top_logprobs=TOP_LOGPROBS, nonce=nonce)

    return chat


def run_evaluator(evaluator: Evaluator, item: GoldItem, spec: CaseSpec, chat: Chat) -> Judgment:
    """One run; an item the evaluator cannot judge (EvaluatorError) is an unscored judgment."""
    try:
        return evaluator.run(item, spec, chat)
    except EvaluatorError as exc:
        return Evaluator.unscored(str(exc))


@pytest.fixture
def judgments(
    request: pytest.FixtureRequest,
    sample: Sample,
    response: Reply | None,
    model: ModelClient,
    benchmark_entry: BenchmarkEntry,
) -> list[Judgment] | None:
    """The evaluator's judgments of this item, one per repeat (None for an item resumed from a record)."""
    case = request.node.stash.get(case_key, None)
    if case is not None and case.resumed is not None:
        return None
    evaluator, spec = judge_setup(benchmark_entry)
    item = gold_item(sample)
    first_prompt = evaluator.first_prompt(item, spec)
    runs = []
    for k in range(benchmark_entry.repeats):
        chat = make_chat(model, k, first_prompt, response if k == 0 else None)
        try:
            runs.append(run_evaluator(evaluator, item, spec, chat))
        except EndpointError as exc:
            if case is not None:
                case.error = str(exc)
            raise
    return runs


def score_of(evaluator: Evaluator, spec: CaseSpec, gold: Any, runs: list[Judgment]) -> Score:
    """The :class:`Score` of an item from its runs: run 0 decides, later runs give ``repeat_predictions``."""
    first = runs[0]
    distribution = first.distribution
    probability = probability_correct(spec, first.predicted, distribution)
    fields: dict[str, Any] = {
        "evaluator": evaluator.name,
        "case_kind": spec.kind,
        "scale": list(spec.scale) if spec.scale else None,
        "labels": list(spec.labels),
        "tolerance": spec.tolerance,
        "gold": gold,
        "predicted": first.predicted,
        "probability": probability,
        "probability_source": first.probability_source,
        "label_probabilities": None if distribution is None else [[k, v] for k, v in distribution.items()],
        "p_positive": distribution.get(True) if distribution is not None and spec.kind == "boolean" else None,
        "allowed_mass": first.allowed_mass,
        "low_mass": None if first.allowed_mass is None else first.allowed_mass < LOW_MASS_THRESHOLD,
        "expected_level": expected_level(distribution) if distribution is not None and spec.kind == "score" else None,
        "repeat_predictions": [r.predicted for r in runs] if len(runs) > 1 else None,
        "raw_replies": list(first.raw) if first.raw else None,
    }
    fields.update(first.extra_fields)
    metadata: dict[str, Any] = {"details": first.details} if first.details else {}
    if first.unscored:
        metadata["unscored_reason"] = first.unscored_reason
        return Score(correct=None, expected=gold, metadata=metadata, fields=fields)
    return Score(correct=spec.is_correct(first.predicted, gold), extracted=first.predicted, expected=gold,
                 metadata=metadata, fields=fields)


def test_judgment(
    sample: Sample,
    response: Reply | None,
    model: ModelClient,
    benchmark_entry: BenchmarkEntry,
    score: Callable[[Score], None],
    judgments: list[Judgment] | None,
) -> None:
    """Score the evaluator's judgment of this gold item against its gold label."""
    if judgments is None:
        return  # resumed: the plugin reports the stored verdict and never calls this
    evaluator, spec = judge_setup(benchmark_entry)
    score(score_of(evaluator, spec, sample.target, judgments))


def validate_judge(entry: BenchmarkEntry, samples: list[Sample], judge: ModelClient, *,
                   workers: int = 8) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The ``[judge]`` on a gold set, as a judge benchmark runs it: ``(records, figures)``.

    Each gold item is judged once by ``entry``'s evaluator through ``judge`` (its calls cached like any
    other), ``workers`` items at a time; a record holds the judgment's fields (``gold``, ``predicted``,
    ``probability``, ...) or the endpoint ``error``, and ``figures`` are the judge-benchmark summary
    metrics over them (:func:`~pytest_jeval.judge_bench.summary.judge_metrics`: accuracy, Cohen's kappa,
    ECE, position consistency, ...). ``[judge] validate`` gates the run on them.
    """
    import concurrent.futures

    evaluator, spec = judge_setup(entry)

    def one(sample: Sample) -> dict[str, Any]:
        item = gold_item(sample)
        try:
            judgment = run_evaluator(evaluator, item, spec, make_chat(judge, 0, None, None))
        except EndpointError as exc:
            return {"record_id": sample.id, "error": str(exc), "is_correct": None}
        result = score_of(evaluator, spec, sample.target, [judgment])
        return {"record_id": sample.id, "error": None, "is_correct": result.correct, **result.fields}

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        records = list(pool.map(one, samples))
    return records, judge_metrics(records)


BENCHMARK = Benchmark(
    name="judge",
    to_sample=lambda row, index, ctx: None,
    prompt=lambda sample: None,
    category="judge",
    description="the judge family: an evaluator scored against a gold set (evaluator = ..., data_files = ...)",
    backends=("direct",),
    configure=make_judge_benchmark,
    summarize_extra=judge_metrics,
)
"""The template of every judge benchmark: a ``[[benchmarks]]`` entry with ``evaluator = ...`` runs the
benchmark :func:`~pytest_jeval.judge_bench.benchmark.make_judge_benchmark` builds from it, with the tests above."""
