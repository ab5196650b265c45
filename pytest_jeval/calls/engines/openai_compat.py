"""Chat completions through the official ``openai`` client, against any compatible endpoint.

Retries are the client's own: on 408/409/429/5xx, timeouts and connection errors it
backs off exponentially with jitter and honours ``Retry-After``, up to
``max_retries`` times. Each attempt as a whole, from sending the request to the
last byte of the reply (or of the stream), is bounded by ``timeout`` seconds: the
HTTP client's own timeouts only bound the wait between two bytes.

A reply is accepted only when it is a chat completion whose message content is
text: an error object (even with HTTP 200), content that is not text, ``null``
content without tool calls, or an empty answer cut off by the token limit is an
:class:`~pytest_jeval.core.chat.EndpointError` that keeps the reason.
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import time
from collections.abc import AsyncIterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pytest_jeval.calls.engines import EndpointCheck
from pytest_jeval.core.chat import ChatRequest, Endpoint, EndpointError, Message, Reply, TokenLogprob, ToolCall

if TYPE_CHECKING:
    from openai import AsyncOpenAI


def make_client(endpoint: Endpoint) -> AsyncOpenAI:
    """A new async client for this endpoint (create it on the loop that will use it)."""
    from openai import AsyncOpenAI

    return AsyncOpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key.get_secret_value(),
        timeout=endpoint.timeout,
        max_retries=endpoint.max_retries,
        http_client=_deadline_client_class(http_transport(endpoint.http_client))(),
    )


def _logprobs(content: Any) -> tuple[TokenLogprob, ...] | None:
    if not content:
        return None
    out = []
    for tok in content:
        top = tuple((t.token, float(t.logprob)) for t in (tok.top_logprobs or []))
        out.append(TokenLogprob(token=tok.token, logprob=float(tok.logprob), top=top))
    return tuple(out)


def _logprobs_json(content: Any) -> tuple[TokenLogprob, ...] | None:
    """:func:`_logprobs` for the plain JSON of a non-streamed completion."""
    if not content:
        return None
    out = []
    for tok in content:
        top = tuple((t["token"], float(t["logprob"])) for t in (tok.get("top_logprobs") or []))
        out.append(TokenLogprob(token=tok["token"], logprob=float(tok["logprob"]), top=top))
    return tuple(out)


@functools.cache
def _http_module() -> ModuleType:
    """The HTTP library (``httpx`` or ``httpx2``) the installed ``openai`` client is built on."""
    import openai

    for cls in openai.DefaultAsyncHttpxClient.__mro__:
        if cls.__name__ == "AsyncClient" and cls.__module__.split(".")[0] in sys.modules:
            return sys.modules[cls.__module__.split(".")[0]]
    raise RuntimeError("cannot tell which HTTP library the openai client uses")  # pragma: no cover


if sys.version_info >= (3, 11):

    async def _before(awaitable: Any, deadline: float) -> Any:
        async with asyncio.timeout_at(deadline):
            return await awaitable

else:  # pragma: no cover - Python 3.10

    async def _before(awaitable: Any, deadline: float) -> Any:
        return await asyncio.wait_for(awaitable, max(0.0, deadline - asyncio.get_running_loop().time()))


def _attempt_timeout(request: Any) -> float | None:
    """The seconds one attempt may take: the request's own (read) timeout, set by the openai client."""
    timeout = request.extensions.get("timeout") if hasattr(request, "extensions") else None
    value = timeout.get("read") if isinstance(timeout, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


@functools.cache
def aiohttp_available() -> bool:
    """Whether the installed ``openai`` client offers its aiohttp transport (``openai.DefaultAioHttpClient``,
    with ``aiohttp`` importable)."""
    import openai

    cls = getattr(openai, "DefaultAioHttpClient", None)
    if cls is None or any(c.__name__ == "_MissingAioHttpClient" for c in cls.__mro__):
        return False
    try:
        import aiohttp  # noqa: F401
    except ImportError:  # pragma: no cover - aiohttp is a dependency
        return False
    return True


def http_transport(choice: str) -> str:
    """The transport ``[run] http_client = choice`` resolves to: ``"aiohttp"`` or ``"httpx"``.

    ``auto`` is aiohttp where the openai client offers it: it costs about half the CPU
    per request of the default httpx transport (docs/performance.md), which at dozens of
    requests in flight is what bounds a client. ``aiohttp`` asked for and missing is an error.
    """
    if choice == "httpx":
        return "httpx"
    if aiohttp_available():
        return "aiohttp"
    if choice == "aiohttp":
        raise EndpointError("http_client = \"aiohttp\" needs openai's aiohttp transport "
                            "(openai.DefaultAioHttpClient, in openai >= 1.90 with aiohttp installed)")
    return "httpx"


def _from_aiohttp(exc: BaseException, http: ModuleType) -> BaseException | None:
    """The httpx error a transport error of aiohttp stands for, where openai's adapter maps it wrongly.

    The adapter turns every ``aiohttp.ClientConnectionError`` (a refused connection, a server
    that hangs up) into ``ConnectTimeout``, which the openai client reports as a timeout: a
    refused connection becomes ``ConnectError`` again, any other dropped connection
    ``RemoteProtocolError`` (what httpx raises for it). Real timeouts stay timeouts.
    """
    if not isinstance(exc, http.ConnectTimeout):
        return None
    import aiohttp

    cause = exc.__cause__
    if cause is None or isinstance(cause, (asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return None
    better: BaseException | None = None
    if isinstance(cause, aiohttp.ClientConnectorError):
        better = http.ConnectError(_connector_text(cause))
    elif isinstance(cause, aiohttp.ClientConnectionError):
        better = http.RemoteProtocolError(str(cause) or type(cause).__name__)
    return better


def _connector_text(cause: Any) -> str:
    """A refused connection as ``Cannot connect to host H:P [reason]``: aiohttp's own text adds
    ``ssl:default`` even for an ``http://`` URL, which reads as a TLS problem (issue 33); a
    non-default TLS setting is still named."""
    ssl = getattr(cause, "ssl", True)
    tls = "" if ssl is True else f" ssl:{ssl}"
    return f"Cannot connect to host {cause.host}:{cause.port}{tls} [{cause.strerror or cause.os_error}]"


@functools.cache
def _deadline_client_class(transport: str = "httpx") -> type:
    """The openai client's default async HTTP client (``transport``: its httpx or its aiohttp
    transport), with each request bounded as a whole.

    ``send`` gets the response headers and reads the body (for a stream, each chunk as
    the caller asks for it) before one deadline, ``timeout`` seconds after the request
    started. Past it, the library's ``ReadTimeout`` is raised, which the
    openai client treats as a timeout (and retries).
    """
    import openai

    http = _http_module()
    base = openai.DefaultAioHttpClient if transport == "aiohttp" else openai.DefaultAsyncHttpxClient
    remap = transport == "aiohttp"

    class DeadlineStream(http.AsyncByteStream):  # type: ignore[misc,name-defined]
        """A response body that raises ``ReadTimeout`` once the attempt's deadline has passed."""

        def __init__(self, inner: Any, deadline: float, total: float, request: Any) -> None:
            self._inner = inner
            self._deadline = deadline
            self._total = total
            self._request = request

        async def __aiter__(self) -> AsyncIterator[bytes]:
            chunks = self._inner.__aiter__()
            while True:
                try:
                    chunk = await _before(chunks.__anext__(), self._deadline)
                except StopAsyncIteration:
                    return
                except asyncio.TimeoutError:
                    raise http.ReadTimeout(f"the reply took longer than {self._total:g}s",
                                           request=self._request) from None
                except Exception as exc:
                    better = _from_aiohttp(exc, http) if remap else None
                    if better is None:
                        raise
                    raise better from exc.__cause__
                yield chunk

        async def aclose(self) -> None:
            await self._inner.aclose()

    class DeadlineClient(base):  # type: ignore[misc,valid-type]
        """The openai client's default HTTP client whose ``send`` bounds the whole attempt."""

        async def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            total = _attempt_timeout(request)
            try:
                if total is None:
                    return await super().send(request, stream=stream, **kwargs)
                deadline = asyncio.get_running_loop().time() + total
                try:  # a plain reply is read in full inside send(): one deadline covers it all
                    response = await _before(super().send(request, stream=stream, **kwargs), deadline)
                except asyncio.TimeoutError:
                    raise http.ReadTimeout(f"no reply within {total:g}s", request=request) from None
            except Exception as exc:
                better = _from_aiohttp(exc, http) if remap else None
                if better is None:
                    raise
                raise better from exc.__cause__
            if stream:
                response.stream = DeadlineStream(response.stream, deadline, total, request)
            return response

    DeadlineClient.__name__ = DeadlineClient.__qualname__ = f"DeadlineClient[{transport}]"
    return DeadlineClient


#: Makes ``client.post`` hand back the HTTP response (with ``retries_taken``) unparsed:
#: the header ``chat.completions.with_raw_response`` sets (openai's RAW_RESPONSE_HEADER).
_RAW_RESPONSE = {"headers": {"X-Stainless-Raw-Response": "true"}}


def describe_error(exc: BaseException, endpoint: Endpoint) -> str:
    """A one-line reason for a failed call, without secrets (:func:`pytest_jeval.core.redact.redact`)."""
    from pytest_jeval.core.redact import redact

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
    http = _http_module()
    if isinstance(exc, http.TimeoutException):
        return f"timed out after {endpoint.timeout:g}s at {endpoint.label} (while streaming the reply)"
    if isinstance(exc, http.HTTPError):
        return f"connection error to {endpoint.label} while streaming the reply ({type(exc).__name__}: {exc})"
    if isinstance(exc, openai.APIError):
        return f"{endpoint.label} sent an error: {exc.message}"
    return f"{type(exc).__name__}: {exc}"


def _excerpt(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error_text(error: Any) -> str:
    """The message of an OpenAI-style ``{"error": ...}`` object (a dict or a plain string)."""
    if isinstance(error, dict):
        message = error.get("message")
        text = message if isinstance(message, str) and message else _excerpt(error, 300)
        code = error.get("code") or error.get("type")
        return f"{text} (code {code})" if isinstance(code, (str, int)) and str(code) not in text else text
    return _excerpt(error, 300)


def parse_tool_calls(raw: Any, endpoint: Endpoint) -> tuple[ToolCall, ...]:
    """The ``tool_calls`` of an assistant message, or :class:`EndpointError` when they are not tool calls.

    Arguments sent as a JSON object instead of a string (some servers do) are kept as
    compact JSON text; a call without an id gets ``call_<index>``.
    """
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise EndpointError(f"{endpoint.label} returned tool_calls that are not a list ({_excerpt(raw)})")
    calls = []
    for i, entry in enumerate(raw):
        function = entry.get("function") if isinstance(entry, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            raise EndpointError(f"{endpoint.label} returned a tool call without a function name ({_excerpt(entry)})")
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if arguments is None:
            arguments = ""
        elif not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
        call_id = entry.get("id") if isinstance(entry, dict) else None
        calls.append(ToolCall(id=call_id if isinstance(call_id, str) and call_id else f"call_{i}",
                              name=name, arguments=arguments))
    return tuple(calls)


#: Assistant-message keys that are sent back on the next turn (the rest of what a server
#: returns, such as ``annotations`` or ``audio``, is response-only).
_MESSAGE_KEYS = ("role", "content", "tool_calls", "name", "refusal", "reasoning_content", "reasoning",
                 "reasoning_details", "thinking")


def returned_message(message: dict[str, Any], calls: tuple[ToolCall, ...]) -> Message:
    """The assistant message to send back: the endpoint's keys that matter, with the calls as parsed."""
    out: Message = {k: message[k] for k in _MESSAGE_KEYS if message.get(k) is not None}
    out["role"] = "assistant"
    out.setdefault("content", None)
    if calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in calls
        ]
    else:
        out.pop("tool_calls", None)
    return out


def answer_text(content: Any, finish_reason: Any, *, tool_calls: Any, refusal: Any, request: ChatRequest) -> str:
    """The message content as text, or :class:`EndpointError` saying why the reply holds no answer.

    A reply with tool calls may have no content (returned as ``""``).
    """
    if isinstance(content, str):
        if content == "" and finish_reason == "length" and not tool_calls:
            raise EndpointError(
                f"the reply is empty: the token limit ({request.token_param} = {request.max_tokens}) was reached "
                "before any answer (finish_reason 'length'; reasoning models spend part of it on reasoning)"
            )
        return content
    if content is None:
        if tool_calls:
            return ""
        if isinstance(refusal, str) and refusal:
            raise EndpointError(f"the model refused: {_excerpt(refusal, 300)}")
        raise EndpointError(f"the reply has no content (content null, finish_reason {finish_reason!r})")
    raise EndpointError(
        f"the reply's content is not text ({type(content).__name__}: {_excerpt(content)}; "
        f"finish_reason {finish_reason!r})"
    )


async def chat(client: AsyncOpenAI, endpoint: Endpoint, request: ChatRequest) -> Reply:
    """Send ``request``; return a :class:`Reply` or raise :class:`EndpointError` once retries are spent."""
    import openai

    started = time.monotonic()
    http = _http_module()
    try:
        if request.stream:
            return await _chat_stream(client, endpoint, request, started)
        # The client's own request path (retries, backoff, Retry-After, timeouts, errors),
        # but without chat.completions.create's parameter transform and pydantic parse of
        # the reply: the same body goes out, and reading the JSON here costs about a
        # millisecond less CPU per call, which is the bottleneck at high concurrency.
        raw = await client.post("/chat/completions", body=request.params(), cast_to=object,  # type: ignore[call-overload]
                                options=_RAW_RESPONSE)
    except (openai.OpenAIError, http.HTTPError) as exc:
        retries = endpoint.max_retries if _retryable(exc) else 0
        suffix = f" (after {retries} retries)" if retries else ""
        raise EndpointError(describe_error(exc, endpoint) + suffix) from None
    ended = time.monotonic()
    return _completion_reply(raw.http_response.content, endpoint, request, started, ended,
                             attempts=1 + int(getattr(raw, "retries_taken", 0) or 0))


def _completion_reply(content: bytes, endpoint: Endpoint, request: ChatRequest, started: float, ended: float,
                      *, attempts: int) -> Reply:
    """The :class:`Reply` in the JSON body of a chat completion, or :class:`EndpointError` saying what it holds."""
    completion: Any
    try:
        completion = json.loads(content)
    except ValueError:
        completion = None
    if isinstance(completion, dict) and completion.get("error") is not None:
        raise EndpointError(f"{endpoint.label} answered with an error: {_error_text(completion['error'])}")
    choices = completion.get("choices") if isinstance(completion, dict) else None
    if not isinstance(completion, dict) or (choices is not None and not isinstance(choices, list)):
        raise EndpointError(f"{endpoint.label} returned a reply that is not a chat completion")
    if not choices:
        raise EndpointError(f"{endpoint.label} returned no choices")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise EndpointError(f"{endpoint.label} returned a choice without a message")
    message = choice["message"]
    calls = parse_tool_calls(message.get("tool_calls"), endpoint)
    try:
        text = answer_text(message.get("content"), choice.get("finish_reason"), tool_calls=calls,
                           refusal=message.get("refusal"), request=request)
    except EndpointError as exc:
        raise EndpointError(f"{endpoint.label}: {exc}") from None
    found_usage, found_logprobs = completion.get("usage"), choice.get("logprobs")
    usage: dict[str, Any] = found_usage if isinstance(found_usage, dict) else {}
    logprobs: dict[str, Any] = found_logprobs if isinstance(found_logprobs, dict) else {}
    return Reply(
        text=text,
        model=completion.get("model") or request.model,
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        latency_seconds=ended - started,
        finish_reason=choice.get("finish_reason"),
        logprobs=_logprobs_json(logprobs.get("content")),
        attempts=attempts,
        started_at=started,
        ended_at=ended,
        tool_calls=calls,
        message=returned_message(message, calls) if request.tools else None,
        system_fingerprint=_text_or_none(completion.get("system_fingerprint")),
    )


def _text_or_none(value: Any) -> str | None:
    """A reply field that should be text (``system_fingerprint``): itself, or None for anything else."""
    return value if isinstance(value, str) and value else None


def _retryable(exc: BaseException) -> bool:
    import openai

    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


async def _chat_stream(client: AsyncOpenAI, endpoint: Endpoint, request: ChatRequest, started: float) -> Reply:
    params = request.params()
    params["stream"] = True
    params["stream_options"] = {"include_usage": True}
    stream = await client.chat.completions.create(**params)
    response = getattr(stream, "response", None)
    if response is not None and "json" in response.headers.get("content-type", ""):
        # A server that answers a stream request with a plain JSON body (an error object,
        # or a completion when it does not stream): read it as a non-streamed reply.
        body = await response.aread()
        return _completion_reply(body, endpoint, request, started, time.monotonic(), attempts=1)
    try:
        parts: list[str] = []
        chunks = 0
        logprobs: list[TokenLogprob] = []
        ttft: float | None = None
        finish_reason = None
        usage = None
        model = request.model
        fingerprint: str | None = None
        pieces: dict[int, dict[str, Any]] = {}
        extras: dict[str, list[str]] = {}
        async for chunk in stream:
            chunks += 1
            model = chunk.model or model
            fingerprint = _text_or_none(getattr(chunk, "system_fingerprint", None)) or fingerprint
            if chunk.usage is not None:
                usage = chunk.usage
            for choice in chunk.choices or ():
                delta = choice.delta
                if delta and delta.content is not None and delta.content != "":
                    if not isinstance(delta.content, str):
                        answer_text(delta.content, choice.finish_reason, tool_calls=None, refusal=None, request=request)
                    if ttft is None:
                        ttft = time.monotonic() - started
                    parts.append(delta.content)
                for piece in (getattr(delta, "tool_calls", None) or ()) if delta else ():
                    _add_tool_call_delta(pieces, piece)
                for key in ("reasoning_content", "reasoning"):
                    extra = getattr(delta, key, None) if delta else None
                    if isinstance(extra, str) and extra:
                        extras.setdefault(key, []).append(extra)
                if choice.logprobs and choice.logprobs.content:
                    logprobs.extend(_logprobs(choice.logprobs.content) or ())
                if choice.finish_reason:
                    finish_reason = choice.finish_reason
        ended = time.monotonic()
        if chunks == 0:
            raise EndpointError("the stream ended without a single chunk")
        calls = parse_tool_calls([pieces[i] for i in sorted(pieces)] or None, endpoint)
        text = answer_text("".join(parts), finish_reason, tool_calls=calls, refusal=None, request=request)
    except EndpointError as exc:  # a streamed reply that holds no answer
        raise EndpointError(f"{endpoint.label}: {exc}") from None
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            await close()
    return Reply(
        text=text,
        model=model,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        latency_seconds=ended - started,
        ttft=ttft,
        finish_reason=finish_reason,
        logprobs=tuple(logprobs) if logprobs else None,
        started_at=started,
        ended_at=ended,
        tool_calls=calls,
        message=returned_message({"content": text or None, **{k: "".join(v) for k, v in extras.items()}}, calls)
        if request.tools else None,
        system_fingerprint=fingerprint,
    )


def _add_tool_call_delta(pieces: dict[int, dict[str, Any]], delta: Any) -> None:
    """Merge one streamed tool-call delta into the calls assembled so far (keyed by ``index``)."""
    index = getattr(delta, "index", None)
    index = index if isinstance(index, int) else len(pieces)
    call = pieces.setdefault(index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
    if getattr(delta, "id", None):
        call["id"] = delta.id
    function = getattr(delta, "function", None)
    if function is not None:
        if getattr(function, "name", None):
            call["function"]["name"] += function.name
        if getattr(function, "arguments", None):
            call["function"]["arguments"] += function.arguments


async def check(client: AsyncOpenAI, endpoint: Endpoint) -> EndpointCheck:
    """Ask ``GET /v1/models``: a problem when the endpoint is dead or rejects the key, else the model ids
    it lists (None when it lists none or has no such route: some servers do not, and calls may still work)."""
    import openai

    try:
        page = await client.with_options(max_retries=0, timeout=min(endpoint.timeout, 10.0)).models.list()
    except openai.APIConnectionError as exc:  # includes timeouts
        return EndpointCheck(problem=describe_error(exc, endpoint))
    except openai.AuthenticationError as exc:
        return EndpointCheck(problem=f"{endpoint.label} rejected the API key (HTTP {exc.status_code})")
    except openai.APIStatusError:
        return EndpointCheck()
    except (ValueError, TypeError):  # a reply that is not a model list
        return EndpointCheck()
    ids = tuple(str(m.id) for m in (getattr(page, "data", None) or []) if getattr(m, "id", None))
    return EndpointCheck(models=ids or None)


async def preflight(client: AsyncOpenAI, endpoint: Endpoint) -> str | None:
    """Check the endpoint answers at all. Returns a reason when it is dead or rejects the key."""
    return (await check(client, endpoint)).problem


class OpenAICompatible:
    """The engine of every endpoint that speaks the OpenAI chat-completions protocol (:data:`OPENAI`
    and its siblings): the official ``openai`` client, imported when the first client is made."""

    def __init__(self, description: str, default_base_url: str | None = None, *, serves_locally: bool = False) -> None:
        self.description = description
        self.default_base_url = default_base_url
        self.serves_locally = serves_locally
        self.protocol = "local" if serves_locally else "openai-chat"
        """What ``jeval list`` shows as the engine's protocol."""

    def __repr__(self) -> str:
        return f"OpenAICompatible({self.description!r})"

    def make_client(self, endpoint: Endpoint) -> AsyncOpenAI:
        """:func:`make_client`."""
        return make_client(endpoint)

    async def chat(self, client: AsyncOpenAI, endpoint: Endpoint, request: ChatRequest) -> Reply:
        """:func:`chat`."""
        return await chat(client, endpoint, request)

    async def preflight(self, client: AsyncOpenAI, endpoint: Endpoint) -> str | None:
        """:func:`preflight`."""
        return await preflight(client, endpoint)

    async def check(self, client: AsyncOpenAI, endpoint: Endpoint) -> EndpointCheck:
        """:func:`check`."""
        return await check(client, endpoint)

    async def close(self, client: AsyncOpenAI) -> None:
        """Close the client's connections."""
        await client.close()


OPENAI = OpenAICompatible("any OpenAI-compatible endpoint (base_url)")
CLOUD = OpenAICompatible("a hosted OpenAI-compatible API (base_url)")
VLLM = OpenAICompatible("a vLLM server", "http://localhost:8000/v1")
SGLANG = OpenAICompatible("an SGLang server", "http://localhost:30000/v1")
OLLAMA = OpenAICompatible("an Ollama server", "http://localhost:11434/v1")
LLAMACPP = OpenAICompatible("a llama.cpp server", "http://localhost:8080/v1")
