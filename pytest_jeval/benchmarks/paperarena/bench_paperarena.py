"""paperarena: PaperArena's questions about AI papers (multiple choice, concise and open answers), answered by an
agent with tools over the paper, each answer judged against the gold answer as upstream judges it.

The questions are upstream's QA files (``qa/<pdf_name>.json``: ``{"title", ..., "qa": [{"qa_id", "question",
"answer", "qa_type", "difficulty", "tool_chain", "reasoning"}]}``) in the suite's ``data_dir``; the papers come
from the user's own cache (``[benchmarks.options] papers``, :mod:`.papers`). PaperArena's dataset has no licence
file, so the project ships none of it. The agent reads the paper with ``paper_read``, searches it with
``paper_search`` and computes with ``python`` on its tables (:mod:`.tools`). Every type is scored as upstream's
``result_recorder`` scores it: the judge compares the answer with the gold answer and returns
``{"correct": "true"|"false", "reasoning", "confidence" 0-10}``; a judge that fails or answers otherwise leaves the
question unscored. See docs/paperarena.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from pytest_jeval import Benchmark, LoadContext, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks._research.judgelog import JudgeFailed, JudgeLog
from pytest_jeval.benchmarks._research.upstream import Template, UpstreamError, fstring, render
from pytest_jeval.benchmarks.paperarena.papers import find_paper
from pytest_jeval.benchmarks.paperarena.tools import TOOLS, environment
from pytest_jeval.scoring.registry import answer_of, register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.dataset import DatasetLoadError
from pytest_jeval.suite.options import SuitePath

QAType = Literal["Multi-Choice Answer", "Concise Answer", "Open Answer"]
Difficulty = Literal["Easy", "Medium", "Hard"]
QA_TYPES = ("Multi-Choice Answer", "Concise Answer", "Open Answer")
DIFFICULTIES = ("Easy", "Medium", "Hard")
LAYOUT = ("PaperArena's QA files, qa/<pdf_name>.json (from Hugging Face Melmaphother/PaperArena-Data), "
          "or a folder of those files")
OFFLINE = {"PDF Parser": "paper_read", "RAG": "paper_search", "Code Executor": "python",
           "Data Analyzer": "python on the CSV tables (no figure analysis)"}
"""Upstream's tools the offline agent has an equivalent of; the others (Web Search, Cross-Ref Lookup, Paper
Database Query) it has not."""
DEVIATIONS = (
    "the judge is the suite's [judge] model (upstream: gpt-4o-mini-2024-07-18 at temperature 0)",
    "a judge call that fails, or a reply upstream cannot read, leaves the question unscored (upstream counts it "
    "wrong)",
    "an empty answer is wrong without a judge call",
    "the agent has no web search, cross-reference lookup, paper database or figure analysis (offline); "
    "unavailable_tools lists those the question's tool chain used",
)


OWN_JUDGE_PROMPT = ("the judge prompt is pytest-jeval's own wording with upstream's output contract (no code_dir: "
                    "upstream's code carries no licence, so its prompt ships nowhere here)")
JUDGE_SOURCE = ("paperarena_hub/tools/scorer.py", "LLMScorer._create_judge_prompt")


def judge_template(code_dir: Path) -> Template:
    """Upstream's judge prompt, the f-string ``LLMScorer._create_judge_prompt`` returns in a clone of the PaperArena
    code, as a template (read with :mod:`ast`, never run); UpstreamError when the clone has none this can read."""
    return fstring(code_dir / JUDGE_SOURCE[0], JUDGE_SOURCE[1], None, {"question", "response", "ground_truth"})


class Options(BaseModel):
    """``[benchmarks.options]`` of paperarena."""

    model_config = ConfigDict(extra="forbid")

    papers: SuitePath
    """The paper cache: ``<pdf_name>.pdf``, ``.md``, ``.txt`` or upstream's parsed ``<pdf_name>/auto/<pdf_name>.md``."""
    qa_types: list[QAType] | None = None
    """Only these question types (upstream's ``filter_qa_type``)."""
    difficulties: list[Difficulty] | None = None
    """Only these difficulties (upstream's ``filter_difficulty``)."""
    conferences: list[str] | None = None
    """Only papers of these conferences (upstream's ``filter_conference``)."""
    skip_missing_papers: bool = False
    """Skip the questions whose paper the cache lacks (counted as skipped rows) instead of refusing the run."""
    code_dir: SuitePath | None = None
    """A clone of github.com/Melmaphother/PaperArena (the code): the judge prompt is then upstream's, read from its
    ``paperarena_hub/tools/scorer.py``; without it, pytest-jeval's own wording (declared in every record)."""

    @field_validator("code_dir")
    @classmethod
    def _has_prompt(cls, value: Path | None) -> Path | None:
        if value is not None:
            try:
                judge_template(value)
            except UpstreamError as exc:
                raise ValueError(f"{exc} (code_dir should be a clone of github.com/Melmaphother/PaperArena)") from None
        return value

    @field_validator("papers")
    @classmethod
    def _is_folder(cls, value: Path) -> Path:
        if not value.is_dir():
            raise ValueError(f"no such folder: {value} (the paper cache holds the papers PaperArena asks about)")
        return value


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterator[dict[str, Any]]:
    """One row per question of every QA file, in file-name order; a paper the cache lacks is an error (or skipped)."""
    if files:
        raise DatasetLoadError("paperarena reads its QA files from data_dir, not from data_files")
    if ctx.local_dir is None:
        raise DatasetLoadError(f"paperarena needs data_dir = {LAYOUT}")
    folder = ctx.local_dir / "qa" if (ctx.local_dir / "qa").is_dir() else ctx.local_dir
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise DatasetLoadError(f"{folder} holds no QA file; data_dir should hold {LAYOUT}")
    options: Options = ctx.options
    missing: list[str] = []
    for path in paths:
        try:
            paper = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise DatasetLoadError(f"{path} is not JSON: {exc}") from None
        if not isinstance(paper, dict) or "title" not in paper or not isinstance(paper.get("qa"), list):
            raise DatasetLoadError(f"{path} is not a PaperArena QA file (it needs title and qa)")
        if options.conferences is not None and paper.get("conference") not in options.conferences:
            continue
        present = find_paper(options.papers, path.stem) is not None
        if not present and not options.skip_missing_papers:
            missing.append(path.stem)
            continue
        for qa in paper["qa"]:
            yield {"pdf_name": path.stem, "paper": {k: v for k, v in paper.items() if k != "qa"}, "qa": qa,
                   "present": present}
    if missing:
        raise DatasetLoadError(f"the paper cache {options.papers} lacks {len(missing)} paper(s) the questions are "
                               f"about (first: {missing[0]!r}); add them, or set skip_missing_papers = true")


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One question (None: filtered out, or its paper is not in the cache)."""
    options: Options = ctx.options
    qa = row["qa"]
    if not row["present"]:
        return None
    if options.qa_types is not None and qa["qa_type"] not in options.qa_types:
        return None
    if options.difficulties is not None and qa["difficulty"] not in options.difficulties:
        return None
    if qa["qa_type"] not in QA_TYPES:
        raise ValueError(f"unknown qa_type {qa['qa_type']!r} (expected one of {', '.join(QA_TYPES)})")
    name = row["pdf_name"]
    chain = [str(t) for t in qa.get("tool_chain") or []]
    return Sample(
        id=f"{'_'.join(name.split())}-qa{qa['qa_id']}", input=str(qa["question"]), target=str(qa["answer"]),
        subject=str(qa["qa_type"]),
        metadata={"pdf_name": name, "papers": str(options.papers), "qa_type": qa["qa_type"],
                  "difficulty": qa.get("difficulty"), "tool_chain": chain, "title": row["paper"].get("title"),
                  "conference": row["paper"].get("conference"),
                  "judge_template": judge_template(options.code_dir) if options.code_dir is not None else None,
                  "unavailable_tools": sorted({t for t in chain if t not in OFFLINE})},
    )


AGENT_PROMPT = """You are a research assistant answering a question about the paper "{pdf_name}". Use the tools to \
work from the paper itself: paper_read lists its sections and reads them, paper_search finds passages, and its \
tables are CSV files in the working directory that python can analyse.

Question: {question}
Answer type: {qa_type}

Finish with a short, precise final answer."""


def prompt(sample: Sample) -> str:
    """The question, its paper and its answer type."""
    return AGENT_PROMPT.format(pdf_name=sample.metadata["pdf_name"], question=sample.input,
                               qa_type=sample.metadata["qa_type"])


JUDGE_PROMPT = """You judge whether an answer to a question about a scientific paper is correct, given the ground \
truth answer. Consider factual agreement with the ground truth, completeness and relevance to the question.

Question: {question}

Ground truth answer: {ground_truth}

Answer to judge: {response}

Reply with only this JSON object:
{{"correct": "true" or "false", "reasoning": "<why>", "confidence": <an integer from 0 to 10>}}"""


def parse_judgement(text: str) -> dict[str, Any] | None:
    """Upstream's reading: the text from the first ``{`` to the last ``}`` is JSON with ``correct`` (the string
    ``"true"`` or ``"false"``), ``reasoning`` (a string) and ``confidence`` (an integer 0-10); else None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < 0:
        return None
    try:
        found = json.loads(text[start:end + 1])
    except ValueError:
        return None
    if not isinstance(found, dict) or any(k not in found for k in ("correct", "reasoning", "confidence")):
        return None
    confidence = found["confidence"]
    if found["correct"] not in ("true", "false") or not isinstance(found["reasoning"], str):
        return None
    if not isinstance(confidence, int) or isinstance(confidence, bool) or not 0 <= confidence <= 10:
        return None
    return found


def judge_answer(log: JudgeLog, *, question: str, gold: str, answer: str, meta: dict[str, Any]) -> Score:
    """Correct when the judge says so; unscored when it cannot say (see :func:`parse_judgement`)."""
    fields = {"qa_type": meta.get("qa_type"), "difficulty": meta.get("difficulty"),
              "tool_chain": meta.get("tool_chain"), "unavailable_tools": meta.get("unavailable_tools"),
              "judge_confidence": None}
    template = meta.get("judge_template")
    source = (f"upstream {JUDGE_SOURCE[0]}:{JUDGE_SOURCE[1]}()" if template
              else meta.get("judge_prompt_source") or "pytest-jeval's own wording")
    base = {"deviations": list(DEVIATIONS) + ([] if source.startswith("upstream") else [OWN_JUDGE_PROMPT]),
            "judge_prompt_source": source}
    if not answer.strip():
        return Score(correct=False, value=0.0, extracted="", expected=gold, metadata={**base, "empty_answer": True},
                     fields=fields)
    try:
        text = (render(template, {"question": question, "ground_truth": gold, "response": answer}) if template
                else JUDGE_PROMPT.format(question=question, ground_truth=gold, response=answer))
        reply = log.ask("judge", [{"role": "user", "content": text}])
    except JudgeFailed as exc:
        return Score(correct=None, expected=gold, metadata={"unscored_reason": str(exc), **base, **log.metadata()},
                     fields=fields)
    found = parse_judgement(reply)
    if found is None:
        return Score(correct=None, expected=gold, fields=fields,
                     metadata={"unscored_reason": "the judge's reply is not the JSON upstream reads (correct as "
                                                  "\"true\"/\"false\", reasoning, confidence 0-10)",
                               **base, **log.metadata()})
    correct = found["correct"] == "true"
    fields["judge_confidence"] = found["confidence"] / 10
    return Score(correct=correct, value=1.0 if correct else 0.0, extracted=answer.strip()[-200:], expected=gold,
                 metadata={**base, "judge_reasoning": found["reasoning"], **log.metadata()}, fields=fields)


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The gold answer, said after listing the paper's sections (the oracle's tool call runs for real)."""
    return [ToolStep("paper_read", {}), SayStep(str(sample.target))]


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Upstream's breakdown: accuracy by type x difficulty and by difficulty (over every question, unscored ones
    counting wrong as upstream counts them), the same over the questions the offline tools can fully serve, and the
    mean tool calls per question."""
    ok = [r for r in records if r.get("error") is None]

    def accuracy(rows: list[dict[str, Any]]) -> dict[str, Any]:
        right = sum(1 for r in rows if r.get("is_correct") is True)
        return {"accuracy": right / len(rows) if rows else None, "correct": right, "count": len(rows)}

    by_type = {t: {d: accuracy([r for r in ok if r.get("qa_type") == t and r.get("difficulty") == d])
                   for d in DIFFICULTIES} for t in QA_TYPES}
    calls = [int((r.get("agent") or {}).get("tool_calls") or r.get("tool_calls") or 0) for r in ok]
    return {"overall": accuracy(ok), "by_type_and_difficulty": by_type,
            "by_difficulty": {d: accuracy([r for r in ok if r.get("difficulty") == d]) for d in DIFFICULTIES},
            "tools_fully_available": accuracy([r for r in ok if not r.get("unavailable_tools")]),
            "mean_tool_calls": sum(calls) / len(calls) if calls else None,
            "do_nothing_baseline": "an empty answer is wrong: a do-nothing agent scores 0"}


BENCHMARK = Benchmark(
    name="paperarena",
    category="research",
    description="PaperArena: questions on AI papers (MC/CA/OA), agent with tools over the paper, judged vs gold",
    to_sample=to_sample,
    read_rows=read_rows,
    prompt=prompt,
    scorer="paperarena",
    scoring="llm-judge vs the gold answer (correct true/false), every type as upstream",
    needs_judge=True,
    sample_count=784,
    data_source="hf:Melmaphother/PaperArena-Data",
    data_dir=LAYOUT,
    options=Options,
    backends=("agent",),
    summarize_extra=summarize,
    agent=AgentSpec(tools=TOOLS, environment=environment, max_turns=40, oracle=gold_steps),
)


def test_paperarena(sample: Sample, episode: Episode, judge: Any, score: Any) -> None:
    """The judge finds the agent's final answer correct against the gold answer."""
    answer = episode.replies[-1].text if episode.replies else ""
    score(judge_answer(JudgeLog(judge), question=sample.input, gold=str(sample.target), answer=answer,
                       meta=sample.metadata))


@register_scorer("paperarena", uses_judge=True)
def record_paperarena(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """paperarena: the stored judge reply read again (with ``reparse_judge``; otherwise the stored verdict)."""
    meta = record.get("scoring_metadata") or {}
    if not reparse_judge or not meta.get("judge_calls"):
        return stored_score(record)
    fields = {k: record.get(k) for k in ("qa_type", "difficulty", "tool_chain", "unavailable_tools")}
    fields["judge_prompt_source"] = meta.get("judge_prompt_source")
    return judge_answer(JudgeLog.replay(record), question=str(record.get("question") or ""),
                        gold=str(record.get("expected") or ""), answer=answer_of(record), meta=fields)
