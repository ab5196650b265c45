"""The ``jeval`` command: works on result files and needs no endpoint.

Sub-commands: ``list``, ``summarize``, ``compare``, ``report`` and ``rescore``
(see docs/cli.md).
"""

from __future__ import annotations

from pytest_jeval.cli._main import build_parser, main

__all__ = ["build_parser", "main"]
