"""Numeric answers (GSM8K style): extract the final number and compare numerically.

Extraction prefers an explicit final statement - the last ``#### x``, then the
last ``\\boxed{x}``, then the last "answer is x" / "Answer: x" - and falls back to
the last number anywhere in the reply. Numbers may carry thousands separators
(``1,450,000``), a currency sign (``$5``), a percent sign, a trailing full stop,
a leading ``+``/``-``/``−``, an exponent (``1e3``) or be a fraction (``3/4``).

Reading an explicit answer (``####``, box or statement), see docs/scoring.md:

* a minus sign is part of the number when it touches it (``Answer: -12``); a dash
  followed by a space after the statement is punctuation (``Answer - 12``);
* when the answer opens with an equation (``12 + 30 = 42``, ``x = -3``), the
  answer is the first number after its last ``=``;
* a comma groups thousands only when written tight before exactly three digits
  (``1,250``); ``2, 3`` is two items, and the first one is read.
"""

from __future__ import annotations

import math
import re
from typing import Literal, NamedTuple

from pytest_jeval.core.score import Score
from pytest_jeval.scoring._boxed import last_boxed

__all__ = [
    "PERCENT_CONVENTIONS",
    "FinalNumber",
    "PercentConvention",
    "extract_final_number",
    "final_number",
    "gsm8k_gold",
    "has_percent",
    "numbers_equal",
    "parse_number",
    "percent_readings",
    "score_numeric",
]

PercentConvention = Literal["either", "unit", "value"]
PERCENT_CONVENTIONS: tuple[PercentConvention, ...] = ("either", "unit", "value")
"""How a number with a percent sign compares: ``either`` (as a unit, 50% is 50, or as its value,
50% is 0.5), ``unit`` (the sign is dropped) or ``value`` (divided by 100)."""

_MINUS = "-\u2212\u2013"  # ASCII hyphen-minus, Unicode minus, en dash
_NUM = (
    rf"(?<![\w.])(?:[{_MINUS}+]\s?)?\$?\s?(?:[{_MINUS}]\s?)?"
    r"(?:\d{1,3}(?:,\d{3})+(?![\d])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s?/\s?\d+(?:\.\d+)?)?"
    r"|(?<![\w.])[-+]?\.\d+"
)
NUMBER_RE = re.compile(_NUM)
# Bounded, non-overlapping quantifiers: linear time on any input.
_FRAC = re.compile(r"\\[dt]?frac[ \t]{0,3}\{([^{}]{1,64})\}[ \t]{0,3}\{([^{}]{1,64})\}")
_HASHES = re.compile(r"####\s*([^\n]*)")
# A percent sign (or word) right after a number.
_PERCENT_AFTER = re.compile(r"[ \t]?(?:%|per[ \t]?cent(?:age)?\b|pct\b)", re.IGNORECASE)
# A statement's answer that opens by negating a value: "not 5, it is 6", "not $5$ but 6".
_NEGATED = re.compile(r"[\s*_`]*(?:not|never)\b", re.IGNORECASE)
# What may follow a negated value before the stated one: ", it is", "but", "rather", "instead it's".
_INSTEAD = re.compile(r"[\s,;:.*_`\u2014-]*(?:(?:but|rather|instead)\b[\s,]*)?"
                      r"(?:(?:it|that|this)(?:\s+is|'s|\u2019s)\b)?[\s:*_`]*", re.IGNORECASE)
# "answer" (optionally qualified: "the answer to part (b)"), a connector, then the
# answer. Between them only spaces, markdown, ":", an em dash, or a dash that a space
# follows: a dash touching the number is its sign ("Answer: -12").
_STATEMENT = re.compile(
    r"\b(?:final\s+answer|answer)\b(?:\s+(?:for|to|of|in)\s+(?:\$[^$\n]{0,40}\$|[^\n:=$]){1,40}?(?=\s+is\b))?"
    r"[ \t*_`]*(?:(?P<neg>isn['\u2019]t\b|is\s+not\b)|is\b|:|=|[-\u2013\u2014](?=\s)|would\s+be\b|will\s+be\b"
    r"|should\s+be\b)"
    r"(?:[\s*_`:\u2014]|[-\u2013](?=\s))*(?P<answer>[^\n]*)",
    re.IGNORECASE,
)
# The leading arithmetic of an answer: numbers, operators, brackets, spaces, "$",
# "%", single-letter variables, LaTeX operators and "=". Prose ends it.
_EXPRESSION = re.compile(
    r"(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?|\\(?:times|cdot|div)(?![A-Za-z])"
    r"|(?<![A-Za-z])[A-Za-z](?![A-Za-z])|[ \t+\-\u2212\u2013*/\u00d7\u00f7\u00b7^()\[\]{}$%=])*"
)


def _clean(token: str) -> str:
    """Canonical text of a matched number: no spaces, commas, ``$``; ASCII minus."""
    out = token.replace(",", "").replace("$", "").replace(" ", "")
    for ch in _MINUS[1:]:
        out = out.replace(ch, "-")
    if out.startswith("+"):
        out = out[1:]
    return out.replace("--", "-")


class FinalNumber(NamedTuple):
    """A number a reply states: its clean text and whether a percent sign followed it."""

    text: str
    percent: bool = False


_NEGATED_ONLY = FinalNumber("", False)
"""What a statement that only negates a value states: no answer."""


def _number_at(plain: str, m: re.Match[str]) -> FinalNumber:
    return FinalNumber(_clean(m.group(0)), _PERCENT_AFTER.match(plain, m.end()) is not None)


def _answer_number(text: str, negated: bool = False) -> FinalNumber | None:
    """The number an explicit answer states: the result of a leading equation, else its first number.

    ``12 + 30 = 42 apples`` -> ``42``; ``x = -3`` -> ``-3``; ``7, because 10 - 3 = 7`` -> ``7``
    (the equation is not at the start, so the first number counts). A negated first value
    (``not 5, it is 6``, or ``negated`` for a statement ``isn't``/``is not``) is skipped: the
    next value of the same clause is the answer, and :data:`_NEGATED_ONLY` when there is none.
    """
    plain = _strip_latex(text)
    neg = _NEGATED.match(plain)
    if negated or neg is not None:
        first = NUMBER_RE.search(plain, neg.end() if neg is not None else 0)
        if first is None:
            return None
        rest = plain[first.end():]
        percent = _PERCENT_AFTER.match(rest)
        rest = rest[percent.end():] if percent is not None else rest
        lead = _INSTEAD.match(rest)
        after = rest[lead.end() if lead is not None else 0:]
        if lead is None or not lead.group(0).strip() or not NUMBER_RE.match(after):
            return _NEGATED_ONLY  # "not 5." / "not 5 apples": no value is stated
        return _answer_number(after)
    match = _EXPRESSION.match(plain)
    lead_text = match.group(0) if match else ""
    if "=" in lead_text:
        offset = lead_text.rindex("=") + 1
        result = NUMBER_RE.search(plain, offset, len(lead_text))
        if result is not None:
            return _number_at(plain, result)
    m = NUMBER_RE.search(plain)
    return _number_at(plain, m) if m else None


def _strip_latex(text: str) -> str:
    """Turn the LaTeX that wraps numbers into plain text (``\\frac{3}{4}`` -> ``3/4``)."""
    text = _FRAC.sub(lambda m: m.group(1).strip() + "/" + m.group(2).strip(), text)
    text = re.sub(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}", r" \1 ", text)
    text = re.sub(r",[ \t]{0,3}\\![ \t]{0,3}", ",", text)  # "11,\\! 111": LaTeX thousands, tight
    return text.replace("\\$", "$").replace("\\%", "%").replace("\\!", "").replace("{,}", ",")


def final_number(text: str) -> FinalNumber | None:
    """The final number the reply states (see the module docstring), with its percent sign, or None.

    A last answer statement that only negates a value (``The answer is not 5.``) states no
    number: None, whatever numbers come before it.
    """
    if not text:
        return None
    for m in reversed(list(_HASHES.finditer(text))):
        found = _answer_number(m.group(1))
        if found is not None:
            return found if found.text else None
    boxed = last_boxed(text)
    if boxed is not None:
        found = _answer_number(boxed)
        if found is not None:
            return found if found.text else None
    for m in reversed(list(_STATEMENT.finditer(text))):
        found = _answer_number(m.group("answer"), negated=m.group("neg") is not None)
        if found is not None:
            return found if found.text else None
    plain = _strip_latex(text)
    matches = list(NUMBER_RE.finditer(plain))
    return _number_at(plain, matches[-1]) if matches else None


def extract_final_number(text: str) -> str | None:
    """The final number the reply states, as clean text (``"1450000"``, ``"-2.5"``, ``"3/4"``), or None."""
    found = final_number(text)
    return found.text if found is not None else None


def parse_number(s: str | float | None) -> float | None:
    """Parse ``"1,234"``, ``"$5"``, ``"3/4"``, ``"-2.50"``, ``"1e3"``, ``"50%"`` to a float (None if not a number)."""
    if s is None or isinstance(s, bool):
        return None
    if isinstance(s, (int, float)):
        return float(s) if math.isfinite(s) else None
    text = _strip_latex(s).strip().rstrip(".").strip()
    text = _PERCENT_AFTER.sub("", text).strip()
    m = NUMBER_RE.fullmatch(text)
    if not m:
        return None
    cleaned = _clean(text)
    try:
        if "/" in cleaned:
            num, den = cleaned.split("/")
            value = float(num) / float(den)
        else:
            value = float(cleaned)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def values_close(x: float, y: float, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Exact equality for two whole numbers, else ``math.isclose`` with the tolerances.

    Whole numbers are compared exactly so that a relative tolerance never makes
    ``1450001`` equal to ``1450000``.
    """
    if x.is_integer() and y.is_integer():
        return x == y
    return math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol)


def numbers_equal(a: str | float | None, b: str | float | None, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """True when both parse as numbers and are equal (whole numbers exactly, others within the tolerances)."""
    x, y = parse_number(a), parse_number(b)
    if x is None or y is None:
        return False
    return values_close(x, y, rel_tol, abs_tol)


def gsm8k_gold(answer_field: str) -> str:
    """The GSM8K gold: the text after the last ``#### `` with thousands separators removed."""
    if "####" not in answer_field:
        raise ValueError("GSM8K answer field has no '####' line")
    return answer_field.rpartition("####")[2].strip().replace(",", "")


def has_percent(text: str | float) -> bool:
    """True when ``text`` is a number written with a percent sign (``33.5%``, ``33.5\\%``, ``33.5 percent``)."""
    if not isinstance(text, str):
        return False
    plain = _strip_latex(text).strip().rstrip(".").strip()
    m = NUMBER_RE.match(plain)
    return m is not None and _PERCENT_AFTER.match(plain, m.end()) is not None


def percent_readings(value: float, percent: bool, convention: PercentConvention = "either") -> list[float]:
    """The values a number may stand for: itself, or with a percent sign the convention's readings."""
    if not percent or convention == "unit":
        return [value]
    if convention == "value":
        return [value / 100]
    return [value, value / 100]


def score_numeric(reply_text: str, gold: str | float, *, percent: PercentConvention = "either") -> Score:
    """Score a reply whose answer is a number; unscored when it states no number.

    ``percent`` is the convention for a percent sign on either side (:data:`PERCENT_CONVENTIONS`);
    ``scoring_metadata.percent`` names it when a sign was read.
    """
    if percent not in PERCENT_CONVENTIONS:
        raise ValueError(f"percent must be one of {', '.join(PERCENT_CONVENTIONS)}, got {percent!r}")
    gold_value = parse_number(gold)
    if gold_value is None:
        raise ValueError(f"gold answer is not a number: {gold!r}")
    found = final_number(reply_text)
    if found is None:
        return Score.unscorable("no number found", expected=str(gold))
    value = parse_number(found.text)
    gold_percent = has_percent(gold)
    correct = value is not None and any(
        values_close(a, b) for a in percent_readings(value, found.percent, percent)
        for b in percent_readings(gold_value, gold_percent, percent))
    metadata: dict[str, object] = {"extracted_value": value, "gold_value": gold_value}
    if found.percent or gold_percent:
        metadata["percent"] = percent
    return Score(correct=correct, extracted=found.text, expected=str(gold), metadata=metadata)
