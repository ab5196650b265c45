"""ama-bench's parts without a model: token F1 (hand-computed), the judge's verdict, the answer slot, the
context packing and the loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_jeval.benchmarks.ama_bench import bench_ama_bench as bench
from pytest_jeval.benchmarks.ama_bench.data import Options, pack
from pytest_jeval.benchmarks.ama_bench.metrics import final_answer, judge_prompt, normalize, parse_verdict, token_f1
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from tests.support.paths import TEST_DATA

FILE = TEST_DATA / "ama_bench" / "test" / "open_end_qa_set.jsonl"


@pytest.mark.parametrize(("predicted", "gold", "f1"), [
    ("The red apple.", "red apple", 1.0),  # articles and punctuation go
    ("a carrot and an apple", "A carrot.", 0.5),  # tokens carrot/and/apple vs carrot: P 1/3, R 1
    ("it grilled the apple", "sliced the apple then grilled it", 0.75),  # 3 common: P 3/3, R 3/5
    ("", "", 1.0),
    ("", "Room 3.", 0.0),
    ("kitchen", "Room 3.", 0.0),
])
def test_token_f1_is_the_hand_computed_value(predicted: str, gold: str, f1: float) -> None:
    assert token_f1(predicted, gold) == pytest.approx(f1)


def test_normalize_and_the_answer_slot() -> None:
    assert normalize("The Red-Apple, an apple!") == "red apple apple"
    assert final_answer("I looked at step 2.\nAnswer[1]: Room 3\nThat is all.") == "Room 3"
    assert final_answer("<think>room 9?</think>##Answer: Room 3\nmore") == "Room 3"
    assert final_answer("  Room 3  ") == "Room 3"


@pytest.mark.parametrize(("reply", "verdict"), [
    ("yes", True), ("No.", False), ("<think>yes, clearly</think>\nno", False), ("Yes, but on reflection no", False),
    ("No... actually yes", True), ("maybe", None), ("", None), ("The answer is not right.", None),
])
def test_the_judge_verdict_is_the_last_yes_or_no(reply: str, verdict: bool | None) -> None:
    assert parse_verdict(reply) is verdict


def test_the_judge_prompt_carries_the_context() -> None:
    text = judge_prompt("Q?", "ref", "pred", task_type="tw", episode_id="e1", task="cook")
    assert "Task type: tw" in text and "Episode: e1" in text and "Task: cook" in text
    assert text.index("Reference answer: ref") < text.index("Predicted answer: pred")


def samples(**options: int) -> dict[str, object]:
    return {s.id: s for s in load_samples(bench.BENCHMARK, files=[FILE], options=Options(**options))[0]}


def test_each_question_is_a_sample_and_shares_its_episode() -> None:
    got = samples()
    assert list(got) == [f"tw_cooking_001-q{i}" for i in range(4)] + [f"tw_treasure_002-q{i}" for i in range(3)]
    first, second = got["tw_cooking_001-q0"], got["tw_cooking_001-q1"]
    assert first.subject == "A" and second.subject == "B"  # type: ignore[attr-defined]
    assert first.metadata["trajectory"] is second.metadata["trajectory"]  # type: ignore[attr-defined]


def test_packing_keeps_the_start_and_the_end_and_says_what_it_dropped() -> None:
    trajectory = samples()["tw_treasure_002-q0"].metadata["trajectory"]  # type: ignore[attr-defined]
    whole = pack(trajectory, 100_000)
    assert whole.dropped is None and whole.kept == 40 and "Step 39:" in whole.text
    cut = pack(trajectory, 2_000)
    assert cut.dropped is not None and len(cut.text) <= 2_000 + 100
    first, last = cut.dropped
    assert 0 < first <= last < 39 and cut.kept == 40 - (last - first + 1)
    assert cut.text.startswith("Step 0:") and "Step 39:" in cut.text and f"Step {first}:" not in cut.text
    assert cut.dropped_chars > 0 and f"steps {first + 1} to {last + 1} of 40 are left out" in cut.text
    head = cut.text.split("[...")[0]
    assert len(head) <= 2_000 * 0.7 + 1  # the start takes at most 70% of the budget
    prompt = bench.prompt(samples(context_chars=2_000)["tw_treasure_002-q0"])[0]["content"]  # type: ignore[arg-type]
    assert "left out to fit the context" in prompt and prompt.endswith("Answer[1]: [your answer here]")


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    bad = tmp_path / "open_end_qa_set.jsonl"
    bad.write_text(json.dumps({"episode_id": 1, "trajectory": []}) + "\n")
    with pytest.raises(DatasetLoadError, match="episode 0 has no 'qa_pairs'"):
        load_samples(bench.BENCHMARK, files=[bad], options=Options())
    bad.write_text("{oops\n")
    with pytest.raises(DatasetLoadError, match=rf"ama-bench: cannot read {bad}"):
        load_samples(bench.BENCHMARK, files=[bad], options=Options())


class FailingJudge:
    name = "judge"

    def chat(self, prompt: str) -> object:
        from pytest_jeval.core.chat import EndpointError

        raise EndpointError("HTTP 500 after 4 retries")


def test_a_failed_judge_call_is_unscored_with_f1_kept() -> None:
    sample = samples()["tw_cooking_001-q0"]
    got = bench.grade(FailingJudge(), sample, "the red apple")  # type: ignore[arg-type]
    assert got.correct is None and got.metadata["unscored_reason"] == "the judge call failed"
    assert got.metadata["judge_error"] == "HTTP 500 after 4 retries" and got.fields["token_f1"] == 1.0


class ScriptedJudge:
    name = "judge"

    def __init__(self, reply: str) -> None:
        self.reply = reply

    def chat(self, prompt: str) -> object:
        from pytest_jeval.core.chat import Reply

        return Reply(text=self.reply, model=self.name)


@pytest.mark.parametrize(("reply", "correct"), [("yes", True), ("no", False), ("hmm", None)])
def test_rescoring_replays_the_stored_judge(reply: str, correct: bool | None) -> None:
    from pytest_jeval.results.records import score_fields
    from pytest_jeval.scoring.registry import call_scorer

    sample = samples()["tw_cooking_001-q0"]
    scored = bench.grade(ScriptedJudge(reply), sample, "the red apple")  # type: ignore[arg-type]
    record = {"record_id": sample.id, "question": sample.input, "model_answer": "Answer[1]: the red apple",  # type: ignore[attr-defined]
              **score_fields(scored, expected=sample.target)}  # type: ignore[attr-defined]
    again = call_scorer("ama-bench", record, reparse_judge=True)
    assert again.correct is correct and again.fields["token_f1"] == 1.0
