"""``jeval compare``: runs compared on shared ids, with paired significance (McNemar)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats

from pytest_jeval.cli import main
from tests.support.result_files import A, B, paired_runs, run, write_run


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
