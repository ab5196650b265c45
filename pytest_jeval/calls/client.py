"""The small typed chat client that the ``model`` and ``judge`` fixtures hand to tests."""

from __future__ import annotations

import concurrent.futures
import dataclasses
from collections.abc import Callable
from typing import Any

from pytest_jeval.calls.settings import RequestSettings, adapt, build_request
from pytest_jeval.core.chat import ChatRequest, Endpoint, EndpointError, PromptLike, Reply

Submit = Callable[[Endpoint, ChatRequest], "concurrent.futures.Future[Reply]"]


class ModelClient:
    """Chat with one model through the plugin's scheduler (concurrency, retries, cache).

    Benchmarks never build HTTP requests themselves: they call :meth:`chat`.
    Every reply is reported to ``on_reply`` so the item's record can count its
    tokens, latency and cost.
    """

    def __init__(
        self,
        name: str,
        *,
        endpoint: Endpoint,
        submit: Submit,
        temperature: float = 0.0,
        max_tokens: int = 2048,
        system_prompt: str | None = None,
        stream: bool = False,
        on_reply: Callable[[Reply], None] | None = None,
        role: str = "model",
        settings: RequestSettings | None = None,
        on_error: Callable[[EndpointError], None] | None = None,
        nonce: int = 0,
    ) -> None:
        self.name = name
        """The model id sent to the endpoint."""
        self.role = role
        """``model`` or ``judge``."""
        self.settings = settings if settings is not None else adapt(
            name, temperature=temperature, max_tokens=max_tokens, stream=stream, system_prompt=system_prompt)
        """What every request carries (:func:`~pytest_jeval.calls.settings.build_request`)."""
        self.temperature = temperature if settings is None else settings.temperature
        self.max_tokens = max_tokens if settings is None else settings.max_tokens
        self._endpoint = endpoint
        self._submit = submit
        self._on_reply = on_reply
        self._on_error = on_error
        self.nonce = nonce
        """The ``nonce`` of a call that names none: a repeated item's repeat index, so its calls are its own."""

    def __repr__(self) -> str:
        return f"ModelClient({self.role}={self.name!r}, endpoint={self._endpoint.label!r})"

    def request(
        self,
        prompt: PromptLike,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        logprobs: bool = False,
        top_logprobs: int | None = None,
        nonce: int | None = None,
        **extra: Any,
    ) -> ChatRequest:
        """Build the :class:`ChatRequest` that :meth:`chat` would send (``nonce`` None: the client's own)."""
        return build_request(self.settings, prompt, temperature=temperature, max_tokens=max_tokens,
                             logprobs=logprobs, top_logprobs=top_logprobs,
                             nonce=self.nonce if nonce is None else nonce, **extra)

    def submit(self, prompt: PromptLike, **kwargs: Any) -> concurrent.futures.Future[Reply]:
        """Send without waiting; the future gives the :class:`Reply` (or raises EndpointError)."""
        request = self.request(prompt, **kwargs)
        future = _with_sent(self._submit(self._endpoint, request), request)
        if self._on_reply is not None or self._on_error is not None:
            on_reply, on_error = self._on_reply, self._on_error

            def report(f: concurrent.futures.Future[Reply]) -> None:
                if f.cancelled():
                    return
                exc = f.exception()
                if exc is None and on_reply is not None:
                    on_reply(f.result())
                elif isinstance(exc, EndpointError) and on_error is not None:
                    on_error(exc)

            future.add_done_callback(report)
        return future

    def chat(self, prompt: PromptLike, **kwargs: Any) -> Reply:
        """Send a prompt (a string or a list of chat messages) and wait for the reply.

        Keyword arguments: ``temperature``, ``max_tokens``, ``logprobs``,
        ``top_logprobs``, ``nonce`` (to repeat an identical request deliberately)
        and any other chat-completions parameter. Raises
        :class:`~pytest_jeval.core.chat.EndpointError` when retries are exhausted.
        """
        request = self.request(prompt, **kwargs)
        return self._finish(request, self._submit(self._endpoint, request))

    def _finish(self, request: ChatRequest, future: concurrent.futures.Future[Reply]) -> Reply:
        """Wait for ``request``'s reply, report it (or the failure), with :attr:`Reply.sent` filled."""
        try:
            reply = future.result()
        except EndpointError as exc:
            if self._on_error is not None:
                self._on_error(exc)
            raise
        reply = dataclasses.replace(reply, sent=tuple(request.sent().items()))
        if self._on_reply is not None:
            self._on_reply(reply)
        return reply


def _with_sent(future: concurrent.futures.Future[Reply], request: ChatRequest) -> concurrent.futures.Future[Reply]:
    """A future of ``future``'s reply with :attr:`Reply.sent` filled from ``request``."""
    out: concurrent.futures.Future[Reply] = concurrent.futures.Future()

    def copy(done: concurrent.futures.Future[Reply]) -> None:
        if done.cancelled():
            out.cancel()
        elif done.exception() is not None:
            out.set_exception(done.exception())
        else:
            out.set_result(dataclasses.replace(done.result(), sent=tuple(request.sent().items())))

    future.add_done_callback(copy)
    return out


class RepeatingClient(ModelClient):
    """A client that asks each question ``repeats`` times: the first ask's reply is returned, the others (sent
    right after it, nonces 1..repeats-1 on top of the call's own) go to ``on_repeats`` as texts (None where a
    call failed). ``judge_repeats`` uses it to measure how often the judge agrees with itself."""

    def __init__(self, name: str, *, repeats: int, on_repeats: Callable[[list[str | None]], None],
                 **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.repeats = repeats
        self._on_repeats = on_repeats

    def chat(self, prompt: PromptLike, **kwargs: Any) -> Reply:
        """:meth:`ModelClient.chat`, and the same question ``repeats - 1`` more times alongside it."""
        base = kwargs.pop("nonce", None)
        base = self.nonce if base is None else int(base)
        request = self.request(prompt, nonce=base, **kwargs)
        first = self._submit(self._endpoint, request)  # sent first: the ask whose reply counts
        extras = [self.submit(prompt, nonce=base + r, **kwargs) for r in range(1, self.repeats)]
        reply = self._finish(request, first)
        texts: list[str | None] = []
        for future in extras:
            try:
                texts.append(future.result().text)
            except EndpointError:
                texts.append(None)
        self._on_repeats(texts)
        return reply
