"""The ``browser`` tool family: a real, headless Chromium driven through Playwright, one context per episode.

| tool | module | what it does |
|---|---|---|
| ``browser_navigate`` | :mod:`.navigate` | open an address (only the episode's allowed origins) |
| ``browser_click`` | :mod:`.click` | click an element |
| ``browser_type`` | :mod:`.type_text` | replace an input's text, optionally pressing Enter |
| ``browser_select`` | :mod:`.select_option` | choose an option of a drop-down list |
| ``browser_press`` | :mod:`.press_key` | press a key in the focused element |
| ``browser_scroll`` | :mod:`.scroll` | scroll up or down |
| ``browser_back`` | :mod:`.go_back` | the Back button |
| ``browser_snapshot`` | :mod:`.snapshot` | read the page again |
| ``browser_screenshot`` | :mod:`.screenshot` | a PNG of the viewport, saved in the workspace |

An element is named by its number in the latest accessibility snapshot (``[12] button "Save"``, see
:mod:`._snapshot`) or by a Playwright selector (``role=button[name="Save"]``, ``text=Next``,
``css=#q``). Every action returns the page after it: URL, title and snapshot; the trajectory records
the action, its target, the resulting URL, what the confinement blocked and a capped snapshot.

The tools act on the episode's :class:`~._session.BrowserSession`, which the benchmark's environment
opens (``ctx.state``, or its ``browser`` attribute) with the origins the page may reach; the session is
closed after the item. The browser itself (:mod:`._service`) is shared by the process. Importing this
package does not import Playwright. See docs/web.md.
"""

from __future__ import annotations

from pytest_jeval.agents.tool import Tool
from pytest_jeval.agents.tools.browser._service import (
    INSTALL_HINT,
    BrowserService,
    BrowserUnavailable,
    browser_problem,
    check_browser,
    find_chromium,
)
from pytest_jeval.agents.tools.browser._session import BrowserConfig, BrowserSession, origin_of, session_of
from pytest_jeval.agents.tools.browser.click import browser_click
from pytest_jeval.agents.tools.browser.go_back import browser_back
from pytest_jeval.agents.tools.browser.navigate import browser_navigate
from pytest_jeval.agents.tools.browser.press_key import browser_press
from pytest_jeval.agents.tools.browser.screenshot import browser_screenshot
from pytest_jeval.agents.tools.browser.scroll import browser_scroll
from pytest_jeval.agents.tools.browser.select_option import browser_select
from pytest_jeval.agents.tools.browser.snapshot import browser_snapshot
from pytest_jeval.agents.tools.browser.type_text import browser_type

BROWSER_TOOLS: tuple[Tool, ...] = (browser_navigate, browser_click, browser_type, browser_select, browser_press,
                                   browser_scroll, browser_back, browser_snapshot, browser_screenshot)
"""The family, in the order offered to a model."""

__all__ = ["BROWSER_TOOLS", "INSTALL_HINT", "BrowserConfig", "BrowserService", "BrowserSession",
           "BrowserUnavailable", "browser_problem", "check_browser", "find_chromium", "origin_of", "session_of"]
