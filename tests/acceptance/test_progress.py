"""The progress line of a long run: how far it is, how fast, what is left, calls in flight."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_jeval.session.progress import ProgressLine, progress_text
from tests.support.gsm import JevalProject


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
    # the run takes at least 1.5 s: lines at 0.4 s intervals (that no line follows another sooner is
    # test_a_line_at_most_once_per_interval_and_only_after_an_item_finished's check, on a clock of its own)
    assert len(lines) >= 2, result.stdout.str()
    done = [int(line.split()[1].split("/")[0]) for line in lines]
    assert done == sorted(done) and all(line.split()[1].endswith("/10") for line in lines)
    assert "call in flight" in lines[0] or "calls in flight" in lines[0]
    bad = jeval_project.pytester.runpytest("--jeval-config", "suite.toml", "-o", "jeval_progress_interval=soon")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*jeval_progress_interval: expected seconds as a number*"])


@pytest.mark.slow
def test_under_xdist_the_line_counts_the_workers_items_and_leaves_calls_out(jeval_project: JevalProject) -> None:
    jeval_project.server.latency = 0.15
    jeval_project.suite(model_extra="max_concurrency = 1", extra_run="cache = false")
    result = jeval_project.pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-n", "2",
                                                         "-o", "jeval_progress_interval=0.3")
    lines = [line for line in result.outlines if line.startswith("jeval: ") and " items in " in line]
    assert lines, result.stdout.str()
    for line in lines:
        assert "/10 items in " in line and "in flight" not in line, line



class _Reporter:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write_line(self, line: str) -> None:
        self.lines.append(line)

    def write(self, text: str) -> None:
        pass


def test_a_line_at_most_once_per_interval_and_only_after_an_item_finished() -> None:
    reporter, now = _Reporter(), [100.0]
    config = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: reporter),
                             stash={}, get_verbosity=lambda: 0)
    line = ProgressLine(config, 0.4, in_workers=False, clock=lambda: now[0])  # type: ignore[arg-type]
    line.pytest_sessionstart(None)  # type: ignore[arg-type]
    line.total = 10

    def finish(at: float) -> None:  # one item's reports, its teardown at ``at``
        now[0] = at
        for when in ("setup", "call", "teardown"):
            line.pytest_runtest_logreport(SimpleNamespace(when=when))  # type: ignore[arg-type]

    def report(at: float) -> None:  # a report that finishes nothing
        now[0] = at
        line.pytest_runtest_logreport(SimpleNamespace(when="call"))  # type: ignore[arg-type]

    for at in (100.1, 100.2, 100.3):  # within the first interval: no line
        finish(at)
    assert reporter.lines == []
    finish(100.45)  # its first report comes after the interval: a line for the 3 items done
    finish(100.5)  # too soon after that line
    report(101.0)  # the interval has passed and 2 items finished since: a line
    report(102.0)  # the interval has passed, but nothing finished since: no line
    finish(102.1)  # the next teardown: a line
    assert [text.split(" items")[0] for text in reporter.lines] == ["jeval: 3/10", "jeval: 5/10", "jeval: 6/10"]
