"""Remote pytest-xdist workers over execnet sockets (docs/remote-workers.md).

Two or three execnet socket servers on 127.0.0.1, each in its own mount namespace
(private /tmp, HOME and datasets cache; the suite's folder bound in at the same
path), stand in for worker hosts: a run over them writes the records of an -n 0
run, only the controller writes, and a worker killed mid-run loses no finished
sample and leaves a run that --jeval-resume completes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import execnet
import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, last_user_message
from pytest_jeval.testing.socket_workers import SocketWorker, bwrap_missing_reason, socket_workers
from tests.support.gsm import SECRET, GsmScript, chat_requests, gsm_rows

VOLATILE = {"latency_seconds", "throughput_tok_per_sec", "attempts", "cached", "call_windows"}
ROWS = 36


@pytest.fixture
def namespaces() -> None:
    """bwrap is needed: skipped (with the reason) only when not root, a failure when it is missing."""
    if os.geteuid() != 0:
        pytest.skip("socket workers in private mount namespaces need root (bwrap)")
    reason = bwrap_missing_reason()
    if reason is not None:
        pytest.fail(f"{reason}; the remote-worker tests need it (make bubblewrap)")


def _stable(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["record_id"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in records}


def _lines(path: Path) -> list[dict[str, Any]]:
    raw = path.read_text()
    assert raw == "" or raw.endswith("\n")
    return [json.loads(line) for line in raw.splitlines()]  # every line whole, valid JSON


def _alive(pid: int | None) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited
    except OSError:
        return False


def _tx(workers: list[SocketWorker]) -> list[str]:
    return [arg for w in workers for arg in ("--tx", w.tx)]


def _pytest(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "--jeval-config=suite.toml", "-p", "no:cacheprovider",
            "-p", "no:randomly", *args]


@pytest.fixture
def project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch,
            namespaces: None) -> Iterator[tuple[Path, FakeOpenAIServer, list[dict[str, Any]]]]:
    """A GSM8K suite whose key lives only in the controller's environment, and its endpoint."""
    rows = gsm_rows(test_data, ROWS)
    # a nested column: a small JSONL of flat rows is read with json, this one through datasets' cache
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps({**r, "meta": {"n": i}}) + "\n"
                                                     for i, r in enumerate(rows)))
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    with FakeOpenAIServer(GsmScript(rows), api_key=SECRET, latency=0.25) as server:
        (pytester.path / "suite.toml").write_text(f"""
[run]
output_dir = "out"
cache = false

[[models]]
name = "test-model"
base_url = "{server.base_url}"
api_key_env = "JEVAL_TEST_KEY"

[[benchmarks]]
name = "gsm8k"
data_files = "gsm.jsonl"
""")
        yield pytester.path, server, rows


def test_workers_get_private_tmp_home_and_cache_and_no_keys(pytester: pytest.Pytester, namespaces: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    controller_only = pytester.path.parent / "controller-only.txt"  # in the controller's /tmp, not shared
    controller_only.write_text("x")
    (pytester.path / "shared.txt").write_text("y")
    monkeypatch.setenv("OTHER_API_KEY", SECRET)
    probe = """
import os
secret, shared, controller_only = channel.receive()
open("/tmp/mine", "w").write(str(os.getpid()))
channel.send({"tmp": sorted(os.listdir("/tmp")), "home": os.environ["HOME"], "cwd": os.getcwd(),
              "hf": os.environ.get("HF_DATASETS_CACHE"),
              "keys": sorted(k for k in os.environ if "API_KEY" in k or k.startswith("JEVAL")),
              "secret": any(secret in v for v in os.environ.values()), "host_key": os.environ.get("JEVAL_TEST_KEY"),
              "shared": os.path.exists(shared), "controller_only": os.path.exists(controller_only)})
"""
    with socket_workers(2, pytester.path.parent / "ns", shared=[pytester.path],
                        host_env={"JEVAL_TEST_KEY": "worker-host-key"}) as workers:
        seen = []
        for w in workers:
            gw = execnet.makegateway(w.tx)
            channel = gw.remote_exec(probe)
            channel.send((SECRET, str(pytester.path / "shared.txt"), str(controller_only)))
            seen.append(channel.receive())
            gw.exit()
        pids = [w.gateway_pid() for w in workers]
        assert all(pids)
    for info in seen:
        assert info["controller_only"] is False and info["shared"] is True
        # its own file, the shared folder's mount, and the installation where it lives under /tmp (a fresh clone)
        assert set(info["tmp"]) - installed_under_tmp() == {"mine", pytester.path.parts[2]}
        assert info["home"] == info["cwd"] != os.environ["HOME"]  # pytester's HOME is not the worker's
        assert info["hf"] == info["home"] + "/.cache/huggingface/datasets"
        assert info["keys"] == ["JEVAL_TEST_KEY"] and info["host_key"] == "worker-host-key" and not info["secret"]
    for w in workers:  # each private HOME is its own folder on the host
        assert w.home.is_dir() and not (w.home / "mine").exists()
    assert not [pid for pid in pids if _alive(pid)]  # nothing outlives the context


def installed_under_tmp() -> set[str]:
    """The entries of /tmp that the workers see because the project or its Python is installed there."""
    import sys

    import pytest_jeval

    places = [sys.prefix, sys.base_prefix, str(Path(pytest_jeval.__file__).resolve().parents[1])]
    return {Path(p).parts[2] for p in places if Path(p).is_relative_to("/tmp") and len(Path(p).parts) > 2}


def test_remote_run_killed_worker_and_resume_equal_a_serial_run(
        pytester: pytest.Pytester, project: tuple[Path, FakeOpenAIServer, list[dict[str, Any]]]) -> None:
    """Three socket workers; one dies mid-run; the two left finish it with --jeval-resume: the -n 0 records."""
    path, server, rows = project
    out = path / "out" / "gsm8k_test-model.jsonl"
    serial = pytester.runpytest("--jeval-config=suite.toml", "--jeval-output=serial", "-p", "no:randomly")
    assert serial.ret == 0
    expected = _stable(_lines(path / "serial" / out.name))
    assert len(expected) == ROWS
    with socket_workers(3, path.parent / "ns", shared=[path], host_env={"JEVAL_TEST_KEY": SECRET}) as workers:
        proc = subprocess.Popen(_pytest("-d", *_tx(workers)), cwd=path, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 90
        while not (out.exists() and out.read_text().count("\n") >= 5) and time.monotonic() < deadline:
            time.sleep(0.02)
        finished = out.read_text().rsplit("\n", 1)[0].splitlines()  # the lines whole at the kill
        workers[0].kill_gateway()  # a worker host dies
        stdout, _ = proc.communicate(timeout=120)
        assert proc.returncode == pytest.ExitCode.TESTS_FAILED, stdout[-3000:]
        assert "created: 3/3 workers" in stdout and "INTERNALERROR" not in stdout
        assert "worker gw0 crashed and worker restarting disabled" in stdout
        after_kill = _lines(out)
        assert len({r["record_id"] for r in after_kill}) == len(after_kill)  # no sample twice
        assert [json.loads(line) for line in finished] == after_kill[:len(finished)]  # nothing finished is lost
        done = {r["record_id"] for r in after_kill if not r["error"]}
        assert 5 <= len(finished) and len(done) < ROWS
        assert _stable([r for r in after_kill if not r["error"]]) == {k: expected[k] for k in done}
        # each worker loaded the data into its own datasets cache; only the controller wrote records
        assert all(list((w.home / ".cache" / "huggingface" / "datasets").glob("json")) for w in workers)
        assert not list(path.parent.glob("ns/*/home/**/*.jsonl"))
        before = len(chat_requests(server))

        resumed = subprocess.run(_pytest("--jeval-resume", "-d", *_tx(workers[1:])), cwd=path,
                                 capture_output=True, text=True)
        assert resumed.returncode == 0, resumed.stdout[-3000:]
        assert "created: 2/2 workers" in resumed.stdout
    final = _lines(out)
    assert len(final) == ROWS and _stable(final) == expected  # one line per sample, the -n 0 records
    resent = [last_user_message(r["body"]) for r in chat_requests(server)[before:]]
    asked_again = {f"gsm8k-{i}" for i, row in enumerate(rows) for text in resent if row["question"] in text}
    assert asked_again and not (asked_again & done)  # finished samples were not asked again


def test_path_arguments_are_a_usage_error_with_remote_workers(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text('[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                                              'api_key = "x"\n[[benchmarks]]\nname = "gsm8k"\n')
    result = pytester.runpytest_subprocess("suite.toml", "--jeval-config", "suite.toml", "-d",
                                           "--tx", "socket=127.0.0.1:9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*remote xdist workers (--tx socket=127.0.0.1:9) cannot be sent path arguments "
                                 "(suite.toml)*select samples with -k*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_bundled_local_model_with_a_worker_on_another_host_is_a_usage_error(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text('[[models]]\nname = "local"\nengine = "local"\n'
                                              '[[benchmarks]]\nname = "gsm8k"\n')
    result = pytester.runpytest_subprocess("--jeval-config=suite.toml", "-d", "--tx", "socket=127.0.0.1:9",
                                           "--tx", "socket=192.0.2.7:8888")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bundled local model is served on the controller's 127.0.0.1, which the worker "
                                 "of --tx socket=192.0.2.7:8888 cannot reach*"])


def test_the_readmes_two_argument_form_runs_on_remote_workers(
        pytester: pytest.Pytester, project: tuple[Path, FakeOpenAIServer, list[dict[str, Any]]]) -> None:
    """`pytest --jeval-config suite.toml` (option and value as two arguments, as the README writes it) and
    `--junitxml out.xml` reach socket workers as one argument each: the run completes on them."""
    path, _server, _rows = project
    (path / "out.xml").write_text("")  # an existing file as an option's value, as on a second run
    argv = [sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "--junitxml", "out.xml",
            "-p", "no:cacheprovider", "-p", "no:randomly"]
    with socket_workers(2, path.parent / "ns", shared=[path], host_env={"JEVAL_TEST_KEY": SECRET}) as workers:
        done = subprocess.run([*argv, "-d", *_tx(workers)], cwd=path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "created: 2/2 workers" in done.stdout and "INTERNALERROR" not in done.stdout + done.stderr
    assert len(_lines(path / "out" / "gsm8k_test-model.jsonl")) == ROWS
    assert (path / "out.xml").read_text().count("<testcase") == ROWS
