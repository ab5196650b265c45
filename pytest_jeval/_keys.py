"""Stash keys shared by the plugin's modules (kept import-light: pytest loads this for every run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    # Named by the StashKey subscripts below (forward references that ruff does not read).
    from pytest_jeval.plan import EvalPlan  # noqa: F401
    from pytest_jeval.runtime import ItemCase, Runtime  # noqa: F401

plan_key = pytest.StashKey["EvalPlan"]()
"""The validated suite of this run (``config.stash``)."""
runtime_key = pytest.StashKey["Runtime"]()
"""The per-process runtime: scheduler, prefetch, resumed records (``config.stash``)."""
case_key = pytest.StashKey["ItemCase"]()
"""What a benchmark item is about and what happened while it ran (``item.stash``)."""
