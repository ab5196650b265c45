"""Regenerate the result-file fixtures of tests/cli/ and tests/report/test_html.py.

    .venv/bin/python tests/data/results/make_fixtures.py

Two quickstart runs (``model-a``, ``model-b``) scored with the benchmark's own scorers,
and one boolean judge run (``halueval-judge`` x ``judge-a``, evaluator ``closed_qa``) with
probabilities from logprobs.
The outcomes are chosen so that the comparison's numbers are known by hand (see the tests).
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks.bench_quickstart import score_text, to_sample
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.judge_bench import CaseSpec, Judgment, get_evaluator
from pytest_jeval.judge_bench.bench_judge import score_of
from pytest_jeval.results.reader import recompute_summary
from pytest_jeval.results.records import EXTRA_FIELDS, RECORD_FIELDS, plain
from pytest_jeval.results.summary import write_summary
from pytest_jeval.scoring.mcq import score_choice
from pytest_jeval.scoring.numeric import score_numeric

HERE = Path(__file__).parent
QUICKSTART = Path(__file__).resolve().parents[3] / "pytest_jeval" / "benchmarks" / "data" / "quickstart.jsonl"
STARTED = 1767225600.0  # 2026-01-01 00:00 UTC

# c correct, w wrong, u unscored, e endpoint error, - absent
OUTCOMES = {
    "model-a": "ccwccwcuccwc-",
    "model-b": "ccccwccccec-c",
}
ROWS = ["qs-arith-01", "qs-arith-02", "qs-arith-03", "qs-arith-04", "qs-fact-01", "qs-fact-02", "qs-fact-03",
        "qs-fact-04", "qs-mc-01", "qs-mc-02", "qs-mc-03", "qs-mc-04", "qs-mc-05"]


def blank(**fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {k: None for k in (*RECORD_FIELDS, *EXTRA_FIELDS)}
    record.update(backend="direct", scoring_metadata={}, unscored=False, cached=False, attempts=1)
    record.update(fields)
    return record


def answer_for(sample: Any, outcome: str) -> str:
    kind = sample.metadata["kind"]
    if outcome == "u":
        return {"numeric": "I am not sure.", "choice": "Hmm, hard to say.", "text": ""}[kind]
    if kind == "numeric":
        return sample.target if outcome == "c" else str(int(sample.target) + 1)
    if kind == "choice":
        letters = string.ascii_uppercase[: len(sample.choices)]
        wrong = next(x for x in letters if x != sample.target)
        return f"Answer: {sample.target if outcome == 'c' else wrong}"
    return f"It is {sample.target}." if outcome == "c" else "It is Atlantis."


def score(sample: Any, reply: str) -> Any:
    kind = sample.metadata["kind"]
    if kind == "numeric":
        return score_numeric(reply, sample.target)
    if kind == "choice":
        return score_choice(reply, sample.target, string.ascii_uppercase[: len(sample.choices)])
    return score_text(reply, sample)


def quickstart_records(model: str) -> list[dict[str, Any]]:
    rows = {r["id"]: r for r in map(json.loads, QUICKSTART.read_text().splitlines())}
    ctx = LoadContext(benchmark="quickstart", subset=None, seed=42, data_dir=None)
    records = []
    for i, (rid, outcome) in enumerate(zip(ROWS, OUTCOMES[model])):
        if outcome == "-":
            continue
        sample = to_sample(rows[rid], i, ctx)
        base = blank(record_id=rid, benchmark="quickstart", model=model, subject=sample.subject,
                     question=sample.input, expected=sample.target)
        if outcome == "e":
            base["error"] = "HTTP 500 from http://127.0.0.1:8000/v1/chat/completions: internal error (after 4 retries)"
            base["attempts"] = 5
            records.append(base)
            continue
        reply = answer_for(sample, outcome)
        verdict = score(sample, reply)
        latency = 0.8 + 0.1 * i - (0.25 if model == "model-b" else 0.0)
        completion = (12 + i) if model == "model-a" else (30 + 2 * i)
        base.update(model_answer=reply, is_correct=verdict.correct, score=verdict.numeric,
                    latency_seconds=round(latency, 4), prompt_tokens=40 + i, completion_tokens=completion,
                    scoring_metadata=dict(verdict.metadata), extracted=verdict.extracted,
                    expected=verdict.expected if verdict.expected is not None else sample.target,
                    unscored=verdict.unscored, throughput_tok_per_sec=completion / latency,
                    energy_joules=round((2.0 if model == "model-a" else 5.0) + 0.1 * i, 4))
        records.append({k: plain(v) for k, v in base.items()})
    return records


def judge_records() -> list[dict[str, Any]]:
    """A closed_qa judge with logprob probabilities; scored by the judge benchmark's own ``score_of``."""
    evaluator, spec = get_evaluator("closed_qa"), CaseSpec.boolean()
    records = []
    for i in range(40):
        p_yes = round(0.02 + 0.96 * (i / 39) ** 1.5, 4)  # P(True), crowded towards 0
        gold = (i * 7919) % 100 < p_yes * 100
        judgment = Judgment(p_yes >= 0.5, distribution={True: p_yes, False: round(1 - p_yes, 4)},
                            probability_source="logprobs", allowed_mass=0.99, raw=("Yes" if p_yes >= 0.5 else "No",))
        verdict = score_of(evaluator, spec, gold, [judgment])
        base = blank(record_id=f"halueval-{i}", benchmark="halueval-judge", model="judge-a",
                     model_answer=judgment.raw[0], is_correct=verdict.correct, score=verdict.numeric,
                     latency_seconds=round(0.3 + 0.01 * i, 4), prompt_tokens=200 + i, completion_tokens=1,
                     question=f"Knowledge: ... Question #{i}: is this answer supported by the knowledge?",
                     expected=verdict.expected, extracted=verdict.extracted, scoring_metadata=dict(verdict.metadata))
        base.update(verdict.fields)
        records.append({k: plain(v) for k, v in base.items()})
    return records


def write(name: str, records: list[dict[str, Any]], category: str) -> None:
    path = HERE / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    stored = {"category": category, "started_at": STARTED, "ended_at": STARTED + 60.0}
    summary = recompute_summary(records, stored)
    summary["skipped_rows"] = 0
    write_summary(path.with_name(path.name + ".summary.json"), summary)


if __name__ == "__main__":
    write("quickstart_model-a.jsonl", quickstart_records("model-a"), "mixed")
    write("quickstart_model-b.jsonl", quickstart_records("model-b"), "mixed")
    write("halueval-judge_judge-a.jsonl", judge_records(), "judge")
