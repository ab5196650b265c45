"""RACE, as DeepResearch Bench computes it (``deepresearch_bench_race.py`` and ``utils/score_calculator.py``).

One judge call per task scores the target report (``article_1``) and the reference report (``article_2``) on every
criterion of the task's four dimensions, 0-10 each. Per dimension, each report's score is the weighted average
of its criterion scores (criterion weights from ``criteria.jsonl``); a report's total is the sum over dimensions
of the dimension weight times that average. The task's **overall score is target / (target + reference)**:
0.5 means as good as the reference. Each dimension is normalised the same way. Upstream publishes the means
over tasks times 100.

The judge's criterion text is matched to the task's criteria as upstream matches it: exactly, else ignoring
case, else by substring either way (the first criterion that matches), else it gets the dimension's average
weight. A dimension's reference average is 0 when the last score item read had no ``article_2_score``
(upstream's rule, kept).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["DIMENSIONS", "criteria_for_prompt", "extract_json", "overall", "weighted_scores"]

DIMENSIONS = ("comprehensiveness", "insight", "instruction_following", "readability")


def criteria_for_prompt(criteria: Mapping[str, Any]) -> str:
    """The criteria the judge sees: per dimension, each criterion and its explanation (no weights), as JSON."""
    shown: dict[str, list[dict[str, Any]]] = {}
    for dim, items in (criteria.get("criterions") or {}).items():
        if not isinstance(items, list):
            continue
        shown[dim] = [{"criterion": c["criterion"], "explanation": c["explanation"]} for c in items
                      if isinstance(c, dict) and "criterion" in c and "explanation" in c]
    return json.dumps(shown, ensure_ascii=False, indent=2)


def _loads(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _outermost(text: str) -> str | None:
    """The object from the first ``{`` to its matching ``}``, when that parses."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                candidate = text[start:i + 1]
                return candidate if _loads(candidate) else None
    return None


def _keyword_scores(text: str) -> str | None:
    """Upstream's last resort: criterion and score fields picked out of a reply that is not JSON."""
    if not all(word in text for word in ("comprehensiveness", "article_1_score", "article_2_score")):
        return None
    found: dict[str, list[dict[str, Any]]] = {}
    for dim in DIMENSIONS:
        start = next((p for p in (text.find(f'"{dim}"'), text.find(f"'{dim}'"), text.find(dim)) if p >= 0), -1)
        if start < 0:
            continue
        found[dim] = []
        end = len(text)
        for other in DIMENSIONS:
            if other == dim:
                continue
            pos = next((p for p in (text.find(f'"{other}"', start), text.find(f"'{other}'", start),
                                    text.find(other, start + len(dim))) if p >= 0), -1)
            if pos >= 0:
                end = min(end, pos)
        part = text[start:end]
        names = re.findall(r'"criterion"\s*:\s*"([^"]+)"', part)
        first = [float(x) for x in re.findall(r'"article_1_score"\s*:\s*(\d+\.?\d*)', part)]
        second = [float(x) for x in re.findall(r'"article_2_score"\s*:\s*(\d+\.?\d*)', part)]
        found[dim] = [{"criterion": n, "article_1_score": a, "article_2_score": b}
                      for n, a, b in zip(names, first, second)]
    return json.dumps(found) if any(found.values()) else None


def extract_json(text: Any) -> str | None:
    """The JSON object in a judge reply, found as upstream finds it (in this order): the whole reply when it is one
    object; a ```json block; the whole reply; the object from the first ``{`` to its match; the text from the first
    ``{`` to the last ``}``; the criterion and score fields picked out one by one. None when all fail."""
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}") and _loads(stripped):
        return stripped
    block = re.search(r"```json\s*([\s\S]*?)\s*```", text)
    if block and _loads(block.group(1).strip()):
        return block.group(1).strip()
    if _loads(stripped):
        return stripped
    found = _outermost(text)
    if found is not None:
        return found
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last and _loads(text[first:last + 1]):
        return text[first:last + 1]
    return _keyword_scores(text)


def _weight(criterion: str, weights: Mapping[str, float]) -> tuple[float, bool]:
    """The weight of the judge's criterion text, and whether it matched a criterion (else the average weight)."""
    if criterion in weights:
        return float(weights[criterion]), True
    lower = criterion.lower()
    for key, value in weights.items():
        if key.lower() == lower:
            return float(value), True
    for key, value in weights.items():
        if lower in key.lower() or key.lower() in lower:
            return float(value), True
    return sum(float(v) for v in weights.values()) / len(weights), False


def weighted_scores(judged: Mapping[str, Any], criteria: Mapping[str, Any]) -> dict[str, Any]:
    """Each report's per-dimension weighted average and total (see the module docstring).

    Returns ``{"target": {"dims": {dim: avg}, "total": t}, "reference": {...}, "unmatched": [...]}``;
    ValueError when the criteria hold none.
    """
    dim_weights = criteria.get("dimension_weight") or {}
    if not criteria.get("criterions"):
        raise ValueError(f"task {criteria.get('id')!r} has no criteria")
    crit_weights = {dim: {c["criterion"]: c["weight"] for c in items}
                    for dim, items in criteria["criterions"].items()}
    out: dict[str, Any] = {"target": {"dims": {}, "total": 0.0}, "reference": {"dims": {}, "total": 0.0},
                           "unmatched": []}
    last_second: float | None = None
    for dim, items in judged.items():
        weights = crit_weights.get(dim)
        if not isinstance(items, list) or dim not in dim_weights or not weights:
            continue
        target_sum = reference_sum = total_weight = 0.0
        for item in items:
            if not isinstance(item, dict):
                continue
            raw = item.get("criterion")
            criterion = raw.strip() if isinstance(raw, str) else None
            first_raw, second_raw = item.get("article_1_score"), item.get("article_2_score")
            if item.get("target_score") is not None and first_raw is None:
                first_raw = item["target_score"]
            try:
                first = float(first_raw) if first_raw is not None else None
                second = float(second_raw) if second_raw is not None else None
            except (TypeError, ValueError):
                continue
            last_second = second
            if not criterion or first is None:
                continue
            weight, matched = _weight(criterion, weights)
            if not matched:
                out["unmatched"].append(f"{dim}:{criterion}")
            target_sum += first * weight
            total_weight += weight
            if second is not None:
                reference_sum += second * weight
        if total_weight > 0:
            target_avg = target_sum / total_weight
            reference_avg = reference_sum / total_weight if last_second is not None else 0.0
        else:
            target_avg = reference_avg = 0.0
        out["target"]["dims"][dim] = target_avg
        out["reference"]["dims"][dim] = reference_avg
        out["target"]["total"] += target_avg * float(dim_weights.get(dim, 0))
        out["reference"]["total"] += reference_avg * float(dim_weights.get(dim, 0))
    return out


def overall(scores: Mapping[str, Any]) -> dict[str, float]:
    """``overall`` = target / (target + reference) of the totals, and the same per dimension (0 when both are 0,
    and for a dimension the judge left out), on upstream's 0-1 scale."""

    def share(target: float, reference: float) -> float:
        return target / (target + reference) if target + reference > 0 else 0.0

    target, reference = scores["target"], scores["reference"]
    out = {"overall": share(target["total"], reference["total"])}
    for dim in DIMENSIONS:
        if dim in target["dims"]:
            out[dim] = share(target["dims"][dim], reference["dims"][dim])
        else:
            out[dim] = 0.0
    return out
