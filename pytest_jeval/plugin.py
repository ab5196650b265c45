"""pytest-jeval: LLM benchmarks as pytest test suites.

Entry point (``pytest11``). Without ``--jeval-config`` the plugin registers its
options and fixtures and otherwise stays silent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generator, Optional

import pytest

from pytest_jeval._keys import case_key, plan_key, runtime_key
from pytest_jeval.fixtures import benchmark_entry, jeval_model, judge, model, response, sample, score  # noqa: F401

if TYPE_CHECKING:
    from pytest_jeval.engines.local import LocalServer
    from pytest_jeval.gates import GateResult
    from pytest_jeval.plan import EvalPlan
    from pytest_jeval.writer import ResultsWriter

# Heavy modules (pydantic, numpy, asyncio, openai) are imported inside the hooks, once
# --jeval-config is given: installing the plugin must not slow down every other pytest run.

writer_key = pytest.StashKey["ResultsWriter"]()
local_server_key = pytest.StashKey["LocalServer"]()
gates_key = pytest.StashKey["list[GateResult]"]()
worker_stats_key = pytest.StashKey[list[dict[str, Any]]]()
full_pairs_key = pytest.StashKey[list[list[str]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``jeval`` option group and its ini twins."""
    group = parser.getgroup("jeval", "LLM benchmarks as tests (pytest-jeval)")
    group.addoption("--jeval-config", dest="jeval_config", metavar="SUITE.toml", default=None,
                    help="run the models x benchmarks matrix of this suite file")
    group.addoption("--jeval-output", dest="jeval_output", metavar="DIR", default=None,
                    help="write results here instead of [run] output_dir")
    group.addoption("--jeval-resume", dest="jeval_resume", action="store_true", default=False,
                    help="keep finished records in the output JSONL, skip those samples, append the rest")
    group.addoption("--jeval-no-cache", dest="jeval_no_cache", action="store_true", default=False,
                    help="do not read or write the on-disk response cache")
    group.addoption("--jeval-list", dest="jeval_list", action="store_true", default=False,
                    help="print the benchmark catalog and exit")
    group.addoption("--jeval-energy", dest="jeval_energy", action="store_true", default=False,
                    help="measure GPU energy around model calls (NVML), like [run] telemetry = true")
    parser.addini("jeval_config", "default suite file for --jeval-config", default=None)
    parser.addini("jeval_output", "default output directory for --jeval-output", default=None)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _dry(config: pytest.Config) -> bool:
    """``--collect-only`` and ``--setup-plan`` send nothing and write nothing."""
    return bool(config.option.collectonly or config.getoption("setupplan", False))


def _option(config: pytest.Config, name: str) -> Optional[str]:
    value = config.getoption(name)
    if value is None:
        value = config.getini(name)
    return str(value) if value else None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> Optional[int]:
    """``--jeval-list`` prints the benchmark and evaluator catalogs (like ``jeval list``) and exits."""
    if not config.getoption("jeval_list"):
        return None
    import argparse

    from pytest_jeval.cli._list import run

    return run(argparse.Namespace(json=False))


def pytest_configure(config: pytest.Config) -> None:
    """Load and validate the suite once; set up the runtime, and the writer on the controller."""
    suite = _option(config, "jeval_config")
    if not suite:
        return
    from pytest_jeval import collect
    from pytest_jeval.collect import suite_args
    from pytest_jeval.config import SuiteError
    from pytest_jeval.notices import Notices, choose_junit_family
    from pytest_jeval.plan import EvalPlan
    from pytest_jeval.runtime import Runtime
    from pytest_jeval.telemetry.session import RunTelemetry
    from pytest_jeval.writer import ResultsWriter

    try:
        plan = EvalPlan.from_file(
            Path(suite),
            invocation_dir=config.invocation_params.dir,
            output_dir=_option(config, "jeval_output"),
            use_cache=not config.getoption("jeval_no_cache"),
        )
    except SuiteError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[plan_key] = plan
    from pytest_jeval.redact_plugin import install as install_redaction
    install_redaction(config, plan)
    junit_notice = choose_junit_family(config)  # before pytest's junitxml reads junit_family
    config.args = suite_args(config, plan.path)
    config.pluginmanager.register(collect, "jeval-collect")
    runtime = Runtime(plan, use_cache=not config.getoption("jeval_no_cache"))
    config.stash[runtime_key] = runtime
    if _is_worker(config):
        plan.local_base_url = config.workerinput.get("jeval_local_url")  # type: ignore[attr-defined]
    else:
        run = plan.suite.run
        telemetry = None
        if run.telemetry or run.gpu_metrics or config.getoption("jeval_energy"):
            telemetry = RunTelemetry(run.gpu_devices)
        writer = ResultsWriter(plan, resume=config.getoption("jeval_resume"), telemetry=telemetry)
        config.stash[writer_key] = writer
        config.pluginmanager.register(writer, "jeval-writer")
        config.stash[worker_stats_key] = []
        config.pluginmanager.register(Notices(junit_notice), "jeval-notices")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the call scheduler and the local model server."""
    runtime = config.stash.get(runtime_key, None)
    if runtime is not None:
        runtime.close()
    server = config.stash.get(local_server_key, None)
    if server is not None:
        server.stop()
    writer = config.stash.get(writer_key, None)
    if writer is not None:
        writer.release()
        if writer.telemetry is not None:
            writer.telemetry.stop()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Prepare outputs, start the local model and check endpoints, before any worker starts."""
    config = session.config
    runtime = config.stash.get(runtime_key, None)
    if runtime is None:
        return
    from pytest_jeval.dataset import DatasetLoadError
    from pytest_jeval.engines.local import LocalModelError, LocalServer

    plan = runtime.plan
    if _is_worker(config):
        if config.getoption("jeval_resume"):
            runtime.resumed = _read_resumed(plan)
        if not config.option.collectonly:
            runtime.expect(_worker_share(config, runtime.estimated_calls()), exact=False)
        return
    for name in plan.benchmarks:  # data problems become usage errors before any worker starts
        try:
            plan.samples(name)
        except DatasetLoadError as exc:
            raise pytest.UsageError(str(exc)) from None
    if _dry(config):
        return
    writer = config.stash[writer_key]
    runtime.resumed = writer.prepare()
    if writer.telemetry is not None:
        writer.telemetry.start()
    if plan.needs_local_model:
        server = LocalServer(plan.local_model_path(), name=next(
            (m.name for m in plan.models.values() if m.engine == "local"), "local"))
        try:
            plan.local_base_url = server.start()
        except LocalModelError as exc:
            raise pytest.UsageError(str(exc)) from None
        config.stash[local_server_key] = server
    from pytest_jeval.runner.scheduler import preflight

    targets: dict[Any, str] = {}
    for m in plan.models:
        targets.setdefault(runtime.endpoint(m), f"model {m!r}")
    if plan.suite.judge is not None:
        targets.setdefault(runtime.endpoint(plan.suite.judge.model, judge=True), "the judge")
    reasons = preflight(list(targets))
    problems = [f"{who}: {reason}" for who, reason in zip(targets.values(), reasons) if reason is not None]
    if problems:
        # UsageError, not pytest.exit(): pytest prints an Exit raised here twice (as
        # "! _pytest.outcomes.Exit: ..." on stdout and "Exit: ..." on stderr); this way
        # the reason is printed once, as "ERROR: jeval: ...", with exit status 4.
        raise pytest.UsageError("jeval: endpoint unusable, no samples were sent:\n  " + "\n  ".join(problems))
    if config.getoption("dist", "no") == "no":  # under xdist the controller makes no calls
        runtime.expect(runtime.estimated_calls(), exact=False)


def _worker_share(config: pytest.Config, calls: int) -> int:
    """This process's share of ``calls``: xdist spreads the items over its workers."""
    if not _is_worker(config):
        return calls
    return calls // max(1, int(config.workerinput.get("workercount", 1)))  # type: ignore[attr-defined]


def _read_resumed(plan: EvalPlan) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    from pytest_jeval.writer import jsonl_path, load_resumable

    return {(bench, model_name): load_resumable(jsonl_path(plan.output_dir, bench, model_name))
            for bench in plan.benchmarks for model_name in plan.models}


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: tell each worker where the controller's local model server listens."""
    plan = node.config.stash.get(plan_key, None)
    if plan is not None and plan.local_base_url:
        node.workerinput["jeval_local_url"] = plan.local_base_url


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist: collect each worker's call statistics for the terminal summary."""
    stats = getattr(node, "workeroutput", {}).get("jeval_stats")
    bucket = node.config.stash.get(worker_stats_key, None)
    if stats and bucket is not None:
        bucket.append(stats)
    full = getattr(node, "workeroutput", {}).get("jeval_full_pairs")
    writer = node.config.stash.get(writer_key, None)
    if full is not None and writer is not None and writer.full_pairs is None:
        writer.full_pairs = {(b, m) for b, m in full}  # every worker collects the same items


def pytest_collection_finish(session: pytest.Session) -> None:
    """Count the calls this process will make; ``call_executor = "auto"`` decides from it."""
    runtime = session.config.stash.get(runtime_key, None)
    if runtime is None or _dry(session.config):
        return
    _apply_selection(session, runtime)
    runtime.expect(_worker_share(session.config, runtime.count_calls(session.items)), exact=True)


def _apply_selection(session: pytest.Session, runtime: Any) -> None:
    """Rerun the finished samples a selection asks for (under resume); note fully selected pairs."""
    from pytest_jeval.results.selection import selection_of

    config = session.config
    selection = selection_of(config, runtime.plan, session.items)
    for bench, model_name, rid in selection.explicit:
        runtime.resumed.get((bench, model_name), {}).pop(rid, None)
    if _is_worker(config):
        config.stash[full_pairs_key] = [list(pair) for pair in sorted(selection.full)]
    else:
        config.stash[writer_key].full_pairs = selection.full


def _upcoming(session: pytest.Session, item: pytest.Item, window: int) -> list[pytest.Item]:
    """The items this process will run next (including ``item``), at most ``window``."""
    items = session.items
    for plugin in session.config.pluginmanager.get_plugins():
        torun = getattr(plugin, "torun", None)
        if type(plugin).__name__ == "WorkerInteractor" and torun is not None:
            with torun.lock() as queue:
                indices = [i for i in list(queue)[:window] if isinstance(i, int)]
            return [item] + [items[i] for i in indices]
    cursor = session.stash.get(_cursor_key, 0)
    while cursor < len(items) and items[cursor] is not item:
        cursor += 1
    session.stash[_cursor_key] = cursor
    return items[cursor : cursor + window]


_cursor_key = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Optional[pytest.Item]) -> None:
    """Send the calls of upcoming items ahead of time."""
    runtime = item.config.stash.get(runtime_key, None)
    if runtime is not None and not _dry(item.config):
        runtime.prefetch(_upcoming(item.session, item, runtime.window))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Attach the item's case (benchmark, model, sample) and any resumed record."""
    runtime = item.config.stash.get(runtime_key, None)
    if runtime is None:
        return
    from pytest_jeval.runtime import ItemCase, case_for

    found = case_for(item)
    if found is None:
        return
    bench, model_name, sample_ = found
    case = ItemCase(benchmark=bench, model=model_name, sample=sample_)
    case.resumed = runtime.is_resumed(bench, model_name, sample_.id)
    item.stash[case_key] = case


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Optional[bool]:
    """A resumed sample reports its stored verdict instead of running again."""
    case = pyfuncitem.stash.get(case_key, None)
    if case is None or case.resumed is None:
        return None
    if case.resumed.get("is_correct") is True:
        return True
    pytest.fail(f"resumed: recorded as {'unscored' if case.resumed.get('is_correct') is None else 'wrong'} in a previous run", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
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
        record = case.resumed
        report.jeval_resumed = True  # type: ignore[attr-defined]
    else:
        from pytest_jeval.records import build_record

        failure = None
        if report.failed and call.excinfo is not None and not isinstance(call.excinfo.value, pytest.fail.Exception):
            failure = call.excinfo.exconly()[:2000]
        if report.when == "setup" and case.error is None:
            case.error = f"setup failed: {failure}"
        plan = item.config.stash[plan_key]
        judge_cfg = plan.suite.judge
        judge_name = (plan.benchmarks[case.benchmark].entry.judge_model or judge_cfg.model) if judge_cfg else None
        record = build_record(case, failure=failure, model_entry=plan.models[case.model], judge_model=judge_name,
                              judge_prices=judge_cfg)
    report.jeval_record = record  # type: ignore[attr-defined]
    from pytest_jeval.notices import junit_properties_key

    if item.config.stash.get(junit_properties_key, True):  # not under a chosen junit_family = xunit2
        for name in ("record_id", "benchmark", "model", "score", "latency_seconds"):
            item.user_properties.append((name if name != "latency_seconds" else "latency", record.get(name)))
    return report


def _replace_surrogates(report: pytest.TestReport) -> None:
    """A reply's lone surrogate quoted in a failure message or captured output becomes U+FFFD:
    xdist cannot send such text to the controller, and no terminal can show it."""
    import re

    lone = re.compile("[\ud800-\udfff]")
    if report.longrepr is not None and lone.search(str(report.longrepr)):
        report.longrepr = lone.sub("\ufffd", str(report.longrepr))
    report.sections = [(title, lone.sub("\ufffd", text)) for title, text in report.sections]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Workers report call stats; the controller writes summaries and applies gates."""
    config = session.config
    runtime = config.stash.get(runtime_key, None)
    if runtime is None:
        return
    if _is_worker(config):
        config.workeroutput["jeval_stats"] = dict(vars(runtime.stats))  # type: ignore[attr-defined]
        if full_pairs_key in config.stash:
            config.workeroutput["jeval_full_pairs"] = config.stash[full_pairs_key]  # type: ignore[attr-defined]
        return
    from pytest_jeval.gates import evaluate_gates, has_gates

    writer = config.stash[writer_key]
    aggregate = writer.finish()
    if aggregate is None:  # nothing ran (--collect-only, -k matching nothing): nothing is written
        return
    gates = evaluate_gates(runtime.plan, writer.summaries) if has_gates(runtime.plan) else []
    config.stash[gates_key] = gates
    aggregate["gates"] = [g.__dict__ for g in gates]
    if writer.summaries:
        writer.write_aggregate(aggregate)
    if gates and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        session.exitstatus = pytest.ExitCode.OK if all(g.passed for g in gates) else pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The results table, the gates and the call statistics."""
    writer = config.stash.get(writer_key, None)
    if writer is None:
        return
    from pytest_jeval.terminal import results_table

    tr = terminalreporter
    runtime = config.stash[runtime_key]
    for note in writer.notes:
        tr.write_line(f"jeval: {note}", yellow=True)
    if writer.summaries:
        tr.write_sep("=", "jeval results")
        for line in results_table(writer.summaries):
            tr.write_line(line)
        gates = config.stash.get(gates_key, [])
        if gates:
            tr.write_line("")
            tr.write_line("gates:")
            for g in gates:
                tr.write_line(f"  {g.describe()}", green=g.passed, red=not g.passed)
        stats = config.stash.get(worker_stats_key, []) or [dict(vars(runtime.stats))]
        sent = sum(s["requests_sent"] for s in stats)
        hits = sum(s["cache_hits"] for s in stats)
        retries = sum(s["retries"] for s in stats)
        peak = max(s["max_in_flight"] for s in stats)
        spans = [s["last_completion_at"] - s["first_request_at"] for s in stats if s["first_request_at"] is not None and s["last_completion_at"] is not None]
        rate = f", {sent / max(spans):.1f} requests/s in-call" if spans and max(spans) > 0 and sent else ""
        tr.write_line("")
        helpers = sum(s.get("call_processes", 0) for s in stats)
        where = f", HTTP client in {helpers} call process{'es' if helpers > 1 else ''}" if helpers else ""
        tr.write_line(f"calls: {sent} sent, {hits} from cache, {retries} retries, peak {peak} in flight{rate}{where}")
        exits = sum(s.get("call_process_exits", 0) for s in stats)
        if exits:
            tr.write_line(f"jeval: the call process exited {exits} time(s) mid-run; its unanswered calls were "
                          "sent again, and later calls ran, in the pytest process", yellow=True)
            for error in (e for s in stats for e in s.get("call_process_errors", ())):
                tr.write_line(f"  {error}", yellow=True)
        tr.write_line(f"results: {runtime.plan.output_dir}{os.sep} ({len(writer.files)} JSONL files, summary.json)")
    if writer.telemetry is not None:
        notice = writer.telemetry.notice()
        if notice:
            tr.write_line(f"jeval: {notice}", yellow=True)
        block = writer.telemetry.summary()
        if block["total_energy_joules"] is not None:
            tr.write_line(
                f"energy: {block['total_energy_joules']:.1f} J measured, {block['attributed_energy_joules']:.1f} J "
                f"attributed to calls, {block['idle_energy_joules']:.1f} J idle"
            )
