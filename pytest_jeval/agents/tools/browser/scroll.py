"""``browser_scroll``: scroll the page up or down."""

from __future__ import annotations

from typing import Literal

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_scroll")
async def browser_scroll(direction: Literal["up", "down"], ctx: ToolContext) -> ToolOutput:
    """Scroll the page by most of a screen and return it (the snapshot lists the whole page either way).

    Args:
        direction: up or down.
    """
    return await run_action(ctx, lambda s: s.scroll(direction))


register_tool(browser_scroll)
