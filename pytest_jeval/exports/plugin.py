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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.suite.plan import EvalPlan


@dataclasses.dataclass(frozen=True)
class ExportPair:
    """One (benchmark, model) pair of the run: its summary (as written) and the records it keeps."""

    benchmark: str
    model: str
    summary: dict[str, Any]
    records: list[dict[str, Any]]


@dataclasses.dataclass(frozen=True)
class Export:
    """One configured export: its name for messages, and the call that sends the pairs (returns one line)."""

    name: str
    send: Callable[[Sequence[ExportPair]], str]


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
    from pytest_jeval.exports import sheets, wandb

    run = plan.suite.run
    suite_name = plan.suite.meta.name or plan.path.stem
    exports: list[Export] = []
    wandb_settings = wandb.settings_from(run, suite_name)
    if wandb_settings is not None:
        require(wandb.MODULES, "wandb", "wandb_project")
        exports.append(Export("W&B", lambda pairs: wandb.export(wandb_settings, pairs)))
    sheets_settings = sheets.settings_from(run, suite_name, plan.path)
    if sheets_settings is not None:
        require(sheets.MODULES, "sheets", "sheets_spreadsheet_id")
        sheets.check_credentials(sheets_settings)
        exports.append(Export("Google Sheets", lambda pairs: sheets.export(sheets_settings, pairs)))
    return exports


def install(config: pytest.Config, plan: EvalPlan) -> None:
    """Register the exports plugin on the controller when the suite sets any export key."""
    from pytest_jeval.exports.sheets import SheetsError
    from pytest_jeval.exports.wandb import WandbError
    from pytest_jeval.results.writer import writer_key

    try:
        exports = configured(plan)
    except (SheetsError, WandbError) as exc:
        raise pytest.UsageError(f"jeval: {exc}; no samples were sent") from None
    if not exports:
        return
    if writer_key not in config.stash:
        raise pytest.UsageError(
            f"jeval: the {' and '.join(e.name for e in exports)} export reads pytest-jeval's results, and a "
            "pytest_jeval_write_results hook replaced its writer; no samples were sent"
        )
    config.pluginmanager.register(ExportPlugin(plan, exports), "jeval-exports")


def pairs_of(plan: EvalPlan, summaries: dict[tuple[str, str], dict[str, Any]]) -> list[ExportPair]:
    """Each summarized pair with the records its JSONL keeps now (already redacted), in suite order."""
    from pytest_jeval.core.paths import jsonl_path
    from pytest_jeval.results.summary import read_records

    return [
        ExportPair(bench, model, summary, read_records(jsonl_path(plan.output_dir, bench, model)))
        for (bench, model), summary in summaries.items()
    ]


class ExportPlugin:
    """Runs each export after the writer's ``pytest_sessionfinish``; reports in the terminal summary."""

    def __init__(self, plan: EvalPlan, exports: Sequence[Export]) -> None:
        self.plan = plan
        self.exports = list(exports)
        self.lines: list[tuple[str, bool]] = []
        """(line, failed) for the terminal summary."""
        self.failed = 0
        """Exports that failed (each reported)."""
        from pytest_jeval.core.redact import register

        register(os.environ.get("WANDB_API_KEY"))  # never printed, even if a library echoes it

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Send every summarized pair to each export; a failure is reported, never raised."""
        from pytest_jeval.core.redact import redact
        from pytest_jeval.results.writer import writer_key

        writer = session.config.stash.get(writer_key, None)
        if writer is None or not writer.summaries:
            return
        try:
            pairs = pairs_of(self.plan, writer.summaries)
        except OSError as exc:
            self.failed += len(self.exports)
            self.lines.append((f"jeval: exports skipped, the results could not be read back: {exc}", True))
            return
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
