"""An xdist worker killed while a sample waits for its model reply (in setup, in the ``response``
fixture, where direct benchmarks spend their time) leaves an error record for that sample.

Before, the controller learnt a sample's identity only from its setup report, which a worker
killed during setup never sends: the sample was missing from the JSONL and the summary
(39 samples, 0 errors for 40).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer

BENCH = '''
import os
import signal
import threading
from pathlib import Path

from pytest_jeval import Benchmark, Sample, Score


def to_sample(row, index, ctx):
    return Sample(id=ctx.default_id(index), input=row["q"], target=row["a"])


def prompt(sample):
    rid, flag = os.environ["SETUP_KILL"].split(":", 1)
    if sample.id == rid and not Path(flag).exists():  # killed once, while its request is in flight
        Path(flag).write_text("killed")
        threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGKILL)).start()
    return "compute " + sample.input


BENCHMARK = Benchmark(name="calc", to_sample=to_sample, prompt=prompt)


def test_calc(sample, response, score):
    score(Score(correct=response.text.strip() == sample.target, extracted=response.text))
'''


def responder(body: dict, attempt: int) -> Answer:
    text = body["messages"][-1]["content"].removeprefix("compute ")
    i = int(text.split("+")[0])
    return Answer(str(2 * i), delay=30.0 if i == 5 else 0.0)  # row 5 waits: its worker is killed meanwhile


@pytest.mark.slow
def test_a_worker_killed_during_setup_leaves_an_error_record(pytester: pytest.Pytester,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    rows = 12
    (pytester.path / "bench_calc.py").write_text(BENCH)
    (pytester.path / "calc.jsonl").write_text("".join(json.dumps({"q": f"{i}+{i}", "a": str(2 * i)}) + "\n"
                                                      for i in range(rows)))
    monkeypatch.setenv("SETUP_KILL", f"calc-5:{pytester.path / 'killed.flag'}")
    with FakeOpenAIServer(responder) as server:
        (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 0
            request_timeout = 60
            cache = false

            [[models]]
            name = "m"
            base_url = "{server.base_url}"
            api_key = "x"

            [[benchmarks]]
            name = "calc"
            module = "bench_calc.py"
            data_files = "calc.jsonl"
            """))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-n", "2")
    assert (pytester.path / "killed.flag").exists()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    records = [json.loads(line) for line in (pytester.path / "out" / "calc_m.jsonl").read_text().splitlines()]
    by_id = {r["record_id"]: r for r in records}
    assert len(records) == len(by_id) == rows  # every sample exactly once
    killed = by_id["calc-5"]
    assert killed["error"].startswith("worker crashed: ") and killed["is_correct"] is None, killed
    assert killed["question"] == "5+5" and killed["expected"] == "10"
    summary = json.loads(Path(pytester.path / "out" / "calc_m.jsonl.summary.json").read_text())
    assert (summary["total_samples"], summary["errors"]) == (rows, 1)
