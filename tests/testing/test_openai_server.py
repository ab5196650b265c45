"""FakeOpenAIServer driven by the real ``openai`` client over real HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest

from pytest_jeval.testing.openai_server import (
    Answer,
    FakeOpenAIServer,
    Fault,
    FaultInjector,
    body_hash,
    count_tokens,
    lookup_responder,
    split_tokens,
)
from tests.support.openai_servers import MakeServer, client_for, make_server  # noqa: F401 (a fixture)

REPO_ROOT = Path(__file__).resolve().parents[2]


def async_client_for(
    server: FakeOpenAIServer, *, api_key: str = "test-key", **kwargs: Any
) -> openai.AsyncOpenAI:
    kwargs.setdefault("max_retries", 0)
    return openai.AsyncOpenAI(base_url=server.base_url, api_key=api_key, **kwargs)


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


def wait_until(predicate: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Whether ``predicate`` holds within ``timeout`` seconds (a bound for a stuck test, not a speed check)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


# --------------------------------------------------------------------------- answers


def test_plain_chat_sync(make_server: MakeServer) -> None:
    server = make_server(api_key="secret")
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", server.base_url)
    with client_for(server, api_key="secret") as client:
        reply = client.chat.completions.create(
            model="my-model",
            messages=[{"role": "system", "content": "be brief"}, *user("hello there world")],
        )
        models = client.models.list()
    assert reply.object == "chat.completion"
    assert reply.model == "my-model"
    assert reply.id and reply.created > 0
    choice = reply.choices[0]
    assert choice.message.role == "assistant"
    assert choice.message.content == "OK"
    assert choice.finish_reason == "stop"
    assert choice.logprobs is None
    assert reply.usage is not None
    # words + 1: "be brief\nhello there world" -> 5 + 1; "OK" -> 1 + 1
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.total_tokens) == (6, 2, 8)
    assert [m.id for m in models.data] == []  # no models given: any id is served ("my-model"), none is listed

    assert server.request_count == 1  # the models listing is recorded but not counted
    records = server.requests
    assert [r["path"] for r in records] == ["/v1/chat/completions", "/v1/models"]
    chat = records[0]
    assert chat["body"]["model"] == "my-model"
    assert chat["body"]["messages"][-1]["content"] == "hello there world"
    assert chat["attempt"] == 1
    assert (chat["status"], chat["outcome"]) == (200, "answer")
    assert chat["arrived_at"] <= chat["completed_at"]
    assert not any(k.lower() == "authorization" for k in chat["headers"])
    assert "content-type" in {k.lower() for k in chat["headers"]}
    assert server.first_request_at == chat["arrived_at"]
    assert server.last_completion_at == chat["completed_at"]

    server.reset_stats()
    assert server.requests == [] and server.request_count == 0 and server.first_request_at is None


def test_named_models_are_listed_and_the_only_ones_served(make_server: MakeServer) -> None:
    server = make_server(models=("model-a", "model-b"))
    with client_for(server) as client:
        assert [m.id for m in client.models.list().data] == ["model-a", "model-b"]
        assert client.models.retrieve("model-b").id == "model-b"
        with pytest.raises(openai.NotFoundError):
            client.models.retrieve("my-model")


def test_answer_overrides_and_lookup(make_server: MakeServer) -> None:
    table = {"capital of France": "Paris", "2+2": "4"}

    def responder(body: dict[str, Any], attempt: int) -> str | Answer:
        if "a long answer" in json.dumps(body):
            return Answer("cut", finish_reason="length", prompt_tokens=100, completion_tokens=7, delay=0.05)
        return lookup_responder(table, default="?")(body, attempt)

    server = make_server(responder)
    with client_for(server) as client:
        paris = client.chat.completions.create(
            model="m",
            messages=[
                *user("what is 2+2?"),
                {"role": "assistant", "content": "4"},
                *user("capital of France?"),
            ],
        )
        default = client.chat.completions.create(model="m", messages=user("nothing matches"))
        long = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": [{"type": "text", "text": "a long answer"}]}]
        )
    assert paris.choices[0].message.content == "Paris"
    assert default.choices[0].message.content == "?"
    assert long.choices[0].message.content == "cut"
    assert long.choices[0].finish_reason == "length"
    assert long.usage is not None and (long.usage.prompt_tokens, long.usage.completion_tokens) == (100, 7)
    record = server.requests[-1]
    assert record["completed_at"] - record["arrived_at"] >= 0.05


def test_lookup_responder_uses_last_user_message_and_first_key() -> None:
    respond = lookup_responder({"apple": "A", "app": "B"}, default="none")
    body = {"messages": [*user("apple"), {"role": "assistant", "content": "x"}, *user("an app")]}
    assert respond(body, 1) == "B"
    assert respond({"messages": user("pineapple pie")}, 1) == "A"  # first matching key wins
    assert respond({"messages": [{"role": "system", "content": "apple"}]}, 1) == "none"
    assert count_tokens("") == 1 and count_tokens(" two  words ") == 3
    assert split_tokens("Hi  there ") == ["Hi", "  there", " "] and split_tokens("") == []


def test_streaming_with_usage(make_server: MakeServer) -> None:
    server = make_server(lookup_responder({"count": "one two three"}))
    with client_for(server) as client:
        stream = client.chat.completions.create(
            model="stream-model",
            messages=user("count please"),
            stream=True,
            stream_options={"include_usage": True},
        )
        with stream:
            chunks = list(stream)
        plain = client.chat.completions.create(model="m", messages=user("count"), stream=True)
        with plain:
            plain_chunks = list(plain)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == "one two three"
    assert all(c.object == "chat.completion.chunk" and c.model == "stream-model" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (3, 4)
    assert all(c.usage is None for c in chunks[:-1])
    # Without include_usage there is no usage chunk.
    assert all(c.choices and c.usage is None for c in plain_chunks)
    assert [r["outcome"] for r in server.requests] == ["stream", "stream"]


def test_logprobs_parsed_by_async_client(make_server: MakeServer) -> None:
    given = Answer(
        "Paris.",
        logprobs=[
            ("Paris", -0.1, [("Paris", -0.1), ("Lyon", -2.5), ("Nice", -3.0)]),
            (".", -0.01, [(".", -0.01)]),
        ],
    )

    def responder(body: dict[str, Any], attempt: int) -> str | Answer:
        return given if "France" in body["messages"][-1]["content"] else "plain words here"

    server = make_server(responder)

    async def run() -> tuple[Any, Any, Any, list[Any]]:
        async with async_client_for(server) as client:
            explicit = await client.chat.completions.create(
                model="m", messages=user("France?"), logprobs=True, top_logprobs=2
            )
            generated = await client.chat.completions.create(model="m", messages=user("x"), logprobs=True)
            absent = await client.chat.completions.create(model="m", messages=user("France?"))
            stream = await client.chat.completions.create(
                model="m", messages=user("France!"), logprobs=True, top_logprobs=1, stream=True
            )
            chunks = [chunk async for chunk in stream]
            return explicit, generated, absent, chunks

    explicit, generated, absent, chunks = asyncio.run(run())

    content = explicit.choices[0].logprobs.content
    assert [t.token for t in content] == ["Paris", "."]
    assert [t.logprob for t in content] == [-0.1, -0.01]
    assert content[0].bytes == list(b"Paris")
    assert [(a.token, a.logprob) for a in content[0].top_logprobs] == [("Paris", -0.1), ("Lyon", -2.5)]
    assert content[0].top_logprobs[1].bytes == list(b"Lyon")

    tokens = generated.choices[0].logprobs.content
    assert "".join(t.token for t in tokens) == "plain words here"
    assert [t.token for t in tokens] == ["plain", " words", " here"]
    assert all(t.logprob == 0.0 and t.top_logprobs == [] for t in tokens)

    assert absent.choices[0].logprobs is None

    streamed = [
        t for c in chunks if c.choices and c.choices[0].logprobs for t in c.choices[0].logprobs.content
    ]
    assert [(t.token, [a.token for a in t.top_logprobs]) for t in streamed] == [
        ("Paris", ["Paris"]),
        (".", ["."]),
    ]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Paris."


# --------------------------------------------------------------------------- errors


def test_wrong_api_key_gets_401(make_server: MakeServer) -> None:
    calls: list[int] = []

    def responder(body: dict[str, Any], attempt: int) -> str:
        calls.append(attempt)
        return "fine"

    server = make_server(responder, api_key="right")
    with client_for(server, api_key="wrong") as client:
        with pytest.raises(openai.AuthenticationError) as info:
            client.chat.completions.create(model="m", messages=user("hi"))
        with pytest.raises(openai.AuthenticationError):
            client.models.list()
    assert info.value.status_code == 401
    assert isinstance(info.value.body, dict) and info.value.body["code"] == "invalid_api_key"
    assert calls == []
    with client_for(server, api_key="right") as client:
        assert (
            client.chat.completions.create(model="m", messages=user("hi")).choices[0].message.content
            == "fine"
        )
    assert calls == [1]
    assert [r["status"] for r in server.requests] == [401, 401, 200]


def test_bad_request_body_gets_400(make_server: MakeServer) -> None:
    server = make_server()
    request = urllib.request.Request(
        server.base_url + "/chat/completions",
        data=b"{not json",
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=30)
    with info.value as error:
        assert error.code == 400
        assert json.loads(error.read())["error"]["type"] == "invalid_request_error"


def test_slots_limit_respected(make_server: MakeServer) -> None:
    server = make_server(latency=0.1, slots=4)

    async def run() -> list[str]:
        async with async_client_for(server) as client:
            replies = await asyncio.gather(
                *(client.chat.completions.create(model="m", messages=user(f"q{i}")) for i in range(20))
            )
        return [r.choices[0].message.content or "" for r in replies]

    assert asyncio.run(run()) == ["OK"] * 20
    assert server.request_count == 20
    assert server.max_in_flight == 4
    assert server.in_flight == 0
    first, last = server.first_request_at, server.last_completion_at
    assert first is not None and last is not None
    assert last - first >= 5 * 0.1 - 0.01  # 20 requests / 4 slots = 5 rounds of 0.1 s


def test_429_retry_after_honoured_then_success(make_server: MakeServer) -> None:
    def responder(body: dict[str, Any], attempt: int) -> str | Fault:
        return Fault("429", retry_after=0.8) if attempt == 1 else f"attempt {attempt}"

    server = make_server(responder)
    with client_for(server, max_retries=2) as client:
        reply = client.chat.completions.create(model="m", messages=user("rate limited"))
    assert reply.choices[0].message.content == "attempt 2"
    first, second = server.requests
    assert (first["attempt"], first["status"], first["outcome"]) == (1, 429, "429")
    assert (second["attempt"], second["status"]) == (2, 200)
    assert second["body"] == first["body"]
    # The client's own backoff for a first retry is at most 0.5 s: waiting at least
    # 0.8 s shows it honoured Retry-After.
    assert second["arrived_at"] - first["completed_at"] >= 0.75

    # The header itself, as the client sees it.
    with client_for(server, max_retries=0) as client:
        with pytest.raises(openai.RateLimitError) as info:
            client.chat.completions.create(model="m", messages=user("another body"))
    assert info.value.status_code == 429
    assert float(info.value.response.headers["retry-after"]) == 0.8


def test_500_and_503_and_broken_responder(make_server: MakeServer) -> None:
    def responder(body: dict[str, Any], attempt: int) -> str | Fault:
        text = body["messages"][-1]["content"]
        if text == "500":
            return Fault("500")
        if text == "503":
            return Fault("503", retry_after=2.0)
        raise KeyError("boom")

    server = make_server(responder)
    with client_for(server) as client:
        with pytest.raises(openai.InternalServerError) as e500:
            client.chat.completions.create(model="m", messages=user("500"))
        with pytest.raises(openai.InternalServerError) as e503:
            client.chat.completions.create(model="m", messages=user("503"))
        with pytest.raises(openai.InternalServerError) as broken:
            client.chat.completions.create(model="m", messages=user("other"))
    assert e500.value.status_code == 500 and "retry-after" not in e500.value.response.headers
    assert e503.value.status_code == 503 and e503.value.response.headers["retry-after"] == "2.0"
    assert broken.value.status_code == 500 and "boom" in str(broken.value)
    assert [r["outcome"] for r in server.requests] == ["500", "503", "error"]


def test_hang_raises_client_timeout(make_server: MakeServer) -> None:
    server = make_server(lambda body, attempt: Fault("hang"))
    with client_for(server, timeout=0.5) as client:
        started = time.perf_counter()
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="m", messages=user("hang"))
        assert time.perf_counter() - started < 30  # the 0.5 s timeout, not the 60 s hang
    # The client gave up and disconnected, which cancels the hanging handler.
    assert wait_until(lambda: server.requests[0]["outcome"] == "cancelled")
    assert server.requests[0]["status"] == 0
    assert server.in_flight == 0


def test_hang_is_cancelled_by_stop() -> None:
    server = FakeOpenAIServer(lambda body, attempt: Fault("hang", hang_seconds=60), slots=1)
    server.start()
    errors: queue.Queue[BaseException | None] = queue.Queue()

    def call() -> None:
        try:
            with client_for(server, timeout=30) as client:
                client.chat.completions.create(model="m", messages=user("hang"))
            errors.put(None)
        except BaseException as exc:  # handed to the test thread
            errors.put(exc)

    thread = threading.Thread(target=call)
    thread.start()
    try:
        assert wait_until(lambda: server.in_flight == 1)
        started = time.perf_counter()
        server.stop()
        assert time.perf_counter() - started < 30  # the hanging request was cancelled, not waited out (60 s)
    finally:
        server.stop()
        thread.join(timeout=60)
    assert isinstance(errors.get(timeout=1), openai.APIConnectionError)
    assert server.requests[0]["outcome"] == "cancelled"
    assert not server.running


def test_drop_raises_connection_error(make_server: MakeServer) -> None:
    def responder(body: dict[str, Any], attempt: int) -> str | Fault:
        if "always" in body["messages"][-1]["content"] or attempt == 1:
            return Fault("drop")
        return "recovered"

    server = make_server(responder)
    with client_for(server) as client:
        with pytest.raises(openai.APIConnectionError) as info:
            client.chat.completions.create(model="m", messages=user("always drop"))
    assert not isinstance(info.value, openai.APITimeoutError)
    assert (server.requests[0]["status"], server.requests[0]["outcome"]) == (0, "drop")
    # The client's own retry of a connection error reaches attempt 2.
    with client_for(server, max_retries=1) as client:
        reply = client.chat.completions.create(model="m", messages=user("once"))
    assert reply.choices[0].message.content == "recovered"
    assert [r["outcome"] for r in server.requests[1:]] == ["drop", "answer"]


# --------------------------------------------------------------------------- fault injection


def test_fault_injector_is_deterministic_and_only_faults_first_attempts() -> None:
    injector = FaultInjector(None, rate=0.3, kinds=("429", "500", "503"), seed=7)
    bodies = [{"model": "m", "messages": user(f"question {i}")} for i in range(300)]

    def faulted(order: list[dict[str, Any]]) -> dict[str, str]:
        result: dict[str, str] = {}
        for body in order:
            outcome = injector(body, 1)
            if isinstance(outcome, Fault):
                result[body_hash(body)] = outcome.kind
        return result

    shuffled = bodies[:]
    random.Random(1).shuffle(shuffled)
    forward = faulted(bodies)
    assert forward == faulted(shuffled) == faulted(bodies[::-1])
    assert 0.2 * len(bodies) < len(forward) < 0.4 * len(bodies)
    assert set(forward.values()) == {"429", "500", "503"}
    assert all(injector(body, attempt) == "OK" for body in bodies for attempt in (2, 3))
    assert faulted(bodies) != {
        body_hash(b): f.kind for b in bodies if isinstance(f := FaultInjector(rate=0.3, seed=8)(b, 1), Fault)
    }
    assert all(injector.fault_for(b) is None for b in bodies if body_hash(b) not in forward)
    assert FaultInjector(rate=0.0)(bodies[0], 1) == "OK"


def test_fault_injector_over_http_same_faults_in_any_order(make_server: MakeServer) -> None:
    inner = lookup_responder({"question": "answer"})
    server = make_server(FaultInjector(inner, rate=0.3, kinds=("429", "503"), seed=3, retry_after=0.01))
    prompts = [f"question {i}" for i in range(40)]

    async def run(order: list[str]) -> list[str]:
        async with async_client_for(server, max_retries=2) as client:
            replies = await asyncio.gather(
                *(client.chat.completions.create(model="m", messages=user(p)) for p in order)
            )
        return [r.choices[0].message.content or "" for r in replies]

    faulted_sets = []
    for order in (prompts, prompts[::-1]):
        server.reset_stats()
        assert asyncio.run(run(order)) == ["answer"] * len(order)
        records = server.requests
        faulted_sets.append(
            {
                r["body"]["messages"][-1]["content"]
                for r in records
                if r["attempt"] == 1 and r["status"] != 200
            }
        )
        assert all(r["status"] == 200 for r in records if r["attempt"] == 2)
        assert len(records) == len(prompts) + len(faulted_sets[-1])
    assert faulted_sets[0] == faulted_sets[1]
    assert 0 < len(faulted_sets[0]) < len(prompts)


# --------------------------------------------------------------------------- CLI


def _readline(proc: subprocess.Popen[str], timeout: float) -> str:
    """One line of the child's stdout, or fail after ``timeout`` seconds."""
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        pytest.fail(f"no line from the server within {timeout} s")


def test_cli_prints_ready_and_serves(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"capital of France": "Paris"}), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    command = [
        sys.executable, "-m", "pytest_jeval.testing.openai_server",
        "--port", "0", "--latency", "0.01", "--slots", "2", "--answers", str(answers), "--api-key", "cli-key",
    ]  # fmt: skip
    with subprocess.Popen(
        command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            ready = _readline(proc, timeout=60)
            match = re.fullmatch(r"READY (http://127\.0\.0\.1:\d+/v1)\n", ready)
            assert match, ready
            with openai.OpenAI(base_url=match.group(1), api_key="cli-key", max_retries=0) as client:
                reply = client.chat.completions.create(model="m", messages=user("capital of France?"))
                other = client.chat.completions.create(model="m", messages=user("unknown"))
            assert reply.choices[0].message.content == "Paris"
            assert other.choices[0].message.content == ""
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, err
    stats_lines = out.splitlines()
    assert len(stats_lines) == 1, out
    stats = json.loads(stats_lines[0])
    assert stats["request_count"] == 2
    assert stats["max_in_flight"] == 1
    assert stats["last_completion_at"] > stats["first_request_at"]
