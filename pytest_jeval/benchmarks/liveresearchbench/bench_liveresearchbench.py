"""liveresearchbench: LiveResearchBench's research questions, reports graded with DeepEval's five protocols.

The model writes a report for each question (the Hub's ``Salesforce/LiveResearchBench``, or ``data_files`` in its
schema); the ``[judge]`` grades it with every protocol, each its own column: presentation and coverage
(checklists), consistency and citation (issue counts on a rubric), depth (pairwise against the reference report of
the user's clone, both orders). A protocol the judge cannot grade is unscored for the item, never 0. See
:mod:`.protocols` and docs/liveresearchbench.md. The research side is closed-book by default, or a local corpus /
installed tools as for ``liveresearch`` (:mod:`pytest_jeval.benchmarks._research.mode`).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from pytest_jeval import Benchmark, HubDataset, LoadContext, Reply, Sample, Score
from pytest_jeval.agents import AgentSpec
from pytest_jeval.agents.spec import OracleStep, SayStep
from pytest_jeval.benchmarks._research.judgelog import JudgeLog
from pytest_jeval.benchmarks._research.mode import CorpusOptions, check_corpus, research_environment, research_mode
from pytest_jeval.benchmarks.liveresearchbench.data import LAYOUT, read_grouped
from pytest_jeval.benchmarks.liveresearchbench.protocols import (
    PROTOCOLS,
    checklist_ids,
    depth,
    pointwise,
    presentation_or_coverage,
)
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.config import BenchmarkEntry

Protocol = Literal["presentation", "coverage", "consistency", "citation", "depth"]
ALL: tuple[Protocol, ...] = ("presentation", "coverage", "consistency", "citation", "depth")
EXPECTED = "mean of the protocol scores >= 50 (pytest-jeval's per-report pass mark; upstream reports the columns)"
DEVIATIONS = (
    "the judge is the suite's [judge] model (upstream: GPT-5 and Gemini 2.5 Pro, averaged)",
    "a reply that is not JSON matching the protocol's schema leaves that protocol unscored (upstream's client "
    "retries, then the report's protocol is missing)",
    "checklist evaluations for item ids that were not asked are ignored (upstream adds them to the sum)",
)
OWN_WORDING = ("the judge prompts of {names} are pytest-jeval's own wording around upstream's fixed checklist, rubric "
               "tables and depth dimensions (the clone has no prompt function for them)")


def deviations(sources: dict[str, str] | None, protocols: list[str]) -> list[str]:
    """The record's differences from upstream: :data:`DEVIATIONS`, and which graded protocols' prompts are not
    upstream's (``sources`` from :func:`~.data.prompt_templates`; None when scoring again from stored replies)."""
    out = list(DEVIATIONS)
    own = [name for name in protocols if sources is not None and not str(sources.get(name, "")).startswith("upstream")]
    if own:
        out.insert(1, OWN_WORDING.format(names=", ".join(own)))
    return out


class Options(CorpusOptions):
    """``[benchmarks.options]`` of liveresearchbench."""

    protocols: list[Protocol] = Field(default_factory=lambda: list(ALL))
    """The protocols graded (upstream's ``--criteria``); all five by default."""
    realtime: bool = False
    """Fill the questions' date placeholders with the run's date (upstream's ``--use-realtime``) instead of using
    the static ``*_no_placeholder`` texts."""
    current_date: str | None = None
    """The date the judges are told is today (and ``realtime`` fills in), ISO ``YYYY-MM-DD``; default: the run's."""
    structured_output: bool = True
    """Ask the judge for JSON with ``response_format: json_schema`` (upstream's OpenAI path); false for judges
    that do not support it (the schema is in the prompt either way)."""

    @field_validator("current_date")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        if value is not None:
            datetime.date.fromisoformat(value)
        return value

    @field_validator("protocols")
    @classmethod
    def _some(cls, value: list[str]) -> list[str]:
        if not value or len(set(value)) != len(value):
            raise ValueError("name each protocol once, at least one")
        return value


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterator[dict[str, Any]]:
    """The questions grouped by ``qid`` with the clone's reference reports and protocol data (:mod:`.data`)."""
    return read_grouped(BENCHMARK, files, ctx)


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One question, its checklist, its reference report and the protocols to grade."""
    options = ctx.options if ctx.options is not None else Options()
    if not row["question"]:
        raise ValueError(f"question {row['qid']!r} has no text")
    return Sample(
        id=str(row["qid"]), input=str(row["question"]), target=EXPECTED,
        metadata={"checklists": list(row["checklists"]), "reference": row["reference"], "protocol": row["protocol"],
                  "protocols": list(options.protocols), "today": row["today"], "corpus": check_corpus(options),
                  "structured_output": options.structured_output},
    )


def grade(log: JudgeLog, *, query: str, report: str, meta: dict[str, Any]) -> dict[str, Any]:
    """Every asked protocol's verdict, by name (an empty report fails every protocol without a judge call)."""
    protocol = meta["protocol"]
    today = datetime.date.fromisoformat(meta["today"]).strftime("%B %d, %Y")
    structured = bool(meta.get("structured_output", True))
    templates = protocol.get("prompts")
    verdicts: dict[str, Any] = {}
    for name in meta["protocols"]:
        if not report.strip():
            verdicts[name] = {"score": 0.0, "empty_report": True}
            if name == "depth":
                verdicts[name]["outcomes"] = ["loss", "loss"]
            continue
        if name in ("presentation", "coverage"):
            items = (dict(protocol["presentation_questions"]) if name == "presentation"
                     else checklist_ids("q", meta["checklists"]))
            verdicts[name] = presentation_or_coverage(log, name, query=query, report=report, items=items, today=today,
                                                      structured=structured, templates=templates)
        elif name in ("consistency", "citation"):
            verdicts[name] = pointwise(log, name, query=query, report=report, rubric=protocol[f"{name}_rubric"],
                                       today=today, structured=structured, templates=templates)
        else:
            verdicts[name] = depth(log, query=query, report=report, reference=meta["reference"],
                                   dimensions=protocol["depth_dimensions"], structured=structured, templates=templates)
    return verdicts


def replay_context(meta: dict[str, Any]) -> dict[str, Any]:
    """What scoring again from stored judge replies needs besides them (kept in the record)."""
    protocol = meta["protocol"]
    return {"protocols": list(meta["protocols"]), "today": meta["today"], "checklist_items": len(meta["checklists"]),
            "presentation_items": sorted(protocol["presentation_questions"]),
            "has_reference": meta["reference"] is not None,
            "rubrics": {k: protocol[f"{k}_rubric"] for k in ("consistency", "citation")},
            "prompt_sources": {k: v for k, v in (protocol.get("prompt_sources") or {}).items()
                               if k in meta["protocols"]},
            "structured_output": bool(meta.get("structured_output", True))}


def to_score(verdicts: dict[str, Any], log: JudgeLog, extra: dict[str, Any], context: dict[str, Any]) -> Score:
    """The item's score: each protocol its column (None where unscored); value = mean of the scored ones / 100."""
    fields: dict[str, Any] = {name: verdicts[name]["score"] if name in verdicts else None for name in PROTOCOLS}
    fields["depth_outcomes"] = verdicts.get("depth", {}).get("outcomes") if "depth" in verdicts else None
    fields.update(extra)
    scored = [v["score"] for v in verdicts.values() if v.get("score") is not None]
    meta = {"protocols": verdicts, "deviations": deviations(context.get("prompt_sources"), list(verdicts)),
            "context": context, **log.metadata()}
    unscored = sorted(name for name, v in verdicts.items() if v.get("score") is None)
    if unscored:
        meta["unscored_protocols"] = unscored
    if not scored:
        reasons = "; ".join(f"{n}: {verdicts[n].get('unscored_reason')}" for n in unscored)
        return Score(correct=None, expected=EXPECTED, metadata={"unscored_reason": f"no protocol graded ({reasons})",
                                                                **meta}, fields=fields)
    value = sum(scored) / len(scored) / 100
    return Score(correct=value >= 0.5, value=value, extracted=round(value * 100, 2), expected=EXPECTED, metadata=meta,
                 fields=fields)


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The oracle's report: the question's reference report from the clone (upstream has one for each of the 80
    public questions); an empty report for a question without one, which fails every protocol."""
    return [SayStep(str(sample.metadata.get("reference") or ""))]


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Upstream's summary: each protocol's mean over the graded reports, and depth's win rate against the reference
    over both orders, ties excluded (wins / (wins + losses) x 100)."""
    ok = [r for r in records if r.get("error") is None]
    out: dict[str, Any] = {}
    for name in ("presentation", "coverage", "consistency", "citation"):
        values = [float(r[name]) for r in ok if isinstance(r.get(name), (int, float))]
        out[name] = {"mean": sum(values) / len(values) if values else None, "count": len(values),
                     "min": min(values, default=None), "max": max(values, default=None)}
    outcomes = [o for r in ok if isinstance(r.get("depth_outcomes"), list) and r.get("depth") is not None
                for o in r["depth_outcomes"]]
    wins, losses, ties = (outcomes.count(k) for k in ("win", "loss", "tie"))
    out["depth"] = {"win_rate": wins / (wins + losses) * 100 if wins + losses else None, "wins": wins,
                    "losses": losses, "ties": ties, "comparisons": len(outcomes)}
    out["research_modes"] = sorted({str((r.get("research_mode") or {}).get("mode")) for r in ok
                                    if r.get("research_mode")})
    out["do_nothing_baseline"] = "an empty report scores 0 on every protocol and loses both depth comparisons"
    return out


BENCHMARK = Benchmark(
    name="liveresearchbench",
    category="research",
    description="LiveResearchBench: research reports graded with DeepEval's 5 protocols (judge), each its own column",
    dataset=HubDataset(path="Salesforce/LiveResearchBench", name="question_with_checklist", split="test"),
    to_sample=to_sample,
    read_rows=read_rows,
    prompt=lambda s: s.input,
    scorer="liveresearchbench",
    scoring="DeepEval: presentation/coverage checklists, consistency/citation issue counts, depth pairwise vs "
            "reference (both orders)",
    needs_judge=True,
    sample_count=80,
    data_dir=LAYOUT,
    options=Options,
    summarize_extra=summarize,
    agent=AgentSpec(environment=research_environment, oracle=gold_steps),
)


def test_liveresearchbench(sample: Sample, response: Reply | None, judge: Any, score: Any,
                           benchmark_entry: BenchmarkEntry) -> None:
    """The report's protocols, each graded; passes when their mean is at least 50."""
    report = response.text if response is not None else ""
    log = JudgeLog(judge)
    verdicts = grade(log, query=sample.input, report=report, meta=sample.metadata)
    extra = {"research_mode": research_mode(benchmark_entry, BENCHMARK, sample), "judge_date": sample.metadata["today"]}
    score(to_score(verdicts, log, extra, replay_context(sample.metadata)))


@register_scorer("liveresearchbench", uses_judge=True)
def record_liveresearchbench(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """liveresearchbench: every protocol again from the record's stored judge replies (with ``reparse_judge``;
    otherwise the stored verdict)."""
    meta = record.get("scoring_metadata") or {}
    context = meta.get("context")
    if not reparse_judge or not meta.get("judge_calls") or not isinstance(context, dict):
        return stored_score(record)
    replay_meta = {
        "protocols": context["protocols"], "today": context["today"], "checklists": ["?"] * context["checklist_items"],
        "reference": "(stored)" if context["has_reference"] else None,
        "structured_output": context.get("structured_output", True),
        "protocol": {"presentation_questions": dict.fromkeys(context["presentation_items"], "?"),
                     "consistency_rubric": context["rubrics"]["consistency"],
                     "citation_rubric": context["rubrics"]["citation"], "depth_dimensions": {}},
    }
    log = JudgeLog.replay(record)
    verdicts = grade(log, query="", report=answer_of(record), meta=replay_meta)
    extra = {"research_mode": record.get("research_mode"), "judge_date": record.get("judge_date")}
    return to_score(verdicts, log, extra, context)
