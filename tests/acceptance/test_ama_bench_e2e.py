"""ama-bench through the plugin: each question answered on its own, so two question orders give the same
scores; the judge's yes/no and token F1 are both recorded; a judge reply that says neither is unscored;
the retrieval configuration answers through its tools; episode mode never applies to it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.paths import TEST_DATA

FILE = TEST_DATA / "ama_bench" / "test" / "open_end_qa_set.jsonl"
ANSWERS = {  # the model's answer to each question
    "take out of the fridge": "The red apple",
    "Why did slicing": "It had no knife",
    "left in the fridge": "A carrot and a knife",
    "Summarize how": "It sliced and grilled the apple",
    "silver key": "Room 3",
    "locked chest": "Room 12",
    "at step 20": "Room 21",
}
VERDICTS = {"The red apple": "yes", "It had no knife": "<think>close enough</think>Yes",
            "A carrot and a knife": "no", "It sliced and grilled the apple": "I cannot decide.",
            "Room 3": "yes", "Room 12": "no", "Room 21": "yes"}


def model(body: dict[str, Any], attempt: int) -> str:
    text = body["messages"][-1]["content"]
    question = text.split("Question 1:")[1]
    answer = next(a for key, a in ANSWERS.items() if key in question)
    return f"Looking at the trajectory.\nAnswer[1]: {answer}"


def judge(body: dict[str, Any], attempt: int) -> str:
    predicted = body["messages"][-1]["content"].split("Predicted answer: ")[1].split("\n")[0]
    return VERDICTS[predicted]


def run(pytester: pytest.Pytester, model_url: str, judge_url: str, data: Path, out: str,
        extra: str = "") -> dict[str, dict[str, Any]]:
    (pytester.path / f"{out}.toml").write_text(textwrap.dedent(f"""
        [run]
        output_dir = "{out}"
        cache = false

        [judge]
        model = "judge"
        base_url = "{judge_url}"

        [[models]]
        name = "m"
        base_url = "{model_url}"

        [[benchmarks]]
        name = "ama-bench"
        data_files = "{data}"
        {extra}
    """))
    result = pytester.runpytest("--jeval-config", f"{out}.toml", "-p", "no:cacheprovider")
    assert result.ret in (0, 1), result.stdout.str()
    lines = (pytester.path / out / "ama-bench_m.jsonl").read_text().splitlines()
    return {r["question"]: r for r in map(json.loads, lines)}


def reversed_copy(path: Path) -> Path:
    episodes = [json.loads(line) for line in FILE.read_text().splitlines()]
    for e in episodes:
        e["qa_pairs"].reverse()
    path.write_text("".join(json.dumps(e) + "\n" for e in reversed(episodes)))
    return path


def test_two_question_orders_give_the_same_scores(pytester: pytest.Pytester,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAIServer(model) as m, FakeOpenAIServer(judge) as j:
        first = run(pytester, m.base_url, j.base_url, FILE, "a", "[benchmarks.options]\ncontext_chars = 2000")
        second = run(pytester, m.base_url, j.base_url, reversed_copy(pytester.path / "rev.jsonl"), "b",
                     "[benchmarks.options]\ncontext_chars = 2000")
    assert len(first) == 7
    key = ("is_correct", "token_f1", "unscored", "extracted")
    assert {q: [r[k] for k in key] for q, r in first.items()} == {q: [r[k] for k in key] for q, r in second.items()}
    # the judge and F1 are both recorded
    apple = next(r for q, r in first.items() if "fridge at step 3" in q)
    assert apple["is_correct"] is True and apple["token_f1"] == pytest.approx(1.0)
    assert apple["scoring_metadata"]["judge_output"] == "yes"
    carrot = next(r for q, r in first.items() if "left in the fridge" in q)
    assert carrot["is_correct"] is False and carrot["token_f1"] == pytest.approx(2 * (1 / 3) / (1 + 1 / 3))
    # a judge reply with neither yes nor no is unscored, not wrong
    summary_q = next(r for q, r in first.items() if q.startswith("Summarize"))
    assert summary_q["is_correct"] is None and summary_q["unscored"] is True
    assert summary_q["scoring_metadata"]["unscored_reason"] == "the judge's reply says neither yes nor no"
    # the long trajectory did not fit 2000 characters: the record says which steps were left out
    key_q = next(r for q, r in first.items() if "silver key" in q)
    assert key_q["scoring_metadata"]["context"]["dropped_steps"] is not None
    summary = json.loads((pytester.path / "a" / "ama-bench_m.jsonl.summary.json").read_text())
    assert summary["per_type"]["A"] == {"questions": 3, "judged": 3, "unscored": 0, "judge_accuracy": 1.0,
                                        "mean_token_f1": pytest.approx(summary["per_type"]["A"]["mean_token_f1"])}
    assert summary["per_type"]["D"]["unscored"] == 1 and summary["per_type"]["D"]["judge_accuracy"] is None
    assert summary["context_cut_share"] == pytest.approx(3 / 7)
    # jeval rescore replays the stored judge replies: no judge is asked, no verdict changes
    from pytest_jeval.cli import main

    capsys.readouterr()
    for extra in ([], ["--reparse-judge"]):
        assert main(["rescore", str(pytester.path / "a" / "ama-bench_m.jsonl"), "-o",
                     str(pytester.path / "rescored.jsonl"), *extra]) == 0
        assert "0 verdicts changed" in capsys.readouterr().out


def test_the_retrieval_configuration_and_no_episode_mode(pytester: pytest.Pytester) -> None:
    search = tool_answer(ToolCallSpec("search_trajectory", {"query": "silver key"}))
    scripts = {"silver key": [search, "Answer[1]: Room 3"], "locked chest": ["Answer[1]: Room 12"],
               "at step 20": [tool_answer(ToolCallSpec("read_steps", {"first": 21, "last": 21})), "Answer[1]: Room 21"],
               "": ["Answer[1]: The red apple"]}
    with FakeOpenAIServer(script_responder(scripts)) as m, FakeOpenAIServer(judge) as j:
        (pytester.path / "one.jsonl").write_text(FILE.read_text().splitlines()[1] + "\n")
        got = run(pytester, m.base_url, j.base_url, pytester.path / "one.jsonl", "r",
                  'backend = "agent"')
        asked = [r["body"] for r in m.requests if r["path"].endswith("/chat/completions")]
    assert {q: r["is_correct"] for q, r in got.items()} == {q: q.find("chest") < 0 for q in got}
    key = next(r for q, r in got.items() if "silver key" in q)
    assert key["scoring_metadata"]["context"] == "retrieval" and key["agent"]["tool_calls"] == 1
    first = asked[0]["messages"][0]["content"]
    assert "Step 2:" not in first and "search_trajectory" in first  # the trajectory is behind the tools
    # the silver-key episode's tool result (episodes run concurrently: pick it by its question)
    tool_result = next(m for b in asked if any("silver key" in str(u.get("content")) for u in b["messages"]
                                               if u["role"] == "user")
                       for m in b["messages"] if m["role"] == "tool")
    assert "A silver key lies here" in tool_result["content"]
    assert all("memory" not in r["agent"] for r in got.values())


def test_episode_mode_never_applies_to_it(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(model) as m, FakeOpenAIServer(judge) as j:
        suite = pytester.path / "e.toml"
        run(pytester, m.base_url, j.base_url, FILE, "e")
        text = suite.read_text().replace("cache = false", "cache = false\nepisode_mode = true")
        suite.write_text(text.replace('data_files', 'backend = "agent"\ndata_files'))
        result = pytester.runpytest("--jeval-config", "e.toml", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*ama-bench: keeps no memory between episodes: [[]run[]] episode_mode does not "
                                 "apply to it*"])
