"""Keys never leak: redaction of everything the run stores or prints, and the call helper's environment.

The end-to-end test runs the plugin against an endpoint that echoes the ``Authorization``
header (in an error and in a reply) with every output pytest has switched on, then
looks for the keys' bytes in every file and stream the run produced.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from pytest_jeval.calls.callproc import ProcessCallScheduler, helper_environment
from pytest_jeval.core import redact as redact_mod
from pytest_jeval.core.chat import ChatRequest, Endpoint, EndpointError
from pytest_jeval.core.redact import MARKER, redact, redact_record, register, unregister
from pytest_jeval.session.redaction import RedactionPlugin
from pytest_jeval.suite.config import parse_suite
from pytest_jeval.testing.openai_server import EchoAuthorization, FakeOpenAIServer, last_user_message

# None of the keys has a provider shape (sk-...): only the registry can catch them.
ENV_KEY = "envkey-Qm4Rt8Yp2Wx6Zs0123"
"""The model's key, from the variable its ``api_key_env`` names."""
INLINE_KEY = "inline-key-Zq7Xw3Vb9Nm2"
"""The second model's ``api_key`` in the suite file."""
USER_OPENAI_KEY = "user-openai-Hj5Kl9Mn3Bv7"
"""The user's own OPENAI_API_KEY, exported but not used by the suite."""
JUDGE_KEY = "judge-key-Pd3Fg6Hj9Kl2"
EXTERNAL_KEY = "external-key-Cv4Bn7Mq1We5"
PROXY_PASSWORD = "proxy-pass-W4rT9"
KEYS = (ENV_KEY, INLINE_KEY, USER_OPENAI_KEY, JUDGE_KEY, EXTERNAL_KEY)


def _leaks(text: str, keys: tuple[str, ...] = KEYS) -> list[str]:
    """The keys (or a 12-character piece of one) found in ``text``."""
    return [k for k in keys if k in text or k[4:16] in text]


@pytest.fixture
def registered() -> Any:
    added = register(ENV_KEY, INLINE_KEY)
    yield
    unregister(added)


# -- the text rules ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    (f"HTTP 401: Invalid credentials in header Authorization: Bearer {ENV_KEY}",
     f"HTTP 401: Invalid credentials in header Authorization: Bearer {MARKER}"),
    (f"echo {INLINE_KEY}!", f"echo {MARKER}!"),  # a known key without any key shape
    ("authorization: Bearer abcdefghijklmnop", f"authorization: Bearer {MARKER}"),
    ("{'Authorization': 'Basic dXNlcjpwYXNzd29yZA=='}", f"{{'Authorization': 'Basic {MARKER}'}}"),
    ("x-api-key: 0123456789abcdefgh", f"x-api-key: {MARKER}"),
    ("api_key_env = JEVAL_TEST_KEY", "api_key_env = JEVAL_TEST_KEY"),  # a variable name is no key
    (f"https://bob:{PROXY_PASSWORD}@proxy:3128/", f"https://bob:{MARKER}@proxy:3128/"),
    ("keys AKIAIOSFODNN7EXAMPLE, ghp_" + "a" * 36 + ", hf_" + "b" * 34, f"keys {MARKER}, {MARKER}, {MARKER}"),
    ("sk-ant-api03-" + "c" * 40, MARKER),
    ("local EMPTY x", "local EMPTY x"),  # placeholders are not keys
    ("the answer is 42", "the answer is 42"),
])
def test_redact_replaces_known_and_key_looking_strings(registered: None, text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected  # idempotent: the marker is never redacted again


def test_placeholders_and_short_values_are_not_registered() -> None:
    added = register("EMPTY", "local", "x", SecretStr("abc"), None, SecretStr(INLINE_KEY))
    try:
        assert added == [INLINE_KEY]
        assert redact("local model, EMPTY key") == "local model, EMPTY key"
    finally:
        unregister(added)
    assert INLINE_KEY not in redact_mod.known_keys()


def test_record_known_keys_everywhere_key_shapes_outside_benchmark_content(registered: None) -> None:
    shaped = "sk-" + "q" * 30  # key-shaped, but not a key of this run
    record = {
        "record_id": "r1", "model_answer": f"the key is {ENV_KEY}; see {shaped}", "question": f"what is {shaped}?",
        "error": f"HTTP 401: Authorization: Bearer {INLINE_KEY} and {shaped}",
        "scoring_metadata": {"stderr_tail": f"KeyError: {ENV_KEY}", "checks": [f"token {shaped}"]},
        "score": 1.0,
    }
    clean = redact_record(record)
    assert clean["model_answer"] == f"the key is {MARKER}; see {shaped}"  # content: known keys only
    assert clean["question"] == record["question"]
    assert clean["error"] == f"HTTP 401: Authorization: Bearer {MARKER} and {MARKER}"
    assert clean["scoring_metadata"] == {"stderr_tail": f"KeyError: {MARKER}", "checks": [f"token {MARKER}"]}
    assert clean["score"] == 1.0
    untouched = {"record_id": "r2", "model_answer": "5", "error": None}
    assert redact_record(untouched) is untouched


def test_log_records_come_out_redacted(registered: None) -> None:
    plugin = RedactionPlugin([])
    logger = logging.getLogger("jeval.test.secrets")
    handler = logging.Handler()
    seen: list[str] = []
    handler.emit = lambda record: seen.append(logging.Formatter().format(record))  # type: ignore[method-assign]
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        logger.debug("sending with %s", ENV_KEY)
        try:
            raise RuntimeError(f"server said Authorization: Bearer {INLINE_KEY}")
        except RuntimeError:
            logger.exception("failed")
    finally:
        plugin.pytest_unconfigure(None)  # type: ignore[arg-type]
        logger.removeHandler(handler)
    assert len(seen) == 2 and not _leaks("\n".join(seen))
    assert seen[0] == f"sending with {MARKER}" and "RuntimeError: server said Authorization: Bearer" in seen[1]
    assert logging.getLogRecordFactory() is not plugin.factory


def test_reprs_of_fixture_values_hold_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_SECRETS_KEY", ENV_KEY)
    suite = parse_suite(textwrap.dedent(f"""
        [judge]
        base_url = "http://127.0.0.1:9/v1"
        api_key = "{INLINE_KEY}"
        [backend.external]
        api_key = "{USER_OPENAI_KEY}"
        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"
        api_key_env = "JEVAL_SECRETS_KEY"
        [[benchmarks]]
        name = "gsm8k"
    """), tmp_path / "suite.toml")
    from pytest_jeval.calls.client import ModelClient

    endpoint = Endpoint("http://127.0.0.1:9/v1", SecretStr(ENV_KEY))
    client = ModelClient("m", endpoint=endpoint, submit=lambda e, r: None, temperature=0.0, max_tokens=8)  # type: ignore[arg-type,return-value]
    shown = " ".join(repr(v) for v in (suite, suite.models[0], suite.judge, suite.backend, endpoint, client))
    assert not _leaks(shown), shown
    assert "JEVAL_SECRETS_KEY" in shown  # the variable's name is shown, its value is not


def test_call_errors_and_replies_are_redacted_at_the_source(tmp_path: Path) -> None:
    """With nothing registered (as in the call helper), the endpoint's own key is cut out of the
    error text and the reply before the cache or the caller sees them."""
    from pytest_jeval.calls.cache import ResponseCache
    from pytest_jeval.calls.scheduler import CallScheduler
    from pytest_jeval.core.chat import EndpointError

    assert ENV_KEY not in redact_mod.known_keys()
    echoes = {"error": EchoAuthorization(401), "reply": EchoAuthorization(200, "got {authorization}")}
    with FakeOpenAIServer(lambda body, attempt: echoes[last_user_message(body)]) as server:
        scheduler = CallScheduler(ResponseCache(tmp_path))
        endpoint = Endpoint(server.base_url, SecretStr(ENV_KEY), max_retries=0)
        try:
            with pytest.raises(EndpointError) as failed:
                scheduler.call(endpoint, ChatRequest(model="test-model", messages=[{"role": "user", "content": "error"}]))
            reply = scheduler.call(endpoint, ChatRequest(model="test-model", messages=[{"role": "user", "content": "reply"}]))
        finally:
            scheduler.close()
    assert str(failed.value).endswith(f"Invalid credentials in header Authorization: Bearer {MARKER}")
    assert reply.text == f"got Bearer {MARKER}"
    cached = [p.read_text() for p in tmp_path.rglob("*.json")]
    assert len(cached) == 1 and not _leaks(cached[0]) and MARKER in cached[0]


def test_sandboxed_stderr_and_helper_stderr_are_redacted(registered: None) -> None:
    import tempfile

    from pytest_jeval.sandbox import run_python

    result = run_python(f"import sys\nprint('found {ENV_KEY} and Bearer abcdefghijklmnop', file=sys.stderr)\nprint('{INLINE_KEY}')\n")
    assert result.stderr.strip() == f"found {MARKER} and Bearer {MARKER}"
    assert result.stdout.strip() == INLINE_KEY  # stdout is compared as the answer; a record quoting it is redacted
    scheduler = ProcessCallScheduler()
    scheduler._stderr = tempfile.TemporaryFile()  # what a dying helper left on its stderr
    scheduler._stderr.write(f"Traceback ...\nRuntimeError: {INLINE_KEY}\n".encode())
    assert scheduler._stderr_tail() == f": Traceback ...\nRuntimeError: {MARKER}"
    scheduler.close()


# -- the call helper's environment ------------------------------------------------------------

def test_helper_environment_keeps_only_what_the_client_needs(registered: None) -> None:
    env, piped = helper_environment({
        "PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "SSL_CERT_FILE": "/etc/ca.pem",
        "OPENAI_API_KEY": USER_OPENAI_KEY, "JEVAL_SECRETS_KEY": ENV_KEY, "AWS_SECRET_ACCESS_KEY": "abc",
        "HTTPS_PROXY": f"http://bob:{PROXY_PASSWORD}@proxy:3128", "NO_PROXY": "127.0.0.1",
        "OPENAI_BASE_URL": "http://gw/v1", "SOMETHING_ELSE": "1",
    })
    assert env == {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "SSL_CERT_FILE": "/etc/ca.pem",
                   "NO_PROXY": "127.0.0.1", "OPENAI_BASE_URL": "http://gw/v1"}
    assert piped == {"HTTPS_PROXY": f"http://bob:{PROXY_PASSWORD}@proxy:3128"}


def _proc_bytes(pid: int, name: str) -> bytes:
    return Path(f"/proc/{pid}/{name}").read_bytes()


def test_other_children_get_the_environment_without_keys(registered: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_jeval.core.redact import environment_without_keys

    env = environment_without_keys({
        "PATH": "/usr/bin", "OMP_NUM_THREADS": "2", "CUDA_VISIBLE_DEVICES": "0", "MY_SERVICE_TOKEN": "t",
        "OPENAI_API_KEY": USER_OPENAI_KEY, "ANY_NAME": INLINE_KEY, "DB_PASSWORD": "pw", "HF_HOME": "/data/hf",
        "HTTPS_PROXY": f"http://bob:{PROXY_PASSWORD}@proxy:3128",
    })
    assert env == {"PATH": "/usr/bin", "OMP_NUM_THREADS": "2", "CUDA_VISIBLE_DEVICES": "0", "HF_HOME": "/data/hf"}
    # the symbolic-math worker, a live child of this process
    from pytest_jeval.scoring._symbolic import _Worker

    monkeypatch.setenv("OPENAI_API_KEY", USER_OPENAI_KEY)
    monkeypatch.setenv("JEVAL_SECRETS_KEY", ENV_KEY)
    worker = _Worker()
    try:
        environ = _proc_bytes(worker.proc.pid, "environ")
    finally:
        worker.close()
    assert b"PATH=" in environ and ENV_KEY.encode() not in environ and USER_OPENAI_KEY.encode() not in environ


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_live_helper_has_no_key_in_environ_or_cmdline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper holds the keys (its calls authenticate) and its proxy password (its proxy
    sees it), yet neither is in /proc/<pid>/environ or cmdline."""
    proxy_seen: list[bytes] = []
    with socket.socket() as proxy, FakeOpenAIServer(lambda body, attempt: "ok", api_key=ENV_KEY) as server:
        proxy.bind(("127.0.0.1", 0))
        proxy.listen(1)
        proxy.settimeout(10)
        monkeypatch.setenv("OPENAI_API_KEY", USER_OPENAI_KEY)
        monkeypatch.setenv("JEVAL_SECRETS_KEY", ENV_KEY)
        monkeypatch.setenv("HTTP_PROXY", f"http://bob:{PROXY_PASSWORD}@127.0.0.1:{proxy.getsockname()[1]}")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")  # the endpoint is reached directly
        for name in ("http_proxy", "no_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        scheduler = ProcessCallScheduler()
        try:
            request = ChatRequest(model="test-model", messages=[{"role": "user", "content": "hi"}], max_tokens=4)
            reply = scheduler.call(Endpoint(server.base_url, SecretStr(ENV_KEY), max_retries=0), request)
            assert reply.text == "ok"  # the key reached the helper (the server checks it)
            pid = scheduler.pid
            assert pid is not None
            environ, cmdline = _proc_bytes(pid, "environ"), _proc_bytes(pid, "cmdline")
            # a host outside NO_PROXY goes through the proxy, with the password the helper got over its socket
            proxied = Endpoint("http://proxied.invalid/v1", SecretStr(INLINE_KEY), max_retries=0, timeout=5)
            future = scheduler.submit(proxied, request)
            conn, _ = proxy.accept()
            with conn:
                conn.settimeout(5)
                proxy_seen.append(conn.recv(65536))
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            with pytest.raises(EndpointError):
                future.result(timeout=10)
        finally:
            scheduler.close()
    assert b"PATH=" in environ
    for secret in (*KEYS, PROXY_PASSWORD):
        assert secret.encode() not in environ and secret.encode() not in cmdline, secret
    assert b"OPENAI_API_KEY" not in environ and b"JEVAL_SECRETS_KEY" not in environ
    assert b"proxied.invalid" in proxy_seen[0] and b"Proxy-Authorization: Basic" in proxy_seen[0]


# -- end to end: an endpoint that echoes the key ----------------------------------------------

ROWS = [{"question": f"Row {i}: what is {i} + 2?", "answer": f"{i} + 2 = {i + 2}\n#### {i + 2}"} for i in range(4)]


def _respond(body: dict[str, Any], attempt: int) -> Any:
    text = last_user_message(body)
    row = next(i for i in range(len(ROWS)) if f"Row {i}:" in text)
    if row == 0:  # an error whose text holds the header
        return EchoAuthorization(401)
    if row == 1:  # a reply that holds the key verbatim (and a right answer)
        return EchoAuthorization(200, "I was called with {authorization}.\nAnswer: 3")
    if row == 2:  # a wrong answer that prints the key: shown in the failure message
        return EchoAuthorization(200, "{authorization}")
    return f"Answer: {row + 2}"


CONFTEST = '''
import logging, os, pathlib, tomllib
import pytest

SUITE = tomllib.loads(pathlib.Path("suite.toml").read_text())
SUITE_KEYS = [SUITE["judge"]["api_key"], SUITE["backend"]["external"]["api_key"], SUITE["models"][1]["api_key"]]

@pytest.fixture(autouse=True)
def careless_user_fixture(request):
    key = os.environ["JEVAL_SECRETS_KEY"]
    logging.getLogger("careless").debug("calling with key %s", key)
    print("stdout: key", key)
    sys_key = os.environ["OPENAI_API_KEY"]
    logging.getLogger("careless").warning("user key " + sys_key)
    print("keys in the suite file:", SUITE_KEYS)
    if request.node.name == "test_gsm8k[inline-model/gsm8k-3]":  # lands in the record's error
        raise RuntimeError("setup saw " + key)
    yield


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line("a plugin prints " + os.environ["JEVAL_SECRETS_KEY"])
'''

LEAKY_TEST = '''
import os

def test_compares_the_key():
    key = os.environ["JEVAL_SECRETS_KEY"]
    assert key == "something else", "the key was " + key
'''


def _all_text(root: Path, skip: set[Path]) -> dict[str, str]:
    files = {}
    for path in root.rglob("*"):
        if path.is_file() and path not in skip:
            files[str(path.relative_to(root))] = path.read_bytes().decode("utf-8", "replace")
    return files


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["thread", "process-xdist"])
def test_echoed_key_never_lands_anywhere(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    executor, dist = ("process", ["-n", "2"]) if mode == "process-xdist" else ("thread", [])
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_leaky=LEAKY_TEST)
    monkeypatch.setenv("JEVAL_SECRETS_KEY", ENV_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", USER_OPENAI_KEY)
    with FakeOpenAIServer(_respond, models=("env-model", "inline-model")) as server:
        suite = pytester.path / "suite.toml"
        suite.write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 0
            request_timeout = 10
            call_executor = "{executor}"

            [judge]
            model = "env-model"
            base_url = "{server.base_url}"
            api_key = "{JUDGE_KEY}"

            [backend.external]
            api_key = "{EXTERNAL_KEY}"

            [[models]]
            name = "env-model"
            base_url = "{server.base_url}"
            api_key_env = "JEVAL_SECRETS_KEY"

            [[models]]
            name = "inline-model"
            base_url = "{server.base_url}"
            api_key = "{INLINE_KEY}"

            [[benchmarks]]
            name = "gsm8k"
            data_files = "gsm.jsonl"
        """))
        started = time.monotonic()
        result = pytester.runpytest_subprocess(
            "--jeval-config", str(suite), "test_leaky.py", "-p", "no:cacheprovider", "--junitxml=junit.xml", "-l", "--tb=long",
            "--log-level=DEBUG", "--log-file=run.log", "--log-file-level=DEBUG", "--log-cli-level=DEBUG", "-rA",
            "-o", "junit_logging=all", *dist)
        elapsed = time.monotonic() - started
        received = [r["headers"] for r in server.requests if r["path"].endswith("/chat/completions")]
    # every sample's call was sent, except perhaps the one whose setup fails: under xdist a worker may reach
    # that item's setup before its prefetched call goes out
    assert len(ROWS) * 2 - 1 <= len(received) <= len(ROWS) * 2, result.stdout.str()
    from pytest_jeval.cli import main as jeval_main

    out = pytester.path / "out"
    assert jeval_main(["report", str(out), "-o", str(pytester.path / "report.html")]) == 0
    files = _all_text(pytester.path, skip={suite})
    streams = {"stdout": result.stdout.str(), "stderr": result.stderr.str()}
    leaks = {name: _leaks(text) for name, text in {**files, **streams}.items() if _leaks(text)}
    assert not leaks, f"keys found in {sorted(leaks)}"
    # ... and it is not because nothing happened: the echoes were made and redacted
    records = {(r["model"], r["record_id"]): r for name in ("env-model", "inline-model")
               for r in map(json.loads, (out / f"gsm8k_{name}.jsonl").read_text().splitlines())}
    assert len(records) == 8
    for model in ("env-model", "inline-model"):
        errored = next(r for (m, _), r in records.items()
                       if m == model and r["error"] and not r["error"].startswith("setup failed"))
        assert f"Authorization: Bearer {MARKER}" in errored["error"]
        echoed = next(r for (m, _), r in records.items() if m == model and r["model_answer"]
                      and r["model_answer"].startswith("I was called"))
        assert echoed["model_answer"] == f"I was called with Bearer {MARKER}.\nAnswer: 3" and echoed["is_correct"] is True
    assert {"stdout", "junit.xml", "run.log", "report.html"} <= {*streams, *files}
    setup_failed = next(r for r in records.values() if r["error"] and r["error"].startswith("setup failed"))
    assert setup_failed["error"] == f"setup failed: RuntimeError: setup saw {MARKER}"
    for name in ("junit.xml", "run.log", "report.html"):
        assert MARKER in files[name], name
    assert f"a plugin prints {MARKER}" in streams["stdout"]
    assert "FAILED test_leaky.py::test_compares_the_key" in streams["stdout"]
    assert any(name.startswith("out/.cache/") for name in files)  # the cache was written (and is clean)
    print(f"{mode}: plugin run {elapsed:.1f}s")
