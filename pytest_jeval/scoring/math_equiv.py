"""Math answers (MATH-500 style): extract the final answer and decide equivalence.

``math_equal`` tries three methods in order and stops at the first that decides:

1. ``string``   - equal after ``normalize_latex`` (cheap, handles formatting noise);
2. ``numeric``  - both sides are plain numbers (``0.5``, ``\\frac{1}{2}``, ``1/2``,
   ``10,080``, ``137\\frac12``): compared with a relative tolerance of 1e-6. If
   both are numbers this step is final - ``11`` is never "symbolically" ``10``;
3. ``symbolic`` - math-verify (LaTeX -> SymPy) in a killable worker process
   with a time bound (see ``_symbolic``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from ..score import Score
from ._boxed import last_boxed
from ._symbolic import symbolic_compare
from .numeric import parse_number, values_close

__all__ = ["compare_math", "final_math_answer", "last_boxed", "math_equal", "normalize_latex", "score_math"]

SYMBOLIC_TIMEOUT = 10.0

_WORD_UNITS = (
    r"units?|cm|mm|km|meters?|metres?|centimeters?|inch(?:es)?|feet|foot|ft|yards?|miles?|mph|"
    r"degrees?|cents?|dollars?|hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|years?|sq\w*|square\w*|"
    r"grams?|kg|pounds?|lbs?|ounces?|oz|liters?|litres?|ml|gallons?|points?|people|students?|ways"
)
# Single letters are units only inside \text{...}; bare, they may be variables ("2m").
_UNITS = _WORD_UNITS + r"|m|s|g|l|in"
_TEXT_CMD = r"\\(?:text|textbf|textit|textrm|textnormal|mbox|mathrm|mathbf|operatorname)\s*"
_UNIT_TEXT = re.compile(rf"{_TEXT_CMD}\{{\s*(?:{_UNITS})\s*\}}(?:\s*\^\s*\{{?\s*[23]\s*\}}?)?", re.IGNORECASE)
_BARE_UNIT = re.compile(rf"(.*?[\d}}])(?:{_WORD_UNITS})(?:\^\{{?[23]\}}?)?", re.IGNORECASE)
_STATEMENT = re.compile(
    r"(?:final\s+answer|the\s+answer|\banswer(?=\s*:))\s*(?:is|:|=)\s*:?\s*([^\n]+)", re.IGNORECASE
)
_TOKEN = r"(\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9])"


def final_math_answer(text: str) -> str | None:
    """The final answer in a reply: the last ``\\boxed{}``, else the last "final answer is ..." statement."""
    boxed = last_boxed(text or "")
    if boxed is not None:
        return boxed
    statements = list(_STATEMENT.finditer(text or ""))
    if not statements:
        return None
    answer = statements[-1].group(1)
    answer = re.split(r"\.\s+(?=[A-Z])|\.\s*$", answer.strip())[0]  # cut "5. I hope it is correct."
    maths = re.findall(r"\$+([^$]+)\$+", answer)
    if maths:
        answer = maths[-1]
    answer = answer.strip().rstrip(".").strip()
    return answer or None


def _fix_fracs(s: str) -> str:
    """``\\frac12`` / ``\\frac1{2}`` / ``\\frac{1}2`` -> ``\\frac{1}{2}`` (spaces already removed)."""
    pattern = re.compile(r"\\frac" + _TOKEN + _TOKEN)

    def brace(x: str) -> str:
        return x if x.startswith("{") else "{" + x + "}"

    return pattern.sub(lambda m: "\\frac" + brace(m.group(1)) + brace(m.group(2)), s)


def normalize_latex(s: str) -> str:
    """Canonical text of a LaTeX answer, for string comparison.

    Drops math delimiters, ``\\left``/``\\right``, degree signs, thin spaces,
    unit words (``\\text{ cm}``, ``\\mbox{ inches}^2``), dollar signs, ``\\%``,
    all whitespace and a trailing full stop; rewrites ``\\dfrac``/``\\tfrac`` as
    ``\\frac``, ``\\frac12`` as ``\\frac{1}{2}``, ``\\sqrt2`` as ``\\sqrt{2}``,
    ``.5`` as ``0.5``; unwraps ``\\text{...}``; drops a short ``x =`` prefix.
    """
    s = (s or "").strip()
    s = s.replace("\\$", "").replace("$", "")
    s = re.sub(r"\\[()\[\]]", "", s)
    s = re.sub(r"\\[dt]frac(?![A-Za-z])", r"\\frac", s)
    s = re.sub(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big|bigg|Bigg)(?![A-Za-z])\.?", "", s)
    s = re.sub(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![A-Za-z])", "", s)
    s = re.sub(r"\\displaystyle(?![A-Za-z])|\\[!,;:> ]|\\q?quad(?![A-Za-z])|~", "", s)
    s = _UNIT_TEXT.sub("", s)
    s = re.sub(rf"{_TEXT_CMD}\{{([^{{}}]*)\}}", r"\1", s)
    s = s.replace("\\%", "").replace("%", "")
    s = re.sub(r"\s+", "", s)
    m = _BARE_UNIT.fullmatch(s)  # "5cm" -> "5", but only when a number is left
    if m and _as_number(_fix_fracs(m.group(1))) is not None:
        s = m.group(1)
    s = s.rstrip(".")
    s = _fix_fracs(s)
    s = re.sub(r"\\sqrt(\\[A-Za-z]+|[A-Za-z0-9])", r"\\sqrt{\1}", s)
    s = re.sub(r"(?<![\d}])\.(\d)", r"0.\1", s)
    m = re.fullmatch(r"[A-Za-z](?:_\{?\w\}?)?(?:=|\\in)(.+)", s)
    if m and "=" not in m.group(1):
        s = m.group(1)
    m = re.fullmatch(r"\(([A-Za-z])\)", s)  # "(C)" -> "C"
    return m.group(1) if m else s


_FRAC = re.compile(r"(-?)(\d+)?\\frac\{(-?\d+(?:\.\d+)?)\}\{(-?\d+(?:\.\d+)?)\}")


def _as_number(normalized: str) -> float | None:
    """A normalized answer as a number, when it is one (integer, decimal, fraction, mixed number)."""
    if re.fullmatch(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:/\d+)?|-?\d+(?:\.\d+)?e[-+]?\d+", normalized):
        return parse_number(normalized)
    m = _FRAC.fullmatch(normalized)
    if not m:
        return None
    sign, whole, num, den = m.groups()
    try:
        value = Fraction(num) / Fraction(den)
    except ZeroDivisionError:
        return None
    if whole is not None:
        value = int(whole) + value  # mixed number: 137\frac{1}{2}
    result = float(-value if sign else value)
    return result if math.isfinite(result) else None


def _strip_dollars(s: str) -> str:
    return re.sub(r"\\?\$", "", s).strip()


def compare_math(pred: str, gold: str, *, timeout: float = SYMBOLIC_TIMEOUT) -> tuple[bool, str, str | None]:
    """``(equal, method, symbolic_outcome)`` - the details behind ``math_equal``."""
    a, b = normalize_latex(pred), normalize_latex(gold)
    if a and (a == b or (re.fullmatch(r"[A-Za-z ]+", a) and a.casefold() == b.casefold())):
        return True, "string", None
    x, y = _as_number(a), _as_number(b)
    if x is not None and y is not None:
        return values_close(x, y), "numeric", None
    if not a or not b:
        return False, "string", None
    outcome = symbolic_compare(_strip_dollars(pred), _strip_dollars(gold), timeout=timeout)
    return outcome == "equal", "symbolic", outcome


def math_equal(pred: str, gold: str, *, timeout: float = SYMBOLIC_TIMEOUT) -> bool:
    """True when ``pred`` and ``gold`` are the same mathematical answer (string, numeric, then symbolic)."""
    return compare_math(pred, gold, timeout=timeout)[0]


def score_math(reply_text: str, gold: str, *, timeout: float = SYMBOLIC_TIMEOUT) -> Score:
    """Score a reply against a LaTeX gold answer; unscored when no final answer can be found."""
    extracted = final_math_answer(reply_text)
    if extracted is None:
        return Score.unscorable("no final answer found", expected=gold)
    correct, method, outcome = compare_math(extracted, gold, timeout=timeout)
    metadata = {"extracted": extracted, "normalized_pred": normalize_latex(extracted),
                "normalized_gold": normalize_latex(gold), "method": method}
    if outcome is not None:
        metadata["symbolic_outcome"] = outcome
    return Score(correct=correct, extracted=extracted, expected=gold, metadata=metadata)
