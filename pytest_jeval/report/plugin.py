"""pytest side of the HTML report: ``pytest --jeval-config suite.toml --jeval-report report.html``.

The report is written on the controller only (xdist workers write nothing), after
the results writer has written the JSONL files and ``summary.json``: it reads the
files that ``summary.json`` lists, so the report shows exactly what was written.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.session.keys import plan_key

report_path_key = pytest.StashKey[Path]()
written_key = pytest.StashKey[Path | None]()
started_key = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--jeval-report`` in the ``jeval`` group."""
    group = parser.getgroup("jeval", "LLM benchmarks as tests (pytest-jeval)")
    group.addoption("--jeval-report", dest="jeval_report", metavar="REPORT.html", default=None,
                    help="write a self-contained HTML report of the run's results here")


def pytest_configure(config: pytest.Config) -> None:
    """Remember where the report goes (resolved against the invocation directory), on the controller."""
    target = config.getoption("jeval_report", None)
    if target and not hasattr(config, "workerinput"):
        config.stash[report_path_key] = Path(config.invocation_params.dir, target)
        config.stash[started_key] = time.time()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the report from the output directory's ``summary.json``."""
    config = session.config
    target = config.stash.get(report_path_key, None)
    if target is None:
        return
    from pytest_jeval.report import write_report  # numpy/scipy: only when a report is asked for

    plan = config.stash.get(plan_key, None)
    from pytest_jeval.core.paths import aggregate_path

    aggregate = aggregate_path(plan.output_dir) if plan is not None else None
    fresh = aggregate is not None and aggregate.is_file() and aggregate.stat().st_mtime >= config.stash[started_key]
    # an older summary.json is a previous run's: this run wrote no results
    config.stash[written_key] = write_report([aggregate], target) if fresh and aggregate is not None else None


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """``jeval report: <path>`` (or why there is none)."""
    if report_path_key not in config.stash:
        return
    written = config.stash.get(written_key, None)
    if written is not None:
        terminalreporter.write_sep("-", f"jeval report: {written}")
    else:
        terminalreporter.write_sep("-", "jeval report: not written (no results in this run)")
