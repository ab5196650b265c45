"""ipw: the mixed benchmark for Intelligence Per Watt, a fixed mix of the bundled sets (runs offline).

The mix (``SOURCES``): ten items from each of eight bundled sets, ``quickstart``, ``doc_qa``,
``email_triage``, ``security_scanner``, ``coding_assistant``, ``coding_task``,
``browser_assistant`` (direct mode) and ``loghub``, 80 items in all. From a set of ``n``
samples (its bundled file, in file order) the items at positions ``floor(i * n / 10)`` for
``i = 0..9`` are taken, so the mix spreads over each file and never changes with the seed;
``max_samples`` then subsets the 80 as for any benchmark. Record ids are
``<source>.<source id>`` (``doc_qa.dq-01``), and ``subject`` is the source, so
``per_subject`` is the accuracy per source set.

Each item is asked with its source's prompt and scored by its source's registered scorer
(:func:`pytest_jeval.scoring.registry.call_scorer`, the one ``jeval rescore`` uses), with
the source's own rules (composites and thresholds, sandboxed tests for the code sets).
The suite's ``data_files`` are refused: the mix is defined by the bundled files.

Summary fields (``summarize_ipw``), from the JSONL records alone:

| field | value |
|---|---|
| ``mix`` | items per source |
| ``energy_measured_samples`` | records with a measured ``energy_joules`` |
| ``accuracy_per_joule`` | ``accuracy / total_energy_joules`` (the run's IPJ) |
| ``accuracy_per_watt`` | ``accuracy / mean(power_watts)`` (the run's IPW) |
| ``per_source`` | per source: ``samples``, ``accuracy``, ``energy_joules`` and the two ratios |

``accuracy`` is correct / samples without an error (unscored counts as wrong), as in every
summary; energy and power are those of the records that have them. Without telemetry (no
GPU, ``telemetry = false``, every reply from the cache) the per-joule and per-watt fields are
null, never 0.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._codeexec import exec_workers, run_jobs
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.suite.catalog import builtin_index
from pytest_jeval.suite.dataset import DatasetLoadError
from pytest_jeval.telemetry.efficiency import summary_ipj, summary_ipw

#: The source sets of the mix, in order.
SOURCES = ("quickstart", "doc_qa", "email_triage", "security_scanner", "coding_assistant", "coding_task",
           "browser_assistant", "loghub")
#: Items drawn from each source.
PER_SOURCE = 10


def _source_benchmark(name: str) -> tuple[Benchmark, Any]:
    module = importlib.import_module(builtin_index()[name])
    bench = module.BENCHMARK
    assert isinstance(bench, Benchmark) and bench.name == name
    return bench, module


def positions(n: int, k: int = PER_SOURCE) -> list[int]:
    """The drawn positions of a set of ``n`` samples: ``floor(i * n / k)`` for ``i < k`` (all when n <= k)."""
    if n <= k:
        return list(range(n))
    return [i * n // k for i in range(k)]


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterable[dict[str, Any]]:
    """The mix: each source's bundled samples, drawn by :func:`positions`, as plain rows."""
    from pytest_jeval.suite.dataset import load_samples

    if files:
        raise DatasetLoadError("ipw draws a fixed mix from the bundled sets; remove data_files from its entry")
    for name in SOURCES:
        bench, module = _source_benchmark(name)
        samples, _ = load_samples(bench, files=bench.default_files(module.__file__), seed=ctx.seed)
        for i in positions(len(samples)):
            s = samples[i]
            yield {"source": name, "id": s.id, "input": s.input, "target": s.target, "choices": list(s.choices),
                   "subject": s.subject, "metadata": s.metadata, "index": s.index}


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One mixed item: its source's sample, wrapped (id ``<source>.<id>``, subject the source)."""
    if row["source"] not in SOURCES:
        raise ValueError(f"unknown source {row['source']!r}")
    return Sample(
        id=f"{row['source']}.{row['id']}",
        input=row["input"],
        target=row["target"],
        choices=tuple(row["choices"]),
        subject=row["source"],
        metadata={"source": row["source"], "source_id": row["id"], "source_subject": row["subject"],
                  "source_index": row["index"], "source_metadata": row["metadata"]},
    )


def source_sample(sample: Sample) -> Sample:
    """The sample as its source benchmark made it."""
    m = sample.metadata
    return Sample(id=m["source_id"], input=sample.input, target=sample.target, choices=sample.choices,
                  subject=m["source_subject"], metadata=m["source_metadata"], index=m["source_index"])


def prompt(sample: Sample) -> Any:
    """The source benchmark's prompt for the item."""
    bench, _ = _source_benchmark(sample.metadata["source"])
    return bench.prompt(source_sample(sample))


def score_item(reply_text: str, sample: Sample) -> Score:
    """Score with the source's registered scorer; the source is added to the metadata."""
    import dataclasses

    from pytest_jeval.scoring.registry import call_scorer

    bench, _ = _source_benchmark(sample.metadata["source"])
    inner = source_sample(sample)
    record = {"record_id": inner.id, "model_answer": reply_text, "expected": inner.target,
              "question": inner.input, "subject": inner.subject}
    result = call_scorer(bench.scorer, record, sample=inner)
    return dataclasses.replace(result, metadata={**result.metadata, "source": sample.metadata["source"],
                                                 "source_scorer": bench.scorer})


def _efficiency(records: list[dict[str, Any]]) -> dict[str, Any]:
    answered = [r for r in records if r.get("error") is None]
    accuracy = sum(r.get("is_correct") is True for r in answered) / len(answered) if answered else None
    energies = [float(r["energy_joules"]) for r in records if _number(r.get("energy_joules"))]
    powers = [float(r["power_watts"]) for r in records if _number(r.get("power_watts"))]
    total = sum(energies) if energies else None
    mean_power = sum(powers) / len(powers) if powers else None
    return {
        "samples": len(records),
        "accuracy": accuracy,
        "energy_joules": total,
        "accuracy_per_joule": summary_ipj(accuracy, total),
        "accuracy_per_watt": summary_ipw(accuracy, mean_power),
        "_measured": len(energies),
    }


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def summarize_ipw(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The mix, and accuracy per joule and per watt overall and per source (null without energy data)."""
    overall = _efficiency(records)
    by_source: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        source = str(r.get("subject") or str(r.get("record_id", "")).split(".", 1)[0])
        by_source.setdefault(source, []).append(r)
    per_source = {}
    for name in sorted(by_source):
        block = _efficiency(by_source[name])
        block.pop("_measured")
        per_source[name] = block
    return {
        "mix": {name: len(rs) for name, rs in sorted(by_source.items())},
        "energy_measured_samples": overall["_measured"],
        "accuracy_per_joule": overall["accuracy_per_joule"],
        "accuracy_per_watt": overall["accuracy_per_watt"],
        "per_source": per_source,
    }


BENCHMARK = Benchmark(
    name="ipw",
    category="chat",
    description="Intelligence Per Watt mix: 10 items from each of 8 bundled sets, scored by their own scorers",
    to_sample=to_sample,
    prompt=prompt,
    read_rows=read_rows,
    scorer="ipw",
    scoring="each item by its source's scorer; summary adds accuracy per joule / per watt",
    sample_count=PER_SOURCE * len(SOURCES),
    summarize_extra=summarize_ipw,
    backends=("direct",),
    data_source="bundled-mix",
)


def test_ipw(sample: Sample, response: Reply, score: Any, request: pytest.FixtureRequest) -> None:
    """Correct iff the source benchmark's scorer says so (code items run in the sandbox)."""
    (result,) = run_jobs([lambda: score_item(response.text, sample)], exec_workers(request.config))
    assert result is not None
    score(result)


@register_scorer("ipw", needs_sample=True)
def record_ipw(record: dict[str, Any], sample: Sample) -> Score:
    """ipw: the item's source scorer."""

    result: Score = score_item(answer_of(record), sample)
    return result
