"""taubench end to end on the project's test server: a scripted agent, a scripted [user] and a scripted [judge]
(tests/support/taubench.py) over real HTTP, on the bundled fixture in tau2-bench's layout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.taubench import FIXTURE, TauScript, suite_text

MODELS = ("agent", "user", "judge")


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def verdicts(rows: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {r["record_id"]: (r["is_correct"], r["reward"], r["deterministic_reward"], r["nl_assertion_reward"])
            for r in rows}


def test_solved_failed_on_db_failed_on_communication_and_judged(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(TauScript(), models=MODELS) as server:
        (pytester.path / "suite.toml").write_text(suite_text(server.base_url))
        result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        requests = server.requests
    assert result.ret == 1, result.stdout.str()
    rows = {r["record_id"]: r for r in records(pytester.path / "out" / "taubench_agent.jsonl")}
    assert verdicts(list(rows.values())) == {
        "retail-0": (True, 1.0, 1.0, None),     # cancelled as the gold does
        "retail-1": (False, 0.0, 0.0, None),    # read the order, never said the price
        "retail-2": (True, 1.0, 1.0, 1.0),      # a refusal, judged to meet the NL assertion
        "retail-3": (False, 0.0, 0.0, None),    # cancelled with the wrong reason
    }
    info = {k: r["reward_info"] for k, r in rows.items()}
    assert info["retail-0"]["db"]["reason"] == "the final database equals the gold replay"
    assert info["retail-1"]["communicate"]["checks"] == [{"info": "19.75", "met": False}]
    assert info["retail-1"]["db"]["match"] is True
    assert info["retail-3"]["db"]["match"] is False and info["retail-3"]["communicate"]["reward"] == 1.0
    assert info["retail-2"]["nl_assertion"]["checks"][0]["met"] is True
    assert all(r["agent"]["stop_reason"] == "final" for r in rows.values())
    assert rows["retail-0"]["taubench_data"]["source"] == f"data_dir:{FIXTURE}"
    assert rows["retail-0"]["deviations"] and rows["retail-0"]["user_guidelines"] == "pytest-jeval"
    # the conversation opens with the agent's greeting, then the user speaks: the user model is asked first
    user_first = [r["body"] for r in requests if (r["body"] or {}).get("model") == "user"]
    assert user_first and all(b["messages"][1] == {"role": "user", "content": "Hi! How can I help you today?"}
                              for b in user_first)
    assert "<scenario>\nInstructions:\n\tDomain: retail" in user_first[0]["messages"][0]["content"]
    agent_bodies = [r["body"] for r in requests if (r["body"] or {}).get("model") == "agent"]
    assert agent_bodies[0]["messages"][1] == {"role": "assistant", "content": "Hi! How can I help you today?"}
    assert any(t["function"]["name"] == "cancel_pending_order" for t in agent_bodies[0]["tools"])
    summary = json.loads((pytester.path / "out" / "taubench_agent.jsonl.summary.json").read_text())
    retail = summary["taubench"]["domains"]["retail"]
    assert retail["reward"] == 0.5 and retail["tasks"] == 4 and retail["do_nothing_passes"] == 1
    assert summary["taubench"]["data"]["retail"]["sha256"]["db.json"]


@pytest.mark.slow
def test_without_a_judge_the_judged_task_is_unscored_and_skip_scores_the_deterministic_part(
        pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(TauScript(), models=MODELS) as server:
        (pytester.path / "suite.toml").write_text(suite_text(server.base_url, judge=False))
        pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        rows = {r["record_id"]: r for r in records(pytester.path / "out" / "taubench_agent.jsonl")}
        assert rows["retail-2"]["is_correct"] is None and rows["retail-2"]["unscored"] is True
        assert "need the [judge] model" in rows["retail-2"]["scoring_metadata"]["unscored_reason"]
        assert rows["retail-2"]["deterministic_reward"] == 1.0
        (pytester.path / "suite.toml").write_text(suite_text(
            server.base_url, out="skip", judge=False, extra='options = { nl_assertions = "skip" }'))
        pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    skipped = {r["record_id"]: r for r in records(pytester.path / "skip" / "taubench_agent.jsonl")}
    assert skipped["retail-2"]["is_correct"] is True and skipped["retail-2"]["nl_assertion_reward"] is None
    assert any("NL assertions not judged" in d for d in skipped["retail-2"]["deviations"])
    assert not any("NL assertions not judged" in d for d in skipped["retail-0"]["deviations"])


@pytest.mark.slow
def test_xdist_gives_the_same_records_as_one_process(pytester: pytest.Pytester) -> None:
    runs = {}
    for n in ("0", "2"):
        with FakeOpenAIServer(TauScript(), models=MODELS) as server:
            (pytester.path / "suite.toml").write_text(suite_text(server.base_url, out=f"out{n}"))
            pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-n", n)
            runs[n] = verdicts(records(pytester.path / f"out{n}" / "taubench_agent.jsonl"))
    assert len(runs["0"]) == 4 and runs["2"] == runs["0"]


def test_repeats_give_pass_hat_k(pytester: pytest.Pytester) -> None:
    """retail-0's second conversation opens differently and fails: 2 of 3 trials pass."""
    with FakeOpenAIServer(TauScript(), models=MODELS) as server:
        (pytester.path / "suite.toml").write_text(suite_text(server.base_url, extra="repeats = 3"))
        pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    rows = records(pytester.path / "out" / "taubench_agent.jsonl")
    assert sorted(Counter(r["agent"]["repeat_of"] for r in rows).values()) == [3, 3, 3, 3]
    passed = Counter(r["agent"]["repeat_of"] for r in rows if r["is_correct"])
    assert passed == {"retail-0": 2, "retail-2": 3}
    summary = json.loads((pytester.path / "out" / "taubench_agent.jsonl.summary.json").read_text())
    expected = {"1": (2 / 3 + 1) / 4, "2": (1 / 3 + 1) / 4, "3": 1 / 4}
    assert summary["pass_hat_k"] == pytest.approx(expected)
    assert summary["taubench"]["domains"]["retail"]["pass_hat_k"] == pytest.approx(expected)
    assert summary["pass_at_k"] == pytest.approx({"1": (2 / 3 + 1) / 4, "2": 0.5, "3": 0.5})


@pytest.mark.slow
def test_resume_after_sigkill_completes_every_task_exactly_once(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(TauScript(), models=MODELS, latency=0.1, slots=2) as server:
        (pytester.path / "suite.toml").write_text(suite_text(server.base_url, extra="repeats = 5",
                                                             run="max_concurrency = 2"))
        out = pytester.path / "out" / "taubench_agent.jsonl"
        cmd = [sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "--jeval-no-cache", "-q",
               "-p", "no:cacheprovider"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                env=env)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(records(out)) < 3 and proc.poll() is None:
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = len(records(out))
        assert 3 <= before < 20
        done = subprocess.run([*cmd, "--jeval-resume"], cwd=pytester.path, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stdout[-2000:]
    ids = Counter(r["record_id"] for r in records(out))
    assert len(ids) == 20 and set(ids.values()) == {1}


def test_oracle_and_nop_on_the_fixture_never_ask_the_models(pytester: pytest.Pytester) -> None:
    """No [user] needed: the oracle replays the gold (every task 1), nop does nothing (only the refusals)."""
    for agent in ("oracle", "nop"):
        (pytester.path / "suite.toml").write_text(f"""
[run]
output_dir = "{agent}"

[[models]]
name = "m"
base_url = "http://127.0.0.1:9/v1"

[[benchmarks]]
name = "taubench"
agent = "{agent}"
data_dir = "{FIXTURE}"
options = {{ nl_assertions = "skip" }}
""")
        pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    oracle = records(pytester.path / "oracle" / "taubench_m.jsonl")
    assert len(oracle) == 9 and all(r["reward"] == 1.0 for r in oracle)
    assert all(r["reward_info"]["db"]["match"] for r in oracle)
    nop = {r["record_id"]: r["is_correct"] for r in records(pytester.path / "nop" / "taubench_m.jsonl")}
    assert {k for k, v in nop.items() if v} == {"retail-2", "airline-2"}


@pytest.mark.parametrize(("suite", "message"), [
    ('subset = "shop"', "*taubench: unknown domain 'shop' (subset); the domains are: retail, airline*"),
    ('split = "dev"', "*taubench: the retail domain has no split 'dev'; its splits are: base, test, train*"),
    ('data_dir = "empty"', "*taubench: data_dir */empty has no retail/tasks.json, db.json, policy.md, "
                           "split_tasks.json*"),
])
def test_bad_input_is_a_usage_error_before_any_request(pytester: pytest.Pytester, suite: str, message: str) -> None:
    (pytester.path / "empty").mkdir()
    with FakeOpenAIServer(TauScript(), models=MODELS) as server:
        text = suite_text(server.base_url).replace(f'data_dir = "{FIXTURE}"\n', "")
        if "data_dir" not in suite:
            text = text.replace('subset = "retail"\n', f'subset = "retail"\ndata_dir = "{FIXTURE}"\n')
        (pytester.path / "suite.toml").write_text(text.replace('subset = "retail"', suite)
                                                  if "subset" in suite else text + suite + "\n")
        result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        assert server.request_count == 0
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_an_agent_that_calls_the_model_needs_a_user_model(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text(f"""
[[models]]
name = "m"
base_url = "http://127.0.0.1:9/v1"

[[benchmarks]]
name = "taubench"
data_dir = "{FIXTURE}"
""")
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*benchmarks[[]0[]].name: 'taubench' talks with a simulated user played by the "
                                 "[[]user[]] model; add a [[]user[]] table*"])
