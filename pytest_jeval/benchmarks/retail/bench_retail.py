"""retail: a tau-bench-style customer-service domain written by the team (multi-turn, tool-calling).

The agent serves a simulated customer of an online store: it authenticates the
user and then looks up, cancels, modifies, returns or exchanges orders with the
domain's tools, under the policy in its system prompt. Data ships with the
package: ``data/db.json`` (20 users, 40 orders, 15 products) and
``data/tasks.jsonl`` (the tasks). Each episode gets a private copy of the
database. The reward (tau-bench's rule) is 1.0 when the database after the
episode equals the gold actions replayed on a fresh copy and every required
output string was said, else 0.0. The customer is the ``[user]`` model when the
suite has one, else the task's scripted turns. See docs/retail.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, Sample, Score, ScoreSink
from pytest_jeval.agents import AgentSpec, Episode
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks.retail import POLICY, TOOLS, fresh_db, make_user, retail_score, to_sample
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import register_scorer

MAX_TURNS = 30


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The gold solution: every gold action through the tools, then an answer saying every required output."""
    steps: list[OracleStep] = [ToolStep(a["name"], dict(a["arguments"])) for a in sample.target["actions"]]
    return [*steps, SayStep(" ".join(["Done.", *sample.target["outputs"]]))]


def prompt(sample: Sample) -> Messages:
    """The policy as the system prompt, then the customer's opening message."""
    return [{"role": "system", "content": POLICY}, {"role": "user", "content": sample.metadata["user_turns"][0]}]


def environment(sample: Sample, workspace: Path) -> Any:
    """The episode's own copy of the store database."""
    return fresh_db()


BENCHMARK = Benchmark(
    name="retail",
    category="agentic",
    description="tau-bench-style retail customer service: tools over a mock store database, simulated user",
    bundled_files=("data/tasks.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="retail",
    scoring="tau-bench reward: final database equals the gold replay, and the required outputs",
    sample_count=15,
    backends=("agent",),
    agent=AgentSpec(tools=TOOLS, environment=environment, user=make_user, max_turns=MAX_TURNS, oracle=gold_steps),
)


def test_retail(sample: Sample, episode: Episode, score: ScoreSink) -> None:
    """Reward 1.0: the final database matches the gold actions and every required output was said."""
    score(retail_score(sample, episode))


@register_scorer("retail", needs_sample=True)
def record_retail(record: dict[str, Any], sample: Sample) -> Score:
    """retail: the tau-bench reward again, the final database rebuilt from the record's inline trajectory."""
    from pytest_jeval.benchmarks.retail.rescore import rescore_retail

    return rescore_retail(record, sample)
