"""Multiple-choice answers: find the letter the model finally committed to.

Three tiers, tried in order; the first that yields a letter wins:

1. Explicit statements anywhere in the reply ("Answer: B", "the answer is (B)",
   "Final answer: **D**", "\\boxed{C}", "I choose B", "B is correct"). The LAST one
   counts, so reasoning that mentions other letters first does not matter.
2. The reply's last non-empty line starts with a bare letter: "B", "(B)", "**B**",
   "B)", "B.", "B: Paris", "Option B".
3. Letters marked as options anywhere ("(B)", "**B**", or "B)"/"B." at a line
   start) - only when all of them name the same letter.

Otherwise ``None``: the scorer never guesses (in particular it never takes the
first capital letter of the reply).
"""

from __future__ import annotations

import re

from pytest_jeval.core.score import Score

__all__ = ["extract_choice_letter", "score_choice"]

# Every quantifier below is bounded and no two adjacent ones can match the same
# text, so the patterns run in linear time even on hostile replies.
_KEYWORD = (
    r"\b(?:final[ \t]{1,3})?answer(?:[ \t]{1,3}choice)?\b|\b(?:correct|best|right)[ \t]{1,3}(?:answer|option|choice)\b"
)
# What may stand between a keyword and the letter, one token at a time: a space,
# markdown, a bracket, "$", ":", "=", a dash, a LaTeX wrapper, or one of the words
# is/would/should/will/must/be/option/choice/letter.
_GAP_TOKEN = (
    r"(?:[\s*_`'\"(\[{$:=\-\u2013\u2014]|\\(?:boxed|textbf|text|mathbf|mathrm)[ \t]{0,3}\{"
    r"|\b(?i:is|would|should|will|must|be|option|choice|letter)\b)"
)
_GAP = rf"{_GAP_TOKEN}{{0,24}}"
# After a keyword the gap must hold a connector ("Answer: B", "answer is B"), so
# that "answer A question" is not read as A.
_CONNECTOR = re.compile(r"[:=\-\u2013\u2014]|\b(?:is|be)\b", re.IGNORECASE)
_VERB = r"\bI(?:[ \t]{1,3}would|[ \t]{1,3}will|'d|'ll)?[ \t]{1,3}(?:choose|pick|select|go[ \t]{1,3}with)\b"
_LETTER_END = r"(?![A-Za-z0-9])"
# A lowercase letter is only taken when nothing word-like follows it, so that
# "the answer is a bit tricky" does not become "A".
_LOWER_END = r"(?=[ \t]{0,3}(?:\r?\n|$|[.)\]}*_`'\",;:!?$]))"


_Patterns = tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]


def _letter_class(valid: str) -> str:
    return "[" + re.escape(valid) + "]"


def _compile(valid: str) -> _Patterns:
    upper, lower = _letter_class(valid.upper()), _letter_class(valid.lower())
    letter = rf"(?:(?P<u>{upper}){_LETTER_END}|(?P<l>{lower}){_LETTER_END}{_LOWER_END})"
    statement = re.compile(
        rf"(?:(?P<kw>(?i:{_KEYWORD}))|(?i:{_VERB})|\\boxed[ \t]{{0,3}}\{{)(?P<gap>{_GAP}){letter}"
        rf"|(?<![A-Za-z0-9])[(*]{{0,3}}(?P<c>{upper})[)*]{{0,3}}[ \t]{{1,3}}"
        rf"(?i:is[ \t]{{1,3}}(?:the[ \t]{{1,3}})?(?:correct|right)\b(?![ \t]{{0,3}}\?))"
    )
    last_line = re.compile(
        rf"^[\s>#*_`]{{0,12}}(?P<opt>(?i:(?:option|choice)[ \t]{{1,3}}))?(?P<open>[(\[]?[*_]{{0,4}})"
        rf"(?:(?P<u>{upper})|(?P<l>{lower})){_LETTER_END}(?P<close>[*_]{{0,4}}[)\]]?)(?P<rest>.*)$"
    )
    marked = re.compile(
        rf"\((?P<a>{upper})\)|\*\*(?P<b>{upper})\*\*|^[ \t>#*_`]{{0,12}}(?P<c>{upper})[.)](?=\s|$)", re.MULTILINE
    )
    return statement, last_line, marked


_cache: dict[str, _Patterns] = {}


def _patterns(valid: str) -> _Patterns:
    if valid not in _cache:
        if not valid or not valid.isalpha() or not valid.isascii():
            raise ValueError(f"valid must be ASCII letters, got {valid!r}")
        _cache[valid] = _compile(valid)
    return _cache[valid]


def _is_pronoun_i(text: str, letter_start: int, letter: str) -> bool:
    """"I think ..." is the pronoun, not option I."""
    return letter == "I" and re.match(r"I\s+[a-z']|I'", text[letter_start:]) is not None


def _last_line_letter(line: str, last_line: re.Pattern[str], marked: re.Pattern[str]) -> str | None:
    """Tier 2: a line that starts with a bare (or bracketed/bold) letter and names no other."""
    m = last_line.match(line)
    if not m:
        return None
    rest = m.group("rest")
    if m.group("l"):  # a lone lowercase letter: "b", "(c)", "d."
        return m.group("l").upper() if re.fullmatch(r"\.?\s*", rest) else None
    letter = m.group("u")
    wrapped = bool(m.group("opt") or m.group("open") or m.group("close"))
    if not (wrapped or not rest.strip() or rest[0] in ".):,"):
        return None  # "A and B are both plausible"
    if _is_pronoun_i(line, m.start("u"), letter):
        return None
    others = {next(g for g in mm.groups() if g) for mm in marked.finditer(rest)}
    return letter if others <= {letter} else None


def extract_choice_letter(text: str, valid: str = "ABCD") -> str | None:
    """The option letter (uppercase) the reply finally states, or ``None`` if none is stated."""
    if not text:
        return None
    statement, last_line, marked = _patterns(valid)
    found: str | None = None
    for m in statement.finditer(text):
        if m.group("kw") and not _CONNECTOR.search(m.group("gap")):
            continue
        group = next(g for g in ("u", "l", "c") if m.group(g))
        if not _is_pronoun_i(text, m.start(group), m.group(group)):
            found = m.group(group).upper()
    if found:
        return found
    lines = [line for line in text.splitlines() if line.strip()]
    if lines:
        letter = _last_line_letter(lines[-1], last_line, marked)
        if letter:
            return letter
    letters = {next(g for g in m.groups() if g) for m in marked.finditer(text)}
    return letters.pop() if len(letters) == 1 else None


def score_choice(reply_text: str, gold_letter: str, valid: str = "ABCD") -> Score:
    """Score a multiple-choice reply by exact match of the extracted letter with ``gold_letter``.

    Unscored (``correct is None``) when no letter could be extracted.
    """
    gold = gold_letter.strip().upper()
    letter = extract_choice_letter(reply_text, valid)
    metadata = {"reference_letter": gold, "candidate_letter": letter, "valid_letters": valid.upper(),
                "extraction": "regex"}
    if letter is None:
        return Score.unscorable("no answer letter found", expected=gold, **metadata)
    return Score(correct=letter == gold, extracted=letter, expected=gold, metadata=metadata)
