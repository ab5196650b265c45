"""The controller's writer: one JSONL per (benchmark, model), summaries and the aggregate.

Only the controller writes (under xdist, workers ship records inside their test
reports). Each record is appended as one complete line with a single
``os.write`` on an ``O_APPEND`` descriptor, so a killed run leaves only whole
lines and a rerun with ``--jeval-resume`` can carry on.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Optional

import pytest

from pytest_jeval.config import model_slug
from pytest_jeval.plan import EvalPlan
from pytest_jeval.summary import read_records, summarize, write_summary
from pytest_jeval.telemetry.session import RunTelemetry


def jsonl_path(output_dir: Path, benchmark: str, model: str) -> Path:
    """``{output_dir}/{benchmark}_{model-slug}.jsonl``."""
    return output_dir / f"{benchmark}_{model_slug(model)}.jsonl"


def load_resumable(path: Path) -> dict[str, dict[str, Any]]:
    """Completed records of a previous run, by record id.

    Errored records are not completed: they are dropped so the rerun retries
    them. The file is rewritten atomically without them (and without a torn
    last line), keeping exactly one line per record id.
    """
    records = read_records(path)
    kept: dict[str, dict[str, Any]] = {}
    for rec in records:
        if rec.get("error") is None:
            kept[str(rec["record_id"])] = rec
        else:
            kept.pop(str(rec["record_id"]), None)
    if path.exists():
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept.values()), encoding="utf-8")
        tmp.replace(path)
    return kept


class ResultsWriter:
    """Registered on the controller only (like junitxml's ``LogXML``)."""

    def __init__(self, plan: EvalPlan, *, resume: bool, telemetry: Optional[RunTelemetry] = None) -> None:
        self.plan = plan
        self.telemetry = telemetry
        self._written: dict[Path, set[str]] = {}
        self.resume = resume
        self.started_at = time.time()
        self.summaries: dict[tuple[str, str], dict[str, Any]] = {}
        self.written = 0
        self._fds: dict[Path, int] = {}
        self.files: list[Path] = []

    def prepare(self) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
        """Create the output dir; replace old files, or keep them under resume."""
        self.plan.output_dir.mkdir(parents=True, exist_ok=True)
        resumed: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        for bench in self.plan.benchmarks:
            for model in self.plan.models:
                path = jsonl_path(self.plan.output_dir, bench, model)
                if self.resume:
                    resumed[(bench, model)] = load_resumable(path)
                else:
                    for stale in (path, path.with_name(path.name + ".summary.json")):
                        stale.unlink(missing_ok=True)
        return resumed

    def _fd(self, path: Path) -> int:
        fd = self._fds.get(path)
        if fd is None:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._fds[path] = fd
        return fd

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Append the record carried by a report, as one whole line."""
        record: Optional[dict[str, Any]] = getattr(report, "jeval_record", None)
        if record is None or getattr(report, "jeval_resumed", False):
            return
        path = jsonl_path(self.plan.output_dir, record["benchmark"], record["model"])
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        os.write(self._fd(path), line)
        self._written.setdefault(path, set()).add(str(record["record_id"]))
        self.written += 1

    def close(self) -> None:
        """Close the JSONL descriptors."""
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _skipped(self, bench: str) -> Optional[int]:
        try:
            return self.plan.samples(bench)[1]
        except Exception:  # the data could not be loaded here; the count is unknown
            return None

    def _attribute_energy(self) -> None:
        """Fill this session's records with attributed GPU energy and rewrite their files."""
        assert self.telemetry is not None
        files = {path: read_records(path) for path in self._written}
        fresh = [r for path, recs in files.items() for r in recs if str(r["record_id"]) in self._written[path]]
        self.telemetry.attribute(fresh)
        for path, recs in files.items():
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
            tmp.replace(path)

    def finish(self) -> dict[str, Any]:
        """Write one summary per (benchmark, model) with records, and the aggregate summary."""
        self.close()
        ended = time.time()
        if self.telemetry is not None:
            self._attribute_energy()
        runs = []
        for bench, planned in self.plan.benchmarks.items():
            for model in self.plan.models:
                path = jsonl_path(self.plan.output_dir, bench, model)
                records = read_records(path)
                if not records:
                    continue
                summary = summarize(
                    records,
                    benchmark=bench,
                    model=model,
                    category=planned.benchmark.category,
                    started_at=self.started_at,
                    ended_at=ended,
                )
                if planned.benchmark.summarize_extra is not None:
                    summary.update(planned.benchmark.summarize_extra(records))
                summary["skipped_rows"] = self._skipped(bench)
                summary_path = path.with_name(path.name + ".summary.json")
                write_summary(summary_path, summary)
                self.summaries[(bench, model)] = summary
                self.files.append(path)
                runs.append({"jsonl": path.name, "summary": summary_path.name, **summary})
        aggregate = {
            "suite": self.plan.suite.meta.name or self.plan.path.stem,
            "description": self.plan.suite.meta.description,
            "suite_file": str(self.plan.path),
            "started_at": self.started_at,
            "ended_at": ended,
            "runs": runs,
        }
        if self.telemetry is not None:
            aggregate["telemetry"] = self.telemetry.summary()
        return aggregate
