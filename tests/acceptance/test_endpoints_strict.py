"""Real endpoints as they answer: OpenAI reasoning models, whole-attempt timeouts, replies that hold no answer.

Every run goes over real HTTP to the test server in one of its strict modes; nothing
in the ``openai`` client is patched.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai
import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, reasoning_rejection
from tests.support.endpoints import MODES, ROWS, MiniProject, respond


@pytest.fixture
def strict(pytester: pytest.Pytester) -> Iterator[MiniProject]:
    """The mini project against a server that refuses what the OpenAI API refuses to reasoning models."""
    with FakeOpenAIServer(respond, openai_reasoning=True) as server:
        yield MiniProject(pytester, server)


# -- the test server answers as the OpenAI API does -----------------------------------------


def test_server_refuses_reasoning_parameters_like_the_openai_api() -> None:
    max_tokens = reasoning_rejection({"model": "gpt-5-mini", "max_tokens": 10, "temperature": 0.0})
    assert max_tokens == {"error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                   "Use 'max_completion_tokens' instead.",
        "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}
    temperature = reasoning_rejection({"model": "o3-mini", "max_completion_tokens": 10, "temperature": 0.0})
    assert temperature is not None and temperature["error"]["code"] == "unsupported_value"
    assert temperature["error"]["param"] == "temperature"
    assert temperature["error"]["message"] == ("Unsupported value: 'temperature' does not support 0.0 with this "
                                               "model. Only the default (1) value is supported.")
    assert reasoning_rejection({"model": "o4-mini", "max_completion_tokens": 10, "temperature": 1}) is None
    assert reasoning_rejection({"model": "gpt-4o", "max_tokens": 10, "temperature": 0.0}) is None


def test_server_reasoning_mode_answers_http_400(strict: MiniProject) -> None:
    client = openai.OpenAI(base_url=strict.server.base_url, api_key="x", max_retries=0)
    try:
        with pytest.raises(openai.BadRequestError) as info:
            client.chat.completions.create(model="gpt-5-mini", messages=[{"role": "user", "content": "hi"}],
                                           max_tokens=5)
        reply = client.chat.completions.create(model="gpt-5-mini", messages=[{"role": "user", "content": "hi"}],
                                               max_completion_tokens=5)
    finally:
        client.close()
    assert info.value.status_code == 400 and info.value.code == "unsupported_parameter"
    assert reply.choices[0].message.content == "I do not know."


# -- reasoning models: what is sent, said once, recorded -----------------------------------

LEFT_OUT = "logprobs, top_p, stop, penalties and logit_bias left out where asked (the model refuses them)"


def test_reasoning_model_and_default_judge_run_without_errors(strict: MiniProject) -> None:
    suite = strict.write(model="gpt-5-mini", judge=strict.judge_table())
    result = strict.pytester.runpytest("--jeval-config", str(suite))
    result.assert_outcomes(passed=len(ROWS))
    bodies = strict.chat_bodies()
    assert len(bodies) == 2 * len(ROWS)  # one model call and one judge call per sample, none refused
    assert all("max_tokens" not in b and "temperature" not in b and b["max_completion_tokens"] > 0 for b in bodies)
    assert {b["model"] for b in bodies} == {"gpt-5-mini", "gpt-5-mini-2025-08-07"}
    notes = [line for line in result.outlines if line.startswith("jeval: gpt-5-mini")]
    assert notes == [
        "jeval: gpt-5-mini: sent max_completion_tokens instead of max_tokens; temperature 0 omitted "
        f"(the model accepts only 1); {LEFT_OUT}",
        "jeval: gpt-5-mini-2025-08-07 (judge): sent max_completion_tokens instead of max_tokens; "
        f"temperature 0 omitted (the model accepts only 1); {LEFT_OUT}",
    ]
    records = strict.records("gpt-5-mini")
    assert {r["error"] for r in records.values()} == {None}
    assert {json.dumps(r["request"]) for r in records.values()} == {'{"max_completion_tokens": 2048}'}


def test_server_refuses_what_reasoning_models_do_not_take() -> None:
    for name, value in (("logprobs", True), ("top_p", 0.5), ("stop", ["\n"]), ("presence_penalty", 0.1)):
        body = {"model": "gpt-5-mini", "max_completion_tokens": 10, name: value}
        refused = reasoning_rejection(body)
        assert refused is not None and refused["error"]["param"] == name, name
        assert refused["error"]["message"] == f"Unsupported parameter: '{name}' is not supported with this model."
        assert reasoning_rejection({**body, "model": "gpt-4o-mini"}) is None


OPTIONS = '{"stop": ["\\n\\n"], "top_p": 0.5, "logprobs": True, "top_logprobs": 3, "seed": 7}'


def test_reasoning_model_is_not_sent_what_it_refuses(strict: MiniProject) -> None:
    suite = strict.write(model="gpt-5-mini", options=OPTIONS)
    result = strict.pytester.runpytest("--jeval-config", str(suite))
    result.assert_outcomes(passed=len(ROWS))
    bodies = strict.chat_bodies()
    assert bodies and all(b["seed"] == 7 and not {"stop", "top_p", "logprobs", "top_logprobs"} & set(b) for b in bodies)
    assert {json.dumps(r["request"]) for r in strict.records("gpt-5-mini").values()} == {
        '{"max_completion_tokens": 2048, "seed": 7}'}
    # the same benchmark to a model that takes them sends every option
    strict.server.reset_stats()
    suite = strict.write(model="test-model", options=OPTIONS)
    strict.pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=len(ROWS))
    assert all(b["stop"] == ["\n\n"] and b["top_p"] == 0.5 and b["logprobs"] is True and b["top_logprobs"] == 3
               for b in strict.chat_bodies())


def test_non_reasoning_model_is_sent_the_suite_settings(strict: MiniProject) -> None:
    suite = strict.write(model="test-model", head="[defaults]\ntemperature = 0.3\nmax_tokens = 64")
    result = strict.pytester.runpytest("--jeval-config", str(suite))
    result.assert_outcomes(passed=len(ROWS))
    assert all(b["temperature"] == 0.3 and b["max_tokens"] == 64 and "max_completion_tokens" not in b
               for b in strict.chat_bodies())
    assert not [line for line in result.outlines if "instead of max_tokens" in line or "omitted" in line]
    assert strict.records()["q1"]["request"] == {"temperature": 0.3, "max_tokens": 64}


def test_model_entry_overrides_the_adaptation(strict: MiniProject) -> None:
    # token_param = "max_tokens" is sent as asked: the strict server refuses it, so every item errors.
    suite = strict.write(model="o3-mini", model_extra='token_param = "max_tokens"')
    result = strict.pytester.runpytest("--jeval-config", str(suite))
    result.assert_outcomes(errors=len(ROWS))
    errors = {r["error"] for r in strict.records("o3-mini").values()}
    assert len(errors) == 1 and "HTTP 400" in errors.pop() and "'max_tokens' is not supported" in result.stdout.str()
    result.stdout.fnmatch_lines(["jeval: o3-mini: sent max_tokens as the model entry says (the OpenAI API wants "
                                 "max_completion_tokens); temperature 0 omitted (the model accepts only 1)"])
    # temperature = "omit" leaves the temperature out for any model; a number is sent even to o3-mini.
    strict.server.reset_stats()
    suite = strict.write(model="test-model", model_extra='temperature = "omit"\ntoken_param = "max_completion_tokens"')
    strict.pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=len(ROWS))
    assert all("temperature" not in b and "max_completion_tokens" in b for b in strict.chat_bodies())
    strict.server.reset_stats()
    suite = strict.write(model="o3-mini", model_extra="temperature = 1")
    strict.pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=len(ROWS))
    assert all(b["temperature"] == 1 and "max_tokens" not in b for b in strict.chat_bodies())


# -- replies that hold no answer are errors that keep their reason ---------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_replies_without_an_answer_are_recorded_as_errors(pytester: pytest.Pytester, stream: bool) -> None:
    with FakeOpenAIServer(respond) as server:
        project = MiniProject(pytester, server)
        questions = ["ERROR200", "NUMBER", "OBJECT", "NULL", "LENGTH"]
        suite = project.write(questions=questions, model_extra=f"stream = {str(stream).lower()}")
        result = pytester.runpytest("--jeval-config", str(suite))
        result.assert_outcomes(passed=len(ROWS), errors=len(questions))
        records = project.records()
        errors = {r["record_id"]: r["error"] for r in records.values() if r["error"] is not None}
        assert set(errors) == {"x1", "x2", "x3", "x4", "x5"}
        assert "The upstream provider is overloaded." in errors["x1"]
        assert "content is not text (int: 42" in errors["x2"]
        assert "content is not text (dict:" in errors["x3"]
        assert "no content (content null" in errors["x4"]
        assert "token limit (max_tokens = 2048)" in errors["x5"] and "finish_reason 'length'" in errors["x5"]
        assert all(records[i]["is_correct"] is None and records[i]["score"] is None for i in errors)
        assert not any("exception" in (r["scoring_metadata"] or {}) for r in records.values())

        # --jeval-resume retries exactly the errored samples; now they answer, and the summary has no errors.
        server.reset_stats()
        server.responder = lambda body, attempt: "5"
        resumed = pytester.runpytest("--jeval-config", str(suite), "--jeval-resume")
        resumed.assert_outcomes(passed=len(ROWS) + len(questions))
        assert len(project.chat_bodies()) == len(questions)
        assert {r["error"] for r in project.records().values()} == {None}


def test_a_reply_with_tool_calls_is_not_an_error(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(respond) as server:
        project = MiniProject(pytester, server)
        suite = project.write(questions=["TOOLS"])
        pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=len(ROWS), failed=1)
        record = project.records()["x1"]
        assert record["error"] is None and record["model_answer"] == "" and record["is_correct"] is False


# -- request_timeout bounds the whole attempt -----------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
@pytest.mark.parametrize("mode", ["TRICKLE", "ENDLESS"])
def test_request_timeout_bounds_the_whole_attempt(pytester: pytest.Pytester, mode: str, stream: bool) -> None:
    # TRICKLE sends a byte every 0.5 s (its reply would take over 100 s); ENDLESS never ends.
    assert mode in MODES
    with FakeOpenAIServer(respond) as server:
        project = MiniProject(pytester, server)
        suite = project.write(questions=[mode], timeout=1,
                              model_extra=f"stream = {str(stream).lower()}")
        result = pytester.runpytest("--jeval-config", str(suite), "-k", "x1")
        result.assert_outcomes(errors=1)
        error = project.records()["x1"]["error"]
        assert error is not None and error.startswith("timed out after 1s at http://127.0.0.1:")
        outcomes = [r["outcome"] for r in server.requests if r["path"].endswith("/chat/completions")]
        assert outcomes == ["cancelled"]  # the client gave up on the reply, it was not sent in full
