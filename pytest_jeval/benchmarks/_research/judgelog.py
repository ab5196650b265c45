"""Every judge call of one item, by key: asked live of the ``[judge]`` model, or replayed from a stored record.

A benchmark whose scoring asks the judge several things (one protocol each, retries, both orders of a pairwise
comparison) names each call with a key. The log keeps ``[{"key", "reply", "error"}]`` in call order; the record
stores it as ``scoring_metadata.judge_calls``, and ``jeval rescore --reparse-judge`` replays it: the same keys
get the same replies (a stored error is raised again), so the scoring runs again without a model.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pytest_jeval.core.chat import EndpointError, PromptLike

__all__ = ["JudgeFailed", "JudgeLog"]


class JudgeFailed(Exception):
    """The judge could not answer (endpoint failure after retries, no ``[judge]``, no stored reply)."""


@dataclasses.dataclass
class JudgeLog:
    """Ask the judge, keeping every call (see the module docstring)."""

    judge: Any = None
    """A client with ``chat(prompt, **options) -> Reply`` (the ``judge`` fixture), or None."""
    stored: dict[str, dict[str, Any]] | None = None
    """Replay: the stored calls by key (None: ask ``judge``)."""
    calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Every call made, in order: ``{"key", "reply", "error"}``."""

    @classmethod
    def replay(cls, record: dict[str, Any]) -> JudgeLog:
        """A log answering with the judge calls stored in ``record`` (``scoring_metadata.judge_calls``)."""
        meta = record.get("scoring_metadata")
        calls = meta.get("judge_calls") if isinstance(meta, dict) else None
        stored = {str(c["key"]): dict(c) for c in calls or [] if isinstance(c, dict) and "key" in c}
        return cls(stored=stored)

    @property
    def replaying(self) -> bool:
        """True when the replies come from a stored record."""
        return self.stored is not None

    @property
    def name(self) -> str | None:
        """The judge model's name (None when replaying or without a judge)."""
        return getattr(self.judge, "name", None) if self.judge is not None else None

    def ask(self, key: str, prompt: PromptLike, **options: Any) -> str:
        """The judge's reply to ``prompt``; :class:`JudgeFailed` when it gives none. ``options`` go to ``chat``
        (``nonce=n`` makes a retry a new request)."""
        if self.stored is not None:
            entry = self.stored.get(key)
            if entry is None:
                self.calls.append({"key": key, "reply": None, "error": "no stored judge reply"})
                raise JudgeFailed(f"no stored judge reply for {key!r}")
            self.calls.append({"key": key, "reply": entry.get("reply"), "error": entry.get("error")})
            if entry.get("error") is not None or not isinstance(entry.get("reply"), str):
                raise JudgeFailed(str(entry.get("error") or "no stored judge reply"))
            return str(entry["reply"])
        if self.judge is None:
            self.calls.append({"key": key, "reply": None, "error": "no [judge] model"})
            raise JudgeFailed("this benchmark needs a [judge] model")
        try:
            reply = self.judge.chat(prompt, **options)
        except EndpointError as exc:
            self.calls.append({"key": key, "reply": None, "error": str(exc)})
            raise JudgeFailed(f"the judge call failed: {exc}") from exc
        self.calls.append({"key": key, "reply": reply.text, "error": None})
        return str(reply.text)

    def metadata(self) -> dict[str, Any]:
        """What a record keeps: ``judge_calls`` (and ``judge_model`` when known)."""
        out: dict[str, Any] = {"judge_calls": [dict(c) for c in self.calls]}
        if self.name:
            out["judge_model"] = self.name
        return out
