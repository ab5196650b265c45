#!/usr/bin/env python
"""Cost of the browser tools and the local web applications, run by hand (not collected by pytest).

From the repository root, with Playwright and Debian's chromium installed (``make test`` installs both)::

    .venv/bin/python tests/perf/bench_web.py              # 30 steps per episode
    .venv/bin/python tests/perf/bench_web.py --steps 60

Prints: the browser's start-up (Playwright's driver and Chromium, first context and page); one episode's
actions per second (alternating a navigation and a snapshot on the local service desk); and, with 4 episodes
in parallel on one event loop (as the episode runner runs them), each on its own desk instance and browser
context, the wall time per step and the harness's cost per step: the episode's wall time not spent inside
the browser tools (the loop, argument checks, records), divided by its steps.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from pytest_jeval.agents.loop import Limits, run_episode
from pytest_jeval.agents.tool import ToolContext
from pytest_jeval.agents.tools.browser import BROWSER_TOOLS, BrowserService
from pytest_jeval.benchmarks._web.env import WebEnv, open_env
from pytest_jeval.benchmarks.workarena.apps import desk
from pytest_jeval.core.chat import Reply, ToolCall
from pytest_jeval.core.sample import Sample


def desk_env() -> WebEnv:
    return open_env(apps={"desk": desk.make_app}, sites={}, site_apps={"DESK": ("desk", "")}, start_url="__DESK__/")


def script(env: WebEnv, steps: int) -> list[ToolCall]:
    base = env.sites["DESK"]
    pages = ["/incident_list.do", "/problem_list.do", "/catalog", "/kb"]
    calls = []
    for i in range(steps):
        if i % 2 == 0:
            calls.append(ToolCall(f"c{i}", "browser_navigate", json.dumps({"url": base + pages[(i // 2) % 4]})))
        else:
            calls.append(ToolCall(f"c{i}", "browser_snapshot", "{}"))
    return calls


async def episode(env: WebEnv, steps: int) -> tuple[float, float, int]:
    calls = iter(script(env, steps))

    async def model(conversation: object) -> Reply:
        call = next(calls, None)
        return Reply(text="done", model="m", tool_calls=(call,) if call else ())

    ctx = ToolContext(sample=Sample(id="perf", input="x"), workspace=Path("/nonexistent"), state=env)
    started = time.perf_counter()
    ep = await run_episode([{"role": "user", "content": "go"}], tools=list(BROWSER_TOOLS), call_model=model, ctx=ctx,
                           limits=Limits(max_turns=steps + 2, max_tool_calls=steps + 2, tool_timeout=120))
    wall = time.perf_counter() - started
    assert not ep.tool_errors, [c.error for c in ep.tool_calls if c.error]
    return wall, ep.tool_seconds, len(ep.tool_calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--parallel", type=int, default=4)
    args = parser.parse_args()

    started = time.perf_counter()
    first = desk_env()
    startup = time.perf_counter() - started
    print(f"browser start-up (driver, Chromium, first context and page, a desk instance): {startup:.2f} s "
          f"(Chromium launch alone {BrowserService.shared().launch_seconds:.2f} s)")
    try:
        wall, tools, steps = asyncio.run(episode(first, args.steps))
    finally:
        first.close()
    print(f"one episode: {steps} steps in {wall:.2f} s = {steps / wall:.1f} actions/s "
          f"(median step {tools / steps * 1000:.0f} ms)")

    started = time.perf_counter()
    envs = [desk_env() for _ in range(args.parallel)]
    opened = (time.perf_counter() - started) / args.parallel

    async def all_of() -> list[tuple[float, float, int]]:
        return await asyncio.gather(*(episode(env, args.steps) for env in envs))

    try:
        results = asyncio.run(all_of())
    finally:
        for env in envs:
            env.close()
    per_step = [w / n for w, _, n in results]
    harness = [(w - t) / n for w, t, n in results]
    total = sum(n for _, _, n in results)
    span = max(w for w, _, _ in results)
    print(f"{args.parallel} episodes in parallel: new episode (desk instance + context) {opened * 1000:.0f} ms; "
          f"{total} steps in {span:.2f} s = {total / span:.1f} actions/s together; wall per step "
          f"{statistics.median(per_step) * 1000:.0f} ms (median over episodes); harness cost per step "
          f"{statistics.median(harness) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
