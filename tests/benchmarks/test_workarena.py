"""workarena: the service desk's list query, the checks on its state, and a wrong final state scoring 0."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_jeval.benchmarks.workarena.apps.desk import build_query, new_state, parse_query
from pytest_jeval.benchmarks.workarena.bench_workarena import BENCHMARK, environment, score_episode, to_sample
from pytest_jeval.benchmarks.workarena.validate import validate
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.core.chat import Reply
from pytest_jeval.core.episode import Episode
from tests.support.web import require_browser

TASKS = Path(__file__).resolve().parents[2] / "pytest_jeval" / "benchmarks" / "workarena" / "data" / "tasks.jsonl"


def test_encoded_queries_as_servicenow_writes_them() -> None:
    assert parse_query("category=network^state=In Progress") == (
        "AND", [("category", "=", "network"), ("state", "=", "In Progress")], [])
    assert parse_query("priority=1^ORpriority=2^ORDERBYDESCnumber") == (
        "OR", [("priority", "=", "1"), ("priority", "=", "2")], [("number", "desc")])
    assert parse_query("ORDERBYpriority^ORDERBYDESCnumber") == ("AND", [], [("priority", "asc"), ("number", "desc")])
    assert build_query("OR", [("a", "LIKE", "x"), ("b", "!=", "y")], [("a", "asc")]) == "aLIKEx^ORb!=y^ORDERBYa"


def test_checks_query_the_state_and_the_final_page() -> None:
    state = new_state()
    db = state.db
    specs = [{"type": "list_sort", "table": "problem", "sort": [["priority", "asc"], ["number", "desc"]]}]
    assert validate(specs, state, "http://d/problem_list.do?sysparm_query=ORDERBYpriority%5EORDERBYDESCnumber", "")[0]
    assert not validate(specs, state, "http://d/problem_list.do?sysparm_query=ORDERBYpriority", "")[0]
    assert not validate(specs, state, "http://d/incident_list.do?sysparm_query=ORDERBYpriority%5EORDERBYDESCnumber", "")[0]
    created = [{"type": "record_created", "table": "incident", "fields": {"short_description": "X", "priority": "2 - High"}}]
    assert not validate(created, state, "", "")[0]
    db.execute("INSERT INTO incident (number, short_description, priority) VALUES ('INC9', 'X', '2 - High')")
    assert validate(created, state, "", "")[0]
    unchanged = [{"type": "unchanged", "table": "incident", "except": ["INC0010003"]}]
    assert validate(unchanged, state, "", "")[0]
    db.execute("UPDATE incident SET state = 'Closed' WHERE number = 'INC0010004'")
    ok, results = validate(unchanged, state, "", "")
    assert not ok and "INC0010004" in results[0]["why"]


def test_a_wrong_final_state_scores_zero() -> None:
    """Ordering the laptop with the wrong memory fails the catalog task, on the real desk through the browser."""
    require_browser()
    ctx = LoadContext(benchmark="workarena", subset=None, seed=0, data_dir=None)
    rows = [json.loads(line) for line in TASKS.read_text().splitlines()]
    assert len(rows) == BENCHMARK.sample_count
    sample = to_sample(next(r for r in rows if r["id"] == "order-laptop"), 0, ctx)
    env = environment(sample, Path("/nonexistent"))
    try:
        b = env.browser
        assert b is not None
        b.service.call(lambda: b.click('role=link[name="Standard Laptop"]'), 60)
        b.service.call(lambda: b.select("#memory", "32 GB"), 60)
        b.service.call(lambda: b.select("#quantity", "2"), 60)
        b.service.call(lambda: b.click('role=button[name="Order Now"]'), 60)
        result = score_episode(sample, Episode(replies=[Reply(text="Done.", model="m")], state=env))
        assert result.correct is False
        assert env.export_state()["desk"]["sc_req_item"][0]["options"] == '{"memory": "32 GB"}'
    finally:
        env.close()


def test_parallel_episodes_start_clean_and_do_not_see_each_other() -> None:
    require_browser()
    ctx = LoadContext(benchmark="workarena", subset=None, seed=0, data_dir=None)
    row = next(json.loads(line) for line in TASKS.read_text().splitlines() if '"create-incident"' in line)
    sample = to_sample(row, 0, ctx)
    a, b = environment(sample, Path("/x")), environment(sample, Path("/x"))
    try:
        assert a.apps["desk"].base_url != b.apps["desk"].base_url
        ab = a.browser
        assert ab is not None
        ab.service.call(lambda: ab.navigate(a.sites["DESK"] + "/incident.do?sys_id=-1"), 60)
        ab.service.call(lambda: ab.type("#short_description", "Only in A", False), 60)
        ab.service.call(lambda: ab.click('role=button[name="Submit"]'), 60)
        assert [r["short_description"] for r in a.export_state()["desk"]["incident"]][-1] == "Only in A"
        assert "Only in A" not in json.dumps(b.export_state())
        bb = b.browser
        assert bb is not None
        with __import__("pytest").raises(Exception, match="outside the origins"):  # B's browser cannot reach A's desk
            bb.service.call(lambda: bb.navigate(a.sites["DESK"] + "/incident_list.do"), 60)
    finally:
        a.close()
        b.close()
    fresh = environment(sample, Path("/x"))  # a new episode starts from the seed again
    try:
        assert "Only in A" not in json.dumps(fresh.export_state())
    finally:
        fresh.close()


def test_rescore_keeps_the_stored_verdict() -> None:
    from pytest_jeval.core.sample import Sample
    from pytest_jeval.scoring.registry import call_scorer

    sample = Sample(id="t", input="", target=None)
    for stored in (True, False):
        record = {"record_id": "t", "is_correct": stored, "score": float(stored), "expected": None,
                  "extracted": "", "scoring_metadata": {"checks": ["a"]}}
        # the application's state after the episode cannot be rebuilt from a record: its verdict stands
        assert call_scorer("workarena", record, sample=sample).correct is stored
