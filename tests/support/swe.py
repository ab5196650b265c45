"""The SWE-bench fixtures for the tests: data paths, a shared cache, suites, records, stray processes.

The tests need bubblewrap (the sandbox the instances run in) and, for swefficiency, valgrind: without them
they fail naming the make target, never skip. Environments, prepared checkouts and reference
measurements are kept in one cache folder shared by the tests of a run and the runs after it
(``/tmp/jeval-swe-tests-<uid>``, content-keyed like the terminal tasks' root filesystem); a test that
checks what gets built uses a fresh one of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks._swe.cache import CACHE_ENV

DATA = Path(__file__).resolve().parents[1] / "data" / "swebench"
REPOS = DATA / "repos"
SPECS = DATA / "specs.json"
SWEBENCH_ROWS = [json.loads(line) for line in (DATA / "swebench.jsonl").read_text().splitlines()]
SWEFFICIENCY_ROWS = [json.loads(line) for line in (DATA / "swefficiency.jsonl").read_text().splitlines()]
ROWS = {r["instance_id"]: r for r in (*SWEBENCH_ROWS, *SWEFFICIENCY_ROWS)}


def require_sandbox() -> None:
    """pytest.fail (never skip) without bubblewrap."""
    from pytest_jeval.sandbox.plans import current_plan

    if shutil.which("bwrap") is None or current_plan().bwrap is None:
        pytest.fail("the SWE-bench tests need the bubblewrap sandbox: run `make bubblewrap`")


def require_valgrind() -> None:
    """pytest.fail (never skip) without valgrind."""
    if shutil.which("valgrind") is None or not Path("/usr/include/valgrind/callgrind.h").exists():
        pytest.fail("the swefficiency tests need valgrind and its headers: run `make valgrind`")


def shared_cache() -> Path:
    """The cache folder the SWE tests share (made world-enterable: sandboxed programs read from it)."""
    path = Path(tempfile.gettempdir()) / f"jeval-swe-tests-{os.getuid()}"
    path.mkdir(mode=0o755, exist_ok=True)
    os.chmod(path, 0o755)
    return path


def fresh_cache(tag: str) -> Path:
    """A new, empty cache folder (world-enterable), for a test that checks what gets built."""
    path = Path(tempfile.mkdtemp(prefix=f"jeval-swe-{tag}-", dir=tempfile.gettempdir()))
    os.chmod(path, 0o755)
    return path


def use_cache(monkeypatch: pytest.MonkeyPatch, path: Path) -> Path:
    """Point the SWE benchmarks (in this process and the pytest runs it starts) at ``path``."""
    monkeypatch.setenv(CACHE_ENV, str(path))
    return path


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as a JSONL file."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def suite(pytester: pytest.Pytester, entries: list[dict[str, Any]], *, base_url: str = "http://127.0.0.1:9/v1",
          run: str = "", repos: Path = REPOS) -> Path:
    """A suite with one ``[[benchmarks]]`` block per entry (``options`` merged over the fixtures' repos and specs)."""
    blocks = []
    for entry in entries:
        entry = dict(entry)
        options = {"repos_dir": str(repos), "specs_file": str(SPECS), **entry.pop("options", {})}
        lines = ["[[benchmarks]]"] + [f"{k} = {json.dumps(v)}" for k, v in entry.items()]
        lines += ["[benchmarks.options]"] + [f"{k} = {json.dumps(v)}" for k, v in options.items()]
        blocks.append("\n".join(lines))
    text = textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 30
        cache = false
        trajectories = "inline"
        tool_timeout = 300
        {run}

        [[models]]
        name = "m"
        base_url = "{base_url}"
        api_key = "x"

        """) + "\n\n".join(blocks) + "\n"
    path = pytester.path / "suite.toml"
    path.write_text(text)
    return path


def records(pytester: pytest.Pytester, key: str, model: str = "m") -> dict[str, dict[str, Any]]:
    """The JSONL records of a (benchmark key, model) pair by record id."""
    out = pytester.path / "out" / f"{key}_{model}.jsonl"
    return {r["record_id"]: r for r in map(json.loads, out.read_text().splitlines())}


def summary(pytester: pytest.Pytester, key: str, model: str = "m") -> dict[str, Any]:
    """The summary of a (benchmark key, model) pair."""
    data: dict[str, Any] = json.loads((pytester.path / "out" / f"{key}_{model}.jsonl.summary.json").read_text())
    return data


def processes_mentioning(text: str) -> list[tuple[int, str]]:
    """Live processes (not zombies) whose command line contains ``text``: what a run must not leave behind.

    The environment cache is shared between tests, so a test running at the same time on another xdist
    worker has processes that mention it too: a process with another live pytest process among its
    ancestors belongs to that run and is left out. A process this run left behind has none (its parent
    run is over, so it was handed to init), or this process itself (an in-process run).
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X") and text in cmdline and not _under_another_pytest(int(entry.name)):
            found.append((int(entry.name), cmdline[:300]))
    return found


def _under_another_pytest(pid: int) -> bool:
    """Whether a live pytest process other than this one is among ``pid``'s ancestors."""
    seen = 0
    while pid > 1 and seen < 64:
        seen += 1
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            pid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
            if pid <= 1:
                return False
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, StopIteration, ValueError):
            return False
        if pid == os.getpid():
            return False
        if "pytest" in cmdline:
            return True
    return False
