"""``browser_select``: choose an option of a drop-down list."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_select")
async def browser_select(element: str | int, option: str, ctx: ToolContext) -> ToolOutput:
    """Choose an option of a drop-down list (a select element) by its visible label, then return the page.

    Args:
        element: The element: its number from the latest snapshot (e.g. 12 or "[12]"), or a Playwright
            selector such as role=button[name="Save"], text=Next page, label=Email or css=#search.
        option: The option's label as shown (its value also works).
    """
    return await run_action(ctx, lambda s: s.select(element, option))


register_tool(browser_select)
