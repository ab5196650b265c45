"""A model that sends tool arguments nested 100,000 deep gets an error result it reads; the episode goes on.

Before, ``RecursionError`` escaped the arguments' parser: the episode ended as a harness error,
which drops the sample from accuracy's denominator and resends it on resume, so a model could
turn questions it would fail into errors.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable

import pytest

from pytest_jeval.core import jsonsafe
from pytest_jeval.report._trajectory import pretty_arguments
from pytest_jeval.results.jsonl import parse_jsonl
from pytest_jeval.results.reader import strict_json
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


def _refuse_in_loads(text: str) -> None:
    with pytest.raises(ValueError, match="nested deeper than 100 levels"):
        jsonsafe.loads(text)


def _refuse_in_result_lines(text: str) -> None:
    content = parse_jsonl(b'{"record_id": "a"}\n{"record_id": "b", "x": ' + text.encode() + b"}\n")
    assert list(content.records) == ["a"] and content.unreadable == 1


def _refuse_in_result_reader(text: str) -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        strict_json(text)


def _show_as_sent_in_report(text: str) -> None:
    assert pretty_arguments(text) == text


@pytest.mark.parametrize("refuse", [_refuse_in_loads, _refuse_in_result_lines, _refuse_in_result_reader,
                                    _show_as_sent_in_report])
def test_refusing_deep_text_never_runs_finalizers_at_the_recursion_limit(refuse: Callable[[str], None]) -> None:
    """The CI failure: a finalizer the garbage collector ran while the parser sat at the recursion limit.

    Each reader of text a model or a file controls (tool arguments, result lines, the result
    reader, the HTML report's arguments) measures depth first.

    Garbage with finalizers is planted, and the collector is set to run after N allocations, for
    N around the recursion limit. A parser that recurses into the deep text (the old ``loads``)
    runs the finalizers some 1,000 frames down, where a 30-frame call fails; ``loads`` that
    measures depth before parsing never gets there.
    """
    failed: list[int] = []

    def descend(n: int) -> int:
        return 0 if n == 0 else descend(n - 1)

    class Finalized:
        def __init__(self) -> None:
            self.cycle = self  # collected by the cycle collector, not by reference counts

        def __del__(self) -> None:
            try:
                descend(30)
            except RecursionError:
                failed.append(1)

    threshold = gc.get_threshold()
    try:
        gc.collect()
        for after in range(800, 1300, 20):
            gc.collect(0)  # the youngest generation only: a full collection of pytest's heap is slow
            gc.disable()
            planted = [Finalized() for _ in range(20)]
            del planted
            gc.set_threshold(after)
            gc.enable()
            for text in (DEEP, DEEP_OBJECT, "[" * 100_000):
                refuse(text)
            gc.collect(0)
    finally:
        gc.set_threshold(*threshold)
        gc.enable()
    assert failed == []


@pytest.mark.parametrize("text", [
    '{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}',
    '["\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\\\"]',
    "[" * 50 + ", ".join(["{}"] * 300) + "]" * 50,
])
def test_brackets_inside_strings_and_wide_text_are_not_depth(text: str) -> None:
    assert jsonsafe.loads(text) == json.loads(text)
    assert jsonsafe.loads(text.encode("utf-16")) == json.loads(text)


def test_depth_counts_what_the_parser_would_reach() -> None:
    assert jsonsafe.deepest('{"a": [1, {"b": "}}]]"}], "c": {}}') == 3
    assert jsonsafe.deepest("[" * 101) == 101  # unclosed: the parser would still descend
    with pytest.raises(ValueError, match="nested deeper"):
        jsonsafe.loads(b"[" * 101)
