"""Inference spread over replicas by an existing router: a LiteLLM proxy in front of test-server replicas.

One LiteLLM proxy (``make litellm`` installs it in ``.venv-litellm``) serves four model groups,
each of two in-process test-server replicas on 127.0.0.1 that answer GSM8K rows correctly:

* ``pair-model``: two healthy replicas; both must serve a share of the calls;
* ``fail-model``: one healthy, one answering HTTP 500 to every call;
* ``hang-model``: one healthy, one that accepts every call and never answers;
* ``dead-model``: one healthy, one that is stopped (connections refused) after its third call.

A suite whose ``[[models]] base_url`` is the proxy runs in a pytest subprocess; every sample
must come back answered and correct, with complete records and no failed item. The proxy
retries on another deployment (``num_retries``) and cools the bad one down; the suite's own
client never has to retry (``attempts`` is 1 in every record). Throughput is measured by
``tests/perf/bench_router.py``, not here: these tests assert on counts, never on time.
"""

from __future__ import annotations

import json
import os
import stat
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.scoring.numeric import gsm8k_gold
from pytest_jeval.testing.litellm_proxy import (
    Deployment,
    LiteLLMNotInstalledError,
    LiteLLMProxy,
    RouterSettings,
    find_litellm,
    proxy_config,
    proxy_environment,
)
from pytest_jeval.testing.openai_server import FakeOpenAIServer, Fault, ResponderResult, last_user_message

ROWS = 12
REPLICA_KEY = "replica-key-0123456789abcdef"
KEY_ENV = "JEVAL_ROUTER_KEY"
# The proxy gives up on a replica after TIMEOUT s and tries another, up to NUM_RETRIES times; the
# suite's request_timeout covers all of that ((NUM_RETRIES + 1) * TIMEOUT = 8 s) with room to spare.
TIMEOUT = 2.0
NUM_RETRIES = 3
REQUEST_TIMEOUT = 20


class GsmAnswers:
    """A responder that answers each GSM8K row with its gold answer (optionally failing instead)."""

    def __init__(self, rows: list[dict[str, Any]], fault: Fault | None = None) -> None:
        self.gold = {row["question"]: gsm8k_gold(row["answer"]) for row in rows}
        self.fault = fault

    def __call__(self, body: dict[str, Any], attempt: int) -> ResponderResult:
        if self.fault is not None:
            return self.fault
        text = last_user_message(body)
        for question, gold in self.gold.items():
            if question in text:
                return f"Working it out step by step.\nAnswer: {gold}"
        return "no idea"


class DiesAfter(GsmAnswers):
    """Answers ``calls`` calls, then stops its server from another thread: later connections are refused."""

    def __init__(self, rows: list[dict[str, Any]], calls: int) -> None:
        super().__init__(rows)
        self.calls = calls
        self.served = 0
        self.server: FakeOpenAIServer | None = None
        self.stopper: threading.Thread | None = None
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], attempt: int) -> ResponderResult:
        with self._lock:
            self.served += 1
            if self.served == self.calls and self.server is not None:
                self.stopper = threading.Thread(target=self.server.stop, name="stop-replica")
                self.stopper.start()
        return super().__call__(body, attempt)


@dataclass
class Router:
    """The running proxy, its replicas (by group: healthy first, bad second) and the GSM8K rows."""

    proxy: LiteLLMProxy
    replicas: dict[str, tuple[FakeOpenAIServer, FakeOpenAIServer]]
    rows: list[dict[str, Any]]
    dying: DiesAfter


@pytest.fixture(scope="module")
def litellm_router(test_data: Path) -> Iterator[Router]:
    """One LiteLLM proxy over four two-replica groups; fails, saying `make litellm`, when it is not installed."""
    try:
        find_litellm()
    except LiteLLMNotInstalledError as exc:
        pytest.fail(str(exc), pytrace=False)
    lines = (test_data / "gsm8k" / "test.jsonl").read_text(encoding="utf-8").splitlines()[:ROWS]
    rows = [json.loads(line) for line in lines]
    dying = DiesAfter(rows, calls=3)
    specs: dict[str, tuple[Any, Any]] = {
        "pair-model": (GsmAnswers(rows), GsmAnswers(rows)),
        "fail-model": (GsmAnswers(rows), GsmAnswers(rows, Fault("500"))),
        "hang-model": (GsmAnswers(rows), GsmAnswers(rows, Fault("hang", hang_seconds=120))),
        "dead-model": (GsmAnswers(rows), dying),
    }
    servers: list[FakeOpenAIServer] = []
    replicas: dict[str, tuple[FakeOpenAIServer, FakeOpenAIServer]] = {}
    try:
        for group, (good, bad) in specs.items():
            pair = (FakeOpenAIServer(good, api_key=REPLICA_KEY, latency=0.05, slots=4),
                    FakeOpenAIServer(bad, api_key=REPLICA_KEY, latency=0.05, slots=4))
            for server in pair:
                server.start()
                servers.append(server)
            replicas[group] = pair
        dying.server = replicas["dead-model"][1]
        groups = {group: [Deployment(s.base_url, REPLICA_KEY) for s in pair] for group, pair in replicas.items()}
        settings = RouterSettings(num_retries=NUM_RETRIES, timeout=TIMEOUT, allowed_fails=1, cooldown_time=60)
        with LiteLLMProxy(groups, settings) as proxy:
            yield Router(proxy, replicas, rows, dying)
    finally:
        if dying.stopper is not None:
            dying.stopper.join(timeout=30)
        for server in servers:
            server.stop()


def run_suite(pytester: pytest.Pytester, router: Router, model: str,
              monkeypatch: pytest.MonkeyPatch) -> tuple[pytest.RunResult, list[dict[str, Any]]]:
    """Run a GSM8K suite against ``model`` through the proxy; returns the run and its records."""
    for replica in router.replicas[model]:
        replica.reset_stats()
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in router.rows))
    (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
        [meta]
        name = "router-suite"

        [run]
        output_dir = "out"
        max_concurrency = 8
        max_retries = 1
        request_timeout = {REQUEST_TIMEOUT}

        [[models]]
        name = "{model}"
        base_url = "{router.proxy.base_url}"
        api_key_env = "{KEY_ENV}"

        [[benchmarks]]
        name = "gsm8k"
        data_files = "gsm.jsonl"
    """))
    monkeypatch.setenv(KEY_ENV, router.proxy.master_key)
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", timeout=180)
    files = sorted((pytester.path / "out").glob("gsm8k_*.jsonl"))
    assert len(files) == 1, (files, result.stdout.str()[-3000:])
    records = [json.loads(line) for line in files[0].read_text().splitlines()]
    return result, records


def assert_all_answered(result: pytest.RunResult, records: list[dict[str, Any]]) -> None:
    """Every sample has one record, answered, correct and sent once by the suite's client."""
    assert result.ret == 0, result.stdout.str()[-4000:]
    result.assert_outcomes(passed=ROWS)
    assert len(records) == ROWS
    assert len({r["record_id"] for r in records}) == ROWS
    assert [r["error"] for r in records] == [None] * ROWS
    assert all(r["is_correct"] is True for r in records), [r["model_answer"] for r in records]
    # The proxy did the retrying: the suite's client never had to resend a call.
    assert [r["attempts"] for r in records] == [1] * ROWS


def test_both_replicas_serve(pytester: pytest.Pytester, litellm_router: Router,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = litellm_router.replicas["pair-model"]
    result, records = run_suite(pytester, litellm_router, "pair-model", monkeypatch)
    assert_all_answered(result, records)
    assert a.request_count > 0 and b.request_count > 0, (a.request_count, b.request_count)
    assert a.request_count + b.request_count == ROWS


@pytest.mark.parametrize("group", ["fail-model", "hang-model", "dead-model"])
def test_bad_replica_is_routed_around(pytester: pytest.Pytester, litellm_router: Router,
                                      monkeypatch: pytest.MonkeyPatch, group: str) -> None:
    good, bad = litellm_router.replicas[group]
    result, records = run_suite(pytester, litellm_router, group, monkeypatch)
    assert_all_answered(result, records)
    # The bad replica was tried (else the test proves nothing), and the good one answered every sample.
    assert bad.request_count > 0
    answered = [r for r in good.requests if r["path"].endswith("/chat/completions") and r["status"] == 200]
    if group == "dead-model":
        # It answered its first calls before it died; the rest went to the healthy one.
        assert not bad.running
        assert litellm_router.dying.served >= 3
        bad_answered = [r for r in bad.requests if r["path"].endswith("/chat/completions") and r["status"] == 200]
        assert len(answered) + len(bad_answered) >= ROWS
    else:
        assert [r["outcome"] for r in bad.requests if r["path"].endswith("/chat/completions")] != []
        assert len(answered) == ROWS


def test_keys_stay_out_of_argv_environment_and_records(pytester: pytest.Pytester, litellm_router: Router,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = litellm_router.proxy
    proc = Path("/proc") / str(proxy.pid)
    if not proc.is_dir():
        pytest.skip("no /proc on this system")
    for name in ("cmdline", "environ"):
        data = (proc / name).read_bytes()
        assert proxy.master_key.encode() not in data
        assert REPLICA_KEY.encode() not in data
    environ = dict(item.split("=", 1) for item in (proc / "environ").read_bytes().decode().split("\0") if "=" in item)
    assert environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"  # no download from GitHub at start-up
    config = Path(next(arg for arg in (proc / "cmdline").read_bytes().decode().split("\0")
                       if arg.endswith("config.yaml")))
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    # The proxy sent the replica's key upstream (the replicas check it), and the run's files hold no key.
    result, records = run_suite(pytester, litellm_router, "pair-model", monkeypatch)
    assert_all_answered(result, records)
    for path in (pytester.path / "out").rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            assert proxy.master_key not in text, path
            assert REPLICA_KEY not in text, path


def test_stop_leaves_no_process(litellm_router: Router) -> None:
    """Last in the module: stopping the proxy ends its process group and removes its folder."""
    proxy = litellm_router.proxy
    pid = proxy.pid
    folder = Path(next(a for a in Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
                       if a.endswith("config.yaml"))).parent
    assert proxy.stop() is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
    assert not folder.exists()
    assert proxy.stop() is None  # a second stop is a no-op


# --------------------------------------------------------------------------- no proxy needed


def test_missing_litellm_says_make_litellm(tmp_path: Path) -> None:
    with pytest.raises(LiteLLMNotInstalledError, match=r"run `make litellm`"):
        find_litellm(tmp_path / "bin" / "litellm")
    with pytest.raises(LiteLLMNotInstalledError, match=r"make litellm"):
        LiteLLMProxy({"m": [Deployment("http://127.0.0.1:1/v1")]}, litellm=tmp_path / "litellm").start()


def test_config_and_environment() -> None:
    settings = RouterSettings(routing_strategy="least-busy", num_retries=2, timeout=3, allowed_fails=None)
    config = proxy_config({"m": [Deployment("http://127.0.0.1:1/v1", "k1"), Deployment("http://127.0.0.1:2/v1")]},
                          settings, "sk-master")
    assert [d["litellm_params"] for d in config["model_list"]] == [
        {"model": "openai/test-model", "api_base": "http://127.0.0.1:1/v1", "api_key": "k1"},
        {"model": "openai/test-model", "api_base": "http://127.0.0.1:2/v1", "api_key": "no-key"},
    ]
    assert config["router_settings"] == {"routing_strategy": "least-busy", "num_retries": 2, "timeout": 3,
                                         "stream_timeout": 3, "cooldown_time": 30.0}
    assert config["general_settings"] == {"master_key": "sk-master"}
    env = proxy_environment(Path("/tmp/h"), {"PATH": "/bin", "OPENAI_API_KEY": "sk-x", "HTTPS_PROXY": "http://p",
                                             "LC_ALL": "C", "MY_TOKEN": "t"})
    assert env["HOME"] == "/tmp/h" and env["PATH"] == "/bin" and env["LC_ALL"] == "C"
    assert not {"OPENAI_API_KEY", "HTTPS_PROXY", "MY_TOKEN"} & set(env)
    for bad in (dict(routing_strategy="round-robin"), dict(num_retries=-1), dict(timeout=0), dict(allowed_fails=-1)):
        with pytest.raises(ValueError):
            RouterSettings(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no deployments"):
        proxy_config({"m": []}, settings, "sk-master")
