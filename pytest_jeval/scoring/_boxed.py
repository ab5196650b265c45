"""Finding the last ``\\boxed{...}`` with properly balanced (nested) braces."""

from __future__ import annotations

import re

__all__ = ["last_boxed"]

_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")


def _matching_braces(text: str) -> dict[int, int]:
    """Index of each ``{`` that is closed -> index of its ``}``, in one pass.

    ``\\{`` and ``\\}`` are escaped characters, not group braces.
    """
    pairs: dict[int, int] = {}
    stack: list[int] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2  # skip the escaped character (\{, \}, \\)
            continue
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            pairs[stack.pop()] = i
        i += 1
    return pairs


_BARE = re.compile(r"[ \t]+([^\s$]+)")


def last_boxed(text: str) -> str | None:
    """The contents of the LAST well-formed ``\\boxed{...}``/``\\fbox{...}`` (or ``\\boxed 5``) in ``text``.

    Braces are matched, so ``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``. An
    unclosed box is skipped in favour of an earlier complete one. Returns the
    contents stripped of surrounding whitespace, or None when there is no box.
    Runs in linear time.
    """
    if not text or ("boxed" not in text and "fbox" not in text):
        return None
    pairs: dict[int, int] | None = None
    for m in reversed(list(_BOX.finditer(text))):
        j = m.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "{":
            if pairs is None:
                pairs = _matching_braces(text)
            if j in pairs:
                return text[j + 1 : pairs[j]].strip()
            continue
        bare = _BARE.match(text, m.end())
        if bare and bare.group(1).rstrip(".,;"):
            return bare.group(1).rstrip(".,;").strip()
    return None
