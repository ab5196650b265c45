"""lifelong-agent through the plugin: the oracle scores 1 and nop 0 on every runnable task; a scripted model's
different but equivalent SQL passes on SQLite; an OS task is judged by its check in the sandbox; refused
tasks (SQLite cannot run them, they need root, a knowledge graph) are skipped with their reason."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "lifelong_agent"


def run(pytester: pytest.Pytester, environment: str, key: str, base_url: str = "http://127.0.0.1:9/v1"
        ) -> tuple[pytest.RunResult, dict[str, dict[str, Any]]]:
    (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        cache = false

        [[models]]
        name = "m"
        base_url = "{base_url}"

        [[benchmarks]]
        name = "lifelong-agent"
        data_files = "{DATA / environment / 'entry_dict.json'}"
        {key}

        [benchmarks.options]
        environment = "{environment}"
    """))
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-rs")
    path = pytester.path / "out" / "lifelong-agent_m.jsonl"
    records = {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())} if path.exists() else {}
    return result, records


@pytest.mark.slow
@pytest.mark.parametrize("environment", ["db_bench", "os_interaction"])
def test_oracle_scores_one_and_nop_zero_on_every_runnable_task(pytester: pytest.Pytester, environment: str) -> None:
    result, records = run(pytester, environment, 'agent = "oracle"')
    assert result.ret == 0, result.stdout.str()
    runnable = {"db_bench": {"db_bench-0", "db_bench-1", "db_bench-2", "db_bench-5"},
                "os_interaction": {"os_interaction-0", "os_interaction-1"}}[environment]
    assert set(records) == runnable and all(r["is_correct"] is True for r in records.values())
    assert all(r["scoring_metadata"]["deviations"] for r in records.values())  # every record says how it differs
    (pytester.path / "out" / "lifelong-agent_m.jsonl").unlink()
    result, records = run(pytester, environment, 'agent = "nop"')
    assert set(records) == runnable and all(r["is_correct"] is False for r in records.values())
    summary = json.loads((pytester.path / "out" / "lifelong-agent_m.jsonl.summary.json").read_text())
    assert summary["do_nothing_passes"] == 0 and summary["sequence"]["accuracy"] == 0.0


def test_refused_tasks_are_skipped_with_their_reason(pytester: pytest.Pytester) -> None:
    result, _ = run(pytester, "db_bench", 'agent = "oracle"')
    result.stdout.fnmatch_lines(["*SKIPPED*refused: SQLite cannot run the gold SQL*SUBSTRING_INDEX*",
                                 "*SKIPPED*refused: SQLite's rows for the gold SQL differ from MySQL's stored answer*"])
    (pytester.path / "out" / "lifelong-agent_m.jsonl").unlink()
    result, records = run(pytester, "knowledge_graph", 'agent = "oracle"')
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*SKIPPED*refused: knowledge-graph tasks query a live SPARQL endpoint*"])
    assert not records


def test_equivalent_sql_passes_and_the_sequence_remembers(pytester: pytest.Pytester,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    sql = lambda text: tool_answer(ToolCallSpec("execute_sql", {"sql": text}))  # noqa: E731
    scripts = {
        # the same rows by another query
        "List the names of the employees in the IT department": [
            sql("SELECT name FROM employees WHERE salary > 4400 AND department NOT IN ('HR', 'Sales') ORDER BY name"),
            "These are the rows.\nFinal Answer: [('Ann',), ('Cid',)]"],
        # the same table by another statement
        "Raise Bob's salary by 100.": [sql("UPDATE employees SET salary = 4100.5 WHERE id = 2"), "Final Answer: done"],
        "How many employees does each department have?": ["Final Answer: [('HR', 1), ('IT', 1), ('Sales', 1)]"],
        "Remove the employees of the Sales department.": [sql("DELETE FROM employees WHERE id = 4"),
                                                         "Final Answer: done"],
    }
    with FakeOpenAIServer(script_responder(scripts)) as server:
        result, records = run(pytester, "db_bench", "", base_url=server.base_url)
    result.assert_outcomes(passed=3, failed=1, skipped=2)
    assert {k for k, r in records.items() if r["is_correct"]} == {"db_bench-0", "db_bench-1", "db_bench-5"}
    # episode mode, always on: the last episode remembered the last three correct ones before it
    memory = records["db_bench-5"]["agent"]["memory"]
    assert memory["fed_by"] == ["db_bench-0", "db_bench-1"] and memory["position"] == 5
    last = [r for r in server.requests if r["path"].endswith("/chat/completions")][-1]["body"]
    assert "Raise Bob's salary by 100." in last["messages"][0]["content"]  # shown before the task
    summary = json.loads((pytester.path / "out" / "lifelong-agent_m.jsonl.summary.json").read_text())
    assert summary["sequence"]["episodes"] == 4 and summary["sequence"]["accuracy"] == 0.75
    # jeval rescore: the queries are checked again from their records, the changes keep their verdicts
    from pytest_jeval.cli import main

    capsys.readouterr()
    assert main(["rescore", str(pytester.path / "out" / "lifelong-agent_m.jsonl"), "-o",
                 str(pytester.path / "rescored.jsonl")]) == 0
    assert "0 verdicts changed" in capsys.readouterr().out


def test_an_os_task_is_judged_by_its_check_in_the_sandbox(pytester: pytest.Pytester) -> None:
    scripts = {
        "Write the number of lines": [
            tool_answer(ToolCallSpec("bash", {"command": "grep -c '' /tmp/report/data.txt > /tmp/report/count.txt"})),
            "Done."],
        "Make /tmp/work/run.sh executable": ["It is done."],  # it did nothing: the check fails
    }
    with FakeOpenAIServer(script_responder(scripts)) as server:
        result, records = run(pytester, "os_interaction", "", base_url=server.base_url)
    result.assert_outcomes(passed=1, failed=1, skipped=1)
    assert records["os_interaction-0"]["is_correct"] is True
    assert records["os_interaction-1"]["scoring_metadata"]["check_exit_status"] == 1
    assert "Path" not in json.dumps(records)  # the host's paths never reach a record
