"""An agent that abuses its recording proxy, through the plugin (``backend = "command"``, ``abuse_agent.py``).

Each attack is the one the proxy fell to: a deeply nested body (a 500, which clients retry), a
31 MiB body (read and parsed in full on the shared event loop), 3,000 invalid requests (all kept
in the trajectory, none counted), parameters past the suite's settings (``max_tokens = 999999``,
``n``, ``logit_bias``, ``temperature`` sent on), eight parallel requests against a token budget
(all forwarded).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.agents.external.proxy import KEPT_REFUSED
from pytest_jeval.testing.openai_server import FakeOpenAIServer

ABUSE_AGENT = str(Path(__file__).with_name("abuse_agent.py").resolve())
BENCH = '''
from pytest_jeval import Benchmark, Sample
from pytest_jeval.core.score import Score


def to_sample(row, index, ctx):
    return Sample(id=row["id"], input=row["q"], target=row["a"])


BENCHMARK = Benchmark(name="{name}", to_sample=to_sample, prompt=lambda s: s.input, backends=("agent",))


def test_{name}(sample, episode, response, score):
    score(Score(correct=False, extracted=episode.final_text))
'''
MODES = ("params", "deep", "giant", "flood", "parallel")
ANSWER = " ".join(["forty-two"] * 30)
"""About 36 tokens a reply with its prompt (the test server counts words), as in the attack."""


def _run(pytester: pytest.Pytester, server: FakeOpenAIServer) -> pytest.RunResult:
    blocks = []
    for mode in MODES:
        (pytester.path / f"bench_{mode}.py").write_text(BENCH.replace("{name}", mode))
        (pytester.path / f"{mode}.jsonl").write_text(json.dumps({"id": "x", "q": "What is 6*7?", "a": "42"}) + "\n")
        blocks.append(textwrap.dedent(f"""
            [[benchmarks]]
            name = "{mode}"
            module = "bench_{mode}.py"
            data_files = "{mode}.jsonl"
            backend = "command"
            command = {json.dumps([sys.executable, ABUSE_AGENT, "--mode", mode])}
            max_turns = 10
            """))
    (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        episode_timeout = 300
        max_episode_tokens = 60
        cache = false

        [[models]]
        name = "m"
        base_url = "{server.base_url}"
        max_tokens = 64
        temperature = 0.0
        """) + "".join(blocks))
    return pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")


def _outcome(pytester: pytest.Pytester, mode: str) -> tuple[dict[str, Any], dict[str, Any], list[list[Any]]]:
    record = json.loads((pytester.path / "out" / f"{mode}_m.jsonl").read_text().splitlines()[0])
    trajectory = json.loads((pytester.path / "out" / f"{mode}_m.jsonl.trajectories.jsonl").read_text().splitlines()[0])
    return record, trajectory["external"], json.loads(record["model_answer"])


@pytest.mark.slow
def test_an_agent_abusing_its_proxy_is_bounded(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(lambda body, n: ANSWER, models=("m",)) as server:
        result = _run(pytester, server)
        bodies = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    result.assert_outcomes(failed=len(MODES))  # every agent answered (its statuses); none was a harness error

    # parameters: the suite's settings bound what the agent asks, and the record shows what was sent
    record, ext, statuses = _outcome(pytester, "params")
    assert statuses == [[200, None]]
    sent = bodies[0]
    assert sent["max_tokens"] <= 64 and sent["temperature"] == 0.0
    assert not {"n", "logit_bias", "top_p", "seed", "presence_penalty"} & set(sent)
    assert set(ext["requests"][0]["dropped"]) >= {"n", "logit_bias", "temperature", "top_p", "seed"}

    # a body nested 500,000 deep is a 400 (clients do not retry it), not a 500
    record, ext, statuses = _outcome(pytester, "deep")
    assert statuses == [[400, "invalid_request"]]

    # a 31 MiB body is refused before it is read, and counts toward the limits
    record, ext, statuses = _outcome(pytester, "giant")
    assert statuses == [[413, "body_too_large"]] and ext["refused_requests"] == 1

    # 3,000 invalid requests: the episode stops at max_turns; the trajectory keeps a count and the first few
    record, ext, statuses = _outcome(pytester, "flood")
    assert len(statuses) == 3000 and statuses[0] == [400, "invalid_request"]
    assert statuses[9] == [400, "invalid_request"] and statuses[10] == [400, "episode_stopped"]
    assert record["agent"]["stop_reason"] == "max_turns"
    assert ext["refused_requests"] == 3000 and len(ext["requests"]) == KEPT_REFUSED

    # eight parallel requests against max_episode_tokens = 60: the budget is reserved before forwarding
    record, ext, statuses = _outcome(pytester, "parallel")
    parallel_bodies = bodies[1:]  # after the params agent's one request (the deep, giant and flood ones sent none)
    assert len(parallel_bodies) <= 2 and record["agent"]["stop_reason"] == "token_limit"
    first, *second = [b["max_tokens"] for b in parallel_bodies]
    assert first < 60 and all(m <= 60 - 36 for m in second)  # each capped to what was left of the budget
    assert 1 <= statuses.count([200, None]) <= len(parallel_bodies)
    assert all(s == [200, None] or s == [400, "token_limit"] for s in statuses)
