"""The ``jeval`` command: works on result files and needs no endpoint."""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``jeval`` console script."""
    raise SystemExit("jeval: not available yet")
