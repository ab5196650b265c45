#!/usr/bin/env python
"""Cost of one call of each built-in agent tool, run by hand.

Not part of the test suite (pytest only collects ``test_*.py``). From the repository root::

    .venv/bin/python tests/perf/bench_agent_tools.py              # 20 calls of each
    .venv/bin/python tests/perf/bench_agent_tools.py --runs 50

Times, one call at a time in one workspace, ``calculator``, ``file_write`` and
``file_read`` of a 10 KiB file, ``list_files``, ``python`` with ``pass`` and ``bash``
with ``true`` (the sandboxed ones include the workspace's chown to the run's uid and
back, where the plan has one), plus ``make_workspace`` of one 10 KiB attachment and
``remove_workspace``. Prints the median and the 90th percentile in milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_jeval.agents.tool import ToolContext
from pytest_jeval.agents.tools import TOOLS
from pytest_jeval.agents.workspace import make_workspace, remove_workspace
from pytest_jeval.core.sample import Sample
from pytest_jeval.sandbox import isolation


def _time(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _row(name: str, times: list[float]) -> str:
    p90 = statistics.quantiles(times, n=10)[-1] if len(times) > 1 else times[0]
    return f"| {name} | {statistics.median(times):.2f} / {p90:.2f} ms |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        attachment = Path(tmp) / "data.txt"
        attachment.write_text("x" * 10_240)
        ws = make_workspace([attachment])
        ctx = ToolContext(sample=Sample(id="bench", input=""), workspace=ws, timeout=10)

        def tool(name: str, **args: object) -> Callable[[], object]:
            fn = TOOLS.get(name).fn
            assert fn is not None
            return lambda: fn(**args, ctx=ctx) if TOOLS.get(name).context_param else fn(**args)

        rows = [
            ("calculator `(3 + 4.5) * sqrt(2) / 7`", tool("calculator", expression="(3 + 4.5) * sqrt(2) / 7")),
            ("file_write 10 KiB", tool("file_write", path="out.txt", content="y" * 10_240)),
            ("file_read 10 KiB", tool("file_read", path="data.txt")),
            ("list_files", tool("list_files")),
            ("python `pass`", tool("python", code="pass")),
            ("bash `true`", tool("bash", command="true")),
            ("make_workspace + remove_workspace (one 10 KiB file)",
             lambda: remove_workspace(make_workspace([attachment]))),
        ]
        print(f"isolation: {' '.join(isolation())}; {runs} calls each, median / p90")
        try:
            for name, fn in rows:
                fn()  # warm up (the sandbox probes on first use)
                print(_row(name, _time(fn, runs)))
        finally:
            remove_workspace(ws)


if __name__ == "__main__":
    main()
