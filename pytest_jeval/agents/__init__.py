"""The tool-calling agent backend: tools, the episode loop, and what an episode records.

See docs/agents.md.
"""

from __future__ import annotations

from pytest_jeval.agents.spec import AgentSpec, AsyncChat, NewSession, UserSimulator
from pytest_jeval.agents.tool import (
    HarnessError,
    NotRunnable,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    spec_tool,
    tool,
)
from pytest_jeval.core.episode import STOP_REASONS, Episode, StopReason, ToolCallRecord

__all__ = [
    "STOP_REASONS",
    "AgentSpec",
    "AsyncChat",
    "Episode",
    "HarnessError",
    "NewSession",
    "NotRunnable",
    "StopReason",
    "Tool",
    "ToolCallRecord",
    "ToolContext",
    "ToolError",
    "ToolOutput",
    "UserSimulator",
    "spec_tool",
    "tool",
]
