"""Metrics for benchmark results, public at ``pytest_jeval.metrics``: pure functions of predictions and gold
answers (they live in :mod:`pytest_jeval.scoring.metrics`; this module is their stable import path)."""

from __future__ import annotations

from pytest_jeval.scoring.metrics import *  # noqa: F403
from pytest_jeval.scoring.metrics import __all__  # noqa: F401
