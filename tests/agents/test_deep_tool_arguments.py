"""A model that sends tool arguments nested 100,000 deep gets an error result it reads; the episode goes on.

Before, ``RecursionError`` escaped the arguments' parser: the episode ended as a harness error,
which drops the sample from accuracy's denominator and resends it on resume, so a model could
turn questions it would fail into errors.
"""

from __future__ import annotations

import json

import pytest

from pytest_jeval.core import jsonsafe
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.agent import AgentProject

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a": ' * 100_000 + "1" + "}" * 100_000


def test_deep_arguments_are_an_error_result_the_model_reads(pytester: pytest.Pytester) -> None:
    scripts = {"[deep]": [tool_answer(ToolCallSpec("add", '{"a": ' + DEEP + ', "b": 1}')),
                          tool_answer(ToolCallSpec("add", DEEP_OBJECT)), "3"]}
    with FakeOpenAIServer(script_responder(scripts, default="no script")) as server:
        project = AgentProject(pytester, server)
        project.write([{"id": "deep", "q": "[deep] please", "a": "3"}])
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        bodies = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    result.assert_outcomes(passed=1)
    record = project.records()["deep"]
    assert record["error"] is None and record["is_correct"] is True and record["agent"]["stop_reason"] == "final"
    tool_messages = [m for m in bodies[-1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2
    for message in tool_messages:  # the model read why its calls failed
        assert message["content"].startswith("Error: the arguments of add are not valid JSON (JSON nested deeper")
    calls = project.trajectories()["deep"]["tool_calls"]
    assert [c["parsed"] for c in calls] == [None, None] and all("nested deeper" in c["error"] for c in calls)


def test_bounded_json_refuses_depth_as_a_value_error() -> None:
    for text in (DEEP, DEEP_OBJECT, "[" * 101 + "]" * 101):
        with pytest.raises(ValueError, match="nested deeper than 100 levels"):
            jsonsafe.loads(text)
    assert jsonsafe.loads("[" * 100 + "]" * 100) is not None
    assert jsonsafe.loads(json.dumps({"a": [{"b": 1}]})) == {"a": [{"b": 1}]}
