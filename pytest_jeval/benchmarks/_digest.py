"""The briefing sets (daily_digest, morning_brief): their input rendering and scoring (items present,
wrong items absent, time order).

A gold item is ``{key, phrases, time}``: it is *mentioned* when one of its ``phrases``
occurs as whole words in the reply, both normalised SQuAD-style
(:func:`~pytest_jeval.scoring.text.normalize_text`: lower case, no punctuation or articles);
its position is the earliest such occurrence. Components:

* ``coverage``: required items mentioned / required items.
* ``exclusion``: ``coverage * (1 - distractors mentioned / distractors)`` (distractors:
  cancelled meetings, other days, other people, tasks already done); scaled by coverage so
  that leaving things out earns nothing by itself (saying nothing is not a digest).
* ``order``: over the pairs of timed required items with different times, the share whose
  two items are both mentioned, the earlier one first (a missing item breaks its pairs);
  with no such pair, equal to ``coverage``.

``value = 0.5 * coverage + 0.3 * exclusion + 0.2 * order``; ``is_correct`` iff
``value >= 0.8``. :func:`score_briefing` with ``max_words`` multiplies the value by the
length factor (1 up to ``max_words`` words, falling linearly to 0 at twice as many) and
requires ``words <= max_words`` for ``is_correct``. An empty reply is unscored.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.benchmarks._usecase import composite_score
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score
from pytest_jeval.scoring.text import normalize_text

WEIGHTS = {"coverage": 0.5, "exclusion": 0.3, "order": 0.2}
THRESHOLD = 0.8


def check_items(row_id: str, items: Any, *, timed: bool) -> list[dict[str, Any]]:
    """The gold items of a row as ``{key, phrases, time, kind}`` dicts; ValueError naming the row when malformed."""
    out = []
    for item in items:
        phrases = [str(p) for p in item["phrases"] if normalize_text(str(p))]
        if not phrases:
            raise ValueError(f"{row_id}: item {item.get('key')!r} has no phrase to match")
        time = str(item.get("time") or "") if timed else ""
        if time and not (len(time) == 5 and time[2] == ":" and time.replace(":", "").isdigit()):
            raise ValueError(f"{row_id}: item {item['key']!r} has time {time!r}, not HH:MM")
        out.append({"key": str(item["key"]), "phrases": phrases, "time": time, "kind": str(item.get("kind") or "")})
    return out


def render_calendar(entries: list[dict[str, Any]]) -> str:
    """``- <date> <start>-<end> | <title> | with <who> [| at <place>] | <status>`` lines."""
    lines = []
    for c in entries:
        place = f" | at {c['place']}" if c.get("place") else ""
        lines.append(f"- {c['date']} {c['start']}-{c['end']} | {c['title']} | with {c['with']}{place} | {c['status']}")
    return "\n".join(lines) or "(none)"


def render_tasks(tasks: list[dict[str, Any]]) -> str:
    """``- <title> | owner: <who> | due <when> | priority <p> | <status>`` lines."""
    return "\n".join(f"- {t['title']} | owner: {t['owner']} | due {t['due']} | priority {t['priority']} | {t['status']}"
                     for t in tasks) or "(none)"


def first_mention(tokens: list[str], phrases: list[str]) -> int | None:
    """The token index of the earliest whole-word occurrence of any phrase, or None."""
    best: int | None = None
    for phrase in phrases:
        part = normalize_text(phrase).split()
        n = len(part)
        for i in range(len(tokens) - n + 1):
            if tokens[i:i + n] == part:
                if best is None or i < best:
                    best = i
                break
    return best


def order_share(required: list[dict[str, Any]], positions: list[int | None]) -> float | None:
    """Share of the timed pairs (different times) mentioned in chronological order; None without a pair."""
    timed = [(item["time"], pos) for item, pos in zip(required, positions) if item["time"]]
    pairs = good = 0
    for i, (t1, p1) in enumerate(timed):
        for t2, p2 in timed[i + 1:]:
            if t1 == t2:
                continue
            pairs += 1
            if p1 is None or p2 is None:
                continue
            early, late = (p1, p2) if t1 < t2 else (p2, p1)
            good += early < late
    return good / pairs if pairs else None


def length_factor(words: int, max_words: int) -> float:
    """1.0 up to ``max_words``, then linearly down to 0.0 at ``2 * max_words``."""
    if words <= max_words:
        return 1.0
    return max(0.0, 1.0 - (words - max_words) / max_words)


def score_briefing(reply: str, sample: Sample, *, max_words: int | None = None) -> Score:
    """The composite of coverage, exclusion and order, times the length factor when ``max_words`` is set."""
    m = sample.metadata
    text = strip_reasoning(reply)
    if not text.strip():
        return Score.unscorable("empty reply", expected=sample.target)
    tokens = normalize_text(text).split()
    required, distractors = m["required"], m["distractors"]
    positions = [first_mention(tokens, item["phrases"]) for item in required]
    found = [item["key"] for item, pos in zip(required, positions) if pos is not None]
    mentioned = [item["key"] for item in distractors if first_mention(tokens, item["phrases"]) is not None]
    coverage = len(found) / len(required)
    exclusion = coverage * (1 - len(mentioned) / len(distractors) if distractors else 1.0)
    order = order_share(required, positions)
    components = {"coverage": coverage, "exclusion": exclusion, "order": coverage if order is None else order}
    meta: dict[str, Any] = {"missing": [i["key"] for i, p in zip(required, positions) if p is None],
                            "wrongly_mentioned": mentioned}
    words = len(text.split())
    if max_words is not None:
        meta.update(words=words, max_words=max_words)
    result = composite_score(components, WEIGHTS, THRESHOLD, extracted=f"{len(found)}/{len(required)} items",
                             expected=sample.target, metadata=meta)
    if max_words is None:
        return result
    factor = length_factor(words, max_words)
    value = round((result.value or 0.0) * factor, 4)
    result.metadata["components"]["length"] = round(factor, 4)
    return dataclasses.replace(result, value=value, correct=value >= THRESHOLD and words <= max_words)
