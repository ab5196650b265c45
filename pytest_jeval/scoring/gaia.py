"""GAIA answers: the reference normalised exact match (numbers, lists, strings).

Rules (after the GAIA reference scorer):

* gold is a number -> strip ``$``, ``%``, ``,`` and whitespace from the reply,
  parse it as a float and compare (``math.isclose``, rel. 1e-9);
* gold contains ``,`` or ``;`` -> a list: split both on ``,``/``;``; the lengths
  must agree and each element is compared by the gold element's own type
  (number as above, otherwise lowercased with all whitespace removed,
  punctuation kept);
* otherwise a string: lowercase, remove all whitespace and punctuation.

Deviation from the reference, on purpose: a gold written with thousands
separators (``1,000`` or ``$1,234.50``) is a number, not a two-element list.
There is no LLM fallback here; a judge can be layered on top.
"""

from __future__ import annotations

import math
import re
import string

from pytest_jeval.core.score import Score

__all__ = ["extract_final_answer", "gaia_match", "score_gaia"]

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|[-+]?\.\d+")
_FINAL = re.compile(r"FINAL\s+ANSWER\s*:", re.IGNORECASE)
_PUNCT_TABLE = str.maketrans("", "", string.punctuation)


def _number(text: str) -> float | None:
    """``text`` as a float after removing ``$``, ``%``, ``,`` and whitespace (None if not a number)."""
    cleaned = re.sub(r"[\s$%,]", "", text).rstrip(".")
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _gold_number(gold: str) -> float | None:
    """The gold as a number when it is written as one (``12``, ``$1,234.5``, ``7%``, ``1e3``)."""
    core = re.sub(r"^\s*\$?|%?\s*$", "", gold.strip())
    return _number(core) if _NUMBER.fullmatch(core) else None


def _normalize_str(text: str, remove_punct: bool = True) -> str:
    no_spaces = re.sub(r"\s", "", text).lower()
    return no_spaces.translate(_PUNCT_TABLE) if remove_punct else no_spaces


def _numbers_match(pred: str, gold_value: float) -> bool:
    value = _number(pred)
    return value is not None and math.isclose(value, gold_value, rel_tol=1e-9, abs_tol=1e-12)


def gold_type(gold: str) -> str:
    """How ``gold`` is compared: ``"number"``, ``"list"`` or ``"string"``."""
    if _gold_number(gold) is not None:
        return "number"
    return "list" if ("," in gold or ";" in gold) else "string"


def gaia_match(pred: str | None, gold: str) -> bool:
    """True when ``pred`` matches ``gold`` under the GAIA normalisation rules."""
    if pred is None or not pred.strip():
        return False
    kind = gold_type(gold)
    if kind == "number":
        return _numbers_match(pred, _gold_number(gold))  # type: ignore[arg-type]
    if kind == "list":
        gold_items, pred_items = re.split(r"[,;]", gold), re.split(r"[,;]", pred)
        if len(gold_items) != len(pred_items):
            return False
        for p, g in zip(pred_items, gold_items):
            g_value = _gold_number(g)
            if g_value is not None:
                if not _numbers_match(p, g_value):
                    return False
            elif _normalize_str(p, remove_punct=False) != _normalize_str(g, remove_punct=False):
                return False
        return True
    return _normalize_str(pred) == _normalize_str(gold)


def extract_final_answer(reply_text: str) -> tuple[str, str]:
    """``(answer, how)``: the text after the last ``FINAL ANSWER:`` (``how="final_answer_marker"``),
    else the whole reply stripped (``how="whole_reply"``). Markdown emphasis around it is removed."""
    marks = list(_FINAL.finditer(reply_text or ""))
    if not marks:
        return (reply_text or "").strip(), "whole_reply"
    rest = reply_text[marks[-1].end():]
    lines = [line.strip() for line in rest.splitlines() if line.strip()]
    answer = lines[0] if lines else ""
    return answer.strip("*_` ").strip(), "final_answer_marker"


def score_gaia(reply_text: str, gold: str) -> Score:
    """Score a GAIA reply by normalised exact match; unscored when the reply is empty."""
    answer, how = extract_final_answer(reply_text)
    if not answer:
        return Score.unscorable("empty answer", expected=gold, extraction=how)
    return Score(correct=gaia_match(answer, gold), extracted=answer, expected=gold,
                 metadata={"extraction": how, "gold_type": gold_type(gold)})
