"""``orchestrator``: the native function-calling loop (the reference's default agent name)."""

from __future__ import annotations

from pytest_jeval.agents.loop import run_episode
from pytest_jeval.agents.named import EpisodeParts, register_agent
from pytest_jeval.agents.spec import AgentSpec
from pytest_jeval.core.episode import Episode


class Orchestrator:
    """Call the model with the tools, run every call it makes, repeat until it answers (the episode loop)."""

    description = "the native function-calling loop: the model calls the benchmark's tools until it answers"
    calls_model = True

    def refuses(self, spec: AgentSpec) -> str | None:
        """Runs every agent benchmark."""
        return None

    async def run(self, parts: EpisodeParts) -> Episode:
        """The loop of :func:`~pytest_jeval.agents.loop.run_episode`."""
        spec = parts.setup.spec
        return await run_episode(parts.messages, tools=parts.tools, call_model=parts.call_model, ctx=parts.ctx,
                                 limits=parts.limits, execute=spec.execute, user=parts.user)


AGENT = register_agent("orchestrator", Orchestrator())
