"""``python -m pytest_jeval`` is the ``jeval`` command."""

from __future__ import annotations

import subprocess
import sys

from tests.support.result_files import A


def test_python_dash_m_entry_point() -> None:
    done = subprocess.run([sys.executable, "-m", "pytest_jeval", "summarize", str(A)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Accuracy:  0.6667" in done.stdout
