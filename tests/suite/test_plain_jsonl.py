"""Small local JSON lines read with ``json``: the same rows as ``datasets``, or ``datasets`` reads them.

Each "same" case compares :func:`plain_jsonl_rows` with the rows of ``datasets.load_dataset`` itself
(values, their types and the key order); each "declined" case is one where the two would differ, and
shows the difference, so a guard that let it through would fail here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import Benchmark, LoadContext, Sample
from pytest_jeval.benchmarks.bench_gsm8k import BENCHMARK as GSM8K
from pytest_jeval.suite import dataset as dataset_module
from pytest_jeval.suite.dataset import iter_rows, load_rows, load_samples
from pytest_jeval.suite.plain_jsonl import plain_jsonl_rows


def typed(value: Any) -> Any:
    """The value with the type of every part spelled out (1 and 1.0 and True compare equal in Python)."""
    if isinstance(value, dict):
        return [(k, typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def via_datasets(*files: Path) -> list[Any]:
    return [typed(row) for row in iter_rows(load_rows(GSM8K, list(files), None, None))]


def write(path: Path, rows: list[dict[str, Any]], end: str = "\n") -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + end for r in rows), encoding="utf-8")
    return path


SAME = [
    {"question": "Tom has 3 — «marbles»?", "answer": "#### 5", "n": 1, "x": 0.5, "ok": True, "tags": ["a", "b"],
     "ints": [1, 2], "none": None, "maybe": None, "text": "12-3 is not a date"},
    {"question": "😀 two", "answer": "#### 6", "n": -(1 << 63), "x": 2.0, "ok": False, "tags": [], "ints": [3, None],
     "none": None, "maybe": "x", "text": "plain"},
]


def test_flat_rows_are_the_rows_datasets_gives(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", SAME)
    b = write(tmp_path / "b.jsonl", SAME[::-1], end="\r\n")
    got = plain_jsonl_rows([a, b])
    assert got is not None
    assert [typed(r) for r in got] == via_datasets(a, b)


@pytest.mark.parametrize("rows", [
    pytest.param([{"d": "2020-01-01T10:00"}, {"d": "2021-02-03"}], id="date-strings-become-timestamps"),
    pytest.param([{"a": 1, "b": 2}, {"a": 2.5, "b": 3}], id="int-beside-float-becomes-float"),
    pytest.param([{"a": 1, "b": "x"}, {"a": 2}], id="missing-key-becomes-null"),
    pytest.param([{"a": 1, "b": "x"}, {"b": "y", "a": 2}], id="key-order-of-first-appearance"),
])
def test_rows_datasets_would_change_are_declined(tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    path = write(tmp_path / "rows.jsonl", rows)
    assert plain_jsonl_rows([path]) is None
    assert via_datasets(path) != [typed(r) for r in rows]


@pytest.mark.parametrize("text", [
    pytest.param('{"a": 1, "a": 2}\n', id="duplicate-key"),
    pytest.param('{"a": "\\ud800"}\n', id="lone-surrogate"),
    pytest.param('{"a": 1}\n\n{"a": 2}\n', id="blank-line"),
    pytest.param('[1, 2]\n', id="not-an-object"),
    pytest.param('{"a": 1}\n{"a": \n', id="bad-json"),
    pytest.param('{"a": 1e400}\n', id="infinite-float"),
    pytest.param('{"a": 9223372036854775808}\n', id="beyond-int64"),
    pytest.param('{"a": [1, 2.5]}\n', id="mixed-list"),
    pytest.param('', id="empty"),
    pytest.param('{"a": {"k": 1}}\n', id="object-value"),
    pytest.param('{"a": [{"k": 1}]}\n', id="list-of-objects"),
])
def test_anything_else_is_left_to_datasets(tmp_path: Path, text: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(text, encoding="utf-8")
    assert plain_jsonl_rows([path]) is None


def test_other_formats_and_large_files_are_left_to_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"question": "q", "answer": "#### 1"}]
    assert plain_jsonl_rows([write(tmp_path / "rows.json", rows)]) is None
    path = write(tmp_path / "rows.jsonl", rows)
    assert plain_jsonl_rows([path]) == rows
    monkeypatch.setattr("pytest_jeval.suite.plain_jsonl.MAX_BYTES", path.stat().st_size - 1)
    assert plain_jsonl_rows([path]) is None


def test_samples_and_subsets_are_those_of_the_datasets_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``load_samples`` on the plain rows gives the samples the ``datasets`` path gives: all of them, and the
    ``max_samples`` walk (every fourth row is skipped, so the walk passes over some)."""

    def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
        return None if row["n"] % 4 == 1 else Sample(id=f"r{row['n']}", input=row["q"], target=str(row["n"]))

    bench = Benchmark(name="skips", category="qa", description="", dataset=None, to_sample=to_sample,
                      prompt=lambda s: s.input, scorer="exact")
    path = write(tmp_path / "rows.jsonl", [{"q": f"q{i}?", "n": i} for i in range(60)])

    def both() -> list[Any]:
        return [load_samples(bench, files=[path]), load_samples(bench, files=[path], max_samples=9, seed=3)]

    plain = both()
    monkeypatch.setattr(dataset_module, "plain_jsonl_rows", lambda files: None)
    through = both()
    assert plain == through
    assert len(plain[0][0]) == 45 and plain[0][1] == 15 and len(plain[1][0]) == 9
