"""DeepEval's five grading protocols (LiveResearchBench), each asked of the judge on its own.

* presentation: a checklist of the fixed questions (``PRESENTATION_QUESTIONS``); the judge returns
  ``{"evaluations": {"p1": {"score": 0 or 1, "justification"}, ...}}``; the column is the share passed x 100;
* coverage: a checklist of the question's own items, ``q1``, ``q2``, ...; the share addressed x 100;
* consistency and citation: pointwise, the issues counted against a rubric (``CONSISTENCY_RUBRIC``,
  ``CITATION_RUBRIC``); the judge returns ``{"specific_issues", "total_issues", "score" (10-100),
  "justification"}``; the column is ``score``;
* depth: pairwise against the reference report, both orders; the judge returns ``{"winner": "A", "B" or "tie",
  "scores", "justification", "major_flaws"}``; the record keeps the two outcomes for the model.

As upstream: a checklist's score is the sum of the 0/1 scores over the number of items (an item the judge left
out counts 0); a pointwise score is the judge's ``score``, which the rubric ties to the issue count (the record
also keeps the rubric's score for the count, ``rubric_score``); depth is judged with the model's report as A and
the reference as B, then swapped, each verdict mapped back to the model (``win``/``loss``/``tie``).

A reply is read as upstream's OpenAI path reads it: the whole reply (code fences removed) must be one JSON object,
and it must match the protocol's schema. Anything else leaves that protocol unscored for the item, never 0.

The judge's prompts are upstream's, built by its ``create_*_prompt`` functions and read from the user's clone as
templates (:mod:`.data`); for a protocol whose function the clone lacks, this project's own wording stands in around
upstream's fixed checklist, rubric tables and depth dimensions. As upstream's OpenAI client does, the user prompt
ends with the protocol's JSON schema.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_jeval.benchmarks._research.judgelog import JudgeFailed, JudgeLog
from pytest_jeval.benchmarks._research.upstream import render

__all__ = ["PROTOCOLS", "Verdict", "depth", "parse_reply", "pointwise", "presentation_or_coverage", "rubric_score"]

PROTOCOLS = ("presentation", "coverage", "consistency", "citation", "depth")

Verdict = dict[str, Any]
"""One protocol's result: ``{"score": number or None, ...details, "unscored_reason"?}``."""


def checklist_schema(prefix: str) -> dict[str, Any]:
    """The JSON schema of a checklist reply (ids ``<prefix>1``, ``<prefix>2``, ...)."""
    item = {"type": "object", "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 1},
                                             "justification": {"type": "string"}},
            "required": ["score", "justification"]}
    return {"type": "object", "properties": {"evaluations": {"type": "object",
                                                             "patternProperties": {f"^{prefix}[0-9]+$": item},
                                                             "additionalProperties": False}},
            "required": ["evaluations"]}


POINTWISE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"specific_issues": {"type": "array", "items": {"type": "string"}},
                   "total_issues": {"type": "integer", "minimum": 0},
                   "score": {"type": "integer", "minimum": 10, "maximum": 100},
                   "justification": {"type": "string"}},
    "required": ["specific_issues", "total_issues", "score", "justification"],
}
_SIDE = {"type": "object", "properties": {d: {"type": "integer", "minimum": 0, "maximum": 5}
                                          for d in ("granularity", "insight", "critique", "evidence", "density")}
         | {"total": {"type": "integer", "minimum": 0, "maximum": 25}}}
DEPTH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"winner": {"enum": ["A", "B", "tie"]},
                   "scores": {"type": "object", "properties": {"A": _SIDE, "B": _SIDE}},
                   "justification": {"type": "string"},
                   "major_flaws": {"type": "object"}},
    "required": ["winner"],
}


@functools.lru_cache(maxsize=8)
def _validator(schema_json: str) -> Any:
    import jsonschema

    schema = json.loads(schema_json)
    return jsonschema.validators.validator_for(schema)(schema)


def parse_reply(text: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """The reply's JSON object when the whole reply (without code fences) is one that matches ``schema``, else None."""
    body = text.strip()
    fence = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.DOTALL)
    if fence:
        body = fence.group(1)
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    if any(True for _ in _validator(json.dumps(dict(schema), sort_keys=True)).iter_errors(parsed)):
        return None
    return parsed


def _ask(log: JudgeLog, key: str, system: str, user: str, schema: Mapping[str, Any],
         structured: bool) -> tuple[dict[str, Any] | None, str | None]:
    """``(parsed reply, None)``, or ``(None, why not)``."""
    prompt = user + "\n\nPlease respond with valid JSON that matches this schema:\n" + json.dumps(schema, indent=2)
    options: dict[str, Any] = {}
    if structured:
        options["response_format"] = {"type": "json_schema", "json_schema": {"name": "grading_response",
                                                                              "schema": dict(schema)}}
    try:
        reply = log.ask(key, [{"role": "system", "content": system}, {"role": "user", "content": prompt}], **options)
    except JudgeFailed as exc:
        return None, str(exc)
    parsed = parse_reply(reply, schema)
    return (parsed, None) if parsed is not None else (None, "the judge's reply is not JSON matching the protocol's "
                                                             "schema")


CHECKLIST_SYSTEM = """You grade a research report against a checklist. For each checklist item decide whether the \
report fully satisfies it: score 1 when it does, with no issue at all, and 0 otherwise (partly met, missing, \
only promised or described as unavailable: 0). Give a short justification for each item that points to the \
report. Today's date is {today}. Respond with one JSON object: {{"evaluations": {{"<item id>": {{"score": 0 or 1, \
"justification": "..."}}}}}}, one entry per item id."""

PRESENTATION_FOCUS = "The items concern presentation and formatting: structure, language, citations and references."
COVERAGE_FOCUS = ("The items ask for specific information the research query requests: a report that describes how "
                  "the information could be found, instead of giving it, does not satisfy an item.")


def _upstream(templates: Mapping[str, Any] | None, protocol: str, values: dict[str, str]) -> tuple[str, str] | None:
    """Upstream's system and user prompts of ``protocol`` filled with ``values`` (None: the clone has none)."""
    found = (templates or {}).get(protocol)
    if not found:
        return None
    return render(found["system"], values), render(found["user"], values)


def presentation_or_coverage(log: JudgeLog, protocol: str, *, query: str, report: str, items: Mapping[str, str],
                             today: str, structured: bool, templates: Mapping[str, Any] | None = None) -> Verdict:
    """The checklist protocols: ``items`` by id (``p1``... for presentation, ``q1``... for coverage)."""
    prefix = "p" if protocol == "presentation" else "q"
    focus = PRESENTATION_FOCUS if protocol == "presentation" else COVERAGE_FOCUS
    listed = "\n".join(f"- {key}: {text}" for key, text in items.items())
    values = {"query": query, "report_content": report, "current_date": today, "checklist_section": listed}
    system, user = _upstream(templates, protocol, values) or (
        CHECKLIST_SYSTEM.format(today=today),
        f"RESEARCH QUERY:\n{query}\n\nREPORT:\n{report}\n\nCHECKLIST ({focus}):\n{listed}")
    parsed, why = _ask(log, protocol, system, user, checklist_schema(prefix), structured)
    if parsed is None:
        return {"score": None, "unscored_reason": why, "items": len(items)}
    evaluations = parsed["evaluations"]
    passed = sum(int(ev["score"]) for key, ev in evaluations.items() if key in items)
    return {"score": passed / len(items) * 100 if items else None, "passed": passed, "items": len(items),
            "ignored_ids": sorted(set(evaluations) - set(items)),
            "failed_items": sorted(k for k, ev in evaluations.items() if k in items and not ev["score"])}


POINTWISE_SYSTEM = """You grade a research report on one criterion, {criterion}, by finding concrete issues. Read \
the report sentence by sentence and list every real issue that clearly fails the criterion (no nitpicks or \
matters of taste), each with its location or a quote. Then give the score the grading scale below assigns to the \
number of issues you found. Today's date is {today}.

Grading scale for {criterion}:
{rubric}

Respond with one JSON object: {{"specific_issues": ["..."], "total_issues": <the number of issues listed>, \
"score": <10-100 from the scale>, "justification": "<two or three sentences>"}}."""

CRITERIA = {"consistency": "Factual & Logical Consistency (contradictions between the report's own claims, "
                           "numbers, dates and names; factual accuracy is a separate criterion)",
            "citation": "Citation Association (major claims and facts that lack a citation; citation formatting and "
                        "the accuracy of cited facts are separate criteria)"}


def rubric_score(rubric: str, issues: int) -> int | None:
    """The score a rubric table gives ``issues`` issues (rows ``| 90 | 1-2 |``, ``| 100 | 0 |``, ``| 10 | 18+ |``)."""
    for score, low, high, plus in re.findall(r"^\|\s*(\d+)\s*\|\s*(\d+)(?:\s*-\s*(\d+))?(\+)?\s*\|", rubric, re.M):
        lo = int(low)
        hi = int(high) if high else (10**9 if plus else lo)
        if lo <= issues <= hi:
            return int(score)
    return None


def pointwise(log: JudgeLog, protocol: str, *, query: str, report: str, rubric: str, today: str,
              structured: bool, templates: Mapping[str, Any] | None = None) -> Verdict:
    """The pointwise protocols (consistency, citation): the judge's score, and the rubric's for its issue count."""
    values = {"query": query, "report_content": report, "current_date": today}
    system, user = _upstream(templates, protocol, values) or (
        POINTWISE_SYSTEM.format(criterion=CRITERIA[protocol], today=today, rubric=rubric.strip()),
        f"TASK: {query}\n\nREPORT TO EVALUATE:\n{report}")
    parsed, why = _ask(log, protocol, system, user, POINTWISE_SCHEMA, structured)
    if parsed is None:
        return {"score": None, "unscored_reason": why}
    issues = int(parsed["total_issues"])
    expected = rubric_score(rubric, issues)
    return {"score": int(parsed["score"]), "total_issues": issues, "listed_issues": len(parsed["specific_issues"]),
            "rubric_score": expected, "score_matches_rubric": expected == int(parsed["score"])}


DEPTH_SYSTEM = """You compare two research reports, Report A and Report B, for depth of analysis: how far each goes \
beyond describing into reasoning, insight and layered analysis. Score each report 0-5 on every dimension below, \
sum the scores (at most {top}), and name the winner: the report with the higher total when the totals differ by \
more than 1, otherwise "tie". Judge analytical depth, not style or length.

Dimensions:
{dimensions}

Respond with one JSON object: {{"winner": "A" | "B" | "tie", "scores": {{"A": {{"<dimension>": 0-5, ..., "total": \
<sum>}}, "B": {{...}}}}, "justification": "<two or three sentences>", "major_flaws": {{"A": ["..."], \
"B": ["..."]}}}}."""

OUTCOME = {("A", "A"): "win", ("A", "B"): "loss", ("B", "A"): "loss", ("B", "B"): "win"}


def depth(log: JudgeLog, *, query: str, report: str, reference: str | None, dimensions: Mapping[str, str],
          structured: bool, templates: Mapping[str, Any] | None = None) -> Verdict:
    """Depth: the report against the reference, the report as A then as B; ``outcomes`` for the model, both orders."""
    if reference is None:
        return {"score": None, "unscored_reason": "the clone has no reference report for this question "
                                                  "(upstream skips depth then)"}
    listed = "\n".join(f"- {key}: {text}" for key, text in dimensions.items())
    system = DEPTH_SYSTEM.format(dimensions=listed, top=5 * len(dimensions))
    outcomes: list[str] = []
    raw: list[str] = []
    for key, model_is, (a, b) in (("depth.model_first", "A", (report, reference)),
                                  ("depth.model_second", "B", (reference, report))):
        upstream = _upstream(templates, "depth", {"query": query, "report_a": a, "report_b": b})
        asked_system, user = upstream or (
            system, f"ORIGINAL QUERY:\n{query}\n\n---\n\nREPORT A:\n{a}\n\n---\n\nREPORT B:\n{b}")
        parsed, why = _ask(log, key, asked_system, user, DEPTH_SCHEMA, structured)
        if parsed is None:
            return {"score": None, "unscored_reason": f"{key.split('.')[1].replace('_', ' ')}: {why}",
                    "outcomes": outcomes}
        winner = str(parsed["winner"])
        raw.append(winner)
        outcomes.append("tie" if winner == "tie" else OUTCOME[(model_is, winner)])
    points = {"win": 1.0, "tie": 0.5, "loss": 0.0}
    share = sum(points[o] for o in outcomes) / 2 * 100
    return {"score": share, "outcomes": outcomes, "winners": raw}


def checklist_ids(prefix: str, texts: Sequence[str]) -> dict[str, str]:
    """``{"q1": text1, "q2": text2, ...}``."""
    return {f"{prefix}{i}": text for i, text in enumerate(texts, 1)}
