"""ToolCall-15 support: the mock world and tools (:mod:`.world`) and the rule scorer (:mod:`.rules`)."""

from __future__ import annotations

from pytest_jeval.benchmarks.toolcall15.rules import Outcome, Rules, parse_rules, score_episode
from pytest_jeval.benchmarks.toolcall15.world import TOOLS, World, tools_named

__all__ = ["TOOLS", "Outcome", "Rules", "World", "parse_rules", "score_episode", "tools_named"]
