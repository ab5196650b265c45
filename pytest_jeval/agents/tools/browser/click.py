"""``browser_click``: click an element of the page."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_click")
async def browser_click(element: str | int, ctx: ToolContext) -> ToolOutput:
    """Click an element (a link, a button, a checkbox) and return the page after it.

    Args:
        element: The element: its number from the latest snapshot (e.g. 12 or "[12]"), or a Playwright
            selector such as role=button[name="Save"], text=Next page, label=Email or css=#search.
    """
    return await run_action(ctx, lambda s: s.click(element))


register_tool(browser_click)
