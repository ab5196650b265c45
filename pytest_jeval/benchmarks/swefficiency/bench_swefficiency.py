"""swefficiency: make a repository's slow workload faster without breaking its tests (SWE-fficiency), without Docker.

Instances in SWE-fficiency's schema (SWE-bench's columns plus ``workload``, ``covering_tests``, ``speedup``)
come from the Hub (``swefficiency/swefficiency``) or ``data_files``; repositories, environments and
prepared checkouts as for ``swebench`` (the install recipes from the ``swebench`` package or a
``specs_file``: SWE-fficiency's own recipes are not a package). The agent gets the checkout and the
workload script; the submission is the checkout's ``git diff`` (``direct``: a diff in the reply).

Grading (:mod:`.scoring`): the patch on a fresh checkout, the covering tests as the correctness gate, then
the workload's cost in instructions under callgrind before the patch, after the expert's and after the
model's (:mod:`.measure`; wall time recorded, never scored); the score is upstream's speedup ratio (model
speedup / expert speedup, a failing patch counting as no edit), the summary its harmonic mean. See
docs/swebench.md.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_jeval import Benchmark, HubDataset, LoadContext, Sample, Score, ScoreSink
from pytest_jeval.agents import AgentSpec, HarnessError
from pytest_jeval.benchmarks._swe.episode import environment, finish, gold_steps
from pytest_jeval.benchmarks._swe.instances import parse_instance, read_instance_rows
from pytest_jeval.benchmarks._swe.options import SwefficiencyOptions, metadata_of
from pytest_jeval.benchmarks._swe.prepare import check_instance, instance_of
from pytest_jeval.benchmarks._swe.tools import agent_tools
from pytest_jeval.benchmarks.swefficiency.scoring import summarize, swefficiency_score
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.config import BenchmarkEntry
from pytest_jeval.suite.dataset import DatasetLoadError

MAX_TURNS = 100

SYSTEM = (
    "You are a performance engineer working in a checkout of the repository {repo}: your working directory, "
    "/sandbox. Make the workload below run faster by changing the repository's source code, without changing "
    "its behaviour: the repository's tests must still pass. Tools: bash and python (run in the checkout with the "
    "repository's Python environment; no network), str_replace, file_read, file_write and list_files. Do not "
    "change the tests. When you are done, reply without a tool call; your changes to the checkout (its git "
    "diff) are your submission."
)
TASK = "{statement}\n\nThe workload to speed up (it times `workload()` with timeit):\n\n```python\n{workload}\n```"
DIRECT = ("Answer with a single patch that I can apply to the repository with git apply, in unified diff format "
          "(paths prefixed a/ and b/), between <patch> and </patch>, and nothing else.")


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One instance, its mirror, base commit and install recipe checked (a usage error when missing)."""
    inst = parse_instance(row, swefficiency=True)
    try:
        meta = check_instance(inst, metadata_of(ctx.options, SwefficiencyOptions))
    except ValueError as exc:  # a missing mirror, commit or recipe: a usage error naming what to do
        raise DatasetLoadError(f"swefficiency: {exc}") from None
    return Sample(id=inst.instance_id, input=inst.problem_statement, subject=inst.repo, metadata=meta,
                  target={"PASS_TO_PASS": list(inst.pass_to_pass), "covering_tests": list(inst.covering_tests)})


def read_rows(files: Any, ctx: LoadContext) -> Any:
    """``data_files``, else the Hub dataset (``swefficiency/swefficiency``, or the ``subset`` id)."""
    return read_instance_rows(BENCHMARK, files, ctx.subset, "swefficiency")


def _task(sample: Sample) -> str:
    inst = instance_of(sample.metadata)
    statement = inst.problem_statement.strip() or f"Optimize {inst.repo} for this workload."
    return TASK.format(statement=statement, workload=inst.workload.strip())


def agent_prompt(sample: Sample) -> Messages:
    """The system prompt, then the task and its workload."""
    repo = instance_of(sample.metadata).repo
    return [{"role": "system", "content": SYSTEM.format(repo=repo)}, {"role": "user", "content": _task(sample)}]


def direct_prompt(sample: Sample) -> Messages:
    """``backend = "direct"``: the task, its workload and the answer format."""
    repo = instance_of(sample.metadata).repo
    return [{"role": "user", "content": f"Repository: {repo}\n\n{_task(sample)}\n\n{DIRECT}"}]


BENCHMARK = Benchmark(
    name="swefficiency",
    category="coding",
    description="SWE-fficiency: speed up a repo's workload without breaking its tests; instructions under callgrind",
    dataset=HubDataset(path="swefficiency/swefficiency", split="test", id_column="instance_id"),
    read_rows=read_rows,
    to_sample=to_sample,
    prompt=direct_prompt,
    scorer="swefficiency",
    scoring="speedup ratio (model / expert speedup, tests as a gate) in callgrind instructions; harmonic mean",
    sample_count=498,
    backends=("agent", "direct"),
    options=SwefficiencyOptions,
    summarize_extra=summarize,
    agent=AgentSpec(tools=agent_tools(), environment=environment, prompt=agent_prompt, max_turns=MAX_TURNS,
                    oracle=gold_steps, finish=finish, workspace_environment=True),
)


def test_swefficiency(sample: Sample, jeval_model: str, benchmark_entry: BenchmarkEntry,
                      request: pytest.FixtureRequest, score: ScoreSink) -> None:
    """Correct when the covering tests still pass and the workload runs fewer instructions; scored by SR."""
    backend = benchmark_entry.backend_kind or ("agent" if benchmark_entry.agent else BENCHMARK.backends[0])
    if backend != "direct":
        state = request.getfixturevalue("episode").state
        if state is None or state.submission is None:
            raise HarnessError("the episode left no submission")
        if state.submission_error:
            score(Score.unscorable(f"the submission could not be read: {state.submission_error}"))
            return
        score(swefficiency_score(sample, state.submission, source="the checkout's git diff"))
    else:
        reply = request.getfixturevalue("response")
        score(swefficiency_score(sample, None, source="the reply", reply=reply.text if reply is not None else ""))


@register_scorer("swefficiency", needs_sample=True)
def record_swefficiency(record: dict[str, Any], sample: Sample) -> Score:
    """swefficiency: the stored verdict (measurements cannot be redone from a record)."""
    return stored_score(record)
