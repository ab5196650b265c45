"""A stand-in judge that answers with the replies a run's judge gave, as stored in a record.

``jeval rescore`` calls a benchmark's own scoring function again with a
:class:`ReplayJudge` in place of the ``[judge]`` model: each ``chat`` call returns
the next stored judge reply (``scoring_metadata.judge_output``, or the list
``judge_outputs``), and a stored ``judge_error`` is raised again as an
:class:`~pytest_jeval.core.chat.EndpointError`. No model is queried.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_jeval.core.chat import EndpointError, Reply
from pytest_jeval.core.score import Score

__all__ = ["ReplayJudge", "stored_score"]


@dataclasses.dataclass
class ReplayJudge:
    """Replays a record's stored judge replies, in order (see the module docstring)."""

    name: str
    outputs: list[str]
    error: str | None = None
    calls: int = 0

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> ReplayJudge | None:
        """The replay of ``record``'s judge, or None when the run's judge was never asked."""
        meta = record.get("scoring_metadata")
        if not isinstance(meta, dict):
            return None
        many, one, error = meta.get("judge_outputs"), meta.get("judge_output"), meta.get("judge_error")
        if isinstance(many, list) and all(isinstance(x, str) for x in many):
            outputs = list(many)
        elif isinstance(one, str):
            outputs = [one]
        else:
            outputs = []
        if not outputs and not isinstance(error, str):
            return None
        return cls(name=str(meta.get("judge_model") or "judge"), outputs=outputs,
                    error=error if isinstance(error, str) else None)

    def chat(self, prompt: Any, **_: Any) -> Reply:
        """The next stored reply; the stored error once the replies run out."""
        self.calls += 1
        if self.calls <= len(self.outputs):
            return Reply(text=self.outputs[self.calls - 1], model=self.name)
        raise EndpointError(self.error if self.error is not None else "no stored judge reply for this call")


def stored_score(record: dict[str, Any]) -> Score:
    """The verdict stored in ``record``, as the :class:`Score` that gives it back unchanged."""
    meta = record.get("scoring_metadata")
    correct = record.get("is_correct")
    value = record.get("score")
    return Score(
        correct=correct if isinstance(correct, bool) else None,
        value=float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None,
        extracted=record.get("extracted"),
        expected=record.get("expected"),
        metadata=dict(meta) if isinstance(meta, dict) else {},
    )
