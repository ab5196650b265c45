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

from pytest_jeval.agents.named import AGENTS, EpisodeParts
from pytest_jeval.agents.setup import EpisodeSetup, nonce_of
from pytest_jeval.agents.spec import AsyncChat
from pytest_jeval.agents.tool import NotRunnable, ToolContext
from pytest_jeval.calls.loopthread import LoopThread
from pytest_jeval.core.chat import Messages, Reply
from pytest_jeval.core.episode import Episode
from pytest_jeval.core.sample import Sample

if TYPE_CHECKING:
    from pytest_jeval.agents.memory import Recall
    from pytest_jeval.calls.scheduler import Scheduler
    from pytest_jeval.core.chat import Endpoint

class EpisodeRunner:
    """Runs episodes on an event loop in a background thread of this process."""

    def __init__(self, *, tool_workers: int, episodes_in_flight: int) -> None:
        self.tool_workers = tool_workers
        """Threads running tool calls (the loop's default executor)."""
        self.episodes_in_flight = episodes_in_flight
        """Episodes open at once (each holds a workspace)."""
        self._thread = LoopThread("jeval-episodes", self._setup)
        self._slots: asyncio.Semaphore | None = None
        self.started = 0
        """Episodes started in this process."""

    def _setup(self, loop: asyncio.AbstractEventLoop) -> None:
        """On the episodes' thread: the tools' worker threads and the bound on open episodes."""
        loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(self.tool_workers, "jeval-tools"))
        self._slots = asyncio.Semaphore(self.episodes_in_flight)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        return self._thread.loop()

    def start(self, setup: EpisodeSetup, sample: Sample, *, scheduler: Scheduler, endpoint: Endpoint,
              user: tuple[Scheduler, Endpoint] | None = None,
              recall: Recall | None = None) -> concurrent.futures.Future[Episode]:
        """Start one episode now; the future gives the finished :class:`Episode`. In episode mode ``recall``
        is what it remembers of earlier episodes of its sequence (recorded as ``episode.memory``)."""
        loop = self._ensure_loop()
        self.started += 1
        coro = self._bounded(setup, sample, scheduler, endpoint, user, recall)
        return asyncio.run_coroutine_threadsafe(coro, loop)

    async def _bounded(self, setup: EpisodeSetup, sample: Sample, scheduler: Scheduler, endpoint: Endpoint,
                       user: tuple[Scheduler, Endpoint] | None, recall: Recall | None = None) -> Episode:
        assert self._slots is not None
        async with self._slots:
            ran = await self.episode(setup, sample, scheduler, endpoint, user, recall)
        return dataclasses.replace(ran, memory=recall.info()) if recall is not None else ran

    async def episode(self, setup: EpisodeSetup, sample: Sample, scheduler: Scheduler, endpoint: Endpoint,
                      user: tuple[Scheduler, Endpoint] | None, recall: Recall | None = None) -> Episode:
        """Set up the workspace and environment, run the loop, and clean up."""
        from pytest_jeval.agents.workspace import make_workspace, remove_workspace

        if setup.declines(sample):  # as a direct benchmark sends no request when its prompt is None
            return Episode(stop_reason="final", agent=setup.agent)
        if setup.external is not None:
            from pytest_jeval.agents.external.episode import run_external_episode

            return await run_external_episode(setup, sample, scheduler, endpoint)
        spec = setup.spec
        tools = setup.tools(sample)
        specs = [t.spec() for t in tools] or None
        files: Sequence[Any] = spec.attachments(sample) if spec.attachments is not None else ()
        messages = setup.first_messages(sample, recall)
        nonce = nonce_of(sample)
        options = dict(setup.request_options)

        async def call_model(conversation: Messages) -> Reply:
            request = setup.request(conversation, tools=specs, tool_choice=spec.tool_choice,
                                    parallel_tool_calls=spec.parallel_tool_calls, nonce=nonce, **options)
            reply = await asyncio.wrap_future(scheduler.submit(endpoint, request))
            return dataclasses.replace(reply, sent=tuple(request.sent().items()))

        async def call_text(conversation: Messages) -> Reply:
            request = setup.request(conversation, nonce=nonce, **options)
            reply = await asyncio.wrap_future(scheduler.submit(endpoint, request))
            return dataclasses.replace(reply, sent=tuple(request.sent().items()))

        # a workspace only for an episode that can use one (attachments, an environment, a tool taking the context)
        needed = bool(files) or spec.environment is not None or any(t.context_param for t in tools)
        workspace = await asyncio.to_thread(make_workspace, list(files)) if needed else None
        try:
            home = workspace if workspace is not None else Path(os.devnull)  # no tool can reach it then
            try:
                state = (await asyncio.to_thread(spec.environment, sample, home)
                         if spec.environment is not None else None)
            except NotRunnable as exc:  # nothing to run on this machine: no model call
                return Episode(messages=list(messages), stop_reason="not_run", error=str(exc), agent=setup.agent)
            ctx = ToolContext(sample=sample, workspace=home, state=state, timeout=setup.tool_timeout)
            simulator = spec.user(sample, self._user_chat(setup, user, nonce)) if spec.user is not None else None
            agent = AGENTS.get(setup.agent)
            parts = EpisodeParts(setup=setup, sample=sample, messages=messages, tools=tools, call_model=call_model,
                                 ctx=ctx, limits=setup.limits, user=simulator, call_text=call_text)
            try:
                ran = await agent.run(parts)
                if spec.finish is not None:  # what the agent left in its workspace (a checkout's diff)
                    ran = dataclasses.replace(ran, state=await asyncio.to_thread(spec.finish, state, home))
            except BaseException:
                if state is not None and spec.cleanup is not None:
                    await asyncio.to_thread(spec.cleanup, state)
                raise
            # the state goes to the test even from an agent that never touched it (nop)
            return dataclasses.replace(ran, agent=setup.agent, state=ran.state if ran.state is not None else state)
        finally:
            if workspace is not None:
                await asyncio.to_thread(remove_workspace, workspace)

    def _user_chat(self, setup: EpisodeSetup, user: tuple[Scheduler, Endpoint] | None, nonce: int) -> AsyncChat | None:
        """The ``[user]`` model as an :data:`AsyncChat`, or None when the suite has no ``[user]``."""
        settings = setup.user_settings
        if user is None or settings is None:
            return None
        scheduler, endpoint = user

        async def chat(messages: Messages) -> Reply:
            from pytest_jeval.calls.settings import build_request

            request = build_request(settings, messages, nonce=nonce)
            return await asyncio.wrap_future(scheduler.submit(endpoint, request))

        return chat

    def close(self) -> None:
        """Cancel the open episodes (their workspaces are removed) and stop the loop."""
        self._thread.stop(timeout=30)
