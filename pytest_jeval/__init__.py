"""pytest-jeval: LLM benchmarks as pytest test suites.

Public API for writing benchmark modules::

    from pytest_jeval import Benchmark, HubDataset, Sample, Score
"""

from __future__ import annotations

from pytest_jeval.benchmark import Benchmark, HubDataset, LoadContext
from pytest_jeval.client import ModelClient
from pytest_jeval.engines.base import EndpointError, Reply, TokenLogprob
from pytest_jeval.sample import Sample
from pytest_jeval.score import Score

__version__ = "0.1.0"

__all__ = [
    "Benchmark",
    "EndpointError",
    "HubDataset",
    "LoadContext",
    "ModelClient",
    "Reply",
    "Sample",
    "Score",
    "TokenLogprob",
    "__version__",
]
