"""Prefetch: send the calls of the items this process runs next, ahead of time.

Registered when a suite runs and the session is not a dry one (``--collect-only``,
``--setup-plan``). Under pytest-xdist a worker's upcoming items are its
``WorkerInteractor.torun`` queue: an xdist internal (``xdist.remote``), a
``execnet`` channel-backed queue of item indices with a ``lock()`` context manager.
``tests/acceptance/test_xdist_internals.py`` fails loudly when that changes; without it, a
worker would prefetch only the item it is running.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_jeval.session.keys import runtime_key

_cursor_key = pytest.StashKey[int]()
_queue_key = pytest.StashKey[Any]()


def _worker_queue(session: pytest.Session) -> Any:
    """The xdist worker's ``torun`` queue, or None outside a worker; looked up once per session."""
    queue = session.stash.get(_queue_key, False)
    if queue is False:
        queue = None
        for plugin in session.config.pluginmanager.get_plugins():
            torun = getattr(plugin, "torun", None)
            if type(plugin).__name__ == "WorkerInteractor" and torun is not None:  # an xdist worker
                queue = torun
                break
        session.stash[_queue_key] = queue
    return queue


def upcoming(session: pytest.Session, item: pytest.Item, window: int) -> list[pytest.Item]:
    """The items this process will run next (including ``item``), at most ``window``."""
    items = session.items
    torun = _worker_queue(session)
    if torun is not None:
        with torun.lock() as queue:
            indices = [i for i in list(queue)[:window] if isinstance(i, int)]
        return [item] + [items[i] for i in indices]
    cursor = session.stash.get(_cursor_key, 0)
    while cursor < len(items) and items[cursor] is not item:
        cursor += 1
    session.stash[_cursor_key] = cursor
    return items[cursor : cursor + window]


class Prefetch:
    """``pytest_runtest_protocol``: hand the upcoming items to the runtime before the item runs."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """Send the calls of upcoming items ahead of time."""
        runtime = item.config.stash[runtime_key]
        runtime.prefetch(upcoming(item.session, item, runtime.window))


def install(config: pytest.Config) -> None:
    """Send upcoming items' calls ahead (every process that runs items; not in dry runs)."""
    if not (config.option.collectonly or config.getoption("setupplan", False)):
        config.pluginmanager.register(Prefetch(), "jeval-prefetch")
