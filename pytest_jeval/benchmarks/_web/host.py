"""Web applications on 127.0.0.1, one fresh instance per episode, served from a thread of the process.

:func:`start_app` builds an :class:`aiohttp.web.Application` with a factory (which makes the
instance's own database) and serves it on a new port of 127.0.0.1; :meth:`RunningApp.stop` ends it.
All instances share one event loop in a daemon thread (``jeval-webapps``): an episode's server costs a
socket and a database, not a process, and none can outlive the process (a killed run leaves no
server behind). Two episodes never share an instance, so neither sees the other's changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from aiohttp import web

from pytest_jeval.calls.loopthread import LoopThread

_LOOP = LoopThread("jeval-webapps")
_LOCK = threading.Lock()
STATE_KEY: web.AppKey[Any] = web.AppKey("jeval_state", object)
"""Where an application keeps its instance state (its database)."""


@dataclasses.dataclass
class RunningApp:
    """One served instance."""

    name: str
    base_url: str
    """``http://127.0.0.1:<port>`` (no trailing slash)."""
    app: web.Application
    runner: web.AppRunner
    stopped: bool = False

    @property
    def state(self) -> Any:
        """The instance's state object (its database and helpers)."""
        return self.app[STATE_KEY]

    def call(self, fn: Callable[[], Any], timeout: float = 30.0) -> Any:
        """Run ``fn`` on the server's loop (where the handlers touch the state) and return its value."""

        async def job() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(job(), _LOOP.loop()).result(timeout)

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self.stopped:
            return
        self.stopped = True
        try:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), _LOOP.loop()).result(30)
        except Exception:
            pass


def start_app(name: str, factory: Callable[[], web.Application]) -> RunningApp:
    """Serve a new instance of ``factory()`` on a free port of 127.0.0.1 (from any thread but the server's)."""

    async def start() -> RunningApp:
        app = factory()
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        return RunningApp(name=name, base_url=f"http://127.0.0.1:{port}", app=app, runner=runner)

    with _LOCK:
        loop = _LOOP.loop()
    return asyncio.run_coroutine_threadsafe(start(), loop).result(60)
