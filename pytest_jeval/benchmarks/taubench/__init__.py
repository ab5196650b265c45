"""τ²-bench (``taubench``): the retail and airline domains' data loader, tools, simulated user and reward.

See :mod:`pytest_jeval.benchmarks.taubench.bench_taubench` and docs/taubench.md.
"""

from __future__ import annotations

from pytest_jeval.benchmarks.taubench.data import DOMAINS, INSTALL, REFUSED, DomainData, locate
from pytest_jeval.benchmarks.taubench.db import TauEnv, db_hash, fresh_db

__all__ = ["DOMAINS", "INSTALL", "REFUSED", "DomainData", "TauEnv", "db_hash", "fresh_db", "locate"]
