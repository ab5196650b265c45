"""``react``: a text-mode ReAct loop for endpoints and models without native tool calling.

The model gets no ``tools`` in its requests: the system prompt describes the tools (name, description,
JSON schema of the arguments) and the format. Each reply is one step, parsed strictly::

    Thought: <reasoning>
    Action: <tool name>
    Action Input: <the arguments, one JSON object>

or, to answer (the answer is what the user, or the scorer, reads)::

    Thought: <reasoning>
    Final Answer: <the answer>

An action runs through the ordinary episode loop (its checks, limits and records are the native loop's);
its result comes back as ``Observation: <result>``. A reply that is neither form (no ``Action`` or
``Final Answer``, both, an ``Action`` without ``Action Input``, arguments that are not one JSON object)
is a malformed step: it counts as a turn, and the next observation says what was wrong and how to write
a step, and the loop goes on. Text after a line starting with ``Observation:`` is dropped (the model
must not write its own observations).

The episode's messages keep the native form (assistant messages with ``tool_calls``, ``tool`` results), so
scorers read a ReAct episode as any other; each assistant message also keeps the model's raw step under
``react`` (``{"text": ..., "error": ...}``), from which the text conversation is rebuilt each turn.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from collections.abc import Sequence
from typing import Any

from pytest_jeval.agents.loop import EpisodeLoop, _Stop
from pytest_jeval.agents.named import EpisodeParts, register_agent
from pytest_jeval.agents.spec import AgentSpec
from pytest_jeval.agents.tool import Tool
from pytest_jeval.core.chat import EndpointError, Message, Messages, ToolCall
from pytest_jeval.core.episode import Episode

FORMAT = """\
You have no native function calling. Use the tools below by writing one step per reply, in exactly this format:

Thought: <your reasoning>
Action: <one tool name>
Action Input: <the arguments, one JSON object>

The result comes back as "Observation: <result>". Never write an Observation yourself. When you are ready to \
answer (or to reply to the user), write:

Thought: <your reasoning>
Final Answer: <your answer>

Tools:
{tools}"""

REMINDER = ("Write one step: 'Thought:' then either 'Action:' and 'Action Input:' (a JSON object), "
            "or 'Final Answer:'.")

_LABEL = re.compile(r"^[ \t]*(Thought|Action Input|Action|Final Answer|Observation)[ \t]*:[ \t]?", re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Action:
    """A well-formed action step."""

    name: str
    arguments: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Final:
    """A well-formed answer step."""

    answer: str


@dataclasses.dataclass(frozen=True)
class Malformed:
    """A step that is neither form, and why."""

    error: str


Step = Action | Final | Malformed


def describe_tools(tools: Sequence[Tool]) -> str:
    """The tools as the system prompt lists them: name, description and the arguments' JSON schema."""
    lines = []
    for t in tools:
        lines.append(f"- {t.name}: {t.description}\n  Arguments (JSON schema): "
                     f"{json.dumps(dict(t.parameters), ensure_ascii=False, sort_keys=True)}")
    return "\n".join(lines) or "(none)"


def _unfence(text: str) -> str:
    """``text`` without one surrounding Markdown code fence (```json ... ```), else unchanged."""
    match = re.fullmatch(r"```[A-Za-z]*\s*\n?(.*?)\n?\s*```", text, re.DOTALL)
    return match.group(1).strip() if match else text


def parse_step(text: str) -> Step:
    """One reply as a step (see the module docstring); a :class:`Malformed` step says what was wrong."""
    cut = re.search(r"^[ \t]*Observation[ \t]*:", text, re.MULTILINE)
    body = text[:cut.start()] if cut else text
    labels = [(m.group(1), m.start(), m.end()) for m in _LABEL.finditer(body)]
    fields: dict[str, list[str]] = {}
    for i, (label, _start, end) in enumerate(labels):
        stop = labels[i + 1][1] if i + 1 < len(labels) else len(body)
        fields.setdefault(label, []).append(body[end:stop].strip())
    has_action, has_final = "Action" in fields, "Final Answer" in fields
    if has_action and has_final:
        return Malformed("the step has both 'Action:' and 'Final Answer:'; write one of them")
    if has_final:
        if len(fields["Final Answer"]) > 1:
            return Malformed("the step has more than one 'Final Answer:'")
        return Final(fields["Final Answer"][0])
    if not has_action:
        if "Action Input" in fields:
            return Malformed("'Action Input:' without an 'Action:' line naming the tool")
        return Malformed("no 'Action:' and no 'Final Answer:' found")
    if len(fields["Action"]) > 1:
        return Malformed("the step has more than one 'Action:'; write one action per step")
    name = fields["Action"][0]
    if not name or "\n" in name:
        return Malformed("'Action:' must be followed by one tool name on the same line")
    if "Action Input" not in fields:
        return Malformed(f"'Action: {name}' has no 'Action Input:' line with its arguments")
    if len(fields["Action Input"]) > 1:
        return Malformed("the step has more than one 'Action Input:'")
    raw = _unfence(fields["Action Input"][0])
    try:
        arguments = json.loads(raw) if raw else None
    except ValueError as exc:
        return Malformed(f"the Action Input is not valid JSON ({exc})")
    if not isinstance(arguments, dict):
        return Malformed("the Action Input must be one JSON object, e.g. {\"key\": \"value\"}")
    return Action(name.strip("`'\" "), arguments)


def _observation(text: str) -> Message:
    return {"role": "user", "content": f"Observation: {text}"}


def text_conversation(messages: Messages, tools: Sequence[Tool]) -> Messages:
    """The conversation as the model sees it in text mode (tools described, results as observations)."""
    out: Messages = []
    instructions = FORMAT.format(tools=describe_tools(tools))
    has_system = any(m.get("role") == "system" for m in messages)
    if not has_system:
        out.append({"role": "system", "content": instructions})
    for m in messages:
        role = m.get("role")
        react = m.get("react") if isinstance(m.get("react"), dict) else None
        if role == "system":
            out.append({"role": "system", "content": f"{m.get('content') or ''}\n\n{instructions}"})
        elif role == "assistant":
            text = str(react["text"]) if react is not None else str(m.get("content") or "")
            out.append({"role": "assistant", "content": text})
            if react is not None and react.get("error"):
                out.append(_observation(f"Invalid step: {react['error']}. {REMINDER}"))
        elif role == "tool":
            out.append(_observation(str(m.get("content") or "")))
        else:
            out.append({"role": str(role), "content": m.get("content")})
    return out


class ReactLoop(EpisodeLoop):
    """The episode loop with text-mode turns (see the module docstring)."""

    def __init__(self, *, tool_list: Sequence[Tool], **kwargs: Any) -> None:
        super().__init__(tools=tool_list, **kwargs)
        self.tool_list = list(tool_list)

    async def turn(self) -> None:
        """One text step: an action runs through the loop's tool machinery, an answer goes to the user."""
        ep, limits = self.episode, self.limits
        if ep.turns >= limits.max_turns:
            raise _Stop("max_turns", f"max_turns = {limits.max_turns} reached")
        remaining = self.remaining()
        if remaining <= 0:
            raise _Stop("time_limit", f"the episode ran past {limits.time_limit:g}s")
        try:
            raw = await asyncio.wait_for(self.call_model(text_conversation(ep.messages, self.tool_list)), remaining)
        except asyncio.TimeoutError:
            raise _Stop("time_limit", f"the episode ran past {limits.time_limit:g}s (waiting for the model)") from None
        except EndpointError as exc:
            raise _Stop("error", str(exc)) from None
        ep.turns += 1
        step = parse_step(raw.text)
        if isinstance(step, Action):
            call = ToolCall(id=f"react-{ep.turns}", name=step.name, arguments=json.dumps(step.arguments))
            reply = dataclasses.replace(raw, text="", tool_calls=(call,), message=None)
        elif isinstance(step, Final):
            reply = dataclasses.replace(raw, text=step.answer, tool_calls=(), message=None)
        else:
            reply = dataclasses.replace(raw, text="", tool_calls=(), message=None)
        ep.replies.append(reply)
        message = reply.assistant_message()
        message["react"] = {"text": raw.text, **({"error": step.error} if isinstance(step, Malformed) else {})}
        ep.messages.append(message)
        if limits.max_tokens is not None and self.tokens() > limits.max_tokens:
            if reply.tool_calls:
                self.unanswered(reply.tool_calls, "not run: the episode's token budget is spent")
            raise _Stop("token_limit", f"{self.tokens()} tokens used, over max_episode_tokens = {limits.max_tokens}")
        if isinstance(step, Malformed):
            return  # the next turn's conversation carries the corrective observation
        if isinstance(step, Final):
            await self.user_turn()
            return
        await self.run_calls(reply.tool_calls)


class React:
    """Thought / Action / Action Input / Observation in plain text (see the module docstring)."""

    description = "a text-mode ReAct loop (Thought/Action/Action Input/Observation) for models without tool calling"
    calls_model = True

    def refuses(self, spec: AgentSpec) -> str | None:
        """A benchmark whose answer is the native tool calls themselves (``execute = False``) cannot run it."""
        if not spec.execute:
            return "its answer is the model's native tool calls, which a text-mode agent does not make"
        return None

    async def run(self, parts: EpisodeParts) -> Episode:
        """The text-mode loop over the episode's tools, limits and simulated user."""
        if parts.call_text is None:
            raise RuntimeError("the react agent needs a text-mode model call (EpisodeParts.call_text)")
        loop = ReactLoop(tool_list=parts.tools, call_model=parts.call_text, ctx=parts.ctx, limits=parts.limits,
                         execute=True, user=parts.user)
        return await loop.run(parts.messages)


AGENT = register_agent("react", React())
