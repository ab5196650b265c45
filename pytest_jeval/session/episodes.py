"""The session's side of agent episodes: the plan turned into each pair's :class:`EpisodeSetup` and the runner.

The agents layer runs episodes from an :class:`~pytest_jeval.agents.setup.EpisodeSetup` and never
sees the plan; this module is where the suite's keys (``max_turns``, ``tools``, ``[run]``'s limits,
the ``[user]`` model, the external backend) become that setup.
"""

from __future__ import annotations

import os

from pytest_jeval.agents.episodes import EpisodeRunner
from pytest_jeval.agents.loop import Limits
from pytest_jeval.agents.setup import EpisodeSetup
from pytest_jeval.agents.tool import Tool
from pytest_jeval.suite.plan import EvalPlan

#: The built-in cap on model turns when neither the suite nor the benchmark sets one.
DEFAULT_MAX_TURNS = 10


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


def episode_setup(plan: EvalPlan, bench: str, model: str) -> EpisodeSetup:
    """What the episodes of ``bench`` with ``model`` (entry keys) need, taken from the plan."""
    planned = plan.benchmarks[bench]
    spec = planned.agent_spec
    builtin: tuple[Tool, ...] = ()
    if not spec.tools:
        from pytest_jeval.agents.tools import builtin_tools

        builtin = tuple(builtin_tools(planned.entry.tools or list(spec.default_tools)))
    external = None
    if planned.is_external:
        from pytest_jeval.agents.external.base import BackendOptions, get_agent

        options = BackendOptions(benchmark=bench, command=tuple(planned.entry.command or ()))
        external = get_agent(planned.backend, options)
    return EpisodeSetup(
        benchmark=bench,
        model=plan.models[model].name,  # ``model`` is the entry's key (its label, else this name)
        spec=spec,
        prompt=planned.benchmark.prompt,
        settings=plan.settings(bench, model),
        limits=episode_limits(plan, bench),
        builtin_tools=builtin,
        request_options=dict(planned.benchmark.request_options),
        tool_timeout=plan.suite.run.tool_timeout,
        user_settings=plan.user_settings() if plan.needs_user else None,
        external=external,
        backend=planned.backend,
        agent=planned.agent,
        sequential=planned.sequential,
        memory_policy=plan.suite.run.episode_memory if planned.sequential else "none",
        memory_size=plan.suite.run.episode_memory_size if planned.sequential else 0,
    )


def episode_runner(plan: EvalPlan) -> EpisodeRunner:
    """The process's episode runner, sized by ``[run]`` (tool threads, episodes in flight)."""
    run = plan.suite.run
    return EpisodeRunner(tool_workers=max(8, run.max_exec_workers or (os.cpu_count() or 2) * 2),
                         episodes_in_flight=run.episodes_in_flight)
