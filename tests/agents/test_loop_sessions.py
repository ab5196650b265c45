"""A simulated user can open a new session (``NewSession``): from it on the model sees only the opening system
messages and the new session; the episode keeps the whole conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pytest_jeval.agents.loop import run_episode
from pytest_jeval.agents.spec import NewSession
from pytest_jeval.agents.tool import ToolContext
from pytest_jeval.core.chat import Messages, Reply
from pytest_jeval.core.sample import Sample


class User:
    def __init__(self) -> None:
        self.turns: list[str | NewSession] = ["second, same session", NewSession("third, a new session"), "fourth"]

    async def next_message(self, conversation: Messages) -> str | NewSession | None:
        return self.turns.pop(0) if self.turns else None


def test_a_new_session_hides_the_earlier_conversation_from_the_model() -> None:
    sent: list[list[str]] = []

    async def call_model(conversation: Messages) -> Reply:
        sent.append([f"{m['role']}:{m.get('content')}" for m in conversation])
        return Reply(text=f"answer {len(sent)}", model="m")

    opening = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "first"}]
    ctx = ToolContext(sample=Sample(id="s", input="first"), workspace=Path("/nonexistent"))
    episode = asyncio.run(run_episode(opening, tools=[], call_model=call_model, ctx=ctx, user=User()))
    assert sent == [
        ["system:be brief", "user:first"],
        ["system:be brief", "user:first", "assistant:answer 1", "user:second, same session"],
        ["system:be brief", "user:third, a new session"],
        ["system:be brief", "user:third, a new session", "assistant:answer 3", "user:fourth"],
    ]
    assert [m["content"] for m in episode.messages if m["role"] == "user"] == [
        "first", "second, same session", "third, a new session", "fourth"]
    assert episode.stop_reason == "final" and episode.turns == 4
