"""An external ``command`` agent on swebench runs in the external agents' sandbox, through the plugin.

The agent changes a comment in its checkout (no fix) and tries what a hostile agent CLI tries: reading the instances file (the gold patch and the tests that
grade it), the SWE cache (prepared checkouts and environments), this package's data, calling the model
server around its proxy; and it plants what would forge the grading if the grader ran in its checkout
(a ``sitecustomize.py`` that reports every test passed, git hooks, a ``.git/config`` that runs a
program). Every read and call fails, and the change is graded on a fresh checkout with only its diff
applied: the planted files are not there, and the instance is not resolved.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import pytest_jeval
from pytest_jeval.sandbox.confined import confinement_problem
from pytest_jeval.testing.openai_server import FakeOpenAIServer, script_responder
from tests.support.swe import SWEBENCH_ROWS, records, require_sandbox, shared_cache, suite, use_cache, write_rows

PACKAGE_DATA = Path(pytest_jeval.__file__).resolve().parent / "benchmarks" / "terminal_lite" / "data" / "tasks.jsonl"
INSTANCE = "jeval-fixtures__routegraph-1"

# The agent's script: the targets are written into its text (a path the command line names is shown to it).
AGENT = r'''
import glob, json, os, pathlib, socket, sys

TARGETS = __TARGETS__
ws = pathlib.Path(sys.argv[1])
report = {"uid": os.getuid()}
with open("/proc/self/status", encoding="utf-8") as fh:
    report["cap_eff"] = next(line.split()[1] for line in fh if line.startswith("CapEff:"))
for name in ("instances", "cache", "package_data"):
    try:
        os.listdir(TARGETS[name]) if os.path.isdir(TARGETS[name]) else open(TARGETS[name], "rb").read(1)
        report[name] = "ok"
    except OSError as exc:
        report[name] = exc.strerror or type(exc).__name__
try:
    with socket.create_connection(("127.0.0.1", TARGETS["server_port"]), timeout=3) as conn:
        report["direct_model_call"] = "ok"
except OSError as exc:
    report["direct_model_call"] = exc.strerror or type(exc).__name__
# plants that would forge a grading run in this checkout: none of them is in the diff
forge = "import os, sys\n" + "".join(f"print('PASSED {t}')\n" for t in TARGETS["tests"]) + "os._exit(0)\n"
sites = glob.glob(str(ws / ".jeval" / "venv" / "lib" / "python*" / "site-packages"))
for site in sites:
    pathlib.Path(site, "sitecustomize.py").write_text(forge)
report["planted_sites"] = len(sites)
hooks = ws / ".git" / "hooks"
for hook in ("pre-commit", "post-checkout", "post-merge"):
    (hooks / hook).write_text("#!/bin/sh\necho forged > /tmp/forged\n")
    (hooks / hook).chmod(0o755)
with open(ws / ".git" / "config", "a", encoding="utf-8") as fh:
    fh.write("[core]\n\tfsmonitor = /bin/false\n")
# a change that fixes nothing: the diff is not empty, so the grader runs the tests
path = ws / "routegraph" / "paths.py"
path.write_text(path.read_text() + "\n# looked at this\n")
print(json.dumps(report, sort_keys=True))
'''


@pytest.fixture(autouse=True)
def _sandbox(monkeypatch: pytest.MonkeyPatch) -> Path:
    require_sandbox()
    if confinement_problem() is not None:
        pytest.fail(f"no sandbox for external agents here: {confinement_problem()}")
    return use_cache(monkeypatch, shared_cache())


@pytest.mark.slow
def test_a_command_agent_on_swebench_is_confined_and_its_plants_do_not_grade(pytester: pytest.Pytester,
                                                                              _sandbox: Path) -> None:
    row = next(r for r in SWEBENCH_ROWS if r["instance_id"] == INSTANCE)
    instances = write_rows(pytester.path / "instances.jsonl", [row])
    tests = json.loads(row["FAIL_TO_PASS"]) + json.loads(row["PASS_TO_PASS"])
    with FakeOpenAIServer(script_responder({}, default="x")) as server:  # the agent asks no model
        targets = {"instances": str(instances), "cache": str(_sandbox), "package_data": str(PACKAGE_DATA),
                   "server_port": int(server.base_url.rsplit(":", 1)[1].split("/")[0]), "tests": tests}
        script = pytester.path / "agent.py"
        script.write_text(AGENT.replace("__TARGETS__", repr(targets)))
        suite(pytester, [{"name": "swebench", "backend": "command", "data_files": [str(instances)],
                          "command": [sys.executable, str(script), "{workspace}"], "record_ids": [INSTANCE]}],
              base_url=server.base_url)
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        assert server.request_count == 0
    result.assert_outcomes(failed=1)
    record = records(pytester, "swebench")[INSTANCE]
    report = json.loads(record["model_answer"])
    assert report["cap_eff"] == "0000000000000000" and report["uid"] == 65534
    for attempt in ("instances", "cache", "package_data", "direct_model_call"):
        assert not report[attempt].startswith("ok"), (attempt, report)
    assert report["planted_sites"] >= 1  # the forgery was in place in its checkout
    meta = record["scoring_metadata"]
    assert record["is_correct"] is False and meta["patch_files"] == ["routegraph/paths.py"]
    assert meta["resolution"] != "RESOLVED_FULL" and meta["statuses"][tests[0]] != "PASSED", meta
    assert "sitecustomize" not in meta["patch"] and "fsmonitor" not in meta["patch"]
    ext = record["trajectory"]["external"]
    assert ext["containment"] == "bwrap"
    assert {"userns", "no-caps", "netns", "pidns", "built-fs", "proxy-only-network"} <= set(ext["isolation"])
