"""``jeval list``: the built-in benchmarks and the registered evaluators."""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Optional

from pytest_jeval.catalog import catalog_rows
from pytest_jeval.cli._table import table

#: Where an evaluator registry may live, and the names it may expose: a callable returning
#: the evaluators (or rows), or a name -> evaluator mapping. Each evaluator (object or dict)
#: gives ``name``, ``kind`` and ``scale``; ``category`` (else ``llm`` when ``needs_judge``,
#: otherwise ``code``), ``dataset`` and ``description`` are optional.
REGISTRY_MODULES = ("pytest_jeval.judging", "pytest_jeval.judging.registry")
REGISTRY_NAMES = ("evaluator_rows", "evaluators", "EVALUATORS", "REGISTRY")


def _get(entry: Any, key: str, default: Any = None) -> Any:
    if isinstance(entry, Mapping):
        return entry.get(key, default)
    return getattr(entry, key, default)


def format_scale(scale: Any) -> str:
    """``0-4`` for a numeric range, ``yes/no`` for labels, ``-`` when there is none."""
    if scale is None or scale == "":
        return "-"
    if isinstance(scale, str):
        return scale
    if isinstance(scale, Mapping):
        scale = list(scale)
    items = list(scale) if isinstance(scale, Iterable) else [scale]
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items)
    if numbers and len(items) == 2:
        return f"{items[0]:g}-{items[1]:g}"
    return "/".join(str(x) for x in items)


def _evaluator_row(name: Optional[str], entry: Any) -> dict[str, Any]:
    category = _get(entry, "category") or ("llm" if _get(entry, "needs_judge") else "code")
    return {
        "name": str(_get(entry, "name") or name),
        "category": str(category),
        "dataset": _get(entry, "dataset"),
        "kind": _get(entry, "kind") or _get(entry, "case_kind"),
        "scale": format_scale(_get(entry, "scale")),
        "description": _get(entry, "description") or "",
    }


def evaluator_rows() -> Optional[list[dict[str, Any]]]:
    """One row per registered evaluator; None when no evaluator registry is importable."""
    for module_name in REGISTRY_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr in REGISTRY_NAMES:
            found = getattr(module, attr, None)
            if found is None:
                continue
            entries = found() if callable(found) else found
            if isinstance(entries, Mapping):
                rows = [_evaluator_row(name, e) for name, e in entries.items()]
            else:
                rows = [_evaluator_row(None, e) for e in entries]
            return sorted(rows, key=lambda r: r["name"])
    return None


def _cell(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def run(args: argparse.Namespace) -> int:
    """Print both catalogs (``--json``: as one object)."""
    benchmarks = catalog_rows()
    evaluators = evaluator_rows()
    if args.json:
        print(json.dumps({"benchmarks": benchmarks, "evaluators": evaluators}, indent=2))
        return 0
    print("benchmarks:")
    header = ("name", "category", "dataset", "samples", "kind")
    rows = [[_cell(b["name"]), _cell(b["category"]), _cell(b["dataset"]), _cell(b["samples"]), _cell(b["scorer"])]
            for b in benchmarks]
    for line in table(header, rows, right={3}):
        print("  " + line)
    print()
    if evaluators is None:
        print("evaluators: none (no evaluator registry in pytest_jeval.judging)")
        return 0
    print("evaluators:")
    header = ("name", "category", "dataset", "kind", "scale")
    rows = [[_cell(e[h]) for h in header] for e in evaluators]
    for line in table(header, rows):
        print("  " + line)
    return 0
