"""liveresearchbench: the five DeepEval protocols on a scripted judge, through the plugin.

Data: tests/data/liveresearchbench (two questions in the Hub schema, and a clone with one reference report and the
protocol files, all written for these tests; see its README).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_jeval.benchmarks._research.judgelog import JudgeLog
from pytest_jeval.benchmarks.liveresearchbench.protocols import parse_reply, pointwise, rubric_score
from pytest_jeval.cli import main as jeval
from tests.support.research import DATA, Responder, resume_keeps_every_record_once, serve

HERE = DATA / "liveresearchbench"


def entry(options: str = "", keys: str = "", date: str = "2025-06-30") -> str:
    """The suite entry, with more ``[benchmarks.options]`` and entry ``keys``."""
    return (f'[[benchmarks]]\nname = "liveresearchbench"\ndata_files = "{HERE / "question_with_checklist.jsonl"}"\n'
            f'data_dir = "{HERE / "clone"}"\n{keys}[benchmarks.options]\ncurrent_date = "{date}"\n{options}')


ENTRY = entry()
REPORTS = {"heat pump market": "MODEL-REPORT heat pumps: USD 60 billion, 8% a year; Europe, North America, Asia.",
           "low-emission zones": "MODEL-REPORT zones: NO2 fell in London; PM2.5 changed little."}


def evaluations(ids: list[str], failed: set[str]) -> str:
    return json.dumps({"evaluations": {i: {"score": 0 if i in failed else 1, "justification": "see report"}
                                       for i in ids}})


def judge(depth_winners: tuple[str, str] = ("A", "tie"), broken: str = "") -> Callable[[str], str]:
    """Presentation: p2 fails; coverage: q2 fails; consistency: 1 issue, 80; citation: 2 issues, 90 (the rubric
    says 70); depth: ``depth_winners`` for the model-first and model-second orders. ``broken`` answers prose."""

    def answer(prompt: str) -> str:
        kind = ("presentation" if "presentation and formatting" in prompt else "coverage" if "CHECKLIST" in prompt
                else "consistency" if "Factual & Logical" in prompt else "citation" if "Citation Association" in prompt
                else "depth")
        if kind == broken:
            return "I think the report is fine overall."
        if kind == "presentation":
            return "```json\n" + evaluations(["p1", "p2", "p3"], {"p2"}) + "\n```"
        if kind == "coverage":
            ids = ["q1", "q2", "q3"] if "heat pump" in prompt else ["q1", "q2"]
            return evaluations(ids, {"q2"})
        if kind in ("consistency", "citation"):
            n, score = (1, 80) if kind == "consistency" else (2, 90)
            return json.dumps({"specific_issues": [f"issue {i}" for i in range(n)], "total_issues": n,
                               "score": score, "justification": "counted"})
        model_first = prompt.split("REPORT A:", 1)[1].split("REPORT B:", 1)[0].count("MODEL-REPORT") == 1
        return json.dumps({"winner": depth_winners[0 if model_first else 1], "justification": "compared",
                           "scores": {"A": {"granularity": 4, "insight": 3, "total": 7},
                                      "B": {"granularity": 2, "insight": 2, "total": 4}},
                           "major_flaws": {"A": [], "B": []}})

    return answer


def responder(**kw: object) -> Responder:
    return Responder(scripts={k: [v] for k, v in REPORTS.items()}, judge=judge(**kw))  # type: ignore[arg-type]


def test_parse_and_rubric() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    assert parse_reply('```json\n{"score": 3}\n```', schema) == {"score": 3}
    assert parse_reply('Here: {"score": 3}', schema) is None          # not the whole reply
    assert parse_reply('{"score": "3"}', schema) is None              # not the schema
    rubric = (HERE / "clone/liveresearchbench/criteria/consistency.py").read_text()
    assert [rubric_score(rubric, n) for n in (0, 1, 3, 4, 9, 10, 99)] == [100, 80, 80, 50, 50, 10, 10]


def test_a_pointwise_protocol_on_a_scripted_judge() -> None:
    class Judge:
        name = "j"

        def chat(self, prompt: object, **options: object) -> object:
            from pytest_jeval.core.chat import Reply

            assert options["response_format"]["type"] == "json_schema"  # type: ignore[index]
            return Reply(text='{"specific_issues": ["a", "b", "c", "d"], "total_issues": 4, "score": 50, '
                              '"justification": "x"}', model="j")

    verdict = pointwise(JudgeLog(Judge()), "consistency", query="q", report="r", today="June 30, 2025",
                        structured=True, rubric=(HERE / "clone/liveresearchbench/criteria/consistency.py").read_text())
    assert verdict == {"score": 50, "total_issues": 4, "listed_issues": 4, "rubric_score": 50,
                       "score_matches_rubric": True}


def test_all_five_protocols_each_its_own_column(pytester: pytest.Pytester) -> None:
    with serve(pytester, responder()) as p:
        result = p.run(ENTRY)
        result.assert_outcomes(passed=2)
        records = p.records("liveresearchbench")
        market, policy = records["marketJevalTest01"], records["policyJevalTest02"]
        assert market["presentation"] == pytest.approx(200 / 3)
        assert market["coverage"] == pytest.approx(200 / 3) and policy["coverage"] == 50.0
        assert market["consistency"] == 80 and market["citation"] == 90
        protocols = market["scoring_metadata"]["protocols"]
        assert protocols["citation"]["rubric_score"] == 70 and protocols["citation"]["score_matches_rubric"] is False
        assert market["depth_outcomes"] == ["win", "tie"] and market["depth"] == 75.0
        assert policy["depth"] is None and policy["depth_outcomes"] is None
        assert "no reference report" in policy["scoring_metadata"]["protocols"]["depth"]["unscored_reason"]
        assert policy["scoring_metadata"]["unscored_protocols"] == ["depth"]
        assert market["score"] == pytest.approx((200 / 3 + 200 / 3 + 80 + 90 + 75) / 5 / 100)
        # both orders, the model's report first as A then as B; the static question text (no placeholder)
        depth_prompts = [t for t in p.responder.judge_prompts if "REPORT A:" in t]
        assert len(depth_prompts) == 2
        first, second = (t.split("REPORT A:", 1)[1].split("REPORT B:", 1)[0] for t in depth_prompts)
        assert "MODEL-REPORT" in first and "MODEL-REPORT" not in second and "USD 60 billion in 2025" in second
        assert all("in 2025" in t and "{{current_year}}" not in t for t in depth_prompts)
        assert all("June 30, 2025" in t for t in p.responder.judge_prompts if "Factual & Logical" in t)
        summary = p.summary("liveresearchbench")
        assert summary["coverage"]["mean"] == pytest.approx((200 / 3 + 50) / 2)
        assert summary["depth"] == {"win_rate": 100.0, "wins": 1, "losses": 0, "ties": 1, "comparisons": 2}


@pytest.mark.parametrize(("winners", "outcomes"), [(("B", "B"), ["loss", "win"]), (("tie", "A"), ["tie", "loss"])])
def test_depth_maps_both_orders_back_to_the_model(pytester: pytest.Pytester, winners: tuple[str, str],
                                                  outcomes: list[str]) -> None:
    with serve(pytester, responder(depth_winners=winners)) as p:
        p.run(entry('protocols = ["depth"]\n'))
        market = p.records("liveresearchbench")["marketJevalTest01"]
        assert market["depth_outcomes"] == outcomes
        assert [c["key"] for c in market["scoring_metadata"]["judge_calls"]] == ["depth.model_first",
                                                                                 "depth.model_second"]


def test_an_unparsable_reply_leaves_that_protocol_unscored(pytester: pytest.Pytester) -> None:
    with serve(pytester, responder(broken="consistency")) as p:
        p.run(ENTRY)
        market = p.records("liveresearchbench")["marketJevalTest01"]
        assert market["consistency"] is None and market["citation"] == 90 and market["is_correct"] is True
        verdict = market["scoring_metadata"]["protocols"]["consistency"]
        assert verdict == {"score": None, "unscored_reason": "the judge's reply is not JSON matching the protocol's "
                                                             "schema"}
        assert market["score"] == pytest.approx((200 / 3 + 200 / 3 + 90 + 75) / 4 / 100)
    with serve(pytester, responder(broken="presentation")) as p:
        p.run(entry('protocols = ["presentation"]\n'))
        market = p.records("liveresearchbench")["marketJevalTest01"]
        assert market["is_correct"] is None and market["unscored"] is True
        assert market["scoring_metadata"]["unscored_reason"].startswith("no protocol graded (presentation: ")


def test_realtime_fills_the_placeholders_and_nop_scores_zero(pytester: pytest.Pytester) -> None:
    with serve(pytester, responder()) as p:
        result = p.run(entry('realtime = true\nprotocols = ["coverage"]\n', date="2031-01-15"))
        result.assert_outcomes(passed=2)
        asked = [b["messages"][-1]["content"] for b in p.chat_bodies() if b["model"] == "test-model"]
        assert any("market in 2031" in q for q in asked) and any("since 2030" in q for q in asked)
        judged = len(p.responder.judge_prompts)
        result = p.run(entry(keys='agent = "nop"\n'))
        result.assert_outcomes(failed=2)
        for r in p.records("liveresearchbench").values():
            assert r["is_correct"] is False and r["coverage"] == 0.0 and r["depth_outcomes"] == ["loss", "loss"]
        assert len(p.responder.judge_prompts) == judged  # an empty report needs no judge


@pytest.mark.slow
def test_two_workers_a_resume_and_a_rescore(pytester: pytest.Pytester) -> None:
    with serve(pytester, responder()) as p:
        p.suite(ENTRY)
        assert p.run_subprocess("-n", "2").ret == 0
        first = p.records("liveresearchbench")
        records, sent, cut = resume_keeps_every_record_once(p, "liveresearchbench", keep=1)
        # the cut question again: its report, then each protocol (depth twice; without a reference, not at all)
        assert sent == {"marketJevalTest01": 1 + 6, "policyJevalTest02": 1 + 4}[cut[0]]
        columns = ("presentation", "coverage", "consistency", "citation", "depth")
        assert all(records[k][c] == first[k][c] for k in first for c in columns)
    out = pytester.path / "rescored.jsonl"
    assert jeval(["rescore", str(p.path("liveresearchbench")), "--reparse-judge", "-o", str(out)]) == 0
    again = {r["record_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert all(again[k][c] == records[k][c] for k in records for c in columns)
    assert again["marketJevalTest01"]["scoring_metadata"]["protocols"]["citation"]["rubric_score"] == 70


def fair_judge(prompt: str) -> str:
    """Every checklist item met, no issue found, and depth a tie (the oracle's report is the reference itself)."""
    if '"evaluations"' in prompt:
        return evaluations(re.findall(r"^- ([pq][0-9]+): ", prompt, re.M), set())
    if "REPORT A:" in prompt:
        return json.dumps({"winner": "tie", "justification": "the same report"})
    return json.dumps({"specific_issues": [], "total_issues": 0, "score": 100, "justification": "none"})


def test_the_oracle_says_the_reference_report_and_passes(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(judge=fair_judge)) as p:
        result = p.run(entry(keys='agent = "oracle"\n'))
        result.assert_outcomes(passed=1, failed=1)
        records = p.records("liveresearchbench")
        assert not [b for b in p.chat_bodies() if b["model"] == "test-model"]  # the oracle sends nothing
        market, policy = records["marketJevalTest01"], records["policyJevalTest02"]
        assert market["agent"]["name"] == "oracle" and market["is_correct"] is True
        reference = (HERE / "clone" / "data" / "reference_reports" / "qid_marketJevalTest01_report.md").read_text()
        assert market["model_answer"] == reference
        assert (market["presentation"], market["coverage"], market["consistency"], market["citation"],
                market["depth"]) == (100.0, 100.0, 100, 100, 50.0)
        assert market["depth_outcomes"] == ["tie", "tie"]
        # the test clone has no reference report for the second question: the oracle has nothing to say
        assert policy["model_answer"] == "" and policy["is_correct"] is False and policy["coverage"] == 0.0


def test_bad_settings_are_usage_errors_before_any_request(pytester: pytest.Pytester) -> None:
    no_clone = f'[[benchmarks]]\nname = "liveresearchbench"\ndata_files = "{HERE / "question_with_checklist.jsonl"}"\n'
    with serve(pytester, Responder()) as p:
        for suite, message in [
            (no_clone, "liveresearchbench needs data_dir = a clone of github.com/SalesforceAIResearch"),
            (entry('protocols = ["depth", "breadth"]\n'), "options.protocols.1: Input should be 'presentation'"),
            (entry('protocols = ["depth", "depth"]\n'), "name each protocol once"),
            (entry(date="30 June 2025"), "options.current_date: Value error, Invalid isoformat string"),
            (entry('corpus = "nowhere"\n'), "options.corpus: Value error, no such folder"),
        ]:
            result = p.run(suite)
            assert result.ret in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED), suite
            assert message in result.stdout.str() + result.stderr.str(), suite
        assert p.chat_bodies() == []


def test_the_judges_get_the_clones_prompts_and_own_wording_where_it_has_none(pytester: pytest.Pytester,
                                                                             tmp_path: Path) -> None:
    with serve(pytester, responder()) as p:
        p.run(ENTRY)
        asked = p.responder.judge_prompts
        assert len(asked) == 6 + 4 and all(t.count("TEST-CLONE-PROMPT") == 1 for t in asked)
        rubric = (HERE / "clone/liveresearchbench/criteria/citation.py").read_text().split('"""')[3]
        (citation,) = [t for t in asked if "TEST-CLONE-PROMPT citation" in t and "MODEL-REPORT heat" in t]
        assert rubric in citation and "Today is June 30, 2025" in citation  # a module literal and a filled name
        assert citation.endswith('"justification"\n  ]\n}')  # the schema closes the prompt, as upstream's client
        assert "Please respond with valid JSON that matches this schema:" in citation
        market = p.records("liveresearchbench")["marketJevalTest01"]
        sources = market["scoring_metadata"]["context"]["prompt_sources"]
        assert sources["depth"] == ("upstream liveresearchbench/criteria/depth.py:create_depth_comparison_prompt(), "
                                    "create_depth_user_prompt()")
        assert not any("own wording" in d for d in market["scoring_metadata"]["deviations"])
    clone = tmp_path / "clone"
    shutil.copytree(HERE / "clone", clone)
    (clone / "liveresearchbench/criteria/coverage.py").unlink()
    with serve(pytester, responder()) as p:
        p.run(entry('protocols = ["coverage", "depth"]\n').replace(str(HERE / "clone"), str(clone)))
        coverage = [t for t in p.responder.judge_prompts if '"evaluations"' in t]
        assert coverage and all("TEST-CLONE-PROMPT" not in t and "RESEARCH QUERY:" in t for t in coverage)
        market = p.records("liveresearchbench")["marketJevalTest01"]
        assert market["coverage"] == pytest.approx(200 / 3) and market["depth"] == 75.0
        assert market["scoring_metadata"]["deviations"][1] == (
            "the judge prompts of coverage are pytest-jeval's own wording around upstream's fixed checklist, rubric "
            "tables and depth dimensions (the clone has no prompt function for them)")
        assert market["scoring_metadata"]["context"]["prompt_sources"]["coverage"].startswith(
            "pytest-jeval's own wording (cannot read ")
