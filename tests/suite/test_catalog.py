"""The benchmark table in docs/benchmarks.md is the catalog, and ``pytest --jeval-list`` lists every built-in.

When a benchmark is added or changed, regenerate the docs block with::

    .venv/bin/python tests/suite/test_catalog.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pytest_jeval.suite.catalog import (
    builtin_benchmarks,
    builtin_index,
    builtin_module,
    builtin_names,
    catalog_markdown,
    catalog_rows,
)

CATALOG_DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
START, END = "<!-- catalog:start -->", "<!-- catalog:end -->"
# the benchmarks of the catalog issue; more may be added, none may disappear
EXPECTED = {"supergpqa", "gpqa", "mmlu-pro", "truthfulqa-mc", "math500", "gsm8k", "natural-reasoning",
            "simpleqa", "hle", "frames", "wildchat", "gaia"}


def catalog_block(text: str) -> str:
    m = re.search(re.escape(START) + r"\n(.*?)" + re.escape(END), text, re.DOTALL)
    assert m, f"docs/benchmarks.md lacks the {START} ... {END} markers"
    return m.group(1)


def regenerate() -> None:
    """Rewrite the docs block from the catalog."""
    text = CATALOG_DOC.read_text(encoding="utf-8")
    block = catalog_block(text)
    new = text.replace(f"{START}\n{block}{END}", f"{START}\n{catalog_markdown()}{END}", 1)
    CATALOG_DOC.write_text(new, encoding="utf-8")


def test_docs_table_is_the_catalog() -> None:
    block = catalog_block(CATALOG_DOC.read_text(encoding="utf-8"))
    assert block == catalog_markdown(), (
        "the docs/benchmarks.md table differs from the catalog; run `.venv/bin/python tests/suite/test_catalog.py`")


def test_catalog_markdown_has_one_row_per_benchmark() -> None:
    lines = catalog_markdown().splitlines()
    assert lines[0] == "| name | category | dataset | samples | scorer |"
    rows = [line for line in lines[2:] if line.startswith("| `")]
    assert [re.match(r"\| `([^`]+)`", r).group(1) for r in rows] == builtin_names()  # type: ignore[union-attr]
    for row, info in zip(rows, catalog_rows()):
        assert row.count(" | ") == 4, row
        assert (info["dataset"] in row) and (info["scorer"].replace("|", "\\|") in row)


def test_the_one_module_lookup_agrees_with_the_catalog() -> None:
    # a suite naming a built-in imports bench_<name>.py alone; the others are found by the walk
    index = builtin_index()
    found = {name: builtin_module(name) for name in index}
    assert all(module in (index[name], None) for name, module in found.items()), found
    assert sum(module is not None for module in found.values()) >= len(index) - 3
    assert builtin_module("no_such_benchmark") is None and builtin_module("../etc") is None
    assert builtin_module("codeexec") is None  # a helper module (_codeexec.py), not a benchmark


def test_every_builtin_is_described() -> None:
    names = set(builtin_names())
    assert EXPECTED <= names, f"missing built-ins: {sorted(EXPECTED - names)}"
    for b in builtin_benchmarks():
        assert b.category and b.category != "other", b.name
        assert b.description and b.scorer, b.name
        assert b.sample_count is None or b.sample_count > 0, b.name


def test_jeval_list_prints_every_benchmark_and_evaluator(pytester: pytest.Pytester) -> None:
    from pytest_jeval.judge_bench import evaluator_names

    result = pytester.runpytest("--jeval-list")
    assert result.ret == 0
    text = result.stdout.str()
    bench_part, eval_part = text.split("evaluators:")
    lines = [line.split() for line in bench_part.splitlines()[1:] if line.strip()]
    assert lines[0][:5] == ["name", "category", "dataset", "samples", "scorer"]
    listed = {cells[0]: cells for cells in lines[2:]}
    assert set(listed) == set(builtin_names())
    for info in catalog_rows():
        cells = listed[info["name"]]
        assert cells[1] == info["category"] and cells[2] == info["dataset"]
        assert cells[3] == (str(info["samples"]) if info["samples"] is not None else "-")
    evaluators = {line.split()[0] for line in eval_part.split("\n\n")[0].splitlines()[3:] if line.strip()}
    assert evaluators == set(evaluator_names())


if __name__ == "__main__":
    regenerate()
    print(f"updated the catalog block of {CATALOG_DOC}", file=sys.stderr)
