"""The pytest side of redaction: reports, records, log records and the terminal, in every process.

:func:`install` is called from ``pytest_configure`` once the suite is loaded (on the
controller and on each xdist worker, which loads the suite itself). It registers the
plan's keys (:meth:`pytest_jeval.suite.plan.EvalPlan.keys`) and a plugin that

* redacts each test and collection report as it is made, before the terminal, junit,
  xdist or the results writer see it: the traceback (``--tb=long``, ``-l`` locals,
  the crash line of ``-r``), captured output and log sections, user properties, and
  the sample's record (:func:`pytest_jeval.core.redact.redact_record`);
* redacts every log record when it is created (message, exception text, stack), so
  ``caplog``, ``--log-file``, live logs and report sections get clean text;
* passes everything pytest's terminal writer prints through :func:`~pytest_jeval.core.redact.redact`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_jeval.core.redact import MIN_KEY_LENGTH, redact, redact_record, register, unregister
from pytest_jeval.session.keys import plan_key

if TYPE_CHECKING:
    pass

#: How deep the walk into pytest's report objects goes (a traceback chain is about 5 levels).
_MAX_DEPTH = 16


def install(config: pytest.Config) -> None:
    """Register the plan's keys and the redacting hooks for this pytest process (every process)."""
    plan = config.stash[plan_key]
    config.pluginmanager.register(RedactionPlugin(register(*plan.keys())), "jeval-redact")


def scrub(value: Any, depth: int = 0) -> Any:
    """``value`` with every string redacted: strings, lists and dicts (in place), tuples (rebuilt),
    and pytest's own report objects (their attributes, in place)."""
    if isinstance(value, str):
        return redact(value)
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, list):
        value[:] = [scrub(v, depth + 1) for v in value]
    elif isinstance(value, dict):
        for k in list(value):
            value[k] = scrub(value[k], depth + 1)
    elif type(value) is tuple:
        return tuple(scrub(v, depth + 1) for v in value)
    elif type(value).__module__.startswith("_pytest.") and hasattr(value, "__dict__"):
        for name, attr in list(vars(value).items()):
            clean = scrub(attr, depth + 1)
            if clean is not attr:
                object.__setattr__(value, name, clean)
    return value


def scrub_report(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Redact a report in place: traceback, sections, user properties and the jeval record."""
    longrepr = report.longrepr
    if (longrepr is not None and not isinstance(longrepr, (str, tuple))
            and not type(longrepr).__module__.startswith("_pytest.")):
        text = str(longrepr)  # another plugin's TerminalRepr: keep it unless it holds a secret
        if redact(text) != text:
            report.longrepr = redact(text)
    else:
        report.longrepr = scrub(longrepr)
    report.sections = scrub(list(report.sections))
    if isinstance(report, pytest.TestReport):
        report.user_properties = scrub(list(report.user_properties))
        wasxfail = getattr(report, "wasxfail", None)
        if isinstance(wasxfail, str):
            report.wasxfail = redact(wasxfail)
    record = getattr(report, "jeval_record", None)
    if isinstance(record, dict):
        report.jeval_record = redact_record(record)  # type: ignore[union-attr]  # set by the jeval plugin


class _RedactingStream:
    """A text stream that redacts what is written to it, and otherwise is ``inner``."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def write(self, text: str) -> int:
        return int(self._inner.write(redact(text) if len(text) >= MIN_KEY_LENGTH else text) or 0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _RecordFactory:
    """Wraps the logging record factory: each record's message, exception and stack come out redacted."""

    def __init__(self, previous: Callable[..., logging.LogRecord]) -> None:
        self.previous = previous
        self.active = True

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.previous(*args, **kwargs)
        if self.active:
            _scrub_log_record(record)
        return record


def _scrub_log_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a broken format string: the handler reports it when it formats the record
        return
    clean = redact(message)
    if clean != message:
        record.msg, record.args = clean, None
    if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        clean = redact(text)
        if clean != text:
            record.exc_text = clean
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


class RedactionPlugin:
    """Registered as ``jeval-redact`` by :func:`install`; undone in ``pytest_unconfigure``."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        self.factory = _RecordFactory(logging.getLogRecordFactory())
        logging.setLogRecordFactory(self.factory)
        self._stream: tuple[Any, Any] | None = None

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Outermost wrapper: the report leaves clean, jeval record included."""
        report = yield
        scrub_report(report)
        return report

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """Collection errors (a benchmark module that fails to import, ...) leave clean too."""
        report = yield
        scrub_report(report)
        return report

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Put the terminal writer's stream behind redaction (before the header is printed)."""
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        writer = getattr(reporter, "_tw", None)
        inner = getattr(writer, "_file", None)
        if inner is not None and not isinstance(inner, _RedactingStream):
            writer._file = _RedactingStream(inner)  # type: ignore[union-attr]
            self._stream = (writer, inner)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Restore the record factory and the terminal stream; forget this run's keys."""
        self.factory.active = False
        if logging.getLogRecordFactory() is self.factory:
            logging.setLogRecordFactory(self.factory.previous)
        if self._stream is not None:
            writer, inner = self._stream
            writer._file = inner
            self._stream = None
        unregister(self.keys)
        self.keys = []
