"""Fingerprints: telling drift from noise (issue 29, section 4), over real HTTP.

The test server changes its ``system_fingerprint`` halfway through a run: the summary lists both
fingerprints with their record counts and warns, and so does ``jeval compare`` against a run
served by one fingerprint. A rerun whose answers come from another fingerprint than the stored
results says so.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from pytest_jeval.cli import main
from pytest_jeval.testing.openai_server import Answer
from tests.support.gsm import JevalProject


class HalfwayFingerprint:
    """Answers as ``inner`` does, with fingerprint ``fp_a`` for the first ``half`` requests and ``fp_b`` after."""

    def __init__(self, inner: Any, half: int) -> None:
        self.inner, self.half, self.count = inner, half, 0
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any], attempt: int) -> Any:
        with self.lock:
            self.count += 1
            fingerprint = "fp_a" if self.count <= self.half else "fp_b"
        reply = self.inner(body, attempt)
        text = reply.content if isinstance(reply, Answer) else reply
        return Answer(text, system_fingerprint=fingerprint) if isinstance(text, str) else reply


def summary_of(project: JevalProject, out: str) -> dict[str, Any]:
    return project.summary(out=out)


@pytest.mark.slow
def test_a_fingerprint_change_mid_run_warns_in_the_summary_and_in_compare(
        jeval_project: JevalProject, capsys: pytest.CaptureFixture[str]) -> None:
    p = jeval_project
    p.script.failing.clear()  # every row answered: 10 requests
    p.server.responder = HalfwayFingerprint(p.script, half=5)
    suite = p.suite(extra_run="max_concurrency = 1")
    mixed = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-output", "mixed",
                                            "--jeval-no-cache", "-p", "no:randomly")
    summary = summary_of(p, "mixed")
    prints = summary["served"]["system_fingerprints"]
    assert prints == {"fp_a": {"records": 5, "cached": 0}, "fp_b": {"records": 5, "cached": 0}}
    assert summary["served"]["models"] == {"test-model": {"records": 10, "cached": 0}}
    warning = summary["served"]["warning"]
    assert "2 system fingerprints: fp_a (5 records), fp_b (5 records)" in warning and "drift" in warning
    assert "jeval: gsm8k x test-model: served by 2 system fingerprints" in mixed.stdout.str()
    records = p.records(out="mixed")
    assert {r["served"]["system_fingerprint"] for r in records} == {"fp_a", "fp_b"}

    p.server.system_fingerprint = "fp_b"  # the provider settled on its new configuration
    p.server.responder = p.script
    steady = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "--jeval-output", "steady",
                                             "--jeval-no-cache", "-p", "no:randomly")
    assert "served by" not in steady.stdout.str()
    assert "warning" not in summary_of(p, "steady")["served"]

    out_dir = p.pytester.path
    capsys.readouterr()
    code = main(["compare", str(out_dir / "mixed" / "gsm8k_test-model.jsonl"),
                 str(out_dir / "steady" / "gsm8k_test-model.jsonl"), "--json", "--resamples", "50"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert result["served_warning"] == ("the runs were served by different models or system fingerprints (A: model "
                                        "test-model; fingerprint fp_a, fp_b | B: model test-model; fingerprint fp_b): "
                                        "differences may be drift, not noise")
    main(["compare", str(out_dir / "steady" / "gsm8k_test-model.jsonl"),
          str(out_dir / "steady" / "gsm8k_test-model.jsonl")])
    assert "warning" not in capsys.readouterr().out  # the same fingerprint on both sides: no warning


@pytest.mark.slow
def test_a_rerun_served_by_another_fingerprint_says_so(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.script.failing.clear()
    p.server.system_fingerprint = "fp_a"
    suite = p.suite()
    p.pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:randomly", "-k", "gsm8k-0 or gsm8k-1")
    p.server.system_fingerprint = "fp_b"
    # the first two rows come from the cache (fp_a), the others are asked now (fp_b)
    rerun = p.pytester.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:randomly")
    out = rerun.stdout.str()
    assert ("this run was served system fingerprint fp_b where the stored results had fp_a: the endpoint's model "
            "or configuration changed since (drift, not noise)") in out
    served = p.summary()["served"]
    assert served["system_fingerprints"] == {"fp_a": {"records": 2, "cached": 2}, "fp_b": {"records": 8, "cached": 0}}
    assert "fp_a (2 records, 2 from the cache)" in served["warning"]
    aggregate = json.loads((p.pytester.path / "out" / "summary.json").read_text())
    assert aggregate["served_changes"] == [{"benchmark": "gsm8k", "model": "test-model", "change": (
        "system fingerprint fp_b where the stored results had fp_a")}]


@pytest.mark.slow
def test_records_keep_the_served_model(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.script.failing.clear()

    def dated(body: dict[str, Any], attempt: int) -> Answer:
        reply = p.script(body, attempt)
        return Answer(reply if isinstance(reply, str) else reply.content, model="test-model-2025-01-01")

    p.server.responder = dated
    p.pytester.runpytest_subprocess("--jeval-config", str(p.suite()), "-p", "no:randomly", "-k", "gsm8k-0")
    (record,) = p.records()
    assert record["served"] == {"model": "test-model-2025-01-01", "system_fingerprint": None, "seed": None}
    assert record["model"] == "test-model"  # the model asked for stays the record's model
