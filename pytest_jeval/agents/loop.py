"""The episode loop: call the model with tools, run every call it makes, repeat until it answers.

:func:`run_episode` is one coroutine per sample. Each model turn awaits its own
request (which holds an endpoint slot only while it is in flight); tools run
after the reply, never while a slot is held. Every tool call of a reply gets
exactly one ``role=tool`` message, in the order the model gave them; consecutive
calls of parallel-safe tools run concurrently.

What the model gets wrong becomes an error *result* it can read and the loop goes
on: malformed JSON arguments, an unknown tool, arguments that fail the tool's
schema, a tool that raises or times out. What the harness gets wrong ends the
episode with ``stop_reason = "error"``: the endpoint failing after its retries, a
:class:`~pytest_jeval.agents.tool.HarnessError` (the sandbox cannot start).

With a simulated user, opening messages that end with an assistant message (the agent's
greeting, as tau2-bench opens its conversations) let the user speak first.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import itertools
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pytest_jeval.agents.spec import NewSession, UserSimulator
from pytest_jeval.agents.tool import HarnessError, Tool, ToolContext, ToolError, ToolOutput
from pytest_jeval.core import jsonsafe
from pytest_jeval.core.chat import EndpointError, Messages, Reply, ToolCall
from pytest_jeval.core.episode import Episode, StopReason, ToolCallRecord

CallModel = Callable[[Messages], Awaitable[Reply]]
"""Send the conversation so far (with the episode's tools) and await the model's reply."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """The limits of one episode; each stops it with its own ``stop_reason``."""

    max_turns: int = 10
    """Model turns (``max_turns``)."""
    max_tool_calls: int = 50
    """Tool calls over the episode (``max_tool_calls``)."""
    max_tokens: int | None = None
    """Prompt plus completion tokens over the episode (``token_limit``); None is unlimited."""
    time_limit: float = 600.0
    """Wall-clock seconds (``time_limit``)."""
    tool_timeout: float = 30.0
    """Seconds one tool call may run."""
    max_tool_output: int = 16_000
    """Characters of one tool result sent back; longer output keeps its head and tail."""

    def __post_init__(self) -> None:
        for name in ("max_turns", "max_tool_calls", "time_limit", "tool_timeout", "max_tool_output"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        if self.max_tokens is not None and self.max_tokens <= 0:
            raise ValueError(f"max_tokens must be > 0, got {self.max_tokens!r}")


def cut_output(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters keeping its head and tail, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    note = "\n[... {} characters cut ...]\n"
    marker = note.format(len(text) - limit)
    keep = max(0, limit - len(marker))
    head = keep // 2
    tail = keep - head
    return text[:head] + note.format(len(text) - head - tail) + (text[len(text) - tail:] if tail else ""), True


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


@functools.lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Any:
    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def check_arguments(tool: Tool, raw: str) -> dict[str, Any]:
    """The arguments of a call as a dict, or :class:`ToolError` saying why they are unusable."""
    text = raw.strip()
    if text == "":
        parsed: Any = {}
    else:
        try:
            parsed = jsonsafe.loads(text)
        except ValueError as exc:
            raise ToolError(f"the arguments of {tool.name} are not valid JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise ToolError(f"the arguments of {tool.name} must be a JSON object, got {type(parsed).__name__}")
    errors = sorted(_validator(json.dumps(dict(tool.parameters), sort_keys=True)).iter_errors(parsed),
                    key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(top level)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ToolError(f"invalid arguments for {tool.name} at {where}: {first.message}{more}")
    return parsed


async def call_tool(tool: Tool, arguments: dict[str, Any], ctx: ToolContext, timeout: float) -> Any:
    """Run one tool with its validated arguments; :class:`ToolError` on timeout."""
    if tool.fn is None:
        raise ToolError(f"{tool.name} cannot be run here")
    kwargs = dict(arguments)
    if tool.context_param is not None:
        kwargs[tool.context_param] = dataclasses.replace(ctx, timeout=timeout)
    fn = tool.fn
    try:
        if inspect.iscoroutinefunction(fn):
            return await asyncio.wait_for(fn(**kwargs), timeout)
        if tool.blocking:
            return await asyncio.wait_for(asyncio.to_thread(fn, **kwargs), timeout)
        return fn(**kwargs)
    except asyncio.TimeoutError:
        raise ToolError(f"{tool.name} timed out after {timeout:g}s") from None


class _Stop(Exception):
    def __init__(self, reason: StopReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class EpisodeLoop:
    """One episode's state while it runs (use :func:`run_episode`)."""

    def __init__(self, *, tools: Sequence[Tool], call_model: CallModel, ctx: ToolContext, limits: Limits,
                 execute: bool, user: UserSimulator | None) -> None:
        self.tools = {t.name: t for t in tools}
        self.call_model = call_model
        self.ctx = ctx
        self.limits = limits
        self.execute = execute
        self.user = user
        self.episode = Episode(state=ctx.state)
        self.started = time.monotonic()
        self.session_start = 0
        """Index in the episode's messages where the current session starts (see :class:`NewSession`)."""

    def remaining(self) -> float:
        """Seconds left of the episode's wall-clock limit."""
        return self.limits.time_limit - (time.monotonic() - self.started)

    def tokens(self) -> int:
        """Prompt plus completion tokens so far (unreported counts as 0)."""
        return sum((r.prompt_tokens or 0) + (r.completion_tokens or 0) for r in self.episode.replies)

    async def run(self, messages: Messages) -> Episode:
        """Run to the end; the episode says why it stopped."""
        ep = self.episode
        ep.messages = [dict(m) for m in messages]
        try:
            if self.user is not None and ep.messages and ep.messages[-1].get("role") == "assistant":
                await self.user_turn()  # the agent opened the conversation (a greeting): the user speaks first
            while True:
                await self.turn()
        except _Stop as stop:
            ep.stop_reason = stop.reason
            if stop.reason == "error":
                ep.error = stop.detail
            elif stop.reason != "final":
                ep.limit_detail = stop.detail
        ep.wall_seconds = time.monotonic() - self.started
        return ep

    async def turn(self) -> None:
        """One model turn and the tool calls it makes; raises :class:`_Stop` when the episode ends."""
        ep, limits = self.episode, self.limits
        if ep.turns >= limits.max_turns:
            raise _Stop("max_turns", f"max_turns = {limits.max_turns} reached")
        remaining = self.remaining()
        if remaining <= 0:
            raise _Stop("time_limit", f"the episode ran past {limits.time_limit:g}s")
        try:
            reply = await asyncio.wait_for(self.call_model(self.visible()), remaining)
        except asyncio.TimeoutError:
            raise _Stop("time_limit", f"the episode ran past {limits.time_limit:g}s (waiting for the model)") from None
        except EndpointError as exc:
            raise _Stop("error", str(exc)) from None
        ep.turns += 1
        ep.replies.append(reply)
        ep.messages.append(reply.assistant_message())
        if limits.max_tokens is not None and self.tokens() > limits.max_tokens:
            if reply.tool_calls:
                self.unanswered(reply.tool_calls, "not run: the episode's token budget is spent")
            raise _Stop("token_limit", f"{self.tokens()} tokens used, over max_episode_tokens = {limits.max_tokens}")
        if not reply.tool_calls:
            await self.user_turn()
            return
        if not self.execute:
            self.unanswered(reply.tool_calls, None)
            raise _Stop("final", "the tool calls are the answer")
        await self.run_calls(reply.tool_calls)

    def visible(self) -> Messages:
        """What the model is sent: the whole conversation, or since a :class:`NewSession` the opening system
        messages and the current session."""
        messages = self.episode.messages
        if not self.session_start:
            return messages
        head = list(itertools.takewhile(lambda m: m.get("role") == "system", messages[:self.session_start]))
        return [*head, *messages[self.session_start:]]

    async def user_turn(self) -> None:
        """After an answer without tool calls: the simulated user speaks again, or the episode ends."""
        if self.user is None:
            raise _Stop("final", "answered")
        visible = [m for m in self.episode.messages if m.get("role") in ("user", "assistant")
                   and isinstance(m.get("content"), str) and m.get("content")]
        remaining = self.remaining()
        if remaining <= 0:
            raise _Stop("time_limit", f"the episode ran past {self.limits.time_limit:g}s")
        try:
            text = await asyncio.wait_for(self.user.next_message(visible), remaining)
        except asyncio.TimeoutError:
            limit = self.limits.time_limit
            raise _Stop("time_limit", f"the episode ran past {limit:g}s (waiting for the user)") from None
        except EndpointError as exc:
            raise _Stop("error", f"the simulated user failed: {exc}") from None
        if text is None:
            raise _Stop("final", "the user is done")
        if isinstance(text, NewSession):
            self.session_start = len(self.episode.messages)
            text = text.text
        self.episode.messages.append({"role": "user", "content": text})

    def unanswered(self, calls: Sequence[ToolCall], error: str | None) -> None:
        """Record calls that are not run (an answer's calls, or calls past a limit)."""
        turn = self.episode.turns
        for call in calls:
            parsed = _try_parse(call.arguments)
            self.episode.tool_calls.append(ToolCallRecord(id=call.id, name=call.name, arguments=call.arguments,
                                                          turn=turn, parsed=parsed, error=error))

    async def run_calls(self, calls: Sequence[ToolCall]) -> None:
        """Run every call (up to ``max_tool_calls``), answer each in order, then check the limits."""
        ep, limits = self.episode, self.limits
        room = max(0, limits.max_tool_calls - len(ep.tool_calls))
        run, over = list(calls[:room]), list(calls[room:])
        records = await self.execute_all(run)
        ep.tool_calls.extend(records)
        for record in records:
            ep.messages.append({"role": "tool", "tool_call_id": record.id, "content": record.result})
        skipped = f"not run: max_tool_calls = {limits.max_tool_calls} reached"
        for call in over:
            ep.tool_calls.append(ToolCallRecord(id=call.id, name=call.name, arguments=call.arguments,
                                                turn=ep.turns, parsed=_try_parse(call.arguments), error=skipped,
                                                result=f"Error: {skipped}"))
            ep.messages.append({"role": "tool", "tool_call_id": call.id, "content": f"Error: {skipped}"})
        harness = next((r for r in records if r.error is not None and r.error.startswith("harness: ")), None)
        if harness is not None:
            raise _Stop("error", harness.error[len("harness: "):] if harness.error else "harness failure")
        if over or len(ep.tool_calls) >= limits.max_tool_calls:
            raise _Stop("max_tool_calls", skipped.removeprefix("not run: "))
        if self.remaining() <= 0:
            raise _Stop("time_limit", f"the episode ran past {limits.time_limit:g}s (running tools)")

    async def execute_all(self, calls: Sequence[ToolCall]) -> list[ToolCallRecord]:
        """Run the calls in order; a run of consecutive parallel-safe calls runs concurrently."""
        out: list[ToolCallRecord] = []
        i = 0
        while i < len(calls):
            j = i + 1
            if self._parallel(calls[i]):
                while j < len(calls) and self._parallel(calls[j]):
                    j += 1
            out.extend(await asyncio.gather(*(self.run_call(c) for c in calls[i:j])))
            i = j
        return out

    def _parallel(self, call: ToolCall) -> bool:
        tool = self.tools.get(call.name)
        return tool is not None and tool.parallel_safe

    async def run_call(self, call: ToolCall) -> ToolCallRecord:
        """Run one call; every failure becomes its error result."""
        record = ToolCallRecord(id=call.id, name=call.name, arguments=call.arguments, turn=self.episode.turns,
                                parsed=_try_parse(call.arguments))
        tool = self.tools.get(call.name)
        started = time.monotonic()
        try:
            if tool is None:
                known = ", ".join(sorted(self.tools)) or "none"
                raise ToolError(f"unknown tool {call.name!r}; the tools are: {known}")
            arguments = check_arguments(tool, call.arguments)
            timeout = min(tool.timeout or self.limits.tool_timeout, max(0.001, self.remaining()))
            value = await call_tool(tool, arguments, self.ctx, timeout)
            if isinstance(value, ToolOutput):
                record.details = dict(value.details) or None
                output = value.text
            else:
                output = _as_text(value)
        except ToolError as exc:
            record.error = str(exc) or type(exc).__name__
            record.details = getattr(exc, "details", None)
            output = f"Error: {record.error}"
        except HarnessError as exc:
            record.error = f"harness: {exc}"
            output = f"Error: {exc}"
        except Exception as exc:  # a tool that raises: the model reads what happened
            record.error = f"{type(exc).__name__}: {exc}"
            output = f"Error: {record.error}"
        record.duration = time.monotonic() - started if tool is not None and tool.fn is not None else 0.0
        self.episode.tool_seconds += record.duration
        record.output_chars = len(output)
        record.result, record.truncated = cut_output(output, self.limits.max_tool_output)
        return record


def _try_parse(raw: str) -> dict[str, Any] | None:
    try:
        value = jsonsafe.loads(raw) if raw.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


async def run_episode(
    messages: Messages,
    *,
    tools: Sequence[Tool],
    call_model: CallModel,
    ctx: ToolContext,
    limits: Limits | None = None,
    execute: bool = True,
    user: UserSimulator | None = None,
) -> Episode:
    """Run one episode from ``messages`` (the system and first user messages) to its end."""
    loop = EpisodeLoop(tools=tools, call_model=call_model, ctx=ctx, limits=limits or Limits(), execute=execute,
                       user=user)
    return await loop.run(messages)
