"""A scripted agent that never does its task tries to forge the checker's verdict, through the plugin.

``terminal_lite`` trusted ``/logs/verifier/reward.txt`` over ``tests/test.sh``'s exit status and ran
the checker with the agent's ``HOME`` and ``/tmp``: an agent that planted a Makefile target the
checker runs, a ``usercustomize.py`` in its home, or a git ``gpg.program`` triggered by a
fake-signed commit was scored correct. Here each of those, plus the usual suspects
(``sitecustomize.py``, ``conftest.py``, a fake binary early in ``PATH``, shell start-up files,
writing the reward itself), is planted on a real task; every sample must fail, with the reason.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer
from tests.support.terminal import TASKS_DIR, ensure_rootfs

SITE = "/tmp/.local/lib/python3.11/site-packages"  # the agent's HOME is /tmp
FORGE = "mkdir -p /logs/verifier 2>/dev/null; echo 1 > /logs/verifier/reward.txt 2>/dev/null"
HOOK_PY = f"import os\nos.system({FORGE!r})\n"
FAKE_BIN = f"#!/bin/sh\n{FORGE}\nexit 0\n"


def _bash(command: str) -> Any:
    return tool_answer(ToolCallSpec("bash", {"command": command}))


def _signed_commit_on(ref: str, message: str) -> str:
    """Shell: a commit that looks signed on ``ref``, and the repository's gpg.program set to a forger."""
    return textwrap.dedent(f"""\
        cd /app/repo
        printf '#!/bin/sh\\n{FORGE}\\nexit 0\\n' > /tmp/gpg-forger && chmod +x /tmp/gpg-forger
        git config gpg.program /tmp/gpg-forger && git config log.showSignature true
        git config core.hooksPath /tmp/hooks && mkdir -p /tmp/hooks
        tree=$(git rev-parse HEAD^{{tree}})
        commit=$(printf 'tree %s\\nparent %s\\nauthor A <a@b> 1 +0000\\ncommitter A <a@b> 1 +0000\\ngpgsig -----BEGIN PGP SIGNATURE-----\\n \\n abc\\n -----END PGP SIGNATURE-----\\n\\n{message}\\n' "$tree" "$(git rev-parse HEAD)" | git hash-object -t commit -w --stdin)
        git update-ref {ref} "$commit"
        """)


USUAL_SUSPECTS = textwrap.dedent(f"""\
    mkdir -p {SITE} /tmp/.local/bin /tmp/bin /app/bin
    printf '%b' {HOOK_PY!r} > {SITE}/usercustomize.py
    printf '%b' {HOOK_PY!r} > {SITE}/sitecustomize.py
    printf '%b' {HOOK_PY!r} > /app/sitecustomize.py
    printf '%b' {HOOK_PY!r} > /app/conftest.py
    printf '%b' {HOOK_PY!r} > /tmp/conftest.py
    for d in /tmp/.local/bin /tmp/bin /app/bin /app; do for b in python3 bash cat; do
      printf '%b' {FAKE_BIN!r} > $d/$b; chmod +x $d/$b; done; done
    printf '%s\\n' {FORGE!r} | tee /tmp/.bashrc /tmp/.profile /tmp/.bash_profile > /dev/null
    {FORGE}; ls /logs/verifier 2>&1; true
    """)

FORGERIES = {
    # the checker runs `make` in /app/calc: the agent's Makefile writes the reward, and the build fails
    "make-build": [_bash("cd /app/calc && printf 'calc:\\n\\t%s; exit 1\\nclean:\\n\\ttrue\\n' "
                         f"'{FORGE}' > Makefile")],
    # the checker runs python3 with the agent's HOME: its user site imports usercustomize
    "fix-failing-test": [_bash(f"mkdir -p {SITE} && printf '%b' {HOOK_PY!r} > {SITE}/usercustomize.py")],
    # the checker's `git log` verifies the fake signature with the repository's gpg.program
    "git-feature-branch": [_bash(_signed_commit_on("refs/heads/feature/version", "Add VERSION file"))],
    "git-restore-file": [_bash(_signed_commit_on("HEAD", "Restore notes"))],
    # a copy of csv-totals whose checker runs python3 and cat: the usual suspects
    "csv-totals-py": [_bash(USUAL_SUSPECTS)],
}
PY_CHECK = """#!/bin/bash
cd /app
python3 -c 'import sys; sys.exit(0 if open("/app/totals.txt").read().startswith("east") else 1)' || exit 1
cat /app/totals.txt
"""


@pytest.fixture(scope="module", autouse=True)
def _rootfs() -> None:
    ensure_rootfs()


def test_an_agent_that_plants_forgeries_is_scored_wrong_with_the_reason(pytester: pytest.Pytester) -> None:
    copy = pytester.path / "csv-totals-py"
    shutil.copytree(TASKS_DIR / "csv-totals", copy)
    (copy / "tests" / "test.sh").write_text(PY_CHECK)
    folders = {name: copy if name == "csv-totals-py" else TASKS_DIR / name for name in FORGERIES}
    index = pytester.path / "tasks.jsonl"
    index.write_text("".join(json.dumps({"path": str(folder)}) + "\n" for folder in folders.values()))
    instructions = {name: (folder / "instruction.md").read_text().strip() for name, folder in folders.items()}
    scripts = {instructions[name]: [*steps, "Done."] for name, steps in FORGERIES.items()}
    with FakeOpenAIServer(script_responder(scripts, default="no script")) as server:
        (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
            [run]
            output_dir = "out"
            max_retries = 0
            cache = false
            trajectories = "inline"
            tool_timeout = 30

            [[models]]
            name = "forger"
            base_url = "{server.base_url}"
            api_key = "x"

            [[benchmarks]]
            name = "terminal_lite"
            data_files = "{index}"
            """))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=len(FORGERIES))
    records = {r["record_id"]: r for r in map(json.loads, (pytester.path / "out" / "terminal_lite_forger.jsonl")
                                             .read_text().splitlines())}
    assert set(records) == set(FORGERIES)
    for name, record in records.items():
        calls = record["trajectory"]["tool_calls"]
        assert calls and all(c["error"] is None for c in calls), (name, calls)  # every forgery was planted
        meta = record["scoring_metadata"]
        assert record["is_correct"] is False and meta["test_exit_status"] != 0, (name, meta)
        if name == "make-build":  # the Makefile is the code under test: it ran, and its reward did not count
            assert meta["test_reward"] == 1.0 and "disagrees with the exit status" in meta["verdict_reason"]
        else:  # nothing the agent planted ran in the checker: it wrote no reward at all
            assert meta["test_reward_text"] is None, (name, meta)
            assert meta["verdict_reason"] == f"tests/test.sh exited with status {meta['test_exit_status']}"
    suspects = records["csv-totals-py"]["trajectory"]["tool_calls"][0]["result"]
    assert "No such file or directory" in suspects or "Read-only file system" in suspects  # no /logs for the agent


def test_the_checker_environment_has_nothing_of_the_agent(tmp_path: Path) -> None:
    from pytest_jeval.sandbox.shell.providers import BubblewrapProvider, checker_environment

    box = BubblewrapProvider().start(None)
    try:
        box.exec("echo agent > /tmp/mark; mkdir -p /tmp/.local && echo x > /tmp/.local/y", timeout=20)
        tests = tmp_path / "tests"
        tests.mkdir()
        (tests / "t").write_text("x")
        box.copy_in(tests, "/tests")
        seen = box.exec("echo HOME=$HOME; ls -A $HOME /tmp; env | sort; git config --get core.hooksPath",
                        timeout=20, checker=True)
        again = box.exec("ls -A /tmp; echo --; ls -A /tests /logs", timeout=20)
    finally:
        box.stop()
    assert seen.returncode == 0, seen
    lines = seen.stdout.splitlines()
    assert lines[0] == "HOME=/root" and "mark" not in seen.stdout and ".local" not in seen.stdout
    env = dict(line.split("=", 1) for line in lines if "=" in line)
    assert {k: v for k, v in env.items() if k not in ("PWD", "SHLVL", "_", "OLDPWD")} == checker_environment()
    assert lines[-1] == "/nonexistent/jeval-no-hooks"
    # the agent's /tmp is its own again; /tests and /logs are the root filesystem's empty mount points
    assert again.stdout.split() == [".local", "mark", "--", "/logs:", "/tests:"]
