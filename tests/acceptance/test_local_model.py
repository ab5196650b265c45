"""Smoke test of the bundled local model: the demo suite's engine, over its own HTTP server."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.local_model  # skipped, with the reason, where llama-cpp-python or the GGUF is missing


@pytest.mark.slow
def test_local_model_answers_and_is_deterministic(pytester: pytest.Pytester) -> None:
    pytester.path.joinpath("suite.toml").write_text(
        """
[defaults]
max_tokens = 16

[run]
output_dir = "out"
cache = false

[[models]]
name = "smollm2-135m"
engine = "local"

[[benchmarks]]
name = "quickstart"
record_ids = ["qs-fact-01", "qs-arith-01"]
"""
    )
    first = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-n", "2")
    assert first.ret in (0, 1), first.stderr.str()
    first.stdout.fnmatch_lines(["*jeval results*", "quickstart*smollm2-135m*2*"])
    path = pytester.path / "out" / "quickstart_smollm2-135m.jsonl"
    answers = {r["record_id"]: r["model_answer"] for r in map(json.loads, path.read_text().splitlines())}
    assert set(answers) == {"qs-fact-01", "qs-arith-01"}
    assert all(a and a.strip() for a in answers.values())
    # identical temperature-0 requests give identical answers (no cache: the model answers again)
    pytester.runpytest_subprocess("--jeval-config", "suite.toml")
    again = {r["record_id"]: r["model_answer"] for r in map(json.loads, path.read_text().splitlines())}
    assert again == answers


@pytest.mark.slow
def test_identical_requests_on_one_server_answer_identically() -> None:
    """The same temperature-0 request, before and after others, on one model: the same answer.

    Without resetting the model state per request, llama.cpp reuses the common prefix of the
    previous prompt's KV cache, and the answer can change.
    """
    import openai

    from pytest_jeval.calls.engines.local import LocalServer

    server = LocalServer(name="smollm2-135m")
    url = server.start()
    try:
        client = openai.OpenAI(base_url=url, api_key="local", max_retries=0)
        ask = "Write one sentence about the sea and the sky."
        other = "Write one sentence about the sea."

        def chat(text: str) -> str:
            reply = client.chat.completions.create(
                model="smollm2-135m", messages=[{"role": "user", "content": text}], temperature=0, max_tokens=24
            )
            return reply.choices[0].message.content or ""

        first = chat(ask)
        chat(other)  # shares a long prefix with `ask`
        assert chat(ask) == first
        assert chat(other) != first
        client.close()
    finally:
        server.stop()
