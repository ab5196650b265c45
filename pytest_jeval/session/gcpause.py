"""The cyclic garbage collector around start-up and collection.

Loading a suite imports ``datasets`` (pandas, pyarrow) and, for the endpoint check or the
calls, ``openai``: tens of thousands of long-lived objects, over which the generational
collector kept running full passes, about a third of the CPU time from the suite's load
to the first request. Collection then builds one item and a dozen small objects per
sample and model. So the collector is paused from the suite's load (``pytest_configure``)
to the end of collection, and what exists then (modules, the plan, the samples, the
items: all kept to the end of the session) is moved to the permanent generation
(:func:`gc.freeze`), which later passes, and pytest's own ``gc.collect()`` at exit, skip.

A pytest session run inside another one (pytester's in-process runs) freezes nothing:
what it built would otherwise outlive it.
"""

from __future__ import annotations

import gc

_paused = False
_depth = 0


def enter_session() -> None:
    """Count a pytest session configured in this process (pytester's in-process runs nest)."""
    global _depth
    _depth += 1


def leave_session() -> None:
    """The session is unconfigured: the collector runs again whatever happened."""
    global _depth
    _depth = max(0, _depth - 1)
    resume()


def nested() -> bool:
    """Whether another pytest session of this process is still running around this one."""
    return _depth > 1


def pause() -> None:
    """Stop the cyclic collector, unless it is already stopped (by the user, or by us)."""
    global _paused
    if gc.isenabled() and not _paused:
        gc.disable()
        _paused = True


def resume(*, freeze: bool = False) -> None:
    """Start the collector again if :func:`pause` stopped it; with ``freeze`` (and not nested),
    first move every object that exists now to the permanent generation."""
    global _paused
    if not _paused:
        return
    if freeze and not nested():
        gc.freeze()
    gc.enable()
    _paused = False
