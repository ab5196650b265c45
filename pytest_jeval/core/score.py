"""What a scorer returns for one sample."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol


@dataclasses.dataclass(frozen=True)
class Score:
    """The verdict on one model answer.

    ``correct`` is ``None`` when nothing could be extracted from the answer
    (an *unscored* sample). Unscored samples count as wrong in accuracy and are
    also counted separately.
    """

    correct: bool | None
    """True/False, or None when the answer could not be scored."""
    value: float | None = None
    """Numeric score; defaults to 1.0/0.0 from ``correct`` (None when unscored)."""
    extracted: Any = None
    """The answer the scorer extracted from the reply (letter, number, ...)."""
    expected: Any = None
    """The gold answer as the scorer compared it."""
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Scorer-specific details written to ``scoring_metadata`` (JSON builtins)."""
    fields: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Extra top-level JSONL record fields (e.g. a judge benchmark's ``gold``, ``predicted``,
    ``probability``); they may not replace the reference fields."""

    @property
    def unscored(self) -> bool:
        """True when no answer could be extracted."""
        return self.correct is None

    @property
    def reason(self) -> str | None:
        """Why the scorer decided as it did, in words, where it says (:func:`reason_of` of the metadata);
        shown in a failed item's message."""
        return reason_of(self.metadata)

    @property
    def numeric(self) -> float | None:
        """The score as written to the JSONL ``score`` field."""
        if self.value is not None:
            return float(self.value)
        if self.correct is None:
            return None
        return 1.0 if self.correct else 0.0

    @classmethod
    def unscorable(cls, reason: str, expected: Any = None, **metadata: Any) -> Score:
        """A score for a reply from which nothing could be extracted."""
        return cls(correct=None, expected=expected, metadata={"unscored_reason": reason, **metadata})


REASON_KEYS = ("reason", "reasons", "unscored_reason")
"""The metadata keys a scorer states its reason in: ``reason`` (text), ``reasons`` (a list of texts), and
``unscored_reason`` for an answer it could not score. A failed item's message shows the first one set."""


def reason_of(metadata: Any) -> str | None:
    """The scorer's reason in a score's (or a record's ``scoring_metadata``) metadata (:data:`REASON_KEYS`)."""
    if not isinstance(metadata, dict):
        return None
    for key in REASON_KEYS:
        value = metadata.get(key)
        if isinstance(value, (list, tuple)) and value:
            return "; ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip():
            return value
    return None


class ScoreSink(Protocol):
    """The type of the ``score`` fixture: call it once with the sample's :class:`Score`.

    A wrong or unscored answer fails the test item (after the score is recorded)::

        def test_capitals(sample: Sample, response: Reply, score: ScoreSink) -> None:
            score(Score(correct=response.text.strip() == sample.target))
    """

    def __call__(self, result: Score, /) -> None:
        """Record ``result`` as this sample's score."""
