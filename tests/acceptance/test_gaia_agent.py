"""GAIA with ``backend = "agent"``: the attachment goes into the workspace, the model works on it with tools.

The data is tests/data/gaia_agent (GAIA's schema, questions over generated CSV, JSON and text
files with exact answers, written for these tests). The end-to-end run uses a scripted model
that calls the real built-in tools (``python`` in the sandbox, ``file_read``, ``calculator``)
and answers from what they returned, so a right answer needs the file in the workspace.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks import bench_gaia
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import load_samples
from pytest_jeval.testing.openai_server import (
    Answer,
    FakeOpenAIServer,
    ToolCallSpec,
    assistant_turns,
    first_user_message,
    tool_answer,
)
from tests.support.bench import MODEL, Project, Router
from tests.support.gsm import outcome_ids

DATA = Path(__file__).resolve().parents[1] / "data" / "gaia_agent"
META = DATA / "2023" / "validation" / "metadata.jsonl"
CSV_TASK = "c1a7e0b2-5d7e-4c61-9b8e-0a1f3d2c4b01"
NORTH_TASK = "c1a7e0b2-5d7e-4c61-9b8e-0a1f3d2c4b11"
JSON_TASK = "d2b8f1c3-6e8f-4d72-8c9f-1b2e4e3d5c02"
LOG_TASK = "e3c9a2d4-7f9a-4e83-9da0-2c3f5f4e6d03"
PLAIN_TASK = "f4d0b3e5-8a0b-4f94-8eb1-3d4a6a5f7e04"


@pytest.fixture(scope="module")
def by_id() -> dict[str, Sample]:
    samples, skipped = load_samples(bench_gaia.BENCHMARK, files=[META])
    assert skipped == 0
    return {s.id: s for s in samples}


def test_the_agent_gets_the_attachment_in_its_workspace_not_in_the_prompt(by_id: dict[str, Sample]) -> None:
    log = by_id[LOG_TASK]
    assert bench_gaia.agent_attachments(log) == [DATA / "2023" / "validation" / f"{LOG_TASK}.txt"]
    prompt = bench_gaia.agent_prompt(log)
    assert f"in your workspace as {LOG_TASK}.txt" in prompt
    assert "MARGOT-KESTREL" not in prompt and "FINAL ANSWER" in prompt  # named, not inlined
    assert "MARGOT-KESTREL" in bench_gaia.prompt(log)  # the answer-only prompt still inlines it
    plain = by_id[PLAIN_TASK]
    assert bench_gaia.agent_attachments(plain) == []
    assert bench_gaia.agent_prompt(plain) == bench_gaia.prompt(plain)
    spec = bench_gaia.BENCHMARK.agent
    assert spec is not None and tuple(spec.default_tools) == ("calculator", "file_read", "python")
    assert spec.prompt is bench_gaia.agent_prompt and bench_gaia.BENCHMARK.backends == ("direct", "agent")


def test_a_missing_attachment_is_said_to_be_missing(tmp_path: Path) -> None:
    row = json.loads(META.read_text().splitlines()[0])
    (tmp_path / "metadata.jsonl").write_text(json.dumps({**row, "file_name": "gone.csv", "file_path": ""}) + "\n")
    samples, _ = load_samples(bench_gaia.BENCHMARK, files=[tmp_path / "metadata.jsonl"])
    assert bench_gaia.agent_attachments(samples[0]) == []
    assert "gone.csv, which is not available" in bench_gaia.agent_prompt(samples[0])


# -- end to end through the plugin --------------------------------------------------------

def _program(name: str) -> str:
    """The Python the scripted model writes: the sum of the amount column (for the north question too,
    which wants only one region's: a wrong answer)."""
    rows = f"csv.DictReader(open({name!r}, newline=''))"
    return f"import csv\nprint(sum(int(r['amount']) for r in {rows}))\n"


def _last_tool_result(body: dict[str, Any]) -> str:
    return next(str(m["content"]) for m in reversed(body["messages"]) if m.get("role") == "tool")


def tool_using_model(body: dict[str, Any], attempt: int) -> Answer | str:
    """Turn 1: call a tool on the workspace file (or the calculator); turn 2: answer from its result."""
    question = first_user_message(body)
    found = re.search(r"in your workspace as (\S+)\. ", question)
    name = found.group(1) if found else ""
    if assistant_turns(body) == 0:
        if "CSV" in question:
            return tool_answer(ToolCallSpec("python", {"code": _program(name)}))
        if name:
            return tool_answer(ToolCallSpec("file_read", {"path": name}))
        return tool_answer(ToolCallSpec("calculator", {"expression": "17 * 23 + 5"}))
    result = _last_tool_result(body)
    if "CSV" in question:
        answer = result.split("stdout:\n", 1)[1].split("\n", 1)[0]
    elif "inventory" in question:
        answer = max(json.loads(result)["items"], key=lambda item: item["stock"])["name"]
    elif "ERROR" in question:
        answer = str(sum(1 for line in result.splitlines() if " ERROR " in line))
    else:
        answer = result
    return f"I used a tool.\nFINAL ANSWER: {answer}"


def test_agentic_gaia_runs_end_to_end_through_the_plugin(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(tool_using_model, models=(MODEL,)) as server:
        project = Project(pytester, server, Router(lambda _: ""))
        suite = project.suite("gaia", str(META), judge=False, extra='backend = "agent"')
        result = pytester.runpytest("--jeval-config", str(suite), "-rA")
        result.assert_outcomes(passed=4, failed=1)
        assert outcome_ids(result, "failed") == {NORTH_TASK}  # the program summed every region
        chats = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 10  # two turns per task
    assert all([t["function"]["name"] for t in b["tools"]] == ["calculator", "file_read", "python"] for b in chats)
    assert not any("MARGOT-KESTREL" in first_user_message(b) for b in chats)
    records = project.records("gaia")
    assert records[CSV_TASK]["is_correct"] is True and records[CSV_TASK]["extracted"] == "1287"
    assert records[NORTH_TASK]["extracted"] == "1287" and records[NORTH_TASK]["expected"] == "730"
    for record in records.values():
        assert record["backend"] == "agent" and record["turn_count"] == 2 and record["tool_calls"] == 1
        assert record["agent"]["stop_reason"] == "final" and record["agent"]["tool_errors"] == 0
    sidecar = pytester.path / "out" / f"gaia_{MODEL}.jsonl.trajectories.jsonl"
    trajectories = {t["record_id"]: t for t in map(json.loads, sidecar.read_text().splitlines())}
    (log_call,) = trajectories[LOG_TASK]["tool_calls"]
    assert log_call["name"] == "file_read" and "MARGOT-KESTREL" in log_call["result"]
    (csv_call,) = trajectories[CSV_TASK]["tool_calls"]
    assert csv_call["name"] == "python" and csv_call["result"].startswith("exit status: 0")
    assert project.summary("gaia")["per_subject"]["level_2"]["accuracy"] == 0.5
