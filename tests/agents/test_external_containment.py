"""An external agent that attacks its containment, through the plugin (``backend = "command"``).

The agent (``attack_agent.py``) tries what a hostile agent CLI did to the earlier containment:
unmounting its ``/proc`` to read the harness's environment (the real key), unmounting its
``/tmp`` to read the suite, the dataset and other episodes, remounting a folder read-write to
write on the host, reading this package's data (answers of bundled benchmarks), calling the
model server directly around the recording proxy. Each attempt must fail, while the proxy
(its one way out) works.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

import pytest_jeval
from pytest_jeval.agents.workspace import make_workspace, remove_workspace
from pytest_jeval.sandbox.confined import confinement_problem
from pytest_jeval.testing.openai_server import FakeOpenAIServer

SECRET = "sk-jeval-real-" + "c0ffee" * 6
ATTACK_AGENT = str(Path(__file__).with_name("attack_agent.py").resolve())
PACKAGE_DATA = Path(pytest_jeval.__file__).resolve().parent / "benchmarks" / "terminal_lite" / "data" / "tasks.jsonl"
REPO = Path(pytest_jeval.__file__).resolve().parents[1]

BENCH = '''
from pytest_jeval import Benchmark, Sample
from pytest_jeval.core.score import Score


def to_sample(row, index, ctx):
    return Sample(id=row["id"], input=row["q"], target=row["a"])


BENCHMARK = Benchmark(name="attack", to_sample=to_sample, prompt=lambda s: s.input, backends=("agent",))


def test_attack(sample, episode, response, score):
    score(Score(correct=episode.final_text.strip() == sample.target, extracted=episode.final_text))
'''

pytestmark = pytest.mark.skipif(confinement_problem() is not None, reason=f"no agent sandbox: {confinement_problem()}")


def test_a_hostile_agent_escapes_nothing_and_reaches_only_its_proxy(pytester: pytest.Pytester,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTACK_REAL_KEY", SECRET)
    other = make_workspace()  # another episode's workspace, with what that episode just wrote
    (other / "secret.txt").write_text("the other episode's secret")
    host_write = Path("/tmp") / f"jeval-planted-{uuid.uuid4().hex}"
    try:
        with FakeOpenAIServer(lambda req: "42", api_key=SECRET, models=("m",)) as server:
            goal = {"suite": str(pytester.path / "suite.toml"), "data": str(pytester.path / "rows.jsonl"),
                    "package_data": str(PACKAGE_DATA), "other_workspace_secret": str(other / "secret.txt"),
                    "host_write": str(host_write), "server_port": server.base_url.rsplit(":", 1)[1].split("/")[0]}
            (pytester.path / "bench_attack.py").write_text(BENCH)
            (pytester.path / "rows.jsonl").write_text(json.dumps({"id": "a1", "q": json.dumps(goal),
                                                                  "a": "GOLD-ANSWER-31337"}) + "\n")
            command = [sys.executable, ATTACK_AGENT, "--prompt-file", "{prompt_file}",
                       "--needle-sha256", hashlib.sha256(SECRET.encode()).hexdigest(),
                       "--shown", str(REPO)]  # the command names the checkout: it is shown, this package is not
            (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
                [run]
                output_dir = "out"
                max_retries = 0
                episode_timeout = 120

                [[models]]
                name = "m"
                base_url = "{server.base_url}"
                api_key_env = "ATTACK_REAL_KEY"

                [[benchmarks]]
                name = "attack"
                module = "bench_attack.py"
                data_files = "rows.jsonl"
                backend = "command"
                command = {json.dumps(command)}
                """))
            result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
            assert server.request_count == 0  # the model server was never reached, directly or not
        assert not host_write.exists()  # its /tmp is a private one (the write there worked, and stayed there)
        assert not (Path(ATTACK_AGENT).parent / "planted.txt").exists()
    finally:
        host_write.unlink(missing_ok=True)
        remove_workspace(other)
    result.assert_outcomes(failed=1)  # it answered (with its report), and not the gold answer
    record = json.loads((pytester.path / "out" / "attack_m.jsonl").read_text().splitlines()[0])
    report = json.loads(record["model_answer"])
    assert report["cap_eff"] == "0000000000000000" and report["uid"] == 65534
    for attempt in ("umount_proc", "umount_tmp", "remount_rw", "new_mount", "unshare_user", "suite", "data",
                    "package_data", "other_workspace_secret", "other_workspace_listing", "write_script_dir",
                    "direct_model_call", "outside_host"):
        assert not str(report[attempt]).startswith("ok"), (attempt, report)
    assert report["import_package"] == "ModuleNotFoundError"
    assert report["shown_readme"] == "ok"  # the folder the command names is there, with this package covered
    assert report["key_found"] == [] and SECRET not in json.dumps(record)
    assert report["proxy"].startswith("ok: HTTP/1.0 401")  # its one way out answers (it wants the dummy key)
    trajectory = json.loads((pytester.path / "out" / "attack_m.jsonl.trajectories.jsonl").read_text().splitlines()[0])
    ext = trajectory["external"]
    assert ext["containment"] == "bwrap" and {"userns", "netns", "pidns", "no-caps"} <= set(ext["isolation"])
    if os.geteuid() == 0:
        assert {"uid-per-run", "cgroup-memory", "cgroup-pids", "disk-quota"} <= set(ext["isolation"])
