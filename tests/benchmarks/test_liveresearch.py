"""liveresearch (DeepResearch Bench): RACE as upstream computes it, through the plugin with a scripted judge.

The data is tests/data/deepresearch_bench (three tasks written for these tests in upstream's layout, see its
README). The judge below reads the criteria out of the scoring prompt and scores every criterion of both articles.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest

from pytest_jeval.benchmarks.liveresearch.race import extract_json, overall, weighted_scores
from pytest_jeval.cli import main as jeval
from pytest_jeval.testing.openai_server import ToolCallSpec, tool_answer
from tests.support.research import DATA, Responder, resume_keeps_every_record_once, serve

CLONE = DATA / "deepresearch_bench"
REPORTS = {
    "lithium iron phosphate": "# LFP or NMC at home\n\nLFP lasts 6,000 cycles [1] and is safer [2]. NMC is denser. "
                              "For a household, choose LFP: cycle life and safety matter more than density.",
    "low-emission zones": "# Low-emission zones\n\nLondon's ULEZ cut roadside NO2 by about a fifth [3]; PM2.5 "
                          "effects are smaller because brakes, tyres and heating emit fine particles too.",
    "共享单车": "# 共享单车行业分析\n\n2015年共享单车在高校兴起，2016至2017年在风险投资推动下爆发式扩张，摩拜与ofo投放数百万辆"
            "单车 [4]。商业模式依靠低价骑行费和用户押金，但过度投放、车辆损坏与调度运维成本导致长期亏损，ofo最终陷入押金"
            "退还危机。未来行业将走向精细化运营、取消押金并与出行平台整合。",
}


def between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip().strip('"').strip()


def race_judge(scores: Callable[[str], tuple[float, float]]) -> Callable[[str], str]:
    """Cleans by dropping ``[n]`` marks; scores every criterion ``scores(article_1)`` = (article_1, article_2),
    and the same for both when the two articles are the same text."""

    def judge(prompt: str) -> str:
        if "TEST-CLEAN-TEMPLATE" in prompt or "Edit the research article below" in prompt:
            article = prompt[prompt.index('"') + 1:prompt.rindex('"')]
            return re.sub(r" ?\[\d+\]", "", article)
        criteria = json.loads(between(prompt, "<criteria_list>", "</criteria_list>"))
        first, second = between(prompt, "<article_1>", "</article_1>"), between(prompt, "<article_2>", "</article_2>")
        a, b = (7.0, 7.0) if first == second else scores(first)
        return "Here are my scores:\n```json\n" + json.dumps(
            {dim: [{"criterion": c["criterion"], "analysis": "compared", "article_1_score": a, "article_2_score": b}
                   for c in items] for dim, items in criteria.items()}, ensure_ascii=False) + "\n```"

    return judge


def by_task(first: str) -> tuple[float, float]:
    if "LFP" in first:
        return 8.0, 6.0
    if "ULEZ" in first:
        return 4.0, 8.0
    return 5.0, 5.0


ENTRY = f'[[benchmarks]]\nname = "liveresearch"\ndata_dir = "{CLONE}"\n'


# --------------------------------------------------------------------------- the formula


CRITERIA = {"id": 9, "dimension_weight": {"comprehensiveness": 0.6, "insight": 0.4},
            "criterions": {"comprehensiveness": [{"criterion": "Breadth", "weight": 0.75},
                                                 {"criterion": "Figures with sources", "weight": 0.25}],
                           "insight": [{"criterion": "Trade-offs", "weight": 0.5},
                                       {"criterion": "Limits of the evidence", "weight": 0.5}]}}


def test_the_weighted_formula_equals_a_hand_computation() -> None:
    judged = {
        "comprehensiveness": [
            {"criterion": "breadth", "article_1_score": 8, "article_2_score": 6},          # case-insensitive match
            {"criterion": "Figures", "article_1_score": "4", "article_2_score": 9},       # substring match
        ],
        "insight": [
            {"criterion": "Trade-offs", "article_1_score": 6, "article_2_score": 6},
            {"criterion": "Something else entirely", "article_1_score": 10, "article_2_score": 2},  # average weight
            {"criterion": "Bad", "article_1_score": "n/a", "article_2_score": 1},         # not a number: skipped
        ],
        "readability": [{"criterion": "Clear", "article_1_score": 1, "article_2_score": 1}],  # no weight: skipped
    }
    scores = weighted_scores(judged, CRITERIA)
    comp_t, comp_r = (8 * 0.75 + 4 * 0.25) / 1.0, (6 * 0.75 + 9 * 0.25) / 1.0        # 7.0, 6.75
    ins_t, ins_r = (6 * 0.5 + 10 * 0.5) / 1.0, (6 * 0.5 + 2 * 0.5) / 1.0             # 8.0, 4.0
    assert scores["target"]["dims"] == {"comprehensiveness": comp_t, "insight": ins_t}
    assert scores["reference"]["dims"] == {"comprehensiveness": comp_r, "insight": ins_r}
    target, reference = 0.6 * comp_t + 0.4 * ins_t, 0.6 * comp_r + 0.4 * ins_r      # 7.4, 5.65
    assert scores["target"]["total"] == pytest.approx(target)
    assert scores["reference"]["total"] == pytest.approx(reference)
    assert scores["unmatched"] == ["insight:Something else entirely"]
    race = overall(scores)
    assert race["overall"] == pytest.approx(target / (target + reference))
    assert race["comprehensiveness"] == pytest.approx(comp_t / (comp_t + comp_r))
    assert race["instruction_following"] == 0.0  # a dimension the judge left out


def test_the_reference_against_itself_is_one_half_and_a_better_target_more() -> None:
    def judged(a: float, b: float) -> dict[str, list[dict[str, object]]]:
        return {dim: [{"criterion": c["criterion"], "article_1_score": a, "article_2_score": b} for c in items]
                for dim, items in CRITERIA["criterions"].items()}

    assert overall(weighted_scores(judged(6.5, 6.5), CRITERIA))["overall"] == 0.5
    assert overall(weighted_scores(judged(7.0, 6.5), CRITERIA))["overall"] > 0.5
    assert overall(weighted_scores(judged(0.0, 0.0), CRITERIA))["overall"] == 0.0


@pytest.mark.parametrize(("reply", "found"), [
    ('{"insight": []}', '{"insight": []}'),
    ('Scores:\n```json\n{"insight": [1]}\n```\nDone.', '{"insight": [1]}'),
    ('Sure. {"insight": {"a": 1}} and then {"x": 2}', '{"insight": {"a": 1}}'),
    ('text {"comprehensiveness": [{"criterion": "A", "article_1_score": 7, "article_2_score": 5.5}] broken',
     '{"comprehensiveness": [{"criterion": "A", "article_1_score": 7.0, "article_2_score": 5.5}]}'),
    ("no json at all", None),
])
def test_the_judge_json_is_found_as_upstream_finds_it(reply: str, found: str | None) -> None:
    assert extract_json(reply) == found


# --------------------------------------------------------------------------- through the plugin


def project_for(pytester: pytest.Pytester, judge: Callable[[str], str], **scripts: object) -> Responder:
    return Responder(scripts={k: [v] for k, v in REPORTS.items()} | dict(scripts), judge=judge)  # type: ignore[arg-type]


def test_reports_are_scored_with_race_through_the_plugin(pytester: pytest.Pytester) -> None:
    with serve(pytester, project_for(pytester, race_judge(by_task))) as p:
        result = p.run(ENTRY)
        result.assert_outcomes(passed=2, failed=1)
        records = p.records("liveresearch")
        one, two, three = (records[f"liveresearch-{i}"] for i in (1, 2, 3))
        assert one["race_overall"] == pytest.approx(100 * 8 / 14) and one["is_correct"] is True
        assert one["score"] == pytest.approx(8 / 14)
        assert two["race_overall"] == pytest.approx(100 * 4 / 12) and two["is_correct"] is False
        assert three["race_overall"] == pytest.approx(50.0) and three["is_correct"] is True
        assert one["race_insight"] == pytest.approx(100 * 8 / 14)
        for r in records.values():
            assert r["research_mode"] == {"mode": "closed-book", "tools": [], "corpus": None}
            assert r["fact"].startswith("not run: FACT checks each cited URL")
            assert any("FACT not run" in d for d in r["scoring_metadata"]["deviations"])
            assert [c["key"] for c in r["scoring_metadata"]["judge_calls"]] == ["clean.1", "race.1"]
        # the clone's prompts for English, pytest-jeval's own wording where the clone has none (Chinese)
        assert one["scoring_metadata"]["judge_prompts"] == {
            "score_en": "upstream prompt/score_prompt_en.py:generate_merged_score_prompt",
            "clean_en": "upstream prompt/clean_prompt.py:clean_article_prompt_en"}
        assert three["scoring_metadata"]["judge_prompts"]["score_zh"].startswith("pytest-jeval's own wording")
        scoring = [t for t in p.responder.judge_prompts if "TEST-SCORE-TEMPLATE" in t]
        assert len(scoring) == 2 and all("[1]" not in t and "[3]" not in t for t in scoring)  # cleaned first
        assert any("The Breadth" not in t and "Coverage of the four comparison axes" in t for t in scoring)
        assert all("weight" not in between(t, "<criteria_list>", "</criteria_list>") for t in scoring)
        summary = p.summary("liveresearch")
        assert summary["race"]["overall"] == pytest.approx((100 * 8 / 14 + 100 * 4 / 12 + 50) / 3)
        assert summary["race_scored"] == 3 and summary["research_modes"] == ["closed-book"]


@pytest.mark.slow
def test_the_oracle_scores_one_half_and_passes_and_nop_scores_zero(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder(judge=race_judge(by_task))) as p:
        result = p.run(ENTRY + 'agent = "oracle"\n[benchmarks.options]\nlanguage = "en"\n')
        result.assert_outcomes(passed=2)
        records = p.records("liveresearch")
        assert {r["race_overall"] for r in records.values()} == {50.0}
        assert {r["agent"]["name"] for r in records.values()} == {"oracle"}
        assert not [b for b in p.chat_bodies() if b["model"] != "judge-model"]  # the oracle sends nothing
        judged = len(p.responder.judge_prompts)
        result = p.run(ENTRY + 'agent = "nop"\n[benchmarks.options]\nlanguage = "en"\n')
        result.assert_outcomes(failed=2)
        assert {r["race_overall"] for r in p.records("liveresearch").values()} == {0.0}
        assert len(p.responder.judge_prompts) == judged  # an empty report needs no judge


def test_an_unparsable_judge_reply_leaves_the_task_unscored(pytester: pytest.Pytester) -> None:
    def judge(prompt: str) -> str:
        return race_judge(by_task)(prompt) if "TEST-CLEAN-TEMPLATE" in prompt else "I would rather not score these."

    with serve(pytester, project_for(pytester, judge)) as p:
        result = p.run(ENTRY + '[benchmarks.options]\nlanguage = "en"\njudge_attempts = 3\n')
        result.assert_outcomes(failed=2)
        for r in p.records("liveresearch").values():
            assert r["is_correct"] is None and r["unscored"] is True and r["race_overall"] is None
            assert r["scoring_metadata"]["unscored_reason"] == (
                "no judge reply in 3 attempts held scores for all four dimensions")
            assert [c["key"] for c in r["scoring_metadata"]["judge_calls"]] == ["clean.1", "race.1", "race.2", "race.3"]
        assert p.summary("liveresearch")["race_scored"] == 0


def test_the_alias_runs_under_the_benchmark_name(pytester: pytest.Pytester) -> None:
    with serve(pytester, project_for(pytester, race_judge(by_task))) as p:
        result = p.run(f'[[benchmarks]]\nname = "deepresearch"\ndata_dir = "{CLONE}"\n'
                       '[benchmarks.options]\nlanguage = "zh"\n')
        result.assert_outcomes(passed=1)
        (record,) = p.records("deepresearch").values()
        assert (record["benchmark"], record["benchmark_label"]) == ("liveresearch", "deepresearch")


def test_the_local_corpus_mode(pytester: pytest.Pytester) -> None:
    search = tool_answer(ToolCallSpec("search", {"query": "LFP thermal runaway safety"}))
    read = tool_answer(ToolCallSpec("read", {"doc_id": "energy/home-batteries.md"}))
    responder = project_for(pytester, race_judge(by_task))
    responder.scripts["lithium iron phosphate"] = [search, read, REPORTS["lithium iron phosphate"]]
    with serve(pytester, responder) as p:
        entry = (ENTRY + 'backend = "agent"\ntools = ["search", "read"]\n'
                 f'[benchmarks.options]\nlanguage = "en"\ncorpus = "{DATA / "research_corpus" / "docs"}"\n')
        result = p.run(entry, run='trajectories = "inline"')
        result.assert_outcomes(passed=1, failed=1)
        one = p.records("liveresearch")["liveresearch-1"]
        assert one["research_mode"] == {"mode": "local-corpus", "tools": ["search", "read"],
                                        "corpus": str(DATA / "research_corpus" / "docs")}
        results = [m["content"] for m in one["trajectory"]["messages"] if m["role"] == "tool"]
        assert results[0].startswith("1. [energy/home-batteries.md] Home battery chemistries")
        assert "thermal-runaway onset temperature" in results[1]


def test_bad_settings_are_usage_errors_before_any_request(pytester: pytest.Pytester) -> None:
    with serve(pytester, Responder()) as p:
        for entry, message in [
            ('[[benchmarks]]\nname = "liveresearch"\n', "*liveresearch needs its data: set data_dir*"),
            (ENTRY + '[benchmarks.options]\ncorpus = "nowhere"\n', "*options.corpus: Value error, no such folder*"),
            (ENTRY + '[benchmarks.options]\nlanguage = "fr"\n', "*options.language: Input should be 'all', 'en' or 'zh'*"),
        ]:
            result = p.run(entry)
            assert result.ret in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.INTERRUPTED), entry
            assert message.strip("*") in result.stdout.str() + result.stderr.str(), entry
        assert p.chat_bodies() == []


@pytest.mark.slow
def test_two_workers_a_resume_and_a_rescore(pytester: pytest.Pytester, tmp_path: object) -> None:
    with serve(pytester, project_for(pytester, race_judge(by_task))) as p:
        p.suite(ENTRY)
        result = p.run_subprocess("-n", "2")
        assert result.ret == 1, result.stdout.str()
        first = p.records("liveresearch")
        records, sent, cut = resume_keeps_every_record_once(p, "liveresearch", keep=1)
        assert sent == 3 * len(cut) == 6  # each cut task again: the model's report, the judge's clean and score calls
        assert {k: r["race_overall"] for k, r in records.items()} == {k: r["race_overall"] for k, r in first.items()}
    out = pytester.path / "rescored.jsonl"
    assert jeval(["rescore", str(p.path("liveresearch")), "--reparse-judge", "-o", str(out)]) == 0
    again = {r["record_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {k: r["race_overall"] for k, r in again.items()} == {k: r["race_overall"] for k, r in records.items()}


FETCHER = '''
PAGES = {"https://a.example/cycles": "LFP packs last 6,000 cycles or more.",
         "https://a.example/safety": "A page about something else entirely."}


def fetch(url):
    if url not in PAGES:
        raise ConnectionError("host not found")
    return PAGES[url]
'''


def fact_judge(prompt: str) -> str:
    """Extract: fixed statements for the LFP report, none for the other; dedupe: keep the first; validate: the
    6,000-cycle claim against a page that says so is supported, a failed fetch unknown, the rest unsupported."""
    if "TEST-EXTRACT" in prompt:
        if "LFP" not in prompt:
            return "[]"
        return "```json\n" + json.dumps([
            {"fact": "LFP lasts 6,000 cycles", "ref_idx": "1", "url": "https://a.example/cycles"},
            {"fact": "LFP lasts six thousand cycles", "ref_idx": "1", "url": "https://a.example/cycles"},
            {"fact": "LFP is safer [see](https://a.example/safety)", "ref_idx": "2", "url": "https://a.example/safety"},
            {"fact": "NMC is denser", "ref_idx": "3", "url": "https://gone.example/nmc"}]) + "\n```"
    if "TEST-DEDUPE" in prompt:
        return "[1]"
    if "TEST-VALIDATE" in prompt:
        page = between(prompt, "<reference>", "</reference>")
        statements = between(prompt, "<statements>", "</statements>").splitlines()
        return json.dumps([{"idx": i + 1, "result": "unknown" if page.startswith("scrape failed")
                            else "supported" if "6,000" in s and "6,000" in page else "unsupported"}
                           for i, s in enumerate(statements)])
    return race_judge(by_task)(prompt)


def test_fact_runs_against_a_fetcher_of_the_user(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(fetcher_for_tests=FETCHER)
    pytester.syspathinsert()
    with serve(pytester, project_for(pytester, fact_judge)) as p:
        result = p.run(ENTRY + '[benchmarks.options]\nlanguage = "en"\nfact_fetcher = "fetcher_for_tests:fetch"\n')
        result.assert_outcomes(passed=1, failed=1)
        records = p.records("liveresearch")
        fact = records["liveresearch-1"]["fact"]
        assert (fact["status"], fact["extracted"], fact["urls"], fact["citations"], fact["supported"]) == (
            "run", 4, 3, 2, 1)
        assert [u.get("results") for u in fact["per_url"]] == [["supported"], ["unsupported"], ["unknown"]]
        assert any("[see]" in t and "https://a.example/safety" not in t.split("<statements>")[1]
                   for t in p.responder.judge_prompts if "TEST-VALIDATE" in t)  # the statement's link removed
        assert "scrape failed: ConnectionError: host not found" in next(
            t for t in p.responder.judge_prompts if "TEST-VALIDATE" in t and "NMC" in t)
        assert records["liveresearch-2"]["fact"]["extracted"] == 0
        assert records["liveresearch-1"]["scoring_metadata"]["deviations"][0].startswith("FACT ran against the pages")
        assert p.summary("liveresearch")["fact"] == {"citation_accuracy": 50.0, "effective_citations": 1.0,
                                                      "reports": 2, "reports_with_citations": 1, "unscored": 0}
        result = p.run(ENTRY + '[benchmarks.options]\nfact_fetcher = "fetcher_for_tests:nothing_here"\n')
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert "options.fact_fetcher: Value error, cannot load the fetcher" in result.stderr.str()


def test_another_tool_is_the_tools_mode(pytester: pytest.Pytester) -> None:
    """A tool other than the corpus's (an installed web search is named the same way): mode ``tools``."""
    with serve(pytester, project_for(pytester, race_judge(by_task))) as p:
        result = p.run(ENTRY + 'backend = "agent"\ntools = ["calculator"]\n[benchmarks.options]\nlanguage = "zh"\n')
        result.assert_outcomes(passed=1)
        (record,) = p.records("liveresearch").values()
        assert record["research_mode"] == {"mode": "tools", "tools": ["calculator"], "corpus": None}
        assert p.summary("liveresearch")["research_modes"] == ["tools"]
