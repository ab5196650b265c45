"""``simple``: one call, no tools; the reply is the answer.

The opening messages go to the model once, with no ``tools`` in the request; the episode ends with that
reply (``stop_reason = "final"``), whatever it says. Nothing runs and no simulated user is consulted. It is
the baseline for an agent benchmark: what the model answers without acting.
"""

from __future__ import annotations

import dataclasses

from pytest_jeval.agents.named import EpisodeParts, register_agent
from pytest_jeval.agents.spec import AgentSpec
from pytest_jeval.core.chat import EndpointError
from pytest_jeval.core.episode import Episode


class Simple:
    """One model call without tools (see the module docstring)."""

    description = "one model call with no tools: the reply is the answer (a baseline that does not act)"
    calls_model = True

    def refuses(self, spec: AgentSpec) -> str | None:
        """A benchmark whose answer is the native tool calls themselves (``execute = False``) cannot run it."""
        if not spec.execute:
            return "its answer is the model's native tool calls, and this agent offers no tools"
        return None

    async def run(self, parts: EpisodeParts) -> Episode:
        """The opening messages, one reply; an endpoint failure ends the episode as an error."""
        if parts.call_text is None:
            raise RuntimeError("the simple agent needs a text-mode model call (EpisodeParts.call_text)")
        messages = [dict(m) for m in parts.messages]
        try:
            reply = await parts.call_text(messages)
        except EndpointError as exc:
            return Episode(messages=messages, stop_reason="error", error=str(exc), state=parts.ctx.state)
        reply = dataclasses.replace(reply, tool_calls=(), message=None)
        return Episode(messages=[*messages, reply.assistant_message()], replies=[reply], stop_reason="final",
                       turns=1, state=parts.ctx.state)


AGENT = register_agent("simple", Simple())
