"""The recording proxy, the command backend's checks and the JARVIS_BACKEND_* precedence, in process."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pydantic import SecretStr

from pytest_jeval.agents.external import episode as ext_runner
from pytest_jeval.agents.external.command import CommandAgent
from pytest_jeval.agents.external.episode import Capture
from pytest_jeval.agents.external.proxy import RecordingProxy
from pytest_jeval.agents.loop import Limits
from pytest_jeval.core.chat import ChatRequest, EndpointError, Reply, ToolCall
from pytest_jeval.suite.config import SuiteError
from pytest_jeval.suite.plan import EvalPlan
from tests.support.external import BENCH, ROWS

CALL = Reply(text="", model="m", prompt_tokens=7, completion_tokens=3, finish_reason="tool_calls",
             tool_calls=(ToolCall(id="c1", name="calculator", arguments='{"expression":"6*7"}'),))
ANSWER = Reply(text="42", model="m", prompt_tokens=9, completion_tokens=1, finish_reason="stop")


def _request(messages: list[dict[str, Any]], options: dict[str, Any]) -> ChatRequest:
    tools = options.pop("tools", None)
    limit = options.pop("max_tokens", 2048)
    return ChatRequest(model="m", messages=messages, max_tokens=limit, tools=tools,
                       extra=tuple(sorted(options.items())))


def with_proxy(test: Callable[[RecordingProxy, aiohttp.ClientSession, list[ChatRequest]], Awaitable[None]], *,
               replies: list[Reply | Exception], limits: Limits | None = None) -> RecordingProxy:
    """Run ``test`` against a started proxy whose model answers ``replies`` in turn."""
    sent: list[ChatRequest] = []

    async def forward(request: ChatRequest) -> Reply:
        sent.append(request)
        reply = replies[min(len(sent), len(replies)) - 1]
        if isinstance(reply, Exception):
            raise reply
        return reply

    proxy = RecordingProxy(model="m", limits=limits or Limits(), forward=forward, build=_request)

    async def main() -> None:
        await proxy.start()
        try:
            headers = {"Authorization": f"Bearer {proxy.key}"}
            async with aiohttp.ClientSession(base_url=proxy.base_url.removesuffix("v1"), headers=headers) as s:
                await test(proxy, s, sent)
        finally:
            await proxy.stop()

    asyncio.run(main())
    return proxy


BODY = {"model": "whatever", "messages": [{"role": "user", "content": "6*7?"}], "temperature": 0.3,
        "max_tokens": 99, "user": "agent-x", "metadata": {"a": 1},
        "tools": [{"type": "function", "function": {"name": "calculator", "parameters": {"type": "object"}}}]}


def test_the_proxy_demands_the_episode_key_and_forwards_nothing_without_it() -> None:
    async def test(proxy: RecordingProxy, s: aiohttp.ClientSession, sent: list[ChatRequest]) -> None:
        for key in ("", "Bearer wrong", f"Bearer {proxy.key}x"):
            async with s.post("v1/chat/completions", json=BODY, headers={"Authorization": key}) as r:
                assert r.status == 401 and (await r.json())["error"]["code"] == "invalid_api_key"
        async with s.get("v1/models") as r:
            assert [m["id"] for m in (await r.json())["data"]] == ["m"]
        async with s.post("v1/chat/completions", data=b"{not json") as r:
            assert r.status == 400 and (await r.json())["error"]["code"] == "invalid_request"
        assert sent == []

    proxy = with_proxy(test, replies=[ANSWER])
    assert proxy.episode.turns == 0 and [e["status"] for e in proxy.exchanges] == [401, 401, 401, 400]


def test_a_turn_is_rebuilt_forwarded_recorded_and_answered_as_openai_json() -> None:
    async def test(proxy: RecordingProxy, s: aiohttp.ClientSession, sent: list[ChatRequest]) -> None:
        async with s.post("v1/chat/completions", json=BODY) as r:
            data = await r.json()
        assert data["model"] == "m" and data["choices"][0]["finish_reason"] == "tool_calls"
        call = data["choices"][0]["message"]["tool_calls"][0]
        assert call["id"] == "c1" and call["function"]["name"] == "calculator"
        assert data["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
        request = sent[0]
        assert request.model == "m" and request.max_tokens == 99 and request.tools == BODY["tools"]
        assert dict(request.extra) == {}  # the agent's model, user, metadata and temperature are not sent

    proxy = with_proxy(test, replies=[CALL])
    ep = proxy.episode
    assert ep.turns == 1 and ep.replies == [CALL] and ep.messages[-1]["tool_calls"][0]["id"] == "c1"
    assert proxy.exchanges[0]["dropped"] == ["metadata", "temperature", "user"]  # the suite's temperature holds


def test_a_streaming_agent_gets_the_reply_as_server_sent_events() -> None:
    async def test(proxy: RecordingProxy, s: aiohttp.ClientSession, sent: list[ChatRequest]) -> None:
        body = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
        for expected in ("tool_calls", "stop"):
            async with s.post("v1/chat/completions", json=body) as r:
                assert r.headers["Content-Type"].startswith("text/event-stream")
                lines = [line for line in (await r.text()).split("\n\n") if line]
            assert lines[-1] == "data: [DONE]"
            events = [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]
            finish = [c["finish_reason"] for e in events for c in e["choices"] if c["finish_reason"]]
            assert finish == [expected] and events[-1]["usage"]["total_tokens"] == 10
            content = "".join(c["delta"].get("content") or "" for e in events for c in e["choices"])
            names = [t["function"]["name"] for e in events for c in e["choices"]
                     for t in c["delta"].get("tool_calls", [])]
            assert (content, names) == (("", ["calculator"]) if expected == "tool_calls" else ("42", []))

    with_proxy(test, replies=[CALL, ANSWER])


def test_the_proxy_stops_the_episode_at_max_turns_and_on_an_endpoint_failure() -> None:
    async def turns(proxy: RecordingProxy, s: aiohttp.ClientSession, sent: list[ChatRequest]) -> None:
        codes = []
        for _ in range(3):
            async with s.post("v1/chat/completions", json=BODY) as r:
                codes.append((r.status, (await r.json()).get("error", {}).get("code")))
        assert codes == [(200, None), (200, None), (400, "max_turns")] and len(sent) == 2

    proxy = with_proxy(turns, replies=[CALL], limits=Limits(max_turns=2))
    assert proxy.episode.stop_reason == "max_turns" and proxy.episode.turns == 2

    async def failing(proxy: RecordingProxy, s: aiohttp.ClientSession, sent: list[ChatRequest]) -> None:
        async with s.post("v1/chat/completions", json=BODY) as r:
            assert r.status == 502 and (await r.json())["error"]["code"] == "upstream_error"
        async with s.post("v1/chat/completions", json=BODY) as r:
            assert r.status == 400 and (await r.json())["error"]["code"] == "episode_stopped"
        assert len(sent) == 1

    proxy = with_proxy(failing, replies=[EndpointError("HTTP 500 from the model")])
    assert proxy.episode.stop_reason == "error" and "HTTP 500" in (proxy.episode.error or "")


def test_captured_output_keeps_its_head_and_tail() -> None:
    cap = Capture(limit=10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrst"):
        cap.add(chunk)
    assert cap.total == 20 and cap.truncated and bytes(cap.head) == b"abcde" and bytes(cap.tail) == b"pqrst"
    assert cap.text().startswith("abcde") and cap.text().endswith("pqrst") and "10 bytes cut" in cap.text()


def test_the_command_backend_fills_its_placeholders_and_never_puts_the_key_on_the_command_line() -> None:
    agent = CommandAgent(["my-agent", "--prompt-file", "{prompt_file}", "--in={workspace}", "{model}", "{base_url}"])
    inv = agent.invocation(prompt_file=Path("/h/prompt.md"), workspace=Path("/w"), home=Path("/h"), model="m1",
                           base_url="http://127.0.0.1:9/v1", api_key="jeval-episode-dummy")
    assert inv.argv == ["my-agent", "--prompt-file", "/h/prompt.md", "--in=/w", "m1", "http://127.0.0.1:9/v1"]
    assert inv.env == {} and inv.answer_from("  42\n", "", 0) == "42"
    env = ext_runner.agent_environment(home=Path("/h"), base_url="http://x/v1", key="dummy", model="m1", extra={})
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG", "OPENAI_BASE_URL", "OPENAI_API_KEY", "JEVAL_MODEL"}


def _suite(tmp_path: Path, bench: str, *, model: str = "", head: str = "") -> Path:
    (tmp_path / "bench_extb.py").write_text(BENCH.format(name="extb"))
    (tmp_path / "extb.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    suite = tmp_path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""
        {head}
        [[models]]
        name = "m"
        {model}

        [[benchmarks]]
        name = "extb"
        module = "bench_extb.py"
        data_files = "extb.jsonl"
        {bench}
        """))
    return suite


def _plan(tmp_path: Path, bench: str, **kw: str) -> EvalPlan:
    return EvalPlan.from_file(_suite(tmp_path, bench, **kw), invocation_dir=tmp_path)


@pytest.mark.parametrize(("bench", "message"), [
    ('backend = "command"', 'backend = "command" needs command = '),
    ('backend = "agent"\ncommand = ["true"]', 'command: only valid with backend = "command"'),
    ('command = ["true"]', 'command: only valid with backend = "command"'),
    ('backend = "command"\ncommand = []', "command is empty"),
    ('backend = "command"\ncommand = ["true", "{prompt}"]', "unknown placeholder {prompt}"),
    ('backend = "command"\ncommand = ["true", "{model"]', "unbalanced brace"),
    ('backend = "command"\ncommand = ["/no/such/agent"]', "/no/such/agent is not an executable file"),
    ('backend = "command"\ncommand = ["true"]\ntools = ["calculator"]', "brings its own tools"),
    ('backend = "hermes2"', "backend"),
])
def test_bad_command_settings_are_refused_at_plan_time(tmp_path: Path, bench: str, message: str) -> None:
    with pytest.raises(SuiteError, match="benchmarks\\[0\\]") as exc:
        _plan(tmp_path, bench)
    assert message in str(exc.value)


def test_without_a_sandbox_the_backend_is_refused_unless_accepted(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_jeval.sandbox.confined import confinement_problem

    bench = 'backend = "command"\ncommand = ["/bin/true"]'
    assert _plan(tmp_path, bench).benchmarks["extb"].is_external
    confinement_problem.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on it
    try:
        with pytest.raises(SuiteError, match="apt-get install -y bubblewrap"):
            _plan(tmp_path, bench)
        monkeypatch.setenv(ext_runner.NO_PIDNS_ENV, "1")
        assert _plan(tmp_path, bench).benchmarks["extb"].backend == "command"
    finally:
        confinement_problem.cache_clear()


def test_jarvis_backend_variables_override_the_toml_and_the_model_entry_overrides_both(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JARVIS_BACKEND_BASE_URL", "JARVIS_BACKEND_API_KEY", "JEVAL_BASE_URL", "JEVAL_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    head = '[backend.external]\nbase_url = "http://toml:1/v1"\napi_key = "toml-key-12345678"'
    plan = _plan(tmp_path, "", head=head)
    model = plan.models["m"]
    ep = plan.endpoint_for(model)
    assert (ep.base_url, ep.api_key.get_secret_value()) == ("http://toml:1/v1", "toml-key-12345678")
    monkeypatch.setenv("JARVIS_BACKEND_BASE_URL", "http://env:2/v1")
    monkeypatch.setenv("JARVIS_BACKEND_API_KEY", "jarvis-key-12345678")
    ep = plan.endpoint_for(model)
    assert (ep.base_url, ep.api_key.get_secret_value()) == ("http://env:2/v1", "jarvis-key-12345678")
    monkeypatch.setenv("JEVAL_BASE_URL", "http://jeval:3/v1")  # JEVAL_* wins over its JARVIS_BACKEND_* alias
    assert plan.endpoint_for(model).base_url == "http://jeval:3/v1"
    assert "jarvis-key-12345678" in plan.keys()  # so it is redacted like every other key
    own = _plan(tmp_path, "", head=head, model='base_url = "http://own:4/v1"\napi_key = "own-key-12345678"')
    ep = own.endpoint_for(own.models["m"])
    assert (ep.base_url, ep.api_key.get_secret_value()) == ("http://own:4/v1", "own-key-12345678")


def test_the_user_simulator_keys_are_redacted_like_the_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_USER_SIM_KEY", "user-sim-env-key-1234")
    head = '[user]\nmodel = "sim"\nbase_url = "http://sim:1/v1"\napi_key_env = "JEVAL_USER_SIM_KEY"'
    keys = _plan(tmp_path, "", head=head).keys()
    assert "user-sim-env-key-1234" in keys
    inline = '[user]\nmodel = "sim"\nbase_url = "http://sim:1/v1"\napi_key = "user-sim-inline-5678"'
    keys = _plan(tmp_path, "", head=inline).keys()
    assert "user-sim-inline-5678" in [k.get_secret_value() if isinstance(k, SecretStr) else k for k in keys]
