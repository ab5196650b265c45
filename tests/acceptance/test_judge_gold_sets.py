"""The real gold sets in tests/data: LLMBar (pairwise), HaluEval (hallucination), WMT MQM (translation), BFCL (tool calls).

Small subsets are copied into a temporary folder and run as one suite against a
local server whose verdicts are scripted per item, so every metric is known in
advance. BFCL's ground-truth calls are also checked in full against the evaluator.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.judge_bench import GoldItem, get_evaluator
from pytest_jeval.judge_bench.gold import (
    bfcl_reference_call,
    bfcl_rows,
    halueval_rows,
    llmbar_rows,
    mqm_level,
    wmt_mqm_rows,
    write_jsonl,
)
from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.judging import KEY, JudgeScript, SuiteRun, run_suite, suite_text, verdict_answer

DATA = Path(__file__).resolve().parents[1] / "data"
BFCL = DATA / "bfcl" / "data"


# -- LLMBar --------------------------------------------------------------------------------------
def llmbar_subset() -> list[dict[str, Any]]:
    return llmbar_rows(DATA / "llmbar" / "Dataset" / "LLMBar" / "Natural" / "dataset.json")[:20]


def llmbar_answer(row: dict[str, Any], k: int, swapped: bool) -> Any:
    """k % 4: 0 right in both orders; 1 always "A" (position bias); 2 wrong in both; 3 right then wrong."""
    good = row["gold"]  # "1" or "2": which original output is better
    good_pos = ("A" if good == "1" else "B") if not swapped else ("B" if good == "1" else "A")
    bad_pos = "B" if good_pos == "A" else "A"
    mode = k % 4
    if mode == 0:
        return verdict_answer("Comparing both:\n", good_pos, [(good_pos, 0.9), (bad_pos, 0.1)])
    if mode == 1:
        return verdict_answer("", "A", [("A", 0.8), ("B", 0.2)])
    if mode == 2:
        return verdict_answer("", bad_pos, [(bad_pos, 0.7), (good_pos, 0.3)])
    if not swapped:
        return verdict_answer("", good_pos, [(good_pos, 0.6), (bad_pos, 0.4)])
    return verdict_answer("", bad_pos, [(bad_pos, 0.55), (good_pos, 0.45)])


def llmbar_rule(rows: list[dict[str, Any]]) -> Any:
    def rule(body: dict[str, Any], prompt: str, attempt: int) -> Any:
        for k, r in enumerate(rows):
            for swapped in (False, True):
                a, b = (r["output_2"], r["output_1"]) if swapped else (r["output_1"], r["output_2"])
                if f"[Instruction]:\n{r['input']}\n\n[Response A]:\n{a}\n\n[Response B]:\n{b}\n\n" in prompt:
                    return llmbar_answer(r, k, swapped)
        return "unknown pair"
    return rule


# -- HaluEval ------------------------------------------------------------------------------------
def halueval_subset() -> list[dict[str, Any]]:
    rows = halueval_rows(DATA / "halueval" / "data" / "general_data.first37.json")
    hallucinated = [r for r in rows if r["gold"] is False][:15]
    clean = [r for r in rows if r["gold"] is True][:15]
    return sorted(hallucinated + clean, key=lambda r: int(r["id"].split("-")[1]))


def halueval_rule(rows: list[dict[str, Any]]) -> Any:
    """Right on every item except k % 5 == 0, where the verdict flips (with less confidence)."""
    def rule(body: dict[str, Any], prompt: str, attempt: int) -> Any:
        for k, r in enumerate(rows):
            if f"[Task]: {r['input']}\n[Submission]: {r['output']}\n[Criterion]" in prompt:
                right = "Yes" if r["gold"] else "No"
                wrong = "No" if right == "Yes" else "Yes"
                if k % 5 == 0:
                    return verdict_answer("Checked.\n", wrong, [(wrong, 0.6), (right, 0.4)])
                return verdict_answer("Checked.\n", right, [(right, 0.9), (wrong, 0.1)])
        return "unknown"
    return rule


# -- WMT MQM -------------------------------------------------------------------------------------
OFFSETS = [0, 1, -1, 2, -2]


def wmt_subset() -> list[dict[str, Any]]:
    rows = wmt_mqm_rows(DATA / "wmt_mqm_ted_ende" / "mqm_ted_ende.subset.tsv",
                        DATA / "wmt_mqm_ted_ende" / "mqm_ted_ende.avg_seg_scores.subset.tsv")
    picked: list[dict[str, Any]] = []
    for level in range(5):
        picked += [r for r in rows if r["gold"] == level][:5]
    return picked


def wmt_level(k: int, gold: int) -> int:
    return min(4, max(0, gold + OFFSETS[k % 5]))


def wmt_rule(rows: list[dict[str, Any]]) -> Any:
    def rule(body: dict[str, Any], prompt: str, attempt: int) -> Any:
        for k, r in enumerate(rows):
            if f"[English source]: {r['input']}\n" in prompt and f"[German translation]: {r['output']}\n" in prompt:
                level = str(wmt_level(k, r["gold"]))
                return verdict_answer("Some issues.\n", level, [(level, 0.7), ("4" if level != "4" else "3", 0.3)])
        return "unknown"
    return rule


# -- BFCL ----------------------------------------------------------------------------------------
def _python_call(call: dict[str, Any]) -> str:
    (name, args), = call.items()
    return f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


def perturb(row: dict[str, Any], k: int) -> list[dict[str, Any]]:
    """A wrong call for a BFCL row: wrong name, missing required, unacceptable value, or unknown parameter."""
    call = copy.deepcopy(bfcl_reference_call(row["expected"], 0, row["context"]))
    (name, args), = call[0].items()
    spec = next(f for f in row["context"] if f["name"] == name)
    required = [p for p in spec["parameters"].get("required", []) if p in args]
    acceptable = row["expected"][0][name]
    scalars = [p for p in required if isinstance(args[p], (int, float, str, bool))]
    mode = k % 4
    if mode == 0:
        return [{name + "_v2": args}]
    if mode == 1 and required:
        return [{name: {p: v for p, v in args.items() if p != required[0]}}]
    if mode == 2 and scalars:
        p = scalars[0]
        v = args[p]
        bad: Any = (not v) if isinstance(v, bool) else v + 7919 if isinstance(v, (int, float)) else "zzz-not-acceptable"
        assert bad not in acceptable[p]
        return [{name: dict(args, **{p: bad})}]
    return [{name: dict(args, unexpected_param=1)}]


def bfcl_subset() -> list[dict[str, Any]]:
    rows = (bfcl_rows(BFCL / "BFCL_v4_simple_python.json", BFCL / "possible_answer" / "BFCL_v4_simple_python.json")[:10]
            + bfcl_rows(BFCL / "BFCL_v4_multiple.json", BFCL / "possible_answer" / "BFCL_v4_multiple.json")[:10])
    out = []
    for k, r in enumerate(rows):
        good = bfcl_reference_call(r["expected"], k % 2, r["context"])
        out.append(dict(r, output=_python_call(good[0]) if k % 2 else good, gold=True))
        out.append(dict(r, id=r["id"] + "-bad", output=perturb(r, k), gold=False))
    return out


# -- the run -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def gold_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SuiteRun, dict[str, list[dict[str, Any]]], list[str]]]:
    folder = tmp_path_factory.mktemp("gold-sets")
    sets = {"llmbar": llmbar_subset(), "halueval": halueval_subset(), "wmt": wmt_subset(), "bfcl": bfcl_subset()}
    for name, rows in sets.items():
        write_jsonl(folder / f"{name}.jsonl", rows)
    script = JudgeScript()
    script.add("[Response A]", llmbar_rule(sets["llmbar"]))
    script.add("[Criterion]", halueval_rule(sets["halueval"]))
    script.add("[English source]", wmt_rule(sets["wmt"]))
    with FakeOpenAIServer(script, api_key=KEY, models=("judge-model",)) as server:
        run = run_suite(folder, suite_text(
            server.base_url,
            'name = "llmbar"\nevaluator = "pairwise"\ndata_files = "llmbar.jsonl"',
            'name = "halueval"\nevaluator = "closed_qa"\ndata_files = "halueval.jsonl"',
            'name = "wmt"\nevaluator = "translation"\ndata_files = "wmt.jsonl"',
            'name = "bfcl"\nevaluator = "tool_call_accuracy"\ndata_files = "bfcl.jsonl"',
        ))
    assert run.ret == 1 and run.item_outcomes
    yield run, sets, script.prompts


def test_llmbar_pairwise_both_orders(gold_run: Any) -> None:
    run, sets, prompts = gold_run
    rows = sets["llmbar"]
    assert sum("[Response A]" in p for p in prompts) >= 2 * len(rows)  # every pair in both orders
    recs = run.by_id("llmbar")
    for k, row in enumerate(rows):
        r = recs[row["id"]]
        mode = k % 4
        assert r["gold"] == row["gold"] and r["case_kind"] == "choice" and r["labels"] == ["1", "2", "tie"]
        assert r["position_consistent"] is (mode in (0, 2)), k
        expected = {0: row["gold"], 1: "tie", 2: "2" if row["gold"] == "1" else "1", 3: row["gold"]}[mode]
        assert r["predicted"] == expected, k
        assert r["probability"] == pytest.approx({0: 0.9, 1: 0.0, 2: 0.7, 3: (0.6 + 0.45) / 2}[mode]), k
    s = run.summary("llmbar")
    assert s["accuracy"] == pytest.approx(0.5) and s["position_consistency"] == pytest.approx(0.5)
    assert s["confusion_matrix"]["labels"] == ["1", "2", "tie"]
    assert sum(s["confusion_matrix"]["matrix"][2]) == 0  # LLMBar has no tie gold
    assert run.outcomes("llmbar") == {r["id"]: "PASSED" if k % 4 in (0, 3) else "FAILED" for k, r in enumerate(rows)}


def test_halueval_hallucination_yes_no(gold_run: Any) -> None:
    run, sets, _ = gold_run
    rows = sets["halueval"]
    recs = run.by_id("halueval")
    flipped = {r["id"] for k, r in enumerate(rows) if k % 5 == 0}
    for r in rows:
        rec = recs[r["id"]]
        assert rec["gold"] is r["gold"] and rec["is_correct"] is (r["id"] not in flipped)
        assert rec["probability"] == pytest.approx(0.6 if r["id"] in flipped else 0.9)
    s = run.summary("halueval")
    gold = [r["gold"] for r in rows]
    pred = [g if r["id"] not in flipped else not g for g, r in zip(gold, rows)]
    tp = sum(p and g for p, g in zip(pred, gold))
    fp = sum(p and not g for p, g in zip(pred, gold))
    fn = sum(g and not p for p, g in zip(pred, gold))
    assert s["accuracy"] == pytest.approx(24 / 30)
    assert (s["precision"], s["recall"]) == pytest.approx((tp / (tp + fp), tp / (tp + fn)))
    # calibration: 24 items at 0.9 all right, 6 at 0.6 all wrong
    assert s["brier"] == pytest.approx((24 * 0.01 + 6 * 0.36) / 30)
    assert s["ece"] == pytest.approx((24 * 0.1 + 6 * 0.6) / 30)
    assert s["routing"]["auto_accept"]["coverage"] == pytest.approx(0.8) and s["routing"]["auto_accept"]["accuracy"] == 1.0
    assert s["routing"]["human_review"]["coverage"] == pytest.approx(0.2) and s["routing"]["human_review"]["accuracy"] == 0.0


def test_wmt_translation_levels_from_mqm(gold_run: Any) -> None:
    run, sets, prompts = gold_run
    rows = sets["wmt"]
    assert [r["gold"] for r in rows] == [lv for lv in range(5) for _ in range(5)]
    assert all(r["gold"] == mqm_level(r["mqm_score"]) for r in rows)
    assert any("from English into German" in p for p in prompts)
    recs = run.by_id("wmt")
    pred = [wmt_level(k, r["gold"]) for k, r in enumerate(rows)]
    gold = [r["gold"] for r in rows]
    for k, r in enumerate(rows):
        assert recs[r["id"]]["predicted"] == pred[k] and recs[r["id"]]["is_correct"] is (abs(pred[k] - gold[k]) <= 1)
    s = run.summary("wmt")
    assert s["tolerance"] == 1 and s["scale"] == [0, 4]
    assert s["accuracy"] == pytest.approx(sum(abs(p - g) <= 1 for p, g in zip(pred, gold)) / 25)
    assert s["mae"] == pytest.approx(sum(abs(p - g) for p, g in zip(pred, gold)) / 25)
    assert s["signed_mean_error"] == pytest.approx(sum(p - g for p, g in zip(pred, gold)) / 25)


def test_mqm_level_mapping() -> None:
    assert [mqm_level(s) for s in (0.0, -0.3, -0.5, -1.0, -2.0, -2.1, -5.0, -6.0, -10.0, -10.1, -25.0)] == \
        [4, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0]


def test_bfcl_subset_through_the_plugin(gold_run: Any) -> None:
    run, sets, _ = gold_run
    rows = sets["bfcl"]
    outcomes = run.outcomes("bfcl")
    assert outcomes == {r["id"]: "PASSED" for r in rows}  # the evaluator is right on every call
    recs = run.by_id("bfcl")
    assert {recs[r["id"]]["predicted"] for r in rows if r["gold"]} == {True}
    assert {recs[r["id"]]["predicted"] for r in rows if not r["gold"]} == {False}
    assert recs["simple_python_0"]["model_answer"] is None  # code evaluator: no model call
    s = run.summary("bfcl")
    assert s["accuracy"] == 1.0 and s["confusion_matrix"]["matrix"] == [[20, 0], [0, 20]] and s["cohen_kappa"] == 1.0


@pytest.mark.parametrize(("category", "language"), [("simple_python", "python"), ("simple_java", "java"),
                                                     ("simple_javascript", "javascript"), ("multiple", "python")])
def test_bfcl_ground_truth_calls_score_correct_and_perturbed_ones_do_not(category: str, language: str) -> None:
    ev = get_evaluator("tool_call_accuracy")
    spec = ev.spec(None, None)
    rows = bfcl_rows(BFCL / f"BFCL_v4_{category}.json", BFCL / "possible_answer" / f"BFCL_v4_{category}.json", language)
    assert len(rows) in (50, 100, 200, 400)
    for k, r in enumerate(rows):
        item = dict(input=r["input"], expected=json.dumps(r["expected"]), context=json.dumps(r["context"]),
                    extra={"language": language})
        for choice in (0, 1):
            call = json.dumps(bfcl_reference_call(r["expected"], choice, r["context"]))
            good = ev.run(GoldItem(output=call, **item), spec, None)  # type: ignore[arg-type]
            assert good.predicted is True, (r["id"], good.details)
        if language == "python":
            bad = ev.run(GoldItem(output=json.dumps(perturb(r, k)), **item), spec, None)  # type: ignore[arg-type]
            assert bad.predicted is False, (r["id"], perturb(r, k))
