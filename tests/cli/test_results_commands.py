"""The ``jeval`` command on result files: list, summarize, compare, rescore.

Fixtures: ``tests/data/results/`` (regenerate with ``make_fixtures.py`` there). The
quickstart pair is built so that its comparison is known by hand: on the 11 shared
ids, B errored once; of the 10 ids answered by both, A alone is right on 1 and B
alone on 4; every B latency is the A latency minus 0.25 s.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from pytest_jeval.cli import _list, main
from pytest_jeval.cli._rescore import rescore_record
from pytest_jeval.scoring.registry import get_scorer

DATA = Path(__file__).resolve().parents[1] / "data" / "results"
A = DATA / "quickstart_model-a.jsonl"
B = DATA / "quickstart_model-b.jsonl"
JUDGE = DATA / "halueval-judge_judge-a.jsonl"


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def copy_run(src: Path, dest: Path) -> Path:
    target = dest / src.name
    shutil.copy(src, target)
    shutil.copy(src.with_name(src.name + ".summary.json"), target.with_name(target.name + ".summary.json"))
    return target


def write_run(path: Path, outcomes: list[bool], model: str) -> Path:
    """A results file (no stored summary) with one record per outcome, ids ``r-0``, ``r-1``, ..."""
    lines = [json.dumps({"record_id": f"r-{i}", "benchmark": "toy", "model": model, "is_correct": ok,
                         "score": float(ok), "error": None, "latency_seconds": 1.0}) for i, ok in enumerate(outcomes)]
    path.write_text("\n".join(lines) + "\n")
    return path


def paired_runs(tmp_path: Path, both: int, a_only: int, b_only: int, neither: int) -> tuple[Path, Path]:
    """Two runs on the same ids with the given 2x2 table of correctness."""
    a = [True] * both + [True] * a_only + [False] * b_only + [False] * neither
    b = [True] * both + [False] * a_only + [True] * b_only + [False] * neither
    return write_run(tmp_path / "toy_a.jsonl", a, "a"), write_run(tmp_path / "toy_b.jsonl", b, "b")


# -- summarize ---------------------------------------------------------------------------------

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


# -- compare -----------------------------------------------------------------------------------

def test_compare_on_shared_ids_with_paired_significance(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compare", A, B, "--json")
    assert code == 0
    result = json.loads(out)
    assert result["shared"] == 11
    assert result["only_in_some"] == {"count": 2, "records": [{"record_id": "qs-mc-04", "in": ["A"]},
                                                              {"record_id": "qs-mc-05", "in": ["B"]}]}
    a, b = result["metrics"]["A"], result["metrics"]["B"]
    assert (a["total_samples"], a["correct"], a["errors"], a["unscored"]) == (11, 7, 0, 1)
    assert (b["total_samples"], b["correct"], b["errors"], b["unscored"]) == (11, 9, 1, 0)
    assert b["accuracy"] == pytest.approx(9 / 10)
    (pair,) = result["paired"]
    assert pair["pairs"] == 10
    # b=1, c=4: exact two-sided binomial p = 2 * P(X <= 1 | n=5, 1/2) = 2 * 6/32
    assert pair["mcnemar"] == {"b": 1, "c": 4, "statistic": 1.0, "p_value": pytest.approx(0.375), "method": "exact"}
    accuracy = pair["differences"]["accuracy"]
    assert accuracy["difference"] == pytest.approx(0.3) and accuracy["n"] == 10
    assert accuracy["ci"][0] < 0.3 < accuracy["ci"][1]
    # a paired bootstrap of a constant shift is the shift itself, however spread the latencies are
    latency = pair["differences"]["mean_latency_seconds"]
    assert latency["difference"] == pytest.approx(-0.25)
    assert latency["ci"] == pytest.approx([-0.25, -0.25])
    assert result["per_subject"]["arithmetic"]["delta"]["B"] == pytest.approx(0.25)
    assert result["per_subject"]["multiple-choice"]["A"] == {"n": 3, "accuracy": pytest.approx(2 / 3)}
    assert result["per_subject"]["multiple-choice"]["delta"]["B"] == pytest.approx(1 / 3)


def test_compare_text_lists_records_in_one_file_only(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "compare", A, B)
    assert code == 0
    assert "shared record ids: 11    in some files only: 2" in out
    assert "record ids in some files only (2):\n  qs-mc-04  in A\n  qs-mc-05  in B" in out
    assert "McNemar: b=1 (A right, B wrong), c=4 (A wrong, B right), statistic=1.000, p=0.375 (exact)" in out
    code, out, _ = run(capsys, "compare", A, B, "--max-listed", "1")
    assert "  qs-mc-05  in B" not in out and "1 more" in out


def test_compare_mcnemar_textbook_chi_square(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Agresti, Categorical Data Analysis (1990), p. 350, presidential approval of 1600 people in two
    # surveys -- the example of R's ?mcnemar.test: 794 approve twice, 150 approve then disapprove,
    # 86 disapprove then approve, 570 disapprove twice. R: McNemar's chi-squared = 16.818, df = 1,
    # p-value = 4.115e-05 (continuity corrected: (|150 - 86| - 1)^2 / 236).
    first, second = paired_runs(tmp_path, both=794, a_only=150, b_only=86, neither=570)
    code, out, _ = run(capsys, "compare", first, second, "--json", "--resamples", "200")
    assert code == 0
    test = json.loads(out)["paired"][0]["mcnemar"]
    assert (test["b"], test["c"], test["method"]) == (150, 86, "chi2")
    assert test["statistic"] == pytest.approx(63**2 / 236) and round(test["statistic"], 3) == 16.818
    assert test["p_value"] == pytest.approx(4.115e-05, rel=1e-3)


def test_compare_mcnemar_exact_worked_example(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # b=1, c=9: under H0 b ~ Binomial(10, 1/2); two-sided p = 2 * (C(10,0) + C(10,1)) / 2^10 = 22/1024.
    first, second = paired_runs(tmp_path, both=5, a_only=1, b_only=9, neither=5)
    _code, out, _ = run(capsys, "compare", first, second, "--json")
    result = json.loads(out)
    test = result["paired"][0]["mcnemar"]
    assert (test["b"], test["c"], test["method"]) == (1, 9, "exact")
    assert test["p_value"] == pytest.approx(22 / 1024) == stats.binomtest(1, 10).pvalue
    diff = result["paired"][0]["differences"]["accuracy"]
    assert diff["difference"] == pytest.approx((9 - 1) / 20)


def test_compare_three_files_pairs_each_with_the_first(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    third = write_run(tmp_path / "toy_c.jsonl", [True] * 3, "c")
    _code, out, _ = run(capsys, "compare", A, B, third, "--json", "--resamples", "100")
    result = json.loads(out)
    assert [(p["first"], p["other"]) for p in result["paired"]] == [("A", "B"), ("A", "C")]
    assert result["shared"] == 0 and result["warning"] == "the files come from different benchmarks"
    assert result["only_in_some"]["count"] == 13 + 3


def test_compare_needs_two_files(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["compare", str(A)])
    assert exc.value.code == 2
    assert "at least two" in capsys.readouterr().err


# -- list --------------------------------------------------------------------------------------

def test_list_benchmarks_and_evaluators(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    class Exact:
        kinds = ("boolean",)

    class Judge:
        kinds, default_scale, uses_model, description = ("score",), (0, 4), True, "rubric"

    class Pairwise:
        kinds, choice_labels, uses_model = ("choice",), ("1", "2", "tie"), True

    monkeypatch.setattr(_list, "load_evaluators", lambda: {"llm_judge": Judge, "exact_match": Exact,
                                                           "pairwise": Pairwise})
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert any(line.split()[:4] == ["gsm8k", "math", "openai/gsm8k", "1319"] for line in out.splitlines())
    rows = {line.split()[0]: line.split() for line in out.split("evaluators:")[1].split("\n\n")[0].splitlines()[3:]}
    assert rows == {"exact_match": ["exact_match", "code", "boolean", "true/false"],
                    "llm_judge": ["llm_judge", "llm", "score", "0-4"],
                    "pairwise": ["pairwise", "llm", "choice", "1/2/tie"]}
    code, out, _ = run(capsys, "list", "--json")
    evaluators = json.loads(out)["evaluators"]
    assert [e["name"] for e in evaluators] == ["exact_match", "llm_judge", "pairwise"]
    assert evaluators[1] == {"name": "llm_judge", "category": "llm", "dataset": None, "kind": "score", "scale": "0-4",
                             "description": "rubric"}


def test_list_the_real_evaluator_registry(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _ = run(capsys, "list", "--json")
    evaluators = {e["name"]: e for e in json.loads(out)["evaluators"]}
    assert evaluators["sql"]["category"] == "code" and evaluators["factuality"]["scale"] == "A/B/C/D/E"


def test_list_without_an_evaluator_registry(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_list, "load_evaluators", lambda: None)
    code, out, _ = run(capsys, "list")
    assert code == 0 and "evaluators: none" in out and "quickstart" in out


def test_python_dash_m_entry_point() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest_jeval", "summarize", str(A)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Accuracy:  0.6667" in done.stdout


# -- rescore -----------------------------------------------------------------------------------

def test_rescore_keeps_unscored_when_the_scorer_says_so() -> None:
    record = {"record_id": "x", "model_answer": "I like turtles.", "expected": "42", "error": None,
              "is_correct": None, "score": None, "unscored": True, "scoring_metadata": {}}
    out = rescore_record(record, "numeric")
    assert out["is_correct"] is None and out["unscored"] is True and out["score"] is None


def test_rescore_scorer_crash_counts_as_wrong() -> None:
    record = {"record_id": "x", "model_answer": "5", "expected": "not a number", "error": None}
    out = rescore_record(record, "numeric")
    assert out["is_correct"] is False and out["score"] == 0.0
    assert "ValueError" in out["scoring_metadata"]["exception"]


def test_mcq_scorer_uses_stored_letters_and_keeps_the_judge_choice() -> None:
    mcq = get_scorer("mcq")
    record = {"record_id": "x", "model_answer": "Answer: F", "expected": "F", "error": None,
              "scoring_metadata": {"valid_letters": "ABCDEFGHIJ"}}
    assert mcq(record).correct is True
    judged = {"record_id": "y", "model_answer": "I'd go with the second-to-last one.", "expected": "C", "error": None,
              "is_correct": True, "score": 1.0, "extracted": "C",
              "scoring_metadata": {"extraction": "judge", "candidate_letter": "C", "judge_output": "C",
                                   "valid_letters": "ABCD"}}
    score = mcq(judged)
    assert score.correct is True and score.extracted == "C" and score.metadata == judged["scoring_metadata"]


def test_rescore_reproduces_the_quickstart_fixture_by_kind(tmp_path: Path) -> None:
    # numeric, contains and mcq records rescored each with its own scorer give the stored verdicts
    kind_scorer = {"arithmetic": "numeric", "facts": "contains", "multiple-choice": "mcq"}
    for line in A.read_text().splitlines():
        record = json.loads(line)
        assert rescore_record(record, kind_scorer[record["subject"]]) == record


def test_accuracy_stats_mean_is_accuracy(capsys: pytest.CaptureFixture[str]) -> None:
    # quickstart model-a: 8 correct, 3 wrong, 1 unscored; the unscored answer scores 0 in both
    _code, out, _ = run(capsys, "summarize", A, "--json")
    summary = json.loads(out)
    assert summary["unscored"] == 1
    assert summary["accuracy_stats"]["mean"] == summary["accuracy"] == 8 / 12
