"""pytest-jeval: LLM benchmarks as pytest test suites.

Public API for writing benchmark modules::

    from pytest_jeval import Benchmark, HubDataset, Sample, Score, ScoreSink
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_jeval.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from pytest_jeval.calls.client import ModelClient
    from pytest_jeval.core.benchmark import Benchmark, FewShot, HubDataset, LoadContext
    from pytest_jeval.core.chat import EndpointError, Reply, TokenLogprob
    from pytest_jeval.core.sample import Sample
    from pytest_jeval.core.score import Score, ScoreSink

__version__ = "0.1.0"

# Resolved on first use, so that loading the pytest plugin stays cheap.
_EXPORTS = {
    "Benchmark": "pytest_jeval.core.benchmark",
    "FewShot": "pytest_jeval.core.benchmark",
    "HubDataset": "pytest_jeval.core.benchmark",
    "LoadContext": "pytest_jeval.core.benchmark",
    "ModelClient": "pytest_jeval.calls.client",
    "EndpointError": "pytest_jeval.core.chat",
    "Reply": "pytest_jeval.core.chat",
    "TokenLogprob": "pytest_jeval.core.chat",
    "Sample": "pytest_jeval.core.sample",
    "Score": "pytest_jeval.core.score",
    "ScoreSink": "pytest_jeval.core.score",
}


__getattr__ = lazy_getattr("pytest_jeval", _EXPORTS)

# A literal, so that type checkers see the public names (PEP 484 re-exports); a test keeps it equal to _EXPORTS.
__all__ = [
    "Benchmark",
    "EndpointError",
    "FewShot",
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
