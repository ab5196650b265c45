"""Per-process runtime state: the plan, the call scheduler, prefetching and resumed records."""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pytest

from pytest_jeval.calls.budget import BudgetSpec
from pytest_jeval.calls.cache import ResponseCache
from pytest_jeval.calls.engines import EndpointCheck
from pytest_jeval.core.chat import ChatRequest, Endpoint, Reply
from pytest_jeval.core.episode import Episode
from pytest_jeval.suite.plan import EvalPlan, PlannedBenchmark

if TYPE_CHECKING:
    from pytest_jeval.agents.episodes import EpisodeRunner
    from pytest_jeval.agents.setup import EpisodeSetup
    from pytest_jeval.session.sequence import SequenceBook
from pytest_jeval.calls.scheduler import Call, CallScheduler, Scheduler, SchedulerStats
from pytest_jeval.core.case import ItemCase
from pytest_jeval.core.sample import REFUSED, Sample
from pytest_jeval.session.keys import case_for, case_key, plan_key, runtime_key

#: ``call_executor = "auto"`` moves the HTTP client to a helper process when this pytest
#: process expects at least this many calls with up to this many in flight: below that,
#: the helper's start (about a second to import openai) costs more than the GIL it frees.
AUTO_PROCESS_MIN_CALLS = 200
AUTO_PROCESS_MIN_CONCURRENCY = 8

#: Reasons kept for the terminal when requests cannot be sent ahead (all are counted).
MAX_PREFETCH_ERRORS = 3


class Runtime:
    """Created in ``pytest_configure`` of every process that runs items."""

    def __init__(self, plan: EvalPlan, *, use_cache: bool, window: int = 1024) -> None:
        self.plan = plan
        self.use_cache = use_cache and plan.cache_dir is not None
        self.window = window
        self.expected_calls: int | None = None
        """Calls this process expects to make (set after collection); guides ``call_executor = "auto"``."""
        self._scheduler: Scheduler | None = None
        self.resumed: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        """(benchmark, model) -> record_id -> stored record, filled under --jeval-resume."""
        self._prefetched: dict[str, collections.deque[concurrent.futures.Future[Reply]]] = {}
        self._submitted: set[str] = set()
        self._endpoints: dict[tuple[str, bool], Endpoint] = {}
        self._episodes: dict[tuple[str, str, str], concurrent.futures.Future[Episode]] = {}
        self._episode_runner: EpisodeRunner | None = None
        self._setups: dict[tuple[str, str], EpisodeSetup] = {}
        self._sequences: SequenceBook | None = None
        self.prefetch_failed = 0
        """Items whose request could not be built ahead of time (each item then fails on its own)."""
        self.prefetch_errors: list[str] = []
        """The first few reasons, ``nodeid: Type: message``."""
        self.budget: BudgetSpec | None = None
        """The run budget this process's calls are checked against (``[run] max_cost_usd`` /
        ``max_total_tokens``; :mod:`pytest_jeval.session.budget`), None without one."""

    # -- the scheduler --------------------------------------------------------------
    @property
    def executor(self) -> str:
        """Where this process runs its HTTP client: ``"thread"`` or ``"process"``."""
        mode = self.plan.suite.run.call_executor
        if mode != "auto":
            return mode
        concurrency = max((self.plan.concurrency_of(e) for e in self.plan.models.values()), default=1)
        many = (self.expected_calls or 0) >= AUTO_PROCESS_MIN_CALLS
        wide = concurrency >= AUTO_PROCESS_MIN_CONCURRENCY
        return "process" if many and wide and os.name == "posix" else "thread"

    @property
    def scheduler(self) -> Scheduler:
        """The call scheduler, created on first use according to :attr:`executor`."""
        if self._scheduler is None:
            cache_dir = self.plan.cache_dir if self.use_cache else None
            if self.executor == "process":
                from pytest_jeval.calls.callproc import ProcessCallScheduler

                self._scheduler = ProcessCallScheduler(cache_dir, self.budget)
            else:
                self._scheduler = CallScheduler(ResponseCache(cache_dir) if cache_dir is not None else None,
                                                self.budget)
        return self._scheduler

    def expect(self, calls: int, *, exact: bool) -> None:
        """Record how many calls this process expects, and start a helper process early if it will need one.

        Called with an estimate at session start (samples x models, before collection),
        so that the helper imports ``openai`` while pytest collects, and with the exact
        count after collection. A helper started for an estimate that collection
        (``-k``, ``--deselect``) then shrinks is stopped again.
        """
        self.expected_calls = calls
        wanted = self.executor == "process"
        started = self._scheduler is not None
        if wanted and not started:
            self.scheduler.start()
        elif exact and started and not wanted and self.stats.submitted == 0:
            self.close()
            self._scheduler = None

    def start_early(self, config: pytest.Config) -> None:
        """At ``pytest_configure``: start the helper process now when this process will likely need one.

        The helper then imports ``openai`` on the other core while this process loads the
        data, and checks the endpoints at session start (:meth:`check_endpoints`), so this
        process never imports the client. The bound used here is the sum of the benchmarks'
        ``max_samples`` (unknown: taken as many) times the models; session start and
        collection refine it, and a helper that turns out not to be needed is stopped
        before any call (:meth:`expect`).
        """
        if self.plan.suite.run.call_executor == "thread" or (os.cpu_count() or 1) < 2:
            return
        if not is_worker(config) and config.getoption("dist", "no") != "no":
            return  # the controller of an xdist run makes no calls
        bound = sum(early_bound(planned) for planned in self.plan.benchmarks.values())
        self.expect(worker_share(config, bound * len(self.plan.models)), exact=False)

    def check_endpoints(self, endpoints: list[Endpoint]) -> list[EndpointCheck]:
        """Why each endpoint is unusable and the models it lists: checked by the helper process when one
        runs, else here (:func:`~pytest_jeval.calls.scheduler.preflight`)."""
        scheduler = self._scheduler
        check = getattr(scheduler, "check_endpoints", None)
        found = check(endpoints) if check is not None else None
        if found is not None:
            return list(found)
        from pytest_jeval.calls.scheduler import preflight

        return preflight(endpoints)

    @property
    def stats(self) -> SchedulerStats:
        """The scheduler's counters (all zero when no call was made)."""
        stats = self._scheduler.stats if self._scheduler is not None else SchedulerStats()
        if self.prefetch_failed:
            stats = dataclasses.replace(stats, prefetch_failed=self.prefetch_failed,
                                        prefetch_errors=tuple(self.prefetch_errors))
        return stats

    # -- endpoints -------------------------------------------------------------------
    def endpoint(self, model: str, *, judge: bool = False) -> Endpoint:
        """The endpoint for a model (or the judge), resolved once."""
        key = (model, judge)
        if key not in self._endpoints:
            entry = None if judge else self.plan.models[model]
            self._endpoints[key] = self.plan.endpoint_for(entry, judge=judge)
        return self._endpoints[key]

    def user_endpoint(self) -> Endpoint | None:
        """The ``[user]`` model's endpoint (simulated users of agent tasks), or None without a ``[user]``."""
        if self.plan.suite.user is None:
            return None
        key = ("\0user", True)
        if key not in self._endpoints:
            self._endpoints[key] = self.plan.endpoint_for(None, user=True)
        return self._endpoints[key]

    # -- agent episodes ----------------------------------------------------------------
    def start_episode(self, bench: str, model: str, sample: Sample) -> concurrent.futures.Future[Episode]:
        """The episode of one sample, started now unless it was started ahead."""
        key = (bench, model, sample.id)
        future = self._episodes.pop(key, None)
        if future is not None:
            return future
        from pytest_jeval.session.episodes import episode_runner, episode_setup

        if self._episode_runner is None:
            self._episode_runner = episode_runner(self.plan)
        setup = self._setups.get((bench, model))
        if setup is None:
            setup = self._setups[(bench, model)] = episode_setup(self.plan, bench, model)
        scheduler = self.scheduler  # made here, on the pytest thread, never on the episodes' loop
        user = self.user_endpoint() if self.plan.needs_user else None
        recall = self.sequences.recall(bench, model, sample) if setup.sequential else None
        return self._episode_runner.start(setup, sample, scheduler=scheduler, endpoint=self.endpoint(model),
                                          user=(scheduler, user) if user is not None else None, recall=recall)

    @property
    def sequences(self) -> SequenceBook:
        """Episode mode: the outcomes of this process's sequences (:mod:`pytest_jeval.session.sequence`)."""
        if self._sequences is None:
            from pytest_jeval.session.sequence import SequenceBook

            self._sequences = SequenceBook(self.plan)
        return self._sequences

    @property
    def episodes_started(self) -> int:
        """Agent episodes started in this process."""
        return self._episode_runner.started if self._episode_runner is not None else 0

    def case_to_call(self, item: pytest.Item) -> tuple[str, str, Sample] | None:
        """``(benchmark, model, sample)`` of an item that calls its model in this run: one with a
        ``response`` or ``episode`` fixture whose sample ``--jeval-resume`` does not skip; else None."""
        names = getattr(item, "fixturenames", ())
        if "response" not in names and "episode" not in names:
            return None
        case = case_for(item)
        if case is None or self.is_resumed(case[0], case[1], case[2].id) is not None or REFUSED in case[2].metadata:
            return None
        return case

    def is_resumed(self, bench: str, model: str, record_id: str) -> dict[str, Any] | None:
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
        calls: list[Call] = []
        for item in window[start:]:
            self._submitted.add(item.nodeid)
            case = self.case_to_call(item)
            if case is None:
                continue
            bench, model, sample = case
            if self.plan.benchmarks[bench].sequential:
                continue  # episode mode: an episode starts when its item runs, after the earlier ones
            if self.plan.benchmarks[bench].is_agent:
                key = (bench, model, sample.id)
                if key not in self._episodes:
                    try:
                        self._episodes[key] = self.start_episode(bench, model, sample)
                    except Exception as exc:  # the item starts it again and fails on its own
                        self._not_sent_ahead(item, exc)
                continue
            if "response" not in getattr(item, "fixturenames", ()):
                continue
            try:
                endpoint = self.endpoint(model)
                request = self.plan.sample_request(bench, model, sample)
            except Exception as exc:  # counted and reported; the item itself raises it when it runs
                self._not_sent_ahead(item, exc)
                continue
            if request is None:
                continue
            calls.append((endpoint, request))
        if not calls:
            return
        for (endpoint, request), future in zip(calls, self.scheduler.submit_many(calls)):
            self._prefetched.setdefault(request.cache_key(endpoint), collections.deque()).append(future)

    def _not_sent_ahead(self, item: pytest.Item, exc: Exception) -> None:
        """Count an item whose call (or episode) could not be started ahead, keeping the first reasons."""
        self.prefetch_failed += 1
        if len(self.prefetch_errors) < MAX_PREFETCH_ERRORS:
            self.prefetch_errors.append(f"{item.nodeid}: {type(exc).__name__}: {exc}"[:500])

    def estimated_calls(self) -> int:
        """Samples x models still to run, before collection (which may deselect some)."""
        total = sum(len(self.plan.samples(name)[0]) for name in self.plan.benchmarks) * len(self.plan.models)
        return max(0, total - sum(len(done) for done in self.resumed.values()))

    def count_calls(self, items: Iterable[pytest.Item]) -> int:
        """How many of ``items`` will send their sample's prompt (not resumed, not from a plain test)."""
        count = 0
        for item in items:
            names = getattr(item, "fixturenames", ())
            if "response" not in names and "episode" not in names:
                continue
            if not self.resumed:  # the common case, kept cheap for 100,000 items
                callspec = getattr(item, "callspec", None)
                count += callspec is not None and "sample" in callspec.params
                continue
            case = case_for(item)
            if case is not None and self.is_resumed(case[0], case[1], case[2].id) is None:
                count += 1
        return count

    def close(self) -> None:
        """Stop the episodes and the scheduler; pending prefetches are cancelled."""
        if self._episode_runner is not None:
            self._episode_runner.close()
        if self._scheduler is not None:
            self._scheduler.close()


def early_bound(planned: PlannedBenchmark, cap: int = AUTO_PROCESS_MIN_CALLS) -> int:
    """A cheap bound, at ``pytest_configure``, on the calls one model makes for ``planned``, capped at ``cap``
    (enough for a helper): ``max_samples``, else the lines of its local JSON-lines or CSV files
    (counted up to ``cap``), else the benchmark's own sample count; ``cap`` when none is known, and
    for agent benchmarks (several calls per sample)."""
    if planned.is_agent:
        return cap
    known = [n for n in (planned.entry.max_samples, _lines_upto(planned.files, cap) if planned.files else
                         planned.benchmark.sample_count) if n is not None]
    return min([cap, *known])


def _lines_upto(files: Iterable[Any], cap: int) -> int | None:
    """Lines in the text data files (``.jsonl``, ``.csv``, ``.tsv``), counted until ``cap``; None for others."""
    total = 0
    for path in files:
        if not str(path).lower().endswith((".jsonl", ".csv", ".tsv")):
            return None
        try:
            with open(path, "rb") as fh:
                while total < cap and (chunk := fh.read(1 << 16)):
                    total += chunk.count(b"\n")
        except OSError:
            return None
        if total >= cap:
            return cap
    return total


def is_worker(config: pytest.Config) -> bool:
    """True on a pytest-xdist worker (xdist sets ``config.workerinput`` there)."""
    return hasattr(config, "workerinput")


def is_dry(config: pytest.Config) -> bool:
    """``--collect-only`` and ``--setup-plan`` send nothing and write nothing."""
    return bool(config.option.collectonly or config.getoption("setupplan", False))


def worker_share(config: pytest.Config, calls: int) -> int:
    """This process's share of ``calls``: xdist spreads the items over its workers."""
    if not is_worker(config):
        return calls
    return calls // max(1, int(config.workerinput.get("workercount", 1)))  # type: ignore[attr-defined]


class RuntimeHooks:
    """The runtime's hooks, on every process of a suite run: check the data, check the
    endpoints, count the calls, and attach each item's case.

    Its ``pytest_sessionstart`` runs after the results writer's and the local model's
    (the writer reads the resumed records, the local model gives the URL to check):
    it is ``trylast``.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    @pytest.hookimpl(tryfirst=True, specname="pytest_sessionstart")
    def pytest_sessionstart_check_data(self, session: pytest.Session) -> None:
        """The controller loads every benchmark's data first: a data problem is a usage error before anything starts."""
        if is_worker(session.config):
            return
        from pytest_jeval.suite.dataset import DatasetLoadError

        for name in self.runtime.plan.benchmarks:
            try:
                self.runtime.plan.samples(name)
            except DatasetLoadError as exc:
                raise pytest.UsageError(str(exc)) from None

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Check every endpoint before any worker starts; estimate the calls. Last of the session-start hooks:
        after the writer read the resumed records (or a worker its own) and the local model's server is up."""
        config = session.config
        runtime = self.runtime
        if is_worker(config):
            if not config.option.collectonly:
                runtime.expect(worker_share(config, runtime.estimated_calls()), exact=False)
            return
        if is_dry(config):
            return
        budget = config.pluginmanager.get_plugin("jeval-budget")
        if budget is not None:  # before any call: what the kept records cost counts against the budget
            budget.write_baseline(runtime.resumed)
        plan = runtime.plan
        from pytest_jeval.session.endpoint_check import check_problems, endpoint_targets

        targets = endpoint_targets(runtime)
        checks = runtime.check_endpoints(list(targets))
        problems, notes = check_problems(targets, checks)
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        for note in notes:
            if terminal is not None:
                terminal.write_line(f"jeval: {note}", yellow=True)
        if problems:
            # UsageError, not pytest.exit(): pytest prints an Exit raised here twice (as
            # "! _pytest.outcomes.Exit: ..." on stdout and "Exit: ..." on stderr); this way
            # the reason is printed once, as "ERROR: jeval: ...", with exit status 4.
            raise pytest.UsageError("jeval: endpoint unusable, no samples were sent:\n  " + "\n  ".join(problems))
        if plan.judge_validation is not None:  # [judge] validate: the judge proves itself before any sample
            from pytest_jeval.session.judge_gate import run_gate

            run_gate(config, runtime)
        if config.getoption("dist", "no") == "no":  # under xdist the controller makes no calls
            runtime.expect(runtime.estimated_calls(), exact=False)

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Count the calls this process will make; ``call_executor = "auto"`` decides from it."""
        if is_dry(session.config):
            return
        self.runtime.expect(worker_share(session.config, self.runtime.count_calls(session.items)), exact=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Attach the item's case (benchmark, model, sample) and any resumed record."""
        found = case_for(item)
        if found is None:
            return
        bench, model_name, sample_ = found
        case = ItemCase(benchmark=bench, model=model_name, sample=sample_)
        case.resumed = self.runtime.is_resumed(bench, model_name, sample_.id)
        item.stash[case_key] = case


def install(config: pytest.Config) -> None:
    """The per-process runtime (every process): stashed, its hooks registered, the call helper started early."""
    from pytest_jeval.session.budget import budget_spec

    runtime = Runtime(config.stash[plan_key], use_cache=not config.getoption("jeval_no_cache"))
    runtime.budget = None if is_dry(config) else budget_spec(config, runtime.plan)
    config.stash[runtime_key] = runtime
    config.pluginmanager.register(RuntimeHooks(runtime), "jeval-runtime")
    if not is_dry(config):
        runtime.start_early(config)
