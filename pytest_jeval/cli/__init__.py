"""The ``jeval`` command.

``run`` and ``run-all`` evaluate models without a suite file (they write one and run pytest
on it; docs/quick-runs.md); ``list``, ``summarize``, ``compare``, ``report`` and ``rescore``
work on result files and need no endpoint (docs/cli.md).
"""

from __future__ import annotations

from pytest_jeval.cli._main import build_parser, main

__all__ = ["build_parser", "main"]
