"""The synthetic use-case sets: coding_assistant, security_scanner, doc_qa, email_triage.

One plugin run feeds every item's gold answer back through a local OpenAI-compatible
server (all 120 must be correct with score 1.0); a perturbed answer for every item is
scored directly and must score lower; the composite and threshold rules are then
checked case by case.
"""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import LoadContext, Sample
from pytest_jeval.benchmarks import bench_coding_assistant as ca
from pytest_jeval.benchmarks import bench_doc_qa as dq
from pytest_jeval.benchmarks import bench_email_triage as et
from pytest_jeval.benchmarks import bench_security_scanner as sec
from pytest_jeval.benchmarks._codeexec import run_jobs
from pytest_jeval.benchmarks._usecase import labelled_field
from pytest_jeval.suite.catalog import builtin_index
from tests.support.bench import run_bundled_sets

DATA = Path(ca.__file__).resolve().parent / "data"
SETS = ("coding_assistant", "security_scanner", "doc_qa", "email_triage")
KEY = "sk-jeval-usecase-tests"


def rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]


def samples(name: str) -> list[Sample]:
    module = importlib.import_module(builtin_index()[name])
    ctx = LoadContext(name, None, 42, DATA)
    return [module.to_sample(r, i, ctx) for i, r in enumerate(rows(name))]


def by_id(name: str, item_id: str) -> Sample:
    return next(s for s in samples(name) if s.id == item_id)


# --------------------------------------------------------------------------- gold and perturbed answers


def security_answer(row: dict[str, Any], perturbed: bool) -> str:
    if row["cwes"] == ["NONE"]:
        return "VULNERABILITY: CWE-89\nCLASS: SQL injection\nLINES: 1" if perturbed else \
            "VULNERABILITY: NONE\nCLASS: NONE\nLINES: NONE"
    lines = row["lines"]
    if perturbed:  # the right weakness, pointed at a line that is not the vulnerable one
        wrong = next(n for n in range(1, 100) if n not in lines)
        return f"VULNERABILITY: {row['cwes'][0]}\nCLASS: {row['vuln_class']}\nLINES: {wrong}"
    return f"**VULNERABILITY:** {row['cwes'][0]}\n**CLASS:** {row['vuln_class']}\n**LINES:** {', '.join(map(str, lines))}"


def doc_qa_answer(row: dict[str, Any], perturbed: bool) -> str:
    cites = ", ".join(f"[{i}]" for i in row["support"])
    if perturbed:  # a wrong answer with the right citations
        wrong = "not stated" if row["answerable"] else "Ada Kestrel"
        return f"ANSWER: {wrong}\nCITATIONS: {cites or '[1]'}"
    return f"ANSWER: {row['answer']}\nCITATIONS: {cites}"


def email_answer(row: dict[str, Any], perturbed: bool) -> str:
    if perturbed:  # right category, priority two levels off, no draft
        order = list(et.PRIORITIES)
        wrong = order[(order.index(row["priority"]) + 2) % 4]
        return f"CATEGORY: {row['category']}\nPRIORITY: {wrong}\nDRAFT:\nWill get back to you."
    return f"CATEGORY: {row['category']}\nPRIORITY: {row['priority']}\nDRAFT:\n{row['reference_draft'] or 'NO REPLY'}"


def coding_answer(row: dict[str, Any], perturbed: bool) -> str:
    code = row["buggy_code"] if perturbed else row["fixed_code"]  # perturbed: the bug left in place
    return f"Here is the fix.\n\n```python\n{code}```\n"


ANSWERS: dict[str, Callable[[dict[str, Any], bool], str]] = {
    "coding_assistant": coding_answer,
    "security_scanner": security_answer,
    "doc_qa": doc_qa_answer,
    "email_triage": email_answer,
}


@pytest.mark.slow
def test_gold_answers_score_1_through_the_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    table: dict[str, str] = {}
    for name in SETS:
        module = importlib.import_module(builtin_index()[name])
        for row, sample in zip(rows(name), samples(name)):
            table[module.prompt(sample)] = ANSWERS[name](row, False)

    result = run_bundled_sets(pytester, monkeypatch, SETS, table, KEY)
    result.assert_outcomes(passed=120)
    for name in SETS:
        records = [json.loads(x) for x in (pytester.path / "out" / f"{name}_gold.jsonl").read_text().splitlines()]
        assert len(records) == 30
        for r in records:
            assert r["is_correct"] is True and r["score"] == 1.0, (name, r["record_id"], r["scoring_metadata"])
        summary = json.loads((pytester.path / "out" / f"{name}_gold.jsonl.summary.json").read_text())
        assert summary["accuracy"] == 1.0 and summary["category"] == "use-case"
        if name == "coding_assistant":
            assert summary["mean_tests_passed_share"] == 1.0 and summary["outcome_reasons"] == {"passed": 30}
        else:
            assert summary["mean_score"] == 1.0 and set(summary["component_means"].values()) == {1.0}


SCORERS: dict[str, Callable[[str, Sample], Any]] = {
    "coding_assistant": ca.score_fix,
    "security_scanner": sec.score_security,
    "doc_qa": dq.score_doc_qa,
    "email_triage": et.score_triage,
}


@pytest.mark.parametrize("name", SETS)
def test_perturbed_answers_score_lower(name: str) -> None:
    items = list(zip(rows(name), samples(name)))
    jobs = [functools.partial(SCORERS[name], ANSWERS[name](row, True), sample) for row, sample in items]
    results = run_jobs(jobs, workers=8)  # coding_assistant runs the tests in the sandbox
    for (row, _), result in zip(items, results):
        assert result is not None and result.correct is False and result.value < 1.0, (row["id"], result)
    mean = sum(r.value for r in results if r is not None) / len(results)
    assert mean < (0.5 if name == "coding_assistant" else 0.75)


# --------------------------------------------------------------------------- the data itself


@pytest.mark.parametrize("name", SETS)
def test_sets_have_about_30_checkable_items(name: str) -> None:
    data = rows(name)
    assert 28 <= len(data) <= 32
    assert len({r["id"] for r in data}) == len(data)
    loaded = samples(name)  # to_sample validates each row's gold
    assert len(loaded) == len(data)
    module = importlib.import_module(builtin_index()[name])
    assert module.BENCHMARK.sample_count == len(data) and module.BENCHMARK.category == "use-case"


def test_security_gold_lines_point_into_the_code() -> None:
    for row in rows("security_scanner"):
        n = len(row["code"].rstrip("\n").split("\n"))
        assert all(1 <= line <= n for line in row["lines"]), row["id"]
    assert sum(r["cwes"] == ["NONE"] for r in rows("security_scanner")) >= 4  # safe code must be recognised too


def test_email_reference_drafts_contain_every_required_element() -> None:
    for sample, row in zip(samples("email_triage"), rows("email_triage")):
        share, missing = et.draft_score(row["reference_draft"], sample)
        assert share == 1.0 and not missing, row["id"]


# --------------------------------------------------------------------------- coding_assistant


def test_coding_assistant_partial_fix_hidden_tests_and_failure_reasons() -> None:
    sample = by_id("coding_assistant", "ca-18")  # gcd
    special_cased = "```python\ndef gcd(a, b):\n    return 6 if (a, b) == (12, 18) else 1\n```"
    result = ca.score_fix(special_cased, sample)
    assert result.metadata["visible_passed"] == 1 and result.metadata["hidden_passed"] < 2
    assert 0 < result.value < 1 and result.correct is False  # passing the shown test is not a fix
    hang = ca.score_fix("```python\ndef gcd(a, b):\n    while True:\n        pass\n```", sample, timeout=1.0)
    verdicts = [t["verdict"] for t in hang.metadata["tests"]]
    assert verdicts[0] == "timeout" and set(verdicts[1:]) == {"not run"} and hang.value == 0.0
    broken = ca.score_fix("```python\ndef gcd(a, b)\n    return a\n```", sample)
    assert {t["verdict"] for t in broken.metadata["tests"]} == {"exception"}
    assert "SyntaxError" in broken.metadata["tests"][0]["detail"]
    quitter = ca.score_fix("```python\nimport sys\nsys.exit(0)\n```", sample)
    assert quitter.value == 0.0 and quitter.correct is False
    assert ca.score_fix("I could not find the bug.", sample).correct is False
    assert ca.score_fix("", sample).unscored


# --------------------------------------------------------------------------- security_scanner


def test_security_composite_and_threshold() -> None:
    s = by_id("security_scanner", "sec-01")  # CWE-89 at lines 5 and 6
    assert s.metadata["lines"] == [5, 6]

    def run(reply: str) -> tuple[float, bool]:
        result = sec.score_security(reply, s)
        return result.value, result.correct

    assert run("VULNERABILITY: CWE-89\nCLASS: SQL injection\nLINES: 6") == (1.0, True)
    assert run("VULNERABILITY: CWE-89\nCLASS: SQL injection\nLINES: 5-6") == (1.0, True)
    assert run("VULNERABILITY: CWE-89\nLINES: 6, 7") == (0.8, True)  # half the lines right
    assert run("VULNERABILITY: CWE-89\nCLASS: SQL injection\nLINES: 3") == (0.6, False)  # wrong place
    assert run("VULNERABILITY: CWE-943\nCLASS: NoSQL injection\nLINES: 6") == (0.7, False)  # related weakness
    assert run("VULNERABILITY: CWE-79\nLINES: 6") == (0.4, False)
    assert run("VULNERABILITY: SQL injection\nLINES: 6") == (1.0, True)  # class named without an id
    assert run("VULNERABILITY: NONE\nLINES: NONE") == (0.0, False)
    assert run("This is SQL injection (CWE-89) on line 6 where the query is built.") == (1.0, True)
    assert run("VULNERABILITY: CWE-89\nLINES: 1-20") == (round(0.6 + 0.4 * 2 / 20, 4), False)  # flagging everything
    assert sec.score_security("Looks fine to me?", s).unscored
    safe = by_id("security_scanner", "sec-26")
    assert sec.score_security("VULNERABILITY: NONE\nCLASS: NONE\nLINES: NONE", safe).value == 1.0
    assert sec.score_security("No vulnerability: the query is parameterised.", safe).correct is True
    assert sec.score_security("VULNERABILITY: CWE-89\nLINES: 5", safe).value == 0.0


# --------------------------------------------------------------------------- doc_qa


def test_doc_qa_composite_and_threshold() -> None:
    single = by_id("doc_qa", "dq-01")  # Ada Kestrel, passage 1 of 5
    two_hop = by_id("doc_qa", "dq-06")  # 3 years, passages 1 and 6
    unanswerable = by_id("doc_qa", "dq-18")

    def run(reply: str, sample: Sample) -> tuple[float, bool]:
        result = dq.score_doc_qa(reply, sample)
        return result.value, result.correct

    assert run("ANSWER: Ada Kestrel\nCITATIONS: [1]", single) == (1.0, True)
    assert run("ANSWER: It was built by the engineer Ada Kestrel.\nCITATIONS: 1", single) == (1.0, True)
    assert run("ANSWER: Ada Kestrel\nCITATIONS:", single) == (0.6, False)  # no citation
    assert run("ANSWER: Ada Kestrel\nCITATIONS: [1], [2]", single) == (round(0.6 + 0.4 * 2 / 3, 4), True)
    assert run("ANSWER: Ada Kestrel\nCITATIONS: [1], [2], [3], [4], [5]", single) == (round(0.6 + 0.4 / 3, 4), False)
    assert run("ANSWER: Tomas Ruelle\nCITATIONS: [1]", single) == (0.4, False)  # wrong answer, right citation
    assert run("Ada Kestrel built it [1].", single) == (1.0, True)  # no labels: first line and [n] citations
    listing = "ANSWER: " + " or ".join(["Tomas Ruelle", "the keeper", "a granite mason", "Ada Kestrel", "the island council", "nobody"])
    assert run(listing + "\nCITATIONS: [1]", single)[1] is False  # listing candidates does not pass
    assert run("ANSWER: three years\nCITATIONS: [1], [6]", two_hop) == (1.0, True)
    assert run("ANSWER: 3\nCITATIONS: [6]", two_hop) == (round(0.6 + 0.4 * 2 / 3, 4), True)
    assert run("ANSWER: not stated\nCITATIONS:", unanswerable) == (1.0, True)
    assert run("ANSWER: The document does not mention any fish.\nCITATIONS: none", unanswerable) == (1.0, True)
    assert run("ANSWER: trout\nCITATIONS: [1]", unanswerable) == (0.0, False)
    assert run("ANSWER: not stated\nCITATIONS: [1]", single) == (0.4, False)  # refusing an answerable question
    assert dq.score_doc_qa("  ", single).unscored


# --------------------------------------------------------------------------- email_triage


def test_email_triage_composite_and_threshold() -> None:
    s = by_id("email_triage", "et-01")  # billing / high; refund, INV-20431, apology
    spam = by_id("email_triage", "et-07")
    draft = "Sorry about that - we refunded the duplicate charge on INV-20431."

    def run(reply: str, sample: Sample = s) -> tuple[float, bool]:
        result = et.score_triage(reply, sample)
        return result.value, result.correct

    assert run(f"CATEGORY: billing\nPRIORITY: high\nDRAFT:\n{draft}") == (1.0, True)
    assert run(f"Category: Billing\nPriority: P2\nDraft: {draft}") == (1.0, True)
    assert run(f"CATEGORY: billing\nPRIORITY: urgent\nDRAFT:\n{draft}") == (0.85, True)  # one level off
    assert run("CATEGORY: billing\nPRIORITY: urgent\nDRAFT:\nWe refunded it.") == (0.65, False)
    assert run("CATEGORY: billing\nPRIORITY: high\nDRAFT:\nWe refunded it.") == (0.8, True)
    assert run(f"CATEGORY: sales\nPRIORITY: high\nDRAFT:\n{draft}") == (0.6, False)  # wrong category
    assert run(f"CATEGORY: billing\nPRIORITY: low\nDRAFT:\n{draft}") == (0.7, False)
    # "Priority:" inside the draft does not override the header
    assert run(f"CATEGORY: billing\nPRIORITY: high\nDRAFT:\n{draft}\nPriority: low for us.") == (1.0, True)
    assert run("CATEGORY: spam\nPRIORITY: low\nDRAFT:\nNO REPLY", spam) == (1.0, True)
    assert run("CATEGORY: spam\nPRIORITY: low\nDRAFT:\nThanks, I'd love the cruise!", spam) == (0.7, False)
    assert run("CATEGORY: Tech Support\nPRIORITY: normal", by_id("email_triage", "et-10"))[0] == 0.7
    assert et.score_triage("I am not sure what to do with this.", s).unscored


def test_labelled_field_tolerates_markdown() -> None:
    assert labelled_field("**Answer:** Paris\n", "ANSWER") == "Paris"
    assert labelled_field("- answer = 4\nANSWER: 5", "ANSWER") == "5"
    assert labelled_field("<think>ANSWER: 1</think>\nno label here", "ANSWER") is None
    assert labelled_field("DRAFT:\nHi,\nthanks\n", "DRAFT", multiline=True) == "Hi,\nthanks"


def test_use_case_sets_in_the_catalog() -> None:
    from pytest_jeval.suite.catalog import catalog_rows

    listed = {r["name"]: r for r in catalog_rows()}
    for name in SETS:
        assert listed[name]["category"] == "use-case" and listed[name]["samples"] == 30
        assert listed[name]["dataset"] == "(bundled)" and listed[name]["scorer"]
