"""Answers in other harnesses' shapes: token F1, ``ANSWER: <word>``, ``ANSWER: <line>``, several letters.

* :func:`token_f1` / :func:`score_token_f1` - SQuAD's token F1: both sides normalised as SQuAD
  does (:func:`~pytest_jeval.scoring.text.normalize_text`), tokens counted with repetition,
  ``2 * precision * recall / (precision + recall)``, the best over the gold answers.
* :func:`extract_answer_word` / :func:`score_answer_word` - the LAST ``ANSWER:`` followed by one
  word that ends its line (a full stop, comma or other closing punctuation may follow it);
  ``ANSWER: Yes then more`` states no word.
* :func:`extract_answer_line` / :func:`score_answer_line` - the rest of the line after the LAST
  ``ANSWER:`` (the next non-empty line when nothing follows the marker on its own line).
* :func:`extract_choice_letters` / :func:`score_mcq_multi` - multiple-correct multiple choice: the
  LAST ``ANSWER:`` (or ``ANSWERS:``) line's letters, separated by commas, spaces, ``and`` or nothing
  (``A, C``, ``A C``, ``A and C``, ``AC``); correct when the set equals the gold set exactly.

Words and lines are compared after Unicode NFKC, case folding and collapsing whitespace, without
trailing closing punctuation; a gold may be one answer or several accepted ones. Nothing is guessed:
a reply without the marker is unscored.
"""

from __future__ import annotations

import collections
import re
import string
import unicodedata
from collections.abc import Sequence

from pytest_jeval.core.score import Score
from pytest_jeval.scoring.text import normalize_text

__all__ = ["extract_answer_line", "extract_answer_word", "extract_choice_letters", "score_answer_line",
           "score_answer_word", "score_mcq_multi", "score_token_f1", "token_f1"]

# Bounded quantifiers only: linear time on any reply.
_MARKER = re.compile(r"\banswers?[ \t]{0,3}:", re.IGNORECASE)
_CLOSING = ".,;:!?\u3002\uff0c)]}\"'*_`"


def _golds(gold: str | Sequence[str]) -> list[str]:
    return [gold] if isinstance(gold, str) else [str(g) for g in gold]


def _tokens(text: str) -> list[str]:
    return normalize_text(text).split()


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token F1 of ``prediction`` against one gold answer (1.0 when both normalise to nothing)."""
    pred, ref = _tokens(prediction), _tokens(gold)
    if not pred or not ref:
        return float(pred == ref)
    common = sum((collections.Counter(pred) & collections.Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def score_token_f1(reply_text: str, gold: str | Sequence[str]) -> Score:
    """The best token F1 over the gold answers as the score's value; ``correct`` when it is 1.0
    (the same tokens); unscored for an empty reply."""
    golds = _golds(gold)
    if not (reply_text or "").strip():
        return Score.unscorable("empty answer", expected=golds[0] if len(golds) == 1 else golds)
    scored = [(token_f1(reply_text, g), g) for g in golds]
    best, best_gold = max(scored, key=lambda pair: pair[0]) if scored else (0.0, "")
    return Score(correct=best == 1.0, value=best, extracted=reply_text.strip(),
                 expected=golds[0] if len(golds) == 1 else golds,
                 metadata={"f1": best, "best_gold": best_gold, "normalization": "squad"})


def _after_last_marker(text: str) -> str | None:
    markers = list(_MARKER.finditer(text or ""))
    return text[markers[-1].end():] if markers else None


def extract_answer_word(text: str) -> str | None:
    """The word after the last ``ANSWER:`` when it ends its line (closing punctuation allowed), else None."""
    rest = _after_last_marker(text)
    if rest is None:
        return None
    line = rest.lstrip(" \t*_`").split("\n", 1)[0].strip()
    word = line.rstrip(_CLOSING).strip("*_`") if len(line) > 1 else line
    if not word or any(ch.isspace() for ch in word):
        return None
    return word


def extract_answer_line(text: str) -> str | None:
    """The rest of the line after the last ``ANSWER:`` (or the next non-empty line), stripped; else None."""
    rest = _after_last_marker(text)
    if rest is None:
        return None
    for line in rest.split("\n"):
        if line.strip():
            return line.strip().strip("*_`").strip() or None
    return None


def _same_text(a: str, b: str) -> bool:
    def norm(s: str) -> str:
        return " ".join(unicodedata.normalize("NFKC", s).casefold().split()).rstrip(_CLOSING).strip()

    return bool(norm(a)) and norm(a) == norm(b)


def _score_extracted(found: str | None, golds: list[str], what: str) -> Score:
    expected = golds[0] if len(golds) == 1 else golds
    if found is None:
        return Score.unscorable(f"no 'ANSWER: <{what}>' found", expected=expected)
    hit = next((g for g in golds if _same_text(found, g)), None)
    return Score(correct=hit is not None, extracted=found, expected=expected,
                 metadata={"match": f"answer_{what}", "accepted": golds})


def score_answer_word(reply_text: str, gold: str | Sequence[str]) -> Score:
    """The ``ANSWER: <word>`` of the reply equals a gold answer (case and closing punctuation ignored)."""
    return _score_extracted(extract_answer_word(reply_text), _golds(gold), "word")


def score_answer_line(reply_text: str, gold: str | Sequence[str]) -> Score:
    """The ``ANSWER: <line>`` of the reply equals a gold answer (case, spacing, closing punctuation ignored)."""
    return _score_extracted(extract_answer_line(reply_text), _golds(gold), "line")


_LETTERS_LINE = re.compile(r"^[ \t]{0,8}((?:[A-Za-z]|,|and\b|&|[ \t]){1,200}?)[ \t]*[.!]?[ \t*_`]*$", re.IGNORECASE)


def letter_set(text: str, valid: str) -> set[str] | None:
    """Letters written ``A, C`` / ``A C`` / ``A and C`` / ``AC`` (all in ``valid``), as a set; None otherwise."""
    m = _LETTERS_LINE.match(text.strip().strip("*_`"))
    if m is None:
        return None
    body = re.sub(r"\band\b|&", ",", m.group(1), flags=re.IGNORECASE).upper()
    parts = [p for p in re.split(r"[,\s]+", body) if p]
    if not parts:
        return None
    letters = set(parts) if all(len(p) == 1 for p in parts) else (set("".join(parts)) if len(parts) == 1 else None)
    if letters is None or not letters <= set(valid.upper()):
        return None
    return letters


def extract_choice_letters(text: str, valid: str = "ABCD") -> set[str] | None:
    """The set of option letters on the last ``ANSWER:`` line (``ANSWER: A, C``), or None when there is none."""
    rest = _after_last_marker(text)
    if rest is None:
        return None
    line = next((ln for ln in rest.split("\n") if ln.strip()), "")
    return letter_set(line, valid)


def score_mcq_multi(reply_text: str, gold: str | Sequence[str], valid: str = "ABCD") -> Score:
    """Multiple-correct multiple choice: the reply's letter set equals the gold set (no partial credit).

    ``gold`` is ``"A, C"``, ``"AC"``, ``"A and C"`` or a list of letters; ``valid`` the option letters.
    """
    gold_text = gold if isinstance(gold, str) else ",".join(str(g) for g in gold)
    wanted = letter_set(gold_text, string.ascii_uppercase)
    if wanted is None:
        raise ValueError(f"gold is not a set of option letters: {gold!r}")
    last = max(string.ascii_uppercase.index(ch) for ch in (*valid.upper(), *wanted))
    letters = string.ascii_uppercase[: last + 1]  # the options, widened to the gold's letters
    found = extract_choice_letters(reply_text, letters)
    expected = ", ".join(sorted(wanted))
    metadata: dict[str, object] = {"reference_letters": sorted(wanted), "valid_letters": letters}
    if found is None:
        return Score.unscorable("no 'ANSWER: <letters>' found", expected=expected, **metadata)
    metadata["candidate_letters"] = sorted(found)
    return Score(correct=found == wanted, extracted=", ".join(sorted(found)), expected=expected, metadata=metadata)
