"""Judge benchmarks: a gold set plus an evaluator, turned into a :class:`~pytest_jeval.Benchmark`.

A suite entry such as::

    [[benchmarks]]
    name = "my-factuality"
    evaluator = "factuality"
    data_files = "gold/factuality.jsonl"
    repeats = 3

becomes a benchmark whose samples are the gold items. The gold set is any file
``datasets`` can load (JSONL, JSON, CSV, parquet) with the columns ``id``
(optional), ``input``, ``output``, ``expected`` (optional), ``context``
(optional), ``criteria`` (optional), ``gold``, and optionally ``subject``; other
columns (``database``, ``source_language``, ``output_1``, ...) are passed to the
evaluator. Structured cells (tool calls, JSON, chunk lists) are best stored as
JSON text, because Arrow merges the keys of objects across rows.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval.core.benchmark import Benchmark, LoadContext
from pytest_jeval.core.chat import PromptLike
from pytest_jeval.core.sample import Sample
from pytest_jeval.judge_bench.summary import judge_metrics
from pytest_jeval.scoring.judging.cases import CaseSpec
from pytest_jeval.scoring.judging.probability import TOP_LOGPROBS
from pytest_jeval.scoring.judging.registry import Evaluator, EvaluatorError, GoldItem, JudgeSetupError, get_evaluator
from pytest_jeval.suite.config import BenchmarkEntry

__all__ = ["JudgeSetupError", "gold_item", "judge_setup", "make_judge_benchmark"]

#: Gold-set columns with a fixed meaning; every other column goes to ``GoldItem.extra``.
STANDARD_COLUMNS = ("id", "input", "output", "expected", "context", "criteria", "gold", "subject")


def judge_setup(entry: BenchmarkEntry) -> tuple[Evaluator, CaseSpec]:
    """The evaluator and case spec of a suite entry; JudgeSetupError names the bad key."""
    if not entry.evaluator:
        raise JudgeSetupError("evaluator", "a judge benchmark needs evaluator = \"...\"")
    evaluator = get_evaluator(entry.evaluator)
    spec = evaluator.spec(entry.kind, entry.scale)
    database = entry.database  # resolved against the suite file by the plan
    if database and hasattr(evaluator, "default_database"):
        evaluator.default_database = str(database)
    return evaluator, spec


def _blank(value: Any) -> bool:
    return (value is None or (isinstance(value, str) and not value.strip())
            or (isinstance(value, float) and value != value))


def gold_item(sample: Sample) -> GoldItem:
    """The evaluator's view of a judge-benchmark sample."""
    m = sample.metadata
    return GoldItem(
        input=sample.input,
        output=m.get("output"),
        expected=m.get("expected"),
        context=m.get("context"),
        criteria=m.get("criteria"),
        extra=dict(m.get("extra") or {}),
        data_dir=m.get("data_dir"),
    )


def _to_sample_fn(evaluator: Evaluator, spec: CaseSpec) -> Any:
    def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
        if "input" not in row or "gold" not in row:
            raise KeyError("a gold set needs the columns 'input' and 'gold'")
        record_id = str(row["id"]) if not _blank(row.get("id")) else ctx.default_id(index)
        extra = {k: v for k, v in row.items() if k not in STANDARD_COLUMNS and not _blank(v)}
        metadata: dict[str, Any] = {
            "output": None if _blank(row.get("output")) else row.get("output"),
            "expected": None if _blank(row.get("expected")) else row.get("expected"),
            "context": None if _blank(row.get("context")) else row.get("context"),
            "criteria": None if _blank(row.get("criteria")) else str(row["criteria"]),
            "extra": extra,
            "data_dir": str(ctx.data_dir) if ctx.data_dir is not None else None,
            "gold_raw": row["gold"],
        }
        for column in evaluator.required_columns:
            value = metadata.get(column, extra.get(column))
            if _blank(value):
                raise ValueError(f"record {record_id!r}: evaluator {evaluator.name!r} needs a {column!r} value")
        try:
            gold = spec.parse_gold(row["gold"], aliases=evaluator.gold_aliases)
        except ValueError as exc:
            raise ValueError(f"record {record_id!r}: {exc}") from None
        sample = Sample(
            id=record_id,
            input="" if _blank(row["input"]) else str(row["input"]),
            target=gold,
            subject=None if _blank(row.get("subject")) else str(row["subject"]),
            metadata=metadata,
            index=index,
        )
        try:
            evaluator.first_prompt(gold_item(sample), spec)  # fail at load time on an unusable row
        except EvaluatorError as exc:
            raise ValueError(f"record {record_id!r}: {exc}") from None
        return sample

    return to_sample


def make_judge_benchmark(entry: BenchmarkEntry) -> Benchmark:
    """The :class:`~pytest_jeval.Benchmark` of a ``[[benchmarks]]`` entry with ``evaluator = ...``.

    Its ``prompt`` is the evaluator's first prompt (None for code evaluators, which
    need no model call), so the plugin prefetches it; its ``scorer`` names the
    evaluator. The test module is :mod:`pytest_jeval.judge_bench.bench_judge`.
    """
    evaluator, spec = judge_setup(entry)

    def prompt(sample: Sample) -> PromptLike | None:
        return evaluator.first_prompt(gold_item(sample), spec)

    return Benchmark(
        name=entry.name,
        to_sample=_to_sample_fn(evaluator, spec),
        prompt=prompt,
        dataset=None,
        category="judge",
        description=f"judge benchmark: {evaluator.name} ({spec.describe()}) - {evaluator.description}",
        scorer=evaluator.name,
        needs_judge=False,
        # the prefetched first prompt already asks for the verdict's logprobs
        request_options={"logprobs": True, "top_logprobs": TOP_LOGPROBS} if evaluator.uses_model else {},
        summarize_extra=judge_metrics,
    )
