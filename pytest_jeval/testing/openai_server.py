"""A small OpenAI-compatible HTTP server for tests and throughput benchmarks.

:class:`FakeOpenAIServer` runs an aiohttp application on ``127.0.0.1`` in a
background thread with its own asyncio event loop, so a test can point the real
``openai`` client (sync or async) at it over real HTTP::

    with FakeOpenAIServer(lookup_responder({"2+2": "4"}), latency=0.01) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        reply = client.chat.completions.create(model="test-model", messages=[...])
        client.close()

Served endpoints:

* ``GET /v1/models`` and ``GET /v1/models/{id}``: the ``models`` given to the server (none given: any
  model is served and none is listed; with
  ``list_models=False``, an empty list: a server that lists none).
* ``POST /v1/chat/completions``: non-streaming, or streaming as server-sent events
  (``data: {...}`` chunks ending in ``data: [DONE]``, with a final usage chunk when
  ``stream_options.include_usage`` is true). ``logprobs`` / ``top_logprobs`` are
  honoured. ``n``, ``max_tokens``, ``temperature`` etc. are accepted and ignored:
  there is always exactly one choice, whose content is what the responder said.

What the server answers is decided by a *responder*, a callable
``responder(request_body, attempt)`` returning ``str``, :class:`Answer`,
:class:`Fault` or :class:`Raw` (or an awaitable of one). ``attempt`` is how many times a request
with the same JSON body has reached the responder so far (1-based; bodies are
compared by the hash of their canonical JSON, see :func:`body_hash`), so a
responder can say "fail the first attempt, succeed on the retry" - the ``openai``
client resends the identical body when it retries.

Timing model: a chat request first waits for one of ``slots`` processing slots
(unlimited when ``slots`` is None), then holds it for ``latency`` seconds plus
the answer's own ``delay``, then the responder's result is sent - faults included
(a ``"hang"`` fault keeps holding its slot). Authentication and body validation
happen on arrival, before any slot is taken.

Strict modes, for what real endpoints do:

* ``openai_reasoning=True``: requests for OpenAI's reasoning models (a ``model``
  starting with ``gpt-5``, ``o1``, ``o3`` or ``o4``) are answered the way the OpenAI
  API answers them: HTTP 400 ``unsupported_parameter`` for ``max_tokens`` (they take
  ``max_completion_tokens``) and for ``logprobs``, ``top_p``, ``stop`` and the other
  :data:`REASONING_REFUSED` parameters, and ``unsupported_value`` for a ``temperature``
  other than 1, with the API's error body and messages (:func:`reasoning_rejection`).
* :attr:`Answer.byte_interval` sends the reply one byte at a time, and
  :attr:`Answer.endless` a reply (or an SSE stream) that never ends.
* :class:`Raw` sends any JSON body (an error object with HTTP 200, content that is
  not text) or any list of SSE events.

Token counts are a documented approximation: a text counts as its number of
whitespace-separated words plus one (:func:`count_tokens`). ``prompt_tokens`` is
that count over the text of all request messages joined by newlines;
``completion_tokens`` over the answer content. Generated logprobs split the
content into word tokens that keep their leading whitespace (:func:`split_tokens`).

Run as a script it serves until SIGTERM/SIGINT (see :func:`main`)::

    python -m pytest_jeval.testing.openai_server --port 0 --latency 0.2 --slots 64 --tool-turns 4

Tool calls: an :class:`Answer` with ``tool_calls`` (:class:`ToolCallSpec`, or :func:`tool_answer`)
sends ``message.tool_calls`` (content null when empty, ``finish_reason`` ``"tool_calls"``), streamed
as OpenAI streams them. :func:`script_responder` plays a script per conversation (chosen by its
first user message) and per step (the number of assistant messages so far). ``strict_tools=True``
(the default) refuses, like real providers, malformed ``tools`` and conversations whose tool calls
and ``role=tool`` messages do not pair up (:func:`tool_rejection`).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import inspect
import itertools
import json
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NoReturn

from aiohttp import web

__all__ = [
    "FAULT_KINDS",
    "Answer",
    "EchoAuthorization",
    "FakeOpenAIServer",
    "Fault",
    "FaultInjector",
    "Raw",
    "Responder",
    "ResponderResult",
    "ToolCallSpec",
    "assistant_turns",
    "body_hash",
    "count_tokens",
    "default_responder",
    "first_user_message",
    "lookup_responder",
    "main",
    "reasoning_rejection",
    "script_responder",
    "split_tokens",
    "tool_answer",
    "tool_call_id",
    "tool_rejection",
    "tool_turns_responder",
]

FaultKind = Literal["429", "500", "503", "hang", "drop"]
FAULT_KINDS: tuple[str, ...] = ("429", "500", "503", "hang", "drop")
"""The fault kinds a :class:`Fault` may have."""

HOST = "127.0.0.1"
"""The server only ever listens on the loopback interface."""

_SHUTDOWN_GRACE_SECONDS = 0.5
"""How long stop() lets in-progress requests finish before cancelling them."""


@dataclasses.dataclass(frozen=True)
class ToolCallSpec:
    """One function call an :class:`Answer` makes, as the server sends it in ``message.tool_calls``."""

    name: str
    """``function.name``, sent as given (a name the request's ``tools`` lack is allowed: models do that)."""
    arguments: str | Mapping[str, Any] = "{}"
    """``function.arguments``: a mapping is sent as compact JSON (keys in their order); a string is sent
    exactly as it is, so malformed JSON can be sent."""
    id: str | None = None
    """The call's id; None gives the deterministic :func:`tool_call_id`."""

    @property
    def arguments_text(self) -> str:
        """The ``function.arguments`` string that is sent."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), separators=(",", ":"), ensure_ascii=False)


@dataclasses.dataclass(frozen=True)
class Answer:
    """A successful chat completion, as a responder wants it sent."""

    content: str
    """The assistant message content."""
    logprobs: list[tuple[str, float, list[tuple[str, float]]]] | None = None
    """Per-token ``(token, logprob, [(alternative, logprob), ...])``.

    Only sent when the request asks for ``logprobs``; the alternatives are cut to
    the request's ``top_logprobs``. When None and the request asks for logprobs,
    they are generated from :func:`split_tokens` of ``content`` with logprob 0.0
    and no alternatives. For streaming the tokens should join to ``content``;
    when they do not, the content and all logprobs are sent in a single chunk.
    """
    finish_reason: str | None = None
    """``choices[0].finish_reason``; None sends ``"tool_calls"`` when there are :attr:`tool_calls`, else ``"stop"``."""
    prompt_tokens: int | float | str | None = None
    """Overrides the computed ``usage.prompt_tokens`` (sent as given: an odd value such as
    ``"12"``, ``-3`` or ``float("nan")`` tests how a client copes)."""
    completion_tokens: int | float | str | None = None
    """Overrides the computed ``usage.completion_tokens`` (sent as given, like ``prompt_tokens``)."""
    delay: float = 0.0
    """Extra seconds this request holds its slot, on top of the server latency."""
    byte_interval: float = 0.0
    """When > 0, the reply (JSON body or SSE stream) is sent one byte every this many seconds."""
    endless: bool = False
    """Never finish: a stream sends a content chunk every ``byte_interval`` seconds (0.1 when
    unset) and no ``[DONE]``; a plain reply sends its headers, then a space at that pace."""
    tool_calls: tuple[ToolCallSpec, ...] = ()
    """Function calls sent in ``message.tool_calls`` (streamed as OpenAI streams them). With calls and
    an empty :attr:`content`, ``message.content`` is null."""
    system_fingerprint: str | None = None
    """The reply's ``system_fingerprint``; None sends the server's own (:attr:`FakeOpenAIServer.system_fingerprint`)."""
    model: str | None = None
    """The reply's ``model`` (the model the endpoint says it served); None sends the requested one."""

    @property
    def sent_finish_reason(self) -> str:
        """The ``finish_reason`` that is sent (see :attr:`finish_reason`)."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


@dataclasses.dataclass(frozen=True)
class Raw:
    """A reply sent exactly as given, for replies no well-behaved server sends.

    With ``events`` (a list of JSON values) the reply is an SSE stream of those events
    followed by ``data: [DONE]``; otherwise ``body`` is sent as JSON with ``status``
    (``bytes`` are sent as they are).
    """

    body: Any = None
    status: int = 200
    events: Sequence[Any] | None = None


@dataclasses.dataclass(frozen=True)
class Fault:
    """A failure a responder wants the server to produce instead of an answer.

    * ``"429"``, ``"500"``, ``"503"``: that HTTP status with an OpenAI-style error
      JSON body; ``retry_after`` (seconds, may be fractional) is sent as the
      ``Retry-After`` header for 429 and 503.
    * ``"hang"``: send nothing for ``hang_seconds`` (then close the connection
      without a response). The wait is cancelled when the client disconnects
      (e.g. on its own timeout) and when the server stops.
    * ``"drop"``: close the connection without sending any response.
    """

    kind: FaultKind
    retry_after: float | None = None
    hang_seconds: float = 60.0

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"Fault.kind must be one of {FAULT_KINDS}, not {self.kind!r}")


@dataclasses.dataclass(frozen=True)
class EchoAuthorization:
    """A reply that repeats the request's ``Authorization`` header verbatim, as a careless gateway might.

    Every ``{authorization}`` in ``template`` becomes the header as received (``Bearer <key>``).
    With ``status`` 200 the result is a chat completion with that content (non-streaming);
    with any other status, an OpenAI-style error JSON with that status and that message.
    The server's ``latency`` does not apply.
    """

    status: int = 401
    template: str = "Invalid credentials in header Authorization: {authorization}"


ResponderResult = str | Answer | Fault | Raw | EchoAuthorization
"""What a responder returns: plain content, an :class:`Answer`, a :class:`Fault`, a :class:`Raw` or an
:class:`EchoAuthorization`."""

Responder = Callable[[dict[str, Any], int], ResponderResult | Awaitable[ResponderResult]]
"""``responder(request_body, attempt)``; see the module docstring."""


# --------------------------------------------------------------------------- helpers


def canonical_json(body: Any) -> str:
    """The canonical JSON text of a request body (sorted keys, no whitespace)."""
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def body_hash(body: Any) -> str:
    """SHA-256 hex digest of :func:`canonical_json` of ``body``; identifies retries."""
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def count_tokens(text: str) -> int:
    """The server's token count of ``text``: whitespace-separated words plus one."""
    return len(text.split()) + 1


_TOKEN_RE = re.compile(r"\s*\S+|\s+")


def split_tokens(text: str) -> list[str]:
    """Split ``text`` into word tokens that keep their leading whitespace.

    The tokens join back to ``text`` exactly (trailing whitespace is its own token);
    ``split_tokens("")`` is ``[]``.
    """
    return _TOKEN_RE.findall(text)


def message_text(content: Any) -> str:
    """The text of a chat message ``content``: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
        return "".join(parts)
    return ""


def last_user_message(body: Mapping[str, Any]) -> str:
    """The text of the last ``role == "user"`` message of a chat request ('' if none)."""
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping) and message.get("role") == "user":
                return message_text(message.get("content"))
    return ""


def first_user_message(body: Mapping[str, Any]) -> str:
    """The text of the first ``role == "user"`` message of a chat request ('' if none)."""
    messages = body.get("messages")
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, Mapping) and message.get("role") == "user":
                return message_text(message.get("content"))
    return ""


def assistant_turns(body: Mapping[str, Any]) -> int:
    """How many ``role == "assistant"`` messages a chat request holds: the step of a scripted conversation."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "assistant")


def tool_call_id(name: str, arguments: str, step: int, index: int) -> str:
    """The default id of a tool call: ``call_<step>_<index>_<8 hex of sha256(name + arguments)>``.

    ``step`` is :func:`assistant_turns` of the request answered and ``index`` the call's
    position in the answer, so ids are deterministic and unique within a conversation.
    """
    digest = hashlib.sha256((name + arguments).encode("utf-8")).hexdigest()[:8]
    return f"call_{step}_{index}_{digest}"


def _prompt_text(body: Mapping[str, Any]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    return "\n".join(message_text(m.get("content")) for m in messages if isinstance(m, Mapping))


def _error_json(message: str, type_: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4")
"""Model ids that ``openai_reasoning`` mode treats as OpenAI reasoning models."""


REASONING_REFUSED = ("logprobs", "top_logprobs", "top_p", "stop", "presence_penalty", "frequency_penalty", "logit_bias")
"""Parameters the OpenAI API refuses for reasoning models (``unsupported_parameter``), checked in this order."""


def reasoning_rejection(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The OpenAI API's HTTP 400 error body for a reasoning-model request it refuses, else None.

    ``max_tokens`` is refused (``unsupported_parameter``), then any of
    :data:`REASONING_REFUSED` (``logprobs``, ``top_p``, ``stop``, ...), then a
    ``temperature`` other than 1 (``unsupported_value``), in that order.
    """
    model = body.get("model")
    if not isinstance(model, str) or not model.startswith(REASONING_PREFIXES):
        return None
    if "max_tokens" in body:
        return _error_json(
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            "invalid_request_error", "unsupported_parameter", "max_tokens",
        )
    for name in REASONING_REFUSED:
        if name in body:
            return _error_json(
                f"Unsupported parameter: '{name}' is not supported with this model.",
                "invalid_request_error", "unsupported_parameter", name,
            )
    temperature = body.get("temperature")
    if "temperature" in body and temperature != 1:
        return _error_json(
            f"Unsupported value: 'temperature' does not support {json.dumps(temperature)} with this model. "
            "Only the default (1) value is supported.",
            "invalid_request_error", "unsupported_value", "temperature",
        )
    return None


TOOL_NAME_RE = re.compile(r"[a-zA-Z0-9_-]{1,64}")
"""What a function name in ``tools`` must match (in full), as the OpenAI API requires."""


def _invalid(message: str, param: str | None, code: str | None = None) -> dict[str, Any]:
    return _error_json(message, "invalid_request_error", code, param)


def _tools_rejection(tools: Any) -> dict[str, Any] | None:
    """The error body for a malformed ``tools`` parameter, else None."""
    if not isinstance(tools, list):
        kind = "an object" if isinstance(tools, Mapping) else f"a {type(tools).__name__} value"
        return _invalid(f"Invalid type for 'tools': expected an array, but got {kind} instead.",
                        "tools", "invalid_type")
    if not tools:
        return _invalid("Invalid 'tools': empty array. Expected an array with minimum length 1, "
                        "but got an empty array instead.", "tools", "empty_array")
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, Mapping):
            return _invalid(f"Invalid type for '{where}': expected an object, but got "
                            f"a {type(tool).__name__} value instead.", where, "invalid_type")
        if "type" not in tool:
            return _invalid(f"Missing required parameter: '{where}.type'.", f"{where}.type",
                            "missing_required_parameter")
        if tool["type"] != "function":
            return _invalid(f"Invalid value: {json.dumps(tool['type'])}. Supported values are: 'function'.",
                            f"{where}.type", "invalid_value")
        function = tool.get("function")
        if function is None:
            return _invalid(f"Missing required parameter: '{where}.function'.", f"{where}.function",
                            "missing_required_parameter")
        if not isinstance(function, Mapping):
            return _invalid(f"Invalid type for '{where}.function': expected an object, but got "
                            f"a {type(function).__name__} value instead.", f"{where}.function", "invalid_type")
        name = function.get("name")
        param = f"{where}.function.name"
        if name is None:
            return _invalid(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")
        if not isinstance(name, str):
            return _invalid(f"Invalid type for '{param}': expected a string, but got "
                            f"a {type(name).__name__} value instead.", param, "invalid_type")
        if name == "":
            return _invalid(f"Invalid '{param}': empty string. Expected a string with minimum length 1, "
                            "but got an empty string instead.", param, "empty_string")
        if len(name) > 64:
            return _invalid(f"Invalid '{param}': string too long. Expected a string with maximum length 64, "
                            f"but got a string with length {len(name)} instead.", param, "string_above_max_length")
        if TOOL_NAME_RE.fullmatch(name) is None:
            return _invalid(f"Invalid '{param}': string does not match pattern. "
                            "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", param, "invalid_value")
    return None


def _unanswered(ids: Sequence[str], index: int) -> dict[str, Any]:
    return _invalid(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}",
        f"messages.[{index}].role",
    )


def tool_rejection(body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The HTTP 400 error body a strict provider sends for a request's tool use, else None.

    Checked in this order (the first failure is answered):

    1. ``tools``, when given, is a non-empty array of ``{"type": "function", "function":
       {"name": ...}}`` whose names match ``^[a-zA-Z0-9_-]{1,64}$``.
    2. Walking ``messages``: an assistant message's ``tool_calls`` must be a non-empty array; a
       ``role == "tool"`` message must have a ``tool_call_id`` that names a call of the assistant
       message just before the run of tool messages it belongs to; and every call of an assistant
       message must be answered by such a tool message before the next non-tool message (or the
       end of the conversation).
    3. A conversation that holds tool calls or tool messages needs ``tools`` in the request.

    Messages and ``param`` values follow the OpenAI API's (``messages.[N].role`` points at the
    message where the rule broke); the text for rule 3 is the server's own.
    """
    if body.get("tools") is not None:
        rejection = _tools_rejection(body["tools"])
        if rejection is not None:
            return rejection
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    open_ids: list[str] | None = None  # the calls of the assistant message being answered
    open_at = 0
    answered: set[str] = set()
    first_tool_use: int | None = None
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "tool":
            if first_tool_use is None:
                first_tool_use = i
            call_id = message.get("tool_call_id")
            if call_id is None:
                return _invalid("Missing parameter 'tool_call_id': messages with role 'tool' must have a "
                                "'tool_call_id'.", f"messages.[{i}].tool_call_id")
            if open_ids is None or call_id not in open_ids:
                return _invalid("Invalid parameter: messages with role 'tool' must be a response to a "
                                "preceeding message with 'tool_calls'.", f"messages.[{i}].role")
            answered.add(call_id)
            continue
        if open_ids is not None:
            missing = [c for c in open_ids if c not in answered]
            if missing:
                return _unanswered(missing, i)
        open_ids = None
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls is None:
            continue
        if not isinstance(calls, list) or not calls:
            what = "empty array" if isinstance(calls, list) else "expected an array"
            return _invalid(f"Invalid 'messages[{i}].tool_calls': {what}.", f"messages.[{i}].tool_calls",
                            "empty_array" if isinstance(calls, list) else "invalid_type")
        if first_tool_use is None:
            first_tool_use = i
        open_ids = [str(c.get("id")) for c in calls if isinstance(c, Mapping)]
        open_at = i
        answered = set()
    if open_ids is not None:
        missing = [c for c in open_ids if c not in answered]
        if missing:
            return _unanswered(missing, open_at)
    if first_tool_use is not None and body.get("tools") is None:
        return _invalid(f"Invalid parameter: 'tools' is required when messages hold tool calls or messages "
                        f"with role 'tool' (messages.[{first_tool_use}]).", "tools")
    return None


def _unit_interval(*parts: object) -> float:
    """A deterministic number in [0, 1) from the SHA-256 of ``parts``."""
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


# --------------------------------------------------------------------------- responders


def default_responder(request_body: dict[str, Any], attempt: int) -> str:
    """The default responder: always answers ``"OK"``."""
    return "OK"


def lookup_responder(table: Mapping[str, str], default: str = "") -> Callable[[dict[str, Any], int], str]:
    """A responder answering from ``table``.

    It returns the value of the first key (in the mapping's order) that is a
    substring of the content of the request's LAST user message, else ``default``.
    """
    items = list(table.items())

    def respond(request_body: dict[str, Any], attempt: int) -> str:
        text = last_user_message(request_body)
        for key, value in items:
            if key in text:
                return value
        return default

    return respond


def tool_answer(*calls: ToolCallSpec, text: str = "") -> Answer:
    """An :class:`Answer` that makes ``calls`` (content ``text``, null when empty)."""
    return Answer(text, tool_calls=tuple(calls))


ScriptStep = str | Answer | Fault | Raw
"""One step of a :func:`script_responder` script."""


def script_responder(
    scripts: Mapping[str, Sequence[ScriptStep]], default: str | Answer = ""
) -> Callable[[dict[str, Any], int], ResponderResult]:
    """A responder that plays a script per conversation and per step.

    The script is the one whose key is the longest substring of the request's FIRST user
    message (ties: the first in the mapping's order); no key matches -> ``default``. The
    step is :func:`assistant_turns` of the request (0 for the first call of a conversation,
    1 after one assistant reply, ...); past the end of a script its last step repeats, so a
    one-step script of a tool call is a model that never stops calling tools. The attempt
    is ignored: a :class:`Fault` step faults every retry too (wrap the responder in a
    :class:`FaultInjector` for transient faults).
    """
    items: list[tuple[str, tuple[ScriptStep, ...]]] = []
    for key, steps in scripts.items():
        if not isinstance(key, str):
            raise TypeError(f"script keys must be strings, not {key!r}")
        if isinstance(steps, (str, Answer, Fault, Raw)):
            raise TypeError(f"the script for {key!r} must be a sequence of steps, not a single step")
        steps = tuple(steps)
        if not steps:
            raise ValueError(f"the script for {key!r} is empty")
        for step in steps:
            if not isinstance(step, (str, Answer, Fault, Raw)):
                raise TypeError(f"a script step must be str, Answer, Fault or Raw, not {type(step).__name__}")
        items.append((key, steps))
    items.sort(key=lambda item: -len(item[0]))  # stable: equal lengths keep the mapping's order

    def respond(request_body: dict[str, Any], attempt: int) -> ResponderResult:
        text = first_user_message(request_body)
        for key, steps in items:
            if key in text:
                return steps[min(assistant_turns(request_body), len(steps) - 1)]
        return default

    return respond


CALCULATOR_TOOL = "calculator"
"""The tool :func:`tool_turns_responder` calls."""


def tool_turns_responder(inner: Responder, turns: int) -> Responder:
    """A responder for ``turns``-turn conversations: ``turns - 1`` tool calls, then ``inner``'s answer.

    At step ``s < turns - 1`` (:func:`assistant_turns`) it answers one ``calculator`` call with
    arguments ``{"expression": "<s>+1"}``; from step ``turns - 1`` on, whatever ``inner`` answers.
    """
    if turns < 1:
        raise ValueError(f"turns must be >= 1, not {turns!r}")

    def respond(request_body: dict[str, Any], attempt: int) -> ResponderResult | Awaitable[ResponderResult]:
        step = assistant_turns(request_body)
        if step < turns - 1:
            return tool_answer(ToolCallSpec(CALCULATOR_TOOL, {"expression": f"{step}+1"}))
        return inner(request_body, attempt)

    return respond


class FaultInjector:
    """A responder wrapper that faults a deterministic fraction of first attempts.

    Whether a body's first attempt is faulted, and with which kind, depends only
    on ``seed`` and the body's :func:`body_hash` - never on arrival order - so two
    runs over the same requests fault the same ones. Retries (``attempt > 1``) are
    always passed to ``inner``, so no request fails forever as long as the client
    retries at least once.
    """

    def __init__(
        self,
        inner: Responder | None = None,
        rate: float = 0.1,
        kinds: Sequence[str] = ("429", "500"),
        seed: int = 0,
        retry_after: float | None = 0.05,
        *,
        hang_seconds: float = 60.0,
    ) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be within [0, 1], not {rate!r}")
        if not kinds:
            raise ValueError("kinds must not be empty")
        for kind in kinds:
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        self.inner: Responder = inner if inner is not None else default_responder
        self.rate = rate
        self.kinds: tuple[str, ...] = tuple(kinds)
        self.seed = seed
        self.retry_after = retry_after
        self.hang_seconds = hang_seconds

    def fault_for(self, request_body: Mapping[str, Any], attempt: int = 1) -> Fault | None:
        """The fault this attempt of ``request_body`` gets, or None to pass it through."""
        if attempt != 1 or self.rate <= 0.0:
            return None
        digest = body_hash(request_body)
        if _unit_interval("fault", self.seed, digest, attempt) >= self.rate:
            return None
        index = int(_unit_interval("kind", self.seed, digest, attempt) * len(self.kinds))
        kind = self.kinds[min(index, len(self.kinds) - 1)]
        return Fault(kind, retry_after=self.retry_after, hang_seconds=self.hang_seconds)  # type: ignore[arg-type]

    def __call__(
        self, request_body: dict[str, Any], attempt: int
    ) -> ResponderResult | Awaitable[ResponderResult]:
        fault = self.fault_for(request_body, attempt)
        if fault is not None:
            return fault
        return self.inner(request_body, attempt)


# --------------------------------------------------------------------------- server


class FakeOpenAIServer:
    """An OpenAI-compatible server on 127.0.0.1, running in a background thread.

    ``latency`` is the number of seconds each chat request holds a processing slot;
    ``slots`` caps how many requests are processed at once (the rest queue, FIFO),
    None meaning unlimited. With ``api_key`` set, every request must carry
    ``Authorization: Bearer <api_key>`` or gets a 401 with an OpenAI-style error.
    ``port`` 0 picks an ephemeral port.

    Every request is recorded (see :attr:`requests`); the counters
    (:attr:`request_count`, :attr:`max_in_flight`, :attr:`first_request_at`,
    :attr:`last_completion_at`) cover chat-completion requests only, so a
    ``models.list()`` health check does not move the throughput clock. Times are
    :func:`time.perf_counter` values.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        slots: int | None = None,
        api_key: str | None = None,
        models: Sequence[str] | None = None,
        port: int = 0,
        openai_reasoning: bool = False,
        strict_tools: bool = True,
        system_fingerprint: str | None = None,
        list_models: bool = True,
    ) -> None:
        if latency < 0:
            raise ValueError("latency must be >= 0")
        if slots is not None and slots < 1:
            raise ValueError("slots must be >= 1 or None")
        if models is not None and not models:
            raise ValueError("models must not be empty (None: any model)")
        self.responder: Responder = responder if responder is not None else default_responder
        self.latency = float(latency)
        self.slots = slots
        self.api_key = api_key
        self.models: tuple[str, ...] = tuple(models) if models is not None else ("test-model",)
        """The model ids the server lists and serves; the first answers a request that names none."""
        self.any_model = models is None
        """No ``models`` given: every model id is served, and ``GET /v1/models`` lists none (as servers that
        serve whatever they are asked for answer), so a client's model check lets any id through."""
        self._requested_port = port
        self.openai_reasoning = openai_reasoning
        """Refuse reasoning-model parameters as the OpenAI API does (see :func:`reasoning_rejection`)."""
        self.strict_tools = strict_tools
        """Refuse malformed ``tools`` and broken tool-call conversations with HTTP 400 (see :func:`tool_rejection`)."""
        self.system_fingerprint = system_fingerprint
        """The ``system_fingerprint`` of every reply (null when None) unless an :class:`Answer` names its own;
        it may be changed while the server runs (a provider changing its configuration mid-run)."""
        self.list_models = list_models
        """False: ``GET /v1/models`` lists no model (an empty list, as some servers answer); chat still works."""

        self._lock = threading.Lock()
        self._records: list[dict[str, Any]] = []
        self._attempts: dict[str, int] = {}
        self._request_count = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._first_request_at: float | None = None
        self._last_completion_at: float | None = None
        self._ids = itertools.count(1)

        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_event: asyncio.Event | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._sock: socket.socket | None = None
        self._base_url: str | None = None
        self._port: int | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> str:
        """Start serving and return the base URL, ``http://127.0.0.1:PORT/v1``."""
        if self._thread is not None:
            raise RuntimeError("FakeOpenAIServer is already running")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((HOST, self._requested_port))
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        self._sock = sock
        self._port = sock.getsockname()[1]
        self._ready.clear()
        self._startup_error = None
        thread = threading.Thread(
            target=self._thread_main, args=(sock,), name=f"FakeOpenAIServer:{self._port}", daemon=True
        )
        self._thread = thread
        thread.start()
        if not self._ready.wait(timeout=30.0) and self._startup_error is None:
            self._startup_error = TimeoutError("FakeOpenAIServer did not start within 30 s")
        if self._startup_error is not None:
            error = self._startup_error
            self.stop()
            raise RuntimeError(f"FakeOpenAIServer failed to start: {error!r}") from error
        self._base_url = f"http://{HOST}:{self._port}/v1"
        return self._base_url

    def stop(self) -> None:
        """Stop serving; in-progress requests get a short grace period, then are cancelled.

        Safe to call more than once. The recorded requests and counters are kept.
        """
        thread, loop, stop_event = self._thread, self._loop, self._stop_event
        if thread is None:
            return
        if thread is threading.current_thread():
            raise RuntimeError("FakeOpenAIServer.stop() cannot be called from the server's own thread")
        if loop is not None and stop_event is not None:
            try:
                loop.call_soon_threadsafe(stop_event.set)
            except RuntimeError:  # the loop has already closed
                pass
        thread.join(timeout=30.0)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._thread = None
        self._loop = None
        self._stop_event = None
        self._semaphore = None
        self._base_url = None

    def __enter__(self) -> FakeOpenAIServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``; raises RuntimeError when not running."""
        if self._base_url is None:
            raise RuntimeError("FakeOpenAIServer is not running; call start() first")
        return self._base_url

    @property
    def port(self) -> int:
        """The port listened on; raises RuntimeError when not running."""
        if self._port is None or self._base_url is None:
            raise RuntimeError("FakeOpenAIServer is not running; call start() first")
        return self._port

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._base_url is not None

    def _thread_main(self, sock: socket.socket) -> None:
        try:
            asyncio.run(self._serve(sock))
        except BaseException as exc:  # reported to start() when it happens during startup
            if not self._ready.is_set():
                self._startup_error = exc
        finally:
            self._ready.set()

    async def _serve(self, sock: socket.socket) -> None:
        self._stop_event = asyncio.Event()
        self._semaphore = asyncio.Semaphore(self.slots) if self.slots is not None else None
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_get("/v1/models/{model}", self._handle_model)
        app.router.add_post("/v1/chat/completions", self._handle_chat)
        runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            handler_cancellation=True,
            shutdown_timeout=_SHUTDOWN_GRACE_SECONDS,
        )
        await runner.setup()
        try:
            site = web.SockSite(runner, sock, backlog=4096)
            await site.start()
            self._loop = asyncio.get_running_loop()
            self._ready.set()
            await self._stop_event.wait()
        finally:
            await runner.cleanup()

    # ------------------------------------------------------------------ recording

    @property
    def requests(self) -> list[dict[str, Any]]:
        """A snapshot of the recorded requests, oldest first.

        Each record is a dict with ``method``, ``path``, ``headers`` (all request
        headers except ``Authorization``), ``body`` (the parsed JSON body, or None),
        ``attempt`` (chat requests that reached the responder, else None),
        ``arrived_at`` and ``completed_at`` (perf_counter; ``completed_at`` is None
        while in progress), ``status`` (the HTTP status sent; 0 when none was, e.g.
        a dropped or cancelled request) and ``outcome`` (``"answer"``, ``"stream"``,
        ``"models"``, ``"unauthorized"``, ``"invalid"`` (including an ``openai_reasoning``
        or ``strict_tools`` refusal), ``"error"`` (the responder raised), ``"echo"`` (an :class:`EchoAuthorization`
        error), ``"trickle"`` (a reply sent byte by byte, in full), ``"raw"`` (a :class:`Raw` reply),
        ``"429"``, ``"500"``, ``"503"``, ``"hang"``, ``"drop"`` or
        ``"cancelled"`` (client went away or server stopped), None while in progress).
        """
        with self._lock:
            return [dict(record) for record in self._records]

    @property
    def request_count(self) -> int:
        """Chat-completion requests received (including rejected ones)."""
        with self._lock:
            return self._request_count

    @property
    def in_flight(self) -> int:
        """Chat-completion requests holding a slot right now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """The most chat-completion requests that held a slot at the same time."""
        with self._lock:
            return self._max_in_flight

    @property
    def first_request_at(self) -> float | None:
        """perf_counter time the first chat-completion request arrived."""
        with self._lock:
            return self._first_request_at

    @property
    def last_completion_at(self) -> float | None:
        """perf_counter time the last chat-completion request was answered or dropped.

        Requests cancelled because the client went away (or the server stopped)
        do not count.
        """
        with self._lock:
            return self._last_completion_at

    def stats(self) -> dict[str, Any]:
        """The counters as a JSON-ready dict, plus ``in_call_seconds``.

        ``in_call_seconds`` is ``last_completion_at - first_request_at`` (None until
        a request has completed).
        """
        with self._lock:
            first, last = self._first_request_at, self._last_completion_at
            return {
                "request_count": self._request_count,
                "max_in_flight": self._max_in_flight,
                "first_request_at": first,
                "last_completion_at": last,
                "in_call_seconds": (last - first) if first is not None and last is not None else None,
            }

    def reset_stats(self) -> None:
        """Forget recorded requests, counters and per-body attempt counts."""
        with self._lock:
            self._records.clear()
            self._attempts.clear()
            self._request_count = 0
            self._max_in_flight = self._in_flight
            self._first_request_at = None
            self._last_completion_at = None

    def _new_record(self, request: web.Request, arrived_at: float, counted: bool) -> dict[str, Any]:
        headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
        record: dict[str, Any] = {
            "method": request.method,
            "path": request.path,
            "headers": headers,
            "body": None,
            "attempt": None,
            "arrived_at": arrived_at,
            "completed_at": None,
            "status": None,
            "outcome": None,
        }
        with self._lock:
            self._records.append(record)
            if counted:
                self._request_count += 1
                if self._first_request_at is None:
                    self._first_request_at = arrived_at
        return record

    def _finish_record(self, record: dict[str, Any], status: int, outcome: str, counted: bool) -> None:
        now = time.perf_counter()
        with self._lock:
            record["completed_at"] = now
            record["status"] = status
            record["outcome"] = outcome
            if counted and outcome != "cancelled":
                self._last_completion_at = now

    def _next_attempt(self, body: Any) -> int:
        key = body_hash(body)
        with self._lock:
            attempt = self._attempts.get(key, 0) + 1
            self._attempts[key] = attempt
        return attempt

    def _enter_slot(self) -> None:
        with self._lock:
            self._in_flight += 1
            if self._in_flight > self._max_in_flight:
                self._max_in_flight = self._in_flight

    def _leave_slot(self) -> None:
        with self._lock:
            self._in_flight -= 1

    # ------------------------------------------------------------------ handlers

    def _authorized(self, request: web.Request) -> bool:
        if self.api_key is None:
            return True
        return request.headers.get("Authorization", "") == f"Bearer {self.api_key}"

    @staticmethod
    async def _send(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
        await response.prepare(request)
        await response.write_eof()
        return response

    @staticmethod
    def _json_response(
        payload: Any, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> web.Response:
        return web.Response(
            body=json.dumps(payload).encode("utf-8"),
            status=status,
            content_type="application/json",
            headers=headers,
        )

    def _unauthorized(self) -> web.Response:
        return self._json_response(
            _error_json("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"), status=401
        )

    def _model_json(self, model: str) -> dict[str, Any]:
        return {"id": model, "object": "model", "created": 0, "owned_by": "pytest-jeval"}

    async def _handle_models(self, request: web.Request) -> web.StreamResponse:
        record = self._new_record(request, time.perf_counter(), counted=False)
        if not self._authorized(request):
            response: web.StreamResponse = self._unauthorized()
            outcome = "unauthorized"
        else:
            response = self._json_response(
                {"object": "list", "data": [self._model_json(m) for m in self.models]
                 if self.list_models and not self.any_model else []}
            )
            outcome = "models"
        self._finish_record(record, response.status, outcome, counted=False)
        return await self._send(request, response)

    async def _handle_model(self, request: web.Request) -> web.StreamResponse:
        record = self._new_record(request, time.perf_counter(), counted=False)
        model = request.match_info["model"]
        if not self._authorized(request):
            response: web.StreamResponse = self._unauthorized()
            outcome = "unauthorized"
        elif model not in self.models and not self.any_model:
            response = self._json_response(
                _error_json(
                    f"The model '{model}' does not exist", "invalid_request_error", "model_not_found"
                ),
                status=404,
            )
            outcome = "invalid"
        else:
            response = self._json_response(self._model_json(model))
            outcome = "models"
        self._finish_record(record, response.status, outcome, counted=False)
        return await self._send(request, response)

    async def _handle_chat(self, request: web.Request) -> web.StreamResponse:
        record = self._new_record(request, time.perf_counter(), counted=True)
        try:
            return await self._chat(request, record)
        except asyncio.CancelledError:
            if record["outcome"] is None:
                self._finish_record(record, 0, "cancelled", counted=True)
            raise

    async def _chat(self, request: web.Request, record: dict[str, Any]) -> web.StreamResponse:
        body: Any
        try:
            body = await request.json()
        except ValueError:
            body = None
        with self._lock:
            record["body"] = body

        if not self._authorized(request):
            return await self._reply(request, record, self._unauthorized(), "unauthorized")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            error = _error_json(
                "The request body must be a JSON object with a 'messages' list.",
                "invalid_request_error",
                None,
                "messages",
            )
            return await self._reply(request, record, self._json_response(error, status=400), "invalid")
        rejection = reasoning_rejection(body) if self.openai_reasoning else None
        if rejection is None and self.strict_tools:
            rejection = tool_rejection(body)
        if rejection is not None:
            return await self._reply(request, record, self._json_response(rejection, status=400), "invalid")

        attempt = self._next_attempt(body)
        with self._lock:
            record["attempt"] = attempt

        semaphore = self._semaphore
        if semaphore is not None:
            await semaphore.acquire()
        try:
            self._enter_slot()
            try:
                return await self._process(request, record, body, attempt)
            finally:
                self._leave_slot()
        finally:
            if semaphore is not None:
                semaphore.release()

    async def _process(
        self, request: web.Request, record: dict[str, Any], body: dict[str, Any], attempt: int
    ) -> web.StreamResponse:
        try:
            result = self.responder(body, attempt)
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:  # a broken responder becomes a visible 500
            if self.latency > 0:
                await asyncio.sleep(self.latency)
            error = _error_json(f"responder raised {exc!r}", "server_error", "responder_error")
            return await self._reply(request, record, self._json_response(error, status=500), "error")

        if isinstance(result, EchoAuthorization):
            return await self._echo_authorization(request, record, body, result)
        if isinstance(result, str):
            result = Answer(result)
        if not isinstance(result, (Answer, Fault, Raw)):
            error = _error_json(
                f"responder returned {type(result).__name__}, expected str, Answer, Fault or Raw",
                "server_error",
                "responder_error",
            )
            return await self._reply(request, record, self._json_response(error, status=500), "error")

        wait = self.latency + (result.delay if isinstance(result, Answer) else 0.0)
        if wait > 0:
            await asyncio.sleep(wait)

        if isinstance(result, Fault):
            return await self._fault(request, record, result)
        if isinstance(result, Raw):
            return await self._raw(request, record, result)
        if result.endless:
            return await self._endless(request, record, body, result)
        if body.get("stream"):
            return await self._stream(request, record, body, result)
        payload = self._completion(body, result)
        if result.byte_interval > 0:
            data = json.dumps(payload).encode("utf-8")
            return await self._slow(request, record, data, "application/json", result.byte_interval)
        return await self._reply(request, record, self._json_response(payload), "answer")

    async def _raw(self, request: web.Request, record: dict[str, Any], raw: Raw) -> web.StreamResponse:
        if raw.events is None:
            data = raw.body if isinstance(raw.body, bytes) else json.dumps(raw.body).encode("utf-8")
            response = web.Response(body=data, status=raw.status, content_type="application/json")
            return await self._reply(request, record, response, "raw")
        stream = b"".join(b"data: " + json.dumps(e).encode("utf-8") + b"\n\n" for e in raw.events)
        return await self._slow(request, record, stream + b"data: [DONE]\n\n", "text/event-stream", 0.0,
                                status=raw.status, outcome="raw")

    async def _slow(
        self, request: web.Request, record: dict[str, Any], data: bytes, content_type: str, interval: float,
        *, status: int = 200, outcome: str = "trickle",
    ) -> web.StreamResponse:
        """Send ``data`` one byte every ``interval`` seconds (all at once when 0)."""
        response = web.StreamResponse(status=status, headers={"Content-Type": content_type})
        try:
            await response.prepare(request)
            if interval <= 0:
                await response.write(data)
            else:
                for i in range(len(data)):
                    await response.write(data[i : i + 1])
                    await asyncio.sleep(interval)
        except ConnectionError:
            self._finish_record(record, 0, "cancelled", counted=True)
            raise asyncio.CancelledError from None
        self._finish_record(record, status, outcome, counted=True)
        await response.write_eof()
        return response

    async def _endless(
        self, request: web.Request, record: dict[str, Any], body: Mapping[str, Any], answer: Answer
    ) -> web.StreamResponse:
        """A reply that never ends: SSE content chunks, or whitespace after the headers."""
        interval = answer.byte_interval if answer.byte_interval > 0 else 0.1
        streaming = bool(body.get("stream"))
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream" if streaming else "application/json"}
        )
        try:
            await response.prepare(request)
            chunk = self._stream_chunks(body, Answer(answer.content or "more"))[1 if streaming else 0]
            if not streaming:
                piece = b" "
            elif chunk.get("choices"):
                piece = b"data: " + json.dumps(chunk).encode("utf-8") + b"\n\n"
            else:  # pragma: no cover - a content chunk always has a choice
                piece = b": keep-alive\n\n"
            while True:
                await response.write(piece)
                await asyncio.sleep(interval)
        except ConnectionError:
            self._finish_record(record, 0, "cancelled", counted=True)
            raise asyncio.CancelledError from None

    async def _reply(
        self, request: web.Request, record: dict[str, Any], response: web.StreamResponse, outcome: str
    ) -> web.StreamResponse:
        # The record is completed just before the response goes out, so a client
        # that has its answer always finds the finished record.
        self._finish_record(record, response.status, outcome, counted=True)
        return await self._send(request, response)

    async def _fault(self, request: web.Request, record: dict[str, Any], fault: Fault) -> web.StreamResponse:
        if fault.kind in ("429", "500", "503"):
            status = int(fault.kind)
            headers: dict[str, str] = {}
            if fault.retry_after is not None and fault.kind in ("429", "503"):
                headers["Retry-After"] = repr(float(fault.retry_after))
            if status == 429:
                error = _error_json("Rate limit reached (injected fault).", "requests", "rate_limit_exceeded")
            elif status == 503:
                error = _error_json(
                    "The server is overloaded (injected fault).", "server_error", "overloaded"
                )
            else:
                error = _error_json("The server had an error (injected fault).", "server_error", None)
            return await self._reply(request, record, self._json_response(error, status, headers), fault.kind)
        if fault.kind == "hang":
            await asyncio.sleep(fault.hang_seconds)
        self._drop(request, record, fault.kind)

    async def _echo_authorization(
        self, request: web.Request, record: dict[str, Any], body: dict[str, Any], echo: EchoAuthorization
    ) -> web.StreamResponse:
        text = echo.template.replace("{authorization}", request.headers.get("Authorization", ""))
        if echo.status == 200:
            reply = self._json_response(self._completion(body, Answer(text)))
            return await self._reply(request, record, reply, "answer")
        error = _error_json(text, "invalid_request_error", "echo_authorization")
        return await self._reply(request, record, self._json_response(error, status=echo.status), "echo")

    def _drop(self, request: web.Request, record: dict[str, Any], outcome: str) -> NoReturn:
        """Close the connection without a response, and end this handler quietly."""
        self._finish_record(record, 0, outcome, counted=True)
        transport = request.transport
        if transport is not None:
            transport.abort()
        # The connection is gone: aiohttp sees the handler as cancelled by the
        # client going away ("premature client disconnection") and writes nothing.
        raise asyncio.CancelledError

    # ------------------------------------------------------------------ payloads

    def _usage(self, body: Mapping[str, Any], answer: Answer) -> dict[str, Any]:
        prompt = (
            answer.prompt_tokens if answer.prompt_tokens is not None else count_tokens(_prompt_text(body))
        )
        completion = (
            answer.completion_tokens if answer.completion_tokens is not None else count_tokens(_answer_text(answer))
        )
        both = all(isinstance(v, (int, float)) for v in (prompt, completion))
        total = prompt + completion if both else None  # type: ignore[operator]
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}

    @staticmethod
    def _logprob_entries(body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]] | None:
        if body.get("logprobs") is not True:
            return None
        try:
            top_n = max(0, int(body.get("top_logprobs") or 0))
        except (TypeError, ValueError):
            top_n = 0
        items: Sequence[tuple[str, float, Sequence[tuple[str, float]]]]
        if answer.logprobs is None:
            items = [(token, 0.0, ()) for token in split_tokens(answer.content)]
        else:
            items = answer.logprobs
        return [
            {
                "token": token,
                "logprob": float(logprob),
                "bytes": list(token.encode("utf-8")),
                "top_logprobs": [
                    {"token": alt, "logprob": float(alt_logprob), "bytes": list(alt.encode("utf-8"))}
                    for alt, alt_logprob in list(alternatives)[:top_n]
                ],
            }
            for token, logprob, alternatives in items
        ]

    @staticmethod
    def _tool_calls(body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]]:
        """``message.tool_calls`` of ``answer`` for ``body``, default ids filled in."""
        step = assistant_turns(body)
        calls = []
        for index, spec in enumerate(answer.tool_calls):
            arguments = spec.arguments_text
            call_id = spec.id if spec.id is not None else tool_call_id(spec.name, arguments, step, index)
            calls.append({"id": call_id, "type": "function", "function": {"name": spec.name, "arguments": arguments}})
        return calls

    def _model_name(self, body: Mapping[str, Any]) -> str:
        model = body.get("model")
        return model if isinstance(model, str) and model else self.models[0]

    def _fingerprint(self, answer: Answer) -> str | None:
        return answer.system_fingerprint if answer.system_fingerprint is not None else self.system_fingerprint

    def _completion(self, body: Mapping[str, Any], answer: Answer) -> dict[str, Any]:
        entries = self._logprob_entries(body, answer)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if answer.tool_calls and answer.content == "" else answer.content,
            "refusal": None,
        }
        if answer.tool_calls:
            message["tool_calls"] = self._tool_calls(body, answer)
        return {
            "id": f"chatcmpl-fake-{next(self._ids):08d}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": answer.model or self._model_name(body),
            "system_fingerprint": self._fingerprint(answer),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": answer.sent_finish_reason,
                    "logprobs": None if entries is None else {"content": entries, "refusal": None},
                }
            ],
            "usage": self._usage(body, answer),
        }

    def _stream_chunks(self, body: Mapping[str, Any], answer: Answer) -> list[dict[str, Any]]:
        stream_options = body.get("stream_options")
        include_usage = isinstance(stream_options, Mapping) and bool(stream_options.get("include_usage"))
        base: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids):08d}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": answer.model or self._model_name(body),
            "system_fingerprint": self._fingerprint(answer),
        }

        def chunk(
            delta: dict[str, Any], finish_reason: str | None = None, logprobs: Any = None
        ) -> dict[str, Any]:
            data = dict(base)
            data["choices"] = [
                {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": logprobs}
            ]
            if include_usage:
                data["usage"] = None
            return data

        calls = self._tool_calls(body, answer)
        if calls and answer.content == "":
            # OpenAI's first chunk of a reply that only calls tools: null content and the first call's head.
            chunks = [chunk({"role": "assistant", "content": None, "tool_calls": [_call_head(0, calls[0])],
                             "refusal": None})]
        else:
            chunks = [chunk({"role": "assistant", "content": ""})]
        entries = self._logprob_entries(body, answer)
        if calls and answer.content == "":
            pass  # no content chunks: the calls follow the first chunk
        elif entries is None:
            chunks.extend(chunk({"content": token}) for token in split_tokens(answer.content))
        elif "".join(e["token"] for e in entries) == answer.content:
            chunks.extend(
                chunk({"content": e["token"]}, logprobs={"content": [e], "refusal": None}) for e in entries
            )
        else:
            chunks.append(chunk({"content": answer.content}, logprobs={"content": entries, "refusal": None}))
        for index, call in enumerate(calls):
            if index > 0 or answer.content != "":
                chunks.append(chunk({"tool_calls": [_call_head(index, call)]}))
            chunks.extend(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                for piece in _argument_pieces(call["function"]["arguments"])
            )
        chunks.append(chunk({}, finish_reason=answer.sent_finish_reason))
        if include_usage:
            usage_chunk = dict(base)
            usage_chunk["choices"] = []
            usage_chunk["usage"] = self._usage(body, answer)
            chunks.append(usage_chunk)
        return chunks

    async def _stream(
        self, request: web.Request, record: dict[str, Any], body: Mapping[str, Any], answer: Answer
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        interval = answer.byte_interval
        try:
            for data in self._stream_chunks(body, answer):
                event = b"data: " + json.dumps(data).encode("utf-8") + b"\n\n"
                if interval <= 0:
                    await response.write(event)
                    continue
                for i in range(len(event)):
                    await response.write(event[i : i + 1])
                    await asyncio.sleep(interval)
        except ConnectionError:
            self._finish_record(record, 0, "cancelled", counted=True)
            raise asyncio.CancelledError from None
        self._finish_record(record, 200, "stream", counted=True)
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


def _answer_text(answer: Answer) -> str:
    """The text counted for ``completion_tokens``: the content, then each call's name and arguments."""
    if not answer.tool_calls:
        return answer.content
    return " ".join([answer.content, *(f"{c.name} {c.arguments_text}" for c in answer.tool_calls)])


def _call_head(index: int, call: Mapping[str, Any]) -> dict[str, Any]:
    """The first streamed delta of a tool call: index, id, type and name, with empty arguments."""
    return {"index": index, "id": call["id"], "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""}}


_MAX_ARGUMENT_PIECES = 64
"""A streamed call's arguments come in pieces of 8 characters, in at most this many chunks."""


def _argument_pieces(arguments: str) -> list[str]:
    """``arguments`` split for streaming: pieces of 8 characters, longer ones when that makes over 64."""
    size = max(8, -(-len(arguments) // _MAX_ARGUMENT_PIECES))
    return [arguments[i : i + size] for i in range(0, len(arguments), size)]


# --------------------------------------------------------------------------- CLI


def _load_answers(path: Path) -> dict[str, str]:
    table = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        raise SystemExit(f"{path}: --answers must be a JSON object of string to string")
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT.

    Prints exactly one ``READY http://127.0.0.1:PORT/v1`` line once listening and,
    on exit, one line of JSON stats (``request_count``, ``max_in_flight``,
    ``first_request_at``, ``last_completion_at``, ``in_call_seconds``).
    """
    parser = argparse.ArgumentParser(
        prog="python -m pytest_jeval.testing.openai_server",
        description="A fake OpenAI-compatible server on 127.0.0.1 for tests and benchmarks.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: ephemeral)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds each request holds a slot")
    parser.add_argument(
        "--slots", type=int, default=None, help="requests processed at once (default or 0: unlimited)"
    )
    parser.add_argument("--answers", type=Path, default=None, help="JSON object for lookup_responder")
    parser.add_argument("--default-answer", default=None,
                        help="the answer when no --answers key matches, or to every request without --answers "
                             "(default: '' with --answers, 'OK' without)")
    parser.add_argument("--api-key", default=None, help="require 'Authorization: Bearer KEY'")
    parser.add_argument("--model", action="append", default=None, help="model id to list (repeatable)")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="fraction of first attempts that fault")
    parser.add_argument("--fault-kinds", default="429,500", help="comma-separated fault kinds")
    parser.add_argument("--fault-seed", type=int, default=0, help="seed of the fault choice")
    parser.add_argument(
        "--retry-after", type=float, default=0.05, help="Retry-After seconds for 429/503 faults"
    )
    parser.add_argument("--openai-reasoning", action="store_true",
                        help="refuse max_tokens and temperature != 1 for gpt-5*/o1*/o3*/o4* as the OpenAI API does")
    parser.add_argument("--tool-turns", type=int, default=1, metavar="N",
                        help="N-1 turns of one 'calculator' tool call per conversation, then the answer (default 1)")
    parser.add_argument("--no-strict-tools", dest="strict_tools", action="store_false",
                        help="accept malformed tools and broken tool-call conversations (default: HTTP 400)")
    args = parser.parse_args(argv)
    if args.tool_turns < 1:
        parser.error(f"--tool-turns must be >= 1, not {args.tool_turns}")

    responder: Responder
    if args.answers is not None:
        default = args.default_answer if args.default_answer is not None else ""
        responder = lookup_responder(_load_answers(args.answers), default=default)
    elif args.default_answer is not None:
        responder = lookup_responder({}, default=args.default_answer)
    else:
        responder = default_responder
    if args.tool_turns > 1:
        responder = tool_turns_responder(responder, args.tool_turns)
    if args.fault_rate > 0:
        kinds = [k.strip() for k in args.fault_kinds.split(",") if k.strip()]
        responder = FaultInjector(
            responder, rate=args.fault_rate, kinds=kinds, seed=args.fault_seed, retry_after=args.retry_after
        )

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    server = FakeOpenAIServer(
        responder,
        latency=args.latency,
        slots=args.slots if args.slots and args.slots > 0 else None,
        api_key=args.api_key,
        models=tuple(args.model) if args.model else ("test-model",),
        port=args.port,
        openai_reasoning=args.openai_reasoning,
        strict_tools=args.strict_tools,
    )
    try:
        base_url = server.start()
        print(f"READY {base_url}", flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(json.dumps(server.stats()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
