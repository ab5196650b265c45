"""Cited ids in a reply and set F1, shared by the citing use-case sets (doc_qa, browser_assistant,
research_mining, knowledge_base)."""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import TypeVar

_Id = TypeVar("_Id", bound=Hashable)

_BRACKET = re.compile(r"\[([^\[\]]{1,200})\]")


def ids_in(text: str, prefix: str) -> set[str]:
    """The ids ``<prefix><digits>`` (case-insensitive, returned as ``prefix`` + digits) anywhere in ``text``."""
    return {f"{prefix}{int(n)}" for n in re.findall(rf"\b{re.escape(prefix)}(\d{{1,4}})\b", text, re.I)}


def bracketed_ids(text: str, prefix: str) -> set[str]:
    """The ids ``<prefix><digits>`` inside square brackets (``[A3]``, ``[A1, A4]``) in ``text``."""
    return {i for group in _BRACKET.findall(text) for i in ids_in(group, prefix)}


def strip_brackets(text: str) -> str:
    """``text`` without its bracketed groups (the citations)."""
    return _BRACKET.sub(" ", text)


def set_f1(predicted: set[_Id], gold: set[_Id]) -> float:
    """F1 of ``predicted`` against ``gold`` (precision |P∩G|/|P|, recall |P∩G|/|G|).

    With no gold ids, 1.0 iff nothing is predicted.
    """
    if not gold:
        return 1.0 if not predicted else 0.0
    hit = len(predicted & gold)
    if not hit:
        return 0.0
    precision, recall = hit / len(predicted), hit / len(gold)
    return 2 * precision * recall / (precision + recall)
