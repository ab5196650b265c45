"""What the web benchmarks share about their tasks: the browser check, the prompt, the gold steps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_jeval.agents.spec import OracleStep, SayStep, ToolStep
from pytest_jeval.agents.tools.browser import BROWSER_TOOLS, browser_problem
from pytest_jeval.benchmarks._web.env import WebEnv
from pytest_jeval.suite.dataset import DatasetLoadError

SYSTEM_PROMPT = (
    "You are a web agent operating a real browser. Each browser tool returns the page after the action: its "
    "URL, its title and its accessibility tree, one element per line as [number] role \"name\"; name an element "
    "by that number (or by a selector such as role=link[name=\"Orders\"]). Only the task's sites can be "
    "reached. Work through the pages until the task is done. Then reply without a tool call: with the answer "
    "only when the task asks a question, else with a short note that it is done. If the task cannot be done, "
    "answer \"N/A\"."
)
TOOLS = BROWSER_TOOLS
"""The tools of every web task."""


def require_browser(benchmark: str) -> None:
    """A :class:`~pytest_jeval.suite.dataset.DatasetLoadError` (a usage error before any request) naming the
    install command when no browser can start here; web benchmarks are never silently skipped."""
    problem = browser_problem()
    if problem is not None:
        raise DatasetLoadError(f"{benchmark} cannot run here: {problem}")


def gold_steps(raw: Sequence[Mapping[str, Any]], env: WebEnv) -> list[OracleStep]:
    """Gold steps written as ``{"tool": name, "arguments": {...}}`` or ``{"say": text}``, with the site
    placeholders rendered to the episode's addresses."""
    steps: list[OracleStep] = []
    for step in raw:
        if "say" in step:
            steps.append(SayStep(str(env.render(step["say"]))))
        else:
            steps.append(ToolStep(str(step["tool"]), dict(env.render(dict(step.get("arguments") or {})))))
    return steps


def check_steps(raw: Any, where: str) -> None:
    """ValueError when gold steps are not a list of ``{"tool", "arguments"}`` / ``{"say"}`` objects naming
    browser tools."""
    names = {t.name for t in TOOLS}
    if not isinstance(raw, list):
        raise ValueError(f"{where}: the gold steps must be a list")
    for i, step in enumerate(raw):
        if not isinstance(step, dict) or not ("say" in step or step.get("tool") in names):
            raise ValueError(f"{where}: gold step {i} must be {{\"say\": text}} or {{\"tool\": one of "
                             f"{', '.join(sorted(names))}, \"arguments\": {{...}}}}")
