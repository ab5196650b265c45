"""The recording proxy: one OpenAI-compatible server on 127.0.0.1 per external-agent episode.

The agent talks only to this proxy, with a per-episode dummy key. Each accepted
``POST /v1/chat/completions`` is rebuilt as a :class:`ChatRequest` under the suite's
settings and sent through the plugin's scheduler (concurrency limits, retries, the
cache and energy attribution apply; the real key stays in the harness). Every request
and reply is recorded in the episode; the proxy counts the turns and tokens and refuses
requests past ``max_turns`` or the token budget.

Refusals (all OpenAI-style error JSON, ``{"error": {"message", "type", "code"}}``):

======  =====================  ==========================================================
status  ``code``               when
======  =====================  ==========================================================
401     ``invalid_api_key``    the ``Authorization: Bearer`` key is not the episode's
413     ``body_too_large``     the body is over :data:`MAX_BODY_BYTES` (refused before it is read,
                               from its ``Content-Length``, or as soon as reading passes the size)
400     ``invalid_request``    the body is not a JSON object with a ``messages`` list, or nests
                               deeper than :data:`~pytest_jeval.core.jsonsafe.MAX_DEPTH` levels
400     ``max_turns``          ``max_turns`` requests were answered or refused already
400     ``token_limit``        the episode's token budget is spent (a reply took it over: that reply
                               is recorded, not forwarded), and every request after it
400     ``episode_stopped``    any request after the episode stopped for another reason
502     ``upstream_error``     the model endpoint failed after the scheduler's retries
======  =====================  ==========================================================

400 is used for the limits because OpenAI clients do not retry it (they retry 429 and 5xx).

Refused requests count toward ``max_turns`` like answered ones: an agent cannot send bad
requests for the whole episode. :attr:`RecordingProxy.exchanges` keeps every answered request
and the first :data:`KEPT_REFUSED` refused ones; :attr:`RecordingProxy.refused` counts them all.

The suite's settings bound what the agent may ask: ``max_tokens`` is the lower of the agent's
and the suite's, and never more than what is left of the token budget (reserved before the
request is forwarded, so parallel requests cannot overrun it together); sampling parameters
(``temperature``, ``top_p``, ``seed``, penalties, ``logit_bias``, ``n``, ``logprobs``) are the
suite's, the agent's are dropped and listed in the request's ``dropped``. What was sent is in
each reply's ``sent``.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pytest_jeval.core.chat import EndpointError, Messages, Reply
from pytest_jeval.core.episode import Episode, StopReason

if TYPE_CHECKING:
    from aiohttp import web

    from pytest_jeval.agents.loop import Limits
    from pytest_jeval.core.chat import ChatRequest

Forward = Callable[["ChatRequest"], Awaitable[Reply]]
"""Send one request through the scheduler and await its reply."""
BuildRequest = Callable[[Messages, dict[str, Any]], "ChatRequest"]
"""Build the harness's request from the agent's messages and its other (kept) parameters."""

#: Request parameters taken from the agent's body (the rest is dropped and recorded as dropped).
PASSED_PARAMS = ("stop", "response_format")
#: Parameters the proxy handles itself (not forwarded as such).
HANDLED_PARAMS = ("model", "messages", "tools", "tool_choice", "parallel_tool_calls", "stream", "stream_options",
                  "max_tokens", "max_completion_tokens")

MAX_BODY_BYTES = 8 * 1024 * 1024
"""Largest request body the proxy reads."""
KEPT_REFUSED = 20
"""Refused requests kept in :attr:`RecordingProxy.exchanges` (the rest are only counted)."""


def dummy_key() -> str:
    """A fresh per-episode key for the agent (it is worth nothing outside the episode's proxy)."""
    return "jeval-episode-" + secrets.token_hex(16)


def _error(status: int, message: str, code: str, type_: str = "invalid_request_error") -> web.Response:
    from aiohttp import web

    return web.json_response({"error": {"message": message, "type": type_, "code": code, "param": None}},
                             status=status)


def completion_json(reply: Reply, model: str, created: int) -> dict[str, Any]:
    """The chat-completion object the agent gets for ``reply``."""
    message = reply.assistant_message()
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    out: dict[str, Any] = {
        "id": f"chatcmpl-jeval-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
    }
    if reply.prompt_tokens is not None or reply.completion_tokens is not None:
        p, c = reply.prompt_tokens or 0, reply.completion_tokens or 0
        out["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
    return out


def stream_events(completion: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The SSE chunks of a whole completion: role and content, each tool call, the finish, the usage."""
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    for key, value in message.items():  # provider extras (reasoning_content, ...)
        if key not in ("role", "content", "tool_calls") and value is not None:
            delta[key] = value
    events = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}]
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        events.append({**base, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [{
            "index": i, "id": call.get("id"), "type": "function",
            "function": {"name": fn.get("name", ""), "arguments": fn.get("arguments", "")}}]}}]})
    events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    if include_usage and "usage" in completion:
        events.append({**base, "choices": [], "usage": completion["usage"]})
    return events


class RecordingProxy:
    """The proxy of one episode; :meth:`start` it on the episode's loop, :meth:`stop` it after.

    ``episode`` is filled in as requests are answered: ``replies``, ``turns``, ``messages``
    (the last request's conversation and its reply) and, when a limit refuses a request,
    ``stop_reason`` and ``limit_detail``. :attr:`exchanges` lists every request, accepted
    or refused.
    """

    def __init__(self, *, model: str, limits: Limits, forward: Forward, build: BuildRequest,
                 key: str | None = None, max_tokens: int | None = None) -> None:
        import asyncio

        self.model = model
        self.limits = limits
        self.forward = forward
        self.build = build
        self.key = key or dummy_key()
        self.max_tokens = max_tokens
        """The suite's output-token limit per answer: what an agent asks is capped to it."""
        self.episode = Episode()
        self.exchanges: list[dict[str, Any]] = []
        """One entry per answered request and per refused one (the first :data:`KEPT_REFUSED`): turn,
        status, code, stream, dropped parameters, capped ``max_tokens``, seconds."""
        self.refused = 0
        """How many requests were refused (all of them, kept in :attr:`exchanges` or not)."""
        self.stopped: StopReason | None = None
        self._booked = 0
        self._reserved = 0
        self._budget = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self._port = 0
        self.unix_path: str | None = None
        """The Unix socket the proxy listens on (None: TCP on 127.0.0.1)."""
        self.overhead_seconds = 0.0
        """Seconds spent in the proxy itself (each request's time minus the model call's)."""

    # -- life cycle --------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """The URL the agent is given (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self._port}/v1"

    async def start(self, *, unix_path: str | None = None) -> str:
        """Listen on an ephemeral port of 127.0.0.1, or on the Unix socket ``unix_path`` (made
        connectable by any uid: the agent's sandbox reaches it through a bind); returns :attr:`base_url`."""
        from aiohttp import web

        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        if unix_path is not None:
            usite = web.UnixSite(runner, unix_path)
            await usite.start()
            os.chmod(unix_path, 0o666)
            self.unix_path = unix_path
        else:
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            server = site._server  # aiohttp exposes the bound socket only here
            assert server is not None
            sockets = getattr(server, "sockets", None) or []
            self._port = int(sockets[0].getsockname()[1])
        self._runner = runner
        return self.base_url

    async def stop(self) -> None:
        """Close the server (requests still in flight are cancelled)."""
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    def tokens(self) -> int:
        """Prompt plus completion tokens of the answered turns (unreported counts as 0)."""
        return sum((r.prompt_tokens or 0) + (r.completion_tokens or 0) for r in self.episode.replies)

    def stop_episode(self, reason: StopReason, detail: str) -> None:
        """Record why the episode stops (the first reason wins)."""
        if self.stopped is not None:
            return
        self.stopped = reason
        self.episode.stop_reason = reason
        if reason in ("error", "not_run"):
            self.episode.error = detail
        else:
            self.episode.limit_detail = detail

    # -- handlers ----------------------------------------------------------------------
    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        return secrets.compare_digest(header.encode(), f"Bearer {self.key}".encode())

    async def _models(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        if not self._authorized(request):
            return _error(401, "the API key is not this episode's", "invalid_api_key", "authentication_error")
        return web.json_response({"object": "list", "data": [
            {"id": self.model, "object": "model", "created": 0, "owned_by": "jeval"}]})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        entry: dict[str, Any] = {"turn": None, "status": 0, "code": None, "stream": False, "dropped": [],
                                 "seconds": 0.0}
        model_seconds = 0.0
        try:
            response, model_seconds = await self._answer(request, entry)
        finally:
            entry["seconds"] = round(time.monotonic() - started, 6)
            self.overhead_seconds += max(0.0, time.monotonic() - started - model_seconds)
            if entry["status"] == 200 or entry["turn"] is not None:
                self.exchanges.append(entry)
            else:
                self.refused += 1
                if self.refused <= KEPT_REFUSED:
                    self.exchanges.append(entry)
        return response

    def _refuse(self, entry: dict[str, Any], status: int, message: str, code: str,
                type_: str = "invalid_request_error", *, counts: bool = True) -> tuple[web.StreamResponse, float]:
        """A refusal; one that ``counts`` is a request spent toward ``max_turns``."""
        entry.update(status=status, code=code)
        if counts and self.stopped is None and self._booked + self.refused + 1 >= self.limits.max_turns:
            self.stop_episode("max_turns", f"max_turns = {self.limits.max_turns} reached "
                                           f"({self._booked} answered, {self.refused + 1} refused)")
        return _error(status, message, code, type_), 0.0

    async def _body(self, request: web.Request) -> Any:
        """The JSON body, or a string saying why there is none (read at most :data:`MAX_BODY_BYTES`)."""
        import asyncio

        from aiohttp import web

        from pytest_jeval.core import jsonsafe

        if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_BODY_BYTES, actual_size=request.content_length)
        raw = await request.read()  # aiohttp stops reading past client_max_size (MAX_BODY_BYTES)
        try:
            return await asyncio.to_thread(jsonsafe.loads, raw)  # off the shared event loop
        except ValueError as exc:
            return str(exc)

    async def _answer(self, request: web.Request, entry: dict[str, Any]) -> tuple[web.StreamResponse, float]:
        from aiohttp import web

        if not self._authorized(request):
            return self._refuse(entry, 401, "the API key is not this episode's", "invalid_api_key",
                                "authentication_error")
        if self.stopped is not None:
            code = "token_limit" if self.stopped == "token_limit" else "episode_stopped"
            return self._refuse(entry, 400, f"the episode has stopped ({self.stopped}: "
                                            f"{self.episode.limit_detail or self.episode.error})", code, counts=False)
        try:
            body = await self._body(request)
        except web.HTTPRequestEntityTooLarge:
            return self._refuse(entry, 413, f"the body is larger than {MAX_BODY_BYTES} bytes", "body_too_large")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
            why = f" ({body})" if isinstance(body, str) else ""
            return self._refuse(entry, 400, f"the body must be a JSON object with a non-empty messages list{why}",
                                "invalid_request")
        entry["stream"] = stream = body.get("stream") is True
        if self._booked + self.refused >= self.limits.max_turns:
            detail = f"max_turns = {self.limits.max_turns} reached"
            self.stop_episode("max_turns", detail)
            entry.update(status=400, code="max_turns")
            return _error(400, f"the episode's {detail}", "max_turns"), 0.0
        options, dropped = self._options(body)
        entry["dropped"] = dropped
        messages: Messages = [dict(m) for m in body["messages"] if isinstance(m, dict)]
        reserved = await self._reserve(options, entry, messages)
        if reserved is None:
            entry.update(status=400, code="token_limit")
            return _error(400, "the episode's token budget is spent", "token_limit"), 0.0
        self._booked += 1
        entry["turn"] = self._booked
        try:
            return await self._forward(messages, options, body, entry, stream, request)
        finally:
            async with self._budget:
                self._reserved -= reserved
                self._budget.notify_all()

    async def _reserve(self, options: dict[str, Any], entry: dict[str, Any], messages: Messages) -> int | None:
        """Reserve this request's tokens out of the token budget before it is forwarded: its prompt (estimated
        at 4 characters a token) and its ``max_tokens``, capped to what is left. Requests in flight hold their
        reservation; one that finds nothing left waits for them, and when none is in flight the episode stops
        (None). 0 without a budget."""
        budget = self.limits.max_tokens
        if budget is None:
            return 0
        prompt = len(json.dumps(messages, ensure_ascii=False, default=str)) // 4 + 1
        async with self._budget:
            while True:
                if self.stopped is not None:
                    return None
                left = budget - self.tokens() - self._reserved - prompt
                if left > 0:
                    break
                if self._reserved == 0:
                    self.stop_episode("token_limit", f"{self.tokens()} tokens used and about {prompt} more in the "
                                                     f"prompt, max_episode_tokens = {budget}")
                    return None
                await self._budget.wait()  # requests in flight may leave some of the budget
            asked = int(options.get("max_tokens") or self.max_tokens or left)
            if asked > left:
                entry["capped"] = {"max_tokens": [asked, left], "why": "the episode's token budget"}
                asked = left
            options["max_tokens"] = asked
            self._reserved += prompt + asked
            return prompt + asked

    async def _forward(self, messages: Messages, options: dict[str, Any], body: dict[str, Any], entry: dict[str, Any],
                       stream: bool, request: web.Request) -> tuple[web.StreamResponse, float]:
        try:
            chat = self.build(messages, options)
        except (TypeError, ValueError) as exc:
            entry.update(status=400, code="invalid_request")
            return _error(400, f"the request cannot be sent: {exc}", "invalid_request"), 0.0
        called = time.monotonic()
        try:
            reply = await self.forward(chat)
        except EndpointError as exc:
            model_seconds = time.monotonic() - called
            self.stop_episode("error", f"the model endpoint failed: {exc}")
            entry.update(status=502, code="upstream_error")
            return _error(502, "the model endpoint failed", "upstream_error", "server_error"), model_seconds
        model_seconds = time.monotonic() - called
        ep = self.episode
        ep.turns += 1
        ep.replies.append(reply)
        ep.messages = [*chat.messages, reply.assistant_message()]
        budget = self.limits.max_tokens
        if budget is not None and self.tokens() > budget:
            self.stop_episode("token_limit", f"{self.tokens()} tokens used, over max_episode_tokens = {budget}")
            entry.update(status=400, code="token_limit")
            return _error(400, "the episode's token budget is spent", "token_limit"), model_seconds
        completion = completion_json(reply, self.model, int(time.time()))
        entry["status"] = 200
        if not stream:
            from aiohttp import web

            return web.json_response(completion), model_seconds
        stream_options = body.get("stream_options")
        usage = isinstance(stream_options, dict) and stream_options.get("include_usage") is True
        return await self._sse(request, stream_events(completion, usage)), model_seconds

    def _options(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The agent's parameters the harness sends on, and the names of those it drops."""
        options: dict[str, Any] = {k: body[k] for k in PASSED_PARAMS if body.get(k) is not None}
        tools = body.get("tools")
        if isinstance(tools, list) and tools:
            options["tools"] = tools
            for key in ("tool_choice", "parallel_tool_calls"):
                if body.get(key) is not None:
                    options[key] = body[key]
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            options["max_tokens"] = min(limit, self.max_tokens) if self.max_tokens else limit
        dropped = sorted(k for k in body if k not in PASSED_PARAMS and k not in HANDLED_PARAMS)
        return options, dropped

    async def _sse(self, request: web.Request, events: list[dict[str, Any]]) -> web.StreamResponse:
        from aiohttp import web

        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        for event in events:
            await response.write(f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
