"""webchorearena: WebChoreArena's tedious web chores, with a real browser, on local sites or your WebArena sites.

Tasks are WebChoreArena configs (:mod:`.tasks`): the bundled ones, written by the team for the local
shop, its admin back office and the forum (:mod:`.apps`), count across many pages, aggregate, edit in
bulk and carry results from one site to another; real WebChoreArena configs run against the WebArena
sites a user brings (``[benchmarks.options] sites``). Every episode gets fresh local sites and its own
browser context, confined to the task's sites. The agent uses the ``browser_*`` tools and ends with its
answer. Scoring is WebChoreArena's evaluators (:mod:`.evaluators`): ``string_match`` on the answer,
``url_match`` on the final page, ``program_html`` reading pages after the episode; the task scores 1
only when every evaluator does, and an episode that did not end with an answer (a limit stopped it)
scores 0, as upstream's agent that never stopped. See docs/web.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_jeval import Benchmark, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode, HarnessError
from pytest_jeval.agents.spec import OracleStep
from pytest_jeval.agents.tools.browser import BrowserConfig
from pytest_jeval.benchmarks._web.env import WebEnv, close_env, open_env
from pytest_jeval.benchmarks._web.tasks import SYSTEM_PROMPT, TOOLS, gold_steps
from pytest_jeval.benchmarks.webchorearena import evaluators as ev
from pytest_jeval.benchmarks.webchorearena.apps import forum, shop
from pytest_jeval.benchmarks.webchorearena.tasks import LOCAL_SITES, Options, read_rows, to_sample
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import answer_of, register_scorer

APPS = {"shop": shop.make_app, "forum": forum.make_app}
MAX_TURNS = 40
FUZZY_PROMPT = (
    "Help a teacher to grade the answer of a student given a question. Keep in mind that the student has performed "
    "the action to get the answer. They are allowed to use different phrasing or wording to answer the question. "
    "The goal is to evaluate whether the key points in the reference answer are included in the student's answer. "
    "We allow answers with additional information that doesn't contradict the reference answer and review them as "
    "fully (not partially) correct.\nquestion: {question}\nreference answer: {reference}\nall the string 'N/A' that "
    "you see is a special sequence that means 'not achievable'\nstudent answer: {pred}\nConclude the judgement by "
    "correct/incorrect/partially correct and explain why.")


def prompt(sample: Sample) -> Messages:
    """The system prompt, then the intent and where to start."""
    start = str(sample.metadata["config"]["start_url"]).split(" |AND| ")[0]
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{sample.input}\n\nThe browser is open at {start}."}]


def environment(sample: Sample, workspace: Path) -> WebEnv:
    """Fresh local sites for the task (unless the user gave them) and a browser confined to its sites."""
    config = sample.metadata["config"]
    user_sites: dict[str, str] = sample.metadata["user_sites"]
    needed = [s for s in sample.metadata["sites"] if s not in user_sites]
    local = {s: LOCAL_SITES[s] for s in needed if s in LOCAL_SITES}
    apps = {name: APPS[name] for name, _ in local.values()}
    browser = BrowserConfig(allowed_origins=(), action_timeout=sample.metadata["action_timeout"],
                            navigation_timeout=sample.metadata["navigation_timeout"],
                            storage_state=sample.metadata.get("storage_state"))
    return open_env(apps=apps, sites={s.upper(): u for s, u in user_sites.items()},
                    site_apps={s.upper(): v for s, v in local.items()}, start_url=str(config["start_url"]),
                    config=browser)


def oracle(sample: Sample, state: Any) -> list[OracleStep]:
    """The task's gold browser steps (``jeval_oracle``), rendered to the episode's addresses."""
    raw = sample.metadata["config"].get("jeval_oracle")
    if raw is None:
        raise HarnessError(f"{sample.id} has no gold steps (jeval_oracle): the oracle runs the bundled tasks only")
    if not isinstance(state, WebEnv):
        raise HarnessError("the episode has no web environment")
    return gold_steps(raw, state)


class _Page(ev.PageReader):
    def __init__(self, env: WebEnv) -> None:
        assert env.browser is not None
        self.browser = env.browser

    def url(self) -> str:
        return self.browser.current_url()

    def goto(self, url: str) -> None:
        self.browser.goto(url)

    def evaluate(self, expression: str) -> Any:
        return self.browser.evaluate(expression)

    def content(self) -> str:
        return self.browser.content()


def _judges(judge: Any) -> tuple[ev.Judge | None, ev.Judge | None]:
    if judge is None:
        return None, None

    def fuzzy(pred: str, reference: str, question: str) -> float:
        text = judge.chat(FUZZY_PROMPT.format(question=question, reference=reference, pred=pred)).text.lower()
        return 0.0 if "partially correct" in text or "incorrect" in text else float("correct" in text)

    def ua(pred: str, reference: str, question: str) -> float:
        text = judge.chat(
            f"task: {question}\nactual unachievable reason: {reference}\nreported unachievable reason: {pred}\n"
            "The task described above is inherently unachievable due to the reason specified under 'actual "
            "unachievable reason'. An individual previously attempted this task and was unable to complete it. "
            "They provided a reason for their failure, which is listed under 'reported unachievable reason'. Your "
            "role is to review both the actual and reported reasons. Determine if the reported reason aligns with "
            "the actual reason, even if implicitly. If the stated reason is in line with the actual reason, respond "
            "with 'same'. Otherwise, respond with 'different'.").text.lower()
        return 0.0 if "different" in text else float("same" in text)

    return fuzzy, ua


def score_episode(sample: Sample, episode: Episode, judge: Any = None) -> Score:
    """WebChoreArena's evaluation of the episode's answer and final pages (see the module docstring)."""
    env = episode.state
    if not isinstance(env, WebEnv) or env.browser is None:
        raise HarnessError("the episode has no web environment")
    config = env.render(sample.metadata["config"])
    answer = episode.final_text
    final_url = env.browser.current_url()
    meta: dict[str, Any] = {"task_id": config["task_id"], "eval_types": list(config["eval"]["eval_types"]),
                            "final_url": final_url, "stop_reason": episode.stop_reason,
                            "blocked_requests": len(env.browser.blocked), "deviations": list(ev.DEVIATIONS)}
    if episode.stop_reason != "final":
        meta["note"] = meta["reason"] = "the episode did not end with an answer (upstream: no stop action scores 0)"
        return Score(correct=False, value=0.0, extracted=answer[:200], expected=_expected(config), metadata=meta)
    fuzzy, ua = _judges(judge)
    try:
        value, details = ev.evaluate(config, answer, _Page(env), final_url, fuzzy, ua)
    except ev.NeedsJudge as exc:
        return Score(correct=None, extracted=answer[:200], expected=_expected(config),
                     metadata={**meta, "unscored_reason": str(exc)})
    meta["eval"] = details
    short = [f"{kind} {part.get('score'):g}" for kind, part in details.items()
             if isinstance(part, dict) and isinstance(part.get("score"), (int, float)) and part["score"] < 1.0]
    if short:
        meta["reason"] = "below 1: " + ", ".join(short)
    return Score(correct=value == 1.0, value=value, extracted=answer[:200], expected=_expected(config), metadata=meta)


def _expected(config: dict[str, Any]) -> str:
    parts = []
    ev_ = config["eval"]
    if ev_.get("reference_answers"):
        parts.append(f"answer {ev_['reference_answers']}")
    if "url_match" in ev_["eval_types"]:
        parts.append(f"url {ev_.get('reference_url')}")
    if "program_html" in ev_["eval_types"]:
        parts.append(f"{len(ev_.get('program_html') or [])} page check(s)")
    return "; ".join(parts)[:300]


BENCHMARK = Benchmark(
    name="webchorearena",
    category="agentic",
    description="WebChoreArena web chores with a real browser: local shop, admin and forum, or your WebArena sites",
    bundled_files=("data/local.raw.json",),
    read_rows=read_rows,
    to_sample=to_sample,
    prompt=prompt,
    scorer="webchorearena",
    scoring="WebChoreArena's string_match / url_match / program_html; correct when every evaluator gives 1",
    sample_count=12,
    backends=("agent",),
    options=Options,
    agent=AgentSpec(tools=TOOLS, environment=environment, max_turns=MAX_TURNS, oracle=oracle, cleanup=close_env),
)


def test_webchorearena(sample: Sample, episode: Episode, score: Any, request: pytest.FixtureRequest) -> None:
    """Correct when every evaluator of the task gives 1 on the episode's answer and final pages."""
    types = sample.metadata["config"]["eval"]["eval_types"]
    needs_judge = "string_match" in types and "fuzzy_match" in (sample.metadata["config"]["eval"].get(
        "reference_answers") or {})
    score(score_episode(sample, episode, request.getfixturevalue("judge") if needs_judge else None))


@register_scorer("webchorearena", needs_sample=True)
def record_webchorearena(record: dict[str, Any], sample: Sample) -> Score:
    """webchorearena: string_match and url_match again from the record's answer and final URL; program_html's
    stored scores (the pages cannot be read again from a record)."""
    meta = dict(record.get("scoring_metadata") or {})
    config = sample.metadata["config"]
    if meta.get("stop_reason", "final") != "final":
        return Score(correct=False, value=0.0, metadata=meta)
    value = 1.0
    for kind in config["eval"]["eval_types"]:
        if kind == "string_match":
            if "fuzzy_match" in (config["eval"].get("reference_answers") or {}):
                return Score(correct=None, metadata={**meta, "unscored_reason": "fuzzy_match needs the judge"})
            value *= ev.string_match(config, answer_of(record)).score
        elif kind == "url_match":
            final = str(meta.get("final_url") or "")
            value *= ev.url_match(_derendered(config, final, meta), final).score
        else:
            value *= float(((meta.get("eval") or {}).get(kind) or {}).get("score") or 0.0)
    return Score(correct=value == 1.0, value=value, extracted=answer_of(record)[:200], metadata=meta)


def _derendered(config: dict[str, Any], final_url: str, meta: dict[str, Any]) -> dict[str, Any]:
    """The config with its placeholders rendered to the sites of the recorded episode (from the stored check)."""
    stored = ((meta.get("eval") or {}).get("url_match") or {}).get("reference")
    if isinstance(stored, dict):
        return {**config, "eval": {**config["eval"], **stored, "or": stored.get("or") or []}}
    return config
