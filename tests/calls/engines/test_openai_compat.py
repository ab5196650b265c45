"""``[run] http_client``: the openai client's aiohttp transport (the default where it is offered) and its httpx one.

Both transports must behave alike for everything the plugin reports: a reply, a stream,
a refused connection, a dropped connection, a timeout and an HTTP error each give the same
kind of outcome and message, over real HTTP to the test server.
"""

from __future__ import annotations

import asyncio
import json
import socket
import textwrap
from pathlib import Path
from typing import Any

import openai
import pytest
from pydantic import SecretStr

from pytest_jeval.calls.engines.openai_compat import aiohttp_available, chat, http_transport, make_client
from pytest_jeval.core.chat import ChatRequest, Endpoint, EndpointError, Reply
from pytest_jeval.suite.plan import EvalPlan
from pytest_jeval.testing.openai_server import FakeOpenAIServer, Fault, last_user_message
from tests.support.gsm import gsm_rows

TRANSPORTS = ["aiohttp", "httpx"]


def respond(body: dict[str, Any], attempt: int) -> Any:
    text = last_user_message(body)
    if "DROP" in text:
        return Fault("drop")
    if "HANG" in text:
        return Fault("hang", hang_seconds=30)
    if "FAIL" in text:
        return Fault("500")
    return f"echo {text}"


def ask(endpoint: Endpoint, text: str, *, stream: bool = False) -> Reply:
    async def run() -> Reply:
        client = make_client(endpoint)
        try:
            return await chat(client, endpoint, ChatRequest(model="test-model", stream=stream,
                                                            messages=({"role": "user", "content": text},)))
        finally:
            await client.close()

    return asyncio.run(run())


def endpoint(base_url: str, transport: str, **kw: Any) -> Endpoint:
    return Endpoint(base_url, SecretStr("k"), http_client=transport, **{"max_retries": 0, "timeout": 2.0, **kw})


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_auto_is_aiohttp_where_openai_offers_it() -> None:
    assert aiohttp_available()  # openai[aiohttp]: this project's pins have it
    assert http_transport("auto") == "aiohttp"
    assert http_transport("httpx") == "httpx"
    client = make_client(endpoint("http://127.0.0.1:9/v1", "auto"))
    assert isinstance(client._client, openai.DefaultAioHttpClient)
    plain = make_client(endpoint("http://127.0.0.1:9/v1", "httpx"))
    assert not isinstance(plain._client, openai.DefaultAioHttpClient)
    assert isinstance(plain._client, openai.DefaultAsyncHttpxClient)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_reply_and_stream(transport: str) -> None:
    with FakeOpenAIServer(respond) as server:
        reply = ask(endpoint(server.base_url, transport), "hello")
        streamed = ask(endpoint(server.base_url, transport), "there", stream=True)
    assert reply.text == "echo hello" and reply.attempts == 1
    assert streamed.text == "echo there"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_refused_connection_is_a_connection_error(transport: str) -> None:
    with pytest.raises(EndpointError, match=r"^connection error to http://127\.0\.0\.1:\d+/v1"):
        ask(endpoint(f"http://127.0.0.1:{dead_port()}/v1", transport), "hello")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_dropped_connection_is_a_connection_error_not_a_timeout(transport: str) -> None:
    # openai's aiohttp adapter maps every aiohttp connection error to ConnectTimeout; the plugin
    # turns a hang-up back into a connection error, so the record says what happened
    with FakeOpenAIServer(respond) as server:
        url = server.base_url
        with pytest.raises(EndpointError) as info:
            ask(endpoint(url, transport), "DROP")
        with pytest.raises(EndpointError) as streamed:
            ask(endpoint(url, transport), "DROP", stream=True)
    for exc in (info.value, streamed.value):
        assert str(exc).startswith(f"connection error to {url}"), str(exc)
        assert "timed out" not in str(exc)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_hang_is_a_timeout_and_500_an_http_error(transport: str) -> None:
    with FakeOpenAIServer(respond) as server:
        with pytest.raises(EndpointError, match=r"^timed out after 1s at "):
            ask(endpoint(server.base_url, transport, timeout=1.0), "HANG")
        with pytest.raises(EndpointError, match=r"^HTTP 500 from "):
            ask(endpoint(server.base_url, transport), "FAIL")


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_retries_recover_from_a_drop(transport: str) -> None:
    seen: list[int] = []

    def flaky(body: dict[str, Any], attempt: int) -> Any:
        seen.append(attempt)
        return Fault("drop") if attempt == 1 else "fine"

    with FakeOpenAIServer(flaky) as server:
        reply = ask(endpoint(server.base_url, transport, max_retries=2), "x")
    assert reply.text == "fine" and reply.attempts == 2 and seen == [1, 2]


def write_suite(pytester: pytest.Pytester, test_data: Path, base_url: str, http_client: str) -> Path:
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gsm_rows(test_data, 3)))
    suite = pytester.path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""\
        [run]
        output_dir = "out"
        cache = false
        http_client = "{http_client}"

        [[models]]
        name = "test-model"
        base_url = "{base_url}"
        api_key = "k"

        [[benchmarks]]
        name = "gsm8k"
        data_files = "gsm.jsonl"
        """))
    return suite


@pytest.mark.parametrize(("http_client", "expected"), [("httpx", "httpx"), ("aiohttp", "aiohttp"), ("auto", "aiohttp")])
def test_the_suite_key_reaches_the_client(pytester: pytest.Pytester, test_data: Path, http_client: str,
                                          expected: str) -> None:
    # both transports send the same headers (httpx builds the request), so the client is checked
    suite = write_suite(pytester, test_data, "http://127.0.0.1:9/v1", http_client)
    plan = EvalPlan.from_file(suite, invocation_dir=pytester.path)
    built = plan.endpoint_for(plan.models["test-model"])
    assert built.http_client == http_client
    client = make_client(built)
    assert isinstance(client._client, openai.DefaultAioHttpClient) is (expected == "aiohttp")
    assert type(client._client).__name__ == f"DeadlineClient[{expected}]"


def test_aiohttp_missing_is_a_usage_error_before_any_request(pytester: pytest.Pytester, test_data: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # aiohttp made unimportable: openai then offers no aiohttp transport
    (pytester.path / "sitecustomize.py").write_text("import sys\nsys.modules['aiohttp'] = None\n")
    monkeypatch.setenv("PYTHONPATH", str(pytester.path))
    with FakeOpenAIServer(lambda body, attempt: "Answer: 1") as server:
        suite = write_suite(pytester, test_data, server.base_url, "aiohttp")
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:randomly")
        assert server.requests == []
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(['*run.http_client: "aiohttp" needs openai*'])
