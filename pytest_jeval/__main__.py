"""``python -m pytest_jeval``: the ``jeval`` command."""

from __future__ import annotations

import sys

from pytest_jeval.cli import main

if __name__ == "__main__":
    sys.exit(main())
