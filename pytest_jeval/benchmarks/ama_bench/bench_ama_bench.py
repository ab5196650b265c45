"""ama-bench: AMA-Bench (2026), memory over long agent trajectories, each question answered on its own.

A sample is one question about one episode's trajectory. By default (``backend = "direct"``) the prompt
holds the episode's task and its trajectory packed into ``[benchmarks.options] context_chars``
(whole steps from the start and the end when it does not fit; the record's ``context`` says which steps
were left out), then the question, as upstream's long-context method asks one question. The second
configuration, ``backend = "agent"``, gives the trajectory through retrieval tools instead (BM25 search
over its steps, as upstream's BM25 memory, and reading steps by number). Questions never share a
conversation, so their order does not matter. Each answer gets the ``[judge]``'s yes/no verdict
(upstream's judge semantics; ``is_correct``) and token F1 (``token_f1``), both recorded; a judge that
fails or gives neither yes nor no leaves the answer unscored. The summary reports both per question type
(A-D) and per domain. See docs/ama-bench.md.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, HubDataset, ModelClient, Reply, Sample, Score, ScoreSink
from pytest_jeval.agents import AgentSpec, HarnessError, ToolContext, ToolError, tool
from pytest_jeval.benchmarks._bm25 import BM25
from pytest_jeval.benchmarks.ama_bench.data import Options, pack, read_rows, step_text, to_sample
from pytest_jeval.benchmarks.ama_bench.metrics import final_answer, judge_prompt, parse_verdict, token_f1
from pytest_jeval.core.chat import EndpointError, Messages
from pytest_jeval.scoring.registry import answer_of, expected_of, judged, register_scorer

INSTRUCTIONS = "Give a direct and concise answer on the line starting with 'Answer[1]:'."
DEVIATIONS = [
    "context-in-characters: the trajectory's budget is counted in characters and cut at whole steps (upstream: "
    "the model's tokenizer, cut at tokens)",
    "unparsable-judge-unscored: a judge reply with neither yes nor no is unscored (upstream falls back to F1)",
]


def _task_block(sample: Sample) -> str:
    task = sample.metadata.get("task") or ""
    return f"## Task\n{task}\n\n" if task else ""


def prompt(sample: Sample) -> Messages:
    """The task, the trajectory (packed into the budget), then the one question."""
    packed = pack(sample.metadata["trajectory"], int(sample.metadata["context_chars"]))
    text = (f"{_task_block(sample)}## Agent trajectory\nThe agent's actions and observations, step by step:\n\n"
            f"{packed.text}\n\n## Question\nQuestion 1: {sample.input}\n\n## Instructions\n{INSTRUCTIONS}\n\n"
            "Answer[1]: [your answer here]")
    return [{"role": "user", "content": text}]


def agent_prompt(sample: Sample) -> Messages:
    """The retrieval configuration: the task and the question; the trajectory is behind the tools."""
    steps = len(sample.metadata["trajectory"])
    text = (f"{_task_block(sample)}An agent's trajectory of {steps} steps (actions and observations) is stored "
            "in a memory you can search with search_trajectory and read with read_steps.\n\n"
            f"## Question\nQuestion 1: {sample.input}\n\n## Instructions\nLook up what you need, then "
            f"{INSTRUCTIONS[0].lower()}{INSTRUCTIONS[1:]}\n\nAnswer[1]: [your answer here]")
    return [{"role": "user", "content": text}]


@dataclasses.dataclass
class Memory:
    """The retrieval configuration's memory of one trajectory (``episode.state``)."""

    steps: list[str]
    index: BM25
    top_k: int


def environment(sample: Sample, workspace: Path) -> Memory:
    """The trajectory's steps and their BM25 index (one document a step, as upstream's BM25 memory)."""
    steps = [step_text(s) for s in sample.metadata["trajectory"]]
    return Memory(steps, BM25([s.lower().split() for s in steps]), int(sample.metadata["top_k"]))


def _memory(ctx: ToolContext) -> Memory:
    if not isinstance(ctx.state, Memory):
        raise HarnessError("the trajectory's memory is not open")
    return ctx.state


@tool(parallel_safe=True)
def search_trajectory(query: str, ctx: ToolContext) -> str:
    """Search the trajectory's steps (BM25 over their text) and return the best-matching steps, best first.

    Args:
        query: What to look for.
    """
    memory = _memory(ctx)
    scores = memory.index.scores(query.lower().split())
    best = sorted(range(len(scores)), key=lambda i: -scores[i])[:memory.top_k]
    return "\n".join(memory.steps[i] for i in best)


@tool(parallel_safe=True)
def read_steps(first: int, last: int, ctx: ToolContext) -> str:
    """Read the steps from position ``first`` to ``last`` (1-based, inclusive; at most 20 at a time).

    Args:
        first: The first step's position, from 1.
        last: The last step's position.
    """
    memory = _memory(ctx)
    if first < 1 or last < first or first > len(memory.steps):
        raise ToolError(f"steps run from 1 to {len(memory.steps)}; asked for {first} to {last}")
    return "\n".join(memory.steps[first - 1:min(last, first + 19, len(memory.steps))])


def grade(judge: Any, sample: Sample, predicted: str) -> Score:
    """The judge's verdict and the token F1 of one answer (unscored when the judge fails or says neither)."""
    f1 = token_f1(predicted, str(sample.target))
    meta: dict[str, Any] = {"token_f1": f1, "qa_type": sample.metadata.get("qa_type"),
                            "domain": sample.metadata.get("domain"), "episode_id": sample.metadata.get("episode_id"),
                            "task_type": sample.metadata.get("task_type"), "deviations": DEVIATIONS}
    fields = {"token_f1": f1}
    if judge is None:
        return Score(correct=None, expected=sample.target, extracted=predicted, fields=fields,
                     metadata={**meta, "unscored_reason": "ama-bench needs a [judge]"})
    context = {k: str(sample.metadata.get(k) or "") for k in ("task_type", "episode_id", "task")}
    text = judge_prompt(sample.input, str(sample.target), predicted, **context)
    meta["judge_model"] = getattr(judge, "name", None)
    try:
        reply = judge.chat(text)
    except EndpointError as exc:
        return Score(correct=None, expected=sample.target, extracted=predicted, fields=fields,
                     metadata={**meta, "judge_error": str(exc), "unscored_reason": "the judge call failed"})
    verdict = parse_verdict(reply.text)
    meta["judge_output"] = reply.text
    if verdict is None:
        return Score(correct=None, expected=sample.target, extracted=predicted, fields=fields,
                     metadata={**meta, "unscored_reason": "the judge's reply says neither yes nor no"})
    return Score(correct=verdict, expected=sample.target, extracted=predicted, fields=fields, metadata=meta)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per question type and per domain: questions, judged, judge accuracy (over the judged), unscored, mean
    token F1; and the share of questions whose trajectory did not fit."""
    def block(rs: list[dict[str, Any]]) -> dict[str, Any]:
        judged_ = [r for r in rs if r.get("is_correct") is not None]
        f1s = [float(r["token_f1"]) for r in rs if isinstance(r.get("token_f1"), (int, float))]
        return {"questions": len(rs), "judged": len(judged_), "unscored": len(rs) - len(judged_),
                "judge_accuracy": sum(r["is_correct"] is True for r in judged_) / len(judged_) if judged_ else None,
                "mean_token_f1": sum(f1s) / len(f1s) if f1s else None}

    kept = [r for r in records if r.get("error") is None]
    groups: dict[str, dict[str, list[dict[str, Any]]]] = {"per_type": {}, "per_domain": {}}
    for r in kept:
        meta = r.get("scoring_metadata") or {}
        groups["per_type"].setdefault(str(meta.get("qa_type")), []).append(r)
        groups["per_domain"].setdefault(str(meta.get("domain")), []).append(r)
    contexts = [(r.get("scoring_metadata") or {}).get("context") for r in kept]
    cut = [c for c in contexts if isinstance(c, dict) and c.get("dropped_steps")]
    return {"ama": block(kept), **{name: {k: block(v) for k, v in sorted(g.items())} for name, g in groups.items()},
            "context_cut_share": len(cut) / len(kept) if kept else None}


BENCHMARK = Benchmark(
    name="ama-bench",
    category="agentic",
    description="AMA-Bench: questions about long agent trajectories, each answered on its own (judge + token F1)",
    to_sample=to_sample,
    prompt=prompt,
    read_rows=read_rows,
    options=Options,
    dataset=HubDataset(path="AMA-bench/AMA-bench", split="test"),
    scorer="ama-bench",
    scoring="[judge] yes/no on the answer (upstream's judge), token F1 recorded beside it",
    needs_judge=True,
    summarize_extra=summarize,
    agent=AgentSpec(tools=[search_trajectory, read_steps], environment=environment, prompt=agent_prompt,
                    max_turns=12),
)


def test_ama_bench(sample: Sample, response: Reply | None, judge: ModelClient | None, benchmark_entry: Any,
                   score: ScoreSink) -> None:
    """The judge's yes, with the token F1 recorded (see the module docstring)."""
    predicted = final_answer(response.text if response is not None else "")
    result = grade(judge, sample, predicted)
    retrieval = benchmark_entry.agent is not None or benchmark_entry.backend_kind not in (None, "direct")
    context: Any = "retrieval" if retrieval else pack(sample.metadata["trajectory"],
                                                     int(sample.metadata["context_chars"])).info()
    score(dataclasses.replace(result, metadata={**result.metadata, "context": context}))


@register_scorer("ama-bench", uses_judge=True)
def record_ama_bench(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """ama-bench: the judge's stored verdict again (or reparsed), and the token F1 from the stored answer."""
    predicted = final_answer(answer_of(record))
    meta = record.get("scoring_metadata") or {}
    sample = Sample(id=str(record.get("record_id")), input=str(record.get("question") or ""),
                    target=expected_of(record), metadata={k: meta.get(k) for k in ("qa_type", "domain", "episode_id",
                                                                                   "task_type")})

    def scoring(judge: Any) -> Score:
        result = grade(judge, sample, predicted)
        context = meta.get("context")
        return dataclasses.replace(result, metadata={**result.metadata, "context": context})

    return judged(record, reparse_judge, scoring)
