"""Episode mode's parts: the memory policies, the plan's checks, the xdist unit of a sequence (an xdist
internal: fails loudly when it changes), and ``jeval run --episode-mode``."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

import pytest

from pytest_jeval.agents.memory import MEMORY_POLICIES, Recollection, recall, turns_after_task
from pytest_jeval.cli._run_suite import build_suite
from pytest_jeval.core.sample import Sample
from pytest_jeval.session.sequence import sequence_scope
from pytest_jeval.suite.config import SuiteError
from pytest_jeval.suite.plan import EvalPlan

EARLIER = [Recollection(sample=Sample(id=f"s{i}", input=f"q{i}"), position=i, correct=c)
           for i, c in enumerate([True, False, True, None, True, True])]


@pytest.mark.parametrize(("policy", "size", "fed"), [
    ("recent-successes", 3, ["s2", "s4", "s5"]),
    ("recent-successes", 10, ["s0", "s2", "s4", "s5"]),
    ("recent", 2, ["s4", "s5"]),
    ("none", 3, []),
])
def test_the_memory_policies(policy: str, size: int, fed: list[str]) -> None:
    got = recall(policy, size, 6, EARLIER, missing=["x"])
    assert got.info() == {"policy": policy, "size": size, "position": 6, "fed_by": fed, "missing": ["x"]}
    assert set(MEMORY_POLICIES) == {"recent-successes", "recent", "none"}
    with pytest.raises(KeyError, match="unknown memory policy 'best'; the policies are: recent-successes"):
        recall("best", 3, 0, [])


def test_an_episodes_turns_leave_out_its_opening() -> None:
    messages = [{"role": "system", "content": "memory of others"}, {"role": "user", "content": "task"},
                {"role": "assistant", "content": "", "tool_calls": []}, {"role": "tool", "content": "x"}]
    assert [m["role"] for m in turns_after_task(messages)] == ["assistant", "tool"]
    assert turns_after_task([{"role": "system", "content": "s"}]) == ()


def test_the_xdist_unit_of_a_sequence() -> None:
    sequential = {"lifelong-agent"}
    a = "suite.toml::lifelong-agent::test_lifelong_agent[m1/db_bench-3]"
    b = "suite.toml::lifelong-agent::test_lifelong_agent[m1/db_bench-10]"
    c = "suite.toml::lifelong-agent::test_lifelong_agent[m2/db_bench-3]"
    assert sequence_scope(a, sequential) == sequence_scope(b, sequential) != sequence_scope(c, sequential)
    other = "suite.toml::gsm8k::test_gsm8k[m1/gsm8k-1]"
    assert sequence_scope(other, sequential) == other  # a unit of its own, as --dist load


def test_the_scheduler_overrides_xdists_scope_split() -> None:
    """``SequenceScheduling`` subclasses xdist's ``LoadScopeScheduling`` and replaces ``_split_scope``: both
    must still exist with that signature."""
    import inspect

    from xdist.scheduler import LoadScopeScheduling

    assert list(inspect.signature(LoadScopeScheduling._split_scope).parameters) == ["self", "nodeid"]
    assert callable(getattr(LoadScopeScheduling, "schedule", None))


BENCH = '''
from pytest_jeval import Benchmark, Sample
from pytest_jeval.agents import AgentSpec

BENCHMARK = Benchmark(name="{name}", to_sample=lambda r, i, c: Sample(id=str(i), input="q"),
                      prompt=lambda s: s.input, backends=("agent",), bundled_files=("rows.jsonl",),
                      agent=AgentSpec({spec}))

def test_it(sample, episode, score):
    pass
'''


def plan(tmp_path: Path, run: str = "", spec: str = "memory=lambda s, e: s.input", extra: str = "") -> EvalPlan:
    tmp_path = tmp_path / f"p{len(list(tmp_path.iterdir()))}"  # a module file of its own: imports are cached
    tmp_path.mkdir()
    (tmp_path / "bench.py").write_text(textwrap.dedent(BENCH.format(name="mine", spec=spec)))
    (tmp_path / "rows.jsonl").write_text('{"q": 1}\n{"q": 2}\n{"q": 3}\n')
    suite = tmp_path / "suite.toml"
    suite.write_text(f'[run]\n{run}\n[[models]]\nname = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
                     f'[[benchmarks]]\nname = "mine"\nmodule = "bench.py"\n{extra}\n')
    return EvalPlan.from_file(suite, invocation_dir=tmp_path)


def test_the_plan_decides_who_runs_in_episode_mode(tmp_path: Path) -> None:
    assert not plan(tmp_path).benchmarks["mine"].sequential  # a memory alone is not enough
    assert plan(tmp_path, "episode_mode = true").benchmarks["mine"].sequential
    assert plan(tmp_path, spec="memory=lambda s, e: s.input, sequential=True").benchmarks["mine"].sequential
    without = plan(tmp_path, "episode_mode = true", spec="")
    assert not without.benchmarks["mine"].sequential
    assert without.adaptations() == ["mine: keeps no memory between episodes: [run] episode_mode does not apply to it"]
    seeded = plan(tmp_path, 'episode_mode = true\nepisode_order = "seeded"\nseed = 3')
    assert [s.id for s in seeded.samples("mine")[0]] != ["0", "1", "2"]
    assert sorted(s.id for s in seeded.samples("mine")[0]) == ["0", "1", "2"]


@pytest.mark.parametrize(("run", "spec", "message"), [
    ('episode_mode = true\nepisode_memory = "best"', "memory=lambda s, e: s.input",
     "run.episode_memory: Value error, unknown memory policy 'best'"),
    ('episode_mode = true\ntrajectories = "off"', "memory=lambda s, e: s.input",
     "run.trajectories: episode mode rebuilds an episode's memory from stored trajectories"),
    ("", "sequential=True", "requires episode mode but defines no AgentSpec.memory"),
])
def test_bad_episode_mode_settings_are_refused(tmp_path: Path, run: str, spec: str, message: str) -> None:
    with pytest.raises(SuiteError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan(tmp_path, run, spec)


def test_jeval_run_has_an_episode_mode_switch(tmp_path: Path) -> None:
    from pytest_jeval.cli._run import add_parsers

    parser = argparse.ArgumentParser()
    add_parsers(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["run", "-b", "lifelong-agent", "-m", "x", "--episode-mode"])
    assert build_suite(args, args.benchmarks, tmp_path)["run"]["episode_mode"] is True
    args = parser.parse_args(["run", "-b", "lifelong-agent", "-m", "x"])
    assert "episode_mode" not in build_suite(args, args.benchmarks, tmp_path)["run"]
