"""The ``react`` agent: strict parsing of text steps, corrective observations, and a toolcall15 scenario solved
by a model that writes text actions only; ``simple``: one call without tools."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents.named.react import Action, Final, Malformed, parse_step, text_conversation
from pytest_jeval.agents.tools import builtin_tools
from pytest_jeval.testing.openai_server import FakeOpenAIServer, script_responder


@pytest.mark.parametrize(("text", "step"), [
    ('Thought: look it up\nAction: get_weather\nAction Input: {"city": "Lisbon"}',
     Action("get_weather", {"city": "Lisbon"})),
    ('Action: get_weather\nAction Input: ```json\n{"city": "Lisbon"}\n```', Action("get_weather", {"city": "Lisbon"})),
    ('Thought: t\nAction: f\nAction Input: {}\nObservation: made up\nFinal Answer: 3', Action("f", {})),
    ("Thought: done\nFinal Answer: It is 21 °C\nand sunny.", Final("It is 21 °C\nand sunny.")),
])
def test_well_formed_steps(text: str, step: object) -> None:
    assert parse_step(text) == step


@pytest.mark.parametrize(("text", "error"), [
    ("It is sunny.", "no 'Action:' and no 'Final Answer:' found"),
    ('Action: f\nAction Input: {}\nFinal Answer: x', "both 'Action:' and 'Final Answer:'"),
    ("Action: f", "'Action: f' has no 'Action Input:' line"),
    ("Action: f\nAction Input: {city: Lisbon}", "the Action Input is not valid JSON"),
    ('Action: f\nAction Input: ["Lisbon"]', "must be one JSON object"),
    ('Action: f\nAction Input: {}\nAction: g\nAction Input: {}', "more than one 'Action:'"),
    ('Action Input: {"a": 1}', "'Action Input:' without an 'Action:' line"),
])
def test_malformed_steps_say_what_is_wrong(text: str, error: str) -> None:
    step = parse_step(text)
    assert isinstance(step, Malformed) and error in step.error


def test_the_text_conversation_describes_the_tools_and_turns_results_into_observations() -> None:
    calc = builtin_tools(["calculator"])
    messages = [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "react-1", "type": "function",
         "function": {"name": "calculator", "arguments": "{}"}}], "react": {"text": "Action: calculator\nAction Input: {}"}},
        {"role": "tool", "tool_call_id": "react-1", "content": "Error: missing expression"},
        {"role": "assistant", "content": "", "react": {"text": "4", "error": "no 'Action:' and no 'Final Answer:' found"}},
    ]
    out = text_conversation(messages, calc)
    assert out[0]["role"] == "system" and out[0]["content"].startswith("Be brief.\n\nYou have no native function")
    assert "- calculator: " in out[0]["content"] and '"expression"' in out[0]["content"]
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert out[3]["content"] == "Observation: Error: missing expression"
    assert out[5]["content"].startswith("Observation: Invalid step: no 'Action:' and no 'Final Answer:' found. "
                                        "Write one step:")
    assert all("tool_calls" not in m for m in out)


PORTFOLIO = "I own 40 shares of Microsoft"
STEPS = [
    'Thought: I need the price.\nAction: get_stock_price\nAction Input: {"symbol": "MSFT"}',
    "Thought: now the rate.\nAction: get_exchange_rate\nAction Input: {base: USD, quote: EUR}",
    'Thought: with valid JSON.\nAction: get_exchange_rate\nAction Input: {"base": "USD", "quote": "EUR"}',
    "Thought: 40 x 412.5 x 0.92.\nFinal Answer: Your 40 Microsoft shares are worth about 15,180 EUR.",
]


def run_toolcall15(pytester: pytest.Pytester, agent: str, steps: list[str]) -> tuple[Any, dict[str, Any], Any]:
    with FakeOpenAIServer(script_responder({PORTFOLIO: steps})) as server:
        (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            trajectories = "inline"

            [[models]]
            name = "test-model"
            base_url = "{server.base_url}"

            [[benchmarks]]
            name = "toolcall15"
            agent = "{agent}"
            record_ids = ["ms-02-portfolio"]
        """))
        result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        bodies = [r["body"] for r in server.requests if r["body"] is not None]
    record = json.loads(Path(pytester.path / "out" / "toolcall15_test-model.jsonl").read_text().splitlines()[0])
    return result, record, bodies


def test_react_solves_a_multi_step_scenario_from_text_actions(pytester: pytest.Pytester) -> None:
    result, record, bodies = run_toolcall15(pytester, "react", STEPS)
    assert result.ret == 0, result.stdout.str()
    assert record["is_correct"] is True and record["agent"]["name"] == "react"
    assert record["agent"]["turns"] == 4 and record["model_answer"].endswith("15,180 EUR.")
    assert all("tools" not in b for b in bodies)  # text mode: no native tools in any request
    malformed = bodies[2]["messages"][-1]["content"]
    assert malformed.startswith("Observation: Invalid step: the Action Input is not valid JSON")
    assert bodies[1]["messages"][-1]["content"].startswith('Observation: {"symbol": "MSFT", "price": 412.5')
    calls = [(c["name"], c["error"]) for c in record["trajectory"]["tool_calls"]]
    assert calls == [("get_stock_price", None), ("get_exchange_rate", None)]


def test_simple_makes_one_call_without_tools(pytester: pytest.Pytester) -> None:
    _, record, bodies = run_toolcall15(pytester, "simple", ["About 15,180 EUR."])
    assert len(bodies) == 1 and "tools" not in bodies[0]
    assert record["agent"]["name"] == "simple" and record["model_answer"] == "About 15,180 EUR."
    assert record["is_correct"] is False  # it called no tool: ToolCall-15 wants the price and the rate fetched


def test_agents_that_cannot_make_native_calls_refuse_bfcl(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text(textwrap.dedent("""
        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"

        [[benchmarks]]
        name = "bfcl"
        agent = "react"
    """))
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'bfcl' cannot run with the 'react' agent: its answer is the model's native "
                                 "tool calls*; the agents it runs with are: *orchestrator*"])
