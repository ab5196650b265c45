"""Case kinds: what a judgment is (a boolean, a choice among labels, a level on a scale) and when it is right.

A :class:`CaseSpec` fixes, for one judge benchmark, the allowed labels, the gold
parsing and the correctness rule:

* ``boolean``: labels ``(True, False)``; exact agreement.
* ``choice``: the evaluator's labels (e.g. ``A``-``E``); exact agreement.
* ``score``: integer levels ``low..high`` of a scale such as 0-4 or 0-1. A
  judgment is correct when it lands within :attr:`CaseSpec.tolerance` levels of
  the gold level: one level on scales with five or more levels (0-4, 1-5, 0-10),
  exact on shorter ones (0-1, 0-2, 0-3).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Literal

CaseKind = Literal["boolean", "choice", "score"]
CASE_KINDS: tuple[str, ...] = ("boolean", "choice", "score")

#: Gold spellings read as True / False for boolean cases (case-insensitive).
TRUE_WORDS = frozenset({"true", "yes", "y", "1", "pass", "correct", "positive"})
FALSE_WORDS = frozenset({"false", "no", "n", "0", "fail", "incorrect", "negative"})

#: Scales whose span (high - low) is at least this get a tolerance of one level.
TOLERANT_SPAN = 4


def round_half_up(x: float) -> int:
    """Round to the nearest integer, halves up (0.5 -> 1, 2.5 -> 3), unlike Python's banker's rounding."""
    return math.floor(x + 0.5)


@dataclasses.dataclass(frozen=True)
class CaseSpec:
    """The case kind of a judge benchmark with its labels and correctness rule."""

    kind: CaseKind
    labels: tuple[Any, ...]
    """Allowed values of ``gold`` and ``predicted``: ``(True, False)``, the choice labels, or the levels."""
    scale: tuple[int, int] | None = None
    """``(low, high)`` for score cases, else None."""

    def __post_init__(self) -> None:
        if self.kind not in CASE_KINDS:
            raise ValueError(f"unknown case kind {self.kind!r}")
        if self.kind == "score" and self.scale is None:
            raise ValueError("a score case needs a scale")

    @classmethod
    def boolean(cls) -> CaseSpec:
        """A yes/no case."""
        return cls("boolean", (True, False))

    @classmethod
    def choice(cls, labels: Sequence[str]) -> CaseSpec:
        """A choice among ``labels``."""
        return cls("choice", tuple(labels))

    @classmethod
    def score(cls, low: int, high: int) -> CaseSpec:
        """Integer levels ``low..high``."""
        return cls("score", tuple(range(low, high + 1)), (low, high))

    @property
    def tolerance(self) -> int:
        """Levels a judgment may be off and still count as correct (0 except on 5+-level scales)."""
        if self.kind == "score" and self.scale is not None and self.scale[1] - self.scale[0] >= TOLERANT_SPAN:
            return 1
        return 0

    def is_correct(self, predicted: Any, gold: Any) -> bool:
        """The seed's rule: exact for boolean/choice/0-1, within ``tolerance`` levels on score scales."""
        if predicted is None:
            return False
        if self.kind == "score":
            return abs(float(predicted) - float(gold)) <= self.tolerance
        if self.kind == "boolean":
            return bool(predicted) is bool(gold)
        return bool(predicted == gold)

    def level_from_fraction(self, value: float) -> int:
        """Map a score in [0, 1] onto the scale: ``low + round_half_up(value * (high - low))``."""
        assert self.scale is not None
        low, high = self.scale
        value = min(1.0, max(0.0, float(value)))
        return min(high, max(low, low + round_half_up(value * (high - low))))

    def parse_gold(self, raw: Any, aliases: dict[str, str] | None = None) -> Any:
        """The canonical gold value of a gold-set cell; ValueError when it is not a valid label.

        Booleans accept true/false, yes/no, 1/0, pass/fail. Choices accept a label
        case-insensitively or one of ``aliases`` (e.g. ``subset`` for ``A``). Scores
        accept a number on the scale (non-integers are rounded half up to a level) or a
        list of 0/1 values, read as the share of ones (per-chunk relevance).
        """
        if raw is None or (isinstance(raw, float) and math.isnan(raw)):
            raise ValueError("gold is missing")
        if self.kind == "boolean":
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, (int, float)) and raw in (0, 1):
                return bool(raw)
            word = str(raw).strip().lower()
            if word in TRUE_WORDS:
                return True
            if word in FALSE_WORDS:
                return False
            raise ValueError(f"gold {raw!r} is not a boolean (true/false, yes/no, 1/0)")
        if self.kind == "choice":
            text = str(raw).strip()
            for label in self.labels:
                if text == str(label) or text.lower() == str(label).lower():
                    return label
            if aliases and text.lower() in aliases:
                return aliases[text.lower()]
            raise ValueError(f"gold {raw!r} is not one of {list(self.labels)}")
        assert self.scale is not None
        low, high = self.scale
        if isinstance(raw, (list, tuple)):
            if not raw:
                raise ValueError("gold is an empty list")
            share = sum(1.0 for v in raw if self._truthy(v)) / len(raw)
            return self.level_from_fraction(share)
        try:
            number = float(raw)
        except (TypeError, ValueError):
            raise ValueError(f"gold {raw!r} is not a number on the {low}-{high} scale") from None
        if not math.isfinite(number) or not low <= number <= high:
            raise ValueError(f"gold {raw!r} is outside the {low}-{high} scale")
        return min(high, max(low, round_half_up(number)))

    @staticmethod
    def _truthy(value: Any) -> bool:
        if isinstance(value, str):
            return value.strip().lower() in TRUE_WORDS
        return bool(value)

    def describe(self) -> str:
        """``boolean``, ``choice (A, B, C)`` or ``score 0-4``."""
        if self.kind == "score" and self.scale is not None:
            return f"score {self.scale[0]}-{self.scale[1]}"
        if self.kind == "choice":
            return f"choice ({', '.join(map(str, self.labels))})"
        return "boolean"


def expected_level(distribution: dict[Any, float]) -> float:
    """``sum_level p(level) * level`` over a distribution on score levels."""
    return float(sum(p * float(level) for level, p in distribution.items()))


def probability_correct(spec: CaseSpec, predicted: Any, distribution: dict[Any, float] | None) -> float | None:
    """The judge's own probability that its judgment counts as correct.

    ``sum p(l)`` over the labels ``l`` that would make ``predicted`` correct if ``l``
    were the gold label: ``p(predicted)`` for exact cases, ``p(levels within one of the
    prediction)`` on tolerant scales. None without a distribution.
    """
    if distribution is None or predicted is None:
        return None
    total = sum(p for label, p in distribution.items() if spec.is_correct(predicted, label))
    return float(min(1.0, max(0.0, total)))
