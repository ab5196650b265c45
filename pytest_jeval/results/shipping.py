"""Records ride on test reports: built where the item ran, shipped to the controller by xdist.

:class:`RecordHooks` is registered on the controller and on every xdist worker
when a suite runs. It builds each finished item's record (``report.jeval_record``),
lets plugins edit it (``pytest_jeval_update_record``), applies the session's
selection, and carries what workers know back to the controller.

pytest-xdist internals used here: ``config.workerinput`` (present on a worker) and
``config.workeroutput`` / ``node.workeroutput`` (a dict the worker fills in
``pytest_sessionfinish`` and the controller reads in ``pytest_testnodedown``).
``tests/acceptance/test_xdist_internals.py`` fails when they change.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, cast

import pytest

from pytest_jeval.session.keys import case_key, plan_key, runtime_key

full_pairs_key = pytest.StashKey[list[list[str]]]()
"""A worker's fully selected (benchmark, model) pairs, sent to the controller."""


def _replace_surrogates(report: pytest.TestReport) -> None:
    """A reply's lone surrogate quoted in a failure message or captured output becomes U+FFFD:
    xdist cannot send such text to the controller, and no terminal can show it."""
    import re

    lone = re.compile("[\ud800-\udfff]")
    if report.longrepr is not None and lone.search(str(report.longrepr)):
        report.longrepr = lone.sub("\ufffd", str(report.longrepr))
    report.sections = [(title, lone.sub("\ufffd", text)) for title, text in report.sections]


class RecordHooks:
    """Builds records on the process that ran the item; applies the selection; xdist hand-over."""

    def __init__(self, *, worker: bool) -> None:
        self.worker = worker

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Rerun the finished samples a selection asks for (under resume); note fully selected pairs.

        Runs before the runtime counts the calls of the collected items.
        """
        config = session.config
        if config.option.collectonly or config.getoption("setupplan", False):
            return
        from pytest_jeval.results.selection import selection_of
        from pytest_jeval.results.writer import writer_key

        runtime = config.stash[runtime_key]
        selection = selection_of(config, runtime.plan, session.items)
        for bench, model_name, rid in selection.explicit:
            runtime.resumed.get((bench, model_name), {}).pop(rid, None)
        if self.worker:
            config.stash[full_pairs_key] = [list(pair) for pair in sorted(selection.full)]
        elif writer_key in config.stash:
            config.stash[writer_key].full_pairs = selection.full

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """Attach the sample's record (JSON builtins) to the report that finishes it."""
        report = yield
        case = item.stash.get(case_key, None)
        if case is None:
            return report
        if report.failed or report.sections:
            _replace_surrogates(report)
        finished = report.when == "call" or (report.when == "setup" and report.failed)
        if not finished:
            if report.when == "setup" and case.resumed is None:  # lets the controller record a worker crash
                report.jeval_case = {"benchmark": case.benchmark, "model": case.model,  # type: ignore[attr-defined]
                                     "record_id": case.sample.id}
            return report
        if case.resumed is not None:
            record: dict[str, Any] = case.resumed
            report.jeval_resumed = True  # type: ignore[attr-defined]
        else:
            record = self._build(item, case, report, call)
            self._trajectory(item, case, report, record)
        report.jeval_record = record  # type: ignore[attr-defined]
        from pytest_jeval.session.notices import junit_properties_key

        if item.config.stash.get(junit_properties_key, True):  # not under a chosen junit_family = xunit2
            for name in ("record_id", "benchmark", "model", "score", "latency_seconds"):
                item.user_properties.append((name if name != "latency_seconds" else "latency", record.get(name)))
        return report

    @staticmethod
    def _trajectory(item: pytest.Item, case: Any, report: pytest.TestReport, record: dict[str, Any]) -> None:
        """An agent item's trajectory: in the record (``inline``), on the report for the sidecar file, or dropped."""
        from pytest_jeval.results.records import trajectory

        mode = item.config.stash[plan_key].suite.run.trajectories
        if mode == "off" or case.episode is None:
            return
        found = trajectory(case, record)
        if mode == "inline" and found is not None:
            record["trajectory"] = {k: v for k, v in found.items() if k not in ("record_id", "benchmark", "model")}
        else:
            report.jeval_trajectory = found  # type: ignore[attr-defined]

    @staticmethod
    def _build(item: pytest.Item, case: Any, report: pytest.TestReport, call: pytest.CallInfo[None]) -> dict[str, Any]:
        from pytest_jeval.results.records import build_record, plain

        failure = None
        if report.failed and call.excinfo is not None and not isinstance(call.excinfo.value, pytest.fail.Exception):
            failure = call.excinfo.exconly()[:2000]
        if report.when == "setup" and case.error is None:
            case.error = f"setup failed: {failure}"
        plan = item.config.stash[plan_key]
        judge_cfg = plan.suite.judge
        judge_name = (plan.benchmarks[case.benchmark].entry.judge_model or judge_cfg.model) if judge_cfg else None
        record = cast("dict[str, Any]", build_record(case, failure=failure, model_entry=plan.models[case.model],
                                                     judge_model=judge_name, judge_prices=judge_cfg,
                                                     backend=plan.benchmarks[case.benchmark].backend,
                                                     benchmark_entry=plan.benchmarks[case.benchmark].entry))
        if case.judge_repeats and case.error is None:  # judge_repeats: each ask's verdict, by the benchmark's scorer
            from pytest_jeval.results.repeats import judge_verdicts

            record["judge_verdicts"] = judge_verdicts(dict(record), case.judge_repeats,
                                                      plan.benchmarks[case.benchmark].benchmark.scorer, case.sample)
            if isinstance(record.get("judge"), dict):
                record["judge"]["repeats"] = 1 + max(len(texts) for texts in case.judge_repeats)
        hook = item.config.hook.pytest_jeval_update_record
        if not hook.get_hookimpls():  # the common case: no copy
            return record
        hook(record=record, item=item)
        builtins: dict[str, Any] = plain(record)
        return builtins

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """A worker sends its call statistics and fully selected pairs to the controller."""
        config = session.config
        if not self.worker:
            return
        config.workeroutput["jeval_stats"] = dict(vars(config.stash[runtime_key].stats))  # type: ignore[attr-defined]
        if full_pairs_key in config.stash:
            config.workeroutput["jeval_full_pairs"] = config.stash[full_pairs_key]  # type: ignore[attr-defined]

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """xdist (controller): collect each worker's call statistics and fully selected pairs."""
        from pytest_jeval.results.writer import worker_stats_key, writer_key

        output = getattr(node, "workeroutput", {})
        stats = output.get("jeval_stats")
        if stats:
            node.config.stash.setdefault(worker_stats_key, []).append(stats)
        full = output.get("jeval_full_pairs")
        writer = node.config.stash.get(writer_key, None)
        if full is not None and writer is not None and writer.full_pairs is None:
            writer.full_pairs = {(b, m) for b, m in full}  # every worker collects the same items


def install(config: pytest.Config) -> None:
    """Records built where items run and shipped to the controller (every process)."""
    config.pluginmanager.register(RecordHooks(worker=hasattr(config, "workerinput")), "jeval-records")
