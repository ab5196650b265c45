"""Stash keys shared by the plugin's modules, and what an item's ids say about it (kept import-light:
pytest loads this for every run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    # Named by the StashKey subscripts below (forward references that ruff does not read).
    from pytest_jeval.core.case import ItemCase  # noqa: F401
    from pytest_jeval.core.sample import Sample
    from pytest_jeval.session.runtime import Runtime  # noqa: F401
    from pytest_jeval.suite.plan import EvalPlan  # noqa: F401

plan_key = pytest.StashKey["EvalPlan"]()
"""The validated suite of this run (``config.stash``)."""
runtime_key = pytest.StashKey["Runtime"]()
"""The per-process runtime: scheduler, prefetch, resumed records (``config.stash``)."""
case_key = pytest.StashKey["ItemCase"]()
"""What a benchmark item is about and what happened while it ran (``item.stash``)."""


def case_for(item: pytest.Item) -> tuple[str, str, Sample] | None:
    """(benchmark key, model key, sample) for a jeval benchmark item, else None."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "jeval_model" not in callspec.params or "sample" not in callspec.params:
        return None
    node = item.parent
    while node is not None and not getattr(node, "is_jeval_benchmark", False):
        node = node.parent
    if node is None:
        return None
    return node.name, callspec.params["jeval_model"], callspec.params["sample"]
