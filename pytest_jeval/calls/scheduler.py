"""Model calls on a background asyncio loop, so one pytest process keeps an endpoint busy.

pytest runs items one after another. The scheduler lets the plugin send the calls
for upcoming items ahead of time: :meth:`CallScheduler.submit` returns a
``concurrent.futures.Future`` at once, and at most ``Endpoint.max_concurrency``
requests are in flight to each endpoint from this process. The item that needs
a reply waits on its future.

:class:`CallCore` is the part that lives on the event loop (clients, semaphores,
cache, counters). :class:`CallScheduler` runs it on a thread of the pytest process;
:class:`~pytest_jeval.calls.callproc.ProcessCallScheduler` runs it in a helper
process, so that the HTTP client does not share the GIL with pytest.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import time
from collections.abc import Sequence
from typing import Any, Protocol

from pytest_jeval.calls.budget import Budget, BudgetSpec
from pytest_jeval.calls.cache import ResponseCache
from pytest_jeval.calls.engines import EndpointCheck, check_endpoint, get_engine
from pytest_jeval.calls.loopthread import LoopThread
from pytest_jeval.core.chat import BudgetExhausted, ChatRequest, Endpoint, EndpointError, Reply

Call = tuple[Endpoint, ChatRequest]


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
    first_request_at: float | None = None
    last_completion_at: float | None = None
    call_processes: int = 0
    """Helper call processes started (``call_executor = "process"``); 0 when calls ran on a thread."""
    call_process_exits: int = 0
    """Times the helper call process died mid-run (``call_executor = "process"``)."""
    call_process_errors: tuple[str, ...] = ()
    """Why it died: its exit status and the end of what it wrote to stderr."""
    prefetch_failed: int = 0
    """Items whose request could not be built ahead of time (the item then fails on its own)."""
    prefetch_errors: tuple[str, ...] = ()
    """The first few of those reasons."""
    budget_refused: int = 0
    """Calls the run budget did not let start (``BudgetExhausted``; never sent)."""

    @property
    def rate(self) -> float | None:
        """Completed requests per second of in-call time."""
        if self.first_request_at is None or self.last_completion_at is None or self.requests_sent == 0:
            return None
        span = self.last_completion_at - self.first_request_at
        return self.requests_sent / span if span > 0 else None

    def merged(self, other: SchedulerStats) -> SchedulerStats:
        """Both sets of counters together (sums, peaks, and the widest in-call span)."""
        firsts = [t for t in (self.first_request_at, other.first_request_at) if t is not None]
        lasts = [t for t in (self.last_completion_at, other.last_completion_at) if t is not None]
        out = SchedulerStats(**{
            f.name: getattr(self, f.name) + getattr(other, f.name)
            for f in dataclasses.fields(self)
            if f.name not in ("max_in_flight", "first_request_at", "last_completion_at")
        })
        out.max_in_flight = max(self.max_in_flight, other.max_in_flight)
        out.first_request_at = min(firsts) if firsts else None
        out.last_completion_at = max(lasts) if lasts else None
        return out


class Scheduler(Protocol):
    """What the runtime needs from a call scheduler, wherever its HTTP client runs."""

    @property
    def stats(self) -> SchedulerStats:
        """The counters so far (read-only: the schedulers expose them as a property)."""

    def submit(
        self, endpoint: Endpoint, request: ChatRequest, *, use_cache: bool = True
    ) -> concurrent.futures.Future[Reply]:
        """Schedule one call; the future resolves to a Reply or raises EndpointError."""

    def submit_many(self, calls: Sequence[Call], *, use_cache: bool = True) -> list[concurrent.futures.Future[Reply]]:
        """Schedule several calls at once, in order."""

    def start(self) -> None:
        """Get ready for calls now rather than at the first one."""

    def close(self) -> None:
        """Cancel what is still pending and release the clients."""


class _EndpointState:
    def __init__(self, endpoint: Endpoint) -> None:
        self.engine = get_engine(endpoint.engine)
        self.client = self.engine.make_client(endpoint)
        self.semaphore = asyncio.Semaphore(endpoint.max_concurrency)


class CallCore:
    """Clients, per-endpoint bounds, the cache and the counters, on one event loop."""

    def __init__(self, cache: ResponseCache | None = None, budget: BudgetSpec | None = None) -> None:
        self.cache = cache
        self.stats = SchedulerStats()
        self._endpoints: dict[Endpoint, _EndpointState] = {}
        self._call_ids = 0
        self.budget = Budget(budget) if budget is not None else None
        """The run budget's check (:mod:`pytest_jeval.calls.budget`), None without a budget."""

    def _state(self, endpoint: Endpoint) -> _EndpointState:
        state = self._endpoints.get(endpoint)
        if state is None:
            state = self._endpoints[endpoint] = _EndpointState(endpoint)
        return state

    async def call(self, endpoint: Endpoint, request: ChatRequest, use_cache: bool = True) -> Reply:
        """One call: from the cache, or sent once a slot of its endpoint is free."""
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
            budget = self.budget
            reservation = None
            if budget is not None:  # the run budget: checked once a slot is free, right before sending
                try:
                    reservation = budget.admit(request)
                except BudgetExhausted:
                    stats.budget_refused += 1
                    stats.failed += 1
                    raise
            stats.in_flight += 1
            stats.max_in_flight = max(stats.max_in_flight, stats.in_flight)
            stats.requests_sent += 1
            if stats.first_request_at is None:
                stats.first_request_at = time.perf_counter()
            self._call_ids += 1
            call_id = f"call-{self._call_ids}"
            try:
                reply = await state.engine.chat(state.client, endpoint, request)
            except BaseException as exc:
                if reservation is not None:
                    budget.release(reservation)  # type: ignore[union-attr]
                if isinstance(exc, EndpointError):
                    stats.failed += 1
                raise
            finally:
                stats.in_flight -= 1
                stats.last_completion_at = time.perf_counter()
            if reservation is not None:
                budget.settle(reservation, reply)  # type: ignore[union-attr]
            stats.completed += 1
            stats.retries += reply.attempts - 1
            reply = dataclasses.replace(reply, call_id=call_id)
            from pytest_jeval.core.redact import redact_reply  # a key the server echoed never reaches scorer or cache
            reply = redact_reply(reply, endpoint.api_key)
        if key is not None:
            await asyncio.to_thread(self.cache.put, key, reply)  # type: ignore[union-attr]
        return reply

    async def aclose(self) -> None:
        """Close every client."""
        for state in self._endpoints.values():
            await state.engine.close(state.client)
        self._endpoints.clear()


class CallScheduler:
    """Runs a :class:`CallCore` on an event loop in a background thread of this process."""

    def __init__(self, cache: ResponseCache | None = None, budget: BudgetSpec | None = None) -> None:
        self.core = CallCore(cache, budget)
        self._thread = LoopThread("jeval-calls")

    @property
    def cache(self) -> ResponseCache | None:
        """The response cache, if any."""
        return self.core.cache

    @property
    def stats(self) -> SchedulerStats:
        """The live counters."""
        return self.core.stats

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        return self._thread.loop()

    def start(self) -> None:
        """Start the loop thread now rather than at the first call."""
        self._ensure_loop()

    def close(self) -> None:
        """Cancel what is still pending, close the clients and stop the loop."""
        self._thread.stop(self.core.aclose)

    def submit(
        self, endpoint: Endpoint, request: ChatRequest, *, use_cache: bool = True
    ) -> concurrent.futures.Future[Reply]:
        """Schedule one call; the future resolves to a Reply or raises EndpointError."""
        loop = self._ensure_loop()
        self.core.stats.submitted += 1
        return asyncio.run_coroutine_threadsafe(self.core.call(endpoint, request, use_cache), loop)

    def submit_many(self, calls: Sequence[Call], *, use_cache: bool = True) -> list[concurrent.futures.Future[Reply]]:
        """Schedule several calls at once, in order."""
        return [self.submit(endpoint, request, use_cache=use_cache) for endpoint, request in calls]

    def call(self, endpoint: Endpoint, request: ChatRequest, *, use_cache: bool = True) -> Reply:
        """Blocking form of :meth:`submit`."""
        return self.submit(endpoint, request, use_cache=use_cache).result()

    def run(self, coro: Any) -> Any:
        """Run a coroutine on the scheduler's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop()).result()


async def check_endpoints(endpoints: Sequence[Endpoint]) -> list[EndpointCheck]:
    """For each endpoint, why it is unusable (dead, or rejects the key) and the models it lists
    (:class:`~pytest_jeval.calls.engines.EndpointCheck`); checked at once, each with a client of its
    own that is closed afterwards."""
    engines = [get_engine(endpoint.engine) for endpoint in endpoints]
    clients = [engine.make_client(endpoint) for engine, endpoint in zip(engines, endpoints)]
    try:
        return list(await asyncio.gather(*(
            check_endpoint(engine, client, endpoint) for engine, client, endpoint in zip(engines, clients, endpoints))))
    finally:
        for engine, client in zip(engines, clients):
            await engine.close(client)


def preflight(endpoints: Sequence[Endpoint]) -> list[EndpointCheck]:
    """:func:`check_endpoints` on a short-lived event loop of its own, so checking endpoints at
    session start commits to no scheduler (the controller of an xdist run never makes a call)."""
    return asyncio.run(check_endpoints(endpoints)) if endpoints else []
