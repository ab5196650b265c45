"""Helpers of the web tests: the browser requirement (skipped only outside CI), a local probe server."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from aiohttp import web

from pytest_jeval.agents.tools.browser import browser_problem


def require_browser() -> None:
    """Skip where Playwright or Chromium is missing, with the install command; in CI (``CI`` set) fail instead:
    ``make test`` installs both, so the web tests never go silently missing there."""
    problem = browser_problem()
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the web tests: {problem}")
    pytest.skip(problem)


@contextmanager
def serve(routes: list[web.RouteDef], host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``routes`` on ``host`` (a free port) from a thread; yields the base URL."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def start() -> None:
        app = web.Application()
        app.add_routes(routes)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, host, 0)
        await site.start()
        holder["runner"], holder["port"] = runner, runner.addresses[0][1]

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(30)
    try:
        yield f"http://{host}:{holder['port']}"
    finally:
        runner = holder["runner"]
        assert isinstance(runner, web.AppRunner)
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def html(body: str, title: str = "Probe") -> Callable[[web.Request], object]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=f"<html><head><title>{title}</title></head><body>{body}</body></html>",
                            content_type="text/html")

    return handler
