"""A progress line during long runs: items done, their rate, what is left, calls in flight.

pytest's own progress (``[ 45%]``, or a line per item under ``-v``) says how far the run is;
on a slow endpoint (the bundled model on two cores) it can stay still for many seconds. On
the controller, at most once every ``jeval_progress_interval`` seconds (ini option, default
15; 0 turns it off) and only when an item finished since the last line, this plugin writes::

    jeval: 18/36 items in 0:09 (2.0 items/s, about 0:09 left), 1 call in flight

The calls in flight are this process's; under pytest-xdist they run in the workers, and the
line gives the items and rate alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from pytest_jeval.session.keys import runtime_key

DEFAULT_INTERVAL = 15.0
"""Seconds between two progress lines, at the least."""


def _clock_text(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def progress_text(done: int, total: int, elapsed: float, in_flight: int | None) -> str:
    """The progress line for ``done`` of ``total`` items after ``elapsed`` seconds."""
    text = f"jeval: {done}/{total} items in {_clock_text(elapsed)}"
    if elapsed > 0 and done:
        rate = done / elapsed
        left = f", about {_clock_text((total - done) / rate)} left" if total > done else ""
        speed = f"{rate:.1f} items/s" if rate >= 0.1 else f"{rate * 60:.1f} items/min"  # the bundled model: slow
        text += f" ({speed}{left})"
    if in_flight is not None:
        text += f", {in_flight} call{'' if in_flight == 1 else 's'} in flight"
    return text


class ProgressLine:
    """``pytest_collection_finish`` starts the clock; ``pytest_runtest_logreport`` counts and writes."""

    def __init__(self, config: pytest.Config, interval: float, *, in_workers: bool,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self.interval = interval
        self.in_workers = in_workers
        self.clock = clock
        self.total = 0
        self.done = 0
        self.started = 0.0
        self.last_line = 0.0
        self.done_at_last_line = 0

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Start the clock."""
        self.started = self.last_line = self.clock()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Count the selected items (in one process; under xdist the controller collects none)."""
        self.total = len(session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        """Under pytest-xdist: every worker collects the same items; their count is the total."""
        self.total = max(self.total, len(ids))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count a finished item; write the line when the interval has passed."""
        if report.when == "teardown":
            self.done += 1
        now = self.clock()
        if not self.total or self.done == self.done_at_last_line or now - self.last_line < self.interval:
            return
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        in_flight = None
        if not self.in_workers:
            runtime = self.config.stash.get(runtime_key, None)
            in_flight = runtime.stats.in_flight if runtime is not None else None
        if self.in_workers and self.config.get_verbosity() <= 0:
            reporter.write("\n")  # xdist's progress characters do not tell the reporter where the line stands
        reporter.write_line(progress_text(self.done, self.total, now - self.started, in_flight))
        self.last_line, self.done_at_last_line = now, self.done


def install(config: pytest.Config) -> None:
    """Register the progress line on the controller, unless ``jeval_progress_interval`` is 0 (not in dry runs)."""
    if hasattr(config, "workerinput") or config.option.collectonly or config.getoption("setupplan", False):
        return
    raw = config.getini("jeval_progress_interval")
    try:
        interval = float(raw) if raw not in (None, "") else DEFAULT_INTERVAL
    except ValueError:
        raise pytest.UsageError(
            f"jeval_progress_interval: expected seconds as a number (0 turns the line off), got {raw!r}") from None
    if interval < 0:
        raise pytest.UsageError(f"jeval_progress_interval: expected seconds >= 0, got {raw!r}")
    if interval == 0:
        return
    in_workers = bool(getattr(config.option, "numprocesses", None) or getattr(config.option, "tx", None))
    config.pluginmanager.register(ProgressLine(config, interval, in_workers=in_workers), "jeval-progress")
