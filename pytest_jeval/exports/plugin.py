"""The exports' pytest side: checked at configure, run after the writer at session end (controller only).

A missing optional package, a key that needs another one, or an unusable credentials
file is a usage error before any request. An export that fails at the end is reported
in the terminal summary; the results are already written and the exit status stays
what the run made it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.exports import EXPORTERS, ExportError, ExportPair, Send
from pytest_jeval.suite.plan import EvalPlan


@dataclasses.dataclass(frozen=True)
class Export:
    """One configured export: its name for messages, and the call that sends the pairs (returns one line)."""

    name: str
    send: Send


def installed(module: str) -> bool:
    """True when ``module`` can be imported (a module set to None in ``sys.modules`` counts as missing)."""
    top = module.split(".", 1)[0]
    for name in (top, module):
        if name in sys.modules:
            if sys.modules[name] is None:
                return False
            continue
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


def require(modules: Sequence[str], extra: str, key: str) -> None:
    """Raise a usage error naming ``pip install 'pytest-jeval[extra]'`` unless every module is installed."""
    missing = [m for m in modules if not installed(m)]
    if missing:
        raise pytest.UsageError(
            f"jeval: [run] {key} needs the optional package(s) {', '.join(missing)}: "
            f"pip install 'pytest-jeval[{extra}]'; no samples were sent"
        )


def configured(plan: EvalPlan) -> list[Export]:
    """The exports the suite asks for, checked (keys, packages, credentials); raises ``pytest.UsageError``."""
    named = plan.suite.run.exporters
    for name in named:
        if name not in EXPORTERS:
            raise ExportError(f"[run] exporters: unknown exporter {name!r}; {EXPORTERS.known_text()}")
    if len(set(named)) != len(named):
        raise ExportError("[run] exporters: an exporter is named twice")
    exports: list[Export] = []
    for name in EXPORTERS.names():
        if not (EXPORTERS.is_builtin(name) or name in named):
            continue  # an installed exporter runs only when the suite names it
        exporter = EXPORTERS.get(name)
        send = exporter.configure(plan, name in named)
        if send is None:
            continue
        require(exporter.modules, exporter.extra, exporter.key)
        exports.append(Export(exporter.title, send))
    return exports


def install(config: pytest.Config) -> None:
    """Register the exports plugin on the controller when the suite sets any export key."""
    from pytest_jeval.results.writer import writer_key
    from pytest_jeval.session.keys import plan_key

    if hasattr(config, "workerinput"):
        return
    plan = config.stash[plan_key]
    try:
        exports = configured(plan)
    except ExportError as exc:
        raise pytest.UsageError(f"jeval: {exc}; no samples were sent") from None
    if not exports:
        return
    if writer_key not in config.stash:
        raise pytest.UsageError(
            f"jeval: the {' and '.join(e.name for e in exports)} export reads pytest-jeval's results, and a "
            "pytest_jeval_write_results hook replaced its writer; no samples were sent"
        )
    config.pluginmanager.register(ExportPlugin(plan, exports), "jeval-exports")


class ExportPlugin:
    """Runs each export when the writer hands over the finished pairs (``pytest_jeval_results_ready``);
    reports in the terminal summary."""

    def __init__(self, plan: EvalPlan, exports: Sequence[Export]) -> None:
        self.plan = plan
        self.exports = list(exports)
        self.lines: list[tuple[str, bool]] = []
        """(line, failed) for the terminal summary."""
        self.failed = 0
        """Exports that failed (each reported)."""
        from pytest_jeval.core.redact import register

        register(os.environ.get("WANDB_API_KEY"))  # never printed, even if a library echoes it

    @pytest.hookimpl
    def pytest_jeval_results_ready(self, config: pytest.Config, pairs: Sequence[ExportPair]) -> None:
        """Send every finished pair to each export; a failure is reported, never raised."""
        from pytest_jeval.core.redact import redact

        for export in self.exports:
            try:
                self.lines.append((export.send(pairs), False))
            except Exception as exc:  # reported below; the results stay as the writer wrote them
                self.failed += 1
                reason = " ".join(redact(f"{type(exc).__name__}: {exc}").split())[:500]  # one line
                where = Path(self.plan.output_dir)
                self.lines.append((f"jeval: {export.name} export failed ({reason}); the results in {where} "
                                   "are complete, and the exit status is unchanged", True))

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """One line per export: what was sent, or why it failed."""
        for line, failed in self.lines:
            terminalreporter.write_line(line, yellow=failed)
