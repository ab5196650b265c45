"""Selecting items never destroys results (docs/results.md): real subprocess runs against the test server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.support.holds import HoldAfter
from tests.support.results import Project, project, snapshot  # noqa: F401

IDS = [f"calc-{i}" for i in range(6)]


def test_k_keeps_untouched_pairs_and_merges_the_touched_one(project: Project) -> None:
    p = project
    p.suite(models=("m-a", "m-b"))
    assert p.run().ret == 1  # rows 1, 4 wrong; row 3 an error
    before = snapshot(p.path / "out")
    p.script.wrong.clear()
    result = p.run("-k", "m-a and (calc-1 or calc-4)")
    result.assert_outcomes(passed=2)
    after = snapshot(p.path / "out")
    # the pair no selected item touched keeps its files byte for byte, untouched
    for name in ("calc_m-b.jsonl", "calc_m-b.jsonl.summary.json"):
        assert after[name] == before[name]
    # the touched pair keeps every record, with the two reruns' new verdicts, and one line per record
    records = p.records(model="m-a")
    assert list(records) == IDS
    assert records["calc-1"]["is_correct"] is True and records["calc-4"]["is_correct"] is True
    assert records["calc-3"]["error"] is not None  # kept as stored
    s = p.summary(model="m-a")
    assert (s["total_samples"], s["correct"], s["errors"]) == (6, 5, 1)
    aggregate = json.loads((p.path / "out" / "summary.json").read_text())
    assert sorted(r["jsonl"] for r in aggregate["runs"]) == ["calc_m-a.jsonl", "calc_m-b.jsonl"]


@pytest.mark.slow
def test_lf_under_xdist_merges_and_the_summary_covers_every_sample(project: Project) -> None:
    p = project
    p.suite()
    p.run()
    p.script.wrong.clear()
    p.script.failing.clear()
    p.script.asked.clear()
    result = p.run("--lf", "-n", "2", subprocess=True)
    result.assert_outcomes(passed=3)
    assert sorted(p.script.asked) == [1, 3, 4]  # only the failures were asked again
    records = p.records()
    assert list(records) == IDS and all(r["is_correct"] for r in records.values())
    s = p.summary()
    assert (s["total_samples"], s["correct"], s["errors"], s["accuracy"]) == (6, 6, 0, 1.0)


def test_resume_skips_finished_samples_unless_lf_asks_for_them(project: Project) -> None:
    p = project
    p.suite()
    p.run()
    p.script.wrong.clear()
    p.script.failing.clear()
    p.script.asked.clear()
    # a plain resume retries the error only: wrong answers are finished samples
    p.run("--jeval-resume").assert_outcomes(passed=4, failed=2)
    assert p.script.asked == [3]
    p.script.asked.clear()
    # --lf names the failed items: they run again although they are finished
    p.run("--lf", "--jeval-resume").assert_outcomes(passed=2)
    assert sorted(p.script.asked) == [1, 4]
    assert all(r["is_correct"] for r in p.records().values())
    assert p.summary()["total_samples"] == 6


def test_full_run_starts_afresh_and_x_keeps_what_it_did_not_reach(project: Project) -> None:
    p = project
    p.suite()
    p.run()
    # the suite now plans 4 samples: a full run drops the records of the two it no longer plans
    p.suite(bench_extra='record_ids = ["calc-0", "calc-1", "calc-2", "calc-3"]')
    p.script.failing.clear()
    p.run("-p", "no:randomly")
    assert list(p.records()) == IDS[:4]
    first = p.records()
    # -x stops at calc-1 (wrong): calc-2 and calc-3 were not reached and keep their records
    p.script.wrong = {1}
    p.run("-x", "-p", "no:randomly").assert_outcomes(passed=1, failed=1)
    records = p.records()
    assert list(records) == IDS[:4]
    assert records["calc-2"] == first["calc-2"] and records["calc-3"] == first["calc-3"]
    assert p.summary()["total_samples"] == 4


@pytest.mark.slow
def test_killed_rerun_loses_nothing_stored_before(project: Project) -> None:
    p = project
    p.suite(rows=30, run="max_concurrency = 1")
    p.run()
    stored = p.jsonl().read_bytes()
    # the rerun gets 5 answers, then the server holds every request: killed, it has appended 2 to 5
    # records, never all 30, whatever the machine's speed
    p.server.responder = HoldAfter(p.script, 5)
    cmd = [sys.executable, "-m", "pytest", "--jeval-config", str(p.path / "suite.toml"), "-q", "-p", "no:cacheprovider"]
    proc = subprocess.Popen(cmd, cwd=p.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(p.jsonl().read_bytes().splitlines()) < 32:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    raw = p.jsonl().read_bytes()
    assert raw.startswith(stored) and raw.endswith(b"\n")  # earlier records intact, new ones appended whole
    assert 32 <= len(raw.splitlines()) <= 35
    p.server.responder = p.script
    p.script.asked.clear()
    p.run("--jeval-resume")
    records = p.records()  # one line per record after the resume compacts the file
    assert sorted(records) == sorted(f"calc-{i}" for i in range(30))
    assert p.script.asked == [3]  # only the stored error was sent again
    assert p.summary()["total_samples"] == 30
