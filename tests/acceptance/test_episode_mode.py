"""Episode mode: a benchmark that keeps a memory runs its samples as one sequence per model.

The scripted model below can answer the later questions only when an earlier episode's answer is in
its memory: it gets them right in sequence and wrong without memory. ``-n 2`` gives the records of
``-n 0``; ``-k`` runs a selected episode with the memory the sequence gives it; a run killed with
SIGKILL and resumed finishes the sequence with each episode once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer

BENCH = '''
from pytest_jeval import Benchmark, Sample, Score
from pytest_jeval.agents import AgentSpec


def to_sample(row, index, ctx):
    return Sample(id=row["id"], input=row["q"], target=row["a"])


def prompt(sample):
    return [{"role": "user", "content": sample.input}]


def memory(sample, earlier):
    lines = [f"- {r.sample.input} => {r.turns[-1]['content'] if r.turns else ''}" for r in earlier]
    return [{"role": "system", "content": "What you remember:\\n" + "\\n".join(lines)},
            {"role": "user", "content": sample.input}]


BENCHMARK = Benchmark(name="recall", to_sample=to_sample, prompt=prompt, backends=("agent",),
                      agent=AgentSpec(memory=memory))


def test_recall(sample, episode, score):
    score(Score(correct=episode.final_text.strip() == sample.target, extracted=episode.final_text))
'''

ROWS = [{"id": "r01", "q": "Remember this: the code is 7. What is the code?", "a": "7"}] + [
    {"id": f"r{i:02d}", "q": f"Question {i}: what was the code you were told?", "a": "7"} for i in range(2, 13)]


def model(body: dict[str, Any], attempt: int) -> str:
    """Answers the first question from its text; the others only from what its memory holds."""
    messages = body["messages"]
    question = messages[-1]["content"]
    if "the code is 7" in question:
        return "7"
    remembered = " ".join(m["content"] for m in messages if m["role"] == "system")
    return "7" if "=> 7" in remembered else "I do not know."


SUITE = """
[run]
output_dir = "{out}"
cache = false
{run}

[[models]]
name = "m1"
base_url = "{url}"

[[models]]
name = "m2"
base_url = "{url}"

[[benchmarks]]
name = "recall"
module = "bench.py"
data_files = "rows.jsonl"
{bench}
"""


def project(path: Path, url: str, out: str, run: str = "episode_mode = true", bench: str = "") -> Path:
    (path / "bench.py").write_text(textwrap.dedent(BENCH))
    (path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    suite = path / f"{out}.toml"
    suite.write_text(SUITE.format(out=out, url=url, run=run, bench=bench))
    return suite


def records(path: Path, model_name: str = "m1") -> dict[str, dict[str, Any]]:
    lines = (path / f"recall_{model_name}.jsonl").read_text().splitlines()
    return {r["record_id"]: r for r in map(json.loads, lines)}


@pytest.mark.slow
def test_in_sequence_the_model_remembers_and_without_memory_it_cannot(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(model) as server:
        suite = project(pytester.path, server.base_url, "seq")
        result = pytester.runpytest("--jeval-config", str(suite))
        result.assert_outcomes(passed=24)
        got = records(pytester.path / "seq")
        assert all(r["is_correct"] for r in got.values())
        memory = got["r05"]["agent"]["memory"]
        assert memory == {"policy": "recent-successes", "size": 3, "position": 4,
                          "fed_by": ["r02", "r03", "r04"], "missing": []}
        assert got["r01"]["agent"]["memory"]["fed_by"] == []

        for run in ("", 'episode_mode = true\nepisode_memory = "none"'):  # no episode mode; a policy of none
            suite = project(pytester.path, server.base_url, "plain", run=run)
            result = pytester.runpytest("--jeval-config", str(suite))
            result.assert_outcomes(passed=2, failed=22)
            got = records(pytester.path / "plain")
            assert got["r01"]["is_correct"] and not any(got[f"r{i:02d}"]["is_correct"] for i in range(2, 13))


@pytest.mark.slow
def test_two_workers_keep_each_sequence_in_order(pytester: pytest.Pytester) -> None:
    volatile = {"latency_seconds", "throughput_tok_per_sec", "attempts", "cached", "call_windows", "ttft"}

    def stable(rs: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {rid: {k: v for k, v in r.items() if k not in volatile and k != "agent"}
                | {"memory": r["agent"]["memory"]} for rid, r in rs.items()}

    with FakeOpenAIServer(model, latency=0.02) as server:
        serial = project(pytester.path, server.base_url, "serial")
        parallel = project(pytester.path, server.base_url, "parallel")
        pytester.runpytest("--jeval-config", str(serial)).assert_outcomes(passed=24)
        result = pytester.runpytest_subprocess("--jeval-config", str(parallel), "-n", "2")
        result.assert_outcomes(passed=24)
        result.stdout.fnmatch_lines(["*2 workers*"])
        for name in ("m1", "m2"):
            assert stable(records(pytester.path / "serial", name)) == stable(records(pytester.path / "parallel", name))


@pytest.mark.slow
def test_a_selected_episode_gets_the_memory_the_sequence_gives_it(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(model) as server:
        suite = project(pytester.path, server.base_url, "sel")
        # alone in a fresh output directory: the earlier episodes have no outcome, and are listed as missing
        pytester.runpytest("--jeval-config", str(suite), "-k", "r04 and m1").assert_outcomes(failed=1)
        alone = records(pytester.path / "sel")["r04"]
        assert alone["agent"]["memory"]["missing"] == ["r01", "r02", "r03"] and not alone["is_correct"]
        # after the whole sequence ran, a selected episode remembers the stored outcomes
        pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=24)
        result = pytester.runpytest("--jeval-config", str(suite), "-k", "r09 and m1")
        result.assert_outcomes(passed=1)
        again = records(pytester.path / "sel")["r09"]
        assert again["agent"]["memory"]["fed_by"] == ["r06", "r07", "r08"] and again["is_correct"]


@pytest.mark.slow
def test_sigkill_then_resume_finishes_the_sequence_with_each_episode_once(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer(model, latency=0.3) as server:
        suite = project(pytester.path, server.base_url, "out", bench="")
        out = pytester.path / "out" / "recall_m1.jsonl"
        cmd = [sys.executable, "-m", "pytest", "--jeval-config", str(suite), "-q", "-p", "no:cacheprovider",
               "-k", "m1"]
        proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (out.exists() and len(out.read_bytes().splitlines()) >= 4):
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        first = [json.loads(line) for line in out.read_text().splitlines()]
        assert 4 <= len(first) < 12
        done = {r["record_id"] for r in first}

        result = subprocess.run([*cmd, "--jeval-resume"], cwd=pytester.path, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-3000:]
        final = [json.loads(line) for line in out.read_text().splitlines()]
        assert Counter(r["record_id"] for r in final) == Counter(r["id"] for r in ROWS)  # each episode once
        by_id = {r["record_id"]: r for r in final}
        assert all(r["is_correct"] for r in final)
        resumed_first = min(set(by_id) - done)
        position = int(resumed_first[1:]) - 1
        # the first episode run after the kill remembers episodes stored by the killed run
        fed = by_id[resumed_first]["agent"]["memory"]["fed_by"]
        assert fed == [f"r{i:02d}" for i in range(max(1, position - 2), position + 1)] and set(fed) <= done
