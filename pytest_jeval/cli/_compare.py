"""``jeval compare``: runs side by side on the items they share, with paired significance.

Every number is computed on the items present in all files. An item is a record id, or, for a
benchmark run with ``repeats``, the sample all its runs repeat (``repeat_of``): every repeat is
used, paired by item. Paired tests use the pairs of one file with the first: without repeats,
McNemar on correctness over the ids that errored in neither file; always, a paired percentile
bootstrap (the same resampled items for both files) for the difference ``other - first`` of each
metric's mean, where an item's value is the mean over its answered runs. The files' ``served``
models and system fingerprints are compared: when they differ, a warning says the difference may
be drift (a changed endpoint), not noise.
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
from pytest_jeval.results.repeats import repeat_of
from pytest_jeval.results.served import served_values
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


def _item_mean(runs: list[dict[str, Any]], value: Callable[[dict[str, Any]], float | None]) -> float | None:
    """The mean of ``value`` over an item's runs that have one (None when none has)."""
    known = [v for v in map(value, runs) if v is not None]
    return sum(known) / len(known) if known else None


def _paired(first_items: list[list[dict[str, Any]]], other_items: list[list[dict[str, Any]]], *, n_resamples: int,
            seed: int, confidence: float) -> dict[str, Any]:
    if any(len(runs) != 1 for runs in first_items + other_items):
        return _paired_by_item(first_items, other_items, n_resamples=n_resamples, seed=seed, confidence=confidence)
    first, other = [runs[0] for runs in first_items], [runs[0] for runs in other_items]
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


def _paired_by_item(first_items: list[list[dict[str, Any]]], other_items: list[list[dict[str, Any]]], *,
                    n_resamples: int, seed: int, confidence: float) -> dict[str, Any]:
    """Pairs of items run several times: each metric's value is the item's mean over its runs (McNemar, a
    test of one verdict per item, is not used)."""
    answered = [(x, y) for x, y in zip(first_items, other_items)
                if _item_mean(x, _correct) is not None and _item_mean(y, _correct) is not None]
    out: dict[str, Any] = {"pairs": len(answered), "by_item": True,
                           "runs": [sum(len(x) for x, _ in answered), sum(len(y) for _, y in answered)],
                           "mcnemar": None, "differences": {}}
    scores = [v for runs in first_items + other_items for r in runs if (v := _field("score")(r)) is not None]
    for name, value in PAIRED_METRICS:
        if name == "mean_score" and all(v in (0.0, 1.0) for v in scores):
            continue
        pairs = [(_item_mean(x, value), _item_mean(y, value)) for x, y in zip(first_items, other_items)]
        kept = [(u, v) for u, v in pairs if u is not None and v is not None]
        if len(kept) >= 2:
            out["differences"][name] = paired_difference(
                [u for u, _ in kept], [v for _, v in kept], n_resamples=n_resamples, seed=seed, confidence=confidence)
    return out


def by_item(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Records by item: a repeated run under the sample it repeats (``repeat_of``), any other under its id."""
    items: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        found = repeat_of(r)
        items.setdefault(found[0] if found is not None else str(r["record_id"]), []).append(r)
    return items


def _served_warning(labels: list[str], files: list[ResultFile]) -> str | None:
    """A warning when the files were served by different models or fingerprints (or one by several)."""
    values = [served_values(f.records) for f in files]
    models = [m for m, _ in values]
    prints = [p for _, p in values]
    differ_models = len({frozenset(m) for m in models if m}) > 1 or any(len(m) > 1 for m in models)
    differ_prints = len({frozenset(p) for p in prints if p}) > 1 or any(len(p) > 1 for p in prints)
    if not (differ_models or differ_prints):
        return None
    parts = []
    for label, (m, p) in zip(labels, values):
        said = [f"model {', '.join(sorted(m)) or '?'}"]
        if p:
            said.append(f"fingerprint {', '.join(sorted(p))}")
        parts.append(f"{label}: {'; '.join(said)}")
    return ("the runs were served by different models or system fingerprints (" + " | ".join(parts) + "): "
            "differences may be drift, not noise")


def _side_by_side(summary: dict[str, Any]) -> dict[str, Any]:
    keys = ("total_samples", "scored_samples", "correct", "accuracy", "accuracy_ci", "errors", "unscored",
            "mean_latency_seconds", "total_prompt_tokens", "total_completion_tokens", "total_energy_joules",
            "total_cost_usd")
    out = {k: summary.get(k) for k in keys}
    ttft = summary.get("ttft_stats")
    out["mean_ttft"] = ttft["mean"] if ttft else None
    repeats = summary.get("repeats")
    out["repeats"] = {k: repeats.get(k) for k in ("k", "mean_accuracy", "stderr", "majority_vote_accuracy",
                                                  "flip_rate", "pass_at_k", "pass_hat_k")} if repeats else None
    return out


def _repeat_cell(m: dict[str, Any], key: str) -> str:
    repeats = m.get("repeats")
    return fmt(repeats.get(key)) if repeats else "-"


def _mean_se(m: dict[str, Any]) -> str:
    repeats = m.get("repeats")
    if not repeats or repeats.get("mean_accuracy") is None:
        return "-"
    se = repeats.get("stderr")
    return fmt(repeats["mean_accuracy"]) + (f" ± {se:.3f}" if se is not None else "")


def compare(files: list[ResultFile], *, n_resamples: int = 2000, seed: int = 0,
            confidence: float = 0.95) -> dict[str, Any]:
    """The comparison of ``files`` as a JSON-ready dict (see the module docstring)."""
    labels = labels_for(len(files))
    items = [by_item(list(f.by_id().values())) for f in files]
    shared = [item for item in items[0] if all(item in m for m in items[1:])]
    union: dict[str, list[str]] = {}
    for label, grouped in zip(labels, items):
        for item in grouped:
            union.setdefault(item, []).append(label)
    partial = [{"record_id": item, "in": where} for item, where in union.items() if len(where) < len(files)]
    shared_items = [[m[item] for item in shared] for m in items]
    summaries = [recompute_summary([r for runs in grouped for r in runs], f.stored)
                 for grouped, f in zip(shared_items, files)]
    result: dict[str, Any] = {
        "files": [{"label": label, "path": str(f.path), "benchmark": f.benchmark, "model": f.model,
                   "records": sum(len(runs) for runs in m.values())} for label, f, m in zip(labels, files, items)],
        "shared": len(shared),
        "confidence": confidence,
        "metrics": {label: _side_by_side(s) for label, s in zip(labels, summaries)},
        "paired": [],
        "per_subject": {},
        "only_in_some": {"count": len(partial), "records": partial},
    }
    warnings = []
    if len({f.benchmark for f in files}) > 1:
        result["warning"] = "the files come from different benchmarks"
        warnings.append(result["warning"])
    served = _served_warning(labels, files)
    if served is not None:
        result["served_warning"] = served
        warnings.append(served)
    result["warnings"] = warnings
    for label, other in zip(labels[1:], shared_items[1:]):
        paired = _paired(shared_items[0], other, n_resamples=n_resamples, seed=seed, confidence=confidence)
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
    ("repeats", lambda m: str(m["repeats"]["k"]) if m.get("repeats") else "-", False),
    ("mean over repeats ± SE", _mean_se, False),
    ("majority vote", lambda m: _repeat_cell(m, "majority_vote_accuracy"), False),
    ("flip rate", lambda m: _repeat_cell(m, "flip_rate"), False),
)


def format_compare(result: dict[str, Any], max_listed: int = 20) -> list[str]:
    """The comparison as text."""
    labels = [f["label"] for f in result["files"]]
    lines = ["files:"]
    lines += [f"  {f['label']}  {f['path']}  ({f['benchmark']}, {f['model']}, {f['records']} records)"
              for f in result["files"]]
    for warning in result.get("warnings") or ([result["warning"]] if "warning" in result else []):
        lines.append(f"warning: {warning}")
    repeated = any(p.get("by_item") for p in result["paired"])
    what = "shared items (all their repeats)" if repeated else "shared record ids"
    lines += ["", f"{what}: {result['shared']}    in some files only: {result['only_in_some']['count']}", ""]
    rows = []
    for name, cell, always in _ROWS:
        cells = [cell(result["metrics"][label]) for label in labels]
        if always or any(c != "-" for c in cells):
            rows.append([name, *cells])
    lines += table(("metric", *labels), rows, right=set(range(1, len(labels) + 1)))
    level = f"{result['confidence']:.0%}"
    for pair in result["paired"]:
        if pair.get("by_item"):
            lines += ["", f"{pair['other']} vs {pair['first']} (paired by item, {pair['pairs']} items answered in "
                          f"both, {pair['runs'][0]} and {pair['runs'][1]} runs; an item's value is its mean over "
                          "its runs):"]
        else:
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
