"""WildChat: real user prompts, the model's reply judged pairwise against the original reply.

Hub: ``allenai/WildChat-1M`` (split ``train``, 837,989 conversations); schema
``conversation_hash`` (the record id), ``model``, ``timestamp``, ``conversation``
(a list of turns ``{content, role, language, country, state, hashed_ip, header,
redacted, toxic, timestamp, turn_identifier}``), ``turn`` (number of user
turns), ``language``, ``openai_moderation``, ``detoxify_moderation``, ``toxic``,
``redacted``, ``state``, ``country``, ``hashed_ip``, ``header``.

Only English single-turn conversations are kept: ``language == "English"``,
``turn == 1``, exactly one user message followed by one assistant message, both
non-empty. Other rows are skipped (counted in ``skipped_rows``). The prompt is
the user's message; the reference is the original assistant reply.

Scoring (needs the ``[judge]``). The judge compares the two replies TWICE: once
with the model's reply as assistant A and the reference as B, once swapped.
Each verdict ``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]`` is
turned into the model's outcome in that order: win, tie or loss (strength is
not used). The sample's ``score`` is the mean over the two orders of 1 (win),
0.5 (tie), 0 (loss), so it is one of 0, 0.25, 0.5, 0.75, 1; ``is_correct`` is
``score >= 0.5`` (the model is at least as good as the reference on balance).
There is no OR-of-two-verdicts leniency: a win in one order and a loss in the
other scores 0.5, not a pass by default. When either verdict is missing or
ambiguous the sample is unscored (a position-biased half is not a score).

The summary adds, over the fully judged samples: ``win_rate``, ``tie_rate``,
``loss_rate`` (over all 2n judgements), ``position_consistency`` (share of
samples whose outcome is the same in both orders), ``mean_pairwise_score``,
``judged`` and ``per_order`` (win/tie/loss counts for the model shown first
and shown second). per_subject is always ``conversation``.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample, Score
from pytest_jeval.core.chat import EndpointError
from pytest_jeval.scoring.llm_judge.prompts import (
    PAIRWISE_SYSTEM_PROMPT,
    PAIRWISE_USER_PROMPT,
    pairwise_outcome,
    parse_pairwise_verdict,
)
from pytest_jeval.scoring.registry import answer_of, judged, register_scorer

OUTCOME_POINTS = {"win": 1.0, "tie": 0.5, "loss": 0.0}
ORDERS = (("model_first", "A"), ("model_second", "B"))


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """An English single-turn conversation; anything else is skipped."""
    if str(row.get("language") or "") != "English" or row.get("turn") != 1:
        return None
    conversation = row["conversation"] or []
    if len(conversation) != 2:
        return None
    user, assistant = conversation
    if user.get("role") != "user" or assistant.get("role") != "assistant":
        return None
    question, reference = str(user.get("content") or ""), str(assistant.get("content") or "")
    if not question.strip() or not reference.strip():
        return None
    return Sample(
        id=str(row.get("conversation_hash") or ctx.default_id(index)),
        input=question,
        target=reference,
        subject="conversation",
        metadata={"reference_model": row.get("model")},
    )


def judge_messages(question: str, answer_a: str, answer_b: str) -> list[dict[str, str]]:
    """The pairwise judge chat for one order."""
    return [
        {"role": "system", "content": PAIRWISE_SYSTEM_PROMPT},
        {"role": "user", "content": PAIRWISE_USER_PROMPT.format(prompt=question, answer_a=answer_a, answer_b=answer_b)},
    ]


def score_pairwise(judge: ModelClient, question: str, model_answer: str, reference: str) -> Score:
    """Both orders, outcomes, the averaged score and position consistency."""
    verdicts: list[str | None] = []
    raw: list[str] = []
    meta: dict[str, Any] = {"judge_model": judge.name}
    for _order, model_is in ORDERS:
        a, b = (model_answer, reference) if model_is == "A" else (reference, model_answer)
        try:
            reply = judge.chat(judge_messages(question, a, b))
        except EndpointError as exc:
            meta["judge_error"] = str(exc)
            return Score(correct=None, expected="at least a tie with the reference reply",
                         metadata={"unscored_reason": "judge call failed", **meta})
        raw.append(reply.text)
        verdicts.append(parse_pairwise_verdict(reply.text))
    meta["judge_outputs"] = raw
    meta["verdicts"] = verdicts
    if any(v is None for v in verdicts):
        return Score(correct=None, expected="at least a tie with the reference reply",
                     metadata={"unscored_reason": "no single verdict token in a judge reply", **meta},
                     fields={"verdicts": verdicts, "outcomes": None, "position_consistent": None})
    outcomes = [pairwise_outcome(v, model_is) for v, (_, model_is) in zip(verdicts, ORDERS)]  # type: ignore[arg-type]
    value = sum(OUTCOME_POINTS[o] for o in outcomes) / len(outcomes)
    consistent = outcomes[0] == outcomes[1]
    meta.update(outcomes=outcomes, position_consistent=consistent)
    return Score(
        correct=value >= 0.5,
        value=value,
        extracted="/".join(outcomes),
        expected="at least a tie with the reference reply",
        metadata=meta,
        fields={"verdicts": verdicts, "outcomes": outcomes, "position_consistent": consistent},
    )


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Win/tie/loss rates over all judgements, position consistency, per-order counts."""
    judged = [r for r in records if r.get("error") is None and isinstance(r.get("outcomes"), list)
              and len(r["outcomes"]) == 2]
    n = len(judged)
    per_order = {order: {"win": 0, "tie": 0, "loss": 0} for order, _ in ORDERS}
    for r in judged:
        for (order, _), outcome in zip(ORDERS, r["outcomes"]):
            per_order[order][outcome] += 1
    totals = {k: sum(per_order[o][k] for o, _ in ORDERS) for k in ("win", "tie", "loss")}
    return {
        "judged": n,
        "win_rate": totals["win"] / (2 * n) if n else None,
        "tie_rate": totals["tie"] / (2 * n) if n else None,
        "loss_rate": totals["loss"] / (2 * n) if n else None,
        "position_consistency": sum(1 for r in judged if r["outcomes"][0] == r["outcomes"][1]) / n if n else None,
        "mean_pairwise_score": sum(OUTCOME_POINTS[o] for r in judged for o in r["outcomes"]) / (2 * n) if n else None,
        "per_order": per_order,
    }


BENCHMARK = Benchmark(
    name="wildchat",
    category="chat",
    description="WildChat English single-turn prompts, pairwise vs the original reply in both orders",
    dataset=HubDataset(path="allenai/WildChat-1M", split="train", id_column="conversation_hash"),
    to_sample=to_sample,
    prompt=lambda s: s.input,
    scorer="wildchat",
    scoring="pairwise llm-judge, both orders (win 1 / tie 0.5 / loss 0)",
    needs_judge=True,
    sample_count=837989,
    summarize_extra=summarize,
)


def test_wildchat(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """Averaged over both orders, the reply is at least as good as the reference (score >= 0.5)."""
    if judge is None:
        score(Score.unscorable("wildchat needs a [judge] for pairwise comparison",
                               expected="at least a tie with the reference reply"))
        return
    score(score_pairwise(judge, sample.input, response.text, sample.target))


@register_scorer("wildchat", uses_judge=True)
def record_wildchat(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """WildChat: the pairwise verdicts of both orders (the reference reply only shapes the prompt)."""

    question, answer = str(record.get("question") or ""), answer_of(record)

    def scoring(judge: Any) -> Score:
        if judge is None:
            return Score.unscorable("wildchat needs a [judge] for pairwise comparison",
                                    expected="at least a tie with the reference reply")
        result: Score = score_pairwise(judge, question, answer, "")
        return result

    return judged(record, reparse_judge, scoring)
