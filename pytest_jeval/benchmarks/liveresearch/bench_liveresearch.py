"""liveresearch (alias deepresearch): DeepResearch Bench's 100 deep-research tasks, reports scored with RACE.

The model writes a research report for each task (``data/prompt_data/query.jsonl`` of the user's clone, the
suite's ``data_dir``); the ``[judge]`` scores it against the task's reference report on the task's weighted
criteria, and the score is target / (target + reference) as upstream computes it (:mod:`.race`,
:mod:`.scoring`). The research side is closed-book by default; ``backend = "agent"`` with
``tools = ["search", "read"]`` and ``[benchmarks.options] corpus = "folder"`` gives the model a local corpus, and an
installed web-search tool is named in ``tools`` the same way (:mod:`pytest_jeval.benchmarks._research.mode`).
FACT (citation checking against the cited pages) runs only with a fetcher of the user's (``fact_fetcher``,
:mod:`.fact`); otherwise every record says it did not run. See docs/liveresearch.md.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.agents import AgentSpec
from pytest_jeval.agents.spec import OracleStep, SayStep
from pytest_jeval.benchmarks._research.judgelog import JudgeLog
from pytest_jeval.benchmarks._research.mode import CorpusOptions, check_corpus, research_environment, research_mode
from pytest_jeval.benchmarks.liveresearch.data import LAYOUT, read_rows
from pytest_jeval.benchmarks.liveresearch.fact import run_fact, summarize_fact
from pytest_jeval.benchmarks.liveresearch.race import DIMENSIONS
from pytest_jeval.benchmarks.liveresearch.scoring import EXPECTED, FACT_NOTE, race_score
from pytest_jeval.core.registry import load_reference
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.config import BenchmarkEntry


class Options(CorpusOptions):
    """``[benchmarks.options]`` of liveresearch."""

    language: Literal["all", "en", "zh"] = "all"
    """Which tasks run: all 100 (upstream's run), or the 50 English or 50 Chinese ones."""
    clean_articles: bool = True
    """Have the judge clean the report of citations before scoring it (upstream's step; false is its
    ``--skip_cleaning``)."""
    judge_attempts: int = Field(10, ge=1, le=20)
    """Judge calls per step before the task is left unscored (upstream's ``MAX_RETRIES``, 10)."""
    fact_fetcher: str | None = None
    """``"package.module:function"``, a ``fetch(url) -> page text`` of yours: with it FACT runs (the citation
    check needs each cited page); without it FACT does not run and every record says so."""

    @field_validator("fact_fetcher")
    @classmethod
    def _callable(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                found = load_reference(value)
            except Exception as exc:
                raise ValueError(f"cannot load the fetcher {value!r}: {type(exc).__name__}: {exc}") from None
            if ":" not in value or not callable(found):
                raise ValueError(f"{value!r} must name a function, as \"package.module:function\"")
        return value


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One task, with its criteria, reference report and judge prompts (and the run's corpus and options)."""
    task = row["task"]
    options = ctx.options if ctx.options is not None else Options()
    return Sample(
        id=f"{ctx.benchmark}-{task['id']}",
        input=str(task["prompt"]),
        target=EXPECTED,
        subject=str(task.get("topic") or "") or None,
        metadata={"language": task.get("language"), "task_id": task["id"], "criteria": row["criteria"],
                  "reference": row["reference"], "templates": row["templates"],
                  "template_sources": row["template_sources"], "corpus": check_corpus(options),
                  "clean_articles": options.clean_articles, "judge_attempts": options.judge_attempts,
                  "fact_prompts": row["fact_prompts"], "fact_fetcher": options.fact_fetcher},
    )


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The reference report: RACE scores it 0.5 against itself, at least as good as the reference."""
    return [SayStep(str(sample.metadata["reference"]))]


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The published figures: the mean RACE overall and dimension scores (x100) over the scored tasks."""
    scored = [r for r in records if r.get("error") is None and isinstance(r.get("race_overall"), (int, float))]
    n = len(scored)
    race = {k: (sum(float(r[f"race_{k}"]) for r in scored) / n if n else None) for k in ("overall", *DIMENSIONS)}
    modes = sorted({str((r.get("research_mode") or {}).get("mode")) for r in records if r.get("research_mode")})
    return {"race": race, "race_scored": n, "race_unscored": sum(1 for r in records if r.get("unscored")),
            "research_modes": modes, "fact": summarize_fact(records) or FACT_NOTE,
            "do_nothing_baseline": "an empty report scores RACE 0 (fails); the reference itself scores 50"}


BENCHMARK = Benchmark(
    name="liveresearch",
    aliases=("deepresearch",),
    category="research",
    description="DeepResearch Bench: deep research reports, RACE vs reference reports (judge); FACT with a fetcher",
    to_sample=to_sample,
    read_rows=read_rows,
    prompt=lambda s: s.input,
    scorer="liveresearch",
    scoring="RACE: judge scores vs the reference report, target/(target+reference), x100; correct >= 50",
    needs_judge=True,
    sample_count=100,
    data_source="github:Ayanami0730/deep_research_bench",
    data_dir=LAYOUT,
    options=Options,
    summarize_extra=summarize,
    agent=AgentSpec(environment=research_environment, oracle=gold_steps),
)


def test_liveresearch(sample: Sample, response: Reply | None, judge: Any, score: Any,
                      benchmark_entry: BenchmarkEntry) -> None:
    """RACE overall >= 0.5: the report is at least as good as the reference on the task's weighted criteria."""
    meta = sample.metadata
    report = response.text if response is not None else ""
    mode = research_mode(benchmark_entry, BENCHMARK, sample)
    log = JudgeLog(judge)
    extra: dict[str, Any] = {"research_mode": mode, "template_sources": meta["template_sources"]}
    if meta.get("fact_fetcher") and report.strip():
        extra["fact"] = run_fact(log, load_reference(str(meta["fact_fetcher"])), report=report,
                                 prompts=meta["fact_prompts"], language=str(meta.get("language")))
    score(race_score(log, task=sample.input, report=report, reference=str(meta["reference"]),
                     criteria=meta["criteria"], templates=meta["templates"], language=str(meta.get("language")),
                     clean=bool(meta["clean_articles"]), attempts=int(meta["judge_attempts"]), extra=extra))


@register_scorer("liveresearch", uses_judge=True)
def record_liveresearch(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """liveresearch: RACE again from the record's stored judge replies and criteria weights (with
    ``reparse_judge``; otherwise the stored verdict)."""
    meta = record.get("scoring_metadata") or {}
    if not reparse_judge or not meta.get("judge_calls"):
        return stored_score(record)
    criteria = meta.get("criteria") or {}
    extra: dict[str, Any] = {"research_mode": record.get("research_mode"), "template_sources": {}}
    log = JudgeLog.replay(record)
    if isinstance(record.get("fact"), dict):
        extra["fact"] = run_fact(log, None, report=answer_of(record), prompts={},
                                 language=str(meta.get("language") or "en"))
    return race_score(log, task="", report=answer_of(record), reference="", criteria=criteria,
                      templates={}, language=str(meta.get("language") or "en"),
                      clean=bool(meta.get("clean_articles", True)), attempts=int(meta.get("judge_attempts") or 10),
                      extra=extra)
