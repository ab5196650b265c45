"""External agent backends end to end: the fake agent CLI behind the recording proxy, through the plugin."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_jeval.agents.external.episode import containment
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.external import ROWS, ExternalProject, chat_bodies, fake_agent_command, survivors

SECRET = "sk-jeval-real-" + "7f3a9c" * 6
"""The model's real key (set through ``api_key_env``): it must reach the model server and nothing else."""

SCRIPT = script_responder({
    "6*7": [tool_answer(ToolCallSpec("calculator", {"expression": "6*7"})), "42"],
    "20+3": [tool_answer(ToolCallSpec("calculator", {"expression": "20+3"})), "23"],
    "forever": [tool_answer(ToolCallSpec("calculator", {"expression": "1+1"}))],
})


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Iterator[ExternalProject]:
    monkeypatch.setenv("EXT_REAL_KEY", SECRET)
    with FakeOpenAIServer(SCRIPT, api_key=SECRET, models=("ext-model",)) as server:
        marker = f"ext-marker-{uuid.uuid4().hex}"
        yield ExternalProject(pytester, server, marker)
        assert survivors(marker) == [], "a process of the agent outlived the run"


KEY = 'api_key_env = "EXT_REAL_KEY"'


@pytest.mark.slow
def test_a_fake_agent_episode_is_proxied_recorded_and_scored(project: ExternalProject) -> None:
    project.write({"ext_plain": fake_agent_command("normal", project.marker),
                   "ext_stream": fake_agent_command("normal", project.marker, "--stream")}, model=KEY,
                  run="cache = false")
    result = project.run()
    result.assert_outcomes(passed=4)
    for bench in ("ext_plain", "ext_stream"):
        records = project.records(bench)
        assert {r["record_id"]: r["model_answer"] for r in records.values()} == {"mul": "42", "add": "23"}
        rec = records["mul"]
        assert rec["backend"] == "command" and rec["is_correct"] is True
        assert rec["turn_count"] == 2 and rec["tool_calls"] == 1 and rec["agent"]["stop_reason"] == "final"
        # the proxy's tokens are the model server's usage summed over the proxied turns
        assert rec["prompt_tokens"] > 0 and rec["completion_tokens"] > 0
        traj = project.trajectories(bench)["mul"]
        assert [m["role"] for m in traj["messages"]] == ["user", "assistant", "tool", "assistant"]
        assert traj["messages"][2]["content"] == "42"  # the agent ran the calculator itself
        assert traj["tool_calls"][0]["name"] == "calculator" and traj["tool_calls"][0]["result"] == "42"
        ext = traj["external"]
        assert ext["exit_status"] == 0 and ext["stdout"].strip() == "42" and ext["containment"] == containment()
        assert [r["status"] for r in ext["requests"]] == [200, 200] and ext["survivors"] == 0
        assert "{prompt_file}" not in " ".join(ext["argv"]) and "6*7" not in " ".join(ext["argv"])
        assert all(r["stream"] is (bench == "ext_stream") for r in ext["requests"])  # SSE to the agent
    bodies = chat_bodies(project.server)
    assert len(bodies) == 8  # 2 benchmarks x 2 samples x 2 turns, every one through the proxy
    assert all(b["model"] == "ext-model" and b["tools"][0]["function"]["name"] == "calculator" for b in bodies)


@pytest.mark.slow
def test_a_rerun_replays_the_proxied_turns_from_the_cache(project: ExternalProject) -> None:
    project.write({"ext_plain": fake_agent_command("normal", project.marker)}, model=KEY, rows=ROWS[:1])
    project.run().assert_outcomes(passed=1)
    sent = len(chat_bodies(project.server))
    assert sent == 2
    project.run().assert_outcomes(passed=1)
    assert len(chat_bodies(project.server)) == sent  # the agent ran again; the model was not asked again
    rec = project.records("ext_plain")["mul"]
    assert rec["cached"] is True and rec["model_answer"] == "42" and rec["turn_count"] == 2


@pytest.mark.slow
def test_a_hanging_agent_is_killed_at_the_time_limit(project: ExternalProject) -> None:
    project.write({"ext_hang": fake_agent_command("hang", project.marker)}, model=KEY,
                  run="episode_timeout = 30\ncache = false")  # room for its one turn on a loaded machine
    result = project.run()
    result.assert_outcomes(failed=2)  # the hanging agent has no answer
    assert survivors(project.marker) == []
    for rec in project.records("ext_hang").values():
        assert rec["agent"]["stop_reason"] == "time_limit" and rec["error"] is None and rec["is_correct"] is False
        assert rec["turn_count"] == 1  # its one proxied turn is kept
    ext = project.trajectories("ext_hang")["mul"]["external"]
    assert ext["timed_out"] is True and ext["exit_status"] != 0
    assert 30 <= ext["seconds"] < 120  # killed at the limit, long before the hour-long sleep ends


@pytest.mark.slow
def test_an_agent_that_fails_prints_garbage_or_floods_is_contained(project: ExternalProject) -> None:
    project.write({"ext_exit1": fake_agent_command("exit1", project.marker),
                   "ext_garbage": fake_agent_command("garbage", project.marker),
                   "ext_flood": fake_agent_command("flood", project.marker, "--flood-mb", "3")}, model=KEY)
    result = project.run("-rA")
    result.assert_outcomes(passed=0, failed=4, errors=2)
    for rec in project.records("ext_exit1").values():
        assert rec["agent"]["stop_reason"] == "error" and rec["is_correct"] is None
        assert "exited with status 1" in rec["error"] and "failing on purpose" in rec["error"]
    for rec in project.records("ext_garbage").values():
        assert rec["is_correct"] is False and "not an answer" in rec["model_answer"]
        assert rec["agent"]["stop_reason"] == "final"
    traj = project.trajectories("ext_flood")["mul"]["external"]
    assert traj["stdout_bytes"] > 3_000_000 and traj["stdout_truncated"] is True and len(traj["stdout"]) <= 16_000
    rec = project.records("ext_flood")["mul"]
    assert rec["is_correct"] is False and len(rec["model_answer"]) <= (1 << 20) + 100
    assert rec["model_answer"].endswith("42")  # the tail of the output is kept: the answer came last


@pytest.mark.slow
@pytest.mark.parametrize(("where", "why"), [("/var/tmp", "No such file or directory"),
                                            ("tmp", "No such file or directory")])
def test_an_agent_writing_outside_its_workspace_is_contained(project: ExternalProject, where: str, why: str) -> None:
    """The host's file system is not in the agent's sandbox (its /tmp is a private one; the host's
    /var/tmp and pytester's folder under /tmp are simply not there)."""

    base = Path(where) if where.startswith("/") else project.pytester.path  # pytester's folder is under /tmp
    target = base / f"jeval-escape-{uuid.uuid4().hex}.txt"
    try:
        project.write({"ext_escape": fake_agent_command("escape", project.marker, "--escape-to", str(target))},
                      model=KEY)
        result = project.run()
        assert not target.exists()
    finally:
        target.unlink(missing_ok=True)
    records = project.records("ext_escape")
    for rec in records.values():
        assert rec["agent"]["stop_reason"] == "error" and why in rec["error"], rec["error"]
    result.assert_outcomes(errors=len(records))


@pytest.mark.slow
def test_an_agent_looking_for_the_real_key_finds_nothing_and_a_daemon_does_not_survive(
        project: ExternalProject) -> None:
    needle = hashlib.sha256(SECRET.encode()).hexdigest()
    project.write({"ext_daemon": fake_agent_command("daemon", project.marker),
                   "ext_steal": fake_agent_command("steal", project.marker, "--needle-sha256", needle)},
                  model=KEY)
    result = project.run("--junitxml=junit.xml")
    result.assert_outcomes(passed=2, failed=2)  # the key was used (the strict server demands it) ...
    # the daemon agent answers; in its sandbox its daemon dies with it, without one the sweep kills it
    assert survivors(project.marker) == []
    daemon = project.trajectories("ext_daemon")["mul"]["external"]
    assert daemon["exit_status"] == 0 and daemon["survivors"] == (0 if daemon["containment"] == "bwrap" else 1)
    assert {r["model_answer"] for r in project.records("ext_daemon").values()} == {"42", "23"}
    for traj in project.trajectories("ext_steal").values():
        stdout = traj["external"]["stdout"]
        sources = int(stdout.split("sources=")[1].split()[0])
        assert sources > 5 and stdout.strip().endswith("found=0"), stdout  # ... and the agent found it nowhere
        assert SECRET not in " ".join(traj["external"]["argv"])
    leaks = [p for p in project.pytester.path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == [] and (project.pytester.path / "junit.xml").is_file()
    assert SECRET not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(("run", "bench", "reason", "turns"), [
    ("", "max_turns = 2", "max_turns", 2),
    ("max_episode_tokens = 5", "", "token_limit", 0),  # reserved before forwarding: the prompt alone is over 5
])
@pytest.mark.slow
def test_the_proxy_enforces_max_turns_and_the_token_budget(project: ExternalProject, run: str, bench: str,
                                                          reason: str, turns: int) -> None:
    rows = [{"id": "loop", "q": "Add forever.", "a": "never"}]
    project.write({"ext_limit": fake_agent_command("normal", project.marker)}, model=KEY, rows=rows,
                  run=run + "\ncache = false", bench_extra=bench)
    result = project.run()
    result.assert_outcomes(failed=1)  # stopped by a limit: scored (wrong), not an error
    rec = project.records("ext_limit")["loop"]
    assert rec["agent"]["stop_reason"] == reason and rec["turn_count"] == turns and rec["error"] is None
    assert len(chat_bodies(project.server)) == turns  # the refused request never reached the model
    ext = project.trajectories("ext_limit")["loop"]["external"]
    assert ext["requests"][-1]["status"] == 400 and ext["requests"][-1]["code"] == reason
    assert ext["exit_status"] != 0  # the agent gave up on the refusal


def test_a_missing_agent_binary_is_a_usage_error_before_any_request(project: ExternalProject) -> None:
    project.write({"ext_missing": ["no-such-agent-binary-xyz", "--prompt-file", "{prompt_file}"]}, model=KEY)
    result = project.run()
    assert result.ret == 4
    err = result.stderr.str()
    assert "'no-such-agent-binary-xyz' is not on PATH" in err and "benchmarks[0].backend" in err
    assert project.server.request_count == 0
