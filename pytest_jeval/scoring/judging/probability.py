"""Verdicts and their probabilities from a judge's reply and its token logprobs.

The method:

1. The **verdict** is the LAST occurrence of an allowed label in the reply text
   (whole words; single capital letters such as ``A`` only match in upper case so
   the article "a" is never read as a verdict; ``3`` in ``3.5`` is not a verdict).
2. The **verdict token** is the generated token that starts that occurrence. When
   the tokens do not join back to the text, it is the last generated token that
   folds to an allowed label.
3. **Folding**: a token or alternative is stripped of whitespace, punctuation,
   quotes, markdown and BPE markers (``Ġ``, ``▁``) and compared case-insensitively,
   so ``" Yes"``, ``"yes"`` and ``"Yes."`` are one label.
4. The verdict token and its ``top_logprobs`` alternatives are folded; the
   probabilities ``exp(logprob)`` of the variants of each label are summed. Their
   total is the **allowed-label mass**; dividing by it normalises the distribution
   over the allowed labels (labels absent from the top alternatives get 0). A mass
   below :data:`LOW_MASS_THRESHOLD` is flagged ``low_mass``.
5. Without logprobs the probability is ``None`` and the source says why; 1.0 is
   never put in its place.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Sequence
from typing import Any

from pytest_jeval.core.chat import Reply, TokenLogprob

#: Below this allowed-label probability mass a verdict is flagged ``low_mass``.
LOW_MASS_THRESHOLD = 0.5

#: How many alternatives to ask for at every generated token.
TOP_LOGPROBS = 10

_STRIP = " \t\r\n.,:;!?\"'`*()[]{}<>_=#|/\\~-\u2581\u0120\u010a\u2018\u2019\u201c\u201d"

# probability_source values
SOURCE_LOGPROBS = "logprobs"
SOURCE_NO_LOGPROBS = "no_logprobs"
SOURCE_TOKEN_NOT_FOUND = "verdict_token_not_found"
SOURCE_TOKEN_SPLIT = "verdict_token_split"
SOURCE_UNSCORED = "unscored"
SOURCE_DETERMINISTIC = "deterministic"


@dataclasses.dataclass(frozen=True)
class LabelSet:
    """The words a judge may answer with, and the case value each one stands for."""

    words: tuple[str, ...]
    """Reply labels as the prompt asks for them, e.g. ``("Yes", "No")`` or ``("A", ..., "E")``."""
    values: tuple[Any, ...]
    """Case values in the same order, e.g. ``(True, False)``."""

    def __post_init__(self) -> None:
        if len(self.words) != len(self.values) or not self.words:
            raise ValueError("a LabelSet needs one value per word")

    def fold(self, token: str) -> str | None:
        """The label word a token or alternative stands for, or None."""
        text = token.strip(_STRIP)
        if not text:
            return None
        for word in self.words:
            if _strict(word):
                if text == word:
                    return word
            elif text.casefold() == word.casefold():
                return word
        return None

    def value(self, word: str) -> Any:
        """The case value of a label word."""
        return self.values[self.words.index(word)]

    def pattern(self) -> re.Pattern[str]:
        """A regex matching any label word as a whole word (group ``label``)."""
        strict = [re.escape(w) for w in self.words if _strict(w)]
        loose = [re.escape(w) for w in self.words if not _strict(w)]
        parts = []
        if loose:
            parts.append("(?i:" + "|".join(sorted(loose, key=len, reverse=True)) + ")")
        if strict:
            parts.append("(?-i:" + "|".join(strict) + ")")
        return re.compile(r"(?<![A-Za-z0-9_.])(?P<label>" + "|".join(parts) + r")(?![A-Za-z0-9_]|\.[0-9])")


def _strict(word: str) -> bool:
    """Single capital letters match case-sensitively (so the article 'a' is not 'A')."""
    return len(word) == 1 and word.isalpha() and word.isupper()


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One verdict found in a reply."""

    word: str | None
    """The label word, or None when the reply holds no allowed label."""
    value: Any
    """Its case value (None when unscored)."""
    distribution: dict[Any, float] | None
    """Normalised probabilities over the case values, or None."""
    allowed_mass: float | None
    """Summed probability of the allowed labels at the verdict token, before normalising."""
    source: str
    """How the probability was obtained (``logprobs``) or why it is missing."""

    @property
    def low_mass(self) -> bool | None:
        """True when the allowed-label mass is below :data:`LOW_MASS_THRESHOLD`."""
        return None if self.allowed_mass is None else self.allowed_mass < LOW_MASS_THRESHOLD


def _token_offsets(tokens: Sequence[TokenLogprob], text: str) -> list[int] | None:
    """Start offset of every token in ``text``, or None when the tokens do not join to it."""
    if "".join(t.token for t in tokens) != text:
        return None
    offsets, pos = [], 0
    for t in tokens:
        offsets.append(pos)
        pos += len(t.token)
    return offsets


def label_distribution(token: TokenLogprob, labels: LabelSet) -> tuple[dict[Any, float], float]:
    """(normalised distribution over case values, allowed-label mass) at one token position."""
    entries = list(token.top)
    if token.token not in {alt for alt, _ in entries}:
        entries.append((token.token, token.logprob))
    mass = {word: 0.0 for word in labels.words}
    for alt, logprob in entries:
        word = labels.fold(alt)
        if word is not None and logprob is not None and math.isfinite(logprob):
            mass[word] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return {labels.value(w): 0.0 for w in labels.words}, 0.0
    return {labels.value(w): m / total for w, m in mass.items()}, min(1.0, total)


def _verdict_at(reply: Reply, labels: LabelSet, word: str, start: int, fallback_index: int | None) -> Verdict:
    value = labels.value(word)
    tokens = reply.logprobs
    if tokens is None:
        return Verdict(word, value, None, None, SOURCE_NO_LOGPROBS)
    offsets = _token_offsets(tokens, reply.text)
    index: int | None = None
    if offsets is not None:
        for i, off in enumerate(offsets):
            if off <= start < off + len(tokens[i].token):
                index = i
                break
        if index is None or labels.fold(tokens[index].token) != word:
            return Verdict(word, value, None, None, SOURCE_TOKEN_SPLIT)
    else:
        index = fallback_index
        if index is None or labels.fold(tokens[index].token) != word:
            return Verdict(word, value, None, None, SOURCE_TOKEN_NOT_FOUND)
    distribution, mass = label_distribution(tokens[index], labels)
    return Verdict(word, value, distribution, mass, SOURCE_LOGPROBS)


def _label_token_indices(reply: Reply, labels: LabelSet) -> list[int]:
    return [i for i, t in enumerate(reply.logprobs or ()) if labels.fold(t.token) is not None]


def read_verdict(reply: Reply, labels: LabelSet) -> Verdict:
    """The last verdict in a reply, with its probability distribution when logprobs allow."""
    matches = list(labels.pattern().finditer(reply.text or ""))
    if not matches:
        return Verdict(None, None, None, None, SOURCE_UNSCORED)
    last = matches[-1]
    word = labels.fold(last.group("label"))
    assert word is not None
    indices = _label_token_indices(reply, labels)
    return _verdict_at(reply, labels, word, last.start(), indices[-1] if indices else None)


def read_line_verdicts(reply: Reply, labels: LabelSet) -> list[tuple[str, Verdict]]:
    """One verdict per reply line that holds a label: ``(line text before the verdict, verdict)``.

    Used where one call judges several things (claims, chunks), one per line; each
    line's verdict is its last label.
    """
    text = reply.text or ""
    pattern = labels.pattern()
    found: list[tuple[str, str, int]] = []
    pos = 0
    for line in text.splitlines(keepends=True):
        matches = list(pattern.finditer(line))
        if matches:
            m = matches[-1]
            word = labels.fold(m.group("label"))
            assert word is not None
            found.append((line[: m.start()].strip(), word, pos + m.start()))
        pos += len(line)
    indices = _label_token_indices(reply, labels)
    # Without offsets, pair the line verdicts with the last len(found) label tokens, in order.
    tail = indices[-len(found):] if found and len(indices) >= len(found) else [None] * len(found)
    return [(before, _verdict_at(reply, labels, word, start, tail[k])) for k, (before, word, start) in enumerate(found)]


def combine_sources(verdicts: Sequence[Verdict]) -> str:
    """``logprobs`` when every verdict has a distribution, else the first missing reason."""
    for v in verdicts:
        if v.distribution is None:
            return v.source
    return SOURCE_LOGPROBS


def count_distribution(probabilities: Sequence[float]) -> list[float]:
    """Poisson-binomial: ``P(k of n independent events happen)`` for k = 0..n."""
    dist = [1.0]
    for p in probabilities:
        nxt = [0.0] * (len(dist) + 1)
        for k, q in enumerate(dist):
            nxt[k] += q * (1.0 - p)
            nxt[k + 1] += q * p
        dist = nxt
    return dist
