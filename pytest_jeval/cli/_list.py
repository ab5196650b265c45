"""``jeval list``: the built-in benchmarks and the registered evaluators."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pytest_jeval.catalog import CatalogError, catalog_rows
from pytest_jeval.cli._table import table


def load_evaluators() -> dict[str, Any] | None:
    """The evaluator registry (name -> evaluator class), or None when it cannot be imported.

    A broken installed evaluator (entry point) raises EvaluatorLoadError, reported by :func:`run`.
    """
    try:
        from pytest_jeval.judge_bench import evaluator_classes
    except ImportError:
        return None
    return evaluator_classes()


def evaluator_scale(evaluator: Any) -> str:
    """``0-4`` for a score scale, ``A/B/C`` for choice labels, ``true/false`` for a boolean case."""
    low_high = getattr(evaluator, "default_scale", None)
    if low_high:
        return f"{low_high[0]}-{low_high[1]}"
    labels = getattr(evaluator, "choice_labels", ())
    if labels:
        return "/".join(str(x) for x in labels)
    kinds = tuple(getattr(evaluator, "kinds", ()) or ())
    return "true/false" if kinds[:1] == ("boolean",) else "-"


def evaluator_rows() -> list[dict[str, Any]] | None:
    """One row per registered evaluator (name, category, dataset, kind, scale, description);
    None when no evaluator registry is importable."""
    registry = load_evaluators()
    if registry is None:
        return None
    rows = []
    for name, evaluator in sorted(registry.items()):
        rows.append({
            "name": name,
            "category": "llm" if getattr(evaluator, "uses_model", False) else "code",
            "dataset": None,  # evaluators run on the gold set the suite names
            "kind": "/".join(getattr(evaluator, "kinds", ()) or ()) or None,
            "scale": evaluator_scale(evaluator),
            "description": getattr(evaluator, "description", "") or "",
        })
    return rows


def _cell(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def run(args: argparse.Namespace) -> int:
    """Print both catalogs (``--json``: as one object); a broken installed benchmark or evaluator is an error."""
    from pytest_jeval.judge_bench.registry import EvaluatorLoadError

    try:
        benchmarks = catalog_rows()
        evaluators = evaluator_rows()
    except (CatalogError, EvaluatorLoadError) as exc:
        from pytest_jeval.cli._read import FAILED

        print(f"jeval: error: {exc}", file=sys.stderr)
        return FAILED
    if args.json:
        print(json.dumps({"benchmarks": benchmarks, "evaluators": evaluators}, indent=2))
        return 0
    print("benchmarks:")
    bench_header = ("name", "category", "dataset", "samples", "scorer")
    rows = [[_cell(b[h]) for h in bench_header] for b in benchmarks]
    print("\n".join("  " + line for line in table(bench_header, rows, right={3})))
    print()
    if evaluators is None:
        print("evaluators: none (pytest_jeval.judge_bench has no evaluator registry)")
        return 0
    print("evaluators:")
    header = ("name", "category", "kind", "scale")
    rows = [[_cell(e[h]) for h in header] for e in evaluators]
    print("\n".join("  " + line for line in table(header, rows)))
    return 0
