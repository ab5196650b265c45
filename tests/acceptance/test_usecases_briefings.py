"""The synthetic use-case sets daily_digest, morning_brief, research_mining and knowledge_base.

One plugin run feeds every item's gold answer back through a local OpenAI-compatible
server (all must be correct with score 1.0); a wholly wrong answer for every item scores 0,
an empty reply is unscored, the ids do not depend on the seed, the committed data is the
generator's output, and the scoring rules are checked case by case.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import LoadContext, Sample
from pytest_jeval.benchmarks import _digest
from pytest_jeval.benchmarks import bench_daily_digest as dd
from pytest_jeval.benchmarks import bench_knowledge_base as kb
from pytest_jeval.benchmarks import bench_morning_brief as mb
from pytest_jeval.benchmarks import bench_research_mining as rm
from pytest_jeval.suite.catalog import builtin_index
from pytest_jeval.suite.dataset import load_samples
from tests.support import usecases2_gen
from tests.support.bench import run_bundled_sets

DATA = Path(dd.__file__).resolve().parent / "data"
SETS = ("daily_digest", "morning_brief", "research_mining", "knowledge_base")
KEY = "sk-jeval-usecase2-tests"


def module(name: str) -> Any:
    return importlib.import_module(builtin_index()[name])


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()]


def samples(name: str) -> list[Sample]:
    ctx = LoadContext(name, None, 42, DATA)
    return [module(name).to_sample(r, i, ctx) for i, r in enumerate(rows(name))]


def near(value: float) -> Any:
    """Equal to ``value`` at the 4 places the components are rounded to."""
    return pytest.approx(value, abs=1e-4)


def by_id(name: str, item_id: str) -> Sample:
    return next(s for s in samples(name) if s.id == item_id)


# --------------------------------------------------------------------------- gold and wrong answers


def gold_answer(name: str, row: dict[str, Any]) -> str:
    if name == "knowledge_base":
        return f"ANSWER: {row['answer']}\nDOCS: " + ", ".join(f"[{d}]" for d in row["support"])
    return str(row["reference"])


def wrong_answer(name: str, row: dict[str, Any]) -> str:
    """A reply that is wholly wrong: only the distractors, only unsupported claims, a wrong answer from a wrong doc."""
    if name in ("daily_digest", "morning_brief"):
        return "Today:\n" + "\n".join(f"- {d['key']}" for d in row["distractors"])
    if name == "research_mining":
        support = {s for c in row["claims"] for s in c["support"]}
        return "\n".join(f"CLAIM: {a['text']} [{a['id']}]" for a in row["abstracts"] if a["id"] not in support)
    other = next(d["id"] for d in row["docs"] if d["id"] not in row["support"])
    return f"ANSWER: Ada Kestrel\nDOCS: [{other}]"


SCORERS: dict[str, Callable[[str, Sample], Any]] = {
    "daily_digest": dd.score_digest,
    "morning_brief": mb.score_brief,
    "research_mining": rm.score_research,
    "knowledge_base": kb.score_knowledge_base,
}


def test_gold_answers_score_1_through_the_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    table: dict[str, str] = {}
    for name in SETS:
        for row, sample in zip(rows(name), samples(name)):
            table[module(name).prompt(sample)] = gold_answer(name, row)

    result = run_bundled_sets(pytester, monkeypatch, SETS, table, KEY)
    result.assert_outcomes(passed=sum(len(rows(n)) for n in SETS))
    for name in SETS:
        records = [json.loads(x) for x in (pytester.path / "out" / f"{name}_gold.jsonl").read_text().splitlines()]
        assert [r["record_id"] for r in records] == [r["id"] for r in rows(name)]
        for r in records:
            assert r["is_correct"] is True and r["score"] == 1.0, (name, r["record_id"], r["scoring_metadata"])
        summary = json.loads((pytester.path / "out" / f"{name}_gold.jsonl.summary.json").read_text())
        assert summary["accuracy"] == 1.0 and summary["category"] == "use-case"
        assert summary["mean_score"] == 1.0 and set(summary["component_means"].values()) == {1.0}


@pytest.mark.parametrize("name", SETS)
def test_wrong_answers_score_0_and_empty_replies_are_unscored(name: str) -> None:
    for row, sample in zip(rows(name), samples(name)):
        wrong = SCORERS[name](wrong_answer(name, row), sample)
        assert wrong.correct is False and wrong.value == 0.0, (row["id"], wrong)
        for empty in ("", "  \n", "<think>let me see</think>\n"):
            assert SCORERS[name](empty, sample).unscored, (row["id"], empty)


@pytest.mark.parametrize("name", SETS)
def test_ids_are_stable_across_seeds(name: str) -> None:
    bench = module(name).BENCHMARK
    files = bench.default_files(module(name).__file__)
    data = {r["id"]: r for r in rows(name)}
    full1, _ = load_samples(bench, files=files, seed=1)
    full2, _ = load_samples(bench, files=files, seed=2)
    assert [s.id for s in full1] == [s.id for s in full2] == list(data)
    sub1, _ = load_samples(bench, files=files, seed=1, max_samples=8)
    sub2, _ = load_samples(bench, files=files, seed=2, max_samples=8)
    assert len(sub1) == len(sub2) == 8 and [s.id for s in sub1] != [s.id for s in sub2]
    direct = {s.id: s for s in samples(name)}
    for s in full1 + sub1 + sub2:  # an id names the same row whatever the seed, loaded as written
        assert rows(name)[s.index]["id"] == s.id
        assert (s.input, s.target, s.metadata) == (direct[s.id].input, direct[s.id].target, direct[s.id].metadata)


# --------------------------------------------------------------------------- the data itself


@pytest.mark.parametrize("name", SETS)
def test_data_is_the_generators_output_and_checkable(name: str) -> None:
    assert (DATA / f"{name}.jsonl").read_text(encoding="utf-8") == usecases2_gen.render(name), (
        "run `.venv/bin/python tests/support/usecases2_gen.py`")
    data = rows(name)
    assert len(data) >= 30 and len({r["id"] for r in data}) == len(data)
    bench = module(name).BENCHMARK
    assert bench.sample_count == len(samples(name)) and bench.category == "use-case" and bench.scorer == name


def test_knowledge_base_is_one_collection() -> None:
    texts: dict[str, str] = {}
    for row in rows("knowledge_base"):
        assert len(row["docs"]) == 8
        for d in row["docs"]:
            assert texts.setdefault(d["id"], d["text"]) == d["text"], d["id"]  # one id, one text
    assert len(texts) >= 40
    subjects = [r["subject"] for r in rows("knowledge_base")]
    assert subjects.count("multi-hop") >= 4 and subjects.count("unanswerable") >= 3


def test_briefing_gold_is_consistent() -> None:
    for name in ("daily_digest", "morning_brief"):
        for row in rows(name):
            times = [i["time"] for i in row["required"] if i["time"]]
            assert len(times) >= 3, row["id"]  # the order component has pairs to judge
            reasons = {d["reason"] for d in row["distractors"]}
            assert {"cancelled", "another day"} <= reasons, row["id"]


# --------------------------------------------------------------------------- daily_digest and morning_brief


def test_digest_partial_credit_distractors_and_order() -> None:
    s = by_id("daily_digest", "dd-02")  # 4 meetings, 1 message, 2 tasks; 5 distractors
    req, dis = s.metadata["required"], s.metadata["distractors"]
    meetings = sorted((i for i in req if i["time"]), key=lambda i: i["time"])
    assert len(req) == 7 and len(dis) == 5 and len(meetings) == 4
    names = [i["phrases"][0] for i in meetings]
    rest = [i["phrases"][0] for i in req if not i["time"]]

    def run(reply: str) -> tuple[float, bool, dict[str, float]]:
        result = dd.score_digest(reply, s)
        return result.value, result.correct, result.metadata["components"]

    full = "\n".join(names + rest)
    assert run(full) == (1.0, True, {"coverage": 1.0, "exclusion": 1.0, "order": 1.0})
    # one distractor mentioned: exclusion 4/5
    assert run(full + f"\n(cancelled: {dis[0]['phrases'][0]})")[:2] == (round(0.5 + 0.3 * 0.8 + 0.2, 4), True)
    # everything listed, distractors too: exclusion 0, not a digest
    dump = full + "\n" + "\n".join(d["phrases"][0] for d in dis)
    assert run(dump) == (0.7, False, {"coverage": 1.0, "exclusion": 0.0, "order": 1.0})
    # one untimed item missing: coverage and exclusion 6/7, still correct; two missing: not
    assert run("\n".join(names + rest[1:]))[:2] == (round(0.8 * 6 / 7 + 0.2, 4), True)
    assert run("\n".join(names + rest[2:]))[:2] == (round(0.8 * 5 / 7 + 0.2, 4), False)
    # the last two meetings swapped: 5 of 6 pairs in order
    swapped = "\n".join([*names[:2], names[3], names[2], *rest])
    assert run(swapped)[2]["order"] == near(5 / 6)
    # reversed: no pair in order (correct at the threshold: order weighs 0.2)
    assert run("\n".join(names[::-1] + rest))[:2] == (0.8, True)
    # only the meetings: coverage 4/7, not a digest
    _value, correct, parts = run("\n".join(names))
    assert parts == {"coverage": near(4 / 7), "exclusion": near(4 / 7), "order": 1.0} and correct is False
    # two meetings missing: the pairs they are in are lost
    assert run("\n".join(names[:2] + rest))[2]["order"] == near(1 / 6)
    # matching is on whole words after normalisation (case, punctuation)
    assert run(full.upper().replace(" ", " -- "))[0] == 1.0
    assert run("x" + full.replace("\n", "x\nx"))[2]["coverage"] < 1.0  # "xMossbank" is not "Mossbank"
    # saying nothing relevant: no exclusion credit either (nor for naming only distractors)
    assert run("Nothing planned today.") == (0.0, False, {"coverage": 0.0, "exclusion": 0.0, "order": 0.0})


def test_digest_order_counts_first_mentions_and_ties() -> None:
    req = [{"key": k, "phrases": [k], "time": t} for k, t in (("alpha", "09:00"), ("beta", "10:00"), ("gamma", "10:00"))]
    assert _digest.order_share(req, [0, 5, 3]) == 1.0  # beta/gamma have the same time: no pair
    assert _digest.order_share(req, [9, 5, 3]) == 0.0
    assert _digest.order_share(req, [0, None, 3]) == 0.5
    assert _digest.order_share(req[:1], [0]) is None
    assert _digest.first_mention("the alpha and alpha".split(), ["and alpha", "alpha"]) == 1
    assert _digest.first_mention("alphabet".split(), ["alpha"]) is None


def test_brief_length_limit() -> None:
    s = by_id("morning_brief", "mb-01")
    ref = str(s.target)
    words = len(ref.split())
    limit = s.metadata["max_words"]
    assert words <= limit
    ok = mb.score_brief(ref, s)
    assert ok.value == 1.0 and ok.correct is True and ok.metadata["components"]["length"] == 1.0
    over = mb.score_brief(ref + " more" * (limit + 12 - words), s)  # 12 words over the limit
    assert over.metadata["words"] == limit + 12
    assert over.value == round(1 - 12 / limit, 4) and over.value >= 0.75 and over.correct is False
    assert mb.score_brief(ref + " more" * (2 * limit - words), s).value == 0.0
    exact = mb.score_brief(ref + " more" * (limit - words), s)  # exactly at the limit
    assert exact.value == 1.0 and exact.correct is True
    assert _digest.length_factor(limit, limit) == 1.0 and _digest.length_factor(3 * limit, limit) == 0.0


def test_brief_is_scored_like_the_digest() -> None:
    s = by_id("morning_brief", "mb-03")
    req = s.metadata["required"]
    travel = next(i for i in req if i["kind"] == "travel")
    meetings = sorted((i for i in req if i["kind"] == "meeting"), key=lambda i: i["time"])
    rest = [i["phrases"][0] for i in req if not i["time"]]
    late = "\n".join([m["phrases"][0] for m in meetings] + [f"then {travel['phrases'][0]}"] + rest)
    result = mb.score_brief(late, s)  # leaving after the meetings: 3 of 6 pairs out of order
    assert result.metadata["components"]["order"] == 0.5 and result.value == 0.9


# --------------------------------------------------------------------------- research_mining


def test_research_claim_matching_precision_recall_citations() -> None:
    s = by_id("research_mining", "rm-01")  # replicated: claim 1 from two abstracts
    gold = s.metadata["claims"]
    assert len(gold) == 2 and len(gold[0]["support"]) == 2
    c1, c2 = (f"{c['claim']} " + "".join(f"[{x}]" for x in c["support"]) for c in gold)
    distractor = next(a for a in s.metadata["abstracts"] if a["id"] not in {x for c in gold for x in c["support"]})

    def run(reply: str) -> tuple[float, bool, dict[str, float]]:
        result = rm.score_research(reply, s)
        return result.value, result.correct, result.metadata["components"]

    assert run(f"CLAIM: {c1}\nCLAIM: {c2}")[:2] == (1.0, True)
    assert run(f"**Claim 1:** {c1}\n- claim 2 = {c2}")[:2] == (1.0, True)  # labels with markdown and numbers
    assert run(f"{c1}\n{c2}")[:2] == (1.0, True)  # unlabelled lines are claims
    # one claim of two, its citations right: recall 1/2, citation F1 0.8 (2 of 3 gold abstracts)
    _value, correct, parts = run(f"CLAIM: {c1}")
    assert parts == {"recall": 0.5, "precision": 1.0, "citation": near(0.8)} and correct is False
    # an extra unsupported claim, citing the distractor: precision 2/3, citation 6/7
    _value, correct, parts = run(f"CLAIM: {c1}\nCLAIM: {c2}\nCLAIM: {distractor['text']} [{distractor['id']}]")
    assert parts["precision"] == near(2 / 3) and parts["citation"] == near(6 / 7) and correct
    # the same claim twice matches once
    assert run(f"CLAIM: {c1}\nCLAIM: {c1}")[2]["precision"] == 0.5
    # right claims, no citations
    bare = [c["claim"] for c in gold]
    assert run(f"CLAIM: {bare[0]}\nCLAIM: {bare[1]}")[:2] == (0.6, False)
    # a claim missing its figure does not match
    key_number = gold[0]["keys"][1][0]
    assert run(f"CLAIM: {bare[0].replace(key_number, 'many')} [{gold[0]['support'][0]}]")[2]["recall"] == 0.0
    assert rm.claim_matches("Velarin cut BLIGHT by 42%.", [["leaf blight", "blight"], ["42"]])
    assert not rm.claim_matches("Velarin cut blight by 420 percent.", [["blight"], ["42"]])
    assert not rm.claim_matches("Velarin cut blight [42].", [["blight"], ["42"]])  # a citation is not a figure


# --------------------------------------------------------------------------- knowledge_base


def test_knowledge_base_answer_and_retrieval() -> None:
    rows_by = {r["id"]: r for r in rows("knowledge_base")}
    look = next(r for r in rows_by.values() if r["subject"] == "lookup")
    hop = next(r for r in rows_by.values() if r["subject"] == "multi-hop")
    none = next(r for r in rows_by.values() if r["subject"] == "unanswerable")
    s_look, s_hop, s_none = (by_id("knowledge_base", r["id"]) for r in (look, hop, none))
    doc = look["support"][0]
    other = next(d["id"] for d in look["docs"] if d["id"] != doc)

    def run(reply: str, sample: Sample = s_look) -> tuple[float, bool]:
        result = kb.score_knowledge_base(reply, sample)
        return result.value, result.correct

    assert run(f"ANSWER: {look['answer']}\nDOCS: [{doc}]") == (1.0, True)
    assert run(f"**Answer:** {look['answer']} [{doc}]\n**Documents:** {doc}") == (1.0, True)
    assert run(f"{look['answer']} (see [{doc}])") == (1.0, True)  # no labels: first line, every dN
    assert run(f"ANSWER: {look['answer']}\nDOCS:") == (0.6, False)  # the answer without its document
    assert run(f"ANSWER: {look['answer']}\nDOCS: [{doc}], [{other}]") == (round(0.6 + 0.4 * 2 / 3, 4), True)
    assert run(f"ANSWER: {look['answer']}\nDOCS: [{other}]") == (0.6, False)  # right answer, wrong document
    assert run(f"ANSWER: not stated\nDOCS: [{doc}]") == (0.4, False)
    h1, h2 = hop["support"]
    assert run(f"ANSWER: {hop['answer']}\nDOCS: [{h1}], [{h2}]", s_hop) == (1.0, True)
    assert run(f"ANSWER: {hop['answer']}\nDOCS: [{h2}]", s_hop) == (round(0.6 + 0.4 * 2 / 3, 4), True)
    assert run("ANSWER: It is not mentioned in any document.\nDOCS: none", s_none) == (1.0, True)
    assert run(f"ANSWER: not stated\nDOCS: [{none['docs'][0]['id']}]", s_none) == (0.6, False)
    assert run("ANSWER: 42\nDOCS:", s_none) == (0.4, False)


def test_use_case_sets_in_the_catalog() -> None:
    from pytest_jeval.scoring.registry import call_scorer
    from pytest_jeval.suite.catalog import catalog_rows

    listed = {r["name"]: r for r in catalog_rows()}
    for name in SETS:
        assert listed[name]["category"] == "use-case" and listed[name]["dataset"] == "(bundled)"
        assert listed[name]["samples"] == len(rows(name))
        row, sample = rows(name)[0], samples(name)[0]
        record = {"record_id": row["id"], "benchmark": name, "model_answer": gold_answer(name, row)}
        assert call_scorer(name, record, sample=sample).value == 1.0  # the rescore registry entry
