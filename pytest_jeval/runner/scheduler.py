"""Model calls on a background asyncio loop, so one pytest process keeps an endpoint busy.

pytest runs items one after another. The scheduler lets the plugin send the calls
for upcoming items ahead of time: :meth:`CallScheduler.submit` returns a
``concurrent.futures.Future`` at once, and at most ``Endpoint.max_concurrency``
requests are in flight to each endpoint from this process. The item that needs
a reply waits on its future.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
import time
from typing import Any, Callable, Optional

from pytest_jeval.engines import openai_compat
from pytest_jeval.engines.base import EndpointError, Reply
from pytest_jeval.engines.openai_compat import ChatRequest, Endpoint
from pytest_jeval.runner.cache import ResponseCache

CallHook = Callable[[str, float], None]


@dataclasses.dataclass
class SchedulerStats:
    """Counters for the terminal summary."""

    submitted: int = 0
    completed: int = 0
    failed: int = 0
    cache_hits: int = 0
    requests_sent: int = 0
    retries: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    first_request_at: Optional[float] = None
    last_completion_at: Optional[float] = None

    @property
    def rate(self) -> Optional[float]:
        """Completed requests per second of in-call time."""
        if self.first_request_at is None or self.last_completion_at is None or self.requests_sent == 0:
            return None
        span = self.last_completion_at - self.first_request_at
        return self.requests_sent / span if span > 0 else None


class _EndpointState:
    def __init__(self, endpoint: Endpoint) -> None:
        self.client = endpoint.make_client()
        self.semaphore = asyncio.Semaphore(endpoint.max_concurrency)


class CallScheduler:
    """Owns the event loop thread, one async client and one semaphore per endpoint."""

    def __init__(
        self,
        cache: Optional[ResponseCache] = None,
        on_call_start: Optional[CallHook] = None,
        on_call_end: Optional[CallHook] = None,
    ) -> None:
        self.cache = cache
        self.stats = SchedulerStats()
        self._on_start = on_call_start
        self._on_end = on_call_end
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._endpoints: dict[Endpoint, _EndpointState] = {}
        self._lock = threading.Lock()
        self._call_ids = 0

    # -- loop lifecycle -------------------------------------------------------------
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name="jeval-calls", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def close(self) -> None:
        """Cancel what is still pending, close the clients and stop the loop."""
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for state in self._endpoints.values():
                await state.client.close()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=10)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        loop.close()
        self._loop = None

    # -- calls ----------------------------------------------------------------------
    def _state(self, endpoint: Endpoint) -> _EndpointState:
        state = self._endpoints.get(endpoint)
        if state is None:
            state = self._endpoints[endpoint] = _EndpointState(endpoint)
        return state

    def submit(self, endpoint: Endpoint, request: ChatRequest, *, use_cache: bool = True) -> concurrent.futures.Future[Reply]:
        """Schedule one call; the future resolves to a Reply or raises EndpointError."""
        loop = self._ensure_loop()
        self.stats.submitted += 1
        return asyncio.run_coroutine_threadsafe(self._call(endpoint, request, use_cache), loop)

    def call(self, endpoint: Endpoint, request: ChatRequest, *, use_cache: bool = True) -> Reply:
        """Blocking form of :meth:`submit`."""
        return self.submit(endpoint, request, use_cache=use_cache).result()

    async def _call(self, endpoint: Endpoint, request: ChatRequest, use_cache: bool) -> Reply:
        key = request.cache_key(endpoint) if (self.cache is not None and use_cache) else None
        if key is not None:
            cached = self.cache.get(key)  # type: ignore[union-attr]
            if cached is not None:
                self.stats.cache_hits += 1
                self.stats.completed += 1
                return cached
        state = self._state(endpoint)
        async with state.semaphore:
            stats = self.stats
            stats.in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
            stats.requests_sent += 1
            now = time.perf_counter()
            if stats.first_request_at is None:
                stats.first_request_at = now
            self._call_ids += 1
            call_id = f"call-{self._call_ids}"
            if self._on_start is not None:
                self._on_start(call_id, now)
            try:
                reply = await openai_compat.chat(state.client, endpoint, request)
            except EndpointError:
                stats.failed += 1
                raise
            finally:
                stats.in_flight -= 1
                end = time.perf_counter()
                stats.last_completion_at = end
                if self._on_end is not None:
                    self._on_end(call_id, end)
            stats.completed += 1
            stats.retries += reply.attempts - 1
            reply = dataclasses.replace(reply, call_id=call_id)
        if key is not None:
            await asyncio.to_thread(self.cache.put, key, reply)  # type: ignore[union-attr]
        return reply

    def preflight(self, endpoint: Endpoint) -> Optional[str]:
        """Reason the endpoint is unusable (dead, or rejects the key), or None."""
        loop = self._ensure_loop()

        async def check() -> Optional[str]:
            return await openai_compat.preflight(self._state(endpoint).client, endpoint)

        return asyncio.run_coroutine_threadsafe(check(), loop).result()

    def run(self, coro: Any) -> Any:
        """Run a coroutine on the scheduler's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop()).result()
