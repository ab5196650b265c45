"""JSON from untrusted senders (a model's tool arguments, an agent's request body): bounded nesting.

``json.loads`` of text nested 100,000 deep recurses until it raises ``RecursionError``, which is
not a ``ValueError``: code that catches the parser's errors lets it escape (a harness error, a
500). Worse, while the parser sits at the recursion limit, any finalizer the garbage collector
runs (a socket's, a generator's) has no frames left and fails as an "unraisable" exception.
Text nested less deep than that still makes every later walk of the value recursive
(``json.dumps`` when the record is written, schema validation).

:func:`loads` therefore measures the nesting *before* parsing, without recursion, and refuses
text deeper than :data:`MAX_DEPTH` with a ``ValueError`` saying how deep is too deep; the parser
only ever sees text it can walk in a few frames.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

__all__ = ["MAX_DEPTH", "RECORD_DEPTH", "check_depth", "deepest", "loads"]

MAX_DEPTH = 100
"""Deepest nesting of arrays and objects accepted (a chat body or a tool's arguments need far less)."""

RECORD_DEPTH = 400
"""Deepest nesting read back from a result file (a record holds a trajectory that holds tool
arguments of up to :data:`MAX_DEPTH` levels; the parser stays far from the recursion limit)."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def deepest(text: str) -> int:
    """How deep JSON ``text`` nests arrays and objects, counted over brackets outside strings.

    Never less than the depth the parser would reach before it stops (on valid text, exactly
    that depth); for invalid text it may count more. Linear time, no recursion.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def check_depth(text: str | bytes, max_depth: int = MAX_DEPTH) -> None:
    """``ValueError`` when JSON ``text`` nests deeper than ``max_depth``; cheap when it has few brackets.

    Call it before ``json.loads`` of anything a sender controls (a result line, a tool's
    arguments): the parser then never recurses near the interpreter's limit.
    """
    if isinstance(text, str):
        if text.count("[") + text.count("{") <= max_depth:
            return
    else:
        data = bytes(text)
        if data.count(b"[") + data.count(b"{") <= max_depth:
            return
        text = data.decode(json.detect_encoding(data), "surrogatepass")
    if deepest(text) > max_depth:
        raise ValueError(f"JSON nested deeper than {max_depth} levels")


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``; ``ValueError`` (never ``RecursionError``) for text nested deeper than ``max_depth``."""
    check_depth(text, max_depth)
    return json.loads(text)
