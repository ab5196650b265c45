"""The retail task's customer: a scripted one for tests, or a second model playing the user (tau-bench style)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_jeval.agents.spec import AsyncChat, UserSimulator
from pytest_jeval.core.chat import Messages
from pytest_jeval.core.sample import Sample

STOP = "###STOP###"
"""What the user says to end the conversation (the token itself is never sent to the agent)."""

AGENT_GREETING = "Hi! How can I help you today?"

USER_SYSTEM = """\
You are playing a customer talking to a customer service agent of an online store. Stay in this role.

Your situation and goal (the agent does not see this):
{instruction}

Rules:
- Write only the customer's next message: one short, natural message at a time.
- Give the agent only the details the current step needs; do not reveal the whole situation at once.
- Never invent details (ids, addresses, amounts, names) that are not in your situation.
- Do not copy the situation word for word; say it in your own words.
- When your goal is reached, or it clearly cannot be reached, reply with just {stop} and nothing else.
"""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def user_messages(conversation: Messages) -> int:
    """How many user messages the conversation holds."""
    return sum(1 for m in conversation if m.get("role") == "user")


class ScriptedUser:
    """Replays a task's ``user_turns``: turn ``k`` answers the agent's ``k``-th answer.

    The conversation's user messages count the turns already said (the opening
    message is turn 0), so the same conversation always gets the same next turn.
    Returns None when the turns run out or at a turn holding ``###STOP###``.
    """

    def __init__(self, turns: Sequence[str]) -> None:
        self.turns = list(turns)

    async def next_message(self, conversation: Messages) -> str | None:
        """The next scripted turn, or None when the user is done."""
        said = user_messages(conversation)
        if said >= len(self.turns) or any(STOP in t for t in self.turns[:said]):
            return None
        turn = self.turns[said]
        return None if STOP in turn else turn


class LLMUser:
    """A model plays the customer from the task's hidden instruction; it ends the talk with ``###STOP###``.

    The model sees the conversation from the customer's side: the agent's
    messages as ``user`` turns and its own earlier messages as ``assistant`` turns.
    """

    def __init__(self, chat: AsyncChat, instruction: str) -> None:
        self.chat = chat
        self.instruction = instruction

    def messages(self, conversation: Messages) -> Messages:
        """The request sent to the user model for ``conversation``."""
        out: Messages = [{"role": "system", "content": USER_SYSTEM.format(instruction=self.instruction, stop=STOP)},
                         {"role": "user", "content": AGENT_GREETING}]
        for m in conversation:
            role = m.get("role")
            if role in ("user", "assistant"):
                out.append({"role": "assistant" if role == "user" else "user", "content": _text(m.get("content"))})
        return out

    async def next_message(self, conversation: Messages) -> str | None:
        """The user model's next message, or None when it said ``###STOP###`` (or nothing)."""
        reply = await self.chat(self.messages(conversation))
        text = reply.text.strip()
        if not text or STOP in text:
            return None
        return text


def make_user(sample: Sample, chat: AsyncChat | None) -> UserSimulator:
    """The episode's user: the ``[user]`` model when the suite has one, else the task's scripted turns."""
    if chat is not None:
        return LLMUser(chat, sample.input)
    return ScriptedUser(sample.metadata["user_turns"])
