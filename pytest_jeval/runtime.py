"""Per-process runtime state: the plan, the call scheduler, prefetching and resumed records."""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
from typing import Any, Iterable, Optional

import pytest

from pytest_jeval.engines.base import Reply
from pytest_jeval.engines.openai_compat import ChatRequest, Endpoint
from pytest_jeval.plan import EvalPlan
from pytest_jeval.runner.cache import ResponseCache
from pytest_jeval.runner.scheduler import CallScheduler
from pytest_jeval.sample import Sample
from pytest_jeval.score import Score


@dataclasses.dataclass
class ItemCase:
    """What one benchmark item is about, and what happened while it ran."""

    benchmark: str
    model: str
    sample: Sample
    replies: list[Reply] = dataclasses.field(default_factory=list)
    """Replies of the model under test, in order."""
    judge_replies: list[Reply] = dataclasses.field(default_factory=list)
    score: Optional[Score] = None
    error: Optional[str] = None
    resumed: Optional[dict[str, Any]] = None
    """The stored record when ``--jeval-resume`` skips this item."""


from pytest_jeval._keys import case_key  # noqa: E402,F401  (re-exported for benchmark modules)


def case_for(item: pytest.Item) -> Optional[tuple[str, str, Sample]]:
    """(benchmark, model, sample) for a jeval benchmark item, else None."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "jeval_model" not in callspec.params or "sample" not in callspec.params:
        return None
    from pytest_jeval.collect import BenchmarkModule

    parent = item.getparent(BenchmarkModule)
    if parent is None:
        return None
    return parent.name, callspec.params["jeval_model"], callspec.params["sample"]


class Runtime:
    """Created in ``pytest_configure`` of every process that runs items."""

    def __init__(self, plan: EvalPlan, *, use_cache: bool, window: int = 1024) -> None:
        self.plan = plan
        cache = ResponseCache(plan.cache_dir) if (use_cache and plan.cache_dir is not None) else None
        self.scheduler = CallScheduler(cache=cache)
        self.window = window
        self.resumed: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        """(benchmark, model) -> record_id -> stored record, filled under --jeval-resume."""
        self._prefetched: dict[str, collections.deque[concurrent.futures.Future[Reply]]] = {}
        self._submitted: set[str] = set()
        self._endpoints: dict[tuple[str, bool], Endpoint] = {}

    # -- endpoints -------------------------------------------------------------------
    def endpoint(self, model: str, *, judge: bool = False) -> Endpoint:
        """The endpoint for a model (or the judge), resolved once."""
        key = (model, judge)
        if key not in self._endpoints:
            entry = None if judge else self.plan.models[model]
            self._endpoints[key] = self.plan.endpoint_for(entry, judge=judge)
        return self._endpoints[key]

    def is_resumed(self, bench: str, model: str, record_id: str) -> Optional[dict[str, Any]]:
        """The stored record of a sample that ``--jeval-resume`` skips, or None."""
        return self.resumed.get((bench, model), {}).get(record_id)

    # -- calls -----------------------------------------------------------------------
    def submit(self, endpoint: Endpoint, request: ChatRequest) -> concurrent.futures.Future[Reply]:
        """A prefetched future for this exact request if there is one, else a new call."""
        queue = self._prefetched.get(request.cache_key(endpoint))
        if queue:
            return queue.popleft()
        return self.scheduler.submit(endpoint, request)

    def prefetch(self, items: Iterable[pytest.Item]) -> None:
        """Send the benchmark prompt of each upcoming item that has not been sent yet.

        ``items`` is a window sliding forward over this process's run order (pytest's
        item list, or xdist's queue, which only grows at its end), so the items seen
        before form a prefix of it: only the new tail is looked at, which keeps this
        O(new items) per test instead of O(window).
        """
        window = items if isinstance(items, (list, tuple)) else list(items)
        start = len(window)
        while start > 0 and window[start - 1].nodeid not in self._submitted:
            start -= 1
        for item in window[start:]:
            self._submitted.add(item.nodeid)
            if "response" not in getattr(item, "fixturenames", ()):
                continue
            case = case_for(item)
            if case is None:
                continue
            bench, model, sample = case
            if self.is_resumed(bench, model, sample.id) is not None:
                continue
            try:
                endpoint = self.endpoint(model)
                request = self.plan.sample_request(bench, model, sample)
            except Exception:
                continue  # the item itself will raise the error when it runs
            if request is None:
                continue
            future = self.scheduler.submit(endpoint, request)
            self._prefetched.setdefault(request.cache_key(endpoint), collections.deque()).append(future)

    def close(self) -> None:
        """Stop the scheduler; pending prefetches are cancelled."""
        self.scheduler.close()
