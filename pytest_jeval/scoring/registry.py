"""Scorers by name, as functions of a stored JSONL record: ``(record) -> Score``.

``jeval rescore`` uses this registry to score stored answers again (``model_answer``
against ``expected``) without querying any model. Each entry wraps one of the
deterministic scorers of :mod:`pytest_jeval.scoring`:

* ``numeric``  - :func:`score_numeric` (GSM8K);
* ``mcq``      - :func:`score_choice`; the valid letters come from
  ``scoring_metadata.valid_letters`` when the record has them, else ``A``-``D``
  widened to include the expected letter. When the regex finds no letter but the
  run's judge fallback had chosen one (``scoring_metadata.extraction == "judge"``),
  that stored choice is kept: the judge is not asked again;
* ``math``     - :func:`score_math` (MATH-500 style);
* ``gaia``     - :func:`score_gaia`;
* ``exact``    - :func:`exact_match` (SQuAD normalisation);
* ``contains`` - the expected answer, or one of ``scoring_metadata.accepted``,
  appears as whole words in the answer (the quickstart's text rule).

Register more with :func:`register_scorer`.
"""

from __future__ import annotations

import dataclasses
import re
import string
from typing import Any, Callable, Optional

from ..score import Score
from .gaia import score_gaia
from .math_equiv import score_math
from .mcq import score_choice
from .numeric import score_numeric
from .text import exact_match

__all__ = ["RecordScorer", "get_scorer", "register_scorer", "scorer_names"]

RecordScorer = Callable[[dict[str, Any]], Score]

_REGISTRY: dict[str, RecordScorer] = {}


def register_scorer(name: str, scorer: Optional[RecordScorer] = None) -> Any:
    """Register ``scorer`` under ``name``; usable as a decorator (``@register_scorer("x")``)."""

    def add(fn: RecordScorer) -> RecordScorer:
        if name in _REGISTRY and _REGISTRY[name] is not fn:
            raise ValueError(f"a scorer named {name!r} is already registered")
        _REGISTRY[name] = fn
        return fn

    return add(scorer) if scorer is not None else add


def get_scorer(name: str) -> RecordScorer:
    """The scorer registered as ``name``; KeyError naming the known scorers otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown scorer {name!r}; known: {', '.join(scorer_names())}") from None


def scorer_names() -> list[str]:
    """Names of the registered scorers, sorted."""
    return sorted(_REGISTRY)


def _answer(record: dict[str, Any]) -> str:
    return str(record.get("model_answer") or "")


def _expected(record: dict[str, Any]) -> str:
    expected = record.get("expected")
    if expected is None:
        raise ValueError(f"record {record.get('record_id')!r} has no expected answer")
    return str(expected)


def _metadata(record: dict[str, Any]) -> dict[str, Any]:
    meta = record.get("scoring_metadata")
    return meta if isinstance(meta, dict) else {}


@register_scorer("numeric")
def record_numeric(record: dict[str, Any]) -> Score:
    """The final number of the answer equals the expected number."""
    return score_numeric(_answer(record), _expected(record))


def valid_letters(record: dict[str, Any]) -> str:
    """The option letters of a multiple-choice record (see the module docstring)."""
    stored = _metadata(record).get("valid_letters")
    if isinstance(stored, str) and stored.isalpha() and stored.isascii():
        return stored.upper()
    gold = _expected(record).strip().upper()
    last = string.ascii_uppercase.index(gold) if len(gold) == 1 and gold in string.ascii_uppercase else 3
    return string.ascii_uppercase[: max(4, last + 1)]


@register_scorer("mcq")
def record_mcq(record: dict[str, Any]) -> Score:
    """The letter the answer states equals the expected letter (stored judge choices are kept)."""
    result = score_choice(_answer(record), _expected(record), valid_letters(record))
    stored = _metadata(record)
    if result.unscored and "judge_error" in stored:
        return dataclasses.replace(result, metadata=dict(stored))  # the judge failed in the run too
    if result.unscored and stored.get("extraction") == "judge":
        # The run's judge fallback already read this answer; reuse its verdict.
        letter = stored.get("candidate_letter")
        if letter is None:
            return Score(correct=None, expected=result.expected, metadata=dict(stored))
        return Score(correct=letter == result.expected, extracted=letter, expected=result.expected,
                     metadata=dict(stored))
    return result


@register_scorer("math")
def record_math(record: dict[str, Any]) -> Score:
    """The final (boxed) answer is mathematically equal to the expected one."""
    return score_math(_answer(record), _expected(record))


@register_scorer("gaia")
def record_gaia(record: dict[str, Any]) -> Score:
    """GAIA's normalised exact match of the final answer."""
    return score_gaia(_answer(record), _expected(record))


@register_scorer("exact")
def record_exact(record: dict[str, Any]) -> Score:
    """The whole answer equals the expected one after SQuAD normalisation."""
    answer, gold = _answer(record).strip(), _expected(record)
    if not answer:
        return Score.unscorable("empty answer", expected=gold)
    return Score(correct=exact_match(answer, gold), extracted=answer, expected=gold,
                 metadata={"match": "exact"})


def _words(text: str) -> str:
    return " " + re.sub(r"[^a-z0-9]+", " ", text.lower()).strip() + " "


@register_scorer("contains")
def record_contains(record: dict[str, Any]) -> Score:
    """The expected answer (or an accepted alias) appears as whole words in the answer."""
    answer, gold = _answer(record), _expected(record)
    accepted = _metadata(record).get("accepted")
    golds = [str(g) for g in accepted] if isinstance(accepted, list) and accepted else [gold]
    if not answer.strip():
        return Score.unscorable("empty reply", expected=gold)
    hit = next((g for g in golds if _words(g) in _words(answer)), None)
    return Score(correct=hit is not None, extracted=hit or answer.strip()[:80], expected=gold,
                 metadata={"match": "contains", "accepted": golds})
