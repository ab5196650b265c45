"""Episodes on a background event loop of the pytest process, started ahead of their items.

The runtime starts an item's episode when the item comes into its prefetch
window, as it sends a direct benchmark's request ahead. Episodes run on one
event loop in a thread of this process (their tools and environment state live
here); each model turn goes through the call scheduler (thread or helper process)
like any other call, so it takes an endpoint slot only while its request is in
flight. ``[run] max_episodes_in_flight`` bounds the open episodes (each holds a
workspace).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_jeval.agent.episode import Episode
from pytest_jeval.agent.loop import Limits, run_episode
from pytest_jeval.agent.spec import AsyncChat
from pytest_jeval.agent.tools import Tool, ToolContext
from pytest_jeval.engines.base import Messages, Reply, as_messages
from pytest_jeval.runner.loopthread import LoopThread
from pytest_jeval.sample import Sample

if TYPE_CHECKING:
    from pytest_jeval.engines.openai_compat import Endpoint
    from pytest_jeval.plan import EvalPlan
    from pytest_jeval.runner.scheduler import Scheduler

#: The built-in cap on model turns when neither the suite nor the benchmark sets one.
DEFAULT_MAX_TURNS = 10


def episode_tools(plan: EvalPlan, bench: str, sample: Sample) -> list[Tool]:
    """The tools of one episode: the benchmark's own, else the built-ins the suite (or the benchmark) names."""
    planned = plan.benchmarks[bench]
    spec = planned.agent_spec
    if spec.tools:
        own = spec.tools(sample) if callable(spec.tools) else spec.tools
        return list(own)
    from pytest_jeval.agent.builtin import builtin_tools

    return builtin_tools(planned.entry.tools or list(spec.default_tools))


def episode_limits(plan: EvalPlan, bench: str) -> Limits:
    """The limits of this benchmark's episodes: benchmark > ``[run]`` > built-in, capped by the benchmark's own."""
    run = plan.suite.run
    planned = plan.benchmarks[bench]
    spec = planned.agent_spec
    turns = planned.entry.max_turns or run.max_turns or spec.max_turns or DEFAULT_MAX_TURNS
    if spec.max_turns is not None:
        turns = min(turns, spec.max_turns)
    return Limits(max_turns=turns, max_tool_calls=run.max_tool_calls, max_tokens=run.max_episode_tokens,
                  time_limit=run.episode_timeout, tool_timeout=run.tool_timeout, max_tool_output=run.max_tool_output)


def first_messages(plan: EvalPlan, bench: str, model: str, sample: Sample) -> Messages:
    """The episode's opening messages: the benchmark's agent prompt (or its prompt), with the suite's system prompt."""
    planned = plan.benchmarks[bench]
    spec = planned.agent_spec
    prompt = spec.prompt(sample) if spec.prompt is not None else planned.benchmark.prompt(sample)
    if prompt is None:
        raise ValueError(f"{bench} has no prompt for sample {sample.id!r}")
    return as_messages(prompt, plan.settings(bench, model).system_prompt)


class EpisodeRunner:
    """Runs episodes on an event loop in a background thread of this process."""

    def __init__(self, plan: EvalPlan) -> None:
        self.plan = plan
        self._thread = LoopThread("jeval-episodes", self._setup)
        self._slots: asyncio.Semaphore | None = None
        self.started = 0
        """Episodes started in this process."""

    def _setup(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the episodes' thread: the tools' worker threads and the bound on open episodes."""
        workers = max(8, self.plan.suite.run.max_exec_workers or (os.cpu_count() or 2) * 2)
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(workers, "jeval-tools"))
        self._slots = asyncio.Semaphore(self.plan.suite.run.episodes_in_flight)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        return self._thread.loop()

    def start(self, bench: str, model: str, sample: Sample, *, scheduler: Scheduler, endpoint: Endpoint,
              user: tuple[Scheduler, Endpoint] | None = None) -> concurrent.futures.Future[Episode]:
        """Start one episode now; the future gives the finished :class:`Episode`."""
        loop = self._ensure_loop()
        self.started += 1
        coro = self._bounded(bench, model, sample, scheduler, endpoint, user)
        return asyncio.run_coroutine_threadsafe(coro, loop)

    async def _bounded(self, bench: str, model: str, sample: Sample, scheduler: Scheduler, endpoint: Endpoint,
                       user: tuple[Scheduler, Endpoint] | None) -> Episode:
        assert self._slots is not None
        async with self._slots:
            return await self.episode(bench, model, sample, scheduler, endpoint, user)

    async def episode(self, bench: str, model: str, sample: Sample, scheduler: Scheduler, endpoint: Endpoint,
                      user: tuple[Scheduler, Endpoint] | None) -> Episode:
        """Set up the workspace and environment, run the loop, and clean up."""
        from pytest_jeval.agent.workspace import make_workspace, remove_workspace

        plan = self.plan
        planned = plan.benchmarks[bench]
        if planned.is_external:
            from pytest_jeval.external.runner import run_external_episode

            return await run_external_episode(plan, bench, model, sample, scheduler, endpoint)
        spec = planned.agent_spec
        tools = episode_tools(plan, bench, sample)
        specs = [t.spec() for t in tools] or None
        files: Sequence[Any] = spec.attachments(sample) if spec.attachments is not None else ()
        messages = first_messages(plan, bench, model, sample)
        nonce = int(sample.metadata.get("repeat", 1)) - 1
        options = dict(planned.benchmark.request_options)

        async def call_model(conversation: Messages) -> Reply:
            request = plan.request(bench, model, conversation, tools=specs, tool_choice=spec.tool_choice,
                                   parallel_tool_calls=spec.parallel_tool_calls, nonce=nonce, **options)
            reply = await asyncio.wrap_future(scheduler.submit(endpoint, request))
            return dataclasses.replace(reply, sent=tuple(request.sent().items()))

        # a workspace only for an episode that can use one (attachments, an environment, a tool taking the context)
        needed = bool(files) or spec.environment is not None or any(t.context_param for t in tools)
        workspace = await asyncio.to_thread(make_workspace, list(files)) if needed else None
        try:
            home = workspace if workspace is not None else Path(os.devnull)  # no tool can reach it then
            state = (await asyncio.to_thread(spec.environment, sample, home)
                     if spec.environment is not None else None)
            ctx = ToolContext(sample=sample, workspace=home, state=state, timeout=plan.suite.run.tool_timeout)
            simulator = spec.user(sample, self._user_chat(user, nonce)) if spec.user is not None else None
            return await run_episode(messages, tools=tools, call_model=call_model, ctx=ctx,
                                     limits=episode_limits(plan, bench), execute=spec.execute, user=simulator)
        finally:
            if workspace is not None:
                await asyncio.to_thread(remove_workspace, workspace)

    def _user_chat(self, user: tuple[Scheduler, Endpoint] | None, nonce: int) -> AsyncChat | None:
        """The ``[user]`` model as an :data:`AsyncChat`, or None when the suite has no ``[user]``."""
        settings = self.plan.user_settings()
        if user is None or settings is None:
            return None
        scheduler, endpoint = user

        async def chat(messages: Messages) -> Reply:
            from pytest_jeval.engines.settings import build_request

            request = build_request(settings, messages, nonce=nonce)
            return await asyncio.wrap_future(scheduler.submit(endpoint, request))

        return chat

    def close(self) -> None:
        """Cancel the open episodes (their workspaces are removed) and stop the loop."""
        self._thread.stop(timeout=30)
