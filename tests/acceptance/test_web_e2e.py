"""webchorearena and workarena end to end through the plugin, with the real browser and the local sites: the
oracle scores 1 on every task and nop 0 (over ``-n 2``), ``-k`` selects, a run killed with SIGKILL leaves no
Chromium, driver or server process and ``--jeval-resume`` finishes it with every record once, the report shows
the browser steps, and without a browser the benchmarks are refused with the install command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.support.web import require_browser

SUITE = """
    [run]
    output_dir = "out"
    tool_timeout = 300   # generous: the machine may be busy


    [[models]]
    name = "m"
    base_url = "http://127.0.0.1:9/v1"   # nothing listens: the named agents never call the model

    [[benchmarks]]
    name = "webchorearena"
    agent = "{agent}"
    [benchmarks.options]
    action_timeout = 120
    navigation_timeout = 120

    [[benchmarks]]
    name = "workarena"
    agent = "{agent}"
    [benchmarks.options]
    action_timeout = 120
    navigation_timeout = 120
"""


def records(path: Path) -> list[dict[str, object]]:
    found = []
    for name in ("webchorearena_m.jsonl", "workarena_m.jsonl"):
        file = path / "out" / name
        found += [json.loads(line) for line in file.read_text().splitlines()] if file.exists() else []
    return found


def descendants(root: int) -> list[tuple[int, str]]:
    """Every live process below ``root`` (pid, command name)."""
    children: dict[int, list[int]] = {}
    names: dict[int, str] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1: text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        names[int(stat.parent.name)] = name
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append((child, names.get(child, "?")))
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_oracle_scores_one_and_nop_zero_over_two_workers(pytester: pytest.Pytester) -> None:
    require_browser()
    (pytester.path / "suite.toml").write_text(textwrap.dedent(SUITE.format(agent="oracle")))
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-n", "2")
    found = records(pytester.path)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(found) == 21 and all(r["is_correct"] is True for r in found)
    assert Counter(r["record_id"] for r in found).most_common(1)[0][1] == 1
    trajectories = (pytester.path / "out" / "workarena_m.jsonl.trajectories.jsonl").read_text()
    assert '"action": "select"' in trajectories and '"snapshot": "[' in trajectories

    report = subprocess.run([sys.executable, "-m", "pytest_jeval", "report", str(pytester.path / "out"), "-o",
                             str(pytester.path / "report.html")], capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    page = (pytester.path / "report.html").read_text()
    assert "tool details" in page and "<b>action</b>: select" in page and "/catalog/order/REQ0010001" in page

    (pytester.path / "suite.toml").write_text(textwrap.dedent(SUITE.format(agent="nop")))
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-n", "2")
    found = records(pytester.path)
    assert result.ret == 1 and len(found) == 21 and all(r["is_correct"] is False for r in found)


@pytest.mark.slow
def test_k_selects_and_a_killed_run_leaves_no_browser_and_resumes(pytester: pytest.Pytester) -> None:
    require_browser()
    (pytester.path / "suite.toml").write_text(textwrap.dedent(SUITE.format(agent="oracle")))
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider",
                                           "-k", "task-90001 or create-user")
    assert result.ret == 0
    assert sorted(str(r["record_id"]) for r in records(pytester.path)) == ["create-user", "task-90001"]
    for f in (pytester.path / "out").iterdir():
        f.unlink()

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "-p", "no:cacheprovider",
                             "-q"], cwd=pytester.path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 240
    below: list[tuple[int, str]] = []
    while time.monotonic() < deadline:
        below = descendants(proc.pid)
        if len(records(pytester.path)) >= 3 and any("chrom" in n for _, n in below):
            break
        time.sleep(0.2)
    assert any("chrom" in n for _, n in below), "the run never started its browser"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(alive(pid) for pid, _ in below):
        time.sleep(0.2)
    assert [b for b in below if alive(b[0])] == []  # no Chromium, driver or server outlives the killed run
    done = len(records(pytester.path))
    assert 0 < done < 21

    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "--jeval-resume")
    found = records(pytester.path)
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(found) == 21 and set(Counter(r["record_id"] for r in found).values()) == {1}


def test_without_a_browser_the_benchmarks_are_refused_with_the_install_command(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text(textwrap.dedent(SUITE.format(agent="oracle")))
    os.environ["JEVAL_CHROMIUM"] = str(pytester.path / "no-such-chromium")
    try:
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    finally:
        del os.environ["JEVAL_CHROMIUM"]
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*webchorearena cannot run here*apt-get install -y chromium*"])
    assert not (pytester.path / "out" / "webchorearena_m.jsonl").exists()
