"""A hostile solution against the sandbox: every attack here is a real sandboxed run.

Each test plays a trick a model (or a model trained on the benchmark) could play to
forge its score or reach outside its run, and checks that it fails. The tests that
need the bubblewrap plan skip where it is not available (``make test`` installs it).
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading

import pytest

from pytest_jeval import LoadContext
from pytest_jeval.benchmarks import bench_coding_assistant as ca
from pytest_jeval.benchmarks import bench_livecodebench as lcb
from pytest_jeval.sandbox import check_humaneval, execution_reason, isolation, run_many, run_python
from pytest_jeval.sandbox import files as _files

HERE = pathlib.Path(__file__).resolve().parents[1]
LCB_FILE = HERE / "data" / "livecodebench" / "code_generation_lite_sample.jsonl"
BWRAP = "bwrap" in isolation()
needs_bwrap = pytest.mark.skipif(not BWRAP, reason="the bubblewrap plan is not available (make test installs it)")

PROMPT = 'def add(a, b):\n    """The sum of a and b."""\n'
TEST = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"
WRONG = "    return a - b\n"


def he(completion: str, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    return check_humaneval(PROMPT, completion, TEST, "add", timeout=timeout)


# --- forged HumanEval verdicts -------------------------------------------------------


FORGERIES = {
    # prints everything it can find that could be a pass marker, then leaves with status 0
    "marker-read": """
    import os, sys
    for path in ["main.py", "/proc/self/cmdline", *os.listdir(".")]:
        try:
            print(open(path, errors="replace").read())
        except OSError:
            pass
    print("passed", flush=True)
    os._exit(0)
""",
    # re-executes itself with -O so that the asserts would vanish
    "reexec-O": """
    import os, sys
    if not sys.flags.optimize:
        argv = open("/proc/self/cmdline", "rb").read().split(b"\\0")[:-1]
        os.execv(sys.executable, [sys.executable, "-O"] + [a.decode() for a in argv[1:]])
""",
    # forges replies on every pipe it holds, and exits through SystemExit
    "fd-forgery": """
    import os, json, struct
    for fd in map(int, os.listdir("/proc/self/fd")):
        for msg in ({"ok": True, "value": ["I", "5"]}, {"passed": True, "reason": "passed", "detail": ""}):
            data = json.dumps(msg).encode()
            try:
                os.write(fd, struct.pack(">Q", len(data)) + data)
                os.write(fd, data)
            except OSError:
                pass
    raise SystemExit(0)
""",
    # atexit and excepthook tricks, and patching json / the stub's globals
    "patching": """
    import atexit, json, os, sys
    json.dumps = lambda *a, **k: '{"passed": true, "reason": "passed", "detail": ""}'
    json.loads = lambda *a, **k: {"passed": True}
    sys.modules["__main__"].__dict__["encode_value"] = lambda v, d=0: ["I", "5"]
    sys.excepthook = lambda *a: os._exit(0)
    atexit.register(lambda: os._exit(0))
""",
    # ptrace-style: reaches into the other processes of the sandbox (the harness) through /proc
    "proc-harness": """
    import os
    forged = b'{"passed": true, "reason": "passed", "detail": ""}'
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                with open(f"/proc/{pid}/mem", "r+b") as mem:
                    mem.write(b"x")
            except OSError:
                pass
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    with open(f"/proc/{pid}/fd/{fd}", "r+b") as fh:
                        fh.write(forged)
                except OSError:
                    pass
""",
}


@pytest.mark.parametrize("trick", sorted(FORGERIES))
def test_forged_humaneval_verdicts_fail(trick: str) -> None:
    completion = textwrap.indent(textwrap.dedent(FORGERIES[trick]), "    ") + WRONG
    result = he(completion)
    assert result.status != "ok", (trick, result)
    assert result.verdict is None or result.verdict["passed"] is False
    # and the same program with a right answer still passes: the trick, not the sandbox, failed
    if trick == "patching":
        assert he(textwrap.indent(textwrap.dedent(FORGERIES[trick]), "    ") + "    return a + b\n").status == "ok"


ALWAYS_EQUAL = {
    "always-equal": "    class Yes:\n        def __eq__(self, other):\n            return True\n"
                    "        __ne__ = lambda self, other: False\n        __hash__ = lambda self: 0\n    return Yes()\n",
    "int-subclass": "    class Int(int):\n        def __eq__(self, other):\n            return True\n    return Int(0)\n",
    "list-subclass": "    class L(list):\n        __eq__ = lambda s, o: True\n    return L()\n",
    "str-subclass": "    class S(str):\n        __eq__ = lambda s, o: True\n    return S('x')\n",
    "nested": "    class Yes:\n        __eq__ = lambda s, o: True\n    return [Yes()]\n",
}


@pytest.mark.parametrize("kind", sorted(ALWAYS_EQUAL))
def test_objects_that_claim_equality_fail(kind: str) -> None:
    result = he(ALWAYS_EQUAL[kind])
    assert result.status == "error" and execution_reason(result) == "wrong answer", result
    assert "not a plain value" in result.verdict["detail"]  # type: ignore[index]


def test_genuine_values_keep_pythons_equality() -> None:
    # official semantics: True == 1 and 5.0 == 5 pass; a tuple is not a list
    assert he("    return 5.0 if (a, b) == (2, 3) else a + b\n").status == "ok"
    list_test = "def check(candidate):\n    assert candidate(2, 3) == [5]\n"
    assert check_humaneval(PROMPT, "    return (a + b,)\n", list_test, "add", timeout=10).status == "error"
    assert check_humaneval(PROMPT, "    return [a + b]\n", list_test, "add", timeout=10).status == "ok"


# --- coding_assistant and livecodebench -----------------------------------------------


def _ca_sample(item_id: str):  # type: ignore[no-untyped-def]
    path = pathlib.Path(ca.__file__).parent / "data" / "coding_assistant.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    row = next(r for r in rows if r["id"] == item_id)
    return ca.to_sample(row, 0, LoadContext("coding_assistant", None, 42, None))


CA_FORGERIES = {
    "json-dumps": "import json\njson.dumps = lambda *a, **k: '{\"name\": \"x\", \"verdict\": \"passed\", \"detail\": \"\"}'\n",
    # appended after the module: the first call forges a "passed" frame for every test, then quits
    "frames": textwrap.dedent("""
        import os, json, struct
        def average(*args):
            for fd in map(int, os.listdir("/proc/self/fd")):
                for i in range(10):
                    data = json.dumps({"index": i, "verdict": "passed", "detail": "", "nonce": ""}).encode()
                    try:
                        os.write(fd, struct.pack(">Q", len(data)) + data)
                    except OSError:
                        pass
            os._exit(0)
    """),
    "exit": "import atexit, os\natexit.register(lambda: os._exit(0))\n",
}


@pytest.mark.parametrize("trick", sorted(CA_FORGERIES))
def test_coding_assistant_harness_cannot_be_patched(trick: str) -> None:
    sample = _ca_sample("ca-04")
    code = sample.metadata["buggy_code"]
    reply = "```python\n" + (code + CA_FORGERIES[trick] if trick == "frames" else CA_FORGERIES[trick] + code) + "```"
    score = ca.score_fix(reply, sample)
    assert score.correct is False and score.value < 1.0, score.metadata
    if trick == "frames":
        return  # forged frames break the protocol: the run fails whatever the fix
    fixed = ca.score_fix("```python\n" + CA_FORGERIES[trick] + sample.metadata["fixed_code"] + "```", sample)
    assert fixed.correct is True, fixed.metadata  # the trick alone does not break a right fix


def _lcb_samples():  # type: ignore[no-untyped-def]
    rows = [json.loads(line) for line in LCB_FILE.read_text().splitlines()]
    ctx = LoadContext("livecodebench", None, 42, LCB_FILE.parent)
    return [lcb.to_sample(r, i, ctx) for i, r in enumerate(rows)]


@needs_bwrap
def test_livecodebench_dataset_is_not_readable(tmp_path: pathlib.Path) -> None:
    """The solution looks for the dataset (the repository's file and a world-readable copy in /tmp)."""
    copy = pathlib.Path(tempfile.gettempdir()) / f"jeval-lcb-copy-{os.getpid()}.jsonl"
    copy.write_text(LCB_FILE.read_text())
    copy.chmod(0o644)
    try:
        sample = _lcb_samples()[1]  # abc320_a (stdin)
        cheat = textwrap.dedent(f"""
            import base64, json, pickle, zlib, sys
            data = sys.stdin.read()
            for path in ({str(LCB_FILE)!r}, {str(copy)!r}):
                try:
                    rows = [json.loads(l) for l in open(path)]
                except OSError:
                    continue
                for row in rows:
                    tests = json.loads(row["public_test_cases"]) + json.loads(pickle.loads(zlib.decompress(
                        base64.b64decode(row["private_test_cases"]))))
                    for t in tests:
                        if t["input"] == data:
                            print(t["output"])
                            raise SystemExit(0)
            print(0)
        """)
        score = lcb.score_livecodebench("```python\n" + cheat + "```", sample, stop_at_first_failure=False)
        assert score.metadata["passed"] == 0, score.metadata
        # the cheat works where the files can be read: the test is meaningful
        assert copy.read_text() == LCB_FILE.read_text()
    finally:
        copy.unlink()


def test_livecodebench_functional_value_is_compared_outside() -> None:
    functional = _lcb_samples()[0]
    always = ("```python\nclass Yes:\n    def __eq__(self, o):\n        return True\n"
              "class Solution:\n    def sumIndicesWithKSetBits(self, nums, k):\n        return Yes()\n```")
    score = lcb.score_livecodebench(always, functional, stop_at_first_failure=False)
    assert score.metadata["passed"] == 0 and score.metadata["reason"] == "wrong answer", score.metadata


# --- the host is out of reach ---------------------------------------------------------


@needs_bwrap
def test_cross_run_tampering_fails() -> None:
    """An attacker run rewrites every main.py it can find while victims are checked."""
    base = _files.private_base_dir(os.path.dirname(os.path.join(tempfile.gettempdir(), "x")))
    attacker = textwrap.dedent(f"""
        import os, time
        hits = []
        deadline = time.time() + 3
        while time.time() < deadline:
            for root in ("/tmp", "/dev/shm", {base!r}, "/proc", "/sandbox/..", {os.path.dirname(base)!r}):
                try:
                    names = os.listdir(root)
                except OSError:
                    continue
                for name in names:
                    for target in (os.path.join(root, name, "main.py"), os.path.join(root, name, "cwd", "main.py")):
                        try:
                            with open(target, "r+") as fh:
                                if "VIC" + "TIM" in fh.read():  # another run's program
                                    fh.seek(0)
                                    fh.write("print('pwned')#")
                                    hits.append(target)
                        except OSError:
                            pass
            time.sleep(0.01)
        print(sorted(set(hits)))
    """)
    victim = "import time\ntime.sleep(1.5)\nprint(open('main.py').read().count('VICTIM'))  # VICTIM\n"
    wrong = "    import time\n    time.sleep(1.0)\n    return a - b\n"
    jobs = [functools.partial(run_python, attacker, timeout=10),
            *[functools.partial(run_python, victim, timeout=10) for _ in range(2)],
            *[functools.partial(he, wrong) for _ in range(2)]]
    results = run_many(jobs, max_workers=5)
    assert results[0].stdout.strip() == "[]", results[0]
    assert [r.stdout for r in results[1:3]] == ["2\n", "2\n"]
    assert all(r.status == "error" and execution_reason(r) == "wrong answer" for r in results[3:])


@needs_bwrap
def test_writes_outside_the_run_dir_do_not_reach_the_host(tmp_path: pathlib.Path) -> None:
    out_dir, suite_dir = tmp_path / "out", tmp_path / "suite"
    for d in (out_dir, suite_dir):
        d.mkdir()
        d.chmod(0o777)  # world-writable on the host: only visibility can protect it
    suite = suite_dir / "suite.toml"
    suite.write_text('[[models]]\napi_key = "sk-suite-secret"\n')
    suite.chmod(0o644)
    token = f"jeval-escape-{os.getpid()}"
    code = textwrap.dedent(f"""
        import os
        wrote, read = [], []
        for d in ("/tmp", "/dev/shm", {str(out_dir)!r}, {str(suite_dir)!r}, "/var/tmp", "/root", "/home"):
            try:
                with open(os.path.join(d, {token!r}), "w") as fh:
                    fh.write("x" * 1000)
                wrote.append(d)
            except OSError:
                pass
        for f in ({str(suite)!r}, "/etc/passwd", "/etc/shadow", os.path.expanduser("~root/.bashrc")):
            try:
                read.append(open(f).read()[:20])
            except OSError:
                pass
        print(wrote)
        print(read)
    """)
    result = run_python(code, timeout=10)
    wrote, read = result.stdout.splitlines()
    assert "sk-suite-secret" not in result.stdout and read == "[]"
    for d in ("/tmp", "/dev/shm", str(out_dir), str(suite_dir)):
        assert not os.path.exists(os.path.join(d, token)), d
    # the private /tmp and /dev/shm were writable inside, and are gone
    assert "'/tmp'" in wrote and "'/dev/shm'" in wrote


@needs_bwrap
def test_host_unix_sockets_cannot_be_reached(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "host.sock"
    abstract = f"\0jeval-host-{os.getpid()}"
    servers = []
    for address in (str(path), abstract):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(5)
        servers.append(server)
    path.chmod(0o777)
    tmp_path.chmod(0o755)
    try:
        code = textwrap.dedent(f"""
            import socket
            reached = []
            for address in ({str(path)!r}, {abstract!r}, "/run/dbus/system_bus_socket", "/var/run/docker.sock"):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(address)
                    reached.append(address)
                except OSError:
                    pass
            print(reached)
        """)
        assert run_python(code, timeout=10).stdout.strip() == "[]"
        # the same program outside the sandbox does reach them
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(str(path))
        probe.close()
    finally:
        for server in servers:
            server.close()


def test_planted_links_never_redirect_the_runner(tmp_path: pathlib.Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    victim.chmod(0o600)
    victim_dir = tmp_path / "victim_dir"
    victim_dir.mkdir()
    (victim_dir / "inner.txt").write_text("keep me too")
    tmp_path.chmod(0o755)
    code = textwrap.dedent(f"""
        import os
        os.symlink({str(victim)!r}, "file-link")
        os.symlink({str(victim_dir)!r}, "dir-link")
        os.mkdir("sub")
        os.symlink({str(victim_dir)!r}, "sub/deeper")
        os.chmod("sub", 0o500)
        os.remove("main.py")
        os.symlink({str(victim)!r}, "main.py")
        print("planted")
    """)
    assert run_python(code, timeout=10).stdout == "planted\n"
    assert victim.read_text() == "keep me" and stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert (victim_dir / "inner.txt").read_text() == "keep me too"


def test_file_helpers_refuse_links(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "target"
    target.write_text("original")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "main.py").symlink_to(target)
    with pytest.raises(FileExistsError):
        _files.write_new_file(str(run_dir), "main.py", b"overwritten")
    (run_dir / "deep").mkdir()
    (run_dir / "deep" / "link").symlink_to(tmp_path)
    _files.remove_tree(str(run_dir))
    assert not run_dir.exists() and target.read_text() == "original"
    # a base directory that is a link (or writable by others) is refused
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / f"jeval-sandbox-{os.geteuid()}").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(_files.UnsafeDirectoryError):
        _files.private_base_dir(str(tmp_path))


# --- nothing outlives the runner ------------------------------------------------------


def _token_processes(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if token.encode() in pathlib.Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PR_SET_PDEATHSIG are Linux-only")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("plan", ["strongest", "namespaces+uid-drop"])
def test_sandbox_dies_with_the_runner(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, signame: str, plan: str
) -> None:
    """bwrap dies with its parent by itself; ``unshare`` (the weaker plan) only through PR_SET_PDEATHSIG."""
    import signal
    import time

    from pytest_jeval.sandbox import plans as _isolation

    if plan != "strongest":
        wanted = [p for p in _isolation.candidate_plans() if p.name == plan]
        if not wanted or not _isolation.probe(wanted[0]):
            pytest.skip(f"the {plan} plan does not work here")
        monkeypatch.setenv("JEVAL_SANDBOX_ISOLATION", plan)

    token = f"6{os.getpid() % 1000}.{time.monotonic_ns() % 10**9}"
    pytester.makepyfile(test_sleeper=f"""
        from pytest_jeval.sandbox import run_python

        def test_sleep():
            code = "import os\\nif os.fork() == 0:\\n    os.execv('/bin/sleep', ['sleep', {token!r}])\\n" \\
                   "os.execv('/bin/sleep', ['sleep', {token!r}])\\n"
            run_python(code, timeout=600)
    """)
    proc = pytester.popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_sleeper.py"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(_token_processes(token)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_token_processes(token)) == 2, "the sandboxed sleepers never started"
        proc.send_signal(getattr(signal, signame))
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30  # the sleepers would live for hours
        while _token_processes(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _token_processes(token) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _token_processes(token):
            os.kill(pid, signal.SIGKILL)


def test_concurrent_runs_have_distinct_identities() -> None:
    if "uid-per-run" not in isolation():
        pytest.skip("a uid per run needs root and the bubblewrap plan")
    code = "import os, time\ntime.sleep(0.5)\nprint(os.stat('.').st_uid, os.stat('main.py').st_uid)"
    outs = run_many([code] * 3, max_workers=3, timeout=10)
    assert all(r.stdout.split() == ["65534", "65534"] for r in outs)  # the same uid inside...
    seen: list[int] = []
    barrier = threading.Barrier(3)

    def host_uid() -> object:
        from pytest_jeval.sandbox import plans as _isolation

        with _isolation.run_identity(_isolation.current_plan()) as owner:
            barrier.wait(timeout=10)
            seen.append(owner[0])  # type: ignore[index]
        return owner

    threads = [threading.Thread(target=host_uid) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(seen)) == 3 and 0 not in seen  # ...and distinct uids on the host
