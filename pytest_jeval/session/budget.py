"""The run budget in a pytest session: one shared ledger for the run, and what each process checks against.

The controller (or the only process) makes the ledger file (:func:`pytest_jeval.calls.budget.create_ledger`)
when it configures, sends its path to each xdist worker (``workerinput``), writes the baseline (what the
records ``--jeval-resume`` keeps cost) once it has read them, and removes the file at the end. Each
process's :class:`~pytest_jeval.calls.budget.BudgetSpec` goes to its call scheduler (and the call helper
process): the check itself is in the calls layer (:mod:`pytest_jeval.calls.budget`).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pytest

from pytest_jeval.calls.budget import BudgetSpec, create_ledger, read_totals, set_baseline
from pytest_jeval.suite.plan import EvalPlan

__all__ = ["BudgetPlugin", "budget_spec", "ledger_key", "spent"]

LEDGER_KEY = "jeval_budget_ledger"
"""The ``workerinput`` key of the ledger's path."""
ledger_key = pytest.StashKey[str]()
"""The ledger file's path (controller's ``config.stash``)."""


def _has_budget(plan: EvalPlan) -> bool:
    run = plan.suite.run
    return run.max_cost_usd is not None or run.max_total_tokens is not None


def budget_spec(config: pytest.Config, plan: EvalPlan) -> BudgetSpec | None:
    """This process's budget (None without one); on the controller, the ledger is made here."""
    if not _has_budget(plan):
        return None
    from pytest_jeval.suite.budget import budget_prices

    run = plan.suite.run
    prices = budget_prices(plan.suite, plan.path)
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None:
        worker_id = str(workerinput.get("workerid", "gw0"))
        index = int(worker_id[2:]) if worker_id[2:].isdigit() else 0
        workers = int(workerinput.get("workercount", 1) or 1)
        return BudgetSpec(run.max_cost_usd, run.max_total_tokens, prices, ledger=workerinput.get(LEDGER_KEY),
                          slot=2 + index, share=workers, slots=2 + workers)
    fd, path = tempfile.mkstemp(prefix="jeval-budget-", suffix=".ledger")
    os.close(fd)
    create_ledger(path)
    config.stash[ledger_key] = path
    config.pluginmanager.register(BudgetPlugin(path), "jeval-budget")
    return BudgetSpec(run.max_cost_usd, run.max_total_tokens, prices, ledger=path, slot=1)


def baseline(resumed: dict[tuple[str, str], dict[str, dict[str, Any]]]) -> tuple[float, int]:
    """What the records kept from earlier runs cost: (USD, tokens), their model and judge calls."""
    cost, tokens = 0.0, 0
    for records in resumed.values():
        for r in records.values():
            for field in ("cost_usd", "judge_cost_usd"):
                value = r.get(field)
                cost += float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
            for field in ("prompt_tokens", "completion_tokens", "judge_prompt_tokens", "judge_completion_tokens"):
                value = r.get(field)
                tokens += int(value) if isinstance(value, int) and not isinstance(value, bool) else 0
    return cost, tokens


def spent(config: pytest.Config) -> tuple[float, float] | None:
    """The run's spending so far as the ledger holds it (USD, tokens, the baseline included), or None."""
    path = config.stash.get(ledger_key, None)
    if path is None:
        return None
    try:
        return read_totals(path)
    except OSError:
        return None


class BudgetPlugin:
    """Controller: sends the ledger's path to the workers, writes the baseline, removes the file at the end."""

    def __init__(self, path: str) -> None:
        self.path = path

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist (controller): the ledger's path for each worker."""
        node.workerinput[LEDGER_KEY] = self.path

    def write_baseline(self, resumed: dict[tuple[str, str], dict[str, dict[str, Any]]]) -> None:
        """Slot 0: the cost of the records kept from earlier runs (called once they are read)."""
        cost, tokens = baseline(resumed)
        set_baseline(self.path, cost, tokens)

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Remove the ledger file."""
        try:
            os.unlink(self.path)
        except OSError:
            pass
