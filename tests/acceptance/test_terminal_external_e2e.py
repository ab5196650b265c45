"""External agents on terminal tasks, and a verifier the agent cannot forge, through the plugin (one run).

One suite runs, against the OpenAI-compatible test server:

* the test agent CLI (``pytest_jeval/testing/fake_agent.py --bash``, ``backend = "command"``) on a
  ``terminal_lite`` task, a team-written Harbor task (``terminalbench-v2.1``) and a Terminal-Bench 1 task
  (``terminalbench``): the scripted
  model's ``bash`` calls run inside the task's environment (its ``/app``), so all score correct;
* a do-nothing command agent (``/bin/true``) on the Harbor task: 0;
* a hostile command agent (a shell script) on the Harbor task and on ``terminal_lite``: it looks for the
  task's tests and solution (inside, and at their host paths), this package's data, the suite, the real
  key, and calls the model server around its proxy; everything fails, and it is scored 0;
* on ``commit-notes`` (``tests/data/terminalbench/harbor-checker``, whose verifier runs the image's git
  and python3): the oracle 1, nop 0, and a built-in-loop agent that plants what would forge the
  verdict if the verifier used the agent's home or environment (a ``~/.gitconfig`` with an fsmonitor
  program, ``log.showSignature`` and a ``gpg.program``, a ``usercustomize.py`` in its user site,
  ``~/.bashrc``/``~/.profile``/``BASH_ENV`` lines, a repository hook): none of it runs, the reward is 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import pytest_jeval
from pytest_jeval.testing import fake_agent
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.terminalbench import HARBOR, TB1, TB_DATA, built

CHECKER = TB_DATA / "harbor-checker"
LITE_TASK = "csv-totals"
LITE = Path(pytest_jeval.__file__).resolve().parent / "benchmarks" / "terminal_lite" / "data" / "tasks" / LITE_TASK
SECRET = "sk-jeval-terminal-" + "7f3a9c" * 6
LITE_SOLVE = ("tail -n +2 sales.csv | awk -F, '{s[$2]+=$3} END {for (r in s) printf \"%s %.2f\\n\", r, s[r]}' "
              "| sort > totals.txt")
GREETING = "The file /app/name.txt holds a name."
GREET = "printf 'Hello, %s!\\n' \"$(cat /app/name.txt)\" > /app/greeting.txt"
COUNT_SOLVE = "wc -l < /app/data.txt > /app/count.txt; pwd; id -u; ls /jeval/agent"

HOSTILE = r"""#!/bin/sh
# what a hostile agent CLI tries inside the task's environment; each line reports "name: ok" or "name: no"
try() { name=$1; shift; if "$@" >/dev/null 2>&1; then echo "$name: ok"; else echo "$name: no"; fi; }
try tests_inside ls /tests/test.sh
try solution_inside ls /solution/solve.sh
try tests_on_host cat __TASK__/tests/test.sh
try solution_on_host cat __TASK__/solution/solve.sh
try package_data ls __PACKAGE__/benchmarks
try suite cat __SUITE__
try direct_model_call python3 -c 'import socket; socket.create_connection(("127.0.0.1", __PORT__), timeout=3)'
try direct_model_call_bash bash -c 'exec 3<>/dev/tcp/127.0.0.1/__PORT__'
if env | grep -q "__SECRET__" || cat /proc/*/environ 2>/dev/null | grep -aq "__SECRET__"; then echo "key: ok"; else
  echo "key: no"; fi
echo 999 > /app/count.txt
echo 999 > /app/totals.txt
"""

# an agent of a virtualenv made from the system's Python (its pyvenv.cfg names /usr, the task's inside)
VENV_AGENT = r"""
import json, os, subprocess, sys, urllib.request
body = json.dumps({"model": os.environ["JEVAL_MODEL"], "messages": [{"role": "user", "content": "venv agent"}]})
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body.encode(),
                                 headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"],
                                          "Content-Type": "application/json"})
reply = json.load(urllib.request.urlopen(request, timeout=60))["choices"][0]["message"]["content"]
shell = subprocess.run(["bash", "-c", "wc -l < data.txt > count.txt; echo home=${PYTHONHOME:-none}; pwd"],
                       capture_output=True, text=True).stdout.split()
print(json.dumps({"prefix": sys.prefix, "reply": reply, "shell": shell}))
"""

# the tampering of a built-in-loop agent on commit-notes (it never does the task)
TAMPER = r"""
cd /app
cat > /tmp/forge.sh <<'EOF'
#!/bin/sh
echo FORGED-$1; echo FORGED-$1 >&2
echo 1 > /logs/verifier/reward.txt
for p in /proc/[0-9]*; do grep -aq 'tests/tes[t].sh' $p/cmdline 2>/dev/null && kill -9 ${p#/proc/}; done
exit 0
EOF
chmod +x /tmp/forge.sh
git config --global core.fsmonitor "/tmp/forge.sh fsmonitor"
git config --global log.showSignature true
git config --global gpg.program "/tmp/forge.sh gpg"
git config --global core.hooksPath /tmp/hooks
site=$(python3 -c 'import site; print(site.getusersitepackages())')
mkdir -p "$site"
printf 'import subprocess\nsubprocess.run(["/tmp/forge.sh", "usercustomize"])\n' > "$site/usercustomize.py"
for f in ~/.bashrc ~/.profile ~/.bash_profile; do echo '/tmp/forge.sh rcfile' >> $f; done
echo 'export BASH_ENV=/tmp/forge.sh' >> ~/.bashrc
printf '#!/bin/sh\n/tmp/forge.sh hook\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout
python3 -c 'print("planted")'
git status --short
"""


def _records(path: Path) -> dict[str, dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    counts = Counter(r["record_id"] for r in lines)
    assert max(counts.values()) == 1, counts
    return {r["record_id"]: r for r in lines}


@pytest.fixture(scope="module")
def run(pytester_module: Path) -> dict[str, Any]:
    """The one run of the suite; its records per entry label, the server's requests and the run's output."""
    for folder in (HARBOR / "count-lines", CHECKER / "commit-notes", TB1 / "greeting"):
        built(folder)
    path = pytester_module
    instruction = (HARBOR / "count-lines" / "instruction.md").read_text().strip()
    lite = (LITE / "instruction.md").read_text().strip().splitlines()[0]
    notes = (CHECKER / "commit-notes" / "instruction.md").read_text().strip()
    scripts = {instruction: [tool_answer(ToolCallSpec("bash", {"command": COUNT_SOLVE})), "counted"],
               lite: [tool_answer(ToolCallSpec("bash", {"command": LITE_SOLVE})), "totals written"],
               notes: [tool_answer(ToolCallSpec("bash", {"command": TAMPER})), "done"],
               "venv agent": ["hello from the model"],
               GREETING: [tool_answer(ToolCallSpec("bash", {"command": GREET})), "greeted"]}
    with FakeOpenAIServer(script_responder(scripts, default="no")) as server:
        port = server.base_url.rsplit(":", 1)[1].split("/")[0]
        hostile = {}
        for name, task in (("hostile-tb", HARBOR / "count-lines"), ("hostile-lite", LITE)):
            script = path / f"{name}.sh"
            script.write_text(HOSTILE.replace("__TASK__", str(task)).replace("__PACKAGE__", str(LITE.parents[3]))
                              .replace("__SUITE__", str(path / "suite.toml")).replace("__PORT__", port)
                              .replace("__SECRET__", SECRET))
            script.chmod(0o755)
            hostile[name] = str(script)
        agent = [sys.executable, fake_agent.__file__, "--prompt-file", "{prompt_file}", "--bash"]
        venv = path / "system-venv"
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)], check=True)
        (path / "venv_agent.py").write_text(VENV_AGENT)
        entries = [
            {"name": "terminal_lite", "label": "lite-cmd", "backend": "command", "command": agent,
             "record_ids": [LITE_TASK]},
            {"name": "terminal_lite", "label": "lite-hostile", "backend": "command",
             "command": [hostile["hostile-lite"]], "record_ids": [LITE_TASK]},
            {"name": "terminalbench-v2.1", "label": "tb-cmd", "backend": "command", "command": agent,
             "data_dir": str(HARBOR), "record_ids": ["count-lines"]},
            {"name": "terminalbench", "label": "tb1-cmd", "backend": "command", "command": agent,
             "data_dir": str(TB1), "record_ids": ["greeting"]},
            {"name": "terminalbench-v2.1", "label": "tb-venv-cmd", "backend": "command",
             "command": [str(venv / "bin" / "python"), str(path / "venv_agent.py")], "data_dir": str(HARBOR),
             "record_ids": ["count-lines"]},
            {"name": "terminalbench-v2.1", "label": "tb-nop-cmd", "backend": "command", "command": ["/bin/true"],
             "data_dir": str(HARBOR), "record_ids": ["count-lines", "needs-gpu"]},
            {"name": "terminalbench-v2.1", "label": "tb-hostile", "backend": "command",
             "command": [hostile["hostile-tb"]], "data_dir": str(HARBOR), "record_ids": ["count-lines"]},
            {"name": "terminalbench-v2.1", "label": "notes-oracle", "agent": "oracle", "data_dir": str(CHECKER)},
            {"name": "terminalbench-v2.1", "label": "notes-nop", "agent": "nop", "data_dir": str(CHECKER)},
            {"name": "terminalbench-v2.1", "label": "notes-tamper", "data_dir": str(CHECKER)},
        ]
        body = "".join("\n[[benchmarks]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in e.items())
                       for e in entries)
        (path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            trajectories = "inline"
            cache = false

            [[models]]
            name = "m"
            base_url = "{server.base_url}"
            api_key_env = "JEVAL_TERMINAL_TEST_KEY"
        """) + body)
        env = {**os.environ, "JEVAL_TERMINAL_TEST_KEY": SECRET, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run([sys.executable, "-m", "pytest", "--jeval-config", "suite.toml", "-p",
                               "no:cacheprovider", "-q"], cwd=path, env=env, capture_output=True, text=True,
                              timeout=1800, check=False)
        requests = list(server.requests)
    out = path / "out"
    records = {label: _records(out / f"{label}_m.jsonl") for label in (e["label"] for e in entries)}
    return {"records": records, "requests": requests, "output": done.stdout + done.stderr, "path": path}


@pytest.fixture(scope="module")
def pytester_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("terminal-external")


def test_a_command_agent_works_inside_the_task_environment_and_scores(run: dict[str, Any]) -> None:
    lite = run["records"]["lite-cmd"][LITE_TASK]
    tb = run["records"]["tb-cmd"]["count-lines"]
    tb1 = run["records"]["tb1-cmd"]["greeting"]
    assert tb1["is_correct"] is True, (tb1["scoring_metadata"], run["output"][-3000:])
    assert lite["is_correct"] is True, (lite["scoring_metadata"], run["output"][-3000:])
    assert tb["is_correct"] is True and tb["score"] == 1.0, (tb["scoring_metadata"], run["output"][-3000:])
    for record in (lite, tb):
        ext = record["trajectory"]["external"]
        assert ext["backend"] == "command" and ext["exit_status"] == 0, ext
        assert {"task-environment", "userns", "netns", "pidns", "proxy-only-network"} <= set(ext["isolation"])
        assert len(ext["requests"]) >= 2  # every model call went through the recording proxy
    # the bash tool ran in the task's working directory, as the image's root, and saw its own folder only
    result = tb["trajectory"]["tool_calls"][0]["result"]
    assert "exit status: 0" in result and "/app\n0\nhome" in result and "proxy.sock" in result
    meta = tb["scoring_metadata"]
    assert any("a fresh copy of the image's home as built" in d for d in meta["deviations"])
    assert any("disagrees" in d or "exited non-zero scores 0" in d for d in meta["deviations"])


def test_an_agent_of_a_system_python_virtualenv_runs_inside_with_nothing_leaking_to_its_commands(
        run: dict[str, Any]) -> None:
    record = run["records"]["tb-venv-cmd"]["count-lines"]
    assert record["is_correct"] is True, (record["scoring_metadata"], record["trajectory"]["external"]["stderr"])
    report = json.loads(record["model_answer"])
    assert report["prefix"] == str(run["path"] / "system-venv")  # its own virtualenv, the host's Python
    assert report["reply"] == "hello from the model"  # through the proxy
    assert report["shell"] == ["home=none", "/app"]  # PYTHONHOME never reaches the commands it runs


def test_a_do_nothing_command_agent_scores_zero(run: dict[str, Any]) -> None:
    record = run["records"]["tb-nop-cmd"]["count-lines"]
    assert record["is_correct"] is False and record["score"] == 0.0
    assert record["trajectory"]["external"]["exit_status"] == 0
    # a task that cannot run here ends before the agent starts, unscored with its reason, as for built-in agents
    gpu = run["records"]["tb-nop-cmd"]["needs-gpu"]
    assert gpu["is_correct"] is None and gpu["scoring_metadata"]["unscored_kind"] == "gpu", gpu["scoring_metadata"]
    assert gpu["agent"]["stop_reason"] == "not_run" and "argv" not in gpu["trajectory"]["external"]


@pytest.mark.parametrize("label", ["tb-hostile", "lite-hostile"])
def test_a_hostile_command_agent_reaches_nothing_and_fails(run: dict[str, Any], label: str) -> None:
    record = next(iter(run["records"][label].values()))
    report = dict(line.split(": ", 1) for line in record["model_answer"].splitlines() if ": " in line)
    assert set(report) >= {"tests_inside", "solution_inside", "tests_on_host", "solution_on_host", "package_data",
                           "suite", "direct_model_call", "direct_model_call_bash", "key"}, record["model_answer"]
    assert set(report.values()) == {"no"}, report
    assert record["is_correct"] is False
    assert record["trajectory"]["external"]["requests"] == []
    text = json.dumps(run["records"])
    assert SECRET not in text and SECRET[::-1] not in text


def test_the_verifier_runs_none_of_what_the_agent_planted(run: dict[str, Any]) -> None:
    oracle = run["records"]["notes-oracle"]["commit-notes"]
    nop = run["records"]["notes-nop"]["commit-notes"]
    tamper = run["records"]["notes-tamper"]["commit-notes"]
    assert oracle["is_correct"] is True, oracle["scoring_metadata"]
    assert nop["is_correct"] is False
    planted = tamper["trajectory"]["tool_calls"][0]["result"]
    for plant in ("usercustomize", "fsmonitor"):  # the plants work in the agent's own shell
        assert f"FORGED-{plant}" in planted, planted
    meta = tamper["scoring_metadata"]
    assert tamper["is_correct"] is False and meta["reward"] == 0.0, meta
    assert meta["reward_source"] == "reward.txt" and meta["test_exit_status"] == 1, meta
    assert "FORGED" not in meta["test_output"] and "notes: missing or wrong" in meta["test_output"], meta
