"""A solution whose return values say yes to every ``==`` passes no code benchmark, through the plugin.

``coding_task`` and ``coding_assistant`` ran their tests next to the solution, so ``assert f(x) == y``
called the solution's own ``__eq__``: such an answer passed 27 of 32 and 24 of 30. Every code
benchmark now compares values the same type-aware way (HumanEval's and LiveCodeBench's already did):
only plain values reach a comparison.
"""

from __future__ import annotations

import json
import keyword
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer

TEST_DATA = Path(__file__).resolve().parents[1] / "data"
ALWAYS_EQUAL = '''
class _AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __bool__(self):
        return True

    def __hash__(self):
        return 0

    def __getattr__(self, name):
        return lambda *args, **kwargs: _AlwaysEqual()

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


class Solution(_AlwaysEqual):
    pass
'''


def cheat(body: dict[str, Any], attempt: int) -> str:
    """Code defining every function and class the prompt names, each returning an always-equal object."""
    prompt = "\n".join(str(m.get("content") or "") for m in body["messages"])
    code = [ALWAYS_EQUAL]
    for name in dict.fromkeys(re.findall(r"\bdef ([A-Za-z_]\w*)\(", prompt)):
        if not keyword.iskeyword(name) and not name.startswith("test_"):
            code.append(f"def {name}(*args, **kwargs):\n    return _AlwaysEqual()\n")
    for name in dict.fromkeys(re.findall(r"\bclass ([A-Z]\w*)\b", prompt)):
        if name != "Solution":
            code.append(f"class {name}(_AlwaysEqual):\n    def __init__(self, *args, **kwargs):\n        pass\n")
    return "```python\n" + "\n".join(code) + "```"


@pytest.mark.slow
def test_an_always_equal_answer_passes_no_code_benchmark(pytester: pytest.Pytester) -> None:
    benches = {"coding_task": "", "coding_assistant": "",
               "humaneval": f'data_files = "{TEST_DATA / "humaneval" / "HumanEval.jsonl.gz"}"\nmax_samples = 12',
               "livecodebench": f'data_files = "{TEST_DATA / "livecodebench" / "code_generation_lite_sample.jsonl"}"'}
    with FakeOpenAIServer(cheat, models=("cheat",)) as server:
        (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 0
            cache = false

            [[models]]
            name = "cheat"
            base_url = "{server.base_url}"
            """) + "".join(f'\n[[benchmarks]]\nname = "{name}"\n{extra}\n' for name, extra in benches.items()))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == 1, result.stdout.str()[-2000:]
    for name in benches:
        records = [json.loads(line) for line in (pytester.path / "out" / f"{name}_cheat.jsonl").read_text().splitlines()]
        assert records, name
        passed = [r["record_id"] for r in records if r["is_correct"]]
        assert passed == [], (name, passed)
        if name in ("coding_task", "coding_assistant"):  # no test that looks at a return value passes
            tests = {(r["record_id"], t["name"]): t for r in records for t in r["scoring_metadata"]["tests"]}
            passed_tests = {key for key, t in tests.items() if t["verdict"] == "passed"}
            assert passed_tests <= {("ca-17", "test_does_not_mutate")}, passed_tests  # that one checks the input
            assert sum("NotPlainValue" in t.get("detail", "") for t in tests.values()) >= len(records) // 2, name
