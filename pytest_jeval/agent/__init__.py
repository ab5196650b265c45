"""The tool-calling agent backend: tools, the episode loop, and what an episode records.

See docs/agents.md.
"""

from __future__ import annotations

from pytest_jeval.agent.episode import STOP_REASONS, Episode, StopReason, ToolCallRecord
from pytest_jeval.agent.spec import AgentSpec, AsyncChat, UserSimulator
from pytest_jeval.agent.tools import HarnessError, Tool, ToolContext, ToolError, spec_tool, tool

__all__ = [
    "STOP_REASONS",
    "AgentSpec",
    "AsyncChat",
    "Episode",
    "HarnessError",
    "StopReason",
    "Tool",
    "ToolCallRecord",
    "ToolContext",
    "ToolError",
    "UserSimulator",
    "spec_tool",
    "tool",
]
