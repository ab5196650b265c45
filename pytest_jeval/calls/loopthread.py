"""An asyncio event loop running in a daemon thread of the pytest process.

The call scheduler (:class:`~pytest_jeval.calls.scheduler.CallScheduler`) and the agent
episodes (:class:`~pytest_jeval.agents.episodes.EpisodeRunner`) each run their coroutines on
one: started on first use, and stopped once, cancelling what is still pending.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable


class LoopThread:
    """A loop that runs forever in a thread called ``name`` until :meth:`stop`.

    ``setup`` runs on the loop's thread before the loop starts (to make loop-bound objects
    such as semaphores, or to set the default executor).
    """

    def __init__(self, name: str, setup: Callable[[asyncio.AbstractEventLoop], None] | None = None) -> None:
        self.name = name
        self._setup = setup
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        """True between the first :meth:`loop` and :meth:`stop`."""
        return self._loop is not None

    def loop(self) -> asyncio.AbstractEventLoop:
        """The running loop, started now if it is not yet."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                setup = self._setup

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    if setup is not None:
                        setup(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name=self.name, daemon=True)
                self._thread.start()
                ready.wait()
                self._loop = loop
            return self._loop

    def stop(self, cleanup: Callable[[], Awaitable[None]] | None = None, *, timeout: float = 10.0) -> None:
        """Cancel every task still on the loop, await ``cleanup`` there, then stop the loop and its thread."""
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if cleanup is not None:
                await cleanup()

        try:
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(timeout=timeout)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
        loop.close()
        self._loop = None
