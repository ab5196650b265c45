"""The progress line of a long run: how far it is, how fast, what is left, calls in flight."""

from __future__ import annotations

import pytest
from conftest import JevalProject

from pytest_jeval.session.progress import progress_text


@pytest.mark.parametrize(("args", "line"), [
    ((18, 36, 9.0, 1), "jeval: 18/36 items in 0:09 (2.0 items/s, about 0:09 left), 1 call in flight"),
    ((36, 36, 18.0, 0), "jeval: 36/36 items in 0:18 (2.0 items/s), 0 calls in flight"),
    ((1, 7201, 1.0, None), "jeval: 1/7201 items in 0:01 (1.0 items/s, about 2:00:00 left)"),
    ((0, 5, 0.0, 3), "jeval: 0/5 items in 0:00, 3 calls in flight"),
    ((5, 15, 117.0, 1), "jeval: 5/15 items in 1:57 (2.6 items/min, about 3:54 left), 1 call in flight"),
])
def test_the_progress_line_says_how_far_how_fast_and_what_is_left(args: tuple[int, int, float, int | None],
                                                                   line: str) -> None:
    assert progress_text(*args) == line


def test_a_slow_run_shows_progress_lines_and_a_bad_interval_is_a_usage_error(jeval_project: JevalProject) -> None:
    jeval_project.server.latency = 0.15  # ten samples, one at a time: about 1.5 s
    jeval_project.suite(model_extra="max_concurrency = 1", extra_run="cache = false")
    result = jeval_project.pytester.runpytest("--jeval-config", "suite.toml", "-o", "jeval_progress_interval=0.4")
    lines = [line for line in result.outlines if line.startswith("jeval: ") and " items in " in line]
    assert 2 <= len(lines) <= 8, result.stdout.str()
    done = [int(line.split()[1].split("/")[0]) for line in lines]
    assert done == sorted(done) and all(line.split()[1].endswith("/10") for line in lines)
    assert "call in flight" in lines[0] or "calls in flight" in lines[0]
    bad = jeval_project.pytester.runpytest("--jeval-config", "suite.toml", "-o", "jeval_progress_interval=soon")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*jeval_progress_interval: expected seconds as a number*"])


def test_under_xdist_the_line_counts_the_workers_items_and_leaves_calls_out(jeval_project: JevalProject) -> None:
    jeval_project.server.latency = 0.15
    jeval_project.suite(model_extra="max_concurrency = 1", extra_run="cache = false")
    result = jeval_project.pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-n", "2",
                                                         "-o", "jeval_progress_interval=0.3")
    lines = [line for line in result.outlines if line.startswith("jeval: ") and " items in " in line]
    assert lines, result.stdout.str()
    for line in lines:
        assert "/10 items in " in line and "in flight" not in line, line

