"""A user's project type-checks against pytest-jeval: the benchmark example of docs/writing-benchmarks.md passes ``mypy --strict``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_jeval
from tests.support.docs import doc_example
from tests.support.paths import REPO

MISUSE = '''\
from pytest_jeval import Sample, Score, ScoreSink


def test_wrong(sample: Sample, score: ScoreSink) -> None:
    score("right")
    score(Score(correct=True), Score(correct=False))
'''


def test_public_names_are_listed_literally() -> None:
    """``__all__`` (what type checkers read) and the lazy exports name the same objects, and each resolves."""
    assert sorted(pytest_jeval.__all__) == sorted([*pytest_jeval._EXPORTS, "__version__"])
    for name in pytest_jeval.__all__:
        assert getattr(pytest_jeval, name) is not None


def test_doc_example_passes_mypy_strict(tmp_path: Path) -> None:
    """The package is seen as an installed one (a site directory, so ``py.typed`` decides), not as source."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "pytest_jeval").symlink_to(REPO / "pytest_jeval", target_is_directory=True)
    project = tmp_path / "project"
    project.mkdir()
    (project / "bench_capitals.py").write_text(doc_example("bench_capitals.py"))
    (project / "bench_misuse.py").write_text(MISUSE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MYPY")}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-color-output", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", os.devnull, "bench_capitals.py", "bench_misuse.py"],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )
    lines = [line for line in proc.stdout.splitlines() if ": error:" in line]
    if any("import-untyped" in line or "import-not-found" in line for line in lines):
        pytest.fail("pytest_jeval is not seen as a typed package:\n" + proc.stdout)
    assert [line for line in lines if line.startswith("bench_capitals.py")] == [], proc.stdout
    # the score fixture's type is enforced: both misuses are reported
    assert [line.split(":")[1] for line in lines if line.startswith("bench_misuse.py")] == ["5", "6"], proc.stdout
    assert proc.returncode == 1, proc.stdout + proc.stderr
