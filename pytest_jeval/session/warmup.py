"""Warm-up: ``[run] warmup_samples = N`` untimed calls to each model before any measured one.

Each pytest process that runs items (the only one, or each xdist worker) warms up the
models it is about to call, once collection has chosen its items and before the first
item runs (so before any prefetch). For each model, the warm-up prompts are the first N
samples, in the plan's order, of the first benchmark in suite order that the process
runs on that model (continuing with the next benchmark when it has fewer), each built
with that benchmark's request settings, exactly as the measured call would be.

The calls go one at a time, in order, on a client of their own: they never touch the
response cache (neither read nor written), the call scheduler's counters, the records
or the summaries. A warm-up call that fails is reported and the run goes on (the
endpoint check at session start already proved the endpoint answers; measured calls
that fail the same way become error records of their own).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from pytest_jeval.core.chat import ChatRequest, Endpoint, EndpointError
from pytest_jeval.session.keys import plan_key, runtime_key
from pytest_jeval.suite.plan import EvalPlan

#: The ``config.workeroutput`` entry that carries a worker's warm-up lines to the controller.
WORKER_OUTPUT_KEY = "jeval_warmup"


@dataclasses.dataclass(frozen=True)
class WarmupResult:
    """What one model's warm-up did."""

    model: str
    calls: int
    seconds: float
    errors: tuple[str, ...] = ()
    """One ``Type: message`` per failed call (the key never appears: errors are redacted)."""

    def line(self) -> str:
        """The terminal line: ``warm-up: N calls to <model> in X s`` (and the failures)."""
        text = f"warm-up: {self.calls} call{'s' if self.calls != 1 else ''} to {self.model} in {self.seconds:.2f} s"
        if self.errors:
            text += f" ({len(self.errors)} failed, run goes on: {self.errors[0]})"
        return text


def first_benchmarks(items: Sequence[pytest.Item]) -> dict[str, list[str]]:
    """Model -> the benchmarks its calling items run in this process, in the order first met.

    Only items that will call the model count: those of a benchmark (a ``response`` or
    ``episode`` fixture) whose sample ``--jeval-resume`` does not skip.
    """
    out: dict[str, list[str]] = {}
    if not items:
        return out
    runtime = items[0].config.stash[runtime_key]
    for item in items:
        case = runtime.case_to_call(item)
        if case is None:
            continue
        bench, model, _ = case
        benches = out.setdefault(model, [])
        if bench not in benches:
            benches.append(bench)
    return out


def warmup_requests(plan: EvalPlan, model: str, benchmarks: Sequence[str], count: int) -> list[ChatRequest]:
    """The first ``count`` sample requests of ``benchmarks`` (in order) to ``model``.

    Samples without a prompt (nothing to send) are skipped."""
    requests: list[ChatRequest] = []
    for bench in benchmarks:
        for sample in plan.samples(bench)[0]:
            if len(requests) >= count:
                return requests
            request = plan.sample_request(bench, model, sample)
            if request is not None:
                requests.append(request)
    return requests


def send(endpoint: Endpoint, requests: Sequence[ChatRequest]) -> tuple[float, tuple[str, ...]]:
    """Send ``requests`` one after another on a short-lived client; (seconds taken, errors)."""
    from pytest_jeval.calls.engines import get_engine

    errors: list[str] = []
    engine = get_engine(endpoint.engine)

    async def go() -> None:
        client = engine.make_client(endpoint)
        try:
            for request in requests:
                try:
                    await engine.chat(client, endpoint, request)
                except EndpointError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}"[:300])
        finally:
            await engine.close(client)

    started = time.monotonic()
    asyncio.run(go())
    return time.monotonic() - started, tuple(errors)


def warm_up(plan: EvalPlan, endpoints: Callable[[str], Endpoint], items: Sequence[pytest.Item]
            ) -> list[WarmupResult]:
    """Warm up every model the items call, in suite order; ``endpoints(model)`` gives each model's endpoint."""
    count = plan.suite.run.warmup_samples
    if count <= 0:
        return []
    found = first_benchmarks(items)
    results: list[WarmupResult] = []
    for model in plan.models:
        if model not in found:
            continue
        ordered = [b for b in plan.benchmarks if b in found[model]]
        requests = warmup_requests(plan, model, ordered, count)
        if not requests:
            continue
        seconds, errors = send(endpoints(model), requests)
        results.append(WarmupResult(model, len(requests), seconds, errors))
    return results


class WarmupPlugin:
    """Registered on every process of a suite run with ``warmup_samples`` set (not in dry runs).

    ``pytest_collection_finish`` (a process that runs items) warms up; the terminal
    line is written at once, or, on an xdist worker, shipped to the controller, which
    prints each worker's lines in its terminal summary.
    """

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        """Lines from the xdist workers (controller)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Warm up the models this process calls, before its first item runs."""
        config = session.config
        runtime = config.stash[runtime_key]
        results = warm_up(runtime.plan, runtime.endpoint, session.items)
        workeroutput = getattr(config, "workeroutput", None)
        if workeroutput is not None:
            worker = str(config.workerinput.get("workerid", "worker"))  # type: ignore[attr-defined]
            workeroutput[WORKER_OUTPUT_KEY] = [
                {"worker": worker, "line": r.line(), "failed": bool(r.errors)} for r in results
            ]
            return
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        for result in results:
            if reporter is not None:
                reporter.write_line(result.line(), yellow=bool(result.errors))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist (controller): keep each worker's warm-up lines."""
        self.lines.extend(getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY, []))

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """xdist (controller): each worker's warm-up lines."""
        for entry in sorted(self.lines, key=lambda e: str(e.get("worker"))):
            terminalreporter.write_line(f"{entry['line']} [{entry['worker']}]", yellow=bool(entry.get("failed")))


def install(config: pytest.Config) -> None:
    """Untimed warm-up calls when ``[run] warmup_samples`` is set (not in dry runs)."""
    dry = config.option.collectonly or config.getoption("setupplan", False)
    if config.stash[plan_key].suite.run.warmup_samples and not dry:
        config.pluginmanager.register(WarmupPlugin(), "jeval-warmup")
