"""One member of every family, added by an installed package, named in a suite and used.

A real package ``acme_jeval`` with an ``acme_jeval-1.0.dist-info`` (``entry_points.txt``) is written onto the
``PYTHONPATH`` of the subprocesses, where ``importlib.metadata`` finds it as it finds any install. It brings a
benchmark, a scorer, an evaluator, a tool, a named agent, an external agent backend, an engine, a sandbox
provider and an exporter, through the nine ``pytest_jeval.<family>`` entry-point groups; nothing of
pytest-jeval is edited. ``jeval list`` shows each one, a suite names each one, and the run uses each one.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer, ToolCallSpec, tool_answer

KEY = "sk-families-test-key"

FAMILIES = ("benchmarks", "scorers", "evaluators", "tools", "agents", "backends", "engines", "sandboxes", "exporters")

MODULES = {
    "bench_acme": '''
        from pytest_jeval import Benchmark, Sample, Score

        def to_sample(row, index, ctx):
            return Sample(id=f"acme-{index}", input=row["q"], target=row["a"])

        BENCHMARK = Benchmark(name="acme_bench", description="Say yes.", category="test", to_sample=to_sample,
                              prompt=lambda s: s.input, scorer="acme_upper")

        def test_acme(sample, response, score):
            text = response.text.strip()
            score(Score(correct=text == sample.target, extracted=text, expected=sample.target))
    ''',
    "scorers": '''
        from pytest_jeval import Score

        def upper(record):
            """The answer is written in capitals."""
            answer = record.get("model_answer") or ""
            return Score(correct=answer.isupper(), extracted=answer, expected="CAPITALS")
    ''',
    "evaluators": '''
        from pytest_jeval.judge_bench import CodeEvaluator

        class Shouting(CodeEvaluator):
            name = "acme_shouting"
            description = "Is the output written in capitals?"
            kinds = ("boolean",)

            def judge(self, item, spec):
                return self.decided(str(item.output).isupper())
    ''',
    "tools": '''
        from pytest_jeval.agents.tool import tool

        @tool(name="shout")
        def shout(text: str) -> str:
            """Write the text in capitals.

            Args:
                text: What to shout.
            """
            return text.upper()
    ''',
    "agents": '''
        from pytest_jeval.agents.loop import run_episode

        class Shouter:
            description = "calls the shout tool on the task, then answers with the tool's result"
            calls_model = True

            def refuses(self, spec):
                return None

            async def run(self, parts):
                async def call_model(conversation):
                    reply = await parts.call_model(conversation)  # the model is asked, as an agent must
                    return reply
                return await run_episode(parts.messages, tools=parts.tools, call_model=call_model, ctx=parts.ctx,
                                         limits=parts.limits)

        AGENT = Shouter()
    ''',
    "backends": '''
        import sys
        from pytest_jeval.agents.external.base import BackendOptions
        from pytest_jeval.agents.external.command import make_agent as command_agent

        def make_agent(options):
            """Acme's agent CLI: answers yes."""
            return command_agent(BackendOptions(benchmark=options.benchmark,
                                                command=(sys.executable, "-I", "-c", "print('yes')")))
    ''',
    "engines": '''
        import os
        from pytest_jeval.calls.engines.openai_compat import OpenAICompatible

        ENGINE = OpenAICompatible("Acme's hosted models", os.environ["ACME_URL"])
    ''',
    "sandboxes": '''
        import os
        from pathlib import Path
        from pytest_jeval.sandbox.shell.providers import BubblewrapProvider

        class AcmeBox(BubblewrapProvider):
            """Acme's box: bubblewrap, and a mark that it was used."""

            name = "acme-box"

            def start(self, environment):
                Path(os.environ["ACME_MARK"]).write_text("started")
                return super().start(environment)
    ''',
    "exporters": '''
        import json

        class AcmeExporter:
            title = "Acme"
            extra = ""
            modules = ()
            key = "exporters"

            def configure(self, plan, named):
                if not named:
                    return None
                out = plan.output_dir / "acme-export.json"

                def send(pairs):
                    out.write_text(json.dumps(sorted([p.benchmark, p.model, p.summary["accuracy"], len(p.records)]
                                                     for p in pairs)))
                    return f"acme: exported {len(pairs)} pairs"

                return send

        EXPORTER = AcmeExporter()
    ''',
}

ENTRY_POINTS = """
    [pytest_jeval.benchmarks]
    acme_bench = acme_jeval.bench_acme
    [pytest_jeval.scorers]
    acme_upper = acme_jeval.scorers:upper
    [pytest_jeval.evaluators]
    acme_shouting = acme_jeval.evaluators:Shouting
    [pytest_jeval.tools]
    shout = acme_jeval.tools:shout
    [pytest_jeval.agents]
    acme-shouter = acme_jeval.agents:AGENT
    [pytest_jeval.backends]
    acme-cli = acme_jeval.backends:make_agent
    [pytest_jeval.engines]
    acme = acme_jeval.engines:ENGINE
    [pytest_jeval.sandboxes]
    acme-box = acme_jeval.sandboxes:AcmeBox
    [pytest_jeval.exporters]
    acme-export = acme_jeval.exporters:EXPORTER
"""


@pytest.fixture
def site(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package ``acme_jeval`` and its dist-info, on the subprocesses' ``PYTHONPATH``."""
    folder = pytester.path / "site"
    pkg = folder / "acme_jeval"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for name, text in MODULES.items():
        (pkg / f"{name}.py").write_text(textwrap.dedent(text))
    info = folder / "acme_jeval-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-jeval\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    monkeypatch.setenv("JEVAL_KEY", KEY)
    monkeypatch.setenv("ACME_URL", "http://127.0.0.1:9/v1")  # replaced by the test server's URL below
    monkeypatch.setenv("ACME_MARK", str(pytester.path / "acme-box-used"))
    return folder


def jeval(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.run(sys.executable, "-m", "pytest_jeval", *args)


@pytest.mark.slow
def test_each_family_lists_the_installed_member(pytester: pytest.Pytester, site: Path) -> None:
    listed = jeval(pytester, "list", "--json")
    assert listed.ret == 0, listed.stderr.str()
    catalog = json.loads(listed.stdout.str())
    expected = {"benchmarks": "acme_bench", "scorers": "acme_upper", "evaluators": "acme_shouting",
                "tools": "shout", "agents": "acme-shouter", "backends": "acme-cli", "engines": "acme",
                "sandboxes": "acme-box", "exporters": "acme-export"}
    assert set(expected) == set(FAMILIES)
    for family, name in expected.items():
        members = {m["name"]: m for m in catalog[family]}
        assert name in members, f"{family}: {sorted(members)}"
        if "origin" in members[name]:
            assert "acme-jeval 1.0" in members[name]["origin"], members[name]
    assert {"orchestrator", "oracle", "nop"} <= {m["name"] for m in catalog["agents"]}  # the built-ins stay


@pytest.mark.slow
def test_a_suite_uses_each_installed_member(pytester: pytest.Pytester, site: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    (pytester.path / "acme.jsonl").write_text(json.dumps({"q": "Say yes.", "a": "yes"}) + "\n")
    gold = [{"id": "g1", "input": "say hi", "output": "HELLO", "gold": True},
            {"id": "g2", "input": "say hi", "output": "hello", "gold": False}]
    (pytester.path / "gold.jsonl").write_text("".join(json.dumps(r) + "\n" for r in gold))

    def answer(body: dict[str, Any], attempt: int) -> str | Answer:
        conversation = body["messages"]
        if body.get("tools") and not any(m.get("role") == "tool" for m in conversation):
            return tool_answer(ToolCallSpec("shout", {"text": "yes"}))
        return "yes"

    with FakeOpenAIServer(answer, api_key=KEY) as server:
        monkeypatch.setenv("ACME_URL", server.base_url)
        (pytester.path / "suite.toml").write_text(textwrap.dedent("""
            [run]
            output_dir = "out"
            exporters = ["acme-export"]

            [[models]]
            name = "m"
            engine = "acme"
            api_key_env = "JEVAL_KEY"

            [[benchmarks]]
            name = "acme_bench"
            data_files = "acme.jsonl"
            agent = "acme-shouter"
            tools = ["shout"]

            [[benchmarks]]
            name = "acme_bench"
            label = "acme-cli-run"
            data_files = "acme.jsonl"
            backend = "acme-cli"

            [[benchmarks]]
            name = "acme-judge"
            evaluator = "acme_shouting"
            data_files = "gold.jsonl"
        """))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
        assert server.requests, "the installed engine's default URL reached the test server"
    assert result.ret == 0, result.stdout.str()
    out = pytester.path / "out"
    agent_run = [json.loads(line) for line in (out / "acme_bench_m.jsonl").read_text().splitlines()]
    assert agent_run[0]["is_correct"] is True and agent_run[0]["agent"]["name"] == "acme-shouter"
    trajectory = [json.loads(line) for line in (out / "acme_bench_m.jsonl.trajectories.jsonl").read_text().splitlines()]
    assert [c["name"] for c in trajectory[0]["tool_calls"]] == ["shout"]  # the installed tool ran
    assert "YES" in trajectory[0]["tool_calls"][0]["result"]
    cli_run = [json.loads(line) for line in (out / "acme-cli-run_m.jsonl").read_text().splitlines()]
    assert cli_run[0]["is_correct"] is True and cli_run[0]["model_answer"] == "yes"  # the installed backend answered
    judged = [json.loads(line) for line in (out / "acme-judge_m.jsonl").read_text().splitlines()]
    assert sorted(r["is_correct"] for r in judged) == [True, True]  # the installed evaluator judged both
    exported = json.loads((out / "acme-export.json").read_text())
    assert [row[0] for row in exported] == ["acme-cli-run", "acme-judge", "acme_bench"]  # the exporter got each pair
    result.stdout.fnmatch_lines(["*acme: exported 3 pairs*"])

    rescored = jeval(pytester, "rescore", str(out / "acme_bench_m.jsonl"), "--scorer", "acme_upper")
    assert rescored.ret == 0, rescored.stderr.str()  # the installed scorer: "yes" is not in capitals
    new = [json.loads(line) for line in (out / "acme_bench_m.rescored-acme_upper.jsonl").read_text().splitlines()]
    assert new[0]["is_correct"] is False and new[0]["extracted"] == "yes"


@pytest.mark.slow
def test_an_installed_sandbox_provider_runs_a_shell_task(pytester: pytest.Pytester, site: Path) -> None:
    from pytest_jeval.sandbox.shell.rootfs import RootfsError, check_rootfs

    try:
        check_rootfs()
    except RootfsError as exc:
        pytest.skip(f"the terminal tasks' root filesystem is not built here: {exc}")
    (pytester.path / "suite.toml").write_text(textwrap.dedent("""
        [run]
        output_dir = "out"

        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"

        [[benchmarks]]
        name = "terminal_lite"
        sandbox = "acme-box"
        agent = "nop"
        max_samples = 1
    """))
    result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == 1, result.stdout.str()  # nop does nothing: the task's checker fails it
    assert (pytester.path / "acme-box-used").read_text() == "started"
    records = [json.loads(line) for line in (pytester.path / "out" / "terminal_lite_m.jsonl").read_text().splitlines()]
    assert len(records) == 1 and records[0]["is_correct"] is False and records[0]["error"] is None
