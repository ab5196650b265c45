"""``jeval summarize``: the summary recomputed from a results file, and warnings where the stored one differs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.result_files import A, B, copy_run, run


def test_summarize_prints_the_recomputed_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "summarize", A)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[:9] == [
        f"File:      {A}",
        "Benchmark: quickstart",
        "Model:     model-a",
        "Total:     12",
        "Scored:    11",
        "Correct:   8",
        "Accuracy:  0.6667  95% CI [0.3906, 0.8619]",  # Wilson interval of 8/12
        "Unscored:  1",
        "Errors:    0",
    ]
    assert "Per subject:" in lines
    assert any(line.split() == ["facts", "4", "2", "0.500", "[0.150,", "0.850]", "0"] for line in lines)


def test_summarize_warns_when_the_stored_summary_differs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = copy_run(B, tmp_path)
    spath = path.with_name(path.name + ".summary.json")
    stored = json.loads(spath.read_text())
    stored["accuracy"] = 0.95  # tampered
    stored["correct"] = 11
    spath.write_text(json.dumps(stored))
    code, out, err = run(capsys, "summarize", path)
    assert code == 0  # a warning, not a failure
    assert "Accuracy:  0.9091" in out  # the records decide
    assert "warning" in err and "differs from its records on 2 field(s)" in err
    assert "accuracy: stored 0.95, recomputed 0.9090909090909091" in err
    assert "correct: stored 11, recomputed 10" in err


def test_summarize_does_not_warn_on_fields_the_records_cannot_give(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    path = copy_run(A, tmp_path)
    spath = path.with_name(path.name + ".summary.json")
    stored = json.loads(spath.read_text())
    stored.update(started_at=1.0, ended_at=2.0, skipped_rows=7, attempted_rate=0.5)  # run facts, a benchmark extra
    spath.write_text(json.dumps(stored))
    code, _, err = run(capsys, "summarize", path)
    assert code == 0 and err == ""


def test_summarize_without_a_stored_summary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / A.name
    shutil.copy(A, path)
    code, out, err = run(capsys, "summarize", path, "--json")
    assert code == 0
    assert json.loads(out)["correct"] == 8
    assert "not found" in err


def test_missing_file_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "summarize", tmp_path / "nope.jsonl")
    assert code == 2 and "no such file" in err


def test_accuracy_stats_mean_is_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    # quickstart model-a: 8 correct, 3 wrong, 1 unscored; the unscored answer scores 0 in both
    _code, out, _ = run(capsys, "summarize", A, "--json")
    summary = json.loads(out)
    assert summary["unscored"] == 1
    assert summary["accuracy_stats"]["mean"] == summary["accuracy"] == 8 / 12
