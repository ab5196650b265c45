"""pytest-jeval's own hooks, added in ``pytest_addhooks``; implement them in a ``conftest.py`` or a plugin.

* :func:`pytest_jeval_update_record` edits a record before it is written;
* :func:`pytest_jeval_update_summary` edits a pair's summary before it is written;
* :func:`pytest_jeval_write_results` replaces pytest-jeval's results writer;
* :func:`pytest_jeval_results_ready` receives every finished (benchmark, model) pair once the results are
  written (the exporters use it).

The rules are in ``docs/hooks.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_jeval.results.writer import ResultsPair
    from pytest_jeval.suite.plan import EvalPlan

hookspec = pytest.hookspec  # pluggy's HookspecMarker("pytest")


@hookspec
def pytest_jeval_update_record(record: dict[str, Any], item: pytest.Item) -> None:
    """Edit ``record`` in place before it is stored.

    Called on the process that ran ``item`` (an xdist worker, or the only one),
    once per finished sample, after the record is built and before it is shipped
    to the writer. Not called for the records a ``--jeval-resume`` run keeps.
    Values are converted to JSON builtins afterwards; ``record_id``, ``benchmark``
    and ``model`` must stay as they are (the writer files the record by them).

    .. versionadded:: 0.1
    """


@hookspec
def pytest_jeval_update_summary(summary: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Edit ``summary`` in place before the ``.summary.json`` of one (benchmark, model) pair is written.

    Called on the controller at session end, for each pair the run touched, with
    every record the pair keeps (read-only). The edited summary is also the one
    listed in ``summary.json``, shown in the results table and checked by the gates.
    ``jeval summarize`` and ``jeval rescore`` recompute summaries without it.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def pytest_jeval_write_results(config: pytest.Config, plan: EvalPlan) -> object | None:
    """Return a plugin object to register as the results writer instead of pytest-jeval's own.

    Called once, on the controller, in ``pytest_configure``; the first non-None result
    wins. The object is registered with ``config.pluginmanager`` and receives each
    finished sample's record as ``report.jeval_record`` in its ``pytest_runtest_logreport``
    (records of resumed samples also carry ``report.jeval_resumed = True``). pytest-jeval
    then writes no results file, prints no results table and checks no gates;
    ``--jeval-resume`` is a usage error, since only pytest-jeval's writer reads its files back.

    .. versionadded:: 0.1
    """


@hookspec
def pytest_jeval_results_ready(config: pytest.Config, pairs: Sequence[ResultsPair]) -> None:
    """Receive the finished (benchmark, model) pairs of the run, once their results are written.

    Called once, on the controller, at the end of the results writer's ``pytest_sessionfinish``
    (after every pair's JSONL, its summary and ``summary.json`` are on disk), with each pair the run
    touched, in suite order: its summary as written and every record its JSONL keeps (redacted, as
    stored). Exporters (W&B, Google Sheets) and third-party sinks implement it; what an
    implementation raises is reported by pytest as an internal error, so report failures yourself.
    Not called when nothing ran, or when a ``pytest_jeval_write_results`` hook replaced the writer.

    .. versionadded:: 0.1
    """
