"""pinchbench: PinchBench's real-world agent tasks (files, scheduling, writing, analysis), graded as upstream grades.

The tasks are read from the user's clone of github.com/pinchbench/skill (``data_dir``; :mod:`.tasks`): the graders
are code, so none is copied here. Each task runs as an agent episode with OpenClaw's core tools over a workspace
made from the task's ``workspace_files`` (:mod:`.episode`); a multi-session task gets every session's prompt in
turn. The task's automated ``grade()`` runs in the sandbox, the ``[judge]`` grades the judged part, and a hybrid
task weighs the two by its ``grading_weights`` (:mod:`.grading`). Tasks that need the live web or image generation
are unscored with the reason (and their episode is not run). See docs/pinchbench.md.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_jeval import Benchmark, LoadContext, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks._research.judgelog import JudgeLog
from pytest_jeval.benchmarks.pinchbench.episode import (
    TOOLS_OF_AGENT,
    PinchState,
    copy_tree,
    environment,
    make_user,
    transcript,
)
from pytest_jeval.benchmarks.pinchbench.grading import (
    GRADER_TIMEOUT,
    automated_score,
    breakdown,
    combine,
    judge_part,
    judge_template,
    run_grader,
    workspace_text,
)
from pytest_jeval.benchmarks.pinchbench.tasks import Task, TaskError, load_task, task_files
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score
from pytest_jeval.suite.dataset import DatasetLoadError

LAYOUT = "a clone of github.com/pinchbench/skill: tasks/task_*.md (and tasks/manifest.yaml), assets/"
EXPECTED = "task score 1.0 (every criterion met)"
SYSTEM = ("You are an agent working for a user in a workspace folder. Use the tools to read, write and edit files "
          "there and to run shell commands (no network). Do the task, then reply to the user.")
DEVIATIONS = (
    "the agent is pytest-jeval's tool loop with OpenClaw's core tools (read, write, edit, exec; no web, browser or "
    "image tools), not OpenClaw itself",
    "the judge is the suite's [judge] model, asked directly (upstream: Claude Opus 4.5 through an OpenClaw agent)",
    "a grader that raises or times out, and a judge that fails or gives no total, leave the task unscored "
    "(upstream: the run stops, or the judge part scores 0)",
    "the episode's time limit is the suite's episode_timeout, not the task's timeout_seconds (recorded)",
)


OWN_JUDGE_PROMPT = "the judge prompt is {source} (the clone's own could not be read)"


NEW_SESSION = ("a new_session session starts a fresh conversation in the same workspace (upstream's runner hands "
               "each session to OpenClaw, which keeps its own session state)")


def deviations(judge_prompt_source: str | None, sessions: list[dict[str, Any]] | None = None) -> list[str]:
    """The record's differences from upstream; the judge prompt's when it is not the clone's, and the sessions'
    for a task with a ``new_session`` one."""
    out = list(DEVIATIONS)
    if judge_prompt_source and not judge_prompt_source.startswith("upstream"):
        out.insert(2, OWN_JUDGE_PROMPT.format(source=judge_prompt_source))
    if any(isinstance(s, dict) and s.get("new_session") for s in sessions or []):
        out.append(NEW_SESSION)
    return out


def offline_reason(task: Task, options: Options) -> str | None:
    """Why a task cannot be graded offline (None: it can): the live web (research tasks) or image generation."""
    if task.id in options.run_anyway:
        return None
    if task.id in options.unscored:
        return options.unscored[task.id]
    if task.category.strip().lower() == "research":
        return "needs the live web (a research task); not run offline"
    if "image_gen" in task.id or "image generation" in task.name.lower():
        return "needs an image generation tool; not run offline"
    return None


class Options(BaseModel):
    """``[benchmarks.options]`` of pinchbench."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] | None = None
    """Only these task ids (upstream's ``--suite``)."""
    unscored: dict[str, str] = Field(default_factory=dict)
    """More tasks to leave unscored, by id, each with the reason."""
    run_anyway: list[str] = Field(default_factory=list)
    """Tasks to run although the built-in rules leave them unscored (research tasks, image generation)."""
    grader_timeout: float = Field(GRADER_TIMEOUT, gt=0, le=600)
    """Seconds a task's automated grader may run in the sandbox."""


def _workspace_files(task: Task, clone: Path) -> list[dict[str, Any]]:
    files = []
    for spec in task.workspace_files:
        if not isinstance(spec, dict):
            raise DatasetLoadError(f"{task.path}: a workspace file must be {{path, content}} or {{source, dest}}")
        if "content" in spec:
            files.append({"path": str(spec["path"]), "content": str(spec["content"])})
            continue
        source = clone / "assets" / str(spec["source"])
        if not source.is_file():
            raise DatasetLoadError(f"{task.path}: workspace file {spec['source']!r} is not in {clone / 'assets'}")
        files.append({"dest": str(spec["dest"]), "source_path": str(source)})
    return files


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterator[dict[str, Any]]:
    """One row per task of the clone; a grader-bearing task needs a sandbox without network (else an error)."""
    if files:
        raise DatasetLoadError("pinchbench reads its tasks from data_dir (a clone), not from data_files")
    if ctx.local_dir is None:
        raise DatasetLoadError(f"pinchbench needs data_dir = {LAYOUT}")
    options: Options = ctx.options if ctx.options is not None else Options()
    paths = task_files(ctx.local_dir)
    if not paths:
        raise DatasetLoadError(f"{ctx.local_dir / 'tasks'} holds no task_*.md; data_dir should be {LAYOUT}")
    graded_in_sandbox = False
    template, source = judge_template(ctx.local_dir)
    for path in paths:
        try:
            task = load_task(path)
        except (TaskError, OSError) as exc:
            raise DatasetLoadError(str(exc)) from None
        if options.tasks is not None and task.id not in options.tasks:
            continue
        reason = offline_reason(task, options)
        if reason is None and task.grading_type != "llm_judge":
            graded_in_sandbox = True
        row = dataclasses.asdict(task)
        row.update(workspace_files=_workspace_files(task, ctx.local_dir), offline_reason=reason,
                   prompts=task.prompts(), grader_timeout=options.grader_timeout, judge_template=template,
                   judge_prompt_source=source)
        yield row
    if graded_in_sandbox:
        from pytest_jeval.sandbox import isolation

        if "netns" not in isolation():
            raise DatasetLoadError("pinchbench runs its automated graders in the sandbox without network, and this "
                                   "machine's sandbox has no network namespace: install bubblewrap "
                                   "(apt-get install -y bubblewrap, or `make bubblewrap`)")


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One task."""
    return Sample(id=str(row["id"]), input=str(row["prompts"][0][0]), target=EXPECTED, subject=row["category"] or None,
                  metadata={k: v for k, v in row.items() if k != "frontmatter"})


def prompt(sample: Sample) -> list[dict[str, str]] | None:
    """The first prompt, after a short system prompt; None (no episode) for a task that cannot run offline."""
    if sample.metadata.get("offline_reason"):
        return None
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": sample.input}]


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The task's ``## Oracle Solution`` (a pytest-jeval extension), else an empty answer (graded unscored)."""
    steps: list[OracleStep] = []
    for step in sample.metadata.get("oracle") or []:
        if "tool" in step:
            steps.append(ToolStep(str(step["tool"]), dict(step.get("arguments") or {})))
        else:
            steps.append(SayStep(str(step.get("say") or "")))
    return steps or [SayStep("")]


def _automated(meta: dict[str, Any], events: list[dict[str, Any]], workspace: Path) -> dict[str, Any]:
    from pytest_jeval.agents.workspace import make_workspace, remove_workspace

    code = meta.get("automated_checks")
    if not code:
        return {"score": 0.0, "breakdown": {}, "notes": "No automated grading code found"}
    copy = make_workspace()
    try:
        copy_tree(workspace, copy)
        outcome = run_grader(str(code), events, copy, timeout=float(meta.get("grader_timeout") or GRADER_TIMEOUT))
    finally:
        remove_workspace(copy)
    if outcome["status"] == "missing":
        return {"score": 0.0, "breakdown": {}, "notes": "Automated grading function missing"}
    if outcome["status"] != "ok":
        return {"score": None, "unscored_reason": f"the grader failed: {outcome['error']}",
                "traceback": outcome.get("traceback")}
    scores = outcome.get("scores")
    return {"score": automated_score(scores), "breakdown": breakdown(scores),
            "notes": "" if scores is not None else f"grade() returned a {outcome.get('type')}, not a dict"}


def finish(meta: dict[str, Any], automated: dict[str, Any] | None, judged: dict[str, Any] | None, log: JudgeLog,
           extra: dict[str, Any]) -> Score:
    """The task's score from its graded parts (see :func:`~.grading.combine`), with the record's columns."""
    kind = str(meta["grading_type"])
    total = combine(kind, meta.get("grading_weights"), automated, judged)
    parts = {"automated": automated, "llm_judge": judged}
    merged = {f"{name}.{k}": v for name, part in parts.items() if part
              for k, v in (part.get("breakdown") or {}).items()}
    fields = {"task_score": total, "grading_type": kind, "breakdown": merged,
              "automated_score": automated.get("score") if automated else None,
              "judge_score": judged.get("score") if judged else None, **extra}
    source = meta.get("judge_prompt_source") if judged is not None else None
    sessions: list[dict[str, Any]] = [{"new_session": True} for s in meta.get("sessions") or []
                                      if s.get("new_session")]
    context = {"grading_type": kind, "grading_weights": meta.get("grading_weights"), "automated": automated,
               "judge_prompt_source": source, "sessions": sessions}
    metadata = {"deviations": deviations(source, sessions), "context": context, "judge": judged, **log.metadata()}
    if total is None:
        reasons = "; ".join(f"{name}: {part['unscored_reason']}" for name, part in parts.items()
                            if part and part.get("unscored_reason"))
        return Score(correct=None, expected=EXPECTED, fields=fields,
                     metadata={"unscored_reason": reasons or "not graded", **metadata})
    return Score(correct=total >= 1.0, value=total, extracted=round(total, 4), expected=EXPECTED, metadata=metadata,
                 fields=fields)


def grade_task(sample: Sample, episode: Episode, judge: Any) -> Score:
    """Grade one finished episode (see the module docstring)."""
    meta = sample.metadata
    extra = {"category": meta.get("category"), "timeout_seconds": meta.get("timeout_seconds"),
             "episode_seconds": round(episode.wall_seconds, 3), "offline_reason": meta.get("offline_reason")}
    why = None
    if meta.get("offline_reason"):
        why = str(meta["offline_reason"])
    elif episode.agent == "oracle" and not meta.get("oracle"):
        why = "the oracle has no gold solution for this task (no ## Oracle Solution section)"
    elif not isinstance(episode.state, PinchState) and episode.agent != "nop":
        why = "the episode left no workspace to grade"
    if why is not None:
        return Score(correct=None, expected=EXPECTED, fields={"task_score": None, **extra},
                     metadata={"unscored_reason": why, "deviations": deviations(None, meta.get("sessions"))})
    state = episode.state
    if not isinstance(state, PinchState):  # the nop agent keeps no state: grade the workspace as it was made
        state = environment(sample, Path(os.devnull))
        try:
            return _graded(meta, episode, judge, state, extra)
        finally:
            state.close()
    return _graded(meta, episode, judge, state, extra)


def _graded(meta: dict[str, Any], episode: Episode, judge: Any, state: PinchState, extra: dict[str, Any]) -> Score:
    events = transcript(episode.messages)
    kind = str(meta["grading_type"])
    automated = _automated(meta, events, state.workspace) if kind in ("automated", "hybrid") else None
    judged = None
    log = JudgeLog(judge)
    if kind in ("llm_judge", "hybrid"):
        judged = judge_part(log, task=meta, events=events, workspace=workspace_text(state.workspace))
    return finish(meta, automated, judged, log, extra)


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Upstream's headline, the mean task score over the graded tasks (x100 as a percentage), and per category."""
    graded = [r for r in records if r.get("error") is None and isinstance(r.get("task_score"), (int, float))]
    by_category: dict[str, list[float]] = {}
    for r in graded:
        by_category.setdefault(str(r.get("category") or "-"), []).append(float(r["task_score"]))
    unscored = [r for r in records if r.get("unscored")]
    return {"mean_score_pct": 100 * sum(float(r["task_score"]) for r in graded) / len(graded) if graded else None,
            "graded": len(graded), "perfect": sum(1 for r in graded if r["task_score"] >= 1.0),
            "by_category": {k: sum(v) / len(v) for k, v in sorted(by_category.items())},
            "unscored": len(unscored),
            "not_run_offline": sorted(str(r["record_id"]) for r in unscored if r.get("offline_reason")),
            "do_nothing_baseline": "doing nothing scores what each task's graders give an untouched workspace; "
                                   "the nop agent measures it"}


BENCHMARK = Benchmark(
    name="pinchbench",
    category="agentic",
    description="PinchBench: real-world agent tasks in a workspace, task graders in the sandbox, judge for the rest",
    to_sample=to_sample,
    read_rows=read_rows,
    prompt=prompt,
    scorer="pinchbench",
    scoring="task's grade() in the sandbox, llm-judge rubric, hybrid weighted by grading_weights; correct = 1.0",
    sample_count=23,
    data_source="github:pinchbench/skill",
    data_dir=LAYOUT,
    options=Options,
    backends=("agent",),
    summarize_extra=summarize,
    agent=AgentSpec(tools=TOOLS_OF_AGENT, environment=environment, user=make_user, max_turns=40, oracle=gold_steps),
)


def test_pinchbench(sample: Sample, episode: Episode, judge: Any, score: Any) -> None:
    """The task's score is 1.0: every automated check and judged criterion met."""
    try:
        result = grade_task(sample, episode, judge)
    finally:
        if isinstance(episode.state, PinchState):
            episode.state.close()
    score(result)


@register_scorer("pinchbench", uses_judge=True)
def record_pinchbench(record: dict[str, Any], reparse_judge: bool = False) -> Score:
    """pinchbench: the stored automated part and the judge's stored reply read again (with ``reparse_judge``;
    otherwise the stored verdict). The workspace is gone, so the grader itself is not run again."""
    meta = record.get("scoring_metadata") or {}
    context = meta.get("context")
    if not reparse_judge or not isinstance(context, dict):
        return stored_score(record)
    judged = meta.get("judge")
    log = JudgeLog.replay(record)
    if judged is not None and meta.get("judge_calls"):
        task = {"prompt": "", "expected_behavior": "", "llm_judge_rubric": "", "grading_criteria": []}
        judged = judge_part(log, task=task, events=[], workspace="")
    extra = {k: record.get(k) for k in ("category", "timeout_seconds", "episode_seconds", "offline_reason")}
    return finish(context, context.get("automated"), judged, log, extra)
