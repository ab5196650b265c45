"""pytest-jeval: LLM benchmarks as pytest test suites.

Public API for writing benchmark modules::

    from pytest_jeval import Benchmark, HubDataset, Sample, Score, ScoreSink
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_jeval._lazy import lazy_getattr

if TYPE_CHECKING:
    from pytest_jeval.benchmark import Benchmark, HubDataset, LoadContext
    from pytest_jeval.client import ModelClient
    from pytest_jeval.engines.base import EndpointError, Reply, TokenLogprob
    from pytest_jeval.sample import Sample
    from pytest_jeval.score import Score, ScoreSink

__version__ = "0.1.0"

# Resolved on first use, so that loading the pytest plugin stays cheap.
_EXPORTS = {
    "Benchmark": "pytest_jeval.benchmark",
    "HubDataset": "pytest_jeval.benchmark",
    "LoadContext": "pytest_jeval.benchmark",
    "ModelClient": "pytest_jeval.client",
    "EndpointError": "pytest_jeval.engines.base",
    "Reply": "pytest_jeval.engines.base",
    "TokenLogprob": "pytest_jeval.engines.base",
    "Sample": "pytest_jeval.sample",
    "Score": "pytest_jeval.score",
    "ScoreSink": "pytest_jeval.score",
}


__getattr__ = lazy_getattr("pytest_jeval", _EXPORTS)

# A literal, so that type checkers see the public names (PEP 484 re-exports); a test keeps it equal to _EXPORTS.
__all__ = [
    "Benchmark",
    "EndpointError",
    "HubDataset",
    "LoadContext",
    "ModelClient",
    "Reply",
    "Sample",
    "Score",
    "ScoreSink",
    "TokenLogprob",
    "__version__",
]
