"""One run, one writer, whole lines (docs/results.md), and writes that never follow a planted link."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_jeval.calls.cache import ResponseCache
from pytest_jeval.core.chat import Reply
from pytest_jeval.core.files import UnsafePathError
from pytest_jeval.suite.config import SuiteError, parse_suite
from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer
from tests.support.holds import HoldAfter
from tests.support.results import KEY, MODELS, Project, Script, project, snapshot  # noqa: F401


def test_dry_runs_write_delete_and_send_nothing(project: Project) -> None:
    p = project
    p.suite()
    p.run()
    before = snapshot(p.path / "out")
    requests = len(p.server.requests)
    for args in (["--co", "-q"], ["--collect-only"], ["--setup-plan"]):
        p.run(*args)
        assert snapshot(p.path / "out") == before, args
    time.sleep(0.5)  # a request sent in the background would have arrived by now
    assert len(p.server.requests) == requests  # not even the endpoint check
    p.run("-k", "no-such-item")
    assert snapshot(p.path / "out") == before
    assert p.chats() == 6
    p.run("-k", "no-such-item", "--jeval-output", "fresh/out")
    assert not (p.path / "fresh").exists()  # not even the directory is left behind


@pytest.fixture
def second_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(Script(), api_key=KEY, models=MODELS) as server:
        yield server


@pytest.mark.slow
def test_second_run_stops_before_any_request_and_a_stale_lock_is_taken_over(
        project: Project, second_server: FakeOpenAIServer) -> None:
    p = project
    p.suite(rows=40, run="max_concurrency = 1")
    # one answer, then the server holds every request: the first run is still writing when the second
    # starts, however slow the machine (it is killed below)
    p.server.responder = HoldAfter(p.script, 1)
    cmd = [sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "-q", "-p", "no:cacheprovider"]
    first = subprocess.Popen(cmd, cwd=p.path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and p.chats() == 0:
            time.sleep(0.05)
        assert (p.path / "out" / ".jeval.lock").is_file()
        other = p.suite(rows=40, name="other.toml").read_text().replace(p.server.base_url, second_server.base_url)
        (p.path / "other.toml").write_text(other)
        result = p.run(suite=p.path / "other.toml")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"*another run is writing to *out: pid {first.pid} on *"])
        assert second_server.requests == []  # not even the endpoint check
    finally:
        first.kill()
        first.wait()
    assert (p.path / "out" / ".jeval.lock").is_file()  # left by the killed run
    p.server.responder = p.script
    result = p.run()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([f"*took over the lock of an earlier run that is no longer running (pid {first.pid} *"])
    assert not (p.path / "out" / ".jeval.lock").exists()
    assert len(p.records()) == 40


def _suite_text(benches: list[str], models: list[str]) -> str:
    text = "".join(f'[[models]]\nname = "{m}"\n' for m in models)
    return text + "".join(f'[[benchmarks]]\nname = "{b}"\nmodule = "b.py"\n' for b in benches)


def test_names_cannot_collide_and_stay_readable(project: Project) -> None:
    with pytest.raises(SuiteError) as err:
        parse_suite(_suite_text(["calc", "calc_hard"], ["hard_m", "m"]), Path("s.toml"))
    assert ("benchmarks[0] 'calc' with models[0] 'hard_m' and benchmarks[1] 'calc_hard' with models[1] 'm' "
            "would both write calc_hard_m.jsonl") in str(err.value)
    with pytest.raises(SuiteError, match=r"models\[0\] and models\[1\]: 'qwen3:8b' and 'qwen3/8b' both give 'qwen3-8b'"):
        parse_suite(_suite_text(["calc"], ["qwen3:8b", "qwen3/8b"]), Path("s.toml"))
    for bad in ("../escaped", "sub/x", "..", ".hidden", "a b"):
        with pytest.raises(SuiteError, match=r"benchmarks\[0\]\.name: .* is not usable as a file name"):
            parse_suite(_suite_text([bad], ["m"]), Path("s.toml"))
    p = project
    p.suite(models=("модель", "模型"))
    assert p.run().ret == pytest.ExitCode.TESTS_FAILED
    assert len(p.records(model="модель")) == len(p.records(model="模型")) == 6
    assert {f.name for f in (p.path / "out").glob("*.jsonl")} == {"calc_модель.jsonl", "calc_模型.jsonl"}


def _mount(target: Path, options: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    return done.returncode == 0


def _umount(target: Path) -> None:
    subprocess.run(["umount", str(target)], capture_output=True)


def test_unusable_output_dir_is_a_usage_error_before_any_request(project: Project) -> None:
    p = project
    p.suite()
    (p.path / "afile").write_text("not a directory")
    result = p.run("--jeval-output", "afile")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*output_dir */afile is a file, not a directory; no samples were sent*"])
    ro = p.path / "ro"
    if _mount(ro, "ro,size=64k"):
        try:
            result = p.run("--jeval-output", "ro/out")
        finally:
            _umount(ro)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines(["*output_dir */ro/out is not writable*"])
    assert p.server.requests == []


@pytest.mark.slow
def test_crashed_worker_is_an_error_record_that_resume_retries(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    p = project
    p.suite()
    p.script.failing.clear()
    p.script.special = {4: Answer("8\ud800")}  # a lone surrogate quoted in a failure a worker sends
    monkeypatch.setenv("RESULTS_CRASH_ON", f"calc-2:{p.path / 'crashed.flag'}")
    result = p.run("-n", "2", subprocess=True)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*worker*crashed while running*calc-2*"])
    assert p.records()["calc-4"]["model_answer"] == "8\ufffd"
    crashed = p.records()["calc-2"]
    assert crashed["error"].startswith("worker crashed: ") and crashed["is_correct"] is None
    assert crashed["question"] == "2+2" and crashed["expected"] == "4"
    s = p.summary()
    assert (s["total_samples"], s["errors"]) == (6, 1)
    p.script.asked.clear()
    p.run("--jeval-resume")
    assert p.script.asked == [2]  # the crashed sample, and only it, is retried
    assert p.records()["calc-2"]["is_correct"] is True and p.summary()["errors"] == 0


def _full_disk(folder: Path) -> object | None:
    """A 24 KiB tmpfs on ``folder`` (None), else a 16 KB file-size limit for the run (the preexec function)."""
    if _mount(folder, "size=24k"):
        return None
    folder.mkdir(exist_ok=True)
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))


@pytest.mark.slow
def test_disk_full_leaves_whole_lines_and_resume_repairs_a_torn_line(project: Project) -> None:
    p = project
    p.suite(rows=60, output_dir="full/out")
    full = p.path / "full"
    limit = _full_disk(full)
    cmd = [sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-q"]
    try:
        run = subprocess.run(cmd, cwd=p.path, capture_output=True, text=True, timeout=120,
                             preexec_fn=limit)  # type: ignore[arg-type]
        out = run.stdout + run.stderr
        assert run.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
        assert out.count("results cannot be stored") == 1 and "INTERNALERROR" not in out
        raw = p.jsonl(out="full/out").read_bytes()
        assert raw.endswith(b"\n")
        stored = [json.loads(line) for line in raw.splitlines()]  # every line whole
        assert 5 < len(stored) < 60
        if limit is None:
            subprocess.run(["mount", "-o", "remount,size=4m", str(full)], check=True)
        with p.jsonl(out="full/out").open("ab") as fh:  # what an older writer left: half a line
            fh.write(b'{"record_id": "calc-59", "benchmark": "ca')
        resumed = p.run("--jeval-resume")
        assert resumed.ret == pytest.ExitCode.TESTS_FAILED
        resumed.stdout.fnmatch_lines(["*calc_m-a.jsonl: removed a torn last line (41 bytes)*"])
        records = p.records(out="full/out")
        summary = p.summary(out="full/out")
    finally:
        if limit is None:
            _umount(full)
    assert sorted(records) == sorted(f"calc-{i}" for i in range(60))
    assert all(records[s["record_id"]] == s for s in stored if s["error"] is None)  # finished: kept as stored
    assert summary["total_samples"] == 60


def test_odd_reply_fields_become_null_with_a_note(project: Project) -> None:
    p = project
    p.suite(cache=True)
    p.script.special = {0: Answer("0", prompt_tokens="12"), 1: Answer("2", prompt_tokens=-3),
                        2: Answer("4", completion_tokens=float("nan")), 3: Answer("6", completion_tokens=float("inf")),
                        4: Answer("8\ud800")}
    for _ in range(2):  # the second run reads the replies from the response cache
        result = p.run()
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
        records = p.records()
        assert [records[f"calc-{i}"]["prompt_tokens"] for i in (0, 1)] == [None, None]
        assert [records[f"calc-{i}"]["completion_tokens"] for i in (2, 3)] == [None, None]
        assert records["calc-0"]["scoring_metadata"]["sanitized"] == [
            "prompt_tokens: '12' is not a token count; recorded as null"]
        assert "nan" in records["calc-2"]["scoring_metadata"]["sanitized"][0]
        assert records["calc-4"]["model_answer"] == "8\ufffd"
        assert "lone surrogate" in records["calc-4"]["scoring_metadata"]["sanitized"][0]
        s = p.summary()
        assert (s["total_samples"], s["correct"], s["errors"]) == (6, 5, 0)
    assert p.run("--jeval-resume").ret == pytest.ExitCode.TESTS_FAILED


def test_planted_links_never_redirect_a_write(project: Project, tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("root's secret")
    victim.chmod(0o600)
    p = project
    p.suite()
    out = p.path / "out"
    out.mkdir(mode=0o777)
    names = ["summary.json", "summary.json.tmp", "calc_m-a.jsonl.summary.json", "calc_m-a.jsonl.summary.json.tmp",
             "calc_m-a.jsonl.tmp"]
    for name in names:
        (out / name).symlink_to(victim)
    assert p.run().ret == pytest.ExitCode.TESTS_FAILED
    assert victim.read_text() == "root's secret" and victim.stat().st_mode & 0o777 == 0o600
    for name in ("summary.json", "calc_m-a.jsonl.summary.json"):
        assert not (out / name).is_symlink() and json.loads((out / name).read_text())["runs" if name == "summary.json"
                                                                                     else "total_samples"]
    # a link at the JSONL itself: the run stops with a clear message and writes nothing through it
    (p.path / "out2").mkdir()
    (p.path / "out2" / "calc_m-a.jsonl").symlink_to(victim)
    result = p.run("--jeval-output", "out2")
    result.stdout.fnmatch_lines(["*results cannot be stored (cannot open *calc_m-a.jsonl: *is a symbolic link*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    (p.path / "out3").mkdir()
    (p.path / "out3" / ".jeval.lock").symlink_to(victim)
    assert p.run("--jeval-output", "out3").ret == pytest.ExitCode.USAGE_ERROR
    # the HTML report and a response-cache entry
    from pytest_jeval.report import write_report

    (p.path / "report.html").symlink_to(victim)
    write_report([out], p.path / "report.html")
    assert not (p.path / "report.html").is_symlink()
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "ab").symlink_to(tmp_path)
    with pytest.raises(UnsafePathError):
        ResponseCache(tmp_path / "cache").put("ab" + "0" * 62, Reply(text="x", model="m"))
    assert victim.read_text() == "root's secret" and sorted(os.listdir(tmp_path)) == ["cache", "victim"]
    assert (out / "calc_m-a.jsonl").stat().st_mode & 0o777 == 0o644


def test_created_output_dir_is_not_world_writable(project: Project) -> None:
    p = project
    p.suite(output_dir="new/deeper/out")
    old = os.umask(0)  # even with no umask at all
    try:
        p.run()
    finally:
        os.umask(old)
    for folder in ("new", "new/deeper", "new/deeper/out"):
        assert (p.path / folder).stat().st_mode & 0o777 == 0o755
