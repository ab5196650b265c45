"""JSON from untrusted senders (a model's tool arguments, an agent's request body): bounded nesting.

``json.loads`` of text nested 100,000 deep raises ``RecursionError``, which is not a
``ValueError``: code that catches the parser's errors lets it escape (a harness error, a 500).
Text nested less deep than that still makes every later walk of the value recursive
(``json.dumps`` when the record is written, schema validation). :func:`loads` turns both into
a ``ValueError`` saying how deep is too deep.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_DEPTH", "loads", "too_deep"]

MAX_DEPTH = 100
"""Deepest nesting of arrays and objects accepted (a chat body or a tool's arguments need far less)."""


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when ``value`` (parsed JSON) nests arrays and objects more than ``limit`` deep (walked iteratively)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            if depth > limit:
                return True
            stack.extend((v, depth + 1) for v in item)
    return False


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``; ``ValueError`` (never ``RecursionError``) for text nested deeper than ``max_depth``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {max_depth} levels") from None
    if too_deep(value, max_depth):
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    return value
