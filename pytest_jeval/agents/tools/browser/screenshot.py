"""``browser_screenshot``: save a picture of the page in the workspace."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolError, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action, session_of


@tool(name="browser_screenshot")
async def browser_screenshot(ctx: ToolContext) -> ToolOutput:
    """Take a screenshot of the visible part of the page, save it in the workspace as a PNG file, and return
    its name with the page's snapshot."""
    if not ctx.workspace.is_dir():
        raise ToolError("this episode has no workspace to save a screenshot in")
    session = session_of(ctx)
    path = ctx.workspace / f"screenshot-{session.actions + 1:03d}.png"
    return await run_action(ctx, lambda s: s.screenshot(path))


register_tool(browser_screenshot)
