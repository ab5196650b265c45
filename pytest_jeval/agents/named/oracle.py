"""``oracle``: replays the sample's gold solution through the benchmark's own tools; it must score 1.

The benchmark gives its gold solution as steps (``AgentSpec.oracle``: :class:`~pytest_jeval.agents.spec.ToolStep`
and :class:`~pytest_jeval.agents.spec.SayStep`). The oracle plays the model's part in the ordinary episode loop,
one scripted reply per step, so its tool calls run, are limited and are recorded exactly as a model's are; no
request reaches any endpoint. The simulated user, if any, is not consulted (the script is the whole episode).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from pytest_jeval.agents.loop import run_episode
from pytest_jeval.agents.named import EpisodeParts, register_agent
from pytest_jeval.agents.spec import AgentSpec, OracleStep, ToolStep
from pytest_jeval.core.chat import Messages, Reply, ToolCall
from pytest_jeval.core.episode import Episode


def scripted_replies(steps: Sequence[OracleStep], model: str) -> list[Reply]:
    """One reply per step: a tool call for a :class:`~pytest_jeval.agents.spec.ToolStep`, a text answer for a
    :class:`~pytest_jeval.agents.spec.SayStep`; a script that does not end with an answer gets an empty one."""
    replies: list[Reply] = []
    for i, step in enumerate(steps):
        if isinstance(step, ToolStep):
            call = ToolCall(id=f"oracle-{i + 1}", name=step.name, arguments=json.dumps(step.arguments))
            replies.append(Reply(text="", model=model, tool_calls=(call,), attempts=0))
        else:
            replies.append(Reply(text=step.text, model=model, attempts=0))
    if not replies or replies[-1].tool_calls:
        replies.append(Reply(text="", model=model, attempts=0))
    return replies


def _takes_state(fn: Callable[..., Any]) -> bool:
    """Whether a gold solution takes the environment state too (two positional parameters)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


class Oracle:
    """The gold solution, step by step, through the loop (see the module docstring)."""

    description = "replays the sample's gold solution through the benchmark's tools (validates an environment)"
    calls_model = False

    def refuses(self, spec: AgentSpec) -> str | None:
        """A benchmark without a gold solution (``AgentSpec.oracle``) cannot run the oracle."""
        return None if spec.oracle is not None else "it has no gold solution to replay"

    async def run(self, parts: EpisodeParts) -> Episode:
        """The scripted replies, played through :func:`~pytest_jeval.agents.loop.run_episode`."""
        oracle = parts.setup.spec.oracle
        assert oracle is not None  # refused at plan time otherwise
        steps = oracle(parts.sample, parts.ctx.state) if _takes_state(oracle) else oracle(parts.sample)  # type: ignore[call-arg]
        queue = scripted_replies(list(steps), parts.setup.model)
        last = queue[-1]

        async def call_model(conversation: Messages) -> Reply:
            return queue.pop(0) if queue else last

        # the oracle validates the environment, not the limits: its script always fits
        limits = dataclasses.replace(parts.limits, max_turns=max(parts.limits.max_turns, len(queue)),
                                     max_tool_calls=max(parts.limits.max_tool_calls, len(queue)))
        return await run_episode(parts.messages, tools=parts.tools, call_model=call_model, ctx=parts.ctx,
                                 limits=limits, execute=True, user=None)


AGENT = register_agent("oracle", Oracle())
