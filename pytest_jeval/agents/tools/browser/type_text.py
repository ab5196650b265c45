"""``browser_type``: replace the text of an input field."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_type")
async def browser_type(element: str | int, text: str, ctx: ToolContext, submit: bool = False) -> ToolOutput:
    """Replace the text of an input field or text area with the given text (and press Enter if asked), then
    return the page.

    Args:
        element: The element: its number from the latest snapshot (e.g. 12 or "[12]"), or a Playwright
            selector such as role=button[name="Save"], text=Next page, label=Email or css=#search.
        text: The text to put in the field (what was there is cleared first).
        submit: Press Enter afterwards (submits a search box or a one-field form).
    """
    return await run_action(ctx, lambda s: s.type(element, text, submit))


register_tool(browser_type)
