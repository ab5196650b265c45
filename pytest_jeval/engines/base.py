"""Engine-neutral request and reply types."""

from __future__ import annotations

import dataclasses
from typing import Any

Message = dict[str, Any]
Messages = list[Message]
PromptLike = str | Messages


def as_messages(prompt: PromptLike, system: str | None = None) -> Messages:
    """Turn a plain string into a one-turn chat, optionally with a system message."""
    if isinstance(prompt, str):
        messages: Messages = [{"role": "user", "content": prompt}]
    else:
        messages = [dict(m) for m in prompt]
    if system and not any(m.get("role") == "system" for m in messages):
        messages.insert(0, {"role": "system", "content": system})
    return messages


@dataclasses.dataclass(frozen=True)
class TokenLogprob:
    """One generated token with its log-probability and the top alternatives."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclasses.dataclass(frozen=True)
class Reply:
    """A model's answer to one chat request, with what was measured about it."""

    text: str
    """The assistant message content."""
    model: str
    """The model id that answered."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_seconds: float | None = None
    """Wall time of the request (after any retries, the successful attempt)."""
    ttft: float | None = None
    """Time to first token; only known when streaming."""
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] | None = None
    """Per-token logprobs when the endpoint returned them, else None."""
    cached: bool = False
    """True when this reply came from the response cache (no request sent)."""
    attempts: int = 1
    """Number of HTTP attempts the call took."""
    started_at: float | None = None
    """``time.monotonic()`` when the call started (for energy attribution)."""
    ended_at: float | None = None
    call_id: str | None = None
    """Scheduler id of the call, used to attribute telemetry to it."""
    sent: tuple[tuple[str, Any], ...] = ()
    """The generation settings the request sent (token limit, temperature, stop, ...), as pairs."""

    def __repr__(self) -> str:
        text = " ".join(self.text.split())
        if len(text) > 60:
            text = text[:57] + "..."
        return f"Reply(model={self.model!r}, text={text!r})"


class EndpointError(Exception):
    """A model call that still failed after retries."""
