"""A scripted τ² conversation on the project's test server: the agent, the simulated user and the judge are
three models of one :class:`FakeOpenAIServer`, each answering from a script (for the e2e tests and the
perf script).

* ``user``: finds its task by the ``[tag]`` in the scenario of its system prompt; its first reply is the
  task's opening line (the k-th conversation of a task may open differently, see ``USER_OPENINGS``), every
  later one ``###STOP###``.
* ``agent``: finds its script by the longest key inside the user's opening line, and plays step
  ``assistant messages - 1`` (the greeting is the first assistant message).
* ``judge``: every NL assertion met.
"""

from __future__ import annotations

import json
import re
import textwrap
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.testing.openai_server import Answer, ToolCallSpec, assistant_turns, tool_answer

FIXTURE = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "taubench"
STOP = "###STOP###"

USER_OPENINGS: dict[str, Sequence[str]] = {
    "cancel-lamp": ["Please cancel my order #W1000001, I no longer need it.",
                    "Cancel #W1000001 please (second call); I no longer need it.",
                    "Please cancel my order #W1000001 once more, I no longer need it."],
    "bottle-price": ["How much did I pay for order #W1000002?"],
    "return-processed": ["I want to return order #W1000002."],
    "cancel-mistake": ["I ordered #W1000001 by mistake, cancel it please."],
    "exchange-lamp": ["I'd like to exchange my desk lamp."],
}
"""The user's first line per task tag; the k-th conversation of a task takes the k-th (the last repeats)."""


def _cancel(reason: str) -> Answer:
    return tool_answer(ToolCallSpec("cancel_pending_order", {"order_id": "#W1000001", "reason": reason}))


AGENT_SCRIPTS: dict[str, Sequence[str | Answer]] = {
    "cancel my order #W1000001": [_cancel("no longer needed"), "Your order #W1000001 is cancelled."],
    "(second call)": [_cancel("ordered by mistake"), "Your order #W1000001 is cancelled."],
    "How much did I pay": [tool_answer(ToolCallSpec("get_order_details", {"order_id": "#W1000002"})),
                           "I found your order; it is paid."],
    "return order #W1000002": ["Sorry, only delivered orders can be returned; #W1000002 is not delivered yet."],
    "by mistake, cancel": [_cancel("no longer needed"), "Done, it is cancelled."],
    "exchange my desk lamp": ["I cannot help with that."],
}
"""The agent's steps per opening line: a solved cancellation, a wrong reason (fails on the database), a price
never said (fails on communication), a refusal (judged), a cancellation with the wrong reason."""


def _first_user(body: Mapping[str, Any]) -> str:
    for m in body.get("messages", []):
        if m.get("role") == "user":
            return str(m.get("content") or "")
    return ""


class TauScript:
    """The responder of the three models (see the module docstring); thread-safe."""

    def __init__(self, openings: Mapping[str, Sequence[str]] = USER_OPENINGS,
                 scripts: Mapping[str, Sequence[str | Answer]] = AGENT_SCRIPTS) -> None:
        self.openings = openings
        self.scripts = sorted(scripts.items(), key=lambda kv: -len(kv[0]))
        self.started: dict[str, int] = {}
        self.lock = threading.Lock()

    def user(self, body: Mapping[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        match = re.search(r"\[([a-z-]+)\]", system)
        tag = match.group(1) if match else "?"
        if assistant_turns(body) > 0:
            return STOP
        with self.lock:
            k = self.started.get(tag, 0)
            self.started[tag] = k + 1
        lines = self.openings.get(tag, ["Hello."])
        return lines[min(k, len(lines) - 1)]

    def agent(self, body: Mapping[str, Any]) -> str | Answer:
        opening = _first_user(body)
        step = assistant_turns(body) - 1
        for key, steps in self.scripts:
            if key in opening:
                return steps[min(step, len(steps) - 1)]
        return "I cannot help with that."

    @staticmethod
    def judge(body: Mapping[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        outcomes = text.split("expectedOutcomes:\n", 1)[-1]
        return json.dumps({"results": [{"expectedOutcome": outcomes, "reasoning": "scripted",
                                        "metExpectation": True}]})

    def __call__(self, body: dict[str, Any], attempt: int) -> str | Answer:
        model = body.get("model")
        if model == "user":
            return self.user(body)
        if model == "judge":
            return self.judge(body)
        return self.agent(body)


def suite_text(base_url: str, *, out: str = "out", agent: str = "orchestrator", extra: str = "",
               run: str = "", judge: bool = True) -> str:
    """A suite running the fixture's retail tasks 0-3 on the scripted models."""
    judge_table = f'[judge]\nmodel = "judge"\nbase_url = "{base_url}"\n' if judge else ""
    return textwrap.dedent(f"""
        [run]
        output_dir = "{out}"
        trajectories = "inline"
        {run}

        [[models]]
        name = "agent"
        base_url = "{base_url}"

        [user]
        model = "user"
        base_url = "{base_url}"

        """) + judge_table + textwrap.dedent(f"""
        [[benchmarks]]
        name = "taubench"
        agent = "{agent}"
        subset = "retail"
        data_dir = "{FIXTURE}"
        record_ids = ["retail-0", "retail-1", "retail-2", "retail-3"]
        {extra}
        """)
