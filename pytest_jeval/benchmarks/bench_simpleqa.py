"""SimpleQA: short fact-seeking questions with a single indisputable answer.

Hub: ``basicv8vc/SimpleQA`` (split ``test``, 4,326 rows; a copy of OpenAI's
``simple_qa_test_set.csv``); schema ``metadata`` (a Python-literal string such as
``"{'topic': 'Science and technology', 'answer_type': 'Person', 'urls': [...]}"``),
``problem``, ``answer``. No id column: ids are ``simpleqa-<row index>``;
per_subject is the ``topic``.

The question is sent as is. The ``[judge]`` grades the reply with the simple-evals
grader as CORRECT (A), INCORRECT (B) or NOT_ATTEMPTED (C). ``is_correct`` is true
only for CORRECT; NOT_ATTEMPTED counts as not correct. The summary adds
``correct_count``, ``incorrect``, ``not_attempted``, ``graded``, ``attempted_rate``
((correct + incorrect) / graded), ``accuracy_given_attempted`` (correct /
(correct + incorrect)) and the paper's ``f1`` (harmonic mean of overall
correct rate and accuracy given attempted). Without a judge the items are
unscored.
"""

from __future__ import annotations

import ast
from typing import Any

from pytest_jeval import Benchmark, HubDataset, LoadContext, ModelClient, Reply, Sample, Score
from pytest_jeval.core.chat import EndpointError
from pytest_jeval.scoring.llm_judge.prompts import SIMPLEQA_GRADER_TEMPLATE, parse_simpleqa_grade
from pytest_jeval.scoring.registry import answer_of, expected_of, judged, register_scorer

GRADES = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")


def parse_metadata(raw: Any) -> dict[str, Any]:
    """The ``metadata`` column as a dict (it is a Python-literal string on the hub)."""
    if isinstance(raw, dict):
        return dict(raw)
    if isinstance(raw, str) and raw.strip():
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One SimpleQA row; per_subject is the metadata's ``topic``."""
    meta = parse_metadata(row.get("metadata"))
    return Sample(
        id=ctx.default_id(index),
        input=str(row["problem"]),
        target=str(row["answer"]),
        subject=meta.get("topic"),
        metadata={"answer_type": meta.get("answer_type"), "urls": meta.get("urls")},
    )


def grade(judge: ModelClient, question: str, target: str, answer: str) -> tuple[str | None, dict[str, Any]]:
    """Ask the judge for the grade. Returns (grade or None, scoring metadata)."""
    prompt = SIMPLEQA_GRADER_TEMPLATE.format(question=question, target=target, predicted_answer=answer)
    try:
        reply = judge.chat(prompt)
    except EndpointError as exc:
        return None, {"judge_model": judge.name, "judge_error": str(exc)}
    result = parse_simpleqa_grade(reply.text)
    return result, {"judge_model": judge.name, "judge_output": reply.text, "grade": result}


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """SimpleQA's own figures, over the records that were graded (errored ones left out)."""
    grades = [r.get("grade") for r in records if r.get("error") is None]
    counts = {g: sum(1 for x in grades if x == g) for g in GRADES}
    graded = sum(counts.values())
    attempted = counts["CORRECT"] + counts["INCORRECT"]
    overall = counts["CORRECT"] / graded if graded else None
    given = counts["CORRECT"] / attempted if attempted else None
    f1 = (2 * overall * given / (overall + given)) if overall and given else (0.0 if graded else None)
    return {
        "graded": graded,
        "ungraded": len(grades) - graded,
        "correct_count": counts["CORRECT"],
        "incorrect": counts["INCORRECT"],
        "not_attempted": counts["NOT_ATTEMPTED"],
        "attempted_rate": attempted / graded if graded else None,
        "accuracy_given_attempted": given,
        "f1": f1,
    }


BENCHMARK = Benchmark(
    name="simpleqa",
    category="short-answer",
    description="SimpleQA short factual questions, graded CORRECT/INCORRECT/NOT_ATTEMPTED",
    dataset=HubDataset(path="basicv8vc/SimpleQA", split="test"),
    to_sample=to_sample,
    prompt=lambda s: s.input,
    scorer="simpleqa",
    scoring="llm-judge grade (simple-evals A/B/C)",
    needs_judge=True,
    sample_count=4326,
    summarize_extra=summarize,
)


def test_simpleqa(sample: Sample, response: Reply, judge: ModelClient | None, score: Any) -> None:
    """The grader says CORRECT."""
    if judge is None:
        score(Score.unscorable("simpleqa needs a [judge] to grade answers", expected=sample.target))
        return
    result, meta = grade(judge, sample.input, sample.target, response.text)
    if result is None:
        reason = "judge call failed" if "judge_error" in meta else "no grade in the judge's reply"
        score(Score(correct=None, expected=sample.target, metadata={"unscored_reason": reason, **meta},
                    fields={"grade": None}))
        return
    score(Score(correct=result == "CORRECT", extracted=result, expected=sample.target, metadata=meta,
                fields={"grade": result}))


@register_scorer("simpleqa", uses_judge=True)
def record_simpleqa(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """SimpleQA: the grader's CORRECT / INCORRECT / NOT_ATTEMPTED (as ``test_simpleqa`` scores it)."""

    question, answer, gold = str(record.get("question") or ""), answer_of(record), expected_of(record)

    def scoring(judge: Any) -> Score:
        if judge is None:
            return Score.unscorable("simpleqa needs a [judge] to grade answers", expected=gold)
        result, meta = grade(judge, question, gold, answer)
        if result is None:
            reason = "judge call failed" if "judge_error" in meta else "no grade in the judge's reply"
            return Score(correct=None, expected=gold, metadata={"unscored_reason": reason, **meta},
                         fields={"grade": None})
        return Score(correct=result == "CORRECT", extracted=result, expected=gold, metadata=meta,
                     fields={"grade": result})

    return judged(record, reparse_judge, scoring)
