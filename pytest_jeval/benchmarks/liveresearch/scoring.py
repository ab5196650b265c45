"""One task's RACE score: clean the report, ask the judge for the criterion scores, compute as upstream.

The flow is upstream's ``process_single_item`` with ``ArticleCleaner``: the target report is first cleaned of
citations by the judge (upstream uses the same model for both); a cleaned article under 100 characters is a
failed attempt, up to ``attempts`` attempts, then the report is cleaned in two halves (split at a sentence end
near the middle, 3 attempts each). The scoring prompt is then sent up to ``attempts`` times until the reply holds
a JSON object with all four dimensions (upstream: 10 attempts). What cannot be completed leaves the task
unscored, with the reason, never 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_jeval.benchmarks._research.judgelog import JudgeFailed, JudgeLog
from pytest_jeval.benchmarks.liveresearch.race import (
    DIMENSIONS,
    criteria_for_prompt,
    extract_json,
    overall,
    weighted_scores,
)
from pytest_jeval.core.score import Score

__all__ = ["EXPECTED", "FACT_NOTE", "MIN_CLEANED", "compact_criteria", "race_score"]

EXPECTED = "RACE overall >= 0.5 (at least as good as the reference report)"
MIN_CLEANED = 100
"""Upstream's shortest valid cleaned article, in characters."""
CHUNK_ATTEMPTS = 3
FACT_NOTE = ("not run: FACT checks each cited URL against the live page (fetched through the Jina reader); "
             "this run has no fetcher, so citation accuracy and effective citations are not measured")
FACT_RUN = ("FACT ran against the pages of the suite's fact_fetcher (upstream: the Jina reader), judged by the "
            "suite's [judge] (upstream: Gemini 2.5 Flash)")
DEVIATIONS = (
    "FACT not run (offline): " + FACT_NOTE.removeprefix("not run: "),
    "the judge is the suite's [judge] model (upstream: Gemini 2.5 Pro with a 16k-token thinking budget)",
    "a judge call that fails after the client's retries leaves the task unscored (upstream retries any failure "
    "up to 10 times, then drops the task)",
    "an empty report scores 0 without a judge call (upstream drops it when cleaning it fails)",
)


def compact_criteria(criteria: Mapping[str, Any]) -> dict[str, Any]:
    """What a record keeps of a task's criteria to score it again: the weights, by dimension and criterion."""
    return {"id": criteria.get("id"), "dimension_weight": dict(criteria.get("dimension_weight") or {}),
            "criterions": {dim: [{"criterion": c["criterion"], "weight": c["weight"]} for c in items
                                 if isinstance(c, dict) and "criterion" in c and "weight" in c]
                           for dim, items in (criteria.get("criterions") or {}).items() if isinstance(items, list)}}


def _halves(article: str) -> list[str]:
    """Upstream's split: at a sentence end in the 200 characters before the middle, else at the middle."""
    size = len(article) // 2
    end = size
    for j in range(size, max(0, size - 200), -1):
        if j < len(article) and article[j] in ".?!。？！\n":
            end = j + 1
            break
    return [article[:end], article[end:]]


def _clean_once(log: JudgeLog, template: str, text: str, key: str, attempts: int) -> str | None:
    for attempt in range(1, attempts + 1):
        reply = log.ask(f"{key}.{attempt}", template.format(article=text), nonce=attempt - 1)
        if len(reply.strip()) >= MIN_CLEANED:
            return reply
    return None


def clean_article(log: JudgeLog, template: str, article: str, attempts: int) -> str | None:
    """The report cleaned of citations, or None when every attempt (and the two-halves fallback) failed."""
    cleaned = _clean_once(log, template, article, "clean", attempts)
    if cleaned is not None:
        return cleaned
    parts = [_clean_once(log, template, part, f"clean.half{i}", CHUNK_ATTEMPTS)
             for i, part in enumerate(_halves(article), 1)]
    merged = "".join(p or "" for p in parts)
    return merged if None not in parts and len(merged.strip()) >= MIN_CLEANED else None


def judge_scores(log: JudgeLog, prompt: str, attempts: int) -> dict[str, Any] | None:
    """The judge's criterion scores: the first reply holding a JSON object with all four dimensions, or None."""
    for attempt in range(1, attempts + 1):
        found = extract_json(log.ask(f"race.{attempt}", prompt, nonce=attempt - 1))
        if found is None:
            continue
        try:
            parsed = json.loads(found)
        except ValueError:
            continue
        if isinstance(parsed, dict) and all(dim in parsed for dim in DIMENSIONS):
            return parsed
    return None


def _unscored(reason: str, meta: dict[str, Any], fields: dict[str, Any]) -> Score:
    return Score(correct=None, expected=EXPECTED, metadata={"unscored_reason": reason, **meta},
                 fields={**fields, **{f"race_{k}": None for k in ("overall", *DIMENSIONS)}})


def race_score(log: JudgeLog, *, task: str, report: str, reference: str, criteria: Mapping[str, Any],
               templates: Mapping[str, str], language: str, clean: bool, attempts: int,
               extra: Mapping[str, Any] | None = None) -> Score:
    """The task's RACE score (see the module docstring): value = overall on 0-1, the record's ``race_*`` columns
    on upstream's x100 scale, correct when overall >= 0.5; unscored with the reason when the judge gives none."""
    lang = "zh" if language == "zh" else "en"
    deviations = list(DEVIATIONS)
    if isinstance((extra or {}).get("fact"), dict):
        deviations[0] = FACT_RUN
    meta: dict[str, Any] = {"criteria": compact_criteria(criteria), "language": lang,
                            "judge_prompts": {k: v for k, v in (extra or {}).get("template_sources", {}).items()
                                              if k.endswith(lang)},
                            "deviations": deviations, "clean_articles": clean, "judge_attempts": attempts}
    fields: dict[str, Any] = {"fact": FACT_NOTE, **{k: v for k, v in (extra or {}).items() if k != "template_sources"}}
    if not report.strip():
        zero = {"overall": 0.0, **dict.fromkeys(DIMENSIONS, 0.0)}
        return Score(correct=False, value=0.0, extracted="(empty report)", expected=EXPECTED,
                     metadata={**meta, "race": zero, **log.metadata()},
                     fields={**fields, **{f"race_{k}": 0.0 for k in zero}})
    try:
        article = report
        if clean:
            cleaned = clean_article(log, templates.get(f"clean_{lang}", ""), report, attempts)
            if cleaned is None:
                return _unscored(f"the judge could not clean the report (no cleaned article of at least "
                                 f"{MIN_CLEANED} characters)", {**meta, **log.metadata()}, fields)
            article = cleaned
        prompt = templates.get(f"score_{lang}", "").format(task_prompt=task, article_1=article, article_2=reference,
                                                           criteria_list=criteria_for_prompt(criteria))
        judged = judge_scores(log, prompt, attempts)
    except JudgeFailed as exc:
        return _unscored(str(exc), {**meta, **log.metadata()}, fields)
    if judged is None:
        return _unscored(f"no judge reply in {attempts} attempts held scores for all four dimensions",
                         {**meta, **log.metadata()}, fields)
    scores = weighted_scores(judged, criteria)
    race = overall(scores)
    meta.update(race=race, target_total=scores["target"]["total"], reference_total=scores["reference"]["total"],
                target_dims=scores["target"]["dims"], reference_dims=scores["reference"]["dims"],
                unmatched_criteria=scores["unmatched"], **log.metadata())
    return Score(correct=race["overall"] >= 0.5, value=race["overall"], extracted=round(race["overall"] * 100, 2),
                 expected=EXPECTED, metadata=meta, fields={**fields, **{f"race_{k}": v * 100 for k, v in race.items()}})
