"""``jeval compare``: runs side by side on the records they share, with paired significance.

Every number is computed on the record ids present in all files. Paired tests use
the pairs of one file with the first: McNemar on correctness over the ids that
errored in neither file, and a paired percentile bootstrap (the same resampled
ids for both files) for the difference ``other - first`` of each metric's mean.
"""

from __future__ import annotations

import argparse
import json
import string
from collections.abc import Callable
from typing import Any

import numpy as np

from pytest_jeval.cli._read import load_inputs, report_problems
from pytest_jeval.cli._table import fmt, fmt_ci, fmt_signed, table, tokens
from pytest_jeval.results.reader import ResultFile, recompute_summary
from pytest_jeval.scoring.metrics import bootstrap_interval, mcnemar


def _correct(record: dict[str, Any]) -> float | None:
    if record.get("error") is not None:
        return None
    return 1.0 if record.get("is_correct") is True else 0.0


def _field(name: str) -> Callable[[dict[str, Any]], float | None]:
    def value(record: dict[str, Any]) -> float | None:
        v = record.get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return value


#: Metrics whose paired difference is bootstrapped: (name, per-record value). Accuracy
#: counts unscored answers as wrong and leaves errored records out, like the summary.
PAIRED_METRICS: tuple[tuple[str, Callable[[dict[str, Any]], float | None]], ...] = (
    ("accuracy", _correct),
    ("mean_score", _field("score")),
    ("mean_latency_seconds", _field("latency_seconds")),
    ("mean_ttft", _field("ttft")),
    ("mean_prompt_tokens", _field("prompt_tokens")),
    ("mean_completion_tokens", _field("completion_tokens")),
    ("mean_energy_joules", _field("energy_joules")),
    ("mean_cost_usd", _field("cost_usd")),
)


def labels_for(n: int) -> list[str]:
    """``A``, ``B``, ... (``F27``, ``F28``, ... past 26 files)."""
    return [string.ascii_uppercase[i] if i < 26 else f"F{i + 1}" for i in range(n)]


def _mean_difference(first: np.ndarray, other: np.ndarray) -> float:
    return float(np.mean(other) - np.mean(first))


def paired_difference(first: list[float], other: list[float], *, n_resamples: int, seed: int,
                      confidence: float) -> dict[str, Any]:
    """Point estimate and paired bootstrap interval of ``mean(other) - mean(first)``."""
    a, b = np.asarray(first, dtype=float), np.asarray(other, dtype=float)
    low, high = bootstrap_interval(_mean_difference, a, b, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return {"n": len(a), "first": float(a.mean()), "other": float(b.mean()),
            "difference": _mean_difference(a, b), "ci": [low, high]}


def _paired(first: list[dict[str, Any]], other: list[dict[str, Any]], *, n_resamples: int, seed: int,
            confidence: float) -> dict[str, Any]:
    answered = [(x, y) for x, y in zip(first, other) if x.get("error") is None and y.get("error") is None]
    out: dict[str, Any] = {"pairs": len(answered), "mcnemar": None, "differences": {}}
    if answered:
        # answered pairs carry no error, so correctness is the is_correct flag
        test = mcnemar([x.get("is_correct") is True for x, _ in answered],
                       [y.get("is_correct") is True for _, y in answered])
        out["mcnemar"] = {"b": test.b, "c": test.c, "statistic": test.statistic, "p_value": test.p_value,
                          "method": test.method}
    scores = [v for r in first + other if (v := _field("score")(r)) is not None]
    for name, value in PAIRED_METRICS:
        if name == "mean_score" and all(v in (0.0, 1.0) for v in scores):
            continue  # the same as accuracy
        pairs = [(value(x), value(y)) for x, y in zip(first, other)]
        kept = [(u, v) for u, v in pairs if u is not None and v is not None]
        if len(kept) >= 2:
            out["differences"][name] = paired_difference(
                [u for u, _ in kept], [v for _, v in kept], n_resamples=n_resamples, seed=seed, confidence=confidence)
    return out


def _side_by_side(summary: dict[str, Any]) -> dict[str, Any]:
    keys = ("total_samples", "scored_samples", "correct", "accuracy", "accuracy_ci", "errors", "unscored",
            "mean_latency_seconds", "total_prompt_tokens", "total_completion_tokens", "total_energy_joules",
            "total_cost_usd")
    out = {k: summary.get(k) for k in keys}
    ttft = summary.get("ttft_stats")
    out["mean_ttft"] = ttft["mean"] if ttft else None
    return out


def compare(files: list[ResultFile], *, n_resamples: int = 2000, seed: int = 0,
            confidence: float = 0.95) -> dict[str, Any]:
    """The comparison of ``files`` as a JSON-ready dict (see the module docstring)."""
    labels = labels_for(len(files))
    by_id = [f.by_id() for f in files]
    shared = [rid for rid in by_id[0] if all(rid in m for m in by_id[1:])]
    union: dict[str, list[str]] = {}
    for label, records in zip(labels, by_id):
        for rid in records:
            union.setdefault(rid, []).append(label)
    partial = [{"record_id": rid, "in": where} for rid, where in union.items() if len(where) < len(files)]
    shared_records = [[m[rid] for rid in shared] for m in by_id]
    summaries = [recompute_summary(recs, f.stored) for recs, f in zip(shared_records, files)]
    result: dict[str, Any] = {
        "files": [{"label": label, "path": str(f.path), "benchmark": f.benchmark, "model": f.model,
                   "records": len(m)} for label, f, m in zip(labels, files, by_id)],
        "shared": len(shared),
        "confidence": confidence,
        "metrics": {label: _side_by_side(s) for label, s in zip(labels, summaries)},
        "paired": [],
        "per_subject": {},
        "only_in_some": {"count": len(partial), "records": partial},
    }
    if len({f.benchmark for f in files}) > 1:
        result["warning"] = "the files come from different benchmarks"
    for label, other in zip(labels[1:], shared_records[1:]):
        paired = _paired(shared_records[0], other, n_resamples=n_resamples, seed=seed, confidence=confidence)
        result["paired"].append({"first": labels[0], "other": label, **paired})
    subjects = sorted({name for s in summaries for name in (s.get("per_subject") or {})})
    for name in subjects:
        row: dict[str, Any] = {}
        for label, s in zip(labels, summaries):
            sub = (s.get("per_subject") or {}).get(name)
            row[label] = {"n": int(sub["total"]), "accuracy": sub["accuracy"]} if sub else None
        base = row[labels[0]]["accuracy"] if row[labels[0]] else None
        row["delta"] = {label: (row[label]["accuracy"] - base)
                        if row[label] and row[label]["accuracy"] is not None and base is not None else None
                        for label in labels[1:]}
        result["per_subject"][name] = row
    return result


_ROWS: tuple[tuple[str, Callable[[dict[str, Any]], str], bool], ...] = (
    ("n", lambda m: str(m["total_samples"]), True),
    ("correct", lambda m: str(m["correct"]), True),
    ("accuracy", lambda m: fmt(m["accuracy"]), True),
    ("95% CI", lambda m: fmt_ci(m["accuracy_ci"]), True),
    ("errors", lambda m: str(m["errors"]), True),
    ("unscored", lambda m: str(m["unscored"]), True),
    ("mean latency (s)", lambda m: fmt(m["mean_latency_seconds"]), False),
    ("mean ttft (s)", lambda m: fmt(m["mean_ttft"]), False),
    ("tokens in/out", tokens, False),
    ("energy (J)", lambda m: fmt(m["total_energy_joules"], ".1f"), False),
    ("cost (USD)", lambda m: fmt(m["total_cost_usd"], ".4f"), False),
)


def format_compare(result: dict[str, Any], max_listed: int = 20) -> list[str]:
    """The comparison as text."""
    labels = [f["label"] for f in result["files"]]
    lines = ["files:"]
    lines += [f"  {f['label']}  {f['path']}  ({f['benchmark']}, {f['model']}, {f['records']} records)"
              for f in result["files"]]
    if "warning" in result:
        lines.append(f"warning: {result['warning']}")
    lines += ["", f"shared record ids: {result['shared']}    in some files only: {result['only_in_some']['count']}", ""]
    rows = []
    for name, cell, always in _ROWS:
        cells = [cell(result["metrics"][label]) for label in labels]
        if always or any(c != "-" for c in cells):
            rows.append([name, *cells])
    lines += table(("metric", *labels), rows, right=set(range(1, len(labels) + 1)))
    level = f"{result['confidence']:.0%}"
    for pair in result["paired"]:
        lines += ["", f"{pair['other']} vs {pair['first']} (paired, {pair['pairs']} ids answered in both):"]
        test = pair["mcnemar"]
        if test is not None:
            lines.append(f"  McNemar: b={test['b']} ({pair['first']} right, {pair['other']} wrong), "
                         f"c={test['c']} ({pair['first']} wrong, {pair['other']} right), "
                         f"statistic={test['statistic']:.3f}, p={test['p_value']:.4g} ({test['method']})")
        diff_rows = [[name, str(d["n"]), fmt_signed(d["difference"], ".4f"), fmt_ci(d["ci"], "+.4f")]
                     for name, d in pair["differences"].items()]
        if diff_rows:
            header = ("difference", "n", f"{pair['other']} - {pair['first']}", f"{level} bootstrap CI")
            lines += ["  " + ln for ln in table(header, diff_rows, right={1, 2, 3})]
    if result["per_subject"]:
        lines += ["", "per subject (accuracy on shared ids):"]
        header = ("subject", *[f"n {lb}" for lb in labels], *labels, *[f"Δ{lb}" for lb in labels[1:]])
        rows = []
        for name, row in result["per_subject"].items():
            rows.append([name, *[str(row[lb]["n"]) if row[lb] else "-" for lb in labels],
                         *[fmt(row[lb]["accuracy"]) if row[lb] else "-" for lb in labels],
                         *[fmt_signed(row["delta"][lb]) for lb in labels[1:]]])
        lines += ["  " + ln for ln in table(header, rows, right=set(range(1, len(header))))]
    partial = result["only_in_some"]
    if partial["count"]:
        lines += ["", f"record ids in some files only ({partial['count']}):"]
        for entry in partial["records"][:max_listed]:
            lines.append(f"  {entry['record_id']}  in {', '.join(entry['in'])}")
        if partial["count"] > max_listed:
            lines.append(f"  ... {partial['count'] - max_listed} more (--max-listed, or --json for all)")
    return lines


def run(args: argparse.Namespace) -> int:
    """Compare the files (the parser makes sure there are at least two)."""
    files = load_inputs(args.files)
    status = report_problems(files)
    result = compare(files, n_resamples=args.resamples, seed=args.seed, confidence=args.confidence)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print("\n".join(format_compare(result, args.max_listed)))
    return status
