"""Start-up: what the pytest process does before the first request, and what it leaves to the call helper.

The call helper starts at ``pytest_configure`` and checks the endpoints at session start,
so the pytest process itself never imports ``openai`` when the helper runs the calls; the
cyclic garbage collector is paused from the suite's load to the end of collection, and what
exists then is frozen, except in a session nested in another (pytester's in-process runs).
"""

from __future__ import annotations

import gc
import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from pytest_jeval.calls.callproc import ProcessCallScheduler
from pytest_jeval.core.chat import Endpoint
from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.gsm import SECRET, GsmScript, gsm_rows

SUITE = """
[run]
output_dir = "out"
cache = false
max_concurrency = 8
call_executor = "{executor}"

[[models]]
name = "test-model"
base_url = "{base_url}"
api_key_env = "JEVAL_TEST_KEY"

[[benchmarks]]
name = "gsm8k"
data_files = "gsm.jsonl"
{bench}
"""

#: What the pytest process had done, written at the points that matter.
OBSERVE = """
import gc, json, sys
import pytest
from pytest_jeval.session.keys import runtime_key

seen = {}

@pytest.hookimpl(wrapper=True)
def pytest_sessionstart(session):  # after every pytest_sessionstart implementation, the endpoint check's too
    yield
    seen["gc_at_sessionstart"] = gc.isenabled()
    seen["openai_after_check"] = "openai" in sys.modules

@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):  # (conftest hooks of an item do not reach these items: they live in the package)
    seen["gc_after_collection"] = gc.isenabled()

def pytest_sessionfinish(session):
    scheduler = session.config.stash[runtime_key]._scheduler
    seen.update(scheduler=type(scheduler).__name__, openai_at_end="openai" in sys.modules,
                frozen=gc.get_freeze_count())
    (session.config.rootpath / "seen.json").write_text(json.dumps(seen))
"""


@pytest.fixture
def project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    rows = gsm_rows(test_data, 12)
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pytester.makeconftest(OBSERVE)
    return pytester


def run(project: pytest.Pytester, server: FakeOpenAIServer, executor: str, *args: str,
        bench: str = "") -> tuple[pytest.RunResult, dict[str, Any]]:
    suite = project.path / "suite.toml"
    suite.write_text(SUITE.format(executor=executor, base_url=server.base_url, bench=bench))
    result = project.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider", *args)
    return result, json.loads((project.path / "seen.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("executor", ["process", "auto"])
def test_with_a_helper_the_pytest_process_never_imports_openai(project: pytest.Pytester, test_data: Path,
                                                                executor: str) -> None:
    rows = gsm_rows(test_data, 12)
    calls = 12 * (20 if executor == "auto" else 1)  # auto: 240 calls are enough for a helper
    (project.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows * (calls // 12)))
    with FakeOpenAIServer(GsmScript(rows), api_key=SECRET) as server:
        result, seen = run(project, server, executor)
        paths = [r["path"] for r in server.requests]
    result.assert_outcomes(passed=calls)
    assert seen["scheduler"] == "ProcessCallScheduler"
    assert seen["openai_after_check"] is False and seen["openai_at_end"] is False
    assert paths[0].endswith("/models")  # the endpoint check, made by the helper before any call
    assert paths.count(paths[-1]) == calls


@pytest.mark.slow
def test_on_a_thread_the_pytest_process_imports_openai(project: pytest.Pytester, test_data: Path) -> None:
    with FakeOpenAIServer(GsmScript(gsm_rows(test_data, 12)), api_key=SECRET) as server:
        result, seen = run(project, server, "thread")
    result.assert_outcomes(passed=12)
    assert seen["scheduler"] == "CallScheduler" and seen["openai_after_check"] is True


def test_a_dead_endpoint_checked_by_the_helper_stops_the_run_before_any_sample(project: pytest.Pytester) -> None:
    with FakeOpenAIServer(lambda body, attempt: "x", api_key="another key") as server:
        suite = project.path / "suite.toml"
        suite.write_text(SUITE.format(executor="process", base_url=server.base_url, bench=""))
        result = project.runpytest_subprocess("--jeval-config", str(suite), "-p", "no:cacheprovider")
        chat = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert result.ret == pytest.ExitCode.USAGE_ERROR and chat == []
    result.stderr.fnmatch_lines(["*endpoint unusable, no samples were sent:*", "*rejected the API key (HTTP 401)*"])
    assert SECRET not in result.stdout.str() + result.stderr.str()


def test_the_collector_is_paused_until_collection_ends_then_frozen(project: pytest.Pytester, test_data: Path) -> None:
    with FakeOpenAIServer(GsmScript(gsm_rows(test_data, 12)), api_key=SECRET) as server:
        result, seen = run(project, server, "process")
    result.assert_outcomes(passed=12)
    assert seen["gc_at_sessionstart"] is False  # datasets is imported and the data loaded with it paused
    assert seen["gc_after_collection"] is True
    assert seen["frozen"] > 10_000  # modules, plan, samples, items


def test_a_nested_session_freezes_nothing_and_leaves_the_collector_on(project: pytest.Pytester,
                                                                      test_data: Path) -> None:
    frozen = gc.get_freeze_count()
    with FakeOpenAIServer(GsmScript(gsm_rows(test_data, 12)), api_key=SECRET) as server:
        suite = project.path / "suite.toml"
        suite.write_text(SUITE.format(executor="thread", base_url=server.base_url, bench=""))
        result = project.runpytest("--jeval-config", str(suite), "-p", "no:cacheprovider")  # in this process
    result.assert_outcomes(passed=12)
    seen = json.loads((project.path / "seen.json").read_text())
    assert seen["gc_at_sessionstart"] is False and seen["gc_after_collection"] is True
    assert gc.get_freeze_count() == frozen and gc.isenabled()


def test_a_helper_gone_before_the_check_leaves_it_to_the_caller() -> None:
    scheduler = ProcessCallScheduler()
    try:
        scheduler.start()
        assert scheduler.pid is not None
        os.kill(scheduler.pid, signal.SIGKILL)
        assert scheduler.check_endpoints([Endpoint("http://127.0.0.1:9/v1", SecretStr("k"))]) is None
    finally:
        scheduler.close()


def test_the_helper_checks_each_endpoint() -> None:
    with FakeOpenAIServer(lambda body, attempt: "x", api_key=SECRET, models=("test-model",)) as server:
        url = server.base_url
        scheduler = ProcessCallScheduler()
        try:
            scheduler.start()
            reasons = scheduler.check_endpoints([Endpoint(server.base_url, SecretStr(SECRET)),
                                                 Endpoint(server.base_url, SecretStr("wrong")),
                                                 Endpoint("http://127.0.0.1:9/v1", SecretStr(SECRET))])
        finally:
            scheduler.close()
    assert reasons is not None and reasons[0].problem is None and reasons[0].models == ("test-model",)
    assert reasons[1].problem == f"{url} rejected the API key (HTTP 401)"
    problem = reasons[2].problem
    assert problem is not None and problem.startswith("connection error to http://127.0.0.1:9/v1")


def test_the_early_bound_is_cheap_and_capped(tmp_path: Path, test_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_jeval.session.runtime import AUTO_PROCESS_MIN_CALLS, early_bound
    from pytest_jeval.suite.plan import EvalPlan

    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    rows = gsm_rows(test_data, 12)

    def bound(n_rows: int, bench: str = "") -> int:
        (tmp_path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (rows * 50)[:n_rows]))
        suite = tmp_path / "suite.toml"
        suite.write_text(SUITE.format(executor="auto", base_url="http://127.0.0.1:9/v1", bench=bench))
        plan = EvalPlan.from_file(suite, invocation_dir=tmp_path)
        return early_bound(plan.benchmarks["gsm8k"])

    assert bound(12) == 12  # the file's lines: no helper for 12 calls
    assert bound(450) == AUTO_PROCESS_MIN_CALLS  # counted only up to the cap
    assert bound(450, "max_samples = 30") == 30
    quick = tmp_path / "quick.toml"
    quick.write_text('[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "k"\n'
                     '[[benchmarks]]\nname = "quickstart"\n')
    plan = EvalPlan.from_file(quick, invocation_dir=tmp_path)
    assert early_bound(plan.benchmarks["quickstart"]) == 36  # its bundled file's lines
