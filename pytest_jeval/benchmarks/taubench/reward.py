"""τ²-bench's reward, as upstream's evaluator computes it (``evaluator/evaluator.py``, evaluation type ``all``).

* A simulation that ends other than by the agent or the user stopping scores 0 (here: an episode stopped by
  a limit, or with 10 or more tool errors, where upstream stops with ``too_many_errors``).
* A task without ``evaluation_criteria`` scores 1.
* Otherwise the reward is the product of the components named in the task's ``reward_basis`` (default
  ``[DB, COMMUNICATE]``):

  - DB: the gold actions replayed on a fresh database (a failing gold action is skipped, as upstream logs
    and skips it) give the gold hash; the episode's final database must hash the same. A task with neither
    ``actions`` nor ``env_assertions`` passes.
  - ENV_ASSERTION: assertions on the final environment (none in retail or airline; a task that has some is
    unscored);
  - ACTION: every gold action matched by a tool call of the episode, on the arguments in ``compare_args``
    (all the call's arguments when it is null, none when it is empty);
  - COMMUNICATE: every ``communicate_info`` string, lower-cased, inside an assistant message with text,
    lower-cased with commas removed;
  - NL_ASSERTION: every ``nl_assertions`` entry judged met by the ``[judge]`` model (1 when the list is
    empty). Kept in its own column, ``nl_assertion_reward``, beside the deterministic part
    (``deterministic_reward``, every other component).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.agents.tool import Tool, ToolContext
from pytest_jeval.benchmarks.taubench.db import TauEnv, deep_update, fresh_db, initial_hash
from pytest_jeval.core.episode import Episode
from pytest_jeval.core.sample import Sample

MAX_ERRORS = 10
"""Upstream stops a simulation at this many tool errors (``too_many_errors``), which scores 0."""
DEFAULT_BASIS = ("DB", "COMMUNICATE")
ENV_BASES = frozenset({"DB", "ENV_ASSERTION"})


def domain_tools(domain: str) -> dict[str, Tool]:
    """The domain's tools by name."""
    if domain == "retail":
        from pytest_jeval.benchmarks.taubench.retail import TOOLS_BY_NAME
    else:
        from pytest_jeval.benchmarks.taubench.airline import TOOLS_BY_NAME
    return TOOLS_BY_NAME


def write_tools(domain: str) -> frozenset[str]:
    """The domain's tools that change the database."""
    if domain == "retail":
        from pytest_jeval.benchmarks.taubench.retail import WRITE_TOOLS
    else:
        from pytest_jeval.benchmarks.taubench.airline import WRITE_TOOLS
    return WRITE_TOOLS


def run_tool(env: TauEnv, sample: Sample, name: str, arguments: Mapping[str, Any]) -> bool:
    """Call one tool on ``env`` directly, as upstream's environment does (no schema check); True when it
    succeeded. Any exception is the call's error (upstream turns it into an error message)."""
    found = domain_tools(env.domain).get(name)
    if found is None or found.fn is None:
        return False
    ctx = ToolContext(sample=sample, workspace=Path("."), state=env)
    try:
        found.fn(**dict(arguments), **{found.context_param or "ctx": ctx})
    except Exception:  # upstream: a failing call changes what it changed before failing, and goes on
        return False
    return True


def initial_env(sample: Sample) -> TauEnv:
    """A fresh environment for the task: the domain database with the task's initial state applied."""
    meta = sample.metadata
    path = Path(meta["folder"]) / "db.json"
    env = TauEnv(domain=meta["domain"], db=fresh_db(path, meta["domain"]), db_path=path)
    initial = meta.get("initial_state") or {}
    data = (initial.get("initialization_data") or {}).get("agent_data")
    if data:
        deep_update(env.db, data)
    for action in initial.get("initialization_actions") or []:
        run_tool(env, sample, action["func_name"], action.get("arguments") or {})
    return env


_GOLD: dict[str, str] = {}


def gold_hash(sample: Sample) -> str:
    """The hash of the database after the task's gold actions (cached per task and data)."""
    meta = sample.metadata
    key = json.dumps([meta["provenance"], meta["domain"], meta["task_id"], sample.target.get("actions"),
                      meta.get("initial_state")], sort_keys=True, default=str)
    if key not in _GOLD:
        env = initial_env(sample)
        for action in sample.target.get("actions") or []:
            run_tool(env, sample, action["name"], action.get("arguments") or {})
        _GOLD[key] = env.hash()
    return _GOLD[key]


def start_hash(sample: Sample) -> str:
    """The hash of the task's database before the episode (what a do-nothing agent leaves)."""
    if not sample.metadata.get("initial_state"):
        return initial_hash(Path(sample.metadata["folder"]) / "db.json", sample.metadata["domain"])
    return initial_env(sample).hash()


def action_matches(action: Mapping[str, Any], name: str, arguments: Mapping[str, Any]) -> bool:
    """Upstream's ``Action.compare_with_tool_call``: same name, and the compared arguments equal (the
    call's own argument names when ``compare_args`` is null)."""
    if action["name"] != name:
        return False
    compare = action.get("compare_args")
    keys = list(arguments) if compare is None else list(compare)
    if not keys:
        return True
    gold = action.get("arguments") or {}
    return {k: v for k, v in arguments.items() if k in keys} == {k: v for k, v in gold.items() if k in keys}


def assistant_texts(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The text of every assistant message that has some (upstream's ``has_text_content``)."""
    out = []
    for m in messages:
        content = m.get("content")
        if m.get("role") == "assistant" and isinstance(content, str) and content.strip():
            out.append(content)
    return out


def communicate_checks(infos: Sequence[str], texts: Sequence[str]) -> list[dict[str, Any]]:
    """Each required string, and whether an assistant message holds it (upstream's substring rule)."""
    said = [t.lower().replace(",", "") for t in texts]
    return [{"info": info, "met": any(info.lower() in t for t in said)} for info in infos]


@dataclasses.dataclass
class Components:
    """The deterministic components of one episode's reward, each with its reason."""

    basis: list[str]
    termination: str
    """``agent_or_user_stop``, or why the simulation ended early."""
    db: dict[str, Any]
    action: dict[str, Any]
    communicate: dict[str, Any]
    env_assertion: dict[str, Any]

    @property
    def premature(self) -> bool:
        """True when the episode ended other than by the agent or the user stopping."""
        return self.termination != "agent_or_user_stop"

    @property
    def deterministic(self) -> float:
        """The product of the components in the basis other than NL_ASSERTION (0 for an early end)."""
        if self.premature:
            return 0.0
        reward = 1.0
        if ENV_BASES & set(self.basis):
            if "DB" in self.basis:
                reward *= self.db["reward"]
            if "ENV_ASSERTION" in self.basis:
                reward *= self.env_assertion["reward"]
        if "ACTION" in self.basis:
            reward *= self.action["reward"]
        if "COMMUNICATE" in self.basis:
            reward *= self.communicate["reward"]
        return reward

    def as_dict(self) -> dict[str, Any]:
        """Every component with its reason, for the record."""
        return {"reward_basis": self.basis, "termination": self.termination, "db": self.db, "action": self.action,
                "communicate": self.communicate, "env_assertion": self.env_assertion}


def termination(episode: Episode) -> str:
    """``agent_or_user_stop``, or the reason upstream would have ended the simulation early."""
    errors = sum(1 for c in episode.tool_calls if c.error is not None)
    if errors >= MAX_ERRORS:
        return f"too_many_errors ({errors} tool errors; upstream stops at {MAX_ERRORS})"
    if episode.stop_reason != "final":
        return f"{episode.stop_reason}: {episode.limit_detail or episode.error or 'stopped early'}"
    return "agent_or_user_stop"


def components(sample: Sample, final_db_hash: str | None, messages: Sequence[Mapping[str, Any]],
               calls: Sequence[tuple[str, Mapping[str, Any] | None]], stop: str) -> Components:
    """The deterministic components for a finished episode: its final database's hash, its messages, its tool
    calls (name, parsed arguments or None), and how it ended (:func:`termination`)."""
    criteria = sample.target
    basis = list(criteria.get("reward_basis") or DEFAULT_BASIS)
    actions = criteria.get("actions")
    if actions is None and criteria.get("env_assertions") is None:
        db = {"reward": 1.0, "match": True, "reason": "no expected actions or env assertions"}
    else:
        gold = gold_hash(sample)
        match = final_db_hash == gold
        db = {"reward": 1.0 if match else 0.0, "match": match, "hash": final_db_hash, "gold_hash": gold,
              "reason": "the final database equals the gold replay" if match
              else "the final database differs from the gold replay"}
    checks = [{"action_id": a.get("action_id"), "name": a["name"],
               "met": any(args is not None and action_matches(a, name, args) for name, args in calls)}
              for a in actions or []]
    action = {"reward": 1.0 if all(c["met"] for c in checks) else 0.0, "checks": checks}
    infos = list(criteria.get("communicate_info") or [])
    said = communicate_checks(infos, assistant_texts(messages))
    communicate = {"reward": 1.0 if all(c["met"] for c in said) else 0.0, "checks": said}
    assertions = criteria.get("env_assertions") or []
    env_assertion: dict[str, Any] = {"reward": 1.0, "checks": []}
    if assertions:
        env_assertion = {"reward": None, "reason": "env assertions are not implemented for this domain",
                         "checks": assertions}
    return Components(basis=basis, termination=stop, db=db, action=action, communicate=communicate,
                      env_assertion=env_assertion)


def episode_components(sample: Sample, episode: Episode) -> Components:
    """:func:`components` of a live episode (its environment state is the final database)."""
    state = episode.state
    final = state.hash() if isinstance(state, TauEnv) else None
    calls = [(c.name, c.parsed) for c in episode.tool_calls]
    return components(sample, final, episode.messages, calls, termination(episode))


def nl_needed(sample: Sample) -> bool:
    """True when NL assertions gate this task's reward (NL_ASSERTION in the basis, and assertions to judge)."""
    criteria = sample.target
    return "NL_ASSERTION" in (criteria.get("reward_basis") or DEFAULT_BASIS) and bool(criteria.get("nl_assertions"))


def do_nothing_passes(sample: Sample) -> bool:
    """True when an agent that does nothing (no tool call, no message) gets the deterministic components:
    the gold leaves the database as it was, and no communication or action is required."""
    criteria = sample.target
    basis = set(criteria.get("reward_basis") or DEFAULT_BASIS)
    if "DB" in basis and not (criteria.get("actions") is None and criteria.get("env_assertions") is None):
        if gold_hash(sample) != start_hash(sample):
            return False
    if "COMMUNICATE" in basis and criteria.get("communicate_info"):
        return False
    if "ACTION" in basis and criteria.get("actions"):
        return False
    return not ("ENV_ASSERTION" in basis and criteria.get("env_assertions"))


JUDGE_SYSTEM = """\
You grade a conversation between a customer service agent and a customer against a list of expected \
outcomes. Grade each expected outcome on its own: is it satisfied by what the agent did and said?

Reply with one JSON object and nothing else:
{"results": [{"expectedOutcome": "<the expected outcome, repeated>", "reasoning": "<a short reason>", \
"metExpectation": true or false}]}"""
"""pytest-jeval's wording of upstream's NL-assertion judge prompt (same input, same output format)."""


def judge_messages(messages: Sequence[Mapping[str, Any]], assertions: Sequence[str]) -> list[dict[str, str]]:
    """The judge request: the conversation (upstream's trajectory: every message but the system prompt, as
    ``role: content``) and the expected outcomes."""
    trajectory = "\n".join(f"{m.get('role')}: {m.get('content')}" for m in messages if m.get("role") != "system")
    user = f"conversation:\n{trajectory}\n\nexpectedOutcomes:\n{list(assertions)}"
    return [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": user}]


def parse_judgement(text: str) -> list[dict[str, Any]] | None:
    """The judge's results (``expectedOutcome``, ``met``, ``reasoning``), or None when the reply holds no
    such JSON object."""
    fenced = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.DOTALL)
    candidate = fenced.group(1) if fenced else text[text.find("{"): text.rfind("}") + 1]
    try:
        data = json.loads(candidate)
    except ValueError:
        return None
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        return None
    return [{"expectedOutcome": r.get("expectedOutcome"), "met": r.get("metExpectation") is True,
             "reasoning": r.get("reasoning")} for r in results]
