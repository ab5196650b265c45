"""The agent loop through the plugin, against a strict scripted server over real HTTP.

The server refuses a conversation whose tool calls are not each answered (or answer
unknown ids, or come without ``tools``), as real providers do, so every run here
also checks that the loop's conversations are well formed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import (
    Answer,
    FakeOpenAIServer,
    ToolCallSpec,
    script_responder,
    tool_answer,
)
from tests.support.agent import AgentProject
from tests.support.holds import HoldAfter, HoldUntilConcurrent


def call(name: str, arguments: Any = "{}", id: str | None = None) -> ToolCallSpec:
    return ToolCallSpec(name, arguments, id=id)


SCRIPTS: dict[str, list[Any]] = {
    "[one]": [tool_answer(call("add", {"a": 2, "b": 3})), "5"],
    "[two]": [tool_answer(call("add", {"a": 1, "b": 2}, "c-a"), call("add", {"a": 10, "b": 20}, "c-b")), "3 and 30"],
    "[slow-pair]": [tool_answer(call("slow_add", {"a": 1, "b": 1}, "s1"), call("slow_add", {"a": 2, "b": 2}, "s2"),
                                call("add", {"a": 3, "b": 3}, "s3")), "2 4 6"],
    "[malformed]": [tool_answer(call("add", '{"a": 1,')), "recovered"],
    "[schema]": [tool_answer(call("add", {"a": "one", "b": 2})), "recovered"],
    "[unknown]": [tool_answer(call("launch_rockets", {})), "recovered"],
    "[raises]": [tool_answer(call("boom")), "recovered"],
    "[refused]": [tool_answer(call("refuse", {"reason": "no"})), "recovered"],
    "[outside]": [tool_answer(call("file_read", {"path": "../../../../etc/hostname"})), "recovered"],
    "[forever]": [tool_answer(call("add", {"a": 1, "b": 1}))],
    "[long]": [tool_answer(call("repeat", {"text": "ab", "times": 10_000})), "long"],
}


ROWS = [{"id": key.strip("[]"), "q": f"{key} please", "a": answer}
        for key, answer in [("[one]", "5"), ("[two]", "3 and 30"), ("[slow-pair]", "2 4 6"), ("[malformed]", "recovered"),
                            ("[schema]", "recovered"), ("[unknown]", "recovered"), ("[raises]", "recovered"),
                            ("[refused]", "recovered"), ("[outside]", "recovered"), ("[long]", "long")]]


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[AgentProject]:
    with FakeOpenAIServer(script_responder(SCRIPTS, default="no script")) as server:
        yield AgentProject(pytester, server)


def _chat_bodies(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]


def run(project: AgentProject, *args: str, subprocess: bool = True) -> pytest.RunResult:
    """The suite through the plugin: in this process (no interpreter start), or in a subprocess."""
    argv = ("--jeval-config", "suite.toml", "-p", "no:cacheprovider", *args)
    return project.pytester.runpytest_subprocess(*argv) if subprocess else project.pytester.runpytest(*argv)


@pytest.mark.slow
def test_episodes_run_tools_answer_each_call_in_order_and_score(project: AgentProject) -> None:
    project.write(ROWS)
    result = run(project)
    assert result.ret == 0, result.stdout.str()[-3000:]
    records, trajectories = project.records(), project.trajectories()
    assert set(records) == {r["id"] for r in ROWS} == set(trajectories)
    for rec in records.values():
        assert rec["backend"] == "agent" and rec["is_correct"] is True and rec["error"] is None
        assert rec["agent"]["stop_reason"] == "final"
        assert rec["turn_count"] == 2 == rec["agent"]["turns"]

    one = trajectories["one"]
    assert [m["role"] for m in one["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert one["tool_calls"][0]["result"] == "5" and one["tool_calls"][0]["error"] is None
    assert records["one"]["tool_calls"] == 1 and records["one"]["request"]["tools"][:2] == ["add", "slow_add"]

    two = trajectories["two"]
    assert [(m["tool_call_id"], m["content"]) for m in two["messages"] if m["role"] == "tool"] == [
        ("c-a", "3"), ("c-b", "30")]
    pair = trajectories["slow-pair"]
    assert [m["content"] for m in pair["messages"] if m["role"] == "tool"] == ["2", "4", "6"]
    slow = [c for c in pair["tool_calls"] if c["name"] == "slow_add"]
    assert all(c["duration"] >= 0.3 for c in slow)  # each slept 0.3 s (its duration is measured) ...
    # ... side by side (parallel-safe): both started before either ended
    assert [line.split()[0] for line in project.slow_log()] == ["start", "start", "end", "end"]

    errors = {rid: trajectories[rid]["tool_calls"][0]["error"] for rid in
              ("malformed", "schema", "unknown", "raises", "refused", "outside")}
    assert "not valid JSON" in errors["malformed"]
    assert "invalid arguments for add at a" in errors["schema"]
    assert "unknown tool 'launch_rockets'" in errors["unknown"] and "add" in errors["unknown"]
    assert errors["raises"] == "RuntimeError: kaput"
    assert errors["refused"] == "refused: no"
    assert "outside" in errors["outside"]
    for rid in errors:
        assert records[rid]["agent"]["tool_errors"] == 1
        tool_msg = next(m for m in trajectories[rid]["messages"] if m["role"] == "tool")
        assert tool_msg["content"].startswith("Error: ")  # the model reads the error and goes on

    summary = project.summary()
    assert summary["mean_turns"] == 2.0 and summary["stop_reasons"] == {"final": len(ROWS)}
    assert summary["tool_error_rate"] == pytest.approx(6 / 13)  # 13 calls: 1 + 2 + 3 + one in each of 7 rows
    long = trajectories["long"]["tool_calls"][0]
    assert long["truncated"] is True and long["output_chars"] == 20_000
    assert len(long["result"]) == 16_000 and long["result"].startswith("abab") and long["result"].endswith("abab")
    assert "characters cut" in long["result"]
    # the second request of each conversation carried the tool results, under the strict checks
    second = [b for b in _chat_bodies(project.server) if any(m["role"] == "tool" for m in b["messages"])]
    assert len(second) == len(ROWS) and all(b.get("tools") for b in second)


@pytest.mark.slow
def test_provider_extras_go_back_and_streamed_tool_calls_are_assembled(pytester: pytest.Pytester) -> None:
    """A reasoning model's ``reasoning_content`` is sent back on the next turn; a streaming model's
    tool-call deltas make the same calls as a plain reply."""
    from pytest_jeval.testing.openai_server import Raw

    def completion(message: dict[str, Any], finish: str) -> Raw:
        return Raw({"id": "c", "object": "chat.completion", "created": 0, "model": "agent-model",
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})

    thinking = completion({"role": "assistant", "content": None, "reasoning_content": "I should add.",
                           "tool_calls": [{"id": "r1", "type": "function",
                                           "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
                          "tool_calls")
    scripts = {**SCRIPTS, "[think]": [thinking, "5"]}
    with FakeOpenAIServer(script_responder(scripts)) as server:
        project = AgentProject(pytester, server)
        project.write([{"id": "think", "q": "[think] it", "a": "5"}, {"id": "two", "q": "[two] it", "a": "3 and 30"}])
        assert run(project).ret == 0
        bodies = _chat_bodies(server)
        back = next(b for b in bodies if "[think]" in b["messages"][0]["content"] and len(b["messages"]) > 1)
        assert back["messages"][1]["reasoning_content"] == "I should add."
        plain = project.trajectories()["two"]
        project.write([{"id": "two", "q": "[two] it", "a": "3 and 30"}], head="", run="cache = false")
        suite = pytester.path / "suite.toml"
        suite.write_text(suite.read_text().replace('name = "agent-model"', 'name = "agent-model"\nstream = true'))
        assert run(project).ret == 0
        streamed = project.trajectories()["two"]
        assert any(b.get("stream") for b in _chat_bodies(server))
    assert streamed["messages"] == plain["messages"]


@pytest.mark.parametrize(("run_keys", "row", "reason", "detail"), [
    ("max_turns = 3", "[forever]", "max_turns", "max_turns = 3"),
    ("max_tool_calls = 4", "[two]", None, None),
    ("max_tool_calls = 2\nmax_turns = 9", "[forever]", "max_tool_calls", "max_tool_calls = 2"),
    ("max_episode_tokens = 10", "[forever]", "token_limit", "max_episode_tokens = 10"),
    ("episode_timeout = 1\nmax_turns = 1000", "[slow-forever]", "time_limit", "1s"),
])
@pytest.mark.slow
def test_each_limit_stops_the_episode_with_its_own_reason_and_it_is_still_scored(
        pytester: pytest.Pytester, run_keys: str, row: str, reason: str | None, detail: str | None) -> None:
    scripts = {**SCRIPTS, "[slow-forever]": [tool_answer(call("slow_add", {"a": 1, "b": 1}))]}
    with FakeOpenAIServer(script_responder(scripts), latency=0.0) as server:
        project = AgentProject(pytester, server)
        project.write([{"id": "x", "q": f"{row} go", "a": "never"}], run=run_keys)
        result = run(project)
        rec = project.records()["x"]
    assert result.ret == 1  # scored, and wrong
    if reason is None:  # a limit above what the episode needs does not stop it
        assert rec["agent"]["stop_reason"] == "final" and rec["tool_calls"] == 2
        return
    assert rec["agent"]["stop_reason"] == reason and detail in rec["agent"]["limit"]
    assert rec["error"] is None and rec["is_correct"] is False
    if reason == "max_turns":
        assert rec["turn_count"] == 3 and rec["tool_calls"] == 3
    if reason == "max_tool_calls":
        assert rec["tool_calls"] == 2


@pytest.mark.slow
def test_a_sandboxed_tool_that_times_out_is_killed_and_reported(project: AgentProject) -> None:
    code = "import time\nprint('started', flush=True)\ntime.sleep(60)"
    project.server.responder = script_responder({"[sleep]": [tool_answer(call("python", {"code": code})), "ok"]})
    project.write([{"id": "sleep", "q": "[sleep] now", "a": "ok"}], run="tool_timeout = 1")
    result = run(project)
    assert result.ret == 0, result.stdout.str()[-2000:]
    tool_call = project.trajectories()["sleep"]["tool_calls"][0]
    # killed at the 1 s bound: well before the program's 60 s sleep would have ended
    assert "timed out after 1s" in tool_call["error"] and tool_call["duration"] < 30


@pytest.mark.slow
def test_the_python_tool_has_no_network(project: AgentProject) -> None:
    port = project.server.port
    code = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "    print('CONNECTED')\nexcept OSError as e:\n    print('NO NETWORK', type(e).__name__)\n")
    project.server.responder = script_responder({"[net]": [tool_answer(call("python", {"code": code})), "ok"]})
    project.write([{"id": "net", "q": "[net] now", "a": "ok"}])
    assert run(project).ret == 0
    result = project.trajectories()["net"]["tool_calls"][0]["result"]
    assert "NO NETWORK" in result and "CONNECTED" not in result


@pytest.mark.slow
def test_a_rerun_is_served_from_the_cache_whole_episodes(project: AgentProject) -> None:
    project.write(ROWS)
    assert run(project).ret == 0
    first = project.records()
    sent = len(_chat_bodies(project.server))
    assert run(project).ret == 0
    assert len(_chat_bodies(project.server)) == sent  # nothing sent again
    again = project.records()
    assert all(r["cached"] for r in again.values())
    volatile = {"cached", "latency_seconds", "call_windows", "throughput_tok_per_sec", "agent", "attempts"}
    for rid, rec in first.items():
        assert {k: v for k, v in rec.items() if k not in volatile} == {
            k: v for k, v in again[rid].items() if k not in volatile}


@pytest.mark.slow
def test_xdist_gives_the_same_records_as_one_process(project: AgentProject) -> None:
    project.write(ROWS, run="cache = false")
    assert run(project).ret == 0
    alone = project.records()
    assert run(project, "-n", "2").ret == 0
    spread = project.records()
    stable = ("record_id", "model_answer", "is_correct", "turn_count", "tool_calls", "prompt_tokens")
    assert {r: [v[k] for k in stable] for r, v in alone.items()} == {r: [v[k] for k in stable] for r, v in spread.items()}
    assert {r: v["agent"]["stop_reason"] for r, v in alone.items()} == {
        r: v["agent"]["stop_reason"] for r, v in spread.items()}


def test_an_endpoint_failure_ends_the_episode_as_an_error_item(project: AgentProject) -> None:
    from pytest_jeval.testing.openai_server import Fault

    project.server.responder = script_responder({"[down]": [tool_answer(call("add", {"a": 1, "b": 1})), Fault("500")]})
    project.write([{"id": "down", "q": "[down] go", "a": "2"}])
    result = run(project)
    assert result.ret == 1
    result.assert_outcomes(errors=1)
    rec = project.records()["down"]
    assert rec["agent"]["stop_reason"] == "error" and "HTTP 500" in rec["error"] and rec["is_correct"] is None


def test_hostile_model_output_is_bounded(project: AgentProject) -> None:
    huge = json.dumps({"a": 1, "b": 2, "pad": "x" * 1_000_000})
    project.server.responder = script_responder({
        "[huge]": [tool_answer(call("add", huge))],
        "[flood]": [tool_answer(*[call("add", {"a": i, "b": i}, f"f{i}") for i in range(1000)])],
    })
    project.write([{"id": "huge", "q": "[huge]", "a": "x"}, {"id": "flood", "q": "[flood]", "a": "x"}],
                  run="max_turns = 3\nmax_tool_calls = 100")
    assert run(project, subprocess=True).ret == 1  # aiohttp warns of the 1 MB body; here that is no error
    recs, traj = project.records(), project.trajectories()
    assert recs["huge"]["agent"]["stop_reason"] == "max_turns"
    assert "invalid arguments" in traj["huge"]["tool_calls"][0]["error"]
    assert recs["flood"]["agent"]["stop_reason"] == "max_tool_calls" and recs["flood"]["turn_count"] == 1
    # every one of the 1,000 calls got exactly one reply (100 ran, the rest were refused)
    replies = [m for m in traj["flood"]["messages"] if m["role"] == "tool"]
    assert len(replies) == 1000 and len({m["tool_call_id"] for m in replies}) == 1000


@pytest.mark.parametrize(("bench", "message"), [
    ('tools = ["calculator", "teleport"]', "benchmarks[0].tools[1]: unknown tool 'teleport'"),
    ('backend = "direct"', "benchmarks[0].backend: 'agentic' cannot run as 'direct'"),
    ("max_turns = 0", "benchmarks[0].max_turns: Input should be greater than 0"),
])
def test_bad_agent_settings_are_refused_before_any_request(project: AgentProject, bench: str, message: str) -> None:
    project.write(ROWS, bench=bench)
    result = run(project)
    assert result.ret == 4
    assert message in result.stderr.str() + result.stdout.str()
    assert _chat_bodies(project.server) == []


def test_run_limits_that_make_no_sense_are_refused(project: AgentProject) -> None:
    for line, message in [("max_tool_calls = -1", "run.max_tool_calls"), ("episode_timeout = 0", "run.episode_timeout"),
                          ('trajectories = "s3"', "run.trajectories"), ("max_tool_output = 5", "run.max_tool_output")]:
        project.write(ROWS, run=line)
        result = run(project)
        assert result.ret == 4 and message in result.stderr.str(), line
    assert _chat_bodies(project.server) == []


def test_a_direct_only_benchmark_cannot_run_as_an_agent(pytester: pytest.Pytester) -> None:
    pytester.makefile(".toml", suite='[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                                      '[[benchmarks]]\nname = "gsm8k"\ndata_files = "g.jsonl"\ntools = ["calculator"]\n')
    pytester.makefile(".jsonl", g='{"question": "q", "answer": "#### 1"}')
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml")
    assert result.ret == 4
    assert 'benchmarks[0].tools: only valid with backend = "agent"' in result.stderr.str()


@pytest.mark.slow
def test_trajectories_inline_and_off(project: AgentProject) -> None:
    project.write(ROWS[:2], run='trajectories = "inline"')
    assert run(project).ret == 0
    rec = project.records()["one"]
    assert [m["role"] for m in rec["trajectory"]["messages"]] == ["user", "assistant", "tool", "assistant"]
    sidecar = project.pytester.path / "out" / "agentic_agent-model.jsonl.trajectories.jsonl"
    assert not sidecar.exists()
    project.write(ROWS[:2], run='trajectories = "off"\ncache = false')
    assert run(project).ret == 0
    assert "trajectory" not in project.records()["one"] and not sidecar.exists()


@pytest.mark.slow
def test_a_resumed_agent_item_keeps_its_stored_verdict_and_sends_nothing(project: AgentProject) -> None:
    rows = [*ROWS[:3], {"id": "wrong", "q": "[one] but wrong", "a": "6"}]
    project.write(rows, run="cache = false")
    assert run(project).ret == 1
    sent = len(_chat_bodies(project.server))
    stored = project.trajectories()
    result = run(project, "--jeval-resume")
    assert result.ret == 1
    result.assert_outcomes(passed=3, failed=1)
    assert len(_chat_bodies(project.server)) == sent
    assert project.trajectories() == stored  # the sidecar keeps every stored trajectory
    assert Answer  # the scripted server's answer type is part of the API used above


@pytest.mark.slow
def test_open_episodes_are_bounded_and_the_terminal_sums_them_up(pytester: pytest.Pytester) -> None:
    scripts = {"[step]": [tool_answer(call("add", {"a": 1, "b": 1})), "2"]}
    # the first requests wait until two are in flight: two open episodes overlap however slow the machine
    with FakeOpenAIServer(HoldUntilConcurrent(script_responder(scripts), 2), latency=0.1) as server:
        project = AgentProject(pytester, server)
        project.write([{"id": f"s{i}", "q": f"[step] {i}", "a": "2"} for i in range(6)],
                      run="max_episodes_in_flight = 2\nmax_concurrency = 8")
        result = run(project)
        assert result.ret == 0
        assert server.max_in_flight == 2  # 8 slots, but only two episodes open at a time
    result.stdout.fnmatch_lines(["agent: agentic x agent-model: 6 episodes, 2.00 turns and 1.00 tool calls each, "
                                 "tool errors 0.0%; stopped: final 6"])


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_records_every_episode_once(pytester: pytest.Pytester) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    scripts = {"[step]": [tool_answer(call("add", {"a": 1, "b": 1})), "2"]}
    # 12 requests answered (6 episodes of 2 turns, two open at a time), then the server holds every
    # request: the killed run cannot have finished more than 6 episodes, whatever the machine's speed
    hold = HoldAfter(script_responder(scripts), 12)
    with FakeOpenAIServer(hold, slots=2) as server:
        project = AgentProject(pytester, server)
        project.write([{"id": f"s{i}", "q": f"[step] {i}", "a": "2"} for i in range(30)],
                      run="max_concurrency = 2\nmax_episodes_in_flight = 2\ncache = false")
        out = pytester.path / "out" / "agentic_agent-model.jsonl"
        cmd = [sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "-q", "-p", "no:cacheprovider"]
        proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (out.exists() and len(out.read_bytes().splitlines()) >= 4):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first = {json.loads(line)["record_id"] for line in out.read_text().splitlines()}
        assert 4 <= len(first) <= 6
        server.responder = hold.inner
        resumed = subprocess.run([*cmd, "--jeval-resume"], cwd=pytester.path, capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stdout[-2000:]
    lines = [json.loads(line)["record_id"] for line in out.read_text().splitlines()]
    assert sorted(lines) == sorted(f"s{i}" for i in range(30))  # each exactly once
    assert set(project.trajectories()) == set(lines)
