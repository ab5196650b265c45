"""paperarena: an agent with tools over the paper, answers judged against the gold answer, through the plugin.

Data: tests/data/paperarena (two invented papers, one Markdown with a table and one plain text, and their QA files
in upstream's layout, written for these tests; nothing of PaperArena's own dataset).
"""

from __future__ import annotations

import json
import re

import pytest

from pytest_jeval.benchmarks.paperarena.bench_paperarena import parse_judgement
from pytest_jeval.cli import main as jeval
from pytest_jeval.testing.openai_server import ToolCallSpec, tool_answer
from tests.support.research import DATA, Responder, resume_keeps_every_record_once, serve

HERE = DATA / "paperarena"


def entry(options: str = "", keys: str = "") -> str:
    return (f'[[benchmarks]]\nname = "paperarena"\ndata_dir = "{HERE}"\n{keys}'
            f'[benchmarks.options]\npapers = "{HERE / "papers"}"\n{options}')


def call(name: str, **arguments: object) -> object:
    return tool_answer(ToolCallSpec(name, arguments))


PYTHON = ("import csv\nrows = {r[0]: float(r[1]) for r in csv.reader(open('tables/table_1.csv')) if r[1][0].isdigit()}\n"
          "print(round((rows['SRA (ours)'] - rows['Full fine-tuning']) / rows['Full fine-tuning'] * 100, 2))")
SCRIPTS = {
    "removing the router warm-up lower": [call("paper_read"), call("paper_search", query="router warm-up Table 2"),
                                          "Yes: 84.0 falls to 81.6."],
    "by what percentage": [call("python", code=PYTHON), "3.45%"],
    "Why does removing the router warm-up": [call("paper_read", section="3 experiments"),
                                             "The router collapses onto one or two adapters early without warm-up."],
    "How many fewer training steps": [call("paper_read", section="3 Results"), "30,000 steps instead of 50,000."],
}


def judge(prompt: str) -> str:
    """Correct when the answer holds the gold answer's key figure or word."""
    gold = prompt.split("Ground truth answer:", 1)[1].split("Answer to judge:", 1)[0].strip()
    answer = prompt.split("Answer to judge:", 1)[1].split("Reply with only", 1)[0].strip()
    key = {"Yes": "Yes", "3.45%": "3.45", "20,000 steps": "20,000"}.get(gold, "collapses")
    ok = key in answer
    return json.dumps({"correct": "true" if ok else "false", "reasoning": f"looked for {key}", "confidence": 9})


def test_the_judge_reply_is_read_as_upstream_reads_it() -> None:
    assert parse_judgement('Sure: {"correct": "true", "reasoning": "x", "confidence": 7} done') == {
        "correct": "true", "reasoning": "x", "confidence": 7}
    for bad in ('{"correct": true, "reasoning": "x", "confidence": 7}',        # a boolean, not "true"
                '{"correct": "true", "reasoning": "x", "confidence": 11}',     # out of range
                '{"correct": "true", "confidence": 7}', "no json"):
        assert parse_judgement(bad) is None, bad


def test_an_agent_with_tools_over_the_paper(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(scripts=SCRIPTS, judge=judge)) as p:
        result = p.run(entry(), run='trajectories = "inline"')
        result.assert_outcomes(passed=3, failed=1)
        records = p.records("paperarena")
        mc = records["Sparse_Router_Adapters_for_Small_Transformers-qa1"]
        ca = records["Sparse_Router_Adapters_for_Small_Transformers-qa2"]
        oa = records["Sparse_Router_Adapters_for_Small_Transformers-qa3"]
        gnn = records["Importance_Sampling_for_GNN_Training-qa1"]
        assert (mc["is_correct"], ca["is_correct"], oa["is_correct"], gnn["is_correct"]) == (True, True, True, False)
        assert (mc["qa_type"], ca["qa_type"], oa["qa_type"]) == ("Multi-Choice Answer", "Concise Answer", "Open Answer")
        assert oa["unavailable_tools"] == ["Web Search"] and mc["unavailable_tools"] == []
        assert mc["judge_confidence"] == 0.9
        tool_results = {k: [m["content"] for m in r["trajectory"]["messages"] if m["role"] == "tool"]
                        for k, r in records.items()}
        listing, search = tool_results[mc["record_id"]]
        assert "- 3 Experiments" in listing and "tables/table_1.csv" in listing
        assert search.startswith("1. [section: 3 Experiments;")
        assert "exit status: 0" in tool_results[ca["record_id"]][0] and "3.45" in tool_results[ca["record_id"]][0]
        assert tool_results[oa["record_id"]][0].startswith("[3 Experiments] characters 0-")
        assert "30,000 steps" in tool_results[gnn["record_id"]][0]
        # the agent was told its paper and the answer type; the judge saw question, gold answer and answer
        first = next(b for b in p.chat_bodies() if "by what percentage" in json.dumps(b))
        assert 'the paper "Sparse Router Adapters for Small Transformers"' in first["messages"][0]["content"]
        assert "Answer type: Concise Answer" in first["messages"][0]["content"]
        summary = p.summary("paperarena")
        assert summary["overall"] == {"accuracy": 0.75, "correct": 3, "count": 4}
        assert summary["by_type_and_difficulty"]["Concise Answer"]["Easy"] == {"accuracy": 0.0, "correct": 0,
                                                                               "count": 1}
        assert summary["tools_fully_available"]["count"] == 3


def test_an_unreadable_judge_reply_leaves_the_question_unscored(pytester: pytest.Pytester) -> None:
    def boolean_judge(prompt: str) -> str:
        return re.sub(r'"(true|false)"', r"\1", judge(prompt))  # JSON booleans: upstream refuses them

    with serve(pytester, Responder(scripts=SCRIPTS, judge=boolean_judge)) as p:
        p.run(entry('qa_types = ["Multi-Choice Answer"]\n'))
        (record,) = p.records("paperarena").values()
        assert record["is_correct"] is None and record["unscored"] is True
        assert record["scoring_metadata"]["unscored_reason"].startswith("the judge's reply is not the JSON upstream")


@pytest.mark.slow
def test_the_oracle_passes_and_nop_fails_without_a_judge(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(judge=judge)) as p:
        result = p.run(entry(keys='agent = "oracle"\n'))
        result.assert_outcomes(passed=4)
        assert not [b for b in p.chat_bodies() if b["model"] == "test-model"]
        judged = len(p.responder.judge_prompts)
        result = p.run(entry(keys='agent = "nop"\n'))
        result.assert_outcomes(failed=4)
        assert len(p.responder.judge_prompts) == judged


def test_a_paper_missing_from_the_cache(pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = tmp_path_factory.mktemp("cache")
    (cache / "Importance Sampling for GNN Training.txt").write_text((HERE / "papers" /
                                                                     "Importance Sampling for GNN Training.txt").read_text())
    with serve(pytester, Responder(scripts=SCRIPTS, judge=judge)) as p:
        p.suite(entry().replace(str(HERE / "papers"), str(cache)))
        result = p.pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        assert result.ret != 0 and p.chat_bodies() == []
        assert "lacks 1 paper(s) the questions are about (first: 'Sparse Router Adapters for Small Transformers')" \
            in result.stdout.str() + result.stderr.str()
        result = p.run(entry("skip_missing_papers = true\n").replace(str(HERE / "papers"), str(cache)))
        result.assert_outcomes(failed=1)
        assert list(p.records("paperarena")) == ["Importance_Sampling_for_GNN_Training-qa1"]


@pytest.mark.slow
def test_two_workers_a_resume_and_a_rescore(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(scripts=SCRIPTS, judge=judge)) as p:
        p.suite(entry())
        assert p.run_subprocess("-n", "2").ret == 1
        first = p.records("paperarena")
        records, sent, cut = resume_keeps_every_record_once(p, "paperarena", keep=2)
        assert sent >= 2 * len(cut) and {k: r["is_correct"] for k, r in records.items()} == {
            k: r["is_correct"] for k, r in first.items()}
    out = pytester.path / "rescored.jsonl"
    assert jeval(["rescore", str(p.path("paperarena")), "--reparse-judge", "-o", str(out)]) == 0
    again = {r["record_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {k: r["is_correct"] for k, r in again.items()} == {k: r["is_correct"] for k, r in records.items()}




def test_the_judge_prompt_comes_from_a_clone_of_the_code(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(judge=judge)) as p:
        result = p.run(entry(f'code_dir = "{HERE / "code"}"\n', keys='agent = "oracle"\n'))
        result.assert_outcomes(passed=4)
        assert len(p.responder.judge_prompts) == 4
        assert all(t.startswith("TEST-CODE-JUDGE-PROMPT\nGround truth answer: ") for t in p.responder.judge_prompts)
        for record in p.records("paperarena").values():
            meta = record["scoring_metadata"]
            assert meta["judge_prompt_source"] == (
                "upstream paperarena_hub/tools/scorer.py:LLMScorer._create_judge_prompt()")
            assert not any("own wording" in d for d in meta["deviations"])
        result = p.run(entry(keys='agent = "oracle"\n'))  # no code_dir: the project's wording, declared
        assert not [t for t in p.responder.judge_prompts[4:] if "TEST-CODE" in t]
        for record in p.records("paperarena").values():
            assert record["scoring_metadata"]["judge_prompt_source"] == "pytest-jeval's own wording"
            assert record["scoring_metadata"]["deviations"][-1].startswith("the judge prompt is pytest-jeval's own")
        sent = len(p.chat_bodies())
        result = p.run(entry(f'code_dir = "{HERE / "papers"}"\n'))  # not a clone of the code: refused
        assert result.ret in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED)
        assert "code_dir should be a clone of github.com/Melmaphother/PaperArena" in (
            result.stdout.str() + result.stderr.str())
        assert len(p.chat_bodies()) == sent  # before any request
