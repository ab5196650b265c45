"""The result-file fixtures of the ``jeval`` command tests (``tests/data/results/``; regenerate them with
``make_fixtures.py`` there) and small writers of result files.

The quickstart pair is built so that its comparison is known by hand: on the 11 shared ids, B errored
once; of the 10 ids answered by both, A alone is right on 1 and B alone on 4; every B latency is the A
latency minus 0.25 s.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.cli import main
from tests.support.paths import TEST_DATA

DATA = TEST_DATA / "results"
A = DATA / "quickstart_model-a.jsonl"
B = DATA / "quickstart_model-b.jsonl"
JUDGE = DATA / "halueval-judge_judge-a.jsonl"


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    """Run ``jeval argv`` in process: (exit status, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def copy_run(src: Path, dest: Path) -> Path:
    """Copy a results file and its stored summary into ``dest``."""
    target = dest / src.name
    shutil.copy(src, target)
    shutil.copy(src.with_name(src.name + ".summary.json"), target.with_name(target.name + ".summary.json"))
    return target


def write_run(path: Path, outcomes: list[bool], model: str) -> Path:
    """A results file (no stored summary) with one record per outcome, ids ``r-0``, ``r-1``, ..."""
    lines = [json.dumps({"record_id": f"r-{i}", "benchmark": "toy", "model": model, "is_correct": ok,
                         "score": float(ok), "error": None, "latency_seconds": 1.0}) for i, ok in enumerate(outcomes)]
    path.write_text("\n".join(lines) + "\n")
    return path


def paired_runs(tmp_path: Path, both: int, a_only: int, b_only: int, neither: int) -> tuple[Path, Path]:
    """Two runs on the same ids with the given 2x2 table of correctness."""
    a = [True] * both + [True] * a_only + [False] * b_only + [False] * neither
    b = [True] * both + [False] * a_only + [True] * b_only + [False] * neither
    return write_run(tmp_path / "toy_a.jsonl", a, "a"), write_run(tmp_path / "toy_b.jsonl", b, "b")
