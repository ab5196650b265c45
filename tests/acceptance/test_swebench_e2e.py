"""swebench through the plugin, on the fixture repositories given as bundles in ``repos_dir``.

The oracle resolves every instance and nop none; a scripted direct answer, scripted tool calls and an
external ``command`` agent are graded as upstream grades; ``-n 2`` gives the records ``-n 0`` gives and
builds each environment once; a run killed with SIGKILL finishes with ``--jeval-resume``, each instance
once; bad input stops the run before any request; no process is left running.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.benchmarks._swe.cache import builds
from pytest_jeval.benchmarks._swe.options import SweOptions
from pytest_jeval.benchmarks.swebench import bench_swebench as bench
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.scoring.registry import call_scorer
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.swe import (
    DATA,
    REPOS,
    ROWS,
    SPECS,
    SWEBENCH_ROWS,
    fresh_cache,
    processes_mentioning,
    records,
    require_sandbox,
    shared_cache,
    suite,
    summary,
    use_cache,
    write_rows,
)

IDS = [r["instance_id"] for r in SWEBENCH_ROWS]


@pytest.fixture(autouse=True)
def _sandbox(monkeypatch: pytest.MonkeyPatch) -> Path:
    require_sandbox()
    return use_cache(monkeypatch, shared_cache())


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", *args)


def _instances(pytester: pytest.Pytester, rows: list[dict[str, Any]] = SWEBENCH_ROWS) -> str:
    return str(write_rows(pytester.path / "instances.jsonl", rows))


def _chat_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["path"].endswith("/chat/completions")]


@pytest.mark.slow
def test_the_oracle_resolves_every_instance_and_nop_none(pytester: pytest.Pytester, _sandbox: Path) -> None:
    data = _instances(pytester)
    suite(pytester, [{"name": "swebench", "label": "oracle", "agent": "oracle", "data_files": [data]},
                     {"name": "swebench", "label": "nop", "agent": "nop", "data_files": [data]}])
    result = _run(pytester)
    result.assert_outcomes(passed=len(IDS), failed=len(IDS))
    result.stdout.fnmatch_lines(["*calls: 0 sent*"])
    oracle, nop = records(pytester, "oracle"), records(pytester, "nop")
    assert set(oracle) == set(nop) == set(IDS)
    ctx = LoadContext(benchmark="swebench", subset=None, seed=0, data_dir=DATA,
                      options=SweOptions(repos_dir=REPOS, specs_file=SPECS))
    for iid in IDS:
        good, idle = oracle[iid], nop[iid]
        assert good["is_correct"] is True and good["scoring_metadata"]["resolution"] == "RESOLVED_FULL", iid
        assert good["agent"]["name"] == "oracle" and good["agent"]["tool_calls"] == 1
        assert good["scoring_metadata"]["patch"] == ROWS[iid]["patch"]  # the checkout's diff is the gold patch
        assert good["scoring_metadata"]["deviations"] and good["scoring_metadata"]["tests_status"]["FAIL_TO_PASS"][
            "failure"] == []
        assert idle["is_correct"] is False and idle["scoring_metadata"]["resolution"] == "RESOLVED_NO"
        assert idle["scoring_metadata"]["reason"] == "the patch is empty: nothing was submitted"
        sample = bench.to_sample(ROWS[iid], 0, ctx)
        for record in (good, idle):  # jeval rescore gives the same verdicts
            again = call_scorer("swebench", record, sample=sample)
            assert (again.correct, again.extracted) == (record["is_correct"], record["extracted"]), iid
    assert summary(pytester, "oracle")["resolution_counts"] == {"FULL": len(IDS), "PARTIAL": 0, "NO": 0}
    assert summary(pytester, "nop")["resolved"] == 0 and "do_nothing_resolves" in summary(pytester, "nop")
    assert processes_mentioning(str(_sandbox)) == []


@pytest.mark.slow
def test_direct_diffs_and_agent_tool_calls_are_graded(pytester: pytest.Pytester) -> None:
    """One run, two entries: direct answers (a diff in the reply, or not) and an agent's scripted tool calls."""
    gold, ledger = ROWS["jeval-fixtures__textkit-1"]["patch"], ROWS["jeval-fixtures__ledger-1"]["patch"]
    direct = script_responder({
        "slugify leaves separators": [f"The fix:\n<patch>\n{gold}</patch>"],
        "parse_amount rejects": [f"Here is a patch.\n```diff\n{ledger}```\n"],
        "truncate returns text longer": ["Count the ellipsis in the width."],
        "components() drops isolated": ["```diff\n--- a/routegraph/nothing.py\n+++ b/routegraph/nothing.py\n"
                                        "@@ -1 +1 @@\n-x\n+y\n```"],
    }, default="?")
    edit = ToolCallSpec("str_replace", {"path": "textkit/wrap.py", "old_str": "    return text[:width] + ellipsis\n",
                                        "new_str": "    if width <= len(ellipsis):\n        return ellipsis[:width]\n"
                                                   "    return text[: width - len(ellipsis)] + ellipsis\n"})
    check = ToolCallSpec("bash", {"command": "python -c 'import textkit; print(textkit.truncate(\"abcdefghij\", 6))'"})
    agent = script_responder({"truncate returns text longer": [tool_answer(edit), tool_answer(check), "Fixed."]},
                             default="I looked and changed nothing.")

    def respond(body: dict[str, Any], attempt: int) -> Any:
        return (agent if body.get("tools") else direct)(body, attempt)

    data = _instances(pytester)
    with FakeOpenAIServer(respond) as server:
        suite(pytester, [{"name": "swebench", "label": "direct", "backend": "direct", "data_files": [data]},
                         {"name": "swebench", "label": "agent", "data_files": [data],
                          "record_ids": ["jeval-fixtures__textkit-2", "jeval-fixtures__routegraph-1"]}],
              base_url=server.base_url)
        result = _run(pytester)
        requests = _chat_requests(server)
    result.assert_outcomes(passed=3, failed=3)
    got = records(pytester, "direct")
    assert got["jeval-fixtures__textkit-1"]["scoring_metadata"]["resolution"] == "RESOLVED_FULL"
    assert got["jeval-fixtures__ledger-1"]["scoring_metadata"]["resolution"] == "RESOLVED_FULL"
    assert got["jeval-fixtures__textkit-2"]["scoring_metadata"]["reason"] == "the reply holds no unified diff"
    assert got["jeval-fixtures__routegraph-1"]["scoring_metadata"]["reason"].startswith("the patch did not apply")
    prompts = [r["body"]["messages"][0]["content"] for r in requests if not r["body"].get("tools")]
    assert len(prompts) == len(IDS)
    slug = next(p for p in prompts if "slugify leaves" in p)
    assert "[start of textkit/slug.py]" in slug and "<patch>" in slug  # the gold patch's files, at the base

    got = records(pytester, "agent")
    fixed = got["jeval-fixtures__textkit-2"]
    assert fixed["is_correct"] is True and fixed["scoring_metadata"]["patch_files"] == ["textkit/wrap.py"]
    calls = fixed["trajectory"]["tool_calls"]
    assert [c["name"] for c in calls] == ["str_replace", "bash"] and "abc..." in calls[1]["result"]
    idle = got["jeval-fixtures__routegraph-1"]
    assert idle["is_correct"] is False and idle["scoring_metadata"]["reason"].startswith("the patch is empty")
    tools = next(r["body"]["tools"] for r in requests if r["body"].get("tools"))
    assert [t["function"]["name"] for t in tools] == ["bash", "python", "str_replace", "file_read", "file_write",
                                                      "list_files"]


AGENT = """
import pathlib, sys
path = pathlib.Path(sys.argv[1]) / "routegraph" / "paths.py"
text = path.read_text()
path.write_text(text.replace("if node in seen or not graph.neighbours(node):", "if node in seen:"))
print("Isolated nodes are components now.")
"""


@pytest.mark.slow
def test_an_external_command_agent_edits_the_checkout(pytester: pytest.Pytester) -> None:
    script = pytester.path / "agent.py"
    script.write_text(AGENT)
    with FakeOpenAIServer(script_responder({}, default="x")) as server:  # the agent asks no model
        suite(pytester, [{"name": "swebench", "backend": "command", "data_files": [_instances(pytester)],
                          "command": [sys.executable, str(script), "{workspace}"],
                          "record_ids": ["jeval-fixtures__routegraph-1"]}], base_url=server.base_url)
        result = _run(pytester)
    result.assert_outcomes(passed=1)
    record = records(pytester, "swebench")["jeval-fixtures__routegraph-1"]
    assert record["scoring_metadata"]["resolution"] == "RESOLVED_FULL"
    assert record["model_answer"] == "Isolated nodes are components now."


def _comparable(record: dict[str, Any]) -> tuple[Any, ...]:
    meta = record["scoring_metadata"]
    return (record["is_correct"], record["score"], meta["resolution"], meta["statuses"], meta["patch"],
            meta["tests_status"], meta["test_exit_code"])


@pytest.mark.slow
def test_two_workers_give_the_records_of_one_and_build_each_environment_once(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """The two textkit instances share one environment: each worker needs it at once, one builds it."""
    cache = use_cache(monkeypatch, fresh_cache("xdist"))
    request.addfinalizer(lambda: shutil.rmtree(cache, ignore_errors=True))
    rows = [ROWS["jeval-fixtures__textkit-1"], ROWS["jeval-fixtures__textkit-2"]]
    suite(pytester, [{"name": "swebench", "agent": "oracle", "data_files": [_instances(pytester, rows)]}])
    result = _run(pytester, "-n", "2")
    result.assert_outcomes(passed=2)
    parallel = records(pytester, "swebench")
    built = Counter((b["kind"], b["path"]) for b in builds(cache))
    assert max(built.values()) == 1  # nothing built twice
    kinds = Counter(kind for kind, _ in built)
    assert kinds["env"] == 1 and kinds["tree"] == 2 and kinds["mirror"] == 1
    assert len({b["pid"] for b in builds(cache) if b["kind"] == "tree"}) == 2  # both workers did build (a tree each)
    os.remove(pytester.path / "out" / "swebench_m.jsonl")
    result = _run(pytester, "-n", "0")
    result.assert_outcomes(passed=2)
    assert len(builds(cache)) == sum(built.values())  # everything reused
    serial = records(pytester, "swebench")
    assert {k: _comparable(v) for k, v in parallel.items()} == {k: _comparable(v) for k, v in serial.items()}
    assert processes_mentioning(str(cache)) == []


@pytest.mark.slow
def test_a_killed_run_resumes_and_grades_each_instance_once(pytester: pytest.Pytester, _sandbox: Path) -> None:
    suite(pytester, [{"name": "swebench", "agent": "oracle", "data_files": [_instances(pytester)]}])
    out = pytester.path / "out" / "swebench_m.jsonl"
    cmd = [sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "-q", "-p", "no:cacheprovider"]
    proc = subprocess.Popen(cmd, cwd=pytester.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 1:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = [json.loads(line) for line in out.read_text().splitlines()]
    assert 1 <= len(first) < len(IDS)
    deadline = time.monotonic() + 30  # the sandboxed processes die with their parent (PDEATHSIG, --die-with-parent)
    while processes_mentioning(str(_sandbox)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_mentioning(str(_sandbox)) == []
    done = subprocess.run([*cmd, "--jeval-resume"], cwd=pytester.path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
    counts = Counter(json.loads(line)["record_id"] for line in out.read_text().splitlines())
    assert counts == Counter(IDS)  # each instance exactly once
    assert all(r["is_correct"] for r in records(pytester, "swebench").values())


def _bad_rows(change: str) -> list[dict[str, Any]]:
    row = dict(ROWS["jeval-fixtures__textkit-1"])
    if change == "commit":
        row["base_commit"] = "0123456789abcdef0123456789abcdef01234567"
    elif change == "version":
        row["version"] = "9.9"
    return [row, ROWS["jeval-fixtures__ledger-1"]]


@pytest.mark.parametrize(("case", "messages"), [
    ("repo", ["ERROR: swebench: repository jeval-fixtures/ledger is not in the mirrors (repos_dir *only-textkit); add it: "
              "git clone --mirror https://github.com/jeval-fixtures/ledger *only-textkit/jeval-fixtures__ledger.git*"
              "fetch_repos = true*"]),
    ("commit", ["*jeval-fixtures__textkit-1: the base commit 0123456789abcdef0123456789abcdef01234567 is not in the "
                "mirror*"]),
    ("version", ["*no install recipe for jeval-fixtures/textkit version '9.9'*specs_file*"]),
    ("option", ["*benchmarks[[]0[]].options.repo_dir: unknown key; the options of 'swebench' are: repos_dir, "
                "fetch_repos, clone_base, specs_file*"]),
])
def test_bad_input_stops_the_run_before_any_request(pytester: pytest.Pytester, case: str, messages: list[str]) -> None:
    repos = REPOS
    if case == "repo":
        repos = pytester.path / "only-textkit"
        repos.mkdir()
        (repos / "jeval-fixtures__textkit.bundle").write_bytes((REPOS / "jeval-fixtures__textkit.bundle").read_bytes())
    entry: dict[str, Any] = {"name": "swebench", "data_files": [_instances(pytester, _bad_rows(case))]}
    if case == "option":
        entry["options"] = {"repo_dir": "x"}
    with FakeOpenAIServer(script_responder({}, default="x")) as server:
        suite(pytester, [entry], base_url=server.base_url, repos=repos)
        result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")  # in process: quicker
        requests = _chat_requests(server)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and requests == []
    result.stderr.fnmatch_lines(messages)
    assert "Traceback" not in result.stderr.str()


@pytest.mark.slow
def test_the_hub_subset_is_loaded_by_datasets_and_fails_clearly_offline(pytester: pytest.Pytester,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(pytester.path / "hf"))  # an empty cache
    suite(pytester, [{"name": "swebench", "subset": "lite"}])
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: cannot load 'princeton-nlp/SWE-bench_Lite' (split 'test') from the Hugging "
                                 "Face Hub*data_files at a local copy*"])
    suite(pytester, [{"name": "swebench", "subset": "nonsense"}])
    result = _run(pytester)
    result.stderr.fnmatch_lines(["*swebench: subset 'nonsense' is neither one of mini, verified, lite, full, "
                                 "swefficiency nor a Hub dataset id owner/name*"])
