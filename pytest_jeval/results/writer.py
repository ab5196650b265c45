"""The controller's writer: one JSONL per (benchmark, model), summaries and the aggregate.

Only the controller writes (under xdist, workers ship records inside their test
reports), and only one run writes to an output directory at a time (its lock).
A run replaces exactly the records of the items it ran and keeps every other
record (the rules are in ``docs/results.md``):

* while the run goes, each new record is appended to its pair's JSONL as one whole
  line; nothing stored before is rewritten, so a kill at any moment loses nothing;
* at session end each pair the run touched is compacted atomically to one line per
  record id (the newest), its summary is recomputed over all its records, and the
  aggregate ``summary.json`` lists every pair of the suite that has results.

Pairs no selected item touched keep their files as they are.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.core.chat import is_budget_error
from pytest_jeval.core.files import make_dir, read_bytes, write_atomic
from pytest_jeval.core.paths import aggregate_path, jsonl_path, summary_path, trajectories_path
from pytest_jeval.results.gates import GateResult, evaluate_gates, has_gates
from pytest_jeval.results.jsonl import JsonlAppender, ResultsWriteError, read_jsonl
from pytest_jeval.results.lock import LockedError, RunLock
from pytest_jeval.results.records import pair_of
from pytest_jeval.results.resume import read_resumed
from pytest_jeval.results.sanitize import json_line
from pytest_jeval.results.summary import summarize, write_summary
from pytest_jeval.session.keys import plan_key, runtime_key
from pytest_jeval.suite.plan import EvalPlan
from pytest_jeval.telemetry.session import RunTelemetry

__all__ = ["BUDGET_EXIT_STATUS", "ResultsWriter", "install", "jsonl_path", "worker_stats_key", "writer_key"]

BUDGET_EXIT_STATUS = 6
"""The exit status of a run the budget stopped (pytest's own are 0-5): its results are written, and the
items it did not run are "budget exhausted" errors that ``--jeval-resume`` runs once the budget is raised."""

Pair = tuple[str, str]

writer_key = pytest.StashKey["ResultsWriter"]()
"""The controller's results writer (``config.stash``; absent on workers and when a plugin replaced it)."""
worker_stats_key = pytest.StashKey[list[dict[str, Any]]]()
"""Each finished xdist worker's call statistics (``config.stash``, controller)."""


def check_output_dir(path: Path) -> None:
    """Raise ``pytest.UsageError`` unless ``path`` is (or can be made) a writable directory."""
    probe = path
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if not os.path.isdir(probe):
        what = "is a file" if probe == path else f"is inside {probe}, which is a file"
        raise pytest.UsageError(f"jeval: output_dir {path} {what}, not a directory; no samples were sent")
    if not os.access(probe, os.W_OK | os.X_OK):
        where = "" if probe == path else f" (its parent {probe} cannot be written)"
        raise pytest.UsageError(
            f"jeval: output_dir {path} is not writable{where} (read-only file system or "
            "permissions); no samples were sent"
        )


def case_of_nodeid(plan: EvalPlan, nodeid: str) -> dict[str, Any] | None:
    """The sample a benchmark item's node id names (``<suite>::<benchmark>::<test>[<model slug>/<sample id>]``),
    found in the plan: how the controller learns which sample a worker killed during its setup was running
    (a setup report, which carries it otherwise, never came). None when the id names no planned sample."""
    head, bracket, param = nodeid.partition("[")
    if not bracket or not param.endswith("]"):
        return None
    param = param[:-1]
    bench = next((part for part in head.split("::")[1:] if part in plan.benchmarks), None)
    if bench is None:
        return None
    try:
        samples = plan.samples(bench)[0]
    except Exception:  # a data file that cannot be read now: no record can be made for it
        return None
    for key, model in plan.models.items():
        prefix = model.slug + "/"
        for sample in samples:
            raw = prefix + sample.id
            if param == raw or param == raw.encode("unicode_escape").decode("ascii"):
                return {"benchmark": bench, "model": key, "record_id": sample.id}
    return None


def _crash_record(plan: EvalPlan, case: dict[str, Any], error: str) -> dict[str, Any]:
    """The error record of a sample whose xdist worker died while running it."""
    from pytest_jeval.results.records import EXTRA_FIELDS, RECORD_FIELDS, identity_fields

    record: dict[str, Any] = dict.fromkeys(RECORD_FIELDS + EXTRA_FIELDS)
    bench, model = case["benchmark"], case["model"]  # the entries' keys
    sample = next((s for s in plan.samples(bench)[0] if s.id == case["record_id"]), None)
    record.update(
        record_id=case["record_id"],
        **identity_fields(bench, model, plan.benchmarks[bench].entry, plan.models[model]),
        backend="direct",
        error=error,
        scoring_metadata={},
        unscored=False,
        cached=False,
    )
    if sample is not None:
        record.update(subject=sample.subject, question=sample.input, expected=sample.target)
        if sample.metadata.get("repeat") is not None:
            record.update(repeat=sample.metadata["repeat"], repeat_of=sample.metadata.get("repeat_of"))
    plain: dict[str, Any] = json.loads(json.dumps(record, default=str))
    return plain


def install(config: pytest.Config) -> None:
    """pytest-jeval's results writer, or the one a ``pytest_jeval_write_results`` hook returns (controller only)."""
    if hasattr(config, "workerinput"):
        return
    plan = config.stash[plan_key]
    resume = bool(config.getoption("jeval_resume"))
    replacement = config.hook.pytest_jeval_write_results(config=config, plan=plan)
    if replacement is not None:
        if resume:
            raise pytest.UsageError(
                "jeval: --jeval-resume needs pytest-jeval's results writer, and a "
                "pytest_jeval_write_results hook replaced it"
            )
        config.pluginmanager.register(replacement, "jeval-writer")
        return
    run = plan.suite.run
    telemetry = None
    if run.telemetry or run.gpu_metrics or config.getoption("jeval_energy"):
        telemetry = RunTelemetry(run.gpu_devices)
    writer = ResultsWriter(plan, resume=resume, telemetry=telemetry)
    config.stash[writer_key] = writer
    config.pluginmanager.register(writer, "jeval-writer")


@dataclasses.dataclass(frozen=True)
class ResultsPair:
    """One finished (benchmark, model) pair: its summary (as written) and the records its JSONL keeps."""

    benchmark: str
    model: str
    summary: dict[str, Any]
    records: list[dict[str, Any]]


class ResultsWriter:
    """Registered on the controller only, and unregistered in ``pytest_unconfigure`` (like junitxml's ``LogXML``).

    Its hooks: ``pytest_sessionstart`` (check the output dir, take its lock, read
    finished records under resume), ``pytest_runtest_logreport`` (append each
    record), ``pytest_sessionfinish`` (compact, summarize, gates, ``summary.json``),
    ``pytest_terminal_summary`` (the results table) and ``pytest_unconfigure``.
    """

    def __init__(self, plan: EvalPlan, *, resume: bool, telemetry: RunTelemetry | None = None) -> None:
        self.plan = plan
        self.telemetry = telemetry
        self.resume = resume
        self.started_at = time.time()
        self.summaries: dict[Pair, dict[str, Any]] = {}
        """Summaries of the pairs this run touched."""
        self.written = 0
        self.files: list[Path] = []
        self.full_pairs: set[Pair] | None = None
        """Pairs all of whose samples this run selected (None: not known, e.g. every worker crashed)."""
        self.notes: list[str] = []
        """Things the terminal summary reports (repairs, crashed workers, failed writes)."""
        self.write_error: str | None = None
        self.lost_records = 0
        """Records that could not be stored after ``write_error``."""
        self.lock: RunLock | None = None
        self._logs: dict[Path, JsonlAppender] = {}
        self._fresh: dict[Path, set[str]] = {}
        self._touched: set[Pair] = set()
        self._pending: dict[str, dict[str, Any]] = {}
        self._created: list[Path] = []
        self._session: pytest.Session | None = None
        self.gates: list[GateResult] = []
        """The gates checked at session end."""
        self._previous_served: dict[Pair, tuple[set[str], set[str]]] = {}
        self.budget_exhausted = 0
        """Items of this run the run budget stopped (recorded as "budget exhausted" errors)."""
        self.served_changes: dict[Pair, str] = {}
        """Pairs whose answers were served by a model or fingerprint the summary this run replaced did not
        name, in words (``served_change``)."""

    # -- session start ----------------------------------------------------------------
    def prepare(self) -> dict[Pair, dict[str, dict[str, Any]]]:
        """Check and create the output dir, take its lock, and read finished records under resume.

        Nothing stored is changed here: what a run replaces is decided at its end.
        """
        out = self.plan.output_dir
        check_output_dir(out)
        try:
            self._created = make_dir(out)
            self.lock = RunLock(out)
            self.lock.acquire()
        except LockedError as exc:
            self.lock = None
            self._remove_created()
            raise pytest.UsageError(str(exc)) from None
        except OSError as exc:
            self.lock = None
            raise pytest.UsageError(f"jeval: cannot use output_dir {out}: {exc}; no samples were sent") from None
        if self.lock.took_over:
            self.notes.append(f"took over the lock of an earlier run that is no longer running ({self.lock.took_over})")
        self._read_previous_served()
        resumed: dict[Pair, dict[str, dict[str, Any]]] = {}
        if self.resume:
            try:
                resumed = read_resumed(self.plan)
            except OSError as exc:
                self.release()
                raise pytest.UsageError(f"jeval: cannot resume from {exc}; no samples were sent") from None
        return resumed

    def _read_previous_served(self) -> None:
        """What served each pair's stored results (its summary's ``served`` block), to tell a changed
        fingerprint at the end."""
        from pytest_jeval.results.served import served_values

        for bench in self.plan.benchmarks:
            for model in self.plan.models:
                spath = summary_path(jsonl_path(self.plan.output_dir, bench, model))
                try:
                    data = json.loads(read_bytes(spath) or b"null")
                except (OSError, ValueError):
                    continue
                if isinstance(data, dict):
                    self._previous_served[(bench, model)] = served_values(data)

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Keep the session (to stop it when results cannot be stored); prepare the output dir."""
        self._session = session
        config = session.config
        if config.option.collectonly or config.getoption("setupplan", False):
            return
        config.stash[runtime_key].resumed = self.prepare()
        if self.telemetry is not None:
            self.telemetry.start()

    # -- records ----------------------------------------------------------------------
    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Append the record carried by a report, as one whole line."""
        case: dict[str, Any] | None = getattr(report, "jeval_case", None)
        if case is not None:
            self._pending[report.nodeid] = case
        record: dict[str, Any] | None = getattr(report, "jeval_record", None)
        if record is None:
            if str(report.when) == "???" and report.failed:  # xdist: the worker died running this item
                self._crashed(report)
            return
        self._pending.pop(report.nodeid, None)
        pair = pair_of(record)
        self._touched.add(pair)
        if not getattr(report, "jeval_resumed", False):
            trajectory: dict[str, Any] | None = getattr(report, "jeval_trajectory", None)
            if trajectory is not None:  # before its record: a kill between the two leaves no record without one
                self._append(pair, trajectory, sidecar=True)
            self._append(pair, record)

    def _crashed(self, report: pytest.TestReport) -> None:
        case = self._pending.pop(report.nodeid, None) or case_of_nodeid(self.plan, report.nodeid)
        if case is None:
            self.notes.append(f"a worker crashed while setting up {report.nodeid}; no record was made for it")
            return
        pair = (case["benchmark"], case["model"])
        self._touched.add(pair)
        self._append(pair, _crash_record(self.plan, case, f"worker crashed: {report.longrepr}"))

    def _append(self, pair: Pair, record: dict[str, Any], *, sidecar: bool = False) -> None:
        if self.write_error is not None:
            self.lost_records += 0 if sidecar else 1
            return
        path = self.plan.jsonl_path(*pair)
        if sidecar:
            path = trajectories_path(path)
        log = self._logs.get(path)
        if log is None:
            log = self._logs[path] = JsonlAppender(path)
        try:
            log.append(json_line(record))
        except ResultsWriteError as exc:
            self.write_error = str(exc)
            self.lost_records += 1
            self._stop(
                f"jeval: results cannot be stored ({exc}). Every line stored so far is whole; "
                "make room and rerun with --jeval-resume"
            )
            return
        if log.repaired:
            self.notes.append(log.repaired)
            log.repaired = None
        if sidecar:
            return
        self._fresh.setdefault(path, set()).add(str(record["record_id"]))
        self.written += 1
        if is_budget_error(record.get("error")):
            self.budget_exhausted += 1

    def _stop(self, reason: str) -> None:
        """Stop the run after the items in progress (xdist's controller, or the session)."""
        session = self._session
        if session is None:
            return
        dsession = session.config.pluginmanager.get_plugin("dsession")
        if dsession is not None and hasattr(dsession, "shouldstop"):
            if not dsession.shouldstop:
                dsession.shouldstop = reason
        elif not session.shouldstop:
            session.shouldstop = reason

    def close(self) -> None:
        """Close the JSONL descriptors."""
        for log in self._logs.values():
            log.close()

    def release(self) -> None:
        """Close everything, drop the lock, and remove directories this run made if they stayed empty."""
        self.close()
        if self.lock is not None:
            self.lock.release()
            self.lock = None
        self._remove_created()

    def _remove_created(self) -> None:
        for directory in reversed(self._created):
            try:
                os.rmdir(directory)
            except OSError:
                break  # not empty (or gone): it and its parents stay
        self._created = []

    # -- session end ------------------------------------------------------------------
    def _skipped(self, bench: str) -> int | None:
        try:
            return self.plan.samples(bench)[1]
        except Exception:  # the data could not be loaded here; the count is unknown
            return None

    def _kept(self, pair: Pair, path: Path) -> tuple[dict[str, dict[str, Any]], bool]:
        """The records a touched pair keeps, and whether its file must be rewritten."""
        content = read_jsonl(path)
        records = content.records
        rewrite = not content.compact
        if content.unreadable:
            self.notes.append(f"{path.name}: dropped {content.unreadable} unreadable line(s)")
        if not self.resume and self.full_pairs is not None and pair in self.full_pairs:
            # a full, unselected run starts the pair afresh: records of samples the suite
            # no longer plans go; those of planned samples it did not reach (-x) stay
            planned = {s.id for s in self.plan.samples(pair[0])[0]}
            fresh = self._fresh.get(path, set())
            stale = [rid for rid in records if rid not in planned and rid not in fresh]
            for rid in stale:
                del records[rid]
            rewrite = rewrite or bool(stale)
        return records, rewrite

    def _stored_run(self, pair: Pair) -> dict[str, Any] | None:
        """An untouched pair's entry in the aggregate: its stored summary, as it is."""
        path = self.plan.jsonl_path(*pair)
        if not path.is_file():
            return None
        spath = summary_path(path)
        try:
            data = json.loads(read_bytes(spath) or b"null")
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict):
            try:
                records = list(read_jsonl(path).records.values())
            except OSError as exc:
                self.notes.append(f"{path.name} could not be read ({exc.strerror or exc}); it is not in summary.json")
                return None
            data = summarize(records, **self._names(pair), category=self.plan.benchmarks[pair[0]].benchmark.category)
        return {"jsonl": path.name, "summary": spath.name, **data}

    def _names(self, pair: Pair) -> dict[str, Any]:
        """The summary's ``benchmark`` and ``model`` (the names) and labels of the pair with these keys."""
        entry, model = self.plan.benchmarks[pair[0]].entry, self.plan.models[pair[1]]
        return {"benchmark": entry.name, "model": model.name, "benchmark_label": entry.label,
                "model_label": model.label}

    def finish(self) -> dict[str, Any] | None:
        """Compact and summarize each touched pair; the aggregate summary, or None when nothing ran."""
        self.close()
        if not self._touched:
            return None
        ended = time.time()
        kept: dict[Pair, tuple[Path, dict[str, dict[str, Any]], bool]] = {}
        for bench in self.plan.benchmarks:
            for model in self.plan.models:
                if (bench, model) in self._touched:
                    path = self.plan.jsonl_path(bench, model)
                    try:
                        records, rewrite = self._kept((bench, model), path)
                    except OSError as exc:
                        self.notes.append(
                            f"{path.name} could not be read back ({exc.strerror or exc}); no summary was written for it"
                        )
                        continue
                    kept[(bench, model)] = (path, records, rewrite)
        if self.telemetry is not None:
            fresh = [
                r for path, recs, _ in kept.values() for rid, r in recs.items() if rid in self._fresh.get(path, ())
            ]
            self.telemetry.attribute(fresh)
            kept = {
                pair: (path, recs, rewrite or bool(self._fresh.get(path)))
                for pair, (path, recs, rewrite) in kept.items()
            }
        runs = []
        for bench, planned in self.plan.benchmarks.items():
            for model in self.plan.models:
                if (bench, model) in self._touched and (bench, model) not in kept:
                    continue
                if (bench, model) not in kept:
                    stored = self._stored_run((bench, model))
                    if stored is not None:
                        runs.append(stored)
                    continue
                path, records, rewrite = kept[(bench, model)]
                if not records:
                    continue
                if rewrite:
                    self._write(path, b"".join(json_line(r) for r in records.values()))
                self._compact_trajectories(path, records)
                values = list(records.values())
                summary = summarize(
                    values,
                    **self._names((bench, model)),
                    category=planned.benchmark.category,
                    started_at=self.started_at,
                    ended_at=ended,
                )
                if planned.benchmark.summarize_extra is not None:
                    summary.update(planned.benchmark.summarize_extra(values))
                summary["skipped_rows"] = self._skipped(bench)
                self._check_served((bench, model), summary)
                if self._session is not None:
                    self._session.config.hook.pytest_jeval_update_summary(summary=summary, records=values)
                spath = summary_path(path)
                self._write_summary(spath, summary)
                self.summaries[(bench, model)] = summary
                self.files.append(path)
                runs.append({"jsonl": path.name, "summary": spath.name, **summary})
        aggregate = {
            "suite": self.plan.suite.meta.name or self.plan.path.stem,
            "description": self.plan.suite.meta.description,
            "suite_file": str(self.plan.path),
            "overrides": list(self.plan.overrides),
            "started_at": self.started_at,
            "ended_at": ended,
            "runs": runs,
        }
        if self.served_changes:
            aggregate["served_changes"] = [{"benchmark": b, "model": m, "change": c}
                                           for (b, m), c in self.served_changes.items()]
        if self.telemetry is not None:
            aggregate["telemetry"] = self.telemetry.summary()
        return aggregate

    def _budget(self, config: pytest.Config) -> dict[str, Any] | None:
        """The aggregate's ``budget`` block (limits, what the run spent, items stopped); a note when it stopped
        items. None without a budget."""
        run = self.plan.suite.run
        if run.max_cost_usd is None and run.max_total_tokens is None:
            return None
        from pytest_jeval.session.budget import spent

        used = spent(config)
        block: dict[str, Any] = {"max_cost_usd": run.max_cost_usd, "max_total_tokens": run.max_total_tokens,
                                 "spent_usd": used[0] if used else None,
                                 "spent_tokens": int(used[1]) if used else None,
                                 "exhausted": self.budget_exhausted > 0, "items_stopped": self.budget_exhausted}
        if self.budget_exhausted:
            self.notes.append(
                f"the run budget is exhausted: {self.budget_exhausted} item(s) were not run and are recorded as "
                f'"budget exhausted" errors (exit status {BUDGET_EXIT_STATUS}); raise [run] max_cost_usd / '
                "max_total_tokens and rerun with --jeval-resume to run them")
        return block

    def _check_served(self, pair: Pair, summary: dict[str, Any]) -> None:
        """Note a pair served by several models or fingerprints, or by others than the results it replaces."""
        from pytest_jeval.results.served import served_change, served_values

        served = summary.get("served")
        if isinstance(served, dict) and served.get("warning"):
            self.notes.append(f"{pair[0]} x {pair[1]}: {served['warning']}")
        previous = self._previous_served.get(pair)
        change = served_change(previous, served_values(summary), "the stored results") if previous else None
        if change is not None:
            self.served_changes[pair] = change
            self.notes.append(f"{pair[0]} x {pair[1]}: this run was served {change}: the endpoint's model or "
                              "configuration changed since (drift, not noise)")

    def _compact_trajectories(self, path: Path, records: dict[str, dict[str, Any]]) -> None:
        """Keep one trajectory per stored record (the newest), in the records' order; drop those of dropped records."""
        sidecar = trajectories_path(path)
        try:
            content = read_jsonl(sidecar)
        except OSError as exc:
            self.notes.append(f"{sidecar.name} could not be read back ({exc.strerror or exc}); it was left as it is")
            return
        if not content.records and not content.unreadable:
            return
        kept = [content.records[rid] for rid in records if rid in content.records]
        if content.unreadable:
            self.notes.append(f"{sidecar.name}: dropped {content.unreadable} unreadable line(s)")
        if content.compact and len(kept) == len(content.records):
            return
        self._write(sidecar, b"".join(json_line(t) for t in kept))

    def write_aggregate(self, aggregate: dict[str, Any]) -> None:
        """Write ``summary.json`` (a failure is noted, not raised)."""
        self._write_summary(aggregate_path(self.plan.output_dir), aggregate)

    def _write(self, path: Path, data: bytes) -> None:
        try:
            write_atomic(path, data)
        except OSError as exc:
            if self.write_error is None:  # else the run already stopped saying why
                self.notes.append(
                    f"{path.name} was not compacted ({exc.strerror or exc}); it keeps every whole "
                    "line, and readers take the newest line of each record"
                )

    def _write_summary(self, path: Path, summary: dict[str, Any]) -> None:
        try:
            write_summary(path, summary)
        except OSError as exc:
            if self.write_error is None:
                self.notes.append(
                    f"{path.name} was not written ({exc.strerror or exc}); `jeval summarize` recomputes it"
                )

    # -- hooks at the end -------------------------------------------------------------
    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Write the summaries and ``summary.json``; gates decide the exit status when the suite sets any."""
        aggregate = self.finish()
        if aggregate is None:  # nothing ran (--collect-only, -k matching nothing): nothing is written
            return
        budget = self._budget(session.config)
        if budget is not None:
            aggregate["budget"] = budget
        self.gates = evaluate_gates(self.plan, self.summaries) if has_gates(self.plan) else []
        aggregate["gates"] = [g.__dict__ for g in self.gates]
        if self.summaries:
            self.write_aggregate(aggregate)
        if self.gates and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            passed = all(g.passed for g in self.gates)
            session.exitstatus = pytest.ExitCode.OK if passed else pytest.ExitCode.TESTS_FAILED
        if self.budget_exhausted and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            session.exitstatus = BUDGET_EXIT_STATUS
        if self.summaries:
            self.announce(session.config)

    def announce(self, config: pytest.Config) -> None:
        """Hand every written pair to ``pytest_jeval_results_ready`` (exporters, third-party sinks)."""
        from pytest_jeval.results.summary import read_records

        try:
            pairs = [ResultsPair(bench, model, summary, read_records(self.plan.jsonl_path(bench, model)))
                     for (bench, model), summary in self.summaries.items()]
        except OSError as exc:
            self.notes.append(f"jeval: the results could not be read back for pytest_jeval_results_ready: {exc}")
            return
        config.hook.pytest_jeval_results_ready(config=config, pairs=pairs)

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
        """The results table, the gates and the call statistics."""
        from pytest_jeval.results.table import write_terminal_summary

        runtime = config.stash[runtime_key]
        stats = config.stash.get(worker_stats_key, []) or [dict(vars(runtime.stats))]
        write_terminal_summary(terminalreporter, self, stats)

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Release the output dir, stop the telemetry, and unregister."""
        self.release()
        if self.telemetry is not None:
            self.telemetry.stop()
        if writer_key in config.stash:
            del config.stash[writer_key]
        config.pluginmanager.unregister(self)
