"""One episode's score (the reward with its components, the NL column, the declared deviations) and the
benchmark's summary (per domain: rewards, what a do-nothing agent passes, pass^k and pass@k, the data)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_jeval.benchmarks.taubench.reward import (
    Components,
    do_nothing_passes,
    episode_components,
    judge_messages,
    nl_needed,
    parse_judgement,
)
from pytest_jeval.benchmarks.taubench.user import guidelines
from pytest_jeval.calls.client import ModelClient
from pytest_jeval.core.episode import Episode
from pytest_jeval.core.sample import Sample
from pytest_jeval.core.score import Score

DEVIATIONS = (
    "prompts: the agent instructions and the NL-assertion judge prompt are pytest-jeval's wording of upstream's",
    "limits: upstream stops at 200 messages; here the episode's max_turns (at most 100 model turns) and "
    "[run] max_tool_calls stop it, which scores 0 as upstream's max_steps does",
    "tool arguments are checked against each tool's JSON schema before the call (upstream calls the function "
    "with the raw arguments): a mistyped argument is an error result either way",
    "a user reply holding a stop token ends the conversation without being added to it",
)
"""What differs from upstream in every run, declared in every record (docs/taubench.md explains each)."""
USER_GUIDELINES_OWN = ("user simulator guidelines: pytest-jeval's wording of upstream's "
                       "(the source has no guidelines file)")
NL_SKIPPED = "NL assertions not judged (nl_assertions = \"skip\"): the reward is the deterministic part alone"


def judge_nl(judge: ModelClient, messages: Sequence[dict[str, Any]], assertions: Sequence[str]) -> dict[str, Any]:
    """Ask the judge about the NL assertions; the component (reward 1/0 with the checks), or an
    ``unscored_reason`` when the judge failed or gave no verdict."""
    try:
        reply = judge.chat(judge_messages(messages, assertions))
    except Exception as exc:  # a judge failure is never a wrong answer
        return {"reward": None, "unscored_reason": f"the judge call failed: {exc}", "judge_model": judge.name}
    results = parse_judgement(reply.text)
    if results is None:
        return {"reward": None, "unscored_reason": "the judge's reply holds no results JSON",
                "judge_model": judge.name, "judge_output": reply.text}
    met = all(r["met"] for r in results)
    return {"reward": 1.0 if met else 0.0, "checks": results, "judge_model": judge.name}


def deviations(sample: Sample) -> list[str]:
    """The deviations that apply to this sample's run."""
    out = list(DEVIATIONS)
    if guidelines(sample.metadata["folder"])[1] == "pytest-jeval":
        out.append(USER_GUIDELINES_OWN)
    if sample.metadata.get("nl_assertions") == "skip" and nl_needed(sample):
        out.append(NL_SKIPPED)
    return out


def component_reasons(parts: Components, nl: dict[str, Any] | None) -> list[str]:
    """The components of the reward that fell short, each with its reason (an early end first)."""
    out = [f"ended early: {parts.termination}"] if parts.premature else []
    named = {"DB": parts.db, "ACTION": parts.action, "COMMUNICATE": parts.communicate,
             "ENV_ASSERTION": parts.env_assertion, "NL_ASSERTION": nl or {}}
    for basis, part in named.items():
        value = part.get("reward")
        if basis in parts.basis and isinstance(value, (int, float)) and value < 1.0:
            out.append(f"{basis.lower()} {value:g}: {part.get('reason') or 'no reason given'}")
    return out


def build_score(sample: Sample, parts: Components | None, nl: dict[str, Any] | None) -> Score:
    """The item's score from its deterministic components (None: no evaluation criteria) and NL component."""
    meta = sample.metadata
    fields: dict[str, Any] = {"taubench_data": meta["provenance"], "deviations": deviations(sample),
                              "user_guidelines": guidelines(meta["folder"])[1]}
    metadata: dict[str, Any] = {"domain": meta["domain"], "task_id": meta["task_id"]}
    if parts is None:
        fields.update(reward=1.0, deterministic_reward=1.0, nl_assertion_reward=None,
                      reward_info={"note": "no evaluation criteria"})
        metadata["do_nothing_passes"] = True
        return Score(correct=True, value=1.0, metadata=metadata, fields=fields)
    deterministic = parts.deterministic
    info = parts.as_dict()
    metadata["do_nothing_passes"] = do_nothing_passes(sample)
    metadata["do_nothing_needs_judge"] = nl_needed(sample)
    unscored: str | None = None
    nl_reward: float | None = None
    if parts.env_assertion.get("reward") is None and "ENV_ASSERTION" in parts.basis:
        unscored = str(parts.env_assertion["reason"])
    if nl_needed(sample):
        info["nl_assertion"] = nl or {"reward": None}
        nl_reward = None if nl is None else nl.get("reward")
        if nl is None and sample.metadata.get("nl_assertions") != "skip":
            unscored = unscored or "the NL assertions need the [judge] model (or options.nl_assertions = \"skip\")"
        elif nl is not None and nl_reward is None:
            unscored = unscored or str(nl.get("unscored_reason"))
    elif "NL_ASSERTION" in parts.basis:
        nl_reward = 1.0
        info["nl_assertion"] = {"reward": 1.0, "reason": "no NL assertions to judge"}
    reward: float | None = deterministic
    if nl_needed(sample) and sample.metadata.get("nl_assertions") != "skip":
        reward = None if nl_reward is None else deterministic * nl_reward
    if parts.premature:
        reward = 0.0  # upstream: an early end scores 0 before any component is computed
        unscored = None
    fields.update(reward=reward, deterministic_reward=deterministic, nl_assertion_reward=nl_reward,
                  reward_info=info)
    why = component_reasons(parts, nl)
    if why and reward != 1.0:
        metadata["reasons"] = why
    if unscored is not None:
        metadata["unscored_reason"] = unscored
        return Score(correct=None, value=None, expected=sample.target, metadata=metadata, fields=fields)
    return Score(correct=reward == 1.0, value=reward, expected=sample.target, metadata=metadata, fields=fields)


def score_episode(sample: Sample, episode: Episode, judge: ModelClient | None) -> Score:
    """The reward of a finished episode (see :mod:`pytest_jeval.benchmarks.taubench.reward`)."""
    if sample.target is None:
        return build_score(sample, None, None)
    parts = episode_components(sample, episode)
    nl = None
    if nl_needed(sample) and not parts.premature and sample.metadata.get("nl_assertions") != "skip" \
            and judge is not None:
        nl = judge_nl(judge, episode.messages, sample.target["nl_assertions"])
    return build_score(sample, parts, nl)


def _repeat_group(record: dict[str, Any]) -> str:
    agent = record.get("agent") if isinstance(record.get("agent"), dict) else {}
    return str((agent or {}).get("repeat_of") or record.get("record_id"))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _domain_summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    from pytest_jeval.metrics import pass_at_k, pass_hat_k

    scored = [r for r in records if r.get("error") is None]
    rewards = [float(r["reward"]) for r in scored if isinstance(r.get("reward"), (int, float))]
    determ = [float(r["deterministic_reward"]) for r in scored
              if isinstance(r.get("deterministic_reward"), (int, float))]
    nls = [float(r["nl_assertion_reward"]) for r in scored if isinstance(r.get("nl_assertion_reward"), (int, float))]
    tasks: dict[str, dict[str, Any]] = {}
    groups: dict[str, list[bool]] = {}
    for r in records:
        key = _repeat_group(r)
        groups.setdefault(key, []).append(r.get("is_correct") is True)
        meta = r.get("scoring_metadata") or {}
        if "do_nothing_passes" in meta:
            tasks[key] = meta
    out: dict[str, Any] = {
        "tasks": len(groups), "episodes": len(records),
        "reward": _mean(rewards), "deterministic_reward": _mean(determ), "nl_assertion_reward": _mean(nls),
        "unscored": sum(1 for r in scored if r.get("reward") is None),
        "do_nothing_passes": sum(1 for m in tasks.values() if m.get("do_nothing_passes")),
        "do_nothing_passes_unless_judged": sum(1 for m in tasks.values() if m.get("do_nothing_passes")
                                               and m.get("do_nothing_needs_judge")),
    }
    trials = [(len(v), sum(v)) for v in groups.values()]
    n = min(t[0] for t in trials) if trials else 0
    if n > 1:
        out["pass_hat_k"] = {str(k): pass_hat_k(trials, k) for k in range(1, n + 1)}
        out["pass_at_k"] = {str(k): pass_at_k(trials, k) for k in range(1, n + 1)}
    return out


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Per domain: mean reward, its deterministic part and the NL column, how many tasks a do-nothing agent
    passes, pass^k and pass@k over repeats; the data sources with their hashes; the deviations."""
    by_domain: dict[str, list[dict[str, Any]]] = {}
    sources: dict[str, Any] = {}
    declared: list[str] = []
    for r in records:
        data = r.get("taubench_data") if isinstance(r.get("taubench_data"), dict) else None
        domain = str((data or {}).get("domain") or r.get("subject") or "?")
        by_domain.setdefault(domain, []).append(r)
        if data is not None:
            sources[domain] = data
        for d in r.get("deviations") or []:
            if d not in declared:
                declared.append(d)
    return {"taubench": {"domains": {d: _domain_summary(rs) for d, rs in sorted(by_domain.items())},
                         "data": sources, "deviations": declared}}
