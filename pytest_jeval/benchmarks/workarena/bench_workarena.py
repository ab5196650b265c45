"""workarena: WorkArena-style enterprise tasks with a real browser on a local ServiceNow-style service desk.

The tasks (``data/tasks.jsonl``, written by the team after WorkArena's task families) fill forms, order
from the service catalog, filter and sort lists, look up knowledge articles (L1) and chain them into
workflows (L2: assign a set of records, onboard a user). Each episode gets a fresh service desk
(:mod:`.apps.desk`) and a browser confined to it. A task is validated by querying the application's state
after the episode (:mod:`.validate`), as WorkArena's ``validate()`` queries the ServiceNow instance; it
passes when every check does. An episode stopped by a limit is scored like any other (WorkArena
validates the state, not a stop action). See docs/web.md.

Row schema: ``id``, ``level`` (L1/L2), ``category``, ``goal``, ``start_url`` (``__DESK__`` is the desk's
address), ``validate`` (checks), ``oracle`` (gold browser steps).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_jeval import Benchmark, LoadContext, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode, HarnessError
from pytest_jeval.agents.spec import OracleStep
from pytest_jeval.agents.tools.browser import BrowserConfig
from pytest_jeval.benchmarks._web.env import WebEnv, close_env, open_env
from pytest_jeval.benchmarks._web.tasks import SYSTEM_PROMPT, TOOLS, check_steps, gold_steps, require_browser
from pytest_jeval.benchmarks.workarena.apps import desk
from pytest_jeval.benchmarks.workarena.validate import check_spec, validate
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.dataset import DatasetLoadError

MAX_TURNS = 40


class Options(BaseModel):
    """``[benchmarks.options]`` of workarena."""

    model_config = ConfigDict(extra="forbid")

    action_timeout: float = Field(10.0, gt=0)
    """Seconds a browser action waits for its element."""
    navigation_timeout: float = Field(15.0, gt=0)
    """Seconds a browser action waits for the page to load."""


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One task; the browser is checked here, before any sample runs."""
    require_browser(ctx.benchmark)
    options = ctx.options if isinstance(ctx.options, Options) else Options()
    where = f"workarena task {row.get('id', index)}"
    try:
        for key in ("id", "goal", "start_url", "validate"):
            if key not in row:
                raise ValueError(f"{where} lacks {key}")
        for spec in row["validate"]:
            check_spec(spec, where)
        if row.get("oracle") is not None:
            check_steps(row["oracle"], where)
    except ValueError as exc:
        raise DatasetLoadError(str(exc)) from None
    return Sample(id=str(row["id"]), input=str(row["goal"]), target=row["validate"],
                  subject=f"{row.get('level', 'L1')}/{row.get('category', '')}",
                  metadata={"start_url": row["start_url"], "validate": row["validate"], "oracle": row.get("oracle"),
                            "level": row.get("level", "L1"),
                            "timeouts": [options.action_timeout, options.navigation_timeout]})


def prompt(sample: Sample) -> Messages:
    """The system prompt, then the goal and where the browser is."""
    start = str(sample.metadata["start_url"]).replace("__DESK__", "the service desk ")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{sample.input}\n\nThe browser is open on {start.strip()}."}]


def environment(sample: Sample, workspace: Path) -> WebEnv:
    """A fresh service desk and a browser confined to it."""
    return open_env(apps={"desk": desk.make_app}, sites={}, site_apps={"DESK": ("desk", "")},
                    start_url=str(sample.metadata["start_url"]),
                    config=BrowserConfig(allowed_origins=(), action_timeout=sample.metadata["timeouts"][0],
                                         navigation_timeout=sample.metadata["timeouts"][1]))


def oracle(sample: Sample, state: Any) -> list[OracleStep]:
    """The task's gold browser steps, rendered to the episode's desk."""
    if not isinstance(state, WebEnv) or sample.metadata.get("oracle") is None:
        raise HarnessError(f"{sample.id}: no gold steps or no web environment")
    return gold_steps(sample.metadata["oracle"], state)


def score_episode(sample: Sample, episode: Episode) -> Score:
    """Every check of the task against the desk's state and the final page."""
    env = episode.state
    if not isinstance(env, WebEnv) or env.browser is None:
        raise HarnessError("the episode has no web environment")
    final_url = env.browser.current_url()
    state = env.apps["desk"].state
    passed, results = validate(sample.metadata["validate"], state, final_url, episode.final_text)
    meta: dict[str, Any] = {"checks": results, "final_url": final_url, "level": sample.metadata["level"],
                            "stop_reason": episode.stop_reason, "blocked_requests": len(env.browser.blocked)}
    failed = [f"{r['type']}: {r['why']}" if r.get("why") else str(r["type"]) for r in results if not r["passed"]]
    if failed:
        meta["reasons"] = failed
    return Score(correct=passed, value=1.0 if passed else 0.0, extracted=f"{sum(r['passed'] for r in results)}/"
                 f"{len(results)} checks", expected=f"{len(results)} checks", metadata=meta)


BENCHMARK = Benchmark(
    name="workarena",
    category="agentic",
    description="WorkArena-style service-desk tasks (forms, catalog, lists, knowledge, L2 workflows), real browser",
    bundled_files=("data/tasks.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="workarena",
    scoring="the application's state after the episode, queried as WorkArena's validate(); all checks pass",
    sample_count=9,
    backends=("agent",),
    options=Options,
    agent=AgentSpec(tools=TOOLS, environment=environment, max_turns=MAX_TURNS, oracle=oracle, cleanup=close_env),
)


def test_workarena(sample: Sample, episode: Episode, score: Any) -> None:
    """Correct when every check of the task passes on the desk's state after the episode."""
    score(score_episode(sample, episode))


@register_scorer("workarena", needs_sample=True)
def record_workarena(record: dict[str, Any], sample: Sample) -> Score:
    """workarena: the stored verdict (the application's state cannot be rebuilt from a record)."""
    return stored_score(record)
