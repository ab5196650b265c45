"""What one agent episode did: its conversation, its tool calls and why it stopped."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pytest_jeval.core.chat import Messages, Reply

StopReason = Literal["final", "max_turns", "max_tool_calls", "token_limit", "time_limit", "error", "not_run"]
"""Why an episode ended: the model answered without tool calls (``final``), a limit stopped
it, the harness failed (``error``: endpoint down after retries, sandbox unavailable), or the
sample cannot run on this machine (``not_run``: the benchmark's environment said why before
any model call; the test scores it unscored with that reason)."""

STOP_REASONS: tuple[StopReason, ...] = ("final", "max_turns", "max_tool_calls", "token_limit", "time_limit", "error",
                                        "not_run")


@dataclasses.dataclass
class ToolCallRecord:
    """One tool call the model made, and what came of it."""

    id: str
    """The ``tool_call_id``."""
    name: str
    """The tool name the model gave (possibly unknown)."""
    arguments: str
    """The arguments as the model sent them (raw text)."""
    turn: int
    """The model turn (1-based) that asked for it."""
    parsed: dict[str, Any] | None = None
    """The arguments as a JSON object, when they parsed as one."""
    result: str = ""
    """What the model was sent back in the ``role=tool`` message."""
    error: str | None = None
    """Why the call failed (bad JSON, unknown tool, schema, the tool raised, timeout), or None."""
    duration: float = 0.0
    """Seconds the tool ran (0 when it did not run)."""
    truncated: bool = False
    """True when the output was cut to ``max_tool_output`` (head and tail kept)."""
    output_chars: int = 0
    """Length of the output before any cut."""
    details: dict[str, Any] | None = None
    """Structured facts the tool reported besides its result (``ToolOutput.details``: a browser action's
    target, the resulting URL, a capped snapshot), for the trajectory and the report; None when none."""

    @property
    def ok(self) -> bool:
        """True when the tool ran and returned without error."""
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        """JSON builtins, for the trajectory."""
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Episode:
    """One sample's agent run: filled in by the loop, handed to the test as the ``episode`` fixture."""

    messages: Messages = dataclasses.field(default_factory=list)
    """The whole conversation in OpenAI format (system, user, assistant with ``tool_calls``, ``tool``)."""
    tool_calls: list[ToolCallRecord] = dataclasses.field(default_factory=list)
    """Every tool call, in the order made."""
    replies: list[Reply] = dataclasses.field(default_factory=list)
    """The model's replies, one per turn."""
    stop_reason: StopReason = "final"
    turns: int = 0
    """Model turns taken (requests answered)."""
    error: str | None = None
    """For ``stop_reason = "error"``: what failed; for ``"not_run"``: why the sample cannot run here."""
    state: Any = None
    """The benchmark's per-episode environment state (a mock database, ...), after the episode."""
    wall_seconds: float = 0.0
    """Wall-clock seconds from the first request to the end."""
    tool_seconds: float = 0.0
    """Seconds spent running tools (summed over calls)."""
    limit_detail: str | None = None
    """For a limit stop: which limit, in words."""
    external: dict[str, Any] | None = None
    """External agent backends: the agent process (argv, exit status, stdout, stderr) and the
    proxy's requests; None for the built-in loop."""
    agent: str | None = None
    """The named agent that drove the episode (``orchestrator``, ``oracle``, ``nop``, ...); None for an
    external agent backend."""
    memory: dict[str, Any] | None = None
    """Episode mode only: the memory this episode was given (policy, its place in the sequence, the
    earlier episodes that fed it, those that had no outcome); None outside episode mode."""

    @property
    def final_text(self) -> str:
        """The text of the last assistant reply ('' when there is none)."""
        return self.replies[-1].text if self.replies else ""

    @property
    def tool_errors(self) -> int:
        """Tool calls that ended in an error result."""
        return sum(1 for c in self.tool_calls if c.error is not None)

    @property
    def prompt_tokens(self) -> int | None:
        """Prompt tokens over all turns; None when a reply did not report them."""
        values = [r.prompt_tokens for r in self.replies]
        return sum(v for v in values if v is not None) if values and None not in values else None

    @property
    def completion_tokens(self) -> int | None:
        """Completion tokens over all turns; None when a reply did not report them."""
        values = [r.completion_tokens for r in self.replies]
        return sum(v for v in values if v is not None) if values and None not in values else None

    def calls(self, name: str | None = None) -> list[ToolCallRecord]:
        """The tool calls, or those of one tool."""
        return [c for c in self.tool_calls if name is None or c.name == name]

    def summary(self) -> dict[str, Any]:
        """The record's ``agent`` field."""
        out: dict[str, Any] = {
            "name": self.agent,
            "stop_reason": self.stop_reason,
            "turns": self.turns,
            "tool_calls": len(self.tool_calls),
            "tool_errors": self.tool_errors,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "wall_seconds": round(self.wall_seconds, 6),
            "tool_seconds": round(self.tool_seconds, 6),
            "limit": self.limit_detail,
            "error": self.error,
        }
        if self.memory is not None:
            out["memory"] = self.memory
        return out

    def trajectory(self) -> dict[str, Any]:
        """The full messages and every tool call with its arguments, result, error and duration."""
        out: dict[str, Any] = {"messages": self.messages, "tool_calls": [c.as_dict() for c in self.tool_calls]}
        if self.external is not None:
            out["external"] = self.external
        return out
