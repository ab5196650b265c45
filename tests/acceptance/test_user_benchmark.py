"""The own-benchmark example of docs/writing-benchmarks.md works as written, run from a folder outside the repo."""

from __future__ import annotations

import json

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, lookup_responder
from tests.support.docs import doc_example


def test_the_documented_user_benchmark(pytester: pytest.Pytester) -> None:
    capitals = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima"}
    (pytester.path / "capitals.jsonl").write_text(
        "".join(json.dumps({"country": c, "capital": k}) + "\n" for c, k in capitals.items())
    )
    pytester.path.joinpath("bench_capitals.py").write_text(doc_example("bench_capitals.py"))
    answers = {f"capital of {c}?": f"{k}." for c, k in capitals.items() if c != "Peru"}
    with FakeOpenAIServer(lookup_responder(answers, default="Cusco"), models=("Qwen/Qwen3-8B",)) as server:
        suite = doc_example("suite.toml").replace("http://localhost:8000/v1", server.base_url)
        pytester.path.joinpath("suite.toml").write_text(suite)
        result = pytester.runpytest("--jeval-config", "suite.toml", "-rA")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*PASSED suite.toml::capitals::test_capitals[[]Qwen-Qwen3-8B/capitals-0[]]*"])
    result.stdout.fnmatch_lines(["*expected:  Lima*", "*extracted: Cusco*"])
    records = [json.loads(l) for l in (pytester.path / "results" / "capitals_Qwen-Qwen3-8B.jsonl").read_text().splitlines()]
    assert {r["record_id"]: r["is_correct"] for r in records} == {
        "capitals-0": True, "capitals-1": True, "capitals-2": True, "capitals-3": False}
