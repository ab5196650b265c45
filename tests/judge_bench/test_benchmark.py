"""Gold sets to judge benchmarks: column mapping, record ids, file formats, and suite errors that name their key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.judge_bench import make_judge_benchmark
from pytest_jeval.judge_bench.bench_judge import score_of
from pytest_jeval.judge_bench.benchmark import gold_item, judge_setup
from pytest_jeval.scoring.judging.registry import Judgment
from pytest_jeval.suite.config import BenchmarkEntry
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples

ROWS = [
    {"id": "a1", "input": "Capital of France?", "output": "Paris", "expected": "paris", "gold": "yes", "subject": "geo"},
    {"id": None, "input": "2+2?", "output": "5", "expected": "4", "gold": False, "subject": None},
    {"id": "a3", "input": "Largest planet?", "output": "Jupiter", "expected": "Jupiter", "gold": 1, "subject": "space"},
]


def _entry(**kw: Any) -> BenchmarkEntry:
    kw.setdefault("name", "gold")
    kw.setdefault("data_files", "x")
    return BenchmarkEntry(**kw)


def _write(tmp_path: Path, fmt: str) -> Path:
    import pandas as pd

    frame = pd.DataFrame(ROWS).astype({"gold": str})
    path = tmp_path / f"gold.{fmt}"
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    elif fmt == "json":
        path.write_text(json.dumps(ROWS))
    elif fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv", "parquet"])
def test_gold_set_in_any_datasets_format(tmp_path: Path, fmt: str) -> None:
    bench = make_judge_benchmark(_entry(evaluator="exact_match"))
    samples, skipped = load_samples(bench, files=[_write(tmp_path, fmt)])
    assert skipped == 0
    assert [s.id for s in samples] == ["a1", "gold-1", "a3"]  # id column, else <name>-<row index>
    assert [s.target for s in samples] == [True, False, True]
    assert samples[0].subject == "geo" and samples[0].metadata["output"] == "Paris"
    item = gold_item(samples[0])
    assert item.expected == "paris" and item.data_dir == str(tmp_path)
    assert bench.prompt(samples[0]) is None  # code evaluator: no model call
    assert bench.scorer == "exact_match" and bench.name == "gold" and bench.category == "judge"


def test_llm_evaluator_prompt_is_prefetched_and_extra_columns_pass_through(tmp_path: Path) -> None:
    rows = [{"input": "Hello", "output": "Hallo", "gold": 4, "source_language": "en", "target_language": "de"}]
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n")
    bench = make_judge_benchmark(_entry(evaluator="translation"))
    (sample,), _ = load_samples(bench, files=[path])
    assert sample.target == 4 and gold_item(sample).extra == {"source_language": "en", "target_language": "de"}
    prompt = bench.prompt(sample)
    assert isinstance(prompt, str) and "English" in prompt and "German" in prompt


@pytest.mark.parametrize(("row", "message"), [
    ({"input": "q", "output": "o", "gold": "perhaps"}, "not a boolean"),
    ({"input": "q", "gold": True}, "needs a 'output' value"),
    ({"output": "o", "gold": True}, "'input' and 'gold'"),
])
def test_bad_rows_fail_at_load_time(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(DatasetLoadError, match=message):
        load_samples(make_judge_benchmark(_entry(evaluator="closed_qa")), files=[path])


def test_translation_needs_both_languages(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"input": "Hello", "output": "Hallo", "gold": 3, "source_language": "en"}) + "\n")
    with pytest.raises(DatasetLoadError, match="target_language"):
        load_samples(make_judge_benchmark(_entry(evaluator="translation")), files=[path])


def test_score_fields_of_a_record() -> None:
    ev, spec = judge_setup(_entry(evaluator="llm_judge"))
    runs = [Judgment(3, distribution={0: 0.0, 1: 0.0, 2: 0.1, 3: 0.6, 4: 0.3}, probability_source="logprobs", allowed_mass=0.95),
            Judgment(4), Judgment(None, unscored_reason="x")]
    s = score_of(ev, spec, 4, runs)
    assert s.correct is True and s.extracted == 3 and s.expected == 4
    f = s.fields
    assert (f["gold"], f["predicted"], f["case_kind"], f["scale"], f["tolerance"]) == (4, 3, "score", [0, 4], 1)
    assert f["probability"] == pytest.approx(1.0) and f["expected_level"] == pytest.approx(0.2 + 1.8 + 1.2)
    assert f["repeat_predictions"] == [3, 4, None] and f["low_mass"] is False and f["evaluator"] == "llm_judge"
    unscored = score_of(ev, spec, 2, [Judgment(None, probability_source="unscored", raw=("??",), unscored_reason="no label")])
    assert unscored.correct is None and unscored.fields["raw_replies"] == ["??"] and unscored.fields["probability"] is None
    assert unscored.metadata["unscored_reason"] == "no label"


@pytest.mark.parametrize(("bench", "needle"), [
    ('evaluator = "nope"', "benchmarks[0].evaluator: unknown evaluator 'nope'"),
    ('evaluator = "exact_match"\nkind = "score"', "benchmarks[0].kind: evaluator 'exact_match' produces boolean cases"),
    ('evaluator = "llm_judge"\nscale = [0, 40]', "benchmarks[0].scale: scale must satisfy"),
])
def test_suite_errors_name_the_key(pytester: pytest.Pytester, bench: str, needle: str) -> None:
    (pytester.path / "g.jsonl").write_text(json.dumps(ROWS[0]) + "\n")
    (pytester.path / "suite.toml").write_text(
        '[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n\n'
        f'[[benchmarks]]\nname = "g"\ndata_files = "g.jsonl"\n{bench}\n')
    result = pytester.runpytest("--jeval-config", "suite.toml")
    assert result.ret != 0
    assert needle in result.stderr.str() + result.stdout.str()
