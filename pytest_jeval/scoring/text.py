"""Short free-text answers: SQuAD-style normalisation and exact match."""

from __future__ import annotations

import re
import string
import unicodedata

__all__ = ["exact_match", "normalize_text"]

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCT = set(string.punctuation) | {"\u2018", "\u2019", "\u201c", "\u201d", "\u2013", "\u2014", "\u2026"}


def normalize_text(s: str) -> str:
    """Lowercase, remove punctuation and the articles a/an/the, collapse whitespace (as SQuAD).

    Unicode is NFKC-normalised first, so full-width and compatibility forms match.
    """
    s = unicodedata.normalize("NFKC", s or "").lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def exact_match(pred: str, gold: str) -> bool:
    """True when both normalise to the same text (an empty prediction never matches)."""
    a = normalize_text(pred)
    return bool(a) and a == normalize_text(gold)
