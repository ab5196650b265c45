"""``jeval run -c configs/quickstart.toml`` is the demo: the same pytest session ``make demo`` runs, the same records.

On the bundled local model (skipped, with the reason, where llama-cpp-python or its GGUF is missing), on a
few of the demo's samples (``-k``) to stay quick; both runs write a fresh output directory and ask the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.local_model

REPO = Path(__file__).resolve().parents[2]
SELECT = "qs-arith-01 or qs-fact-01 or qs-fact-02"
VOLATILE = {"latency_seconds", "throughput_tok_per_sec", "call_windows", "ttft", "cached", "attempts"}


def stable(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {r["record_id"]: {k: v for k, v in r.items() if k not in VOLATILE} for r in rows}


@pytest.mark.slow
def test_config_quickstart_gives_the_records_of_make_demo(tmp_path: Path) -> None:
    config = str(REPO / "configs" / "quickstart.toml")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    # make demo's command line (Makefile `demo`), with a selection and its own output directory
    demo = subprocess.run([sys.executable, "-m", "pytest", "--jeval-config", config, "-p", "no:cacheprovider", "-v",
                           "--jeval-output", "demo", "--jeval-no-cache", "-k", SELECT],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert demo.returncode in (0, 1), demo.stdout[-3000:] + demo.stderr[-3000:]
    quick = subprocess.run([sys.executable, "-m", "pytest_jeval", "run", "-c", config, "-o", "quick", "--",
                            "-p", "no:cacheprovider", "--jeval-no-cache", "-k", SELECT],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert quick.returncode == demo.returncode, quick.stdout[-3000:] + quick.stderr[-3000:]
    assert "repeat with: pytest --jeval-config" in quick.stdout
    name = "quickstart_smollm2-135m.jsonl"
    expected = stable(tmp_path / "demo" / name)
    assert len(expected) == 3 and stable(tmp_path / "quick" / name) == expected
