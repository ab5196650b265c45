"""Result files as ``jeval`` and the report read them: records, the stored summary, a recomputed one.

A summary is a function of the records (``pytest_jeval.results.summary.summarize``); the
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
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_jeval.core.jsonsafe import RECORD_DEPTH, check_depth
from pytest_jeval.core.paths import AGGREGATE_NAME, aggregate_path, jsonl_files, trajectories_path
from pytest_jeval.results.summary import summarize
from pytest_jeval.scoring.metrics import confusion_matrix, expected_calibration_error, reliability_bins

#: Probability bins of the reliability diagram (the judge metrics' ECE bins).
ECE_BINS = 10
#: Summary fields that the records cannot reproduce: never compared.
NOT_FROM_RECORDS = frozenset({"skipped_rows", "started_at", "ended_at"})


class ResultFileError(Exception):
    """A result file that cannot be read."""


#: Record fields that hold a number: null or a finite int/float (never a bool or a string).
NUMBER_FIELDS = ("score", "latency_seconds", "prompt_tokens", "completion_tokens", "cost_usd", "ttft",
                 "energy_joules", "power_watts", "gpu_utilization_pct", "throughput_tok_per_sec", "mfu_pct",
                 "mbu_pct", "ipw", "ipj", "attempts", "judge_prompt_tokens", "judge_completion_tokens",
                 "judge_cost_usd", "probability")
#: Record fields that hold a label: null or text.
TEXT_FIELDS = ("benchmark", "model", "backend", "error", "subject", "case_kind", "model_answer")
#: Record fields that hold true, false or null.
BOOL_FIELDS = ("is_correct", "unscored", "cached")
#: Judge-benchmark labels: null or a scalar (they are counted in a confusion matrix).
LABEL_FIELDS = ("gold", "predicted")
#: Stored-summary fields a recompute takes over, with the JSON types they may have.
SUMMARY_META: dict[str, tuple[type, ...]] = {
    "benchmark": (str,), "model": (str,), "category": (str,), "backend": (str,),
    "started_at": (int, float), "ended_at": (int, float), "skipped_rows": (int,),
}


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a number")
    return value


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses ``NaN``/``Infinity``, numbers out of float range, lone
    surrogates and nesting too deep to handle (ValueError with the reason)."""
    try:
        check_depth(text, RECORD_DEPTH)
    except ValueError:
        raise ValueError("nested too deeply") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
        if _SURROGATE_ESCAPE.search(text):  # decoded UTF-8 never holds one; only a \\u escape can
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except UnicodeEncodeError:
        raise ValueError("holds a lone surrogate (\\ud800-\\udfff), which is not text") from None
    return value


#: Larger magnitudes are refused in number fields (no latency, token count or cost is that
#: large, and plots cannot bin them).
MAX_MAGNITUDE = 1e15


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def record_problem(record: Any) -> str | None:
    """Why ``record`` (a parsed JSONL line) is not a usable result record, or None."""
    if not isinstance(record, dict):
        return f"not a record object (a JSON {type(record).__name__})"
    if not isinstance(record.get("record_id"), str) or not record["record_id"]:
        return "record_id is missing or not text"
    for key in NUMBER_FIELDS:
        value = record.get(key)
        if value is not None and not _is_number(value):
            return f"{key} is not a number: {_snippet(value)}"
        if value is not None and abs(value) > MAX_MAGNITUDE:
            return f"{key} is implausibly large: {_snippet(value)}"
    probability = record.get("probability")
    if probability is not None and not 0.0 <= probability <= 1.0:
        return f"probability is not in [0, 1]: {_snippet(probability)}"
    for key in TEXT_FIELDS:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            return f"{key} is not text: {_snippet(value)}"
    for key in BOOL_FIELDS:
        value = record.get(key)
        if value is not None and not isinstance(value, bool):
            return f"{key} is not true, false or null: {_snippet(value)}"
    for key in LABEL_FIELDS:
        value = record.get(key)
        if isinstance(value, (list, dict)):
            return f"{key} is not a label: {_snippet(value)}"
    labels = record.get("labels")
    if labels is not None and not (isinstance(labels, list) and all(not isinstance(x, (list, dict)) for x in labels)):
        return f"labels is not a list of labels: {_snippet(labels)}"
    if labels:
        for key in LABEL_FIELDS:
            if record.get(key) is not None and not any(_same_label(record[key], x) for x in labels):
                return f"{key} {_snippet(record[key])} is not one of its labels {_snippet(labels)}"
    meta = record.get("scoring_metadata")
    if meta is not None and not isinstance(meta, dict):
        return f"scoring_metadata is not an object: {_snippet(meta)}"
    return None


def _same_label(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a == b) or (_is_number(a) and _is_number(b) and a == b)


def _judge_labels_problem(record: dict[str, Any], first: dict[str, Any]) -> str | None:
    """Why a judge record does not fit the first judge record of its file (whose labels count)."""
    if record.get("case_kind") != first.get("case_kind"):
        return (f"case_kind {_snippet(record.get('case_kind'))} differs from the file's "
                f"{_snippet(first.get('case_kind'))}")
    labels = first.get("labels") or []
    for key in LABEL_FIELDS:
        value = record.get(key)
        if labels and value is not None and not any(_same_label(value, x) for x in labels):
            return f"{key} {_snippet(value)} is not one of the file's labels {_snippet(labels)}"
    return None


def _snippet(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."


def read_result_lines(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The valid records of a JSONL file and one ``{path}:{line}: reason`` per line that is not.

    Blank lines are ignored. A line that is not UTF-8, not strict JSON (see :func:`strict_json`)
    or not a record (see :func:`record_problem`) is skipped and reported; so is a torn last line.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultFileError(f"{path}: cannot read ({exc.strerror or exc})") from None
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    first_judged: dict[str, Any] | None = None
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        torn = number == len(lines) and not data.endswith(b"\n")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{path}:{number}: not valid UTF-8 (byte {exc.start + 1}); line skipped")
            continue
        try:
            record = strict_json(text)
        except ValueError as exc:
            what = "an incomplete last line (a killed run?)" if torn else f"not valid JSON ({exc})"
            problems.append(f"{path}:{number}: {what}; line skipped")
            continue
        reason = record_problem(record)
        if reason is None and record.get("case_kind") is not None:
            first_judged = first_judged or record
            reason = _judge_labels_problem(record, first_judged)
        if reason is not None:
            problems.append(f"{path}:{number}: {reason}; line skipped")
            continue
        records.append(record)
    return records, problems


def summary_path(jsonl: Path) -> Path:
    """``{jsonl}.summary.json`` (named by :func:`pytest_jeval.core.paths.summary_path`)."""
    from pytest_jeval.core.paths import summary_path as named

    return named(jsonl)


@dataclasses.dataclass
class ResultFile:
    """One ``{benchmark}_{model}.jsonl`` with its stored summary (if any)."""

    path: Path
    records: list[dict[str, Any]]
    stored: dict[str, Any] | None
    problems: list[str] = dataclasses.field(default_factory=list)
    """``{path}:{line}: reason`` for each skipped line, and a stored summary that was ignored."""
    bad_lines: int = 0
    """How many lines of the JSONL were skipped."""
    trajectories: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    """Agent trajectories by record id (``{"messages": [...], "tool_calls": [...]}``): from the
    record's inline ``trajectory``, else from the ``.trajectories.jsonl`` sidecar file."""

    @functools.cached_property
    def summary(self) -> dict[str, Any]:
        """The summary recomputed from the records (ResultFileError when they do not add up)."""
        try:
            return recompute_summary(self.records, self.stored)
        except (ValueError, TypeError, ArithmeticError) as exc:  # values the line checks let through
            raise ResultFileError(f"{self.path}: the records cannot be summarized "
                                  f"({type(exc).__name__}: {exc})") from exc

    @property
    def benchmark(self) -> str:
        return str(self.summary.get("benchmark") or self.path.stem)

    @property
    def model(self) -> str:
        return str(self.summary.get("model") or "?")

    def by_id(self) -> dict[str, dict[str, Any]]:
        """Records by record id (a repeated id keeps its last line, like ``--jeval-resume``)."""
        return {str(r["record_id"]): r for r in self.records}


def stored_summary_problem(stored: Any) -> str | None:
    """Why a parsed ``.summary.json`` cannot be used, or None."""
    if not isinstance(stored, dict):
        return f"not a summary object (a JSON {type(stored).__name__})"
    for key, types in SUMMARY_META.items():
        value = stored.get(key)
        if value is not None and (not isinstance(value, types) or isinstance(value, bool)):
            return f"{key} has the wrong type: {_snippet(value)}"
    return None


def inside(path: Path, root: Path) -> bool:
    """True when ``path``, with every symlink resolved, lies inside ``root`` (resolved)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a symlink loop
        return False


def trajectory_problem(value: Any) -> str | None:
    """Why ``value`` is not a trajectory (``messages``: a list of message objects with a text
    ``role``; ``tool_calls``, when present: a list of objects), or None."""
    if not isinstance(value, dict):
        return f"not a trajectory object (a JSON {type(value).__name__})"
    messages = value.get("messages")
    if not isinstance(messages, list):
        return "messages is missing or not a list"
    for n, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return f"messages[{n}] is not a message object with a text role"
    calls = value.get("tool_calls")
    if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
        return "tool_calls is not a list of objects"
    return None


def _plain_trajectory(value: dict[str, Any]) -> dict[str, Any]:
    out = {"messages": value["messages"], "tool_calls": value.get("tool_calls") or []}
    if isinstance(value.get("external"), dict):  # an external agent's process: argv, exit status, output
        out["external"] = value["external"]
    return out


def read_trajectory_lines(path: Path, known: set[str]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The trajectories of a ``.trajectories.jsonl`` sidecar by record id, and one
    ``{path}:{line}: reason`` per line skipped.

    A repeated record id keeps its last line (the sidecar of an interrupted run holds one line
    per attempt). Lines that are not UTF-8, not strict JSON, without a text ``record_id`` or
    not a trajectory (:func:`trajectory_problem`) are skipped and listed; lines of record ids
    not in ``known`` are ignored (counted in one line).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        return {}, [f"{path}: cannot read ({exc.strerror or exc}); trajectories not shown"]
    found: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    unknown = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        torn = number == len(lines) and not data.endswith(b"\n")
        try:
            line = strict_json(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            problems.append(f"{path}:{number}: not valid UTF-8 (byte {exc.start + 1}); line skipped")
            continue
        except ValueError as exc:
            what = "an incomplete last line (a killed run?)" if torn else f"not valid JSON ({exc})"
            problems.append(f"{path}:{number}: {what}; line skipped")
            continue
        reason = trajectory_problem(line)
        rid = line.get("record_id") if reason is None else None
        if reason is None and not (isinstance(rid, str) and rid):
            reason = "record_id is missing or not text"
        if reason is not None:
            problems.append(f"{path}:{number}: {reason}; line skipped")
            continue
        if rid not in known:
            unknown += 1
            continue
        found[str(rid)] = _plain_trajectory(line)
    if unknown:
        problems.append(f"{path}: {unknown} line(s) for record ids the results file does not have; ignored")
    return found, problems


def load_trajectories(path: Path, records: list[dict[str, Any]], *,
                      root: Path | None = None) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The trajectories of the records of the JSONL ``path`` by record id, and the problems met.

    A record's inline ``trajectory`` comes first; the others come from the sidecar
    ``{path}.trajectories.jsonl`` when there is one. With ``root``, a sidecar that resolves
    outside ``root`` is not read (listed in the problems). An inline trajectory of the wrong
    shape is left out and listed.
    """
    found: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    for record in records:  # a repeated record id keeps its last line, as ResultFile.by_id does
        rid = str(record["record_id"])
        inline = record.get("trajectory")
        if inline is None:
            found.pop(rid, None)
            continue
        reason = trajectory_problem(inline)
        if reason is None:
            found[rid] = _plain_trajectory(inline)
        else:
            found.pop(rid, None)
            problems.append(f"{path}: record {_snippet(rid)}: its trajectory is left out ({reason})")
    sidecar = trajectories_path(path)
    if not sidecar.is_file():
        return found, problems
    if root is not None and not inside(sidecar, root):
        problems.append(f"{sidecar}: outside the results directory {root}; ignored")
        return found, problems
    from_sidecar, sidecar_problems = read_trajectory_lines(sidecar, {str(r["record_id"]) for r in records})
    problems.extend(sidecar_problems)
    for rid, value in from_sidecar.items():
        found.setdefault(rid, value)
    return found, problems


def load_result(path: Path | str, *, root: Path | None = None, trajectories: bool = False) -> ResultFile:
    """Read a JSONL result file and the ``.summary.json`` and ``.trajectories.jsonl`` beside it,
    validating them.

    Malformed lines are skipped and listed in ``problems``; a ``.summary.json`` that is not
    JSON or not a summary is ignored (also listed); with ``trajectories`` (the report), the
    trajectories are read as :func:`load_trajectories` says. With ``root``, none of the files is
    read when it resolves outside ``root`` (ResultFileError for the JSONL; the others are ignored).
    """
    path = Path(path)
    if root is not None and not inside(path, root):
        raise ResultFileError(f"{path}: outside the results directory {root}; not read")
    if not path.is_file():
        raise ResultFileError(f"{path}: no such file")
    records, problems = read_result_lines(path)
    bad_lines = len(problems)
    stored = None
    spath = summary_path(path)
    if spath.is_file():
        if root is not None and not inside(spath, root):
            problems.append(f"{spath}: outside the results directory {root}; ignored")
        else:
            try:
                stored = strict_json(spath.read_bytes().decode("utf-8"))
                reason = stored_summary_problem(stored)
            except (ValueError, OSError) as exc:  # UnicodeDecodeError is a ValueError
                reason = f"not valid JSON ({exc})"
            if reason is not None:
                problems.append(f"{spath}: {reason}; ignored (the summary is computed from the records)")
                stored = None
    found: dict[str, dict[str, Any]] = {}
    if trajectories:  # only the report shows them: summarize, compare and rescore never read the sidecar
        found, trajectory_problems = load_trajectories(path, records, root=root)
        problems.extend(trajectory_problems)
    return ResultFile(path=path, records=records, stored=stored, problems=problems, bad_lines=bad_lines,
                      trajectories=found)


def aggregate_problem(aggregate: Any) -> str | None:
    """Why a parsed aggregate ``summary.json`` has the wrong shape, or None."""
    if not isinstance(aggregate, dict):
        return f"not a summary object (a JSON {type(aggregate).__name__})"
    runs = aggregate.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(r, dict) and isinstance(r.get("jsonl"), str) for r in runs):
        return "runs is not a list of objects naming their jsonl file"
    gates = aggregate.get("gates")
    if gates is not None:
        if not isinstance(gates, list) or not all(isinstance(g, dict) for g in gates):
            return "gates is not a list of objects"
        for g in gates:
            for key in ("measured", "threshold"):
                if g.get(key) is not None and not _is_number(g[key]):
                    return f"gate {key} is not a number: {_snippet(g[key])}"
    if aggregate.get("suite") is not None and not isinstance(aggregate["suite"], str):
        return "suite is not text"
    return None


def locate_inputs(paths: list[Path | str]) -> tuple[list[tuple[Path, Path | None]], dict[str, Any] | None]:
    """JSONL paths from the command line, each with the results directory it was found through
    (None for a JSONL named directly): a results directory or its ``summary.json`` stands for
    the JSONL files it lists (all ``*.jsonl`` of a directory without one). Also returns the
    aggregate ``summary.json`` when one was given (its gates go into the report).

    A listed file that resolves outside its results directory (``../``, an absolute path, a
    symlink pointing out) is refused with ResultFileError; so is a ``summary.json`` that is
    not JSON or has the wrong shape. Load each file with ``load_result(path, root=root)``.
    """
    out: list[tuple[Path, Path | None]] = []
    aggregate: dict[str, Any] | None = None
    for raw in paths:
        path = Path(raw)
        listing = aggregate_path(path) if path.is_dir() else path
        if listing.name == AGGREGATE_NAME and listing.is_file():
            root = listing.parent
            if not inside(listing, root):
                raise ResultFileError(f"{listing}: a link pointing outside {root}; refused")
            try:
                loaded = strict_json(listing.read_bytes().decode("utf-8"))
            except (ValueError, OSError) as exc:  # UnicodeDecodeError is a ValueError
                raise ResultFileError(f"{listing}: not valid JSON ({exc})") from None
            reason = aggregate_problem(loaded)
            if reason is not None:
                raise ResultFileError(f"{listing}: {reason}")
            aggregate = loaded
            for run in loaded.get("runs", []):
                target = root / run["jsonl"]
                if not inside(target, root):
                    raise ResultFileError(f"{listing}: names {run['jsonl']!r}, which is outside {root}; refused")
                out.append((target, root))
        elif path.is_dir():
            for target in jsonl_files(path):
                if not inside(target, path):
                    raise ResultFileError(f"{target}: a link pointing outside {path}; refused")
                out.append((target, path))
        else:
            out.append((path, None))
    return out, aggregate


def builtin_summarize_extra(benchmark: str | None, judged: bool = False,
                            ) -> Callable[[list[dict[str, Any]]], dict[str, Any]] | None:
    """The ``summarize_extra`` of a built-in benchmark, or of the judge family for ``judged`` records (those
    with a ``case_kind``); None for an unknown or user benchmark."""
    try:
        from pytest_jeval.core.benchmark import find_benchmark
        from pytest_jeval.suite.catalog import builtin_index, judge_template

        if judged:
            return judge_template()[0].summarize_extra
        module = builtin_index().get(benchmark) if benchmark else None
        bench = find_benchmark(importlib.import_module(module)) if module else None
    except Exception:  # a broken catalog must not stop jeval from reading results
        return None
    return bench.summarize_extra if bench is not None else None


def recompute_summary(records: list[dict[str, Any]], stored: dict[str, Any] | None = None) -> dict[str, Any]:
    """The summary of ``records``, with the run facts the records lack taken from ``stored``.

    Benchmark, model, category and backend come from ``stored`` (else the records);
    ``started_at``, ``ended_at`` and ``skipped_rows`` are copied from ``stored``; a
    built-in benchmark's ``summarize_extra`` (the judge family's for judge records) is applied
    as the results writer does.
    """
    meta = stored or {}
    first = records[0] if records else {}
    summary = summarize(
        records,
        benchmark=meta.get("benchmark") or first.get("benchmark"),
        model=meta.get("model") or first.get("model"),
        category=meta.get("category"),
        backend=meta.get("backend") or first.get("backend") or "direct",
        started_at=meta.get("started_at"),
        ended_at=meta.get("ended_at"),
    )
    extra = builtin_summarize_extra(summary.get("benchmark"), judged=any("case_kind" in r for r in records))
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
    ece: float | None
    matrix: list[list[int]]
    """Confusion counts, rows gold, columns predicted."""
    labels: list[Any]
    case_kind: str


def judge_view(result: ResultFile) -> JudgeView | None:
    """The reliability and confusion data of a judge run; None for other runs.

    Both come from the judge metrics of the recomputed summary (``reliability``,
    ``confusion_matrix``) when ``pytest_jeval.judge_bench`` provides them; otherwise they
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
        pairs = [(r["gold"], r["predicted"]) for r in judged
                 if r.get("gold") is not None and r.get("predicted") is not None]
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
