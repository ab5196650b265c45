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

Reading more than one value: when the gold is a set or list (``\\{1, 2, 3\\}``,
``(1, 2), (2, 1)``) and the reply ends with several boxes that only joiners separate
(``\\boxed{1} and \\boxed{2}``), those boxes together are the answer, compared with the
gold's items as a set; against a single-value gold the
last box stays the answer. A percent sign is read under a convention
(:data:`~pytest_jeval.scoring.numeric.PERCENT_CONVENTIONS`, ``either`` by default).

The reading rules (answer statements, prose, equations, commas, labels before a
value, negations) are documented in docs/scoring.md.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from pytest_jeval.core.score import Score
from pytest_jeval.scoring._boxed import all_boxed, final_boxes, last_boxed
from pytest_jeval.scoring._symbolic import symbolic_compare
from pytest_jeval.scoring.numeric import (
    PERCENT_CONVENTIONS,
    PercentConvention,
    parse_number,
    percent_readings,
    values_close,
)

__all__ = ["all_boxed", "compare_math", "final_math_answer", "has_percent_sign", "is_collection", "last_boxed",
           "math_equal", "normalize_latex", "score_math"]

SYMBOLIC_TIMEOUT = 10.0

_WORD_UNITS = (
    r"units?|cm|mm|km|meters?|metres?|centimeters?|inch(?:es)?|feet|foot|ft|yards?|miles?|mph|"
    r"degrees?|cents?|dollars?|hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|years?|sq\w*|square\w*|"
    r"grams?|kg|pounds?|lbs?|ounces?|oz|liters?|litres?|ml|gallons?|points?|people|students?|ways|"
    r"percent(?:age)?|per\s?cent|pct"
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
    r"\.\s+(?=[A-Z<])|\.\s*$|(?<!\\);|,?[ \t]{1,8}(?:because|since|as|so|which|where|when|while|given|hence|thus"
    r"|therefore|but|if|unless|i\.e\.|e\.g\.|that[ \t]is|I[ \t]hope)\b",
)
# An answer that opens by negating a value: "not 5, it is 6", "not $5$ but $6$".
_NEGATION = re.compile(
    r"[\s*_`]*not[ \t]+(?:\$[^$\n]{1,80}\$|[^\s,;.]+)[ \t]*[,;.\u2014-]*[ \t]*"
    r"(?:(?:but|rather|instead)\b[ \t,]*)?(?:(?:it|that|this)(?:[ \t]+is|'s|\u2019s)\b[ \t:]*)?",
    re.IGNORECASE)
# The last verb linking a subject to its value, outside math: "the largest $n$ is 34".
_LINK = re.compile(r"[ \t]+(?:is|are|equals|was|were|would[ \t]+be|will[ \t]+be)[ \t]+", re.IGNORECASE)
# A math span that only names something: a variable, a label, a function of variables
# ("$n$", "$ABCDEFGH$", "$f(x)$", "$a_1$", "$\\overline{AB}$", "$\\triangle ABC$").
_LABEL = re.compile(
    r"(?:\\(?:overline|angle|triangle|mathbf|mathcal|vec)\s*\{?\s*)?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?)?\}?"
    r"(?:\s*\(\s*[A-Za-z](?:\s*,\s*[A-Za-z])*\s*\))?")
# A percent sign (or word) closing an answer: "33.5%", "33.5\\%", "\\frac{1}{2}\\text{ percent}".
_PERCENT_END = re.compile(
    r"(?:\\?%|(?:\\(?:text|mbox|mathrm|textrm)\s*\{\s*)?(?:per\s?cent(?:age)?|pct)\s*\}?)[\s.$]*$", re.IGNORECASE)
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
    answer = _drop_negated(answer)  # "not 5, it is 6"
    answer = _cut_prose(answer)  # "42 because ...", "5. I hope it is correct."
    answer = _value_after_label(answer)  # "the largest $n$ is 34"
    maths = re.findall(r"\$+([^$]+)\$+", answer)
    if maths:
        answer = maths[-1]
    answer = answer.strip().lstrip("*`").rstrip(".*` \t").strip()  # markdown: "**42**.", "`7`"
    return answer or None


def _drop_negated(answer: str) -> str:
    """``answer`` without a leading negated value: ``not 5, it is 6`` -> ``6``; ``not 5`` alone -> ``""``."""
    m = _NEGATION.match(answer)
    return answer[m.end():] if m else answer


def _value_after_label(answer: str) -> str:
    """The value a statement links to a label or variable: ``The largest $n$ is 34`` -> ``34``.

    Applies when the text before the last linking verb (outside ``$...$``) names no value
    (no digit outside math, every math span a label such as ``$n$``, ``$f(x)$``, ``$ABCDEFGH$``)
    and the text after it holds one (a digit or a math span). Otherwise ``answer`` is kept.
    """
    masked = _MATH_SPAN.sub(lambda m: "$" + "0" * (len(m.group(0)) - 2) + "$", answer)
    links = list(_LINK.finditer(masked))
    if not links:
        return answer
    link = links[-1]
    before, after = answer[: link.start()], answer[link.end():]
    if not after.strip() or not (re.search(r"\d", after) or "$" in after):
        return answer
    plain_before = _MATH_SPAN.sub(" ", before)
    if re.search(r"\d", plain_before):
        return answer
    spans = [m.group(0).strip("$").strip() for m in _MATH_SPAN.finditer(before)]
    if not all(_LABEL.fullmatch(span) for span in spans):
        return answer
    return after.strip()


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


def has_percent_sign(text: str) -> bool:
    """True when an answer ends with a percent sign or word (``33.5%``, ``33.5\\%``,
    ``\\frac{1}{2}\\text{ percent}``)."""
    return _PERCENT_END.search((text or "").strip()) is not None


def compare_math(pred: str, gold: str, *, timeout: float = SYMBOLIC_TIMEOUT,
                 percent: PercentConvention = "either") -> tuple[bool, str, str | None]:
    """``(equal, method, symbolic_outcome)`` - the details behind ``math_equal``.

    ``percent`` is the convention for a percent sign on either side: under ``either`` and
    ``unit`` the sign may be dropped (``50\\%`` is ``50``); under ``either`` and ``value``
    a number with the sign is also its hundredth (``33.5\\%`` is ``0.335``).
    """
    if percent not in PERCENT_CONVENTIONS:
        raise ValueError(f"percent must be one of {', '.join(PERCENT_CONVENTIONS)}, got {percent!r}")
    pa, pg = has_percent_sign(pred), has_percent_sign(gold)
    a, b = normalize_latex(pred), normalize_latex(gold)
    signs_may_drop = percent != "value" or pa == pg
    if signs_may_drop and a and (a == b or (re.fullmatch(r"[A-Za-z ]+", a) and a.casefold() == b.casefold())):
        return True, "string", None
    x, y = _as_number(a), _as_number(b)
    if x is not None and y is not None:
        return any(values_close(u, v) for u in percent_readings(x, pa, percent)
                   for v in percent_readings(y, pg, percent)), "numeric", None
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


def _items(text: str) -> list[str]:
    """The top-level items of a set or list answer: ``\\{1, 2\\}`` -> ``[1, 2]``, ``(1,2),(2,1)`` -> two
    tuples, ``(1, 2)`` -> one tuple. Math delimiters and an outer ``\\{...\\}`` / ``{...}`` are dropped."""
    s = re.sub(r"\\[()\[\]]|\$", "", text or "").strip().rstrip(".").strip()
    s = re.sub(r"\\(?:left|right)(?![A-Za-z])", "", s).strip()
    for opening, closing in (("\\{", "\\}"), ("{", "}")):
        if s.startswith(opening) and s.endswith(closing) and _balanced(s[len(opening): -len(closing)]):
            s = s[len(opening): -len(closing)].strip()
            break
    items, depth, start, i = [], 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s) and s[i + 1] in "{}":
            depth += 1 if s[i + 1] == "{" else -1
            i += 2
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(s[start:i].strip())
            start = i + 1
        i += 1
    items.append(s[start:].strip())
    return [item for item in items if item]


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        if depth < 0:
            return False
    return depth == 0


def is_collection(gold: str) -> bool:
    """True when ``gold`` is a set or list of several values (``\\{1,2,3\\}``, ``1, 2``, ``(1,2),(2,1)``),
    not one number (``1,250``), one tuple or one interval."""
    if _as_number(normalize_latex(gold)) is not None:
        return False
    return len(_items(gold)) >= 2


def _compare_sets(answers: list[str], gold: str, *, timeout: float,
                  percent: PercentConvention) -> tuple[bool, list[str]]:
    """Whether the boxed answers, as a set, equal the gold's items (each matched once, in any order)."""
    found: list[str] = []
    for box in answers:
        for item in _items(box) or [box]:
            if not any(compare_math(item, seen, timeout=timeout, percent=percent)[0] for seen in found):
                found.append(item)  # a repeated box counts once
    wanted = _items(gold)
    if len(found) != len(wanted):
        return False, found
    left = list(wanted)
    for item in found:
        match = next((g for g in left if compare_math(item, g, timeout=timeout, percent=percent)[0]), None)
        if match is None:
            return False, found
        left.remove(match)
    return True, found


def score_math(reply_text: str, gold: str, *, timeout: float = SYMBOLIC_TIMEOUT,
               percent: PercentConvention = "either") -> Score:
    """Score a reply against a LaTeX gold answer; unscored when no final answer can be found.

    Against a set or list gold (:func:`is_collection`), a reply that ends with several joined boxes
    (:func:`~pytest_jeval.scoring._boxed.final_boxes`) is read as the set of them; otherwise the final
    answer (:func:`final_math_answer`) is compared.
    """
    boxes = final_boxes(reply_text or "")
    if len(boxes) >= 2 and is_collection(gold):
        correct, found = _compare_sets(boxes, gold, timeout=timeout, percent=percent)
        metadata: dict[str, object] = {"extracted": boxes, "items": found, "gold_items": _items(gold),
                                       "method": "set"}
        return Score(correct=correct, extracted=", ".join(boxes), expected=gold, metadata=metadata)
    extracted = final_math_answer(reply_text)
    if extracted is None:
        return Score.unscorable("no final answer found", expected=gold)
    correct, method, outcome = compare_math(extracted, gold, timeout=timeout, percent=percent)
    metadata = {"extracted": extracted, "normalized_pred": normalize_latex(extracted),
                "normalized_gold": normalize_latex(gold), "method": method}
    if outcome is not None:
        metadata["symbolic_outcome"] = outcome
    if has_percent_sign(extracted) or has_percent_sign(gold):
        metadata["percent"] = percent
    return Score(correct=correct, extracted=extracted, expected=gold, metadata=metadata)
