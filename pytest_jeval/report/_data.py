"""Result files as ``jeval`` and the report read them: records, the stored summary, a recomputed one.

A summary is a function of the records (``pytest_jeval.summary.summarize``); the
stored ``.summary.json`` also carries what the records cannot give back (run start
and end, ``skipped_rows``) and the benchmark's ``summarize_extra`` fields, which a
recompute reproduces only for built-in benchmarks.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import math
from pathlib import Path
from typing import Any, Callable, Optional

from pytest_jeval.metrics import confusion_matrix, expected_calibration_error, reliability_bins
from pytest_jeval.summary import read_records, summarize

#: Probability bins of the reliability diagram (the judge metrics' ECE bins).
ECE_BINS = 10
#: Summary fields that the records cannot reproduce: never compared.
NOT_FROM_RECORDS = frozenset({"skipped_rows", "started_at", "ended_at"})


class ResultFileError(Exception):
    """A result file that cannot be read."""


def summary_path(jsonl: Path) -> Path:
    """``{jsonl}.summary.json`` (named by :func:`pytest_jeval.results.paths.summary_path`)."""
    from pytest_jeval.results.paths import summary_path as named

    return named(jsonl)


@dataclasses.dataclass
class ResultFile:
    """One ``{benchmark}_{model}.jsonl`` with its stored summary (if any)."""

    path: Path
    records: list[dict[str, Any]]
    stored: Optional[dict[str, Any]]

    @functools.cached_property
    def summary(self) -> dict[str, Any]:
        """The summary recomputed from the records."""
        return recompute_summary(self.records, self.stored)

    @property
    def benchmark(self) -> str:
        return str(self.summary.get("benchmark") or self.path.stem)

    @property
    def model(self) -> str:
        return str(self.summary.get("model") or "?")

    def by_id(self) -> dict[str, dict[str, Any]]:
        """Records by record id (a repeated id keeps its last line, like ``--jeval-resume``)."""
        return {str(r["record_id"]): r for r in self.records}


def load_result(path: Path | str) -> ResultFile:
    """Read a JSONL result file and the ``.summary.json`` beside it."""
    path = Path(path)
    if not path.is_file():
        raise ResultFileError(f"{path}: no such file")
    records = read_records(path)
    stored = None
    spath = summary_path(path)
    if spath.is_file():
        try:
            stored = json.loads(spath.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ResultFileError(f"{spath}: not valid JSON ({exc})") from None
        if not isinstance(stored, dict):
            raise ResultFileError(f"{spath}: not a summary object")
    return ResultFile(path=path, records=records, stored=stored)


def expand_inputs(paths: list[Path | str]) -> tuple[list[Path], Optional[dict[str, Any]]]:
    """JSONL paths from the command line: a results directory or its ``summary.json`` stands for
    the JSONL files it lists (all ``*.jsonl`` of a directory without one). Also returns the
    aggregate ``summary.json`` when one was given (its gates go into the report)."""
    out: list[Path] = []
    aggregate: Optional[dict[str, Any]] = None
    for raw in paths:
        path = Path(raw)
        listing = path / "summary.json" if path.is_dir() else path
        if listing.name == "summary.json" and listing.is_file():
            aggregate = json.loads(listing.read_text(encoding="utf-8"))
            out.extend(listing.parent / run["jsonl"] for run in aggregate.get("runs", []))
        elif path.is_dir():
            out.extend(sorted(path.glob("*.jsonl")))
        else:
            out.append(path)
    return out, aggregate


def builtin_summarize_extra(benchmark: Optional[str]) -> Optional[Callable[[list[dict[str, Any]]], dict[str, Any]]]:
    """The ``summarize_extra`` of a built-in benchmark, or None (unknown or user benchmark)."""
    if not benchmark:
        return None
    try:
        from pytest_jeval.benchmark import find_benchmark
        from pytest_jeval.catalog import builtin_index

        module = builtin_index().get(benchmark)
        bench = find_benchmark(importlib.import_module(module)) if module else None
    except Exception:  # a broken catalog must not stop jeval from reading results
        return None
    return bench.summarize_extra if bench is not None else None


def _summarize(records: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    try:
        return summarize(records, **meta)
    except ImportError:
        # Judge records, but no judge metrics module importable here: the common part only.
        plain = [{k: v for k, v in r.items() if k != "case_kind"} for r in records]
        return summarize(plain, **meta)


def recompute_summary(records: list[dict[str, Any]], stored: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The summary of ``records``, with the run facts the records lack taken from ``stored``.

    Benchmark, model, category and backend come from ``stored`` (else the records);
    ``started_at``, ``ended_at`` and ``skipped_rows`` are copied from ``stored``; a
    built-in benchmark's ``summarize_extra`` is applied as the results writer does.
    """
    meta = stored or {}
    first = records[0] if records else {}
    summary = _summarize(
        records,
        benchmark=meta.get("benchmark") or first.get("benchmark"),
        model=meta.get("model") or first.get("model"),
        category=meta.get("category"),
        backend=meta.get("backend") or first.get("backend") or "direct",
        started_at=meta.get("started_at"),
        ended_at=meta.get("ended_at"),
    )
    extra = builtin_summarize_extra(summary.get("benchmark"))
    if extra is not None and records:
        summary.update(extra(records))
    if "skipped_rows" in meta:
        summary["skipped_rows"] = meta["skipped_rows"]
    return summary


def same_value(a: Any, b: Any) -> bool:
    """Equal JSON values, numbers within a relative 1e-9 (JSON round trips, summation order)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return bool(a == b)


def summary_differences(stored: dict[str, Any], recomputed: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(field, stored, recomputed)`` for each field derivable from the records that differs.

    Fields the records cannot give (:data:`NOT_FROM_RECORDS`) and fields only the stored
    summary has (benchmark-specific extras a recompute cannot rebuild) are not compared;
    a recomputed field missing from the stored summary is a difference.
    """
    missing = object()
    diffs = []
    for key, value in recomputed.items():
        if key in NOT_FROM_RECORDS:
            continue
        old = stored.get(key, missing)
        if old is missing:
            diffs.append((key, "(missing)", value))
        elif not same_value(old, value):
            diffs.append((key, old, value))
    return diffs


def record_status(record: dict[str, Any]) -> str:
    """``error``, ``unscored``, ``wrong`` or ``correct``."""
    if record.get("error") is not None:
        return "error"
    if record.get("is_correct") is None:
        return "unscored"
    return "correct" if record.get("is_correct") is True else "wrong"


def present(records: list[dict[str, Any]], field: str) -> list[float]:
    """The non-null numeric values of ``field``."""
    out = []
    for r in records:
        value = r.get(field)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out.append(float(value))
    return out


def run_labels(files: list[ResultFile]) -> list[str]:
    """``benchmark · model`` per file; the file name is added where two would read the same."""
    plain = [f"{f.benchmark} · {f.model}" for f in files]
    return [f"{p} ({f.path.name})" if plain.count(p) > 1 else p for p, f in zip(plain, files)]


@dataclasses.dataclass
class JudgeView:
    """What the report draws for a judge benchmark run."""

    bins: list[dict[str, Any]]
    """Reliability bins (``reliability_bins`` format); empty without probabilities."""
    ece: Optional[float]
    matrix: list[list[int]]
    """Confusion counts, rows gold, columns predicted."""
    labels: list[Any]
    case_kind: str


def judge_view(result: ResultFile) -> Optional[JudgeView]:
    """The reliability and confusion data of a judge run; None for other runs.

    Both come from the judge metrics of the recomputed summary (``reliability``,
    ``confusion_matrix``) when ``pytest_jeval.judging`` provides them; otherwise they
    are computed here the same way: calibration of ``probability`` (the judge's
    probability that its judgment is correct) against ``is_correct`` in ``ECE_BINS``
    bins, and gold x predicted counts over the judged records.
    """
    judged = [r for r in result.records if r.get("case_kind") is not None and r.get("error") is None]
    if not judged:
        return None
    summary = result.summary
    stored_matrix = summary.get("confusion_matrix")
    if isinstance(stored_matrix, dict) and {"labels", "matrix"} <= stored_matrix.keys():
        labels, matrix = list(stored_matrix["labels"]), stored_matrix["matrix"]
    else:
        pairs = [(r["gold"], r["predicted"]) for r in judged if r.get("gold") is not None and r.get("predicted") is not None]
        labels, matrix = [], []
        if pairs:
            try:
                counts, labels = confusion_matrix([p for _, p in pairs], [g for g, _ in pairs],
                                                  labels=judged[0].get("labels") or None)
            except ValueError:  # labels of mixed types: order them as text
                counts, labels = confusion_matrix([str(p) for _, p in pairs], [str(g) for g, _ in pairs])
            matrix = counts.tolist()
    bins, ece = summary.get("reliability"), summary.get("ece")
    if not isinstance(bins, list):
        calibrated = [r for r in judged if r.get("predicted") is not None and r.get("gold") is not None
                      and isinstance(r.get("probability"), (int, float))]
        bins, ece = [], None
        if calibrated:
            probability = [float(r["probability"]) for r in calibrated]
            outcome = [1.0 if r.get("is_correct") is True else 0.0 for r in calibrated]
            bins = reliability_bins(probability, outcome, n_bins=ECE_BINS)
            ece = expected_calibration_error(probability, outcome, n_bins=ECE_BINS)
    return JudgeView(bins=bins, ece=ece if isinstance(ece, (int, float)) else None, matrix=matrix, labels=labels,
                     case_kind=str(judged[0]["case_kind"]))
