"""One headless Chromium per process, driven by Playwright on an event loop of its own.

Playwright's async API runs on a daemon thread of the process (:class:`BrowserService`); every
browser operation is a coroutine scheduled there, awaited from the episodes' loop by the tools
(:meth:`BrowserService.run`) or waited on from a plain thread (:meth:`BrowserService.call`: an
environment being built, a test scoring the final page). The browser is Debian's ``chromium``
(``executable_path``, headless; Playwright downloads no browser), started on first use and shared
by the episodes of the process, each in a browser context of its own.

No browser process outlives the process that started it: Playwright's driver (a Node process)
reads its commands from a pipe and, when the pipe closes (the process exited or was killed), closes
the browser it launched; Chromium, launched with ``--remote-debugging-pipe`` in a session of its
own, exits too when that pipe closes (the driver killed with it). :meth:`BrowserService.close` runs
at exit for an orderly end.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import importlib.util
import os
import shutil
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from pytest_jeval.calls.loopthread import LoopThread

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

T = TypeVar("T")

CHROMIUM_ENV = "JEVAL_CHROMIUM"
"""An environment variable naming the Chromium executable (else ``chromium`` on the PATH)."""
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = ("install the Python package and Debian's browser: `pip install playwright` (in pytest-jeval's "
                "`web` and `dev` extras) and `apt-get install -y chromium` (`make chromium`); no browser is "
                f"downloaded. Set {CHROMIUM_ENV} to use another Chromium executable")
#: Extra Chromium switches: no background traffic of the browser's own.
LAUNCH_ARGS = ("--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--no-pings", "--disable-domain-reliability", "--disable-features=Translate,OptimizationHints")


class BrowserUnavailable(RuntimeError):
    """Playwright or Chromium is missing (the message says how to install them)."""


def find_chromium() -> str | None:
    """The Chromium executable: ``$JEVAL_CHROMIUM``, else the first of :data:`CHROMIUM_NAMES` on the PATH."""
    given = os.environ.get(CHROMIUM_ENV)
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_problem() -> str | None:
    """Why no browser can start here (with the install command), or None when Playwright and Chromium are there."""
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append("the Python package playwright")
    if find_chromium() is None:
        given = os.environ.get(CHROMIUM_ENV)
        missing.append(f"{CHROMIUM_ENV}={given!r} (not an executable)" if given else
                       "a Chromium executable (" + ", ".join(CHROMIUM_NAMES) + " on the PATH)")
    if not missing:
        return None
    return f"the browser tools need {' and '.join(missing)}: {INSTALL_HINT}"


def check_browser() -> None:
    """:class:`BrowserUnavailable` when :func:`browser_problem` finds something missing."""
    problem = browser_problem()
    if problem is not None:
        raise BrowserUnavailable(problem)


class BrowserService:
    """The process's Playwright and Chromium, on the ``jeval-browser`` thread (use :meth:`shared`)."""

    _shared: BrowserService | None = None
    _shared_pid = 0
    _shared_lock = threading.Lock()

    def __init__(self) -> None:
        self._thread = LoopThread("jeval-browser")
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._start_lock: asyncio.Lock | None = None
        self.launch_seconds: float | None = None
        """Seconds the first start took (Playwright's driver and Chromium), None before it."""
        self.executable: str | None = None
        """The Chromium executable started."""

    @classmethod
    def shared(cls) -> BrowserService:
        """The process's service (a new one in a forked child)."""
        with cls._shared_lock:
            if cls._shared is None or cls._shared_pid != os.getpid():
                cls._shared = cls()
                cls._shared_pid = os.getpid()
                atexit.register(cls._shared.close)
            return cls._shared

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The service's event loop (started on first use)."""
        return self._thread.loop()

    def submit(self, make: Callable[[], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """Run ``make()`` on the service's loop; a future of its result."""

        async def job() -> T:
            return await make()

        return asyncio.run_coroutine_threadsafe(job(), self.loop)

    def call(self, make: Callable[[], Awaitable[T]], timeout: float) -> T:
        """Run ``make()`` on the service's loop and wait for it from this (non-service) thread.

        ``TimeoutError`` after ``timeout`` seconds (the operation is cancelled)."""
        future = self.submit(make)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"the browser did not answer within {timeout:g}s") from None

    async def run(self, make: Callable[[], Awaitable[T]]) -> T:
        """Await ``make()`` run on the service's loop from another event loop (cancelling it cancels the operation)."""
        return await asyncio.wrap_future(self.submit(make))

    async def browser(self) -> Browser:
        """The running browser, started now if it is not yet (on the service's loop)."""
        if self._browser is not None and self._browser.is_connected():
            return self._browser
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if self._browser is not None and self._browser.is_connected():
                return self._browser
            check_browser()
            from playwright.async_api import async_playwright

            started = time.monotonic()
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            self.executable = find_chromium()
            self._browser = await self._playwright.chromium.launch(
                executable_path=self.executable, headless=True, args=list(LAUNCH_ARGS))
            if self.launch_seconds is None:
                self.launch_seconds = time.monotonic() - started
            return self._browser

    def close(self) -> None:
        """Close the browser and Playwright's driver, then stop the loop (idempotent)."""
        if not self._thread.started:
            return

        async def cleanup() -> None:
            browser, playwright = self._browser, self._playwright
            self._browser = self._playwright = None
            try:
                if browser is not None:
                    await asyncio.wait_for(browser.close(), 15)
            except Exception:
                pass
            try:
                if playwright is not None:
                    await asyncio.wait_for(playwright.stop(), 15)
            except Exception:
                pass

        self._thread.stop(cleanup, timeout=40)
