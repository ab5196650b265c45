"""``browser_snapshot``: read the page again."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_snapshot")
async def browser_snapshot(ctx: ToolContext) -> ToolOutput:
    """Return the current page: its URL, title and accessibility snapshot, one line per element as
    [number] role "name" (use the number to act on the element)."""
    return await run_action(ctx, lambda s: s.read())


register_tool(browser_snapshot)
