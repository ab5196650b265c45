"""Finding the last ``\\boxed{...}`` with properly balanced (nested) braces."""

from __future__ import annotations

import re

__all__ = ["all_boxed", "final_boxes", "last_boxed"]

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


def _spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, contents)`` of every well-formed box, in order (the rules of :func:`last_boxed`)."""
    if not text or ("boxed" not in text and "fbox" not in text):
        return []
    pairs: dict[int, int] | None = None
    found: list[tuple[int, int, str]] = []
    for m in _BOX.finditer(text):
        j = m.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "{":
            if pairs is None:
                pairs = _matching_braces(text)
            if j in pairs:
                found.append((m.start(), pairs[j] + 1, text[j + 1 : pairs[j]].strip()))
            continue
        bare = _BARE.match(text, m.end())
        if bare and bare.group(1).rstrip(".,;"):
            found.append((m.start(), bare.end(), bare.group(1).rstrip(".,;").strip()))
    return found


def all_boxed(text: str) -> list[str]:
    """The contents of every well-formed ``\\boxed{...}``/``\\fbox{...}`` (or ``\\boxed 5``) in ``text``, in order.

    The same rules as :func:`last_boxed` (matched braces, unclosed boxes skipped); linear time.
    """
    return [contents for _, _, contents in _spans(text)]


# What may stand between two boxes of one final answer: spaces, commas, semicolons, "and"/"or",
# math delimiters, LaTeX spacing, line breaks and alignment marks.
_JOINER = re.compile(
    r"(?:[\s,;$&.]|\\[()\[\]]|\\\\|\\q?quad(?![A-Za-z])|\\[,;: !]"
    r"|\\(?:text|mbox|mathrm)\s*\{\s*(?:and|or|,)?\s*\}|\b(?:and|or)\b)*", re.IGNORECASE)


def final_boxes(text: str) -> list[str]:
    """The last box and the boxes right before it that only joiners separate from it
    (``\\boxed{1} and \\boxed{2}``, ``\\boxed{(1, 2)}, \\boxed{(2, 1)}``): the boxes of one final answer.

    A box that prose separates from the next (a draft, a step) is not part of it.
    """
    spans = _spans(text)
    if not spans:
        return []
    group = [spans[-1]]
    for previous in reversed(spans[:-1]):
        between = text[previous[1] : group[0][0]]
        if not _JOINER.fullmatch(between):
            break
        group.insert(0, previous)
    return [contents for _, _, contents in group]
