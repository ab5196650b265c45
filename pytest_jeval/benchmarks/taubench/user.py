"""τ²-bench's simulated user: the ``[user]`` model plays the customer from the task's ``user_scenario``.

As upstream: the user model's system prompt is the simulation guidelines followed by the scenario
(``<scenario>...</scenario>``, the scenario rendered as upstream renders it); it sees the conversation from
the customer's side (the agent's messages as ``user`` turns, its own as ``assistant`` turns; an agent
message that makes tool calls goes to the environment, not to the user), starting with the agent's
greeting; a reply holding ``###STOP###``, ``###TRANSFER###`` or ``###OUT-OF-SCOPE###`` ends the conversation.
The guidelines are upstream's own file when the data source has it (a tau2-bench checkout as ``data_dir``),
else pytest-jeval's wording of the same rules (declared in every record).
"""

from __future__ import annotations

import functools
import hashlib
import textwrap
from typing import Any

from pytest_jeval.agents.spec import AsyncChat, UserSimulator
from pytest_jeval.benchmarks.taubench.data import guidelines_file
from pytest_jeval.core.chat import Messages
from pytest_jeval.core.sample import Sample

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
STOP_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)

GUIDELINES = f"""\
# How to play the customer
You are a customer talking with a customer service agent. Make the conversation realistic, and follow the \
scenario below exactly.

## Rules
- Write one message at a time, as a customer would, and keep the conversation natural.
- Do what the scenario says, and nothing it does not say.
- Do not invent anything the scenario does not give you: whatever it does not tell you, you do not know.
- Do not copy the scenario's words: say things in your own words.
- Give information only when the agent asks for it, a little at a time.

## Ending the conversation
- Keep going until the task is done.
- When the goal of the scenario is reached, reply with {STOP} to end the conversation.
- If you are transferred to another agent, reply with {TRANSFER}.
- If the scenario does not tell you enough to go on, reply with {OUT_OF_SCOPE}.
"""
"""pytest-jeval's wording of upstream's user-simulator guidelines (used when the source has no guidelines file)."""

SYSTEM = "{guidelines}\n\n<scenario>\n{scenario}\n</scenario>"


def _indented(text: str) -> str:
    return textwrap.indent(text, "\t")


def scenario_text(user_scenario: dict[str, Any]) -> str:
    """A task's ``user_scenario`` as upstream renders it for the user model (persona, then the instructions:
    domain, reason for call, known and unknown info, task instructions)."""
    lines = []
    if user_scenario.get("persona") is not None:
        lines += ["Persona:", _indented(str(user_scenario["persona"]))]
    instructions = user_scenario.get("instructions")
    if isinstance(instructions, dict):
        parts = [f"Domain: {instructions.get('domain')}",
                 f"Reason for call:\n{_indented(str(instructions.get('reason_for_call')))}"]
        if instructions.get("known_info") is not None:
            parts.append(f"Known info:\n{_indented(str(instructions['known_info']))}")
        if instructions.get("unknown_info") is not None:
            parts.append(f"Unknown info:\n{_indented(str(instructions['unknown_info']))}")
        parts.append(f"Task instructions:\n{_indented(str(instructions.get('task_instructions')))}")
        text = "\n".join(parts)
    else:
        text = str(instructions)
    lines += ["Instructions:", _indented(text)]
    return "\n".join(lines)


@functools.lru_cache(maxsize=8)
def guidelines(folder: str) -> tuple[str, str]:
    """The guidelines for a data folder, and where they came from (``upstream:<sha256>`` or ``pytest-jeval``)."""
    path = guidelines_file(folder)
    if path is None:
        return GUIDELINES, "pytest-jeval"
    raw = path.read_bytes()
    text = raw.decode("utf-8").replace("<PERSONA_GUIDELINES>", "")
    return text, f"upstream:{hashlib.sha256(raw).hexdigest()}"


def system_prompt(sample: Sample) -> str:
    """The user model's system prompt for a task."""
    text, _ = guidelines(sample.metadata["folder"])
    return SYSTEM.format(guidelines=text.strip(), scenario=sample.input)


class TauUser:
    """The ``[user]`` model as the customer (see the module docstring)."""

    def __init__(self, chat: AsyncChat, system: str) -> None:
        self.chat = chat
        self.system = system

    def messages(self, conversation: Messages) -> Messages:
        """The request for the user model: the system prompt, then the conversation with the roles flipped."""
        out: Messages = [{"role": "system", "content": self.system}]
        for m in conversation:
            role = m.get("role")
            if role == "assistant" and m.get("tool_calls"):
                continue  # a message with tool calls goes to the environment, not to the user (upstream's routing)
            if role in ("user", "assistant"):
                out.append({"role": "assistant" if role == "user" else "user", "content": m.get("content") or ""})
        return out

    async def next_message(self, conversation: Messages) -> str | None:
        """The user model's next message; None when it holds a stop token (the conversation ends)."""
        reply = await self.chat(self.messages(conversation))
        text = reply.text
        if any(token in text for token in STOP_TOKENS):
            return None
        return text


class NoUserModel:
    """The user of an episode run without a ``[user]`` model (``oracle``, ``nop``: never consulted)."""

    async def next_message(self, conversation: Messages) -> str | None:
        """Never called by the agents this user serves; asked anyway, it says what is missing."""
        raise RuntimeError("taubench's simulated user is played by the [user] model; the suite has none")


def make_user(sample: Sample, chat: AsyncChat | None) -> UserSimulator:
    """The episode's user: the ``[user]`` model playing the task's scenario."""
    if chat is None:
        return NoUserModel()
    return TauUser(chat, system_prompt(sample))
