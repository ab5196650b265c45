"""lifelong-agent: LifelongAgentBench (Zheng et al., 2025), a sequence of tasks an agent should learn from.

The tasks of one environment (``[benchmarks.options] environment``: ``db_bench``, the default, or
``os_interaction``; ``knowledge_graph`` tasks are all refused) run in episode mode, always: one sequence
per model, each episode remembering earlier ones under the suite's memory policy (by default, as
upstream's previous-sample utilization, the last three correct episodes, shown before the task). The
database tasks run on SQLite (upstream: MySQL), the operating-system tasks in the project's bubblewrap
sandbox (upstream: a root Docker container); a task either cannot run is refused with the reason, and
every record lists the differences in ``scoring_metadata.deviations``. The summary reports accuracy over
the sequence and its trend (early against late episodes). See docs/lifelong-agent.md.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, HubDataset, Sample, Score, ScoreSink
from pytest_jeval.agents import AgentSpec, Episode, HarnessError, Tool, ToolContext, ToolError, tool
from pytest_jeval.agents.memory import Recollection
from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.benchmarks.lifelong_agent.data import ROUNDS, Options, read_rows, to_sample
from pytest_jeval.benchmarks.lifelong_agent.db import (
    DbState,
    DbTask,
    answer_matches,
    open_table,
    render_rows,
    run_sql,
    same_rows,
    table_rows,
)
from pytest_jeval.benchmarks.lifelong_agent.os_tasks import COMMAND_TIMEOUT, OsState, OsTask, describe, run_item
from pytest_jeval.benchmarks.lifelong_agent.summary import summarize_sequence
from pytest_jeval.core.chat import Messages
from pytest_jeval.scoring.registry import register_scorer
from pytest_jeval.scoring.replay import stored_score

DB_PROMPT = (
    "You operate a SQLite database to solve a task about one of its tables. Call the execute_sql tool to run "
    "one SQL statement at a time: a query returns its rows as a Python list of tuples, any other statement []; "
    "an error comes back as its message. Each call is one round, and your answer is one round too: you have "
    "{rounds} rounds in all. When you have the answer, reply without a tool call, with a line\n"
    "Final Answer: [(value, ...), ...]\n"
    "giving the query's rows exactly, columns and rows in the right order (column names are not shown). If the "
    "task is to change the table, run the statements, then reply with a line 'Final Answer: done'."
)
OS_PROMPT = (
    "You complete a task on a Linux system by running bash commands with the bash tool (no network; each call "
    "is one round, and you have {rounds} rounds). Explain your reasoning, run the commands the task needs, and "
    "when it is done reply without a tool call."
)
MEMORY_HEAD = "Here are earlier tasks of this sequence, and how you solved them:"

DEVIATIONS = {
    "db_bench": ["sqlite-for-mysql: the table is on SQLite, not MySQL; tasks whose gold SQL SQLite cannot "
                 "reproduce are refused",
                 "native-tool-calls: statements are execute_sql calls, not upstream's 'Action: Operation' text; "
                 "one call is one round"],
    "os_interaction": ["sandbox-for-docker: commands run in the bubblewrap sandbox (unprivileged, read-only "
                       "root, writable /app and /tmp), not as root in an Ubuntu container",
                       "native-tool-calls: commands are bash calls, not upstream's 'Act: bash' text; one call "
                       "is one round"],
}


def prompt(sample: Sample) -> Messages:
    """The environment's instructions, then the task."""
    template = DB_PROMPT if sample.metadata["environment"] == "db_bench" else OS_PROMPT
    return [{"role": "system", "content": template.format(rounds=sample.metadata["rounds"])},
            {"role": "user", "content": sample.input}]


def _turn_text(message: dict[str, Any]) -> list[str]:
    role = message.get("role")
    content = message.get("content")
    lines = []
    if role == "assistant":
        if isinstance(content, str) and content.strip():
            lines.append(f"You: {content.strip()}")
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = function.get("arguments")
            shown = next(iter(arguments.values())) if isinstance(arguments, dict) and len(arguments) == 1 else arguments
            lines.append(f"You ran {function.get('name')}: {shown}")
    elif role == "tool":
        lines.append(f"Result: {content}")
    elif isinstance(content, str):
        lines.append(f"{role}: {content}")
    return lines


def memory(sample: Sample, earlier: Sequence[Recollection]) -> Messages:
    """The episode's opening with the earlier episodes it remembers written before the task (as upstream
    inserts earlier sessions into its first prompt)."""
    messages = prompt(sample)
    if earlier:
        blocks = []
        for r in earlier:
            lines = [f"Task: {r.sample.input}"] + [t for m in r.turns for t in _turn_text(m)]
            blocks.append("\n".join(lines))
        messages[0] = {"role": "system", "content": messages[0]["content"] + "\n\n" + MEMORY_HEAD + "\n\n"
                       + "\n\n".join(blocks)}
    return messages


def _db_task(sample: Sample) -> DbTask:
    return DbTask.from_row(sample.metadata["entry"])


def _os_task(sample: Sample) -> OsTask:
    return OsTask.from_row(sample.metadata["entry"])


@tool(name="execute_sql")
def execute_sql(sql: str, ctx: ToolContext) -> str:
    """Run one SQL statement on the task's SQLite database; a query returns its rows as a Python list of
    tuples, any other statement returns [].

    Args:
        sql: The SQL statement.
    """
    state = ctx.state
    if not isinstance(state, DbState):
        raise HarnessError("the task's database is not open")
    with state.lock:
        if state.executed >= state.rounds:
            raise ToolError(f"the round limit ({state.rounds}) is reached; no more statements run")
        state.executed += 1
        try:
            return render_rows(run_sql(state.conn, sql))
        except sqlite3.Error as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from None


@tool(name="bash")
def bash(command: str, ctx: ToolContext) -> str:
    """Run bash commands on the task's Linux system and return their output.

    Args:
        command: The commands, run with bash.
    """
    state = ctx.state
    if not isinstance(state, OsState):
        raise HarnessError("the task's sandbox is not running")
    with state.lock:
        if state.executed >= state.rounds:
            raise ToolError(f"the round limit ({state.rounds}) is reached; no more commands run")
        state.executed += 1
        try:
            outcome = state.sandbox.exec("bash -s", timeout=min(COMMAND_TIMEOUT, ctx.timeout), stdin=command)
        except (OSError, RuntimeError) as exc:
            raise HarnessError(f"the sandbox cannot run: {exc}") from exc
    return describe(outcome)


def tools(sample: Sample) -> list[Tool]:
    """The environment's one tool."""
    return [execute_sql] if sample.metadata["environment"] == "db_bench" else [bash]


def environment(sample: Sample, workspace: Path) -> DbState | OsState:
    """A fresh copy of the task's table, or a fresh sandbox after the task's initialization (a failing
    initialization is a harness error)."""
    rounds = int(sample.metadata["rounds"])
    if sample.metadata["environment"] == "db_bench":
        task = _db_task(sample)
        return DbState(task=task, conn=open_table(task.table), rounds=rounds)
    from pytest_jeval.sandbox.shell.providers import ProviderUnavailable, get_provider

    provider = get_provider("bubblewrap")
    try:
        provider.check()
    except ProviderUnavailable as exc:
        raise HarnessError(f"os_interaction tasks need the shell sandbox: {exc}") from None
    os_task = _os_task(sample)
    sandbox = provider.start(None)
    try:
        done = run_item(sandbox, os_task.init)
    except BaseException:
        sandbox.stop()
        raise
    if done.returncode != 0 or done.timed_out:
        sandbox.stop()
        raise HarnessError(f"the task's initialization failed in the sandbox (exit status {done.returncode}; "
                           f"upstream runs it as root in a container): {(done.stdout + done.stderr)[-1500:]}")
    return OsState(task=os_task, sandbox=sandbox, rounds=rounds)


def gold_steps(sample: Sample) -> list[OracleStep]:
    """The gold solution: the gold SQL (then its rows as the answer), or the gold command item."""
    if sample.metadata["environment"] == "db_bench":
        task = _db_task(sample)
        answer = render_rows(task.direct) if task.direct is not None else "done"
        return [ToolStep("execute_sql", {"sql": task.gold_sql}), SayStep(f"Final Answer: {answer}")]
    solution = _os_task(sample).solution
    script = solution.script if solution.name == "bash" else f"python3 - <<'JEVAL_EOF'\n{solution.script}\nJEVAL_EOF"
    return [ToolStep("bash", {"command": script}), SayStep("Done.")]


FINAL_ANSWER = re.compile(r"(?:^|\n)\s*Final Answer:(.*)")


def final_answer(text: str) -> str | None:
    """The text after ``Final Answer:`` on its line (upstream's pattern), or None without one."""
    found = FINAL_ANSWER.search(text)
    return found.group(1).strip() if found else None


def query_verdict(gold: Sequence[Sequence[Any]], answer: str | None, executed: int, rounds: int,
                  meta: dict[str, Any]) -> Score:
    """A query's verdict: its final answer against the gold rows, given within the rounds."""
    rows = [tuple(r) for r in gold]
    meta = {**meta, "final_answer": answer, "statements": executed, "rounds": rounds,
            "gold_rows": [list(r) for r in rows]}
    if executed >= rounds:
        meta["limit"] = f"no round left for the answer after {executed} statements"
        return Score(correct=False, extracted=answer, expected=render_rows(rows), metadata=meta)
    # upstream: an answer it cannot parse is the empty answer
    correct = answer_matches(answer if answer is not None else "", rows)
    return Score(correct=correct, extracted=answer, expected=render_rows(rows), metadata=meta)


def db_verdict(sample: Sample, answer_text: str, executed: int, rows_now: list[Any] | None) -> Score:
    """A database task's verdict: a query's final answer against the gold rows (given within the rounds), a
    change's table against the gold replay."""
    task = _db_task(sample)
    rounds = int(sample.metadata["rounds"])
    answer = final_answer(answer_text)
    meta: dict[str, Any] = {"environment": "db_bench", "query": task.is_query, "deviations": DEVIATIONS["db_bench"],
                            "do_nothing_passes": bool(sample.metadata.get("nothing_passes"))}
    if task.direct is not None:
        return query_verdict(task.direct, answer, executed, rounds, meta)
    assert rows_now is not None
    correct = same_rows(rows_now, task.gold_rows())
    meta.update(final_answer=answer, statements=executed, rounds=rounds)
    return Score(correct=correct, extracted=None, expected="the table after the gold SQL", metadata=meta)


def lifelong_score(sample: Sample, episode: Episode) -> Score:
    """Score one episode by its environment (the sandbox and the database are closed afterwards)."""
    state = episode.state
    if isinstance(state, DbState):
        try:
            rows = table_rows(state.conn, state.task.table) if not state.task.is_query else None
        finally:
            state.close()
        return db_verdict(sample, episode.final_text, state.executed, rows)
    if isinstance(state, OsState):
        try:
            passed, outcome = state.passes()
        finally:
            state.sandbox.stop()
        return Score(correct=passed, extracted=outcome.returncode, expected=0,
                     metadata={"environment": "os_interaction", "check_exit_status": outcome.returncode,
                               "check_timed_out": outcome.timed_out, "commands": state.executed,
                               "rounds": state.rounds, "deviations": DEVIATIONS["os_interaction"]})
    raise HarnessError("the episode has no task environment")


BENCHMARK = Benchmark(
    name="lifelong-agent",
    category="agentic",
    description="LifelongAgentBench: a sequence of database or OS tasks, each episode remembering earlier ones",
    to_sample=to_sample,
    prompt=prompt,
    dataset=HubDataset(path="csyq/LifelongAgentBench", split="train"),
    read_rows=read_rows,
    options=Options,
    scorer="lifelong-agent",
    scoring="db: final answer vs gold rows / table vs gold replay (SQLite); os: the task's check exits 0",
    backends=("agent",),
    summarize_extra=summarize_sequence,
    agent=AgentSpec(tools=tools, environment=environment, max_turns=max(ROUNDS.values()) + 1, oracle=gold_steps,
                    memory=memory, sequential=True),
)


def test_lifelong_agent(sample: Sample, episode: Episode, score: ScoreSink) -> None:
    """Correct as upstream judges the task (see the module docstring)."""
    score(lifelong_score(sample, episode))


NOT_RESCORED = "not rescored: a change's table and an OS task's sandbox cannot be rebuilt from a record"


@register_scorer("lifelong-agent")
def record_lifelong_agent(record: dict[str, Any]) -> Score:
    """lifelong-agent: a query's final answer checked again against its stored gold rows; other tasks keep
    their stored verdict."""
    meta = dict(record.get("scoring_metadata") or {})
    gold = meta.get("gold_rows")
    if meta.get("query") is True and isinstance(gold, list):
        answer = meta.get("final_answer")
        return query_verdict(gold, answer if isinstance(answer, str) else None, int(meta.get("statements") or 0),
                             int(meta.get("rounds") or 0), {k: meta[k] for k in ("environment", "query",
                                                                                 "deviations", "do_nothing_passes")
                                                           if k in meta})
    kept = stored_score(record)
    return Score(correct=kept.correct, value=kept.value, extracted=kept.extracted, expected=kept.expected,
                 metadata={**kept.metadata, "rescore_note": NOT_RESCORED})
