"""The code benchmarks: humaneval (real data in tests/data/humaneval) and livecodebench (local files in the hub schema).

Every verdict here comes from code really executed in the sandbox
(``pytest_jeval.sandbox``); nothing is mocked but the model, which is a local
OpenAI-compatible server (``FakeOpenAIServer``) in the plugin runs.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import os
import pickle
import textwrap
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import LoadContext, Sample
from pytest_jeval.benchmarks import _codeexec
from pytest_jeval.benchmarks import bench_humaneval as he
from pytest_jeval.benchmarks import bench_livecodebench as lcb
from pytest_jeval.benchmarks._codeexec import extract_code, humaneval_completion, run_jobs
from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message
from tests.support.gsm import outcome_ids

HERE = Path(__file__).resolve().parents[1]
#: Three problems in the exact schema of the hub's ``livecodebench/code_generation_lite``
#: (fields and encodings as in lcb_runner/benchmarks/code_generation.py and the hub's
#: code_generation_lite.py): a LeetCode functional problem, an AtCoder and a Codeforces-style
#: stdin problem. ``private_test_cases`` is base64(zlib(pickle(json string))) like the hub's.
LCB_FILE = HERE / "data" / "livecodebench" / "code_generation_lite_sample.jsonl"
KEY = "sk-jeval-code-tests"


def humaneval_rows(data: Path) -> list[dict[str, Any]]:
    with gzip.open(data / "humaneval" / "HumanEval.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def he_sample(row: dict[str, Any]) -> Sample:
    return he.to_sample(row, 0, LoadContext("humaneval", None, 42, None))


def lcb_samples() -> list[Sample]:
    rows = [json.loads(line) for line in LCB_FILE.read_text().splitlines()]
    ctx = LoadContext("livecodebench", None, 42, LCB_FILE.parent)
    return [lcb.to_sample(r, i, ctx) for i, r in enumerate(rows)]


def write_suite(pytester: pytest.Pytester, base_url: str, models: list[str], benchmark: str, data_files: str,
                extra_run: str = "") -> Path:
    model_tables = "".join(
        f'\n[[models]]\nname = "{m}"\nbase_url = "{base_url}"\napi_key_env = "JEVAL_CODE_KEY"\n' for m in models)
    text = textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 30
        cache = false
        {extra_run}
        """) + model_tables + f'\n[[benchmarks]]\nname = "{benchmark}"\ndata_files = "{data_files}"\n'
    path = pytester.path / "suite.toml"
    path.write_text(text)
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def by_prompt(answers: dict[str, Callable[[str], str]]) -> Callable[[dict[str, Any], int], str]:
    """A responder: ``answers[model](user message)``."""
    def respond(body: dict[str, Any], attempt: int) -> str:
        return answers[body["model"]](last_user_message(body))
    return respond


# --------------------------------------------------------------------------- humaneval


@pytest.mark.slow
def test_humaneval_canonical_solutions_pass_164_of_164_through_the_plugin(
    pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = humaneval_rows(test_data)
    assert len(rows) == 164
    # The server answers each prompt with its canonical solution: an indented body, unfenced.
    solutions = {row["prompt"]: row["canonical_solution"] for row in rows}

    def canonical(message: str) -> str:
        return next(sol for prompt, sol in solutions.items() if prompt in message)

    monkeypatch.setenv("JEVAL_CODE_KEY", KEY)
    with FakeOpenAIServer(by_prompt({"canonical": canonical}), api_key=KEY) as server:
        suite = write_suite(pytester, server.base_url, ["canonical"], "humaneval",
                            str(test_data / "humaneval" / "HumanEval.jsonl.gz"), "max_exec_workers = 2")
        result = pytester.runpytest("--jeval-config", str(suite), "-n", "0", "-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=164)
    records = read_jsonl(pytester.path / "out" / "humaneval_canonical.jsonl")
    assert sorted(r["record_id"] for r in records) == sorted(r["task_id"] for r in rows)
    for r in records:
        meta = r["scoring_metadata"]
        assert r["is_correct"] is True and r["score"] == 1.0, (r["record_id"], meta)
        assert meta["reason"] == "passed" and meta["tests"][0]["verdict"] == "passed"
        assert meta["mode"] == "body" and meta["extraction"] == "raw"
        assert "subprocess" in meta["isolation"]
    summary = json.loads((pytester.path / "out" / "humaneval_canonical.jsonl.summary.json").read_text())
    assert summary["accuracy"] == 1.0 and summary["total_samples"] == 164
    assert summary["outcome_reasons"] == {"passed": 164}


@pytest.mark.slow
def test_humaneval_return_none_passes_at_most_a_handful(test_data: Path) -> None:
    samples = [he_sample(row) for row in humaneval_rows(test_data)]
    jobs = [functools.partial(he.score_humaneval, "    return None\n", s) for s in samples]
    scores = run_jobs(jobs, workers=8)  # sandbox start-up is latency more than CPU: overlap it
    passed = [s.id for s, sc in zip(samples, scores) if sc is not None and sc.correct]
    assert len(passed) <= 5, passed
    reasons = {sc.metadata["reason"] for sc in scores if sc is not None and not sc.correct}
    assert reasons <= {"wrong answer", "exception"} and "wrong answer" in reasons


@pytest.mark.parametrize("shape", ["fenced-function", "fenced-body", "raw-unindented-body", "stripped-first-line",
                                   "think-then-fence", "whole-prompt-repeated"])
def test_humaneval_extraction_shapes(test_data: Path, shape: str) -> None:
    row = humaneval_rows(test_data)[2]  # truncate_number: return number % 1.0
    assert row["entry_point"] == "truncate_number"
    body = row["canonical_solution"]
    signature = "def truncate_number(number: float) -> float:\n"
    replies = {
        "fenced-function": f"Sure!\n```python\n{signature}{body}\n\nif __name__ == '__main__':\n    print(input())\n```\n",
        "fenced-body": f"```py\n{body}```",
        "raw-unindented-body": textwrap.dedent(body),
        "stripped-first-line": body.strip(),
        "think-then-fence": f"<think>maybe ```python\nreturn 0\n``` no</think>\n```python\n{signature}{body}```",
        "whole-prompt-repeated": f"```python\n{row['prompt']}{body}```",
    }
    result = he.score_humaneval(replies[shape], he_sample(row))
    assert result.correct is True, result.metadata
    expected_mode = "function" if shape in ("fenced-function", "think-then-fence", "whole-prompt-repeated") else "body"
    assert result.metadata["mode"] == expected_mode


def test_humaneval_failure_reasons_are_recorded(test_data: Path) -> None:
    row = humaneval_rows(test_data)[2]
    sample = he_sample(row)
    cases = {
        "wrong answer": "    return number\n",
        "exception": "    raise ValueError('boom')\n",
        "timeout": "    while True:\n        pass\n",
        "memory": "    x = bytearray(8 * 1024 ** 3)\n    return 0.0\n",
    }
    for reason, body in cases.items():
        # a short timeout only where it is the point: a loaded CI machine may need seconds to start Python
        result = he.score_humaneval(body, sample, timeout=1.0 if reason == "timeout" else 10.0, memory_mb=256)
        assert result.correct is False
        assert result.metadata["reason"] == reason, (reason, result.metadata)
        assert result.metadata["tests"] == [{"name": "check", "verdict": reason,
                                             "duration": result.metadata["tests"][0]["duration"]}]
    # a reply that quits before check() ran is never a pass
    quitter = he.score_humaneval("    import sys\n    sys.exit(0)\nimport os\nos._exit(0)\n", sample)
    assert quitter.correct is False
    # a secret in the parent's environment does not reach the code (it would return a wrong value if it did)
    os.environ["JEVAL_CODE_SECRET"] = "hunter2"
    try:
        leak = he.score_humaneval(
            "    import os\n    return -1.0 if os.environ.get('JEVAL_CODE_SECRET') else number % 1.0\n",
            sample)
    finally:
        del os.environ["JEVAL_CODE_SECRET"]
    assert leak.correct is True, leak.metadata


def test_humaneval_no_code_is_unscored(test_data: Path) -> None:
    sample = he_sample(humaneval_rows(test_data)[0])
    assert he.score_humaneval("", sample).unscored
    assert he.score_humaneval("```java\nclass A {}\n```", sample).unscored


def test_extract_code_rules() -> None:
    assert extract_code("```python\na = 1\n```\ntext\n```python\nb = 2\n```") == ("b = 2\n", "fenced")
    two = "```python\ndef f():\n    return 1\n```\n```python\nprint(f())\n```"
    assert extract_code(two, prefer_defining="f")[0].startswith("def f")
    assert extract_code("```python\nx = 1\n")[0] == "x = 1\n"  # truncated reply: unclosed fence
    assert extract_code("   \n") == (None, "none")
    assert extract_code("</think>\nreturn 1") == ("return 1\n", "raw")
    code, mode = humaneval_completion("return x", "def f(x):\n    '''doc'''\n", "f")
    assert (code, mode) == ("    return x\n", "body")
    assert _codeexec.strip_main_guard("def f():\n    pass\nif __name__ == '__main__':\n    f()\n").strip() == "def f():\n    pass"


def test_run_jobs_bounds_parallelism_and_stops_at_first_failure() -> None:
    lock = threading.Lock()
    running = {"now": 0, "max": 0}
    full = threading.Event()  # set once as many jobs run at once as the bound allows
    bound = [3]

    def job(i: int) -> int:
        with lock:
            running["now"] += 1
            running["max"] = max(running["max"], running["now"])
            if running["now"] >= bound[0]:
                full.set()
        full.wait(timeout=60)  # the first jobs wait for each other: they overlap however slow the machine
        with lock:
            running["now"] -= 1
        return i

    assert run_jobs([functools.partial(job, i) for i in range(8)], workers=3) == list(range(8))
    assert running["max"] == 3
    running["max"] = 0
    # job 1 stops the run; job 0 ends only after that verdict, so nothing can start in between
    stopped = threading.Event()

    def stop(result: int) -> bool:
        if result == 1:
            stopped.set()
        return result == 1

    def first(i: int) -> int:
        if i == 0:
            stopped.wait(timeout=60)
        return i

    results = run_jobs([functools.partial(first, i) for i in range(8)], workers=2, stop=stop)
    assert results[:2] == [0, 1] and results.count(None) >= 4  # later jobs were not run
    full.clear()
    bound[0] = 2
    running["max"] = 0
    run_jobs([functools.partial(job, i) for i in range(8)], workers=2)
    assert running["max"] == 2


def test_exec_workers_follows_the_suite() -> None:
    from types import SimpleNamespace

    from pytest_jeval.session.collect import plan_key

    config = SimpleNamespace(stash=pytest.Stash())
    assert _codeexec.exec_workers(config) == (os.cpu_count() or 1)  # default: the number of cores
    config.stash[plan_key] = SimpleNamespace(suite=SimpleNamespace(run=SimpleNamespace(max_exec_workers=3)))
    assert _codeexec.exec_workers(config) == 3


# --------------------------------------------------------------------------- livecodebench

LCB_RIGHT = {
    "3093": "```python\nclass Solution:\n    def sumIndicesWithKSetBits(self, nums: List[int], k: int) -> int:\n"
            "        return sum(x for i, x in enumerate(nums) if bin(i).count('1') == k)\n```",
    "abc320_a": "Read A and B.\n```python\na, b = map(int, input().split())\nprint(a ** b + b ** a)\n```",
    "1999Z": "```python\nimport sys\n\ndef main():\n    data = sys.stdin.read().split()\n    t, p = int(data[0]), 1\n"
             "    for _ in range(t):\n        n = int(data[p]); p += 1\n        xs = list(map(int, data[p:p + n])); p += n\n"
             "        print('%.6f' % (sum(xs) / n))\n\nif __name__ == '__main__':\n    main()\n```",
}
LCB_WRONG = {
    # right on the public tests, wrong on private ones: only the hidden tests catch it
    "3093": "```python\nclass Solution:\n    def sumIndicesWithKSetBits(self, nums, k):\n"
            "        return {(5, 10, 1, 5, 2, 1): 13, (4, 3, 2, 1, 2): 1}.get((*nums, k), 0)\n```",
    "abc320_a": "```python\na, b = map(int, input().split())\nprint({(2, 8): 320, (9, 9): 774840978, (5, 6): 23401}.get((a, b), 0))\n```",
    "1999Z": "```python\nprint(input())\n```",
}


def test_livecodebench_through_the_plugin(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    samples = {s.id: s for s in lcb_samples()}
    assert {s.metadata["func_name"] for s in samples.values()} == {"sumIndicesWithKSetBits", None}

    def answer(table: dict[str, str]) -> Callable[[str], str]:
        return lambda message: next(table[i] for i, s in samples.items() if s.input in message)

    monkeypatch.setenv("JEVAL_CODE_KEY", KEY)
    with FakeOpenAIServer(by_prompt({"right": answer(LCB_RIGHT), "wrong": answer(LCB_WRONG)}), api_key=KEY) as server:
        suite = write_suite(pytester, server.base_url, ["right", "wrong"], "livecodebench", str(LCB_FILE),
                            "max_exec_workers = 2")
        result = pytester.runpytest("--jeval-config", str(suite), "-n", "0", "-rA", "-p", "no:cacheprovider")
        prompts = [m for r in server.requests if r["path"].endswith("/chat/completions")
                   for m in r["body"]["messages"]]
    result.assert_outcomes(passed=3, failed=3)
    assert {line.split("[", 1)[1].split("/", 1)[0] for line in result.outlines
            if line.startswith("PASSED ")} == {"right"}
    assert outcome_ids(result, "passed") == set(samples)
    # LiveCodeBench's prompt: its system message, the starter code for the functional problem
    assert any(m["role"] == "system" and "expert Python programmer" in m["content"] for m in prompts)
    assert any("class Solution:" in m["content"] and "### Format:" in m["content"] for m in prompts)
    wrong = {r["record_id"]: r for r in read_jsonl(pytester.path / "out" / "livecodebench_wrong.jsonl")}
    for rid in ("3093", "abc320_a"):
        meta = wrong[rid]["scoring_metadata"]
        assert meta["public_passed"] == meta["public_total"] > 0  # the public tests pass...
        assert meta["reason"] == "wrong answer" and not meta["first_failure"]["public"]  # ...a private one fails
    right = {r["record_id"]: r for r in read_jsonl(pytester.path / "out" / "livecodebench_right.jsonl")}
    assert right["3093"]["scoring_metadata"]["kind"] == "functional"
    assert right["abc320_a"]["scoring_metadata"]["kind"] == "stdin"
    assert all(r["scoring_metadata"]["passed"] == r["scoring_metadata"]["total"] > 3 for r in right.values())
    summary = json.loads((pytester.path / "out" / "livecodebench_right.jsonl.summary.json").read_text())
    assert summary["accuracy"] == 1.0 and set(summary["per_subject"]) == {"easy", "medium"}


def test_livecodebench_verdicts_timeout_and_early_stop() -> None:
    stdin_problem = lcb_samples()[2]
    hang = lcb.score_livecodebench("```python\nwhile True:\n    pass\n```", stdin_problem, workers=2, timeout=1.0)
    assert hang.correct is False and hang.metadata["reason"] == "timeout"
    assert hang.metadata["not_run"] >= 2  # stopped at the first failure instead of timing out on every test
    crash = lcb.score_livecodebench("```python\nraise SystemExit(3)\n```", stdin_problem)
    assert crash.metadata["reason"] == "exception"
    every = lcb.score_livecodebench("```python\nprint(0)\n```", stdin_problem, workers=2,
                                    stop_at_first_failure=False)
    assert every.metadata["not_run"] == 0 and len(every.metadata["tests"]) == every.metadata["total"] == 5
    assert lcb.score_livecodebench("no code here, sorry", stdin_problem).correct is False
    assert lcb.score_livecodebench("", stdin_problem).unscored


def test_livecodebench_functional_returns_tuple_as_list() -> None:
    functional = lcb_samples()[0]
    as_tuple = ("```python\nclass Solution:\n    def sumIndicesWithKSetBits(self, nums, k):\n"
                "        return sum(x for i, x in enumerate(nums) if bin(i).count('1') == k),\n```")
    result = lcb.score_livecodebench(as_tuple, functional, workers=2)
    assert result.correct is False  # a 1-tuple is [13], not 13
    top_level = "```python\ndef sumIndicesWithKSetBits(nums, k):\n    return sum(x for i, x in enumerate(nums) if bin(i).count('1') == k)\n```"
    assert lcb.score_livecodebench(top_level, functional, workers=2).correct is True


def test_stdout_comparison() -> None:
    assert lcb.stdout_matches("1 2\n3\n", "1  2\n3")
    assert lcb.stdout_matches("2.500000\n", "2.5\n")
    assert lcb.stdout_matches("  YES \n\n", "YES\n")
    assert not lcb.stdout_matches("YES\nNO\n", "YES\n")
    assert not lcb.stdout_matches("yes\n", "YES\n")
    assert not lcb.stdout_matches("50000000000000001\n", "50000000000000000\n")


def test_private_tests_decode_like_the_hub() -> None:
    tests = [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]
    hub_encoded = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()
    assert lcb.decode_private_tests(hub_encoded) == tests
    assert lcb.decode_private_tests(json.dumps(tests)) == tests  # older dumps: plain JSON
    assert lcb.decode_private_tests("") == []
    rows = [json.loads(line) for line in LCB_FILE.read_text().splitlines()]
    assert all(len(lcb.decode_private_tests(r["private_test_cases"])) >= 4 for r in rows)


class _Exploit:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.path}",))


def test_malicious_private_tests_pickle_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = base64.b64encode(zlib.compress(pickle.dumps(_Exploit(str(marker))))).decode()
    with pytest.raises(lcb.UnsafePickleError, match="system"):
        lcb.decode_private_tests(evil)
    assert not marker.exists()
    # a payload that would build any object (here a set via its class) is refused as well
    with pytest.raises(lcb.UnsafePickleError):
        lcb.decode_private_tests(base64.b64encode(zlib.compress(pickle.dumps(frozenset({1}), protocol=2))).decode())
    # plain data that is not a JSON string is rejected, not trusted
    with pytest.raises(ValueError, match="not a JSON string"):
        lcb.decode_private_tests(base64.b64encode(zlib.compress(pickle.dumps([1, 2]))).decode())
    with pytest.raises(ValueError):
        lcb.decode_private_tests("%%% not base64 %%%")
    # and the plain pickle module would have run it: the test is meaningful
    pickle.loads(pickle.dumps(_Exploit(str(marker))))
    assert marker.exists()


def test_private_tests_zlib_bomb_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lcb, "MAX_PRIVATE_BYTES", 1000)
    big = base64.b64encode(zlib.compress(pickle.dumps("x" * 100_000))).decode()
    with pytest.raises(ValueError, match="more than 1000 bytes"):
        lcb.decode_private_tests(big)


def test_code_benchmarks_in_the_catalog() -> None:
    from pytest_jeval.suite.catalog import catalog_rows

    rows = {r["name"]: r for r in catalog_rows()}
    assert rows["humaneval"]["dataset"] == "openai/openai_humaneval" and rows["humaneval"]["samples"] == 164
    assert rows["livecodebench"]["dataset"] == "livecodebench/code_generation_lite"
    assert rows["humaneval"]["category"] == rows["livecodebench"]["category"] == "coding"
