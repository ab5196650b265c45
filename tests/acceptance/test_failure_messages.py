"""A failed item says why in pytest's output: the scorer's reason and how the answer ended, capped.

Through the plugin (pytester subprocesses) against the scripted test server: toolcall15 (the rules
missed), terminal_lite (what the task's checker printed), a direct benchmark whose reply hit
``max_tokens`` (the finish reason), and the cap on a long reason.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score, reason_of
from pytest_jeval.session.fixtures import REASON_CHARS, failure_message
from pytest_jeval.testing.openai_server import (
    Answer,
    FakeOpenAIServer,
    ToolCallSpec,
    script_responder,
    tool_answer,
)


def _suite(pytester: pytest.Pytester, url: str, bench: str, extra: str = "", model: str = "test-model") -> Path:
    suite = pytester.path / "suite.toml"
    suite.write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 20
        cache = false

        [[models]]
        name = "{model}"
        base_url = "{url}"
        api_key = "x"

        [[benchmarks]]
        name = "{bench}"
        """) + extra)
    return suite


@pytest.mark.slow
def test_toolcall15_says_which_rule_was_missed_and_how_the_episode_stopped(pytester: pytest.Pytester) -> None:
    from pytest_jeval.benchmarks.toolcall15 import bench_toolcall15
    from pytest_jeval.suite.dataset import load_samples

    bench = bench_toolcall15.BENCHMARK
    samples = {s.id: s for s in load_samples(bench, files=bench.default_files(bench_toolcall15.__file__))[0]}
    sample = samples["ts-01-weather"]
    # one wrong tool call, then a final answer: the scenario's rules are missed
    wrong = tool_answer(ToolCallSpec("web_search", {"query": "weather Lisbon"}))
    with FakeOpenAIServer(script_responder({sample.input: [wrong, "Here you go."]}, default="no script")) as server:
        suite = _suite(pytester, server.base_url, "toolcall15", f'record_ids = ["{sample.id}"]\n')
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "  reason:    missed: " in text, text[-3000:]
    assert "  stopped:   final (2 turn(s), 1 tool call(s))" in text


@pytest.mark.slow
def test_terminal_lite_says_what_the_checker_printed(pytester: pytest.Pytester) -> None:
    from tests.support.terminal import ensure_rootfs

    ensure_rootfs()
    with FakeOpenAIServer(script_responder({}, default="I looked around and I am done.")) as server:
        suite = _suite(pytester, server.base_url, "terminal_lite", 'record_ids = ["csv-totals"]\n')
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*  reason:    tests/test.sh exited with status 1: totals.txt missing",
                                 "*  stopped:   final (1 turn(s), 0 tool call(s))"])


@pytest.mark.slow
def test_a_reply_cut_at_max_tokens_says_so(pytester: pytest.Pytester) -> None:
    def respond(body: dict[str, Any], attempt: int) -> Any:
        return Answer("Let me think about this", finish_reason="length")

    with FakeOpenAIServer(respond) as server:
        suite = _suite(pytester, server.base_url, "quickstart", 'record_ids = ["qs-arith-01"]\n')
        result = pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*  stopped:   length (the reply reached max_tokens)"])


def test_the_reason_comes_from_the_metadata_and_is_capped() -> None:
    assert reason_of({"reasons": ["missed: a", "missed: b"]}) == "missed: a; missed: b"
    assert reason_of({"reason": "x", "unscored_reason": "y"}) == "x"
    assert reason_of({"unscored_reason": "no answer letter found"}) == "no answer letter found"
    assert reason_of({"reason": "", "points": 0}) is None
    sample = Sample(id="s", input="q", target="a")
    message = failure_message(sample, Score(correct=False, metadata={"reason": "w" * 5000}), "answer",
                              stop="max_turns (10 turn(s), 9 tool call(s))")
    reason_line = next(line for line in message.splitlines() if line.startswith("  reason:"))
    assert len(reason_line) == len("  reason:    ") + REASON_CHARS and reason_line.endswith("...")
    assert message.splitlines()[-1] == "  stopped:   max_turns (10 turn(s), 9 tool call(s))"
