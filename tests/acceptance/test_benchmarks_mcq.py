"""Multiple-choice built-ins: gpqa (shuffled options), mmlu-pro (A-J), truthfulqa-mc (MC1, real file)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_jeval.benchmarks import bench_gpqa, bench_mmlu_pro, bench_truthfulqa_mc
from pytest_jeval.suite.dataset import load_samples
from tests.support.bench import DATA, mcq_answerer, options_in, serve
from tests.support.gsm import outcome_ids

GPQA_CSV = DATA / "gpqa" / "gpqa_diamond.csv"


def gpqa_rows() -> list[dict[str, str]]:
    with open(GPQA_CSV, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --------------------------------------------------------------------------- gpqa: the shuffle


def test_gpqa_shuffle_is_stable_per_record_and_gold_follows_it() -> None:
    inc = ["w1", "w2", "w3"]
    first = bench_gpqa.shuffle_options("right", inc, seed=42, record_id="recX")
    assert bench_gpqa.shuffle_options("right", inc, seed=42, record_id="recX") == first
    options, gold = first
    assert sorted(options) == sorted(["right", *inc])
    assert options["ABCD".index(gold)] == "right"
    # another seed or another record gives another order for some records
    orders = {bench_gpqa.shuffle_options("right", inc, seed=s, record_id="recX")[0] for s in range(20)}
    assert len(orders) > 5


def test_gpqa_golds_are_spread_over_a_to_d() -> None:
    golds = Counter(bench_gpqa.shuffle_options("c", ["x", "y", "z"], seed=42, record_id=f"rec{i:05d}")[1]
                    for i in range(800))
    assert set(golds) == set("ABCD")
    for letter in "ABCD":
        assert 140 <= golds[letter] <= 260, golds  # about 200 each; the reference always had A
    samples, _ = load_samples(bench_gpqa.BENCHMARK, files=[GPQA_CSV])
    assert len({s.target for s in samples}) >= 3


def test_gpqa_shuffle_independent_of_max_samples_and_row_order(tmp_path: Path) -> None:
    full, _ = load_samples(bench_gpqa.BENCHMARK, files=[GPQA_CSV], seed=7)
    some, _ = load_samples(bench_gpqa.BENCHMARK, files=[GPQA_CSV], seed=7, max_samples=3)
    assert len(some) == 3
    by_id = {s.id: s for s in full}
    for s in some:
        assert (s.choices, s.target) == (by_id[s.id].choices, by_id[s.id].target)
    # the same rows in reverse order: same ids, same shuffles
    rows = gpqa_rows()
    reversed_csv = tmp_path / "reversed.csv"
    with open(reversed_csv, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(reversed(rows))
    again, _ = load_samples(bench_gpqa.BENCHMARK, files=[reversed_csv], seed=7)
    assert {s.id: (s.choices, s.target) for s in again} == {s.id: (s.choices, s.target) for s in full}
    # the seed does change the shuffle
    other, _ = load_samples(bench_gpqa.BENCHMARK, files=[GPQA_CSV], seed=8)
    assert [s.choices for s in other] != [s.choices for s in full]


def test_gpqa_samples_ids_subjects_and_gold_text() -> None:
    samples, skipped = load_samples(bench_gpqa.BENCHMARK, files=[GPQA_CSV])
    rows = {r["Record ID"]: r for r in gpqa_rows()}
    assert skipped == 0 and [s.id for s in samples] == list(rows)
    for s in samples:
        row = rows[s.id]
        assert s.choices["ABCD".index(s.target)] == row["Correct Answer"].strip()
        assert s.subject == row["Subdomain"]


def test_gpqa_through_the_plugin(pytester: pytest.Pytester) -> None:
    rows = gpqa_rows()
    key_to_answer = {r["Question"]: r["Correct Answer"].strip() for r in rows}
    wrong = {rows[1]["Question"], rows[4]["Question"]}
    with serve(pytester, mcq_answerer(key_to_answer, wrong)) as p:
        result = p.run("gpqa", "gpqa/gpqa_diamond.csv")
        result.assert_outcomes(passed=6, failed=2)
        assert outcome_ids(result, "failed") == {rows[1]["Record ID"], rows[4]["Record ID"]}
        records = p.records("gpqa")
        assert set(records) == {r["Record ID"] for r in rows}
        samples = {s.id: s for s in load_samples(bench_gpqa.BENCHMARK, files=[GPQA_CSV])[0]}
        for rid, rec in records.items():
            assert rec["expected"] == samples[rid].target
            assert rec["scoring_metadata"]["reference_letter"] == samples[rid].target
        # the prompts showed the correct answer at more than one position
        positions = set()
        for prompt in p.router.model_prompts:
            opts = options_in(prompt)
            positions |= {k for k, v in opts.items() if v in key_to_answer.values()}
        assert len(positions) >= 3
        s = p.summary("gpqa")
        assert s["accuracy"] == pytest.approx(6 / 8)
        assert set(s["per_subject"]) == {r["Subdomain"] for r in rows}


# --------------------------------------------------------------------------- mmlu-pro


def mmlu_rows() -> list[dict]:
    return [json.loads(line) for line in (DATA / "mmlu_pro" / "test.jsonl").read_text().splitlines()]


def test_mmlu_pro_letters_a_to_j_and_na_padding() -> None:
    samples, _ = load_samples(bench_mmlu_pro.BENCHMARK, files=[DATA / "mmlu_pro" / "test.jsonl"])
    by_id = {s.id: s for s in samples}
    assert list(by_id) == ["70", "71", "72", "73", "74"]
    assert by_id["72"].target == "I" and bench_mmlu_pro.letters(by_id["72"]) == "ABCDEFGHIJ"
    assert by_id["73"].choices == ("Gross Domestic Product", "General Debt Position",
                                   "Government Deficit Percentage", "Gross Dividend Payout")
    assert "N/A" not in bench_mmlu_pro.prompt(by_id["73"])
    for row in mmlu_rows():
        s = by_id[str(row["question_id"])]
        assert s.choices["ABCDEFGHIJ".index(s.target)] == row["options"][row["answer_index"]]
        assert s.subject == row["category"]


def test_mmlu_pro_through_the_plugin(pytester: pytest.Pytester) -> None:
    rows = mmlu_rows()
    key_to_answer = {r["question"]: r["options"][r["answer_index"]] for r in rows}
    with serve(pytester, mcq_answerer(key_to_answer, wrong={rows[2]["question"]})) as p:
        result = p.run("mmlu-pro", "mmlu_pro/test.jsonl")
        result.assert_outcomes(passed=4, failed=1)
        assert outcome_ids(result, "failed") == {"72"}
        records = p.records("mmlu-pro")
        assert records["72"]["is_correct"] is False and records["72"]["expected"] == "I"
        assert records["74"]["extracted"] == "D" and records["74"]["is_correct"] is True
        assert set(p.summary("mmlu-pro")["per_subject"]) == {"other", "math", "law", "economics", "chemistry"}


# --------------------------------------------------------------------------- truthfulqa-mc


def test_truthfulqa_hub_schema_through_the_plugin(pytester: pytest.Pytester) -> None:
    rows = [json.loads(line) for line in (DATA / "truthfulqa_mc" / "validation.jsonl").read_text().splitlines()]
    key_to_answer = {r["question"]: r["mc1_targets"]["choices"][0] for r in rows}
    with serve(pytester, mcq_answerer(key_to_answer, wrong={rows[0]["question"]})) as p:
        result = p.run("truthfulqa-mc", "truthfulqa_mc/validation.jsonl")
        result.assert_outcomes(passed=2, failed=1)
        assert outcome_ids(result, "failed") == {"truthfulqa-mc-0"}
        assert set(p.records("truthfulqa-mc")) == {"truthfulqa-mc-0", "truthfulqa-mc-1", "truthfulqa-mc-2"}


def test_truthfulqa_real_mc_task_file_loads(test_data: Path) -> None:
    path = test_data / "truthfulqa" / "data" / "mc_task.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    samples, skipped = load_samples(bench_truthfulqa_mc.BENCHMARK, files=[path], split="validation")
    assert (len(samples), skipped) == (790, 0)
    assert [s.id for s in samples[:3]] == ["truthfulqa-mc-0", "truthfulqa-mc-1", "truthfulqa-mc-2"]
    for s, row in zip(samples, raw):
        true = [k for k, v in row["mc1_targets"].items() if v == 1]
        assert s.input == row["question"]
        assert sorted(s.choices) == sorted(row["mc1_targets"])
        assert s.choices[ord(s.target) - ord("A")] == true[0]
    # the true answer is listed first upstream; after the shuffle it is not always A
    golds = Counter(s.target for s in samples)
    assert golds["A"] < 0.4 * len(samples) and len(golds) >= 5


def test_truthfulqa_real_file_scores_through_the_plugin(pytester: pytest.Pytester, test_data: Path) -> None:
    path = test_data / "truthfulqa" / "data" / "mc_task.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    chosen = list(range(0, 790, 79))  # 10 records
    key_to_answer = {raw[i]["question"]: next(k for k, v in raw[i]["mc1_targets"].items() if v == 1) for i in chosen}
    wrong = {raw[chosen[1]]["question"], raw[chosen[6]]["question"]}
    ids = json.dumps([f"truthfulqa-mc-{i}" for i in chosen])
    with serve(pytester, mcq_answerer(key_to_answer, wrong)) as p:
        result = p.run("truthfulqa-mc", str(path), extra=f'split = "validation"\nrecord_ids = {ids}')
        result.assert_outcomes(passed=8, failed=2)
        assert outcome_ids(result, "failed") == {f"truthfulqa-mc-{chosen[1]}", f"truthfulqa-mc-{chosen[6]}"}
        assert p.summary("truthfulqa-mc")["accuracy"] == pytest.approx(0.8)
