"""Responders that hold requests, so that a test decides what is in flight instead of racing the clock.

A test that needs calls to overlap, or a run to be killed half-way, used to count on a server latency
being longer than the client's work (and lost on a busy machine). These wrap any responder of the
test server (``FakeOpenAIServer``) and make the timing part of the script:

* :class:`HoldUntilConcurrent` holds the first requests until ``count`` of them are in flight at once,
  then lets everything through: a client that keeps ``count`` requests in flight reaches that at once,
  however slow the machine; one that cannot shows it in the server's ``max_in_flight``.
* :class:`HoldAfter` answers the first ``allowed`` requests and holds every later one until the client
  goes away or the server stops: a run against it can get exactly that far and no further, so a test
  that kills it knows what it stored.

Responders run on the server's event loop (one thread), so the counters need no lock.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

from pytest_jeval.testing.openai_server import Responder

PATIENCE = 120.0
"""Seconds a held request waits for the others before it is let through anyway (then the test's own
assertion on what was in flight fails, instead of the run hanging)."""


async def _answer(inner: Responder, body: dict[str, Any], attempt: int) -> Any:
    result = inner(body, attempt)
    if inspect.isawaitable(result):
        result = await result
    return result


class HoldUntilConcurrent:
    """Hold each request until ``count`` are held at once (or :data:`PATIENCE` runs out); answer as ``inner``."""

    def __init__(self, inner: Responder, count: int, patience: float = PATIENCE) -> None:
        self.inner = inner
        self.count = count
        self.patience = patience
        self.held = 0
        self.released = False
        """True once ``count`` requests were held together (or one waited :data:`PATIENCE`)."""
        self.reached = False
        """True when ``count`` requests really were in flight together."""

    async def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        if not self.released:
            self.held += 1
            deadline = time.monotonic() + self.patience
            try:
                while not self.released:
                    if self.held >= self.count:
                        self.released = self.reached = True
                    elif time.monotonic() > deadline:
                        self.released = True
                    else:
                        await asyncio.sleep(0.005)
            finally:
                self.held -= 1
        return await _answer(self.inner, body, attempt)


class HoldAfter:
    """Answer the first ``allowed`` requests as ``inner``; hold every later one until it is cancelled.

    A held request ends when its client goes away (the server cancels the handler) or when the server
    stops. Set ``server.responder = hold.inner`` before the run that must complete.
    """

    def __init__(self, inner: Responder, allowed: int) -> None:
        self.inner = inner
        self.allowed = allowed
        self.seen = 0

    async def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        self.seen += 1
        if self.seen > self.allowed:
            await asyncio.Event().wait()  # never set: only cancellation ends it
        return await _answer(self.inner, body, attempt)
