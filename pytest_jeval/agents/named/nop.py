"""``nop``: does nothing and ends, with an empty answer; a do-nothing agent must not pass what needs action."""

from __future__ import annotations

from pytest_jeval.agents.named import EpisodeParts, register_agent
from pytest_jeval.agents.spec import AgentSpec
from pytest_jeval.core.chat import Reply
from pytest_jeval.core.episode import Episode


class Nop:
    """Ends at once: no tool call, no model call, an empty final answer."""

    description = "does nothing and ends with an empty answer (validates a scorer: it must not pass what needs action)"
    calls_model = False

    def refuses(self, spec: AgentSpec) -> str | None:
        """Runs every agent benchmark."""
        return None

    async def run(self, parts: EpisodeParts) -> Episode:
        """The opening messages and one empty answer, ended as ``final``."""
        answer = Reply(text="", model=parts.setup.model, attempts=0)
        return Episode(messages=[*parts.messages, answer.assistant_message()], replies=[answer],
                       stop_reason="final", turns=0)


AGENT = register_agent("nop", Nop())
