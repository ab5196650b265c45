"""Finding the last ``\\boxed{...}`` with properly balanced (nested) braces."""

from __future__ import annotations

import re

__all__ = ["last_boxed"]

_BOX = re.compile(r"\\(?:boxed|fbox)(?![A-Za-z])")


def _balanced_group(text: str, open_at: int) -> str | None:
    """Contents of the ``{...}`` group opening at ``text[open_at]``; ``\\{`` and ``\\}`` are not braces."""
    depth, i = 0, open_at
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2  # skip the escaped character (\{, \}, \\)
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i]
        i += 1
    return None


def _bare_argument(text: str, start: int) -> str | None:
    """The argument of ``\\boxed 5``: the token up to whitespace, ``$`` or end of text."""
    m = re.match(r"[ \t]+([^\s$]+)", text[start:])
    if not m:
        return None
    return m.group(1).rstrip(".,;") or None


def last_boxed(text: str) -> str | None:
    """The contents of the LAST well-formed ``\\boxed{...}``/``\\fbox{...}`` (or ``\\boxed 5``) in ``text``.

    Braces are matched, so ``\\boxed{\\frac{1}{2}}`` gives ``\\frac{1}{2}``. An
    unclosed box is skipped in favour of an earlier complete one. Returns the
    contents stripped of surrounding whitespace, or None when there is no box.
    """
    if not text:
        return None
    for m in reversed(list(_BOX.finditer(text))):
        j = m.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "{":
            inner = _balanced_group(text, j)
        else:
            inner = _bare_argument(text, m.end())
        if inner is not None:
            return inner.strip()
    return None
