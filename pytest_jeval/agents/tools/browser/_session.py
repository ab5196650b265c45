"""One episode's browser: a Playwright context and its page, confined to the episode's origins.

A :class:`BrowserSession` is made by the benchmark's environment (:meth:`BrowserSession.open`, from a
plain thread) and reached by the browser tools through ``ctx.state`` (:func:`session_of`). Its
context has its own cookies and storage, blocks service workers, and routes every request: one
whose origin (scheme, host, port) is not among ``allowed_origins`` is aborted and recorded in
:attr:`BrowserSession.blocked`, WebSockets alike. A popup (``window.open``, ``target=_blank``) is
closed at once and recorded; a dialog (``alert``, ``confirm``) is accepted and recorded. Every
action waits at most ``action_timeout`` seconds for its element and ``navigation_timeout`` for the
page to load: a page that never finishes loading gives the agent what has loaded, never a hang.

Each action returns a :class:`~pytest_jeval.agents.tool.ToolOutput`: the model reads what happened,
the URL, the title and the page's accessibility snapshot (:mod:`._snapshot`); the trajectory keeps
the action, its target, the resulting URL, what was blocked or closed and a capped snapshot.
:meth:`BrowserSession.close` closes the context (idempotent).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pytest_jeval.agents.tool import HarnessError, ToolContext, ToolError, ToolOutput
from pytest_jeval.agents.tools.browser._service import BrowserService, BrowserUnavailable
from pytest_jeval.agents.tools.browser._snapshot import Snapshot, cap, format_tree

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, CDPSession, Dialog, Locator, Page, Route, WebSocketRoute

T = TypeVar("T")

#: Blocked requests, popups and dialogs kept per session (later ones are counted).
MAX_EVENTS = 200
_REF = re.compile(r"^\s*\[?\s*(\d+)\s*\]?\s*$")
_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def origin_of(url: str) -> str:
    """``scheme://host:port`` of a URL, lower-case, the port always written (``""`` for a URL without a host)."""
    parts = urllib.parse.urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if not host:
        return ""
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme, 0)
    except ValueError:
        return ""
    scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
    return f"{scheme}://{host}:{port}"


@dataclasses.dataclass(frozen=True)
class BrowserConfig:
    """How one episode's browser behaves."""

    allowed_origins: Sequence[str]
    """URLs (or origins) whose origin the page may reach; every other request is blocked."""
    action_timeout: float = 10.0
    """Seconds an action waits for its element."""
    navigation_timeout: float = 15.0
    """Seconds an action waits for the page to load."""
    viewport: tuple[int, int] = (1280, 900)
    snapshot_chars: int = 12_000
    """Characters of the snapshot sent to the model after each action."""
    record_chars: int = 2_000
    """Characters of the snapshot kept in the trajectory per action."""
    storage_state: str | None = None
    """A Playwright storage-state file (cookies of a logged-in user), e.g. WebArena's ``.auth/*.json``."""


@dataclasses.dataclass
class Blocked:
    """A request the confinement refused."""

    url: str
    method: str
    kind: str
    """Playwright's resource type (document, image, fetch, script, websocket, ...)."""

    def as_dict(self) -> dict[str, str]:
        """JSON builtins."""
        return dataclasses.asdict(self)


class BrowserSession:
    """One episode's browser context and page (see the module docstring)."""

    def __init__(self, service: BrowserService, config: BrowserConfig) -> None:
        self.service = service
        self.config = config
        self.allowed = frozenset(o for o in (origin_of(u) for u in config.allowed_origins) if o)
        self.blocked: list[Blocked] = []
        """Every request the confinement refused (the first :data:`MAX_EVENTS`)."""
        self.popups: list[str] = []
        """The URLs of popups that were opened and closed."""
        self.dialogs: list[str] = []
        """The messages of dialogs that were accepted."""
        self.actions = 0
        """Actions run."""
        self.action_seconds = 0.0
        """Seconds spent in actions (with their snapshots)."""
        self.dropped_events = 0
        self._context: BrowserContext | None = None
        self._page: Page | None = None
        self._cdp: CDPSession | None = None
        self._cdp_page: Page | None = None
        self._marks = (0, 0, 0)
        self._last: Snapshot | None = None
        self._tasks: set[asyncio.Future[None]] = set()
        self.closed = False

    # -- life ---------------------------------------------------------------------------
    @classmethod
    def open(cls, config: BrowserConfig, start_url: str | None = None, *,
             service: BrowserService | None = None) -> BrowserSession:
        """A new session (from a plain thread), on ``start_url`` when given. A browser that cannot start
        is a :class:`~pytest_jeval.agents.tool.HarnessError` saying how to install one."""
        session = cls(service or BrowserService.shared(), config)
        timeout = config.navigation_timeout + 60.0
        try:
            session.service.call(lambda: session._open(start_url), timeout)
        except BrowserUnavailable as exc:
            raise HarnessError(str(exc)) from None
        except BaseException:
            session.close()
            raise
        return session

    async def _open(self, start_url: str | None) -> None:
        browser = await self.service.browser()
        width, height = self.config.viewport
        context = await browser.new_context(viewport={"width": width, "height": height}, service_workers="block",
                                            storage_state=self.config.storage_state, accept_downloads=False)
        self._context = context
        context.set_default_timeout(self.config.action_timeout * 1000)
        context.set_default_navigation_timeout(self.config.navigation_timeout * 1000)
        await context.route("**/*", self._route)
        await context.route_web_socket(re.compile(".*"), self._route_socket)
        context.on("page", self._on_page)
        context.on("dialog", self._on_dialog)
        self._page = await context.new_page()
        if start_url:
            await self._goto(start_url)

    def close(self) -> None:
        """Close the context and its pages (idempotent; from a plain thread)."""
        if self.closed:
            return
        self.closed = True
        context = self._context
        if context is None:
            return

        async def shut() -> None:
            await context.close()

        try:
            self.service.call(shut, 30)
        except Exception:
            pass

    # -- confinement -------------------------------------------------------------------
    def allows(self, url: str) -> bool:
        """Whether the page may reach ``url`` (its origin is allowed; ``about:``, ``data:`` and ``blob:`` too)."""
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        if scheme in ("about", "data", "blob", "chrome-error"):
            return True
        return origin_of(url) in self.allowed

    def _record(self, bucket: list[Any], item: Any) -> None:
        if len(bucket) < MAX_EVENTS:
            bucket.append(item)
        else:
            self.dropped_events += 1

    async def _route(self, route: Route) -> None:
        request = route.request
        if self.allows(request.url):
            await route.fallback()
            return
        self._record(self.blocked, Blocked(request.url, request.method, request.resource_type))
        await route.abort("blockedbyclient")

    def _route_socket(self, ws: WebSocketRoute) -> None:
        if self.allows(ws.url):
            ws.connect_to_server()
            return
        self._record(self.blocked, Blocked(ws.url, "GET", "websocket"))
        self._spawn(ws.close(code=1008, reason="blocked: outside the allowed origins"))

    def _on_page(self, page: Page) -> None:
        if page is self._page or self._page is None:
            return
        self._record(self.popups, page.url)

        async def shut() -> None:
            try:
                await page.close()
            except Exception:
                pass

        self._spawn(shut())

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background, holding a reference until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _on_dialog(self, dialog: Dialog) -> None:
        self._record(self.dialogs, f"{dialog.type}: {dialog.message}")
        try:
            await dialog.accept()
        except Exception:
            pass

    # -- the page ----------------------------------------------------------------------
    @property
    def page(self) -> Page:
        """The episode's page (a :class:`~pytest_jeval.agents.tool.HarnessError` when closed)."""
        if self._page is None or self.closed:
            raise HarnessError("the episode's browser is closed")
        return self._page

    async def _goto(self, url: str) -> str | None:
        """Load ``url``; a note when it did not finish loading in time."""
        page = self.page
        try:
            await page.goto(url, wait_until="load", timeout=self.config.navigation_timeout * 1000)
        except Exception as exc:
            return self._load_note(exc)
        return None

    def _load_note(self, exc: BaseException) -> str:
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        if isinstance(exc, PlaywrightTimeout):
            return (f"the page did not finish loading within {self.config.navigation_timeout:g}s; "
                    "shown as far as it loaded")
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if "ERR_BLOCKED_BY_CLIENT" in message:
            return "blocked: the address is outside the origins this episode may reach"
        return f"the page failed to load: {message}"

    async def _settle(self) -> str | None:
        """After an action: wait for a navigation it started to load (bounded)."""
        try:
            await self.page.wait_for_load_state("load", timeout=self.config.navigation_timeout * 1000)
        except Exception as exc:
            return self._load_note(exc)
        return None

    async def snapshot(self) -> Snapshot:
        """The page's accessibility snapshot now."""
        page = self.page
        if self._cdp is None or self._cdp_page is not page:
            assert self._context is not None
            self._cdp = await self._context.new_cdp_session(page)
            self._cdp_page = page
        tree = await asyncio.wait_for(self._cdp.send("Accessibility.getFullAXTree"), self.config.action_timeout)
        self._last = format_tree(tree.get("nodes") or [])
        return self._last

    async def locate(self, element: str | int) -> tuple[Locator, str]:
        """The element an action names: a reference from the latest snapshot (``12`` or ``[12]``), else a
        Playwright selector (``role=button[name="Save"]``, ``text=Next``, ``css=#q``, ``#q``)."""
        text = str(element).strip()
        if not text:
            raise ToolError("element is empty: give a [number] from the latest snapshot or a selector")
        match = _REF.match(text)
        page = self.page
        if match is None:
            return page.locator(text).first, text
        ref = int(match.group(1))
        if self._cdp is None or self._cdp_page is not page:
            await self.snapshot()
        assert self._cdp is not None
        try:
            resolved = await self._cdp.send("DOM.resolveNode", {"backendNodeId": ref})
            object_id = resolved["object"]["objectId"]
            await self._cdp.send("Runtime.callFunctionOn", {
                "objectId": object_id, "arguments": [{"value": str(ref)}],
                "functionDeclaration": "function(r){const e=this.nodeType===1?this:this.parentElement;"
                                       "if(e){e.setAttribute('data-jeval-ref',r)}}"})
        except Exception:
            raise ToolError(f"no element [{ref}] on this page; take a new snapshot (references change when "
                            "the page changes)") from None
        described = (self._last.refs.get(ref) if self._last is not None else None) or "element"
        return page.locator(f'[data-jeval-ref="{ref}"]').first, f"[{ref}] {described}"

    async def act(self, action: str, target: str, work: Callable[[], Awaitable[str | None]]) -> ToolOutput:
        """Run one action, then settle, snapshot and report it (see the module docstring)."""
        started = time.monotonic()
        self.actions += 1
        marks = (len(self.blocked), len(self.popups), len(self.dialogs))
        error: str | None = None
        note: str | None = None
        try:
            note = await work()
        except ToolError as exc:
            error = str(exc)
        except Exception as exc:
            error = self._action_error(exc)
        if error is None:
            note = note or await self._settle()
        try:
            shot = await self.snapshot()
            text = shot.text
        except Exception as exc:
            text = f"(no snapshot: {self._action_error(exc)})"
        page = self.page
        url = page.url
        try:
            title = await asyncio.wait_for(page.title(), self.config.action_timeout)
        except Exception:
            title = ""
        blocked = [b.as_dict() for b in self.blocked[marks[0]:]]
        popups, dialogs = self.popups[marks[1]:], self.dialogs[marks[2]:]
        events = []
        if blocked:
            events.append(f"{len(blocked)} request(s) outside the allowed origins blocked: "
                          + ", ".join(b["url"] for b in blocked[:5]))
        if popups:
            events.append(f"{len(popups)} popup(s) closed: " + ", ".join(popups[:5])
                          + " (use browser_navigate to open an address)")
        if dialogs:
            events.append(f"{len(dialogs)} dialog(s) accepted: " + "; ".join(dialogs[:5]))
        details: dict[str, Any] = {"action": action, "target": target, "url": url, "title": title,
                                   "snapshot": cap(text, self.config.record_chars)}
        if note:
            details["note"] = note
        if blocked:
            details["blocked"] = blocked
        if popups:
            details["popups"] = popups
        if dialogs:
            details["dialogs"] = dialogs
        self.action_seconds += time.monotonic() - started
        head = [f"{action} {target}".strip() + (" failed" if error else ""), f"URL: {url}", f"Title: {title}"]
        head.extend(f"Note: {n}" for n in ([note] if note else []) + events)
        body = "\n".join(head) + "\n\n" + cap(text, self.config.snapshot_chars)
        if error is not None:
            details["error"] = error
            raise ToolError(f"{error}\n{body}", details=details)
        return ToolOutput(body, details)

    def _action_error(self, exc: BaseException) -> str:
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        if isinstance(exc, PlaywrightTimeout):
            return (f"timed out after {self.config.action_timeout:g}s (the element is missing, hidden or "
                    "disabled, or the page is busy)")
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return first[:300]

    # -- the actions (coroutines on the service's loop) ------------------------------------
    async def navigate(self, url: str) -> ToolOutput:
        """Open ``url`` in the page."""
        target = url.strip()
        parsed = urllib.parse.urlsplit(target)
        if parsed.scheme.lower() not in ("http", "https"):
            raise ToolError(f"{url!r} is not an http(s) address")

        async def work() -> str | None:
            if not self.allows(target):
                self._record(self.blocked, Blocked(target, "GET", "document"))
                raise ToolError(f"blocked: {origin_of(target)} is outside the origins this episode may reach "
                                f"({', '.join(sorted(self.allowed))})")
            return await self._goto(target)

        return await self.act("navigate", target, work)

    async def click(self, element: str | int) -> ToolOutput:
        """Click an element."""
        locator, described = await self.locate(element)

        async def work() -> None:
            await locator.click(timeout=self.config.action_timeout * 1000)

        return await self.act("click", described, work)

    async def type(self, element: str | int, text: str, submit: bool) -> ToolOutput:
        """Replace an input's text (and press Enter)."""
        locator, described = await self.locate(element)

        async def work() -> None:
            await locator.fill(text, timeout=self.config.action_timeout * 1000)
            if submit:
                await locator.press("Enter", timeout=self.config.action_timeout * 1000)

        return await self.act("type", f"{described} ← {text!r}" + (" + Enter" if submit else ""), work)

    async def select(self, element: str | int, option: str) -> ToolOutput:
        """Choose an option of a ``<select>`` by its label (else its value)."""
        locator, described = await self.locate(element)

        async def work() -> None:
            timeout = self.config.action_timeout * 1000
            try:
                await locator.select_option(label=option, timeout=timeout)
            except Exception:
                await locator.select_option(value=option, timeout=timeout)

        return await self.act("select", f"{described} ← {option!r}", work)

    async def press(self, key: str) -> ToolOutput:
        """Press a key (``Enter``, ``Tab``, ``ArrowDown``, ``Control+A``) in the focused element."""

        async def work() -> None:
            await self.page.keyboard.press(key)

        return await self.act("press", key, work)

    async def scroll(self, direction: Literal["up", "down"]) -> ToolOutput:
        """Scroll the page by most of a screen."""

        async def work() -> None:
            height = self.config.viewport[1] * 0.8
            await self.page.mouse.wheel(0, height if direction == "down" else -height)

        return await self.act("scroll", direction, work)

    async def back(self) -> ToolOutput:
        """Go back one page in the history."""

        async def work() -> str | None:
            try:
                response = await self.page.go_back(wait_until="load",
                                                   timeout=self.config.navigation_timeout * 1000)
            except Exception as exc:
                return self._load_note(exc)
            return None if response is not None else "there is no earlier page"

        return await self.act("back", "", work)

    async def read(self) -> ToolOutput:
        """The page's snapshot, no action."""

        async def work() -> None:
            return None

        return await self.act("snapshot", "", work)

    async def screenshot(self, path: Path) -> ToolOutput:
        """Save a PNG of the viewport to ``path``."""

        async def work() -> str:
            data = await self.page.screenshot(timeout=self.config.action_timeout * 1000)
            path.write_bytes(data)
            return f"screenshot saved as {path.name} ({len(data):,} bytes, PNG)"

        return await self.act("screenshot", path.name, work)

    # -- for scoring (from a plain thread) --------------------------------------------------
    def run_sync(self, make: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        """Run ``make()`` (a coroutine on this session's page) from a plain thread."""
        return self.service.call(make, timeout or self.config.navigation_timeout + 30)

    def current_url(self) -> str:
        """The page's URL now."""
        return self.page.url

    def evaluate(self, expression: str) -> Any:
        """Evaluate a JavaScript expression (or function) in the page; its JSON value."""
        return self.run_sync(lambda: self.page.evaluate(expression))

    def goto(self, url: str) -> str | None:
        """Load ``url`` (a checker's own navigation, confined like the agent's); a note when it did not load in
        time."""
        return self.run_sync(lambda: self._goto(url))

    def content(self) -> str:
        """The page's HTML now."""
        return self.run_sync(lambda: self.page.content())


def session_of(ctx: ToolContext) -> BrowserSession:
    """The episode's browser: ``ctx.state`` itself, or its ``browser`` attribute; a
    :class:`~pytest_jeval.agents.tool.HarnessError` when the benchmark opened none."""
    state = ctx.state
    session = state if isinstance(state, BrowserSession) else getattr(state, "browser", None)
    if not isinstance(session, BrowserSession):
        raise HarnessError("the browser tools need a browser session: the benchmark's environment must return a "
                           "BrowserSession (or an object with a .browser attribute holding one)")
    if session.closed:
        raise HarnessError("the episode's browser is closed")
    return session


async def run_action(ctx: ToolContext, make: Callable[[BrowserSession], Awaitable[ToolOutput]]) -> ToolOutput:
    """Run one action of the episode's session on the browser's loop (from a tool)."""
    session = session_of(ctx)
    return await session.service.run(lambda: make(session))
