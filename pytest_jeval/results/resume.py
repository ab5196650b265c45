"""``--jeval-resume``: keep finished records, skip their samples, report their stored verdicts.

Registered (on the controller and on each xdist worker) only under
``--jeval-resume``. :func:`read_resumed` is the one reader of finished records:
the controller's writer calls it at session start after taking the output lock,
and each worker calls it in its own session start.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_jeval.session.keys import case_key, runtime_key

if TYPE_CHECKING:
    from pytest_jeval.suite.plan import EvalPlan

Resumed = dict[tuple[str, str], dict[str, dict[str, Any]]]


def load_resumable(path: Path) -> dict[str, dict[str, Any]]:
    """Finished records of earlier runs, by record id (the newest line of each id).

    A record with an ``error`` is not finished: it is left out, so the run retries
    it. The file itself is not changed here.
    """
    from pytest_jeval.results.jsonl import read_jsonl

    return {rid: rec for rid, rec in read_jsonl(path).records.items() if rec.get("error") is None}


def read_resumed(plan: EvalPlan) -> Resumed:
    """The finished records of every (benchmark, model) pair of the plan (OSError when one cannot be read)."""

    return {(bench, model): load_resumable(plan.jsonl_path(bench, model))
            for bench in plan.benchmarks for model in plan.models}


class ResumePlugin:
    """Reads the finished records on a worker, and reports a resumed sample's stored verdict."""

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """A worker reads the finished records itself (the controller's writer does so under its lock)."""
        config = session.config
        if hasattr(config, "workerinput"):
            from pytest_jeval.session.remote import shipped_resumed

            shipped = shipped_resumed(config)  # a remote worker cannot read the controller's output dir
            config.stash[runtime_key].resumed = read_resumed(config.stash[runtime_key].plan) if shipped is None \
                else shipped

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """A resumed sample reports its stored verdict instead of running again (an agent item too: its
        environment's state is gone, and its verdict is the stored one)."""
        case = pyfuncitem.stash.get(case_key, None)
        if case is None or case.resumed is None:
            return None
        if case.resumed.get("is_correct") is True:
            return True
        how = "unscored" if case.resumed.get("is_correct") is None else "wrong"
        pytest.fail(f"resumed: recorded as {how} in a previous run", pytrace=False)


def install(config: pytest.Config) -> None:
    """``--jeval-resume``: keep finished records and skip their samples (every process)."""
    if config.getoption("jeval_resume"):
        config.pluginmanager.register(ResumePlugin(), "jeval-resume")
