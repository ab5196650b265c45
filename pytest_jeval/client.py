"""The small typed chat client that the ``model`` and ``judge`` fixtures hand to tests."""

from __future__ import annotations

import concurrent.futures
from typing import Any, Callable, Optional

from pytest_jeval.engines.base import PromptLike, Reply, as_messages
from pytest_jeval.engines.openai_compat import ChatRequest, Endpoint

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
        temperature: float,
        max_tokens: int,
        system_prompt: Optional[str] = None,
        stream: bool = False,
        on_reply: Optional[Callable[[Reply], None]] = None,
        role: str = "model",
    ) -> None:
        self.name = name
        """The model id sent to the endpoint."""
        self.role = role
        """``model`` or ``judge``."""
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._endpoint = endpoint
        self._submit = submit
        self._system = system_prompt
        self._stream = stream
        self._on_reply = on_reply

    def __repr__(self) -> str:
        return f"ModelClient({self.role}={self.name!r}, endpoint={self._endpoint.label!r})"

    def request(
        self,
        prompt: PromptLike,
        *,
        temperature: Optional[float] = None,
        max_tokens: Optional[int] = None,
        logprobs: bool = False,
        top_logprobs: Optional[int] = None,
        nonce: int = 0,
        **extra: Any,
    ) -> ChatRequest:
        """Build the :class:`ChatRequest` that :meth:`chat` would send."""
        return ChatRequest(
            model=self.name,
            messages=as_messages(prompt, self._system),
            temperature=self.temperature if temperature is None else temperature,
            max_tokens=self.max_tokens if max_tokens is None else max_tokens,
            logprobs=logprobs,
            top_logprobs=top_logprobs,
            stream=self._stream and not logprobs,
            extra=tuple(sorted(extra.items())),
            nonce=nonce,
        )

    def submit(self, prompt: PromptLike, **kwargs: Any) -> concurrent.futures.Future[Reply]:
        """Send without waiting; the future gives the :class:`Reply` (or raises EndpointError)."""
        future = self._submit(self._endpoint, self.request(prompt, **kwargs))
        if self._on_reply is not None:
            callback = self._on_reply

            def report(f: concurrent.futures.Future[Reply]) -> None:
                if not f.cancelled() and f.exception() is None:
                    callback(f.result())

            future.add_done_callback(report)
        return future

    def chat(self, prompt: PromptLike, **kwargs: Any) -> Reply:
        """Send a prompt (a string or a list of chat messages) and wait for the reply.

        Keyword arguments: ``temperature``, ``max_tokens``, ``logprobs``,
        ``top_logprobs``, ``nonce`` (to repeat an identical request deliberately)
        and any other chat-completions parameter. Raises
        :class:`~pytest_jeval.engines.base.EndpointError` when retries are exhausted.
        """
        reply = self._submit(self._endpoint, self.request(prompt, **kwargs)).result()
        if self._on_reply is not None:
            self._on_reply(reply)
        return reply
