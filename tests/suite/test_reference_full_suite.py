"""The reference's own ``full-suite.toml`` (its evals documentation, transcribed) validates as it is, with
``agent = "orchestrator"`` on its agent benchmark; with taubench added, the named agent is honoured."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_jeval.suite.config import SuiteError
from pytest_jeval.suite.plan import EvalPlan

FULL_SUITE = """\
# Suite-level metadata (optional)
[meta]
name = "full-suite-v1"
description = "Evaluate all benchmarks against production models"

# Default generation parameters (optional)
[defaults]
temperature = 0.0
max_tokens = 2048

# LLM judge configuration (optional)
[judge]
model = "gpt-4o"
temperature = 0.0
max_tokens = 1024

# Execution settings (optional)
[run]
max_workers = 4
output_dir = "results/"
seed = 42

# --- Models (one [[models]] block per model) ---

[[models]]
name = "qwen3:8b"
engine = "ollama"
temperature = 0.3    # overrides [defaults] for this model
max_tokens = 4096

[[models]]
name = "gpt-4o"
provider = "openai"  # uses cloud engine

[[models]]
name = "llama3:70b"
engine = "vllm"
temperature = 0.1

# --- Benchmarks (one [[benchmarks]] block per benchmark) ---

[[benchmarks]]
name = "supergpqa"
backend = "jarvis-direct"
max_samples = 200
split = "train"

[[benchmarks]]
name = "gaia"
backend = "jarvis-agent"
agent = "orchestrator"
tools = ["file_read", "calculator"]
max_samples = 50
judge_model = "claude-sonnet-4-20250514"  # override judge for this benchmark

[[benchmarks]]
name = "frames"
backend = "jarvis-direct"
max_samples = 100

[[benchmarks]]
name = "wildchat"
backend = "jarvis-direct"
max_samples = 150
temperature = 0.7   # override temperature for this benchmark
"""


def test_the_reference_full_suite_validates(tmp_path: Path) -> None:
    path = tmp_path / "full-suite.toml"
    path.write_text(FULL_SUITE)
    plan = EvalPlan.from_file(path, invocation_dir=tmp_path)
    assert {k: (b.backend, b.agent) for k, b in plan.benchmarks.items()} == {
        "supergpqa": ("direct", "orchestrator"), "gaia": ("agent", "orchestrator"),
        "frames": ("direct", "orchestrator"), "wildchat": ("direct", "orchestrator")}


def test_taubench_in_the_full_suite_takes_its_named_agent(tmp_path: Path) -> None:
    path = tmp_path / "full-suite.toml"
    taubench = '\n[[benchmarks]]\nname = "taubench"\nbackend = "jarvis-agent"\nagent = "{agent}"\nsubset = "airline"\n'
    path.write_text(FULL_SUITE + taubench.format(agent="react"))
    with pytest.raises(SuiteError, match=r"'taubench' talks with a simulated user played by the \[user\] model"):
        EvalPlan.from_file(path, invocation_dir=tmp_path)
    path.write_text(FULL_SUITE + '[user]\nmodel = "gpt-4o"\n' + taubench.format(agent="react"))
    assert EvalPlan.from_file(path, invocation_dir=tmp_path).benchmarks["taubench"].agent == "react"
    path.write_text(FULL_SUITE + taubench.format(agent="oracle"))  # the oracle needs no [user]
    planned = EvalPlan.from_file(path, invocation_dir=tmp_path).benchmarks["taubench"]
    assert planned.agent == "oracle" and not planned.calls_model
