"""Chat completions through the official ``openai`` client, against any compatible endpoint.

Retries are the client's own: on 408/409/429/5xx, timeouts and connection errors it
backs off exponentially with jitter and honours ``Retry-After``, up to
``max_retries`` times, each attempt bounded by ``timeout`` seconds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from typing import TYPE_CHECKING, Any, Optional

from pydantic import SecretStr

from pytest_jeval.engines.base import EndpointError, Messages, Reply, TokenLogprob

if TYPE_CHECKING:
    from openai import AsyncOpenAI


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """Where and how to reach one OpenAI-compatible server. The key never shows in ``repr``."""

    base_url: Optional[str]
    """None means the client's default (api.openai.com)."""
    api_key: SecretStr = dataclasses.field(repr=False)
    max_concurrency: int = 32
    timeout: float = 120.0
    max_retries: int = 4

    @property
    def label(self) -> str:
        """A printable name for the endpoint."""
        return self.base_url or "https://api.openai.com/v1"

    def make_client(self) -> AsyncOpenAI:
        """A new async client for this endpoint (create it on the loop that will use it)."""
        from openai import AsyncOpenAI

        return AsyncOpenAI(
            base_url=self.base_url,
            api_key=self.api_key.get_secret_value(),
            timeout=self.timeout,
            max_retries=self.max_retries,
        )


@dataclasses.dataclass(frozen=True)
class ChatRequest:
    """One chat-completions call, independent of the endpoint it goes to."""

    model: str
    messages: Messages
    temperature: float = 0.0
    max_tokens: int = 2048
    logprobs: bool = False
    top_logprobs: Optional[int] = None
    stream: bool = False
    extra: tuple[tuple[str, Any], ...] = ()
    """Other request parameters (top_p, stop, seed, ...), as sorted pairs."""
    nonce: int = 0
    """Distinguishes deliberate repeats of the same request (part of the cache key only)."""

    def params(self) -> dict[str, Any]:
        """Keyword arguments for ``chat.completions.create``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": self.messages,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if self.logprobs:
            kwargs["logprobs"] = True
            if self.top_logprobs:
                kwargs["top_logprobs"] = self.top_logprobs
        kwargs.update(dict(self.extra))
        return kwargs

    def cache_key(self, endpoint: Endpoint) -> str:
        """Content address: endpoint, model, messages, generation parameters and nonce."""
        body = {"endpoint": endpoint.label, "params": self.params(), "nonce": self.nonce}
        blob = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _logprobs(content: Any) -> Optional[tuple[TokenLogprob, ...]]:
    if not content:
        return None
    out = []
    for tok in content:
        top = tuple((t.token, float(t.logprob)) for t in (tok.top_logprobs or []))
        out.append(TokenLogprob(token=tok.token, logprob=float(tok.logprob), top=top))
    return tuple(out)


def _logprobs_json(content: Any) -> Optional[tuple[TokenLogprob, ...]]:
    """:func:`_logprobs` for the plain JSON of a non-streamed completion."""
    if not content:
        return None
    out = []
    for tok in content:
        top = tuple((t["token"], float(t["logprob"])) for t in (tok.get("top_logprobs") or []))
        out.append(TokenLogprob(token=tok["token"], logprob=float(tok["logprob"]), top=top))
    return tuple(out)


#: Makes ``client.post`` hand back the HTTP response (with ``retries_taken``) unparsed:
#: the header ``chat.completions.with_raw_response`` sets (openai's RAW_RESPONSE_HEADER).
_RAW_RESPONSE = {"headers": {"X-Stainless-Raw-Response": "true"}}


def describe_error(exc: BaseException, endpoint: Endpoint) -> str:
    """A one-line reason for a failed call, without secrets (:func:`pytest_jeval.redact.redact`)."""
    from pytest_jeval.redact import redact

    return redact(_describe_error(exc, endpoint), endpoint.api_key)


def _describe_error(exc: BaseException, endpoint: Endpoint) -> str:
    import openai

    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} from {endpoint.label}: {exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {endpoint.timeout:g}s at {endpoint.label}"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        detail = f" ({type(cause).__name__}: {cause})" if cause else ""
        return f"connection error to {endpoint.label}{detail}"
    return f"{type(exc).__name__}: {exc}"


async def chat(client: AsyncOpenAI, endpoint: Endpoint, request: ChatRequest) -> Reply:
    """Send ``request``; return a :class:`Reply` or raise :class:`EndpointError` once retries are spent."""
    import openai

    started = time.monotonic()
    try:
        if request.stream:
            return await _chat_stream(client, request, started)
        # The client's own request path (retries, backoff, Retry-After, timeouts, errors),
        # but without chat.completions.create's parameter transform and pydantic parse of
        # the reply: the same body goes out, and reading the JSON here costs about a
        # millisecond less CPU per call, which is the bottleneck at high concurrency.
        raw = await client.post("/chat/completions", body=request.params(), cast_to=object,
                                options=_RAW_RESPONSE)  # type: ignore[arg-type]
    except openai.OpenAIError as exc:
        retries = endpoint.max_retries if _retryable(exc) else 0
        suffix = f" (after {retries} retries)" if retries else ""
        raise EndpointError(describe_error(exc, endpoint) + suffix) from None
    ended = time.monotonic()
    try:
        completion = json.loads(raw.http_response.content)
        choices = completion.get("choices")
    except (ValueError, AttributeError):
        raise EndpointError(f"{endpoint.label} returned a reply that is not a chat completion") from None
    if not choices:
        raise EndpointError(f"{endpoint.label} returned no choices")
    choice = choices[0]
    usage = completion.get("usage") or {}
    return Reply(
        text=(choice.get("message") or {}).get("content") or "",
        model=completion.get("model") or request.model,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_seconds=ended - started,
        finish_reason=choice.get("finish_reason"),
        logprobs=_logprobs_json((choice.get("logprobs") or {}).get("content")),
        attempts=1 + int(getattr(raw, "retries_taken", 0) or 0),
        started_at=started,
        ended_at=ended,
    )


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


async def _chat_stream(client: AsyncOpenAI, request: ChatRequest, started: float) -> Reply:
    params = request.params()
    params["stream"] = True
    params["stream_options"] = {"include_usage": True}
    stream = await client.chat.completions.create(**params)
    parts: list[str] = []
    logprobs: list[TokenLogprob] = []
    ttft: Optional[float] = None
    finish_reason = None
    usage = None
    model = request.model
    async for chunk in stream:
        model = chunk.model or model
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta and choice.delta.content:
                if ttft is None:
                    ttft = time.monotonic() - started
                parts.append(choice.delta.content)
            if choice.logprobs and choice.logprobs.content:
                logprobs.extend(_logprobs(choice.logprobs.content) or ())
            if choice.finish_reason:
                finish_reason = choice.finish_reason
    ended = time.monotonic()
    return Reply(
        text="".join(parts),
        model=model,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        latency_seconds=ended - started,
        ttft=ttft,
        finish_reason=finish_reason,
        logprobs=tuple(logprobs) if logprobs else None,
        started_at=started,
        ended_at=ended,
    )


async def preflight(client: AsyncOpenAI, endpoint: Endpoint) -> Optional[str]:
    """Check the endpoint answers at all. Returns a reason when it is dead or rejects the key."""
    import openai

    try:
        await client.with_options(max_retries=0, timeout=min(endpoint.timeout, 10.0)).models.list()
    except openai.APIConnectionError as exc:  # includes timeouts
        return describe_error(exc, endpoint)
    except openai.AuthenticationError as exc:
        return f"{endpoint.label} rejected the API key (HTTP {exc.status_code})"
    except openai.APIStatusError:
        return None  # some servers do not implement /models; calls may still work
    return None
