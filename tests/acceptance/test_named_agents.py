"""Named agents through the plugin: ``oracle`` replays the gold solution (score 1), ``nop`` does nothing
(score 0), neither calls the model; a benchmark an agent cannot run refuses it before any request."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

SUITE = """
    [run]
    output_dir = "out"

    [[models]]
    name = "m"
    base_url = "http://127.0.0.1:9/v1"   # nothing listens here: oracle and nop never call the model

    [[benchmarks]]
    name = "retail"
    agent = "{agent}"
"""


def run(pytester: pytest.Pytester, agent: str) -> tuple[pytest.RunResult, list[dict[str, object]]]:
    (pytester.path / "suite.toml").write_text(textwrap.dedent(SUITE.format(agent=agent)))
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    path = Path(pytester.path / "out" / "retail_m.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return result, records


@pytest.mark.slow
def test_the_oracle_scores_one_on_every_task_and_nop_zero(pytester: pytest.Pytester) -> None:
    result, records = run(pytester, "oracle")
    assert result.ret == 0, result.stdout.str()
    assert records and all(r["is_correct"] is True for r in records)
    assert {r["agent"]["name"] for r in records} == {"oracle"}  # type: ignore[index]
    assert all(r["prompt_tokens"] in (None, 0) for r in records)  # no request reached any endpoint
    result.stdout.fnmatch_lines(["*calls: 0 sent*"])

    result, records = run(pytester, "nop")
    assert result.ret == 1
    # a do-nothing agent leaves the database as it was: it passes exactly the tasks whose gold changes nothing
    # and asks for no output (retail-011: a request the policy refuses), and fails every other
    from pytest_jeval.benchmarks.retail import WRITE_TOOLS, read_tasks
    from pytest_jeval.benchmarks.retail.database import DATA_DIR

    idle = {t["id"] for t in read_tasks(DATA_DIR / "tasks.jsonl")
            if not t["outputs"] and not any(a["name"] in WRITE_TOOLS for a in t["actions"])}
    assert idle == {"retail-011"}
    assert records and {r["record_id"] for r in records if r["is_correct"] is True} == idle
    assert all(r["is_correct"] is False for r in records if r["record_id"] not in idle)
    assert {r["agent"]["name"] for r in records} == {"nop"}  # type: ignore[index]


def test_an_agent_a_benchmark_cannot_run_is_refused_before_any_request(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text(textwrap.dedent("""
        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"

        [[benchmarks]]
        name = "toolcall15"
        agent = "oracle"
    """))
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*benchmarks[[]0[]].agent: 'toolcall15' cannot run with the 'oracle' agent: it has "
                                 "no gold solution to replay; the agents it runs with are: *nop*orchestrator*"])
    assert "oracle" not in result.stderr.str().split("runs with are:")[1]


@pytest.mark.parametrize(("key", "message"), [
    ('agent = "oracel"', "*unknown agent 'oracel'; the registered agents are: *oracle*orchestrator*"),
    ('agent = "oracle"\nbackend = "direct"', "*benchmarks[[]0[]].agent: a named agent drives the built-in episode loop*"),
])
def test_bad_agent_keys_are_usage_errors(pytester: pytest.Pytester, key: str, message: str) -> None:
    (pytester.path / "suite.toml").write_text(textwrap.dedent("""
        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"

        [[benchmarks]]
        name = "gsm8k"
    """) + key + "\n")
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
