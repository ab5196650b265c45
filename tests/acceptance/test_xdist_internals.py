"""The pytest-xdist internals pytest-jeval relies on; these fail loudly when a new xdist changes them.

* ``xdist.remote.WorkerInteractor.torun``: the worker's queue of upcoming item indices,
  with a ``lock()`` context manager yielding a deque (:func:`pytest_jeval.session.prefetch.upcoming`);
* ``config.workerinput`` on a worker (the local model URL, the worker count) and
  ``config.workeroutput`` / ``node.workeroutput`` (call statistics, fully selected pairs).
"""

from __future__ import annotations

import collections
import inspect
import json
import re
import textwrap

import execnet
import pytest
import xdist.remote

from tests.support.gsm import JevalProject


def test_worker_interactor_has_a_lockable_torun_queue() -> None:
    source = inspect.getsource(xdist.remote.WorkerInteractor.__init__)
    assert "self.torun = " in source, "xdist's WorkerInteractor no longer has .torun: fix pytest_jeval.session.prefetch"
    queue = xdist.remote.TestQueue(execnet.gateway_base.get_execmodel("thread"))  # what WorkerInteractor.torun is
    queue.put(3)
    queue.put(5)
    with queue.lock() as locked:
        assert isinstance(locked, collections.deque) and list(locked) == [3, 5]


@pytest.mark.slow
def test_workers_prefetch_a_window_and_report_their_stats(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.pytester.makeconftest(textwrap.dedent("""
        import json, os
        import pytest
        from pytest_jeval.session.prefetch import upcoming

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_protocol(item, nextitem):
            worker = os.environ.get("PYTEST_XDIST_WORKER", "controller")
            queue = [p for p in item.config.pluginmanager.get_plugins()
                     if type(p).__name__ == "WorkerInteractor" and getattr(p, "torun", None) is not None]
            window = len(upcoming(item.session, item, 1024))
            with open(item.config.rootpath / f"window-{worker}.jsonl", "a") as f:
                f.write(json.dumps([bool(queue), window]) + "\\n")
    """))
    # loadfile sends all ten items of the suite file to one worker at once: its torun queue holds them
    result = p.pytester.runpytest_subprocess("--jeval-config", str(p.suite()), "-n", "2", "--dist", "loadfile")
    result.assert_outcomes(passed=6, failed=3, errors=1)
    files = sorted(p.pytester.path.glob("window-*.jsonl"))
    assert files and all(f.name in ("window-gw0.jsonl", "window-gw1.jsonl") for f in files)
    seen = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    assert len(seen) == 10
    assert all(found for found, _ in seen), "xdist's WorkerInteractor has no .torun: fix pytest_jeval.session.prefetch"
    windows = [window for _, window in seen]
    assert max(windows) > 2, f"xdist workers saw no upcoming items (torun empty?): {windows}"
    # the controller makes no calls under xdist: these statistics came through workeroutput
    sent = re.search(r"calls: (\d+) sent", result.stdout.str())
    assert sent is not None and int(sent.group(1)) >= 10
