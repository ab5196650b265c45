"""What a session selected, per (benchmark, model) pair, and which finished samples it asks to rerun.

Every pytest process that collects (the only process, or each xdist worker, which
all collect the same items) works this out after deselection (``-k``, ``-m``,
``--lf``, ``--sw``, ``--deselect``, node ids on the command line):

* a pair is **fully selected** when every sample the suite plans for it is among
  the selected items;
* under ``--jeval-resume`` a finished sample is **asked for explicitly**, and so
  runs again, when its pair is only partly selected, when ``--lf`` is on and the
  item is in pytest's last-failed list, or when ``--sw`` is on and the item is the
  failure stepwise stopped at.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import pytest

from pytest_jeval.suite.plan import EvalPlan

__all__ = ["Selection", "selection_of"]

Pair = tuple[str, str]


@dataclasses.dataclass
class Selection:
    """The selected samples of one session."""

    selected: dict[Pair, set[str]]
    """Record ids of the selected items, per pair."""
    full: set[Pair]
    """Pairs all of whose planned samples are selected."""
    explicit: set[tuple[str, str, str]]
    """(benchmark, model, record id) of items asked for explicitly (see the module docstring)."""


def _lastfailed(config: pytest.Config) -> set[str]:
    cache = getattr(config, "cache", None)
    if cache is None or not config.getoption("lf", False):
        return set()
    data = cache.get("cache/lastfailed", {})
    return {str(k) for k in data} if isinstance(data, dict) else set()


def _stepwise_failure(config: pytest.Config) -> str | None:
    cache = getattr(config, "cache", None)
    if cache is None or not config.getoption("stepwise", False) or config.getoption("stepwise_reset", False):
        return None
    data: Any = cache.get("cache/stepwise", None)
    if isinstance(data, dict):
        data = data.get("last_failed")
    return str(data) if data else None


def selection_of(config: pytest.Config, plan: EvalPlan, items: Iterable[pytest.Item]) -> Selection:
    """The :class:`Selection` of the collected, deselected ``items``."""
    from pytest_jeval.session.keys import case_for

    lastfailed = _lastfailed(config)
    stepwise = _stepwise_failure(config)
    selected: dict[Pair, set[str]] = {}
    asked: set[tuple[str, str, str]] = set()
    bench_of: dict[int, str | None] = {}  # per parent node: 100,000 items share a few modules
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or "jeval_model" not in callspec.params or "sample" not in callspec.params:
            continue
        key = id(item.parent)
        if key not in bench_of:
            case = case_for(item)
            bench_of[key] = case[0] if case is not None else None
        bench = bench_of[key]
        if bench is None:
            continue
        model, sample = callspec.params["jeval_model"], callspec.params["sample"]
        selected.setdefault((bench, model), set()).add(sample.id)
        if item.nodeid in lastfailed or item.nodeid == stepwise:
            asked.add((bench, model, sample.id))
    full: set[Pair] = set()
    for pair, ids in selected.items():
        planned = {s.id for s in plan.samples(pair[0])[0]}
        if ids >= planned:
            full.add(pair)
        else:
            asked.update((pair[0], pair[1], rid) for rid in ids)
    return Selection(selected=selected, full=full, explicit=asked)
