"""Tool calls, scripted conversations and strict tool checks of FakeOpenAIServer, over real HTTP."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState

from pytest_jeval.testing.openai_server import (
    Answer,
    FakeOpenAIServer,
    Fault,
    ToolCallSpec,
    count_tokens,
    script_responder,
    tool_answer,
    tool_call_id,
    tool_rejection,
    tool_turns_responder,
)
from tests.support.openai_servers import MakeServer, client_for, make_server  # noqa: F401 (a fixture)

REPO_ROOT = Path(__file__).resolve().parents[2]

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
TOOLS = [WEATHER, TIME]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def calls_of(message: Any) -> list[tuple[str, str, str]]:
    return [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or ()]


def assistant_calls(*calls: tuple[str, str, str]) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls
    ]}


def tool_msg(call_id: str, content: str = "result") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# --------------------------------------------------------------------------- emitting tool calls


def test_tool_calls_non_streamed(make_server: MakeServer) -> None:
    script = {
        "weather": [tool_answer(ToolCallSpec("get_weather", {"city": "Paris", "unit": "C"}),
                                ToolCallSpec("get_time", "{}", id="my-id"))],
        "both": [tool_answer(ToolCallSpec("get_time"), text="Let me check.")],
        "cut": [Answer("", tool_calls=(ToolCallSpec("get_time"),), finish_reason="length")],
    }
    server = make_server(script_responder(script))
    with client_for(server) as client:
        reply = client.chat.completions.create(model="m", messages=[user("weather?")], tools=TOOLS)
        both = client.chat.completions.create(model="m", messages=[user("both")], tools=TOOLS)
        cut = client.chat.completions.create(model="m", messages=[user("cut")], tools=TOOLS)
        plain = client.chat.completions.create(model="m", messages=[user("nothing scripted")])
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    args = '{"city":"Paris","unit":"C"}'  # compact JSON, keys in the mapping's order
    assert calls_of(choice.message) == [
        (tool_call_id("get_weather", args, 0, 0), "get_weather", args),
        ("my-id", "get_time", "{}"),
    ]
    assert re.fullmatch(r"call_0_0_[0-9a-f]{8}", choice.message.tool_calls[0].id)
    assert reply.usage is not None
    assert reply.usage.completion_tokens == count_tokens(f" get_weather {args} get_time {{}}")
    assert both.choices[0].message.content == "Let me check."
    assert both.choices[0].finish_reason == "tool_calls"
    assert [c.function.name for c in both.choices[0].message.tool_calls or ()] == ["get_time"]
    assert cut.choices[0].finish_reason == "length"
    assert plain.choices[0].finish_reason == "stop"
    assert plain.choices[0].message.tool_calls is None
    assert plain.choices[0].message.content == ""


def _stream(client: openai.OpenAI, messages: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    chunks = list(client.chat.completions.create(
        model="m", messages=messages, tools=TOOLS, stream=True,
        stream_options={"include_usage": True},
    ))
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(chunk)
    return chunks, state.get_final_completion()


@pytest.mark.parametrize("text", ["", "Checking both."])
def test_tool_calls_streamed_as_openai_does(make_server: MakeServer, text: str) -> None:
    calls = (ToolCallSpec("get_weather", {"city": "Paris", "when": "tomorrow at noon"}),
             ToolCallSpec("get_time", {"zone": "Europe/Paris"}))
    server = make_server(script_responder({"": [tool_answer(*calls, text=text)]}))
    with client_for(server) as client:
        plain = client.chat.completions.create(model="m", messages=[user("go")], tools=TOOLS)
        chunks, final = _stream(client, [user("go")])

    # The client's own accumulation gives the same calls as the non-streamed reply.
    assert calls_of(final.choices[0].message) == calls_of(plain.choices[0].message)
    assert len(calls_of(plain.choices[0].message)) == 2
    assert final.choices[0].finish_reason == "tool_calls"
    assert (final.choices[0].message.content or "") == text
    assert final.usage is not None and plain.usage is not None
    assert final.usage.completion_tokens == plain.usage.completion_tokens

    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert deltas[0].role == "assistant"
    call_deltas = [(d.tool_calls[0], i) for i, d in enumerate(deltas) if d.tool_calls]
    for index in (0, 1):
        parts = [d for d, _ in call_deltas if d.index == index]
        head, rest = parts[0], parts[1:]
        assert head.id == plain.choices[0].message.tool_calls[index].id
        assert head.type == "function"
        assert head.function is not None and head.function.name == calls[index].name
        assert len(rest) > 1, "the arguments come over several chunks"
        assert all(p.id is None and p.type is None and p.function and p.function.name is None for p in rest)
        assert "".join(p.function.arguments or "" for p in rest if p.function) == calls[index].arguments_text
    if text == "":
        assert deltas[0].tool_calls is not None, "a call-only reply opens with the first call's head"
    else:
        content_at = [i for i, d in enumerate(deltas) if d.content]
        assert content_at and max(content_at) < call_deltas[0][1], "content comes before the calls"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert chunks[-2].choices[0].finish_reason == "tool_calls"


def test_malformed_arguments_sent_verbatim(make_server: MakeServer) -> None:
    broken = '{"city": "Par'
    server = make_server(script_responder({"": [tool_answer(ToolCallSpec("get_weather", broken))]}))
    with client_for(server) as client:
        plain = client.chat.completions.create(model="m", messages=[user("go")], tools=TOOLS)
        _, final = _stream(client, [user("go")])
    assert calls_of(plain.choices[0].message)[0][2] == broken
    assert calls_of(final.choices[0].message)[0][2] == broken


def test_unlisted_tool_name_is_answered(make_server: MakeServer) -> None:
    """Models call tools the request does not list; the server sends what the responder says."""
    server = make_server(script_responder({"": [tool_answer(ToolCallSpec("not_a_listed_tool"))]}))
    with client_for(server) as client:
        reply = client.chat.completions.create(model="m", messages=[user("go")], tools=[WEATHER])
    assert [c[1] for c in calls_of(reply.choices[0].message)] == ["not_a_listed_tool"]


# --------------------------------------------------------------------------- scripts


def _run_conversation(client: openai.OpenAI, first: str, turns: int) -> list[Any]:
    """Play ``turns`` model turns, answering every tool call; the messages of each reply."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}, user(first)]
    replies = []
    for _ in range(turns):
        reply = client.chat.completions.create(model="m", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        replies.append(message)
        messages.append(message.model_dump(exclude_none=True))
        messages.extend(tool_msg(c.id, f"result of {c.id}") for c in message.tool_calls or ())
        if not message.tool_calls:
            messages.append(user("and now?"))  # a later user message does not change the script
    return replies


def test_script_per_record_and_per_step(make_server: MakeServer) -> None:
    scripts = {
        "weather": [tool_answer(ToolCallSpec("get_weather", {"city": "Oslo"})), "It is cold.", "Bye."],
        "weather and time": [tool_answer(ToolCallSpec("get_weather"), ToolCallSpec("get_time")), "Noon, sunny."],
        "loop": [tool_answer(ToolCallSpec("get_time"))],
    }
    server = make_server(script_responder(scripts, default="no script"))
    with client_for(server) as client:
        weather = _run_conversation(client, "the weather in Oslo?", 4)
        longest = _run_conversation(client, "weather and time please", 3)
        loop = _run_conversation(client, "loop forever", 5)
        other = _run_conversation(client, "something else", 2)

    assert [c[1:] for c in calls_of(weather[0])] == [("get_weather", '{"city":"Oslo"}')]
    assert [m.content for m in weather[1:]] == ["It is cold.", "Bye.", "Bye."]  # the last step repeats
    assert [c[1] for c in calls_of(longest[0])] == ["get_weather", "get_time"]  # the longest key wins
    assert [m.content for m in longest[1:]] == ["Noon, sunny.", "Noon, sunny."]
    # A one-step script of a tool call: a model that never stops calling tools, with fresh ids each step.
    assert all(len(m.tool_calls or ()) == 1 for m in loop)
    ids = [calls_of(m)[0][0] for m in loop]
    assert len(set(ids)) == 5 and all(i.startswith(f"call_{step}_0_") for step, i in enumerate(ids))
    assert [m.content for m in other] == ["no script", "no script"]


def test_script_steps_can_fault(make_server: MakeServer) -> None:
    server = make_server(script_responder({"down": ["first", Fault("500")]}))
    with client_for(server) as client:
        first = client.chat.completions.create(model="m", messages=[user("down")])
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="m", messages=[
                user("down"), {"role": "assistant", "content": "first"}, user("again")])
    assert first.choices[0].message.content == "first"


def test_script_responder_refuses_bad_scripts() -> None:
    with pytest.raises(ValueError, match="'a' is empty"):
        script_responder({"a": []})
    with pytest.raises(TypeError, match="sequence of steps"):
        script_responder({"a": "just text"})
    with pytest.raises(TypeError, match="script step"):
        script_responder({"a": [42]})
    with pytest.raises(ValueError, match="turns"):
        tool_turns_responder(lambda body, attempt: "x", 0)


# --------------------------------------------------------------------------- strict tool checks

CALL_A = ("call_a", "get_weather", '{"city":"Oslo"}')
CALL_B = ("call_b", "get_time", "{}")
PRECEDING = ("Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
             "with 'tool_calls'.")


def _unanswered(ids: str) -> str:
    return ("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {ids}")


STRICT_CASES: dict[str, tuple[list[dict[str, Any]], Any, str, str | None, str | None]] = {
    # name: (messages after the first user message, tools, message, param, code)
    "one-call-unanswered": (
        [assistant_calls(CALL_A, CALL_B), tool_msg("call_a"), user("next")], TOOLS,
        _unanswered("call_b"), "messages.[4].role", None),
    "no-tool-message-at-all": (
        [assistant_calls(CALL_A, CALL_B), {"role": "assistant", "content": "done"}], TOOLS,
        _unanswered("call_a, call_b"), "messages.[3].role", None),
    "unanswered-at-the-end": (
        [assistant_calls(CALL_A)], TOOLS, _unanswered("call_a"), "messages.[2].role", None),
    "unknown-tool-call-id": (
        [assistant_calls(CALL_A), tool_msg("call_zzz")], TOOLS, PRECEDING, "messages.[3].role", None),
    "answers-an-earlier-assistant": (
        [assistant_calls(CALL_A), tool_msg("call_a"), assistant_calls(CALL_B), tool_msg("call_a")], TOOLS,
        PRECEDING, "messages.[5].role", None),
    "tool-message-after-user": (
        [assistant_calls(CALL_A), tool_msg("call_a"), user("hm"), tool_msg("call_a")], TOOLS,
        PRECEDING, "messages.[5].role", None),
    "tool-message-without-any-call": (
        [tool_msg("call_a")], TOOLS, PRECEDING, "messages.[2].role", None),
    "tool-message-without-id": (
        [assistant_calls(CALL_A), {"role": "tool", "content": "r"}], TOOLS,
        "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
        "messages.[3].tool_call_id", None),
    "empty-tool-calls": (
        [{"role": "assistant", "content": "x", "tool_calls": []}], TOOLS,
        "Invalid 'messages[2].tool_calls': empty array.", "messages.[2].tool_calls", "empty_array"),
    "history-without-tools": (
        [assistant_calls(CALL_A), tool_msg("call_a")], None,
        "Invalid parameter: 'tools' is required when messages hold tool calls or messages with role 'tool' "
        "(messages.[2]).", "tools", None),
    "tools-not-a-list": (
        [], WEATHER, "Invalid type for 'tools': expected an array, but got an object instead.",
        "tools", "invalid_type"),
    "tools-empty": (
        [], [], "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty "
        "array instead.", "tools", "empty_array"),
    "tool-without-type": (
        [], [WEATHER, {"function": {"name": "f"}}], "Missing required parameter: 'tools[1].type'.",
        "tools[1].type", "missing_required_parameter"),
    "tool-of-other-type": (
        [], [{"type": "retrieval", "function": {"name": "f"}}],
        "Invalid value: \"retrieval\". Supported values are: 'function'.", "tools[0].type", "invalid_value"),
    "tool-without-function": (
        [], [{"type": "function"}], "Missing required parameter: 'tools[0].function'.", "tools[0].function",
        "missing_required_parameter"),
    "function-without-name": (
        [], [{"type": "function", "function": {"description": "d"}}],
        "Missing required parameter: 'tools[0].function.name'.", "tools[0].function.name",
        "missing_required_parameter"),
    "function-name-with-dot": (
        [], [{"type": "function", "function": {"name": "mcp.get"}}],
        "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches "
        "the pattern '^[a-zA-Z0-9_-]+$'.", "tools[0].function.name", "invalid_value"),
    "function-name-too-long": (
        [], [{"type": "function", "function": {"name": "f" * 65}}],
        "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but "
        "got a string with length 65 instead.", "tools[0].function.name", "string_above_max_length"),
    "function-name-empty": (
        [], [{"type": "function", "function": {"name": ""}}],
        "Invalid 'tools[0].function.name': empty string. Expected a string with minimum length 1, but got "
        "an empty string instead.", "tools[0].function.name", "empty_string"),
}


@pytest.fixture(scope="module")
def strict_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(lambda body, attempt: "fine") as server:
        yield server


@pytest.mark.parametrize("case", sorted(STRICT_CASES))
def test_strict_tools_refuses(strict_server: FakeOpenAIServer, case: str) -> None:
    following, tools, message, param, code = STRICT_CASES[case]
    messages = [{"role": "system", "content": "s"}, user("go"), *following]
    extra = {} if tools is None else {"tools": tools}
    before = strict_server.request_count
    with client_for(strict_server) as client, pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="m", messages=messages, **extra)
    assert caught.value.status_code == 400
    assert caught.value.body == {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    assert strict_server.request_count == before + 1
    record = strict_server.requests[-1]
    assert (record["status"], record["outcome"], record["attempt"]) == (400, "invalid", None)


def test_strict_checks_come_before_a_slot(make_server: MakeServer) -> None:
    """A refused request never waits for the (busy) slot, like the other body checks."""
    server = make_server(lambda body, attempt: "x", latency=600.0, slots=1)  # the slot stays busy
    following, tools, _, _, _ = STRICT_CASES["unknown-tool-call-id"]
    with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0, timeout=700) as client:
        threading.Thread(target=lambda: _ignore(client, [user("busy")]), daemon=True).start()
        _wait_for(lambda: server.in_flight == 1)
        # answered (not timed out) long before the busy slot could free up
        with pytest.raises(openai.BadRequestError, match="preceeding"):
            client.chat.completions.create(model="m", messages=[user("go"), *following], tools=tools,
                                           timeout=60)


def _ignore(client: openai.OpenAI, messages: list[dict[str, Any]]) -> None:
    try:
        client.chat.completions.create(model="m", messages=messages)
    except openai.OpenAIError:
        pass  # cut off when the server stops at teardown


def _wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("condition not reached")
        time.sleep(0.02)


def test_well_formed_round_trips_accepted(strict_server: FakeOpenAIServer) -> None:
    conversations = [
        [assistant_calls(CALL_A, CALL_B), tool_msg("call_a"), tool_msg("call_b")],
        [assistant_calls(CALL_A, CALL_B), tool_msg("call_b"), tool_msg("call_a"),  # any order
         {"role": "assistant", "content": "It is noon in Oslo."}, user("thanks"),
         {"role": "assistant", "content": "", "tool_calls": [
             {"id": "call_c", "type": "function", "function": {"name": "get_time", "arguments": "{"}}]},
         tool_msg("call_c", "[error] bad JSON")],
        [assistant_calls(("call_x", "unlisted_tool", "{}")), tool_msg("call_x")],  # a name not in tools
    ]
    with client_for(strict_server) as client:
        for following in conversations:
            reply = client.chat.completions.create(
                model="m", messages=[user("go"), *following], tools=TOOLS)
            assert reply.choices[0].message.content == "fine"
        assert client.chat.completions.create(model="m", messages=[user("no tools at all")]).choices


def test_strict_tools_off_accepts_broken_conversations(make_server: MakeServer) -> None:
    server = make_server(lambda body, attempt: "lenient", strict_tools=False)
    with client_for(server) as client:
        for case in ("one-call-unanswered", "history-without-tools", "function-name-with-dot"):
            following, tools, _, _, _ = STRICT_CASES[case]
            extra = {} if tools is None else {"tools": tools}
            reply = client.chat.completions.create(model="m", messages=[user("go"), *following], **extra)
            assert reply.choices[0].message.content == "lenient"


def test_tool_rejection_accepts_plain_requests() -> None:
    assert tool_rejection({"messages": [user("hi"), {"role": "assistant", "content": "yo"}]}) is None
    assert tool_rejection({"messages": [user("hi")], "tools": TOOLS, "tool_choice": "auto"}) is None
    assert tool_rejection({"messages": [user("hi")], "tools": None}) is None


# --------------------------------------------------------------------------- CLI


def _readline(proc: subprocess.Popen[str], timeout: float) -> str:
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        pytest.fail(f"no line from the server within {timeout} s")


def _cli(*args: str) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    command = [sys.executable, "-m", "pytest_jeval.testing.openai_server", "--port", "0", *args]
    return subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _serve_and_run(args: list[str], body: Callable[[openai.OpenAI], None]) -> dict[str, Any]:
    with _cli(*args) as proc:
        try:
            ready = _readline(proc, timeout=60)
            match = re.fullmatch(r"READY (http://127\.0\.0\.1:\d+/v1)\n", ready)
            assert match, ready
            with openai.OpenAI(base_url=match.group(1), api_key="k", max_retries=0) as client:
                body(client)
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert proc.returncode == 0, err
    stats: dict[str, Any] = json.loads(out.splitlines()[-1])
    return stats


def test_cli_tool_turns(tmp_path: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"capital": "Paris"}), encoding="utf-8")
    seen: dict[str, list[Any]] = {}

    def body(client: openai.OpenAI) -> None:
        for first in ("capital of France?", "something else"):
            seen[first] = _run_conversation(client, first, 4)

    stats = _serve_and_run(["--tool-turns", "3", "--answers", str(answers), "--default-answer", "no idea"], body)
    for first, final in (("capital of France?", "Paris"), ("something else", "no idea")):
        replies = seen[first]
        assert [c[1:] for c in calls_of(replies[0])] == [("calculator", '{"expression":"0+1"}')]
        assert [c[1:] for c in calls_of(replies[1])] == [("calculator", '{"expression":"1+1"}')]
        assert replies[0].content is None
        assert replies[2].content == final and replies[2].tool_calls is None
        assert replies[3].content == "no idea" and replies[3].tool_calls is None  # answers "and now?"
    assert stats["request_count"] == 8


def test_cli_default_answer_without_answers_file() -> None:
    """--default-answer alone used to be ignored (every request got "OK")."""
    contents: list[str | None] = []

    def body(client: openai.OpenAI) -> None:
        reply = client.chat.completions.create(model="m", messages=[user("anything")])
        contents.append(reply.choices[0].message.content)

    _serve_and_run(["--default-answer", "forty-two"], body)
    _serve_and_run([], body)
    assert contents == ["forty-two", "OK"]


def test_cli_refuses_zero_tool_turns() -> None:
    with _cli("--tool-turns", "0") as proc:
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "--tool-turns must be >= 1, not 0" in err
