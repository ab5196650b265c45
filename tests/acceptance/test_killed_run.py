"""A run killed with SIGKILL leaves only whole JSONL lines, and ``--jeval-resume`` finishes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message
from tests.support.gsm import SECRET, GsmScript, chat_requests, gsm_rows
from tests.support.holds import HoldAfter


def _call_processes(parent: int) -> list[int]:
    """Helper call processes whose parent is ``parent``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(fields[1]) == parent and b"pytest_jeval.calls.callproc" in cmdline:
            assert not any(SECRET.encode() in arg for arg in cmdline)  # the key travels over a socket
            found.append(int(stat.parent.name))
    return found


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":  # exited; its new parent has not reaped it yet
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
def test_sigkill_then_resume(pytester: pytest.Pytester, test_data, monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed with its HTTP client in a helper process: the helper goes too, and the resume completes."""
    rows = gsm_rows(test_data, 40)
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    # 7 requests answered, then every request held: the killed run stored 5 to 7 samples, never all 40,
    # whatever the machine's speed
    hold = HoldAfter(GsmScript(rows), 7)
    with FakeOpenAIServer(hold, api_key=SECRET, slots=2) as server:
        suite = pytester.path / "suite.toml"
        suite.write_text(
            f"""
[run]
output_dir = "out"
max_concurrency = 2
call_executor = "process"

[[models]]
name = "test-model"
base_url = "{server.base_url}"
api_key_env = "JEVAL_TEST_KEY"

[[benchmarks]]
name = "gsm8k"
data_files = "gsm.jsonl"
"""
        )
        out = pytester.path / "out" / "gsm8k_test-model.jsonl"
        cmd = [sys.executable, "-m", "pytest", "--jeval-config", str(suite), "--jeval-no-cache", "-q", "-p", "no:cacheprovider"]
        proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if out.exists() and len(out.read_bytes().splitlines()) >= 5:
                break
            time.sleep(0.02)
        helpers = _call_processes(proc.pid)
        assert len(helpers) == 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        # the helper notices its parent is gone (end of file on its socket) and exits, instead of
        # waiting forever on its held requests
        assert all(_gone(pid, within=60) for pid in helpers)

        raw = out.read_text()
        assert raw.endswith("\n")
        first = [json.loads(line) for line in raw.splitlines()]  # every line is whole, valid JSON
        assert 5 <= len(first) <= 7
        done = {r["record_id"] for r in first}
        before = len(chat_requests(server))
        server.responder = hold.inner

        result = subprocess.run([*cmd, "--jeval-resume"], cwd=pytester.path, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-2000:]
        records = [json.loads(line) for line in out.read_text().splitlines()]
        counts = Counter(r["record_id"] for r in records)
        assert set(counts) == {f"gsm8k-{i}" for i in range(40)}
        assert max(counts.values()) == 1  # exactly one line per sample
        # completed samples were not asked again
        resent = [last_user_message(r["body"]) for r in chat_requests(server)[before:]]
        asked_again = {f"gsm8k-{i}" for i, row in enumerate(rows) for text in resent if row["question"] in text}
        assert not (asked_again & done)
        summary = json.loads((pytester.path / "out" / "gsm8k_test-model.jsonl.summary.json").read_text())
        assert summary["total_samples"] == 40 and summary["accuracy"] == 1.0
