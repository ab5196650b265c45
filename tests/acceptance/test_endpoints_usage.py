"""Bad input is a clear usage error before any request; one request builder for prefetch and fixtures."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai  # noqa: F401  (loaded once: pytester's in-process runs drop the modules they import)
import pytest
from pydantic import SecretStr

from pytest_jeval.calls.client import ModelClient
from pytest_jeval.calls.settings import adapt, build_request, is_reasoning_model
from pytest_jeval.core.chat import Endpoint
from pytest_jeval.suite.config import SuiteError, parse_suite
from pytest_jeval.suite.plan import EvalPlan
from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.endpoints import ROWS, MiniProject, respond
from tests.support.holds import HoldUntilConcurrent


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[MiniProject]:
    with FakeOpenAIServer(respond) as server:
        yield MiniProject(pytester, server)


# -- value checks: the message names the key -------------------------------------------------

BAD_VALUES = [
    ("[defaults]\ntemperature = nan", "", "defaults.temperature: Input should be a finite number"),
    ("[defaults]\ntemperature = inf", "", "defaults.temperature: Input should be a finite number"),
    ("[defaults]\ntemperature = -0.5", "", "defaults.temperature: Input should be greater than or equal to 0"),
    ("", "temperature = nan", "models[0].temperature: Value error, temperature must be a finite number >= 0"),
    ("", "temperature = -1", "models[0].temperature: Value error, temperature must be a finite number >= 0"),
    ("", 'temperature = "hot"', 'models[0].temperature: Value error, temperature must be a number >= 0 or "omit"'),
    ("", 'token_param = "max_toks"', "models[0].token_param: Input should be 'max_tokens' or 'max_completion_tokens'"),
    ("[run]\nrequest_timeout = inf", "", "run.request_timeout: Input should be a finite number"),
    ("[run]\nrequest_timeout = 0", "", "run.request_timeout: Input should be greater than 0"),
    ("[run]\nseed = -1", "", "run.seed: Input should be greater than or equal to 0"),
    ("[judge]\ntemperature = nan", "", "judge.temperature: Value error, temperature must be a finite number >= 0"),
    ("[judge]\nmodel = \"  \"", "", "judge.model: Value error, model name is blank"),
]


@pytest.mark.parametrize("top, model_extra, message", BAD_VALUES, ids=[m.split(":")[0] + f"-{i}" for i, (_, _, m) in enumerate(BAD_VALUES)])
def test_bad_values_name_their_key(top: str, model_extra: str, message: str) -> None:
    text = f'{top}\n[[models]]\nname = "m"\n{model_extra}\n[[benchmarks]]\nname = "gsm8k"\n'
    with pytest.raises(SuiteError) as info:
        parse_suite(text, Path("suite.toml"))
    assert message in str(info.value)


@pytest.mark.parametrize("name, message", [
    ("   ", "model name is blank"),
    (" m", "model name ' m' has leading or trailing whitespace"),
    ("m\\t", "model name 'm\\t' has leading or trailing whitespace"),
])
def test_model_names_with_blank_edges_are_refused(name: str, message: str) -> None:
    with pytest.raises(SuiteError) as info:
        parse_suite(f'[[models]]\nname = "{name}"\n[[benchmarks]]\nname = "gsm8k"\n', Path("suite.toml"))
    assert f"models[0].name: Value error, {message}" in str(info.value)


def test_good_values_still_load() -> None:
    suite = parse_suite(textwrap.dedent('''
        [defaults]
        temperature = 0
        [run]
        request_timeout = 0.5
        seed = 0
        [[models]]
        name = "m"
        temperature = "omit"
        token_param = "max_completion_tokens"
        [[benchmarks]]
        name = "gsm8k"
        temperature = 1.5
    '''), Path("suite.toml"))
    assert suite.models[0].temperature == "omit" and suite.models[0].token_param == "max_completion_tokens"
    assert suite.benchmarks[0].temperature == 1.5 and suite.run.seed == 0


def test_a_bad_value_stops_the_run_before_any_request(project: MiniProject) -> None:
    suite = project.write(run_extra="seed = -3")
    result = project.pytester.runpytest("--jeval-config", str(suite))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: invalid suite *suite.toml:", "  run.seed: Input should be greater than or equal to 0 (got -3)"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert project.server.request_count == 0


def test_a_dataset_that_is_not_utf8_is_a_usage_error(project: MiniProject) -> None:
    suite = project.write()
    data = project.pytester.path / "mini.jsonl"
    good = data.read_bytes()
    data.write_bytes(good + b'{"id": "bad", "question": "caf\xe9?", "answer": "5"}\n')
    result = project.pytester.runpytest("--jeval-config", str(suite))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    offset = len(good) + len(b'{"id": "bad", "question": "caf')
    result.stderr.fnmatch_lines([f"ERROR: {data} is not UTF-8 text: byte 0xe9 at offset {offset} (line {len(ROWS) + 1})*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert project.server.request_count == 0


# -- reasoning models: the rule by name, and what the overrides do ----------------------------


@pytest.mark.parametrize("name, reasoning", [
    ("gpt-5-mini-2025-08-07", True), ("gpt-5", True), ("gpt-5.1", True), ("o1", True), ("o1-preview", True),
    ("o3-mini", True), ("o4-mini", True), ("openai/o3", True), ("GPT-5-nano", True),
    ("gpt-4o", False), ("gpt-50", False), ("o10-model", False), ("qwen3:8b", False), ("foo-o3", False),
])
def test_reasoning_families_by_name(name: str, reasoning: bool) -> None:
    assert is_reasoning_model(name) is reasoning


def test_adapt_and_build_request() -> None:
    plain = adapt("gpt-4o", temperature=0.2, max_tokens=100)
    assert plain.adapted == () and build_request(plain, "hi").params() == {
        "model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.2, "max_tokens": 100}
    reasoning = adapt("gpt-5-mini", temperature=0.0, max_tokens=100)
    request = build_request(reasoning, "hi", temperature=0.7, stop=["\n"])
    # stop is among what the OpenAI API refuses to reasoning models: left out
    assert request.params() == {"model": "gpt-5-mini", "messages": [{"role": "user", "content": "hi"}],
                                "max_completion_tokens": 100}
    assert request.sent() == {"max_completion_tokens": 100}
    assert adapt("gpt-5-mini", temperature=1.0, max_tokens=5).adapted == (
        "sent max_completion_tokens instead of max_tokens",
        "logprobs, top_p, stop, penalties and logit_bias left out where asked (the model refuses them)")
    # an explicit token_param knows the dialect: what the call asks for is sent (gpt-5.5 takes stop)
    knowing = adapt("gpt-5.5", temperature=1.0, max_tokens=5, token_param="max_completion_tokens")
    assert build_request(knowing, "hi", stop=["\n"], logprobs=True).sent() == {
        "max_completion_tokens": 5, "temperature": 1.0, "logprobs": True, "stop": ["\n"]}
    forced = adapt("o3", temperature=0.5, max_tokens=5, token_param="max_tokens", temperature_override=0.5)
    assert forced.adapted == (
        "sent max_tokens as the model entry says (the OpenAI API wants max_completion_tokens)",
        "temperature 0.5 sent as the model entry says (the OpenAI API accepts only 1)")
    assert build_request(forced, "x").params()["temperature"] == 0.5
    assert "max_tokens" in build_request(forced, "x").params()
    omitted = adapt("gpt-4o", temperature=0.5, max_tokens=5, temperature_override="omit")
    assert "temperature" not in build_request(omitted, "x", temperature=0.9).params()


# -- one request builder: prefetch and the model fixture agree --------------------------------


def _plan(project: MiniProject, **write: Any) -> EvalPlan:
    suite = project.write(**write)
    return EvalPlan.from_file(suite, invocation_dir=project.pytester.path)


@pytest.mark.parametrize("model", ["test-model", "gpt-5-mini"])
def test_prefetched_request_equals_the_fixture_request(project: MiniProject, model: str) -> None:
    plan = _plan(project, model=model, options='{"stop": ["\\n\\n"], "seed": 7}')
    samples, _ = plan.samples("mini")
    endpoint = Endpoint(base_url=project.server.base_url, api_key=SecretStr("x"))
    client = ModelClient(model, endpoint=endpoint, submit=lambda e, r: None,  # type: ignore[arg-type,return-value]
                         settings=plan.settings("mini", model))
    options = plan.benchmarks["mini"].benchmark.request_options
    for sample in samples:
        ahead = plan.sample_request("mini", model, sample)
        assert ahead is not None
        assert ahead == client.request(sample.input, **options)
        assert ahead.cache_key(endpoint) == client.request(sample.input, **options).cache_key(endpoint)
        sent = {"seed": 7} if model == "gpt-5-mini" else {"stop": ["\n\n"], "seed": 7}  # gpt-5 refuses stop
        assert dict(ahead.extra) == sent


def test_prefetch_sends_requests_with_stop_ahead(pytester: pytest.Pytester) -> None:
    # The server holds the first requests until all of them are in flight: that happens only when they
    # were sent ahead of time (items calling one by one would keep one in flight, and give up waiting).
    with FakeOpenAIServer(HoldUntilConcurrent(respond, len(ROWS)), latency=0.05) as server:
        project = MiniProject(pytester, server)
        suite = project.write(options='{"stop": ["\\n\\n"]}')
        result = pytester.runpytest("--jeval-config", str(suite))
        result.assert_outcomes(passed=len(ROWS))
        assert server.max_in_flight == len(ROWS)
        assert all(b["stop"] == ["\n\n"] for b in project.chat_bodies())
        assert "could not be built ahead" not in result.stdout.str()


def test_prefetch_failures_are_counted_reported_and_recorded(project: MiniProject) -> None:
    suite = project.write(questions=["RAISE", "RAISE"])
    result = project.pytester.runpytest("--jeval-config", str(suite))
    result.assert_outcomes(passed=len(ROWS), errors=2)
    result.stdout.fnmatch_lines([
        "jeval: 2 request(s) could not be built ahead of time (prefetch); each of those items built its own "
        "and recorded any error:",
        "  suite.toml::mini::test_mini[[]test-model/x1[]]: ValueError: this prompt cannot be built",
    ])
    records = project.records()
    assert "ValueError: this prompt cannot be built" in (records["x1"]["error"] or "")
    assert records["x2"]["error"] is not None and len(project.chat_bodies()) == len(ROWS)
