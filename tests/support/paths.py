"""Where the repository and its test data are, for every test module."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository root."""
TEST_DATA = REPO / "tests" / "data"
"""The real-format public datasets the tests read (one folder each; see their READMEs)."""
