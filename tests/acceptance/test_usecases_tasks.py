"""The use-case sets coding_task and browser_assistant, and the ipw mix.

One plugin run feeds every item's gold answer back through a local OpenAI-compatible
server (all 144 must be correct with score 1.0); a wrong answer for every item scores 0
and an empty one is unscored; ids do not depend on the seed; browser_assistant also runs
one scripted agent episode; ipw's accuracy per joule and per watt are checked on records
that carry energy fields and are null without them.
"""

from __future__ import annotations

import functools
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import LoadContext, Sample
from pytest_jeval.benchmarks import bench_coding_task as ct
from pytest_jeval.benchmarks import bench_ipw as ipw
from pytest_jeval.benchmarks._codeexec import run_jobs
from pytest_jeval.benchmarks.browser_assistant import bench_browser_assistant as ba
from pytest_jeval.benchmarks.browser_assistant.pages import html_to_text, store_for
from pytest_jeval.suite.catalog import builtin_index
from pytest_jeval.suite.dataset import DatasetLoadError, load_samples
from pytest_jeval.testing.openai_server import (
    FakeOpenAIServer,
    ToolCallSpec,
    first_user_message,
    script_responder,
    tool_answer,
)
from tests.support.bench import MODEL, Project, Router, run_bundled_sets

SETS = ("coding_task", "browser_assistant", "ipw")
KEY = "sk-jeval-usecase3-tests"


def module(name: str) -> Any:
    return importlib.import_module(builtin_index()[name])


def samples(name: str, **kwargs: Any) -> list[Sample]:
    return list(_samples(name, tuple(sorted(kwargs.items()))))


@functools.cache
def _samples(name: str, kwargs: tuple[tuple[str, Any], ...]) -> tuple[Sample, ...]:
    bench = module(name).BENCHMARK
    loaded, _ = load_samples(bench, files=bench.default_files(module(name).__file__), **dict(kwargs))
    return tuple(loaded)


# --------------------------------------------------------------------------- gold and wrong answers


@functools.lru_cache(maxsize=1)
def email_rows() -> dict[str, dict[str, Any]]:
    """The raw email_triage rows (their reference drafts are not in the samples)."""
    path = Path(module("email_triage").__file__).parent / "data" / "email_triage.jsonl"
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines())}


def gold(name: str, s: Sample) -> str:
    """The reference answer of an item, in the format its prompt asks for."""
    m = s.metadata
    if name == "ipw":
        return gold(m["source"], ipw.source_sample(s))
    if name in ("coding_task",):
        return f"Here it is.\n\n```python\n{m['solution']}```\n"
    if name == "coding_assistant":
        return f"```python\n{m['fixed_code']}```"
    if name == "browser_assistant":
        return f"ANSWER: {s.target}\nSOURCES: {', '.join(m['support'])}"
    if name == "loghub":
        lines = ", ".join(map(str, m["anomalous_lines"])) or "NONE"
        return f"VERDICT: {'ANOMALY' if s.target == 'anomalous' else 'NORMAL'}\nLINES: {lines}"
    if name == "doc_qa":
        return f"ANSWER: {s.target}\nCITATIONS: {', '.join(f'[{i}]' for i in m['support'])}"
    if name == "email_triage":
        draft = email_rows()[s.id]["reference_draft"]
        return f"CATEGORY: {m['category']}\nPRIORITY: {m['priority']}\nDRAFT:\n{draft or 'NO REPLY'}"
    if name == "security_scanner":
        if m["cwes"] == ["NONE"]:
            return "VULNERABILITY: NONE\nCLASS: NONE\nLINES: NONE"
        return f"VULNERABILITY: {m['cwes'][0]}\nCLASS: {m['vuln_class']}\nLINES: {', '.join(map(str, m['lines']))}"
    if name == "quickstart":
        return str(s.target)
    raise AssertionError(name)


def wrong(name: str, s: Sample) -> str:
    """An answer that must score 0: wrong on every component."""
    m = s.metadata
    if name == "ipw":
        return wrong(m["source"], ipw.source_sample(s))
    if name in ("coding_task", "coding_assistant"):
        return "```python\ndef unrelated():\n    return None\n```"
    if name == "browser_assistant":
        if m["answerable"]:
            other = [p for p in m["candidates"] if p not in m["support"]]
            return f"ANSWER: Kestrin Harbour\nSOURCES: {', '.join(other)}"
        return f"ANSWER: 42\nSOURCES: {m['candidates'][0]}"
    if name == "loghub":
        return "VERDICT: NORMAL\nLINES: NONE" if s.target == "anomalous" else "VERDICT: ANOMALY\nLINES: 1"
    if name == "doc_qa":
        return "ANSWER: zzzz\nCITATIONS:" if m["answerable"] else "ANSWER: zzzz\nCITATIONS: [1]"
    if name == "email_triage":
        return "CATEGORY: none of these\nPRIORITY: whenever\nDRAFT:\nxyz"
    if name == "security_scanner":
        return "VULNERABILITY: NONE\nLINES: NONE" if m["cwes"] != ["NONE"] else "VULNERABILITY: CWE-89\nLINES: 1"
    if name == "quickstart":
        if m["kind"] == "numeric":
            return str(float(s.target) + 1000)
        if m["kind"] == "choice":
            return "The answer is " + ("A" if s.target != "A" else "B")
        return "zzzz qqqq"
    raise AssertionError(name)


SCORERS = {"coding_task": ct.score_task, "browser_assistant": ba.score_browser, "ipw": ipw.score_item}


@pytest.mark.slow
def test_gold_answers_score_1_through_the_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    table: dict[str, str] = {}
    for name in SETS:
        for s in samples(name):
            table[module(name).prompt(s)] = gold(name, s)

    result = run_bundled_sets(pytester, monkeypatch, SETS, table, KEY)
    result.assert_outcomes(passed=32 + 32 + 80)
    for name, count in (("coding_task", 32), ("browser_assistant", 32), ("ipw", 80)):
        records = [json.loads(x) for x in (pytester.path / "out" / f"{name}_gold.jsonl").read_text().splitlines()]
        assert len(records) == count
        for r in records:
            assert r["is_correct"] is True and r["score"] == 1.0, (name, r["record_id"], r["scoring_metadata"])
        summary = json.loads((pytester.path / "out" / f"{name}_gold.jsonl.summary.json").read_text())
        assert summary["accuracy"] == 1.0
    ipw_summary = json.loads((pytester.path / "out" / "ipw_gold.jsonl.summary.json").read_text())
    assert ipw_summary["mix"] == {s: 10 for s in ipw.SOURCES}
    assert ipw_summary["accuracy_per_joule"] is None and ipw_summary["accuracy_per_watt"] is None  # no telemetry
    assert ipw_summary["energy_measured_samples"] == 0
    assert {b["accuracy"] for b in ipw_summary["per_source"].values()} == {1.0}
    assert set(ipw_summary["per_subject"]) == set(ipw.SOURCES)
    code_summary = json.loads((pytester.path / "out" / "coding_task_gold.jsonl.summary.json").read_text())
    assert code_summary["outcome_reasons"] == {"passed": 32} and code_summary["mean_tests_passed_share"] == 1.0


@pytest.mark.parametrize("name", SETS)
def test_wrong_answers_score_0_and_empty_replies_are_unscored(name: str) -> None:
    items = samples(name)
    jobs = [functools.partial(SCORERS[name], wrong(name, s), s) for s in items]
    results = run_jobs(jobs, workers=4)  # the code items run in the sandbox
    for s, result in zip(items, results):
        assert result is not None and result.correct is False and not result.value, (s.id, result)
    for s in items:
        assert SCORERS[name]("", s).unscored, s.id
        if name != "ipw":  # (the sources' own rules for reasoning-only replies differ)
            assert SCORERS[name]("  \n<think>ANSWER: x</think>", s).unscored, s.id


@pytest.mark.parametrize("name", SETS)
def test_item_ids_do_not_depend_on_the_seed(name: str) -> None:
    full_a, full_b = samples(name, seed=1), samples(name, seed=2)
    assert [s.id for s in full_a] == [s.id for s in full_b]
    assert len({s.id for s in full_a}) == len(full_a) == module(name).BENCHMARK.sample_count
    a = {s.id: s for s in samples(name, seed=1, max_samples=12)}
    b = {s.id: s for s in samples(name, seed=7, max_samples=12)}
    assert len(a) == len(b) == 12 and set(a) != set(b)  # another subset...
    for rid in set(a) & set(b):  # ...but the same id is the same item
        assert (a[rid].input, a[rid].target, a[rid].metadata) == (b[rid].input, b[rid].target, b[rid].metadata)


def test_the_sets_are_use_case_sets_with_checked_gold() -> None:
    for name in ("coding_task", "browser_assistant"):
        bench = module(name).BENCHMARK
        assert bench.category == "use-case" and bench.sample_count == len(samples(name)) >= 30
    stdlib = [s for s in samples("coding_task") if s.metadata["stdlib"]]
    assert len(stdlib) >= 8  # a few tasks need a standard-library module
    subjects = [s.subject for s in samples("browser_assistant")]
    assert subjects.count("verification") >= 10 and "multi-hop" in subjects and "unanswerable" in subjects


# --------------------------------------------------------------------------- coding_task


def test_coding_task_prompt_shows_examples_not_hidden_tests_and_scores_partially() -> None:
    s = next(x for x in samples("coding_task") if x.id == "ct-12")  # roman_to_int
    text = ct.prompt(s)
    assert "def roman_to_int(s: str) -> int:" in text and 'roman_to_int("XIV") == 14' in text
    assert "MCMXCIV" not in text and "def test_" not in text  # the hidden tests stay hidden
    special = '```python\ndef roman_to_int(s):\n    return 14\n```'
    result = ct.score_task(special, s)
    assert result.correct is False and result.metadata["reason"] == "wrong answer"
    nearly = "```python\ndef roman_to_int(s):\n    v = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}\n" \
             "    return sum(v[c] for c in s)\n```"
    assert ct.score_task(nearly, s).correct is False  # no subtractive pairs
    assert ct.score_task("```python\ndef roman_to_int(s)\n    return 1\n```", s).metadata["reason"] == "exception"


# --------------------------------------------------------------------------- browser_assistant


def test_pages_become_text_deterministically() -> None:
    source = """<html><head><title>T</title><meta name="url" content="https://x.example/a">
    <script>var secret = 1;</script><style>p {}</style></head><body><nav>Home | About</nav>
    <h1>T</h1><p>First   paragraph
    with a break.</p><ul><li>one</li><li>two &amp; three</li></ul>
    <table><tr><th>Price</th><td>149 EUR</td></tr></table><footer>(c) 2024</footer></body></html>"""
    title, meta, text = html_to_text(source)
    assert (title, meta["url"]) == ("T", "https://x.example/a")
    assert text.split("\n") == ["First paragraph with a break.", "one", "two & three", "Price: 149 EUR"]
    assert html_to_text(source) == (title, meta, text)
    store = store_for(str(ba.BUNDLED_PAGES))
    assert len(store.pages) >= 15
    for page in store.pages.values():
        assert "analytics" not in page.text and "All rights reserved" not in page.text and page.url and page.date


def test_browser_scoring_rewards_the_current_page_and_its_citation() -> None:
    s = next(x for x in samples("browser_assistant") if x.id == "ba-08")  # women's time; a digest has the old one
    assert s.metadata["support"] == ["tessaly-marathon-results-2024"]
    assert s.metadata["contradicted_by"] == ["running-digest-weekly"]

    def run(reply: str) -> tuple[float, bool]:
        result = ba.score_browser(reply, s)
        return result.value, result.correct

    assert run("ANSWER: 2:27:05\nSOURCES: tessaly-marathon-results-2024") == (1.0, True)
    assert run("ANSWER: 2:27:05\nSOURCES: https://tessalymarathon.example.org/results/2024/") == (1.0, True)
    assert run("ANSWER: 2:25:07\nSOURCES: running-digest-weekly") == (0.0, False)  # the outdated figure
    assert run("ANSWER: 2:27:05\nSOURCES:") == (0.6, False)  # unsupported
    both = ba.score_browser("ANSWER: 2:27:05\nSOURCES: tessaly-marathon-results-2024, running-digest-weekly", s)
    assert (both.value, both.correct) == (round(0.6 + 0.4 * 2 / 3, 4), True)
    assert both.metadata["cited_contradicting"] == ["running-digest-weekly"]
    assert run("She ran 2:27:05 (tessaly-marathon-results-2024).") == (1.0, True)  # no labels
    unanswerable = next(x for x in samples("browser_assistant") if x.subject == "unanswerable")
    assert ba.score_browser("ANSWER: not stated\nSOURCES:", unanswerable).value == 1.0


def test_browser_tools_search_and_fetch_the_bundle() -> None:
    store = store_for(str(ba.BUNDLED_PAGES))
    ids = [p.id for p in store.search("Kelvara bridge toll")]
    assert ids[0] == "kelvara-bridge-authority" and "kelvara-travel-blog-2016" in ids
    assert store.get("https://quillon.example.com/q7/specs") is store.pages["quillon-q7-specs"]
    assert store.get("quillon-q7-specs.html") is store.pages["quillon-q7-specs"]
    assert store.get("nope") is None and store.search("zzzz qqqq") == []
    assert [t.name for t in ba.agent_tools(samples("browser_assistant")[0])] == ["search_pages", "fetch_page"]
    assert ba.BENCHMARK.backends == ("direct", "agent")


def _episode_script(s: Sample) -> list[Any]:
    page = s.metadata["support"][0]
    return [tool_answer(ToolCallSpec("search_pages", {"query": s.input})),
            tool_answer(ToolCallSpec("fetch_page", {"page": page})),
            f"I checked the page.\nANSWER: {s.target}\nSOURCES: {page}"]


def test_browser_agent_episode_end_to_end(pytester: pytest.Pytester) -> None:
    chosen = [x for x in samples("browser_assistant") if x.id in ("ba-08", "ba-14")]
    scripts = {x.input: _episode_script(x) for x in chosen}
    with FakeOpenAIServer(script_responder(scripts), models=(MODEL,)) as server:
        project = Project(pytester, server, Router(lambda _: ""))
        suite = project.suite("browser_assistant", str(ba.BUNDLED_PAGES.parent / "questions.jsonl"), judge=False,
                              extra='backend = "agent"\nrecord_ids = ["ba-08", "ba-14"]')
        result = pytester.runpytest("--jeval-config", str(suite), "-rA")
        result.assert_outcomes(passed=2)
        chats = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 6
    assert all([t["function"]["name"] for t in b["tools"]] == ["search_pages", "fetch_page"] for b in chats)
    assert not any("2:27:05" in first_user_message(b) for b in chats)  # the pages are not in the prompt
    records = project.records("browser_assistant")
    for x in chosen:
        r = records[x.id]
        assert r["is_correct"] is True and r["backend"] == "agent" and r["tool_calls"] == 2
        assert r["scoring_metadata"]["fetched"] == x.metadata["support"]
        assert r["scoring_metadata"]["cited_unfetched"] == []
    sidecar = pytester.path / "out" / f"browser_assistant_{MODEL}.jsonl.trajectories.jsonl"
    trajectory = next(t for t in map(json.loads, sidecar.read_text().splitlines()) if t["record_id"] == "ba-08")
    search, fetch = trajectory["tool_calls"]
    assert json.loads(search["result"])[0]["id"] == "tessaly-marathon-results-2024"
    assert "Her official time is 2:27:05" in fetch["result"]


# --------------------------------------------------------------------------- ipw


def test_ipw_mix_rule() -> None:
    assert ipw.positions(36) == [0, 3, 7, 10, 14, 18, 21, 25, 28, 32]
    assert ipw.positions(30) == list(range(0, 30, 3)) and ipw.positions(4) == [0, 1, 2, 3]
    items = samples("ipw")
    assert [s.id for s in items[:2]] == ["quickstart.qs-arith-01", "quickstart.qs-arith-04"]
    for source in ipw.SOURCES:
        inner = [s for s in items if s.metadata["source"] == source]
        drawn = [x.id for x in samples(source)]
        assert [s.metadata["source_id"] for s in inner] == [drawn[i] for i in ipw.positions(len(drawn))]
        assert module(source).prompt(ipw.source_sample(inner[0])) == ipw.prompt(inner[0])
    with pytest.raises(DatasetLoadError, match="remove data_files"):
        list(ipw.read_rows([Path("mine.jsonl")], LoadContext("ipw", None, 42, None)))


def _record(source: str, correct: bool, energy: float | None, power: float | None, error: str | None = None) -> dict[str, Any]:
    return {"record_id": f"{source}.x", "subject": source, "is_correct": correct if error is None else None,
            "score": float(correct), "error": error, "energy_joules": energy, "power_watts": power}


def test_ipw_accuracy_per_joule_and_per_watt() -> None:
    records = [
        _record("doc_qa", True, 100.0, 200.0),
        _record("doc_qa", False, 300.0, 400.0),
        _record("loghub", True, 50.0, 100.0),
        _record("loghub", True, 50.0, 300.0),
        _record("loghub", False, None, None, error="endpoint down"),  # not answered: not in the accuracy
    ]
    summary = ipw.summarize_ipw(records)
    accuracy = 3 / 4
    assert summary["accuracy_per_joule"] == pytest.approx(accuracy / 500.0)
    assert summary["accuracy_per_watt"] == pytest.approx(accuracy / 250.0)
    assert summary["energy_measured_samples"] == 4 and summary["mix"] == {"doc_qa": 2, "loghub": 3}
    doc, log = summary["per_source"]["doc_qa"], summary["per_source"]["loghub"]
    assert (doc["accuracy"], doc["energy_joules"]) == (0.5, 400.0)
    assert doc["accuracy_per_joule"] == pytest.approx(0.5 / 400.0) and doc["accuracy_per_watt"] == pytest.approx(0.5 / 300)
    assert log["accuracy"] == 1.0 and log["accuracy_per_joule"] == pytest.approx(1 / 100.0)
    assert log["accuracy_per_watt"] == pytest.approx(1 / 200.0)
    without = ipw.summarize_ipw([_record("doc_qa", True, None, None), _record("loghub", False, None, None)])
    assert without["accuracy_per_joule"] is None and without["accuracy_per_watt"] is None
    assert without["per_source"]["doc_qa"]["accuracy_per_joule"] is None
    assert without["per_source"]["doc_qa"]["accuracy"] == 1.0 and without["energy_measured_samples"] == 0
    zero = ipw.summarize_ipw([_record("doc_qa", False, 10.0, 5.0)])  # measured, all wrong: 0, not null
    assert zero["accuracy_per_joule"] == 0.0 and zero["accuracy_per_watt"] == 0.0


def test_new_sets_in_the_catalog() -> None:
    from pytest_jeval.scoring.registry import scorer_names
    from pytest_jeval.suite.catalog import catalog_rows

    listed = {r["name"]: r for r in catalog_rows()}
    for name, samples_, dataset in (("coding_task", 32, "(bundled)"), ("browser_assistant", 32, "(bundled)"),
                                    ("ipw", 80, "(bundled-mix)"), ("loghub", 40, "(bundled)")):
        assert listed[name]["samples"] == samples_ and listed[name]["dataset"] == dataset
        assert module(name).BENCHMARK.scorer in scorer_names()
