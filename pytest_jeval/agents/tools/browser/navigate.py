"""``browser_navigate``: open an address in the episode's browser."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_navigate")
async def browser_navigate(url: str, ctx: ToolContext) -> ToolOutput:
    """Open a web address in the browser and return the page: its URL, title and accessibility snapshot
    (one line per element, [number] role "name"). Only the task's sites can be reached.

    Args:
        url: The full http(s) address, e.g. http://127.0.0.1:8080/orders.
    """
    return await run_action(ctx, lambda s: s.navigate(url))


register_tool(browser_navigate)
