"""Engine-neutral chat types: messages, the request, the reply, and where a request goes (:class:`Endpoint`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

from pydantic import SecretStr

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
class ToolCall:
    """One function call an assistant message asks for, as the endpoint sent it."""

    id: str
    """The ``tool_call_id`` the ``role=tool`` reply must name."""
    name: str
    """The function name."""
    arguments: str
    """The arguments exactly as sent: a JSON object in text, possibly malformed."""

    def __repr__(self) -> str:
        args = self.arguments if len(self.arguments) <= 60 else self.arguments[:57] + "..."
        return f"ToolCall(id={self.id!r}, name={self.name!r}, arguments={args!r})"


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
    tool_calls: tuple[ToolCall, ...] = ()
    """The function calls the assistant asked for, in the order given (empty for a plain answer)."""
    message: Message | None = dataclasses.field(default=None, compare=False)
    """The assistant message as the endpoint returned it (JSON builtins), so that provider
    extras such as ``reasoning_content`` can be sent back on the next turn; None when unknown."""
    system_fingerprint: str | None = None
    """The backend configuration the endpoint says served the reply (OpenAI's ``system_fingerprint``);
    None when it sent none. With :attr:`model` it tells drift (a changed backend) from noise."""

    def assistant_message(self) -> Message:
        """The assistant message to append to the conversation for the next turn.

        The endpoint's own message when it is known (keeping provider extras), else one
        built from :attr:`text` and :attr:`tool_calls`; ``content`` is None when the
        message holds only tool calls, as the OpenAI API returns it.
        """
        if self.message is not None:
            out = dict(self.message)
            out["role"] = "assistant"
            return out
        msg: Message = {"role": "assistant", "content": self.text if (self.text or not self.tool_calls) else None}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return msg

    def __repr__(self) -> str:
        text = " ".join(self.text.split())
        if len(text) > 60:
            text = text[:57] + "..."
        calls = f", tool_calls={len(self.tool_calls)}" if self.tool_calls else ""
        return f"Reply(model={self.model!r}, text={text!r}{calls})"


class EndpointError(Exception):
    """A model call that still failed after retries."""


class BudgetExhausted(EndpointError):
    """A call the run budget (``[run] max_cost_usd`` / ``max_total_tokens``) did not let start: it was never
    sent. Its message starts with :data:`BUDGET_EXHAUSTED`; the item it belonged to is recorded as an error,
    which ``--jeval-resume`` runs again."""


BUDGET_EXHAUSTED = "budget exhausted"
"""How the error of an item the run budget stopped begins."""


def is_budget_error(error: object) -> bool:
    """True for a record ``error`` left by the run budget."""
    return isinstance(error, str) and BUDGET_EXHAUSTED in error


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where and how to reach one OpenAI-compatible server. The key never shows in ``repr``."""

    base_url: str | None
    """None means the client's default (api.openai.com)."""
    api_key: SecretStr = dataclasses.field(repr=False)
    max_concurrency: int = 32
    timeout: float = 120.0
    max_retries: int = 4
    http_client: str = "auto"
    """The HTTP transport under an HTTP engine's client: ``aiohttp``, ``httpx`` or ``auto``."""
    engine: str = "openai"
    """The engine that makes this endpoint's client and calls (:mod:`pytest_jeval.calls.engines`)."""

    @property
    def label(self) -> str:
        """A printable name for the endpoint."""
        return self.base_url or "https://api.openai.com/v1"


@dataclasses.dataclass(frozen=True)
class ChatRequest:
    """One chat-completions call, independent of the endpoint it goes to."""

    model: str
    messages: Messages
    temperature: float | None = 0.0
    """None leaves the parameter out (the server's default)."""
    max_tokens: int = 2048
    token_param: str = "max_tokens"
    """The parameter that carries ``max_tokens``: ``max_tokens`` or ``max_completion_tokens``."""
    logprobs: bool = False
    top_logprobs: int | None = None
    stream: bool = False
    extra: tuple[tuple[str, Any], ...] = ()
    """Other request parameters (top_p, stop, seed, ...), as sorted pairs."""
    nonce: int = 0
    """Distinguishes deliberate repeats of the same request (part of the cache key only)."""
    tools: Messages | None = None
    """The functions the model may call (OpenAI ``tools`` entries); None sends no ``tools``."""
    tool_choice: str | dict[str, Any] | None = None
    """``auto``, ``required``, ``none`` or a named function; None leaves it to the server."""
    parallel_tool_calls: bool | None = None
    """Sent when not None (and only with ``tools``)."""

    def params(self) -> dict[str, Any]:
        """Keyword arguments for ``chat.completions.create``."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": self.messages}
        if self.temperature is not None:
            kwargs["temperature"] = self.temperature
        kwargs[self.token_param] = self.max_tokens
        if self.logprobs:
            kwargs["logprobs"] = True
            if self.top_logprobs:
                kwargs["top_logprobs"] = self.top_logprobs
        if self.tools:
            kwargs["tools"] = self.tools
            if self.tool_choice is not None:
                kwargs["tool_choice"] = self.tool_choice
            if self.parallel_tool_calls is not None:
                kwargs["parallel_tool_calls"] = self.parallel_tool_calls
        kwargs.update(dict(self.extra))
        return kwargs

    def sent(self) -> dict[str, Any]:
        """The generation settings this request sends (its parameters but the model, messages and tools;
        the tools are named)."""
        out = {k: v for k, v in self.params().items() if k not in ("model", "messages", "tools")}
        if self.tools:
            out["tools"] = [str((t.get("function") or {}).get("name", "")) for t in self.tools]
        if self.stream:
            out["stream"] = True
        return out

    def cache_key(self, endpoint: Endpoint) -> str:
        """Content address: endpoint, model, messages, generation parameters and nonce."""
        body = {"endpoint": endpoint.label, "params": self.params(), "nonce": self.nonce}
        blob = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()
