"""The catalog of built-in benchmarks (the ``bench_*.py`` modules in ``pytest_jeval.benchmarks``)."""

from __future__ import annotations

import functools
import importlib
import importlib.resources
from typing import Any

from pytest_jeval.benchmark import Benchmark, find_benchmark

BUILTIN_PACKAGE = "pytest_jeval.benchmarks"


@functools.lru_cache(maxsize=1)
def builtin_index() -> dict[str, str]:
    """Map each built-in benchmark name to the module that defines it."""
    pkg = importlib.resources.files(BUILTIN_PACKAGE)
    index: dict[str, str] = {}
    for entry in sorted(pkg.iterdir(), key=lambda e: e.name):
        n = entry.name
        if n.startswith("bench_") and n.endswith(".py"):
            mod_name = f"{BUILTIN_PACKAGE}.{n[:-3]}"
            bench = find_benchmark(importlib.import_module(mod_name))
            if bench is not None:
                index[bench.name] = mod_name
    return index


def builtin_names() -> list[str]:
    """Names of the built-in benchmarks."""
    return sorted(builtin_index())


def builtin_benchmarks() -> list[Benchmark]:
    """The definition of every built-in benchmark, sorted by name."""
    out = []
    for name in builtin_names():
        bench = find_benchmark(importlib.import_module(builtin_index()[name]))
        assert bench is not None
        out.append(bench)
    return out


def catalog_rows() -> list[dict[str, Any]]:
    """One row per built-in benchmark: name, category, dataset id, sample count, scorer."""
    return [
        {
            "name": b.name,
            "category": b.category,
            "dataset": b.dataset.path if b.dataset else "(bundled)",
            "samples": b.sample_count,
            "scorer": b.scoring or b.scorer,
            "description": b.description,
        }
        for b in builtin_benchmarks()
    ]


def catalog_markdown() -> str:
    """The catalog as a Markdown table (name, category, dataset, samples, scorer), for docs/benchmarks.md.

    The block in docs/benchmarks.md between ``<!-- catalog:start -->`` and ``<!-- catalog:end -->``
    is this text; ``tests/test_catalog.py`` checks that it has not drifted.
    """

    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|")

    lines = ["| name | category | dataset | samples | scorer |", "|---|---|---|---:|---|"]
    for r in catalog_rows():
        dataset = f"`{r['dataset']}`" if r["dataset"] != "(bundled)" else "(bundled)"
        samples = f"{r['samples']:,}" if isinstance(r["samples"], int) else "?"
        lines.append(f"| `{cell(r['name'])}` | {cell(r['category'])} | {dataset} | {samples} | {cell(r['scorer'])} |")
    return "\n".join(lines) + "\n"
