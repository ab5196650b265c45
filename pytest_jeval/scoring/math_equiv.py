"""Math answers (MATH-500 style): extract the final answer and decide equivalence.

``math_equal`` tries three methods in order and stops at the first that decides:

1. ``string``   - equal after ``normalize_latex`` (cheap, handles formatting noise);
2. ``numeric``  - both sides are plain numbers (``0.5``, ``\\frac{1}{2}``, ``1/2``,
   ``10,080``, ``137\\frac12``): compared with a relative tolerance of 1e-6. If
   both are numbers this step is final - ``11`` is never "symbolically" ``10``.
   A list of several numbers is never equal to one number (``2, 3`` is not ``23``,
   ``1, 250`` is not ``1250``: a comma groups thousands only when written tight);
3. ``symbolic`` - math-verify (LaTeX -> SymPy) in a killable worker process
   with a time bound (see ``_symbolic``).

The reading rules (answer statements, prose, equations, commas) are documented in
docs/scoring.md.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from pytest_jeval.core.score import Score
from pytest_jeval.scoring._boxed import last_boxed
from pytest_jeval.scoring._symbolic import symbolic_compare
from pytest_jeval.scoring.numeric import parse_number, values_close

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
# "final answer is", "the answer is", "Answer:", also qualified: "the answer for $k$ is".
_STATEMENT = re.compile(
    r"(?:final\s+answer|the\s+answer|\banswer(?=[ \t*_`]{0,6}:))"
    r"(?:\s+(?:for|to|of|in)\s+(?:\$[^$\n]{0,40}\$|[^\n:=$]){1,40}?(?=\s+is\b))?"
    r"[ \t*_`]{0,6}(?:is\b|:|=)[ \t*_`]{0,6}:?\s*([^\n]+)",
    re.IGNORECASE,
)
# Where prose starts after a stated answer (searched outside $...$ only): a sentence
# end, a semicolon, or a clause word such as "because" / ", which".
_PROSE = re.compile(
    r"\.\s+(?=[A-Z])|\.\s*$|(?<!\\);|,?[ \t]{1,8}(?:because|since|as|so|which|where|when|while|given|hence|thus"
    r"|therefore|but|if|unless|i\.e\.|e\.g\.|that[ \t]is|I[ \t]hope)\b",
)
_LEAD_IN = re.compile(r"[\s*_`]*(?:(?:so|thus|hence|therefore),?\s+)?(?:the\s+)?", re.IGNORECASE)
_MATH_SPAN = re.compile(r"\$+[^$]+\$+")
_TOKEN = r"(\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9])"
_VARIABLE = r"[A-Za-z](?:_\{?\w\}?)?"
# A comma that a space (or a LaTeX space) follows, between a digit and exactly three
# digits: without the space it would read as a thousands separator ("1, 250" vs "1,250").
_ITEM_COMMA = re.compile(r"(?<=\d),(?:\s|\\[,;: ]|~|\\q?quad(?![A-Za-z])){1,12}(?=\d{3}(?!\d))")
# Arithmetic on numbers only: digits, operators, brackets, \frac, \cdot, \times, \div.
_ARITHMETIC = re.compile(r"(?=.*\d)(?:[\d.,+\-*/^()\[\]{}]|\\(?:frac|cdot|times|div)(?![A-Za-z]))+")


def final_math_answer(text: str) -> str | None:
    """The final answer in a reply: the last ``\\boxed{}``, else the last "final answer is ..." statement."""
    boxed = last_boxed(text or "")
    if boxed is not None:
        return boxed
    statements = list(_STATEMENT.finditer(text or ""))
    if not statements:
        return None
    answer = statements[-1].group(1).strip()
    for _ in range(3):  # "Final Answer: The final answer is 42." names its answer twice
        inner = _STATEMENT.search(answer)
        if inner is None or not _LEAD_IN.fullmatch(answer[: inner.start()]):
            break
        answer = inner.group(1).strip()
    answer = _cut_prose(answer)  # "42 because ...", "5. I hope it is correct."
    maths = re.findall(r"\$+([^$]+)\$+", answer)
    if maths:
        answer = maths[-1]
    answer = answer.strip().lstrip("*`").rstrip(".*` \t").strip()  # markdown: "**42**.", "`7`"
    return answer or None


def _cut_prose(answer: str) -> str:
    """``answer`` up to the first sentence end or clause word outside ``$...$`` math."""
    masked = _MATH_SPAN.sub(lambda m: "$" + "0" * (len(m.group(0)) - 2) + "$", answer)
    m = _PROSE.search(masked)
    return answer[: m.start()] if m else answer


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
    s = re.sub(r",[ \t]{0,3}\\![ \t]{0,3}", ",", s).replace("{,}", ",")  # LaTeX thousands: tight commas
    s = _ITEM_COMMA.sub(",\ue000", s)  # "1, 250" is two items: keep them apart
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
    m = re.fullmatch(rf"{_VARIABLE}(?:=|\\in)(.+)", s)
    if m and "=" not in m.group(1):
        s = m.group(1)
    else:
        m = re.fullmatch(rf"([^=]+)={_VARIABLE}", s)  # value first: "2 = x" is "x = 2"
        if m:
            s = m.group(1)
    s = _equation_result(s)
    m = re.fullmatch(r"\(([A-Za-z])\)", s)  # "(C)" -> "C"
    s = m.group(1) if m else s
    return s.replace("\ue000", " ")


def _equation_result(s: str) -> str:
    """``12+30=42`` -> ``42``: an arithmetic chain stands for its result (a number after the last ``=``)."""
    *sides, result = s.split("=")
    if sides and all(_ARITHMETIC.fullmatch(side) for side in sides) and _as_number(result) is not None:
        return result
    return s


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


def _number_items(normalized: str) -> list[float] | None:
    """A normalized answer as a list of numbers (``"2,3"`` -> ``[2, 3]``, ``"1,250"`` -> ``[1250]``), else None.

    A comma separates items unless it groups thousands: tight, before exactly three
    digits, in a number that reads whole (``normalize_latex`` has already kept
    ``1, 250`` apart as two items).
    """
    items: list[float] = []
    for chunk in normalized.split(", "):
        whole = _as_number(chunk)
        if whole is not None:
            items.append(whole)
            continue
        for part in chunk.split(","):
            value = _as_number(part)
            if value is None:
                return None
            items.append(value)
    return items


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
    items_a, items_b = _number_items(a), _number_items(b)
    if items_a and items_b and (len(items_a) == 1) != (len(items_b) == 1):
        return False, "numeric", None  # a list of numbers is never one number ("2, 3" is not 23)
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
