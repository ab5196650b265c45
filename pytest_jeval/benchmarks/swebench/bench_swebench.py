"""swebench: SWE-bench instances resolved in a sandboxed checkout and graded as upstream grades, without Docker.

Instances come from the Hub (``subset``: ``mini``, the default - the reference's
``MariusHobbhahn/swe-bench-verified-mini`` - ``verified``, ``lite``, ``full`` or any Hub id) or from local
``data_files`` in SWE-bench's schema. Repositories come from ``repos_dir`` (``[benchmarks.options]``);
each (repo, version) gets a Python environment built once by its SWE-bench install recipe, each instance a
prepared checkout (upstream's instance image), each episode and each grading a fresh copy of it.

* ``backend = "direct"``: the model answers with a unified diff;
* ``backend = "agent"`` (the default): ``orchestrator`` works in the checkout with ``bash``, ``python``,
  ``str_replace``, ``file_read``, ``file_write`` and ``list_files``; ``oracle`` applies the gold patch;
  ``nop`` submits nothing; external agents (``command``, ``hermes``, ``openclaw``) work in the checkout too.
  The submission is the checkout's ``git diff``.

The patch is applied to a fresh checkout, ``test_patch`` after it, the tests run with the recipe's test
command and the log is parsed with the repository's parser; the instance is resolved (``correct``) when
FULL. Each record says how its environment differs from upstream's container (``deviations``). See
docs/swebench.md.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_jeval import Benchmark, HubDataset, LoadContext, Sample, Score, ScoreSink
from pytest_jeval.agents import AgentSpec, HarnessError
from pytest_jeval.benchmarks._swe.episode import agent_prompt, direct_prompt, environment, finish, gold_steps
from pytest_jeval.benchmarks._swe.instances import parse_instance, read_instance_rows
from pytest_jeval.benchmarks._swe.options import SweOptions, metadata_of
from pytest_jeval.benchmarks._swe.prepare import check_instance
from pytest_jeval.benchmarks._swe.tools import agent_tools
from pytest_jeval.benchmarks.swebench.scoring import rescore_record, summarize, swebench_score
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.suite.config import BenchmarkEntry
from pytest_jeval.suite.dataset import DatasetLoadError

MAX_TURNS = 100
"""SWE-agent's default cap on model turns (the suite's ``max_turns`` may lower it)."""


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One instance, its mirror, base commit and install recipe checked (a usage error when missing)."""
    inst = parse_instance(row)
    try:
        meta = check_instance(inst, metadata_of(ctx.options))
    except ValueError as exc:  # a missing mirror, commit or recipe: a usage error naming what to do
        raise DatasetLoadError(f"swebench: {exc}") from None
    return Sample(id=inst.instance_id, input=inst.problem_statement, subject=inst.repo, metadata=meta,
                  target={"FAIL_TO_PASS": list(inst.fail_to_pass), "PASS_TO_PASS": list(inst.pass_to_pass)})


def read_rows(files: Any, ctx: LoadContext) -> Any:
    """``data_files``, else the Hub dataset ``subset`` names (default ``mini``)."""
    return read_instance_rows(BENCHMARK, files, ctx.subset, "mini")


BENCHMARK = Benchmark(
    name="swebench",
    category="coding",
    description="SWE-bench: resolve a GitHub issue in a sandboxed checkout; graded by the repo's tests as upstream",
    dataset=HubDataset(path="MariusHobbhahn/swe-bench-verified-mini", split="test", id_column="instance_id"),
    read_rows=read_rows,
    to_sample=to_sample,
    prompt=direct_prompt,
    scorer="swebench",
    scoring="upstream's FAIL_TO_PASS/PASS_TO_PASS report on the repo's tests: resolved when FULL",
    sample_count=50,
    backends=("agent", "direct"),
    options=SweOptions,
    summarize_extra=summarize,
    agent=AgentSpec(tools=agent_tools(), environment=environment, prompt=agent_prompt, max_turns=MAX_TURNS,
                    oracle=gold_steps, finish=finish, workspace_environment=True),
)


def runs_as_agent(entry: BenchmarkEntry) -> bool:
    """True unless the entry runs ``backend = "direct"`` (as the plan decides it)."""
    backend = entry.backend_kind or ("agent" if entry.agent is not None else BENCHMARK.backends[0])
    return backend != "direct"


def test_swebench(sample: Sample, jeval_model: str, benchmark_entry: BenchmarkEntry,
                  request: pytest.FixtureRequest, score: ScoreSink) -> None:
    """Resolved when the patch makes every FAIL_TO_PASS test pass and keeps every PASS_TO_PASS test passing."""
    if runs_as_agent(benchmark_entry):
        state = request.getfixturevalue("episode").state
        if state is None or state.submission is None:
            raise HarnessError("the episode left no submission")
        if state.submission_error:
            score(Score.unscorable(f"the submission could not be read: {state.submission_error}"))
            return
        score(swebench_score(sample, state.submission, source="the checkout's git diff"))
    else:
        reply = request.getfixturevalue("response")
        score(swebench_score(sample, None, source="the reply", reply=reply.text if reply is not None else ""))


@register_scorer("swebench", needs_sample=True)
def record_swebench(record: dict[str, Any], sample: Sample) -> Score:
    """swebench: the report and resolution again from the record's stored test statuses."""
    return rescore_record(record, sample)
