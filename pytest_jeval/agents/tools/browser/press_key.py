"""``browser_press``: press a key in the focused element."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, ToolOutput, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools.browser._session import run_action


@tool(name="browser_press")
async def browser_press(key: str, ctx: ToolContext) -> ToolOutput:
    """Press a key or key combination in the focused element and return the page.

    Args:
        key: A key name such as Enter, Tab, Escape, ArrowDown, PageDown or Control+A.
    """
    return await run_action(ctx, lambda s: s.press(key))


register_tool(browser_press)
