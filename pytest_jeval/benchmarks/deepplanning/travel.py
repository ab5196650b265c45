"""DeepPlanning travel: the episode's prompt and database, the plan's conversion and scores, the summary.

A case is scored as upstream's pipeline does: the plan inside ``<plan></plan>`` of the agent's final
answer (none: the plan was not delivered, every score 0, as upstream counts it); converted to JSON by the
suite's ``[judge]`` (upstream uses qwen-plus); checked by :mod:`.travel_checks`. The record is correct
when ``case_acc`` is 1 (every commonsense dimension and every hard constraint passes); its value is the
``composite_score``. Without a judge, when the judge fails, or when its reply holds no JSON plan, the case
is unscored with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_jeval import Sample, Score
from pytest_jeval.benchmarks.deepplanning.travel_checks import DIMENSIONS, case_scores
from pytest_jeval.benchmarks.deepplanning.travel_db import TravelDB
from pytest_jeval.benchmarks.deepplanning.travel_plan import (
    SYSTEM,
    ConversionError,
    conversion_messages,
    extract_plan,
    parse_conversion,
)
from pytest_jeval.core.chat import EndpointError, Messages
from pytest_jeval.core.episode import Episode

CONVERT_ATTEMPTS = 3
TRAVEL_DEVIATIONS = [
    "system-prompt: the planning rules and plan format are the project's wording of upstream's SYSTEM_PROMPT_EN/ZH",
    "converter: the suite's [judge] converts the plan to JSON (upstream uses qwen-plus) with the project's wording "
    "of upstream's FORMAT_CONVERT_PROMPT; up to 3 attempts (upstream 30); a plan it cannot convert is unscored "
    "(upstream leaves it out of the evaluated plans)",
    "language: the prompts and the tools' own messages are in English for both sets (upstream words them in "
    "Chinese for zh); the data, names and queries are the set's",
    "limits: upstream allows 400 model calls; here max_turns and [run] max_tool_calls apply (a stopped episode "
    "has no plan: not delivered, as upstream's would be)",
]


def travel_prompt(sample: Sample) -> Messages:
    """Upstream's planning rules and plan format as the system prompt, then the case's query."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": sample.input}]


def travel_environment(sample: Sample) -> TravelDB:
    """The case's database, read afresh for the episode."""
    return TravelDB.load(Path(sample.metadata["case_dir"]))


def _zero(meta: dict[str, Any]) -> dict[str, Any]:
    return {"commonsense_score": 0.0, "personalized_score": 0.0, "composite_score": 0.0, "case_acc": 0.0,
            "dimension_scores": {d: 0.0 for d in DIMENSIONS}}


def verdict(plan: dict[str, Any], meta_info: dict[str, Any], db: TravelDB, base: dict[str, Any]) -> Score:
    """The checks' scores of a converted plan as the record's score."""
    scores = case_scores(plan, meta_info, db)
    fields = {k: scores[k] for k in ("commonsense_score", "personalized_score", "composite_score", "case_acc")}
    return Score(correct=scores["case_acc"] == 1.0, value=scores["composite_score"], extracted=plan,
                 expected={"meta_info": meta_info}, fields=fields,
                 metadata={**base, **scores, "delivered": True, "converted_plan": plan})


def _base(sample: Sample, episode: Episode | None) -> dict[str, Any]:
    return {"domain": "travel", "language": sample.metadata.get("language"), "case_id": sample.metadata.get("case_id"),
            "case_dir": sample.metadata.get("case_dir"),
            "completed": None if episode is None else episode.stop_reason == "final",
            "do_nothing_passes": False, "deviations": TRAVEL_DEVIATIONS}


def convert(judge: Any, plan_text: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """The judge's JSON of a plan, or None with the reason (``unscored_reason``) and what it said."""
    info: dict[str, Any] = {"converter_model": getattr(judge, "name", None)}
    if judge is None:
        return None, {**info, "unscored_reason": "deepplanning travel needs a [judge] to convert the plan to JSON"}
    errors = []
    for attempt in range(CONVERT_ATTEMPTS):
        try:
            reply = judge.chat(conversion_messages(plan_text), nonce=attempt)
        except EndpointError as exc:
            return None, {**info, "judge_error": str(exc), "unscored_reason": "the converter ([judge]) call failed"}
        try:
            return parse_conversion(reply.text), {**info, "converter_attempts": attempt + 1}
        except ConversionError as exc:
            errors.append(str(exc))
            info["converter_output"] = reply.text
    return None, {**info, "converter_errors": errors,
                  "unscored_reason": f"the converter's reply held no JSON plan after {CONVERT_ATTEMPTS} attempts"}


def score_travel(sample: Sample, episode: Episode, judge: Any) -> Score:
    """The case's score from the agent's final answer (see the module docstring)."""
    base = _base(sample, episode)
    meta_info = dict(sample.target["meta_info"])
    plan_text = extract_plan(episode.final_text)
    base["plan_text"] = plan_text
    if not plan_text:
        return Score(correct=False, value=0.0, extracted=None, expected={"meta_info": meta_info},
                     fields=dict.fromkeys(("commonsense_score", "personalized_score", "composite_score", "case_acc"),
                                          0.0),
                     metadata={**base, **_zero(meta_info), "delivered": False,
                               "failed_constraints": [{"kind": "delivery", "check": "plan_delivered",
                                                       "reason": "the final answer has no <plan></plan>"}]})
    plan, info = convert(judge, plan_text)
    if plan is None:
        return Score(correct=None, expected={"meta_info": meta_info}, extracted=plan_text,
                     metadata={**base, **info, "delivered": True})
    db = episode.state if isinstance(episode.state, TravelDB) else travel_environment(sample)
    return verdict(plan, meta_info, db, {**base, **info})


def rescore_travel(record: dict[str, Any]) -> Score:
    """The checks again over the converted plan stored in the record and the case's database (its folder must
    still be there)."""
    meta = record.get("scoring_metadata") or {}
    expected = record.get("expected") or {}
    if not meta.get("delivered", True) or "converted_plan" not in meta:
        if meta.get("delivered") is False:
            return Score(correct=False, value=0.0, expected=expected, metadata=dict(meta))
        return Score(correct=None, expected=expected, metadata=dict(meta))
    directory = Path(str(meta.get("case_dir") or ""))
    if not directory.is_dir():
        raise ValueError(f"record {record.get('record_id')!r}: its case database {directory} is gone; rerun the case")
    keep = {k: meta[k] for k in ("domain", "language", "case_id", "case_dir", "completed", "do_nothing_passes",
                                 "deviations", "plan_text", "converter_model", "converter_attempts") if k in meta}
    return verdict(dict(meta["converted_plan"]), dict(expected.get("meta_info") or {}), TravelDB.load(directory), keep)


def summarize_travel(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Upstream's travel metrics over the cases (averages over every case, undelivered ones counting 0; the
    unscored ones left out and counted): ``delivery_rate``, ``commonsense_score`` (and per dimension),
    ``personalized_score``, ``composite_score``, ``case_acc``; and the most frequent failed checks."""
    kept = [r for r in records if r.get("error") is None]
    metas = [(r.get("scoring_metadata") or {}) for r in kept]
    scored = [m for r, m in zip(kept, metas) if r.get("is_correct") is not None]
    n = len(scored)

    def mean(key: str) -> float | None:
        return sum(float(m.get(key) or 0.0) for m in scored) / n if n else None

    errors: dict[str, int] = {}
    for m in scored:
        for failed in m.get("failed_constraints") or []:
            name = f"[{failed.get('kind')}] {failed.get('check')}"
            errors[name] = errors.get(name, 0) + 1
    return {"travel": {
        "total_cases": len(kept), "scored_cases": n, "unscored_cases": len(kept) - n,
        "delivery_rate": sum(1 for m in scored if m.get("delivered")) / n if n else None,
        "commonsense_score": mean("commonsense_score"),
        "commonsense_dimensions": {d: (sum(float((m.get("dimension_scores") or {}).get(d) or 0.0) for m in scored) / n
                                       if n else None) for d in DIMENSIONS},
        "personalized_score": mean("personalized_score"), "composite_score": mean("composite_score"),
        "case_acc": mean("case_acc"),
        "incomplete_cases": sum(1 for m in metas if m.get("completed") is False),
        "error_statistics": dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
        "do_nothing_passes": 0}}
