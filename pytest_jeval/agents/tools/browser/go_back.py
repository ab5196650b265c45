"""``browser_back``: go back one page in the history."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_back")
async def browser_back(ctx: ToolContext) -> ToolOutput:
    """Go back to the previous page (the browser's Back button) and return it."""
    return await run_action(ctx, lambda s: s.back())


register_tool(browser_back)
