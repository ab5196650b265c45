"""``jeval list`` prints the backends a suite can name (as the reference's ``list`` does) and the engines."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_jeval.agents.external.base import BACKENDS
from pytest_jeval.calls.engines import ENGINES
from pytest_jeval.cli import _list, main
from pytest_jeval.suite.config import BACKEND_ALIASES, backend_names
from tests.support.result_files import run as run_cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def section(out: str, title: str) -> dict[str, list[str]]:
    """``{name: cells}`` of a text section's table (cells split on runs of two or more spaces)."""
    import re

    lines = out.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0].splitlines()[2:]  # skip header and rule
    return {cells[0]: cells for cells in (re.split(r"\s{2,}", line.strip()) for line in lines)}


def test_backends_and_engines_in_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "list")
    assert code == 0
    backends = section(out, "backends")
    assert list(backends) == ["direct", "agent", *BACKENDS.names()]
    assert {"hermes", "openclaw", "command"} <= set(BACKENDS.names())
    assert backends["direct"][1:3] == ["jarvis-direct", "built-in"]
    assert backends["agent"][1:3] == ["jarvis-agent", "built-in"]
    assert all(backends[n][1:3] == ["-", "external agent"] for n in ("hermes", "openclaw", "command"))
    assert "Hermes Agent" in backends["hermes"][3] and "OpenClaw" in backends["openclaw"][3]
    engines = section(out, "engines")
    assert list(engines) == ENGINES.names() and engines["vllm"][1] == "http://localhost:8000/v1"
    code, out = run(capsys, "list", "--json")
    data = json.loads(out)
    assert {b["name"] for b in data["backends"]} == {*BACKEND_ALIASES.values(), *BACKENDS.names()}
    spellings = {a for b in data["backends"] for a in [b["name"], *b["aliases"]]}
    assert spellings == set(backend_names())  # every spelling a suite may use is listed once
    assert all(b["description"] for b in data["backends"])
    assert [(e["name"], e["default_base_url"]) for e in data["engines"]] == [
        (n, e.default_base_url) for n, e in ENGINES.items()]
    assert data["benchmarks"] and data["evaluators"]  # the other catalogs are still there


def test_an_agent_registered_by_a_plugin_is_listed(capsys: pytest.CaptureFixture[str],
                                                   request: pytest.FixtureRequest) -> None:
    def my_agent(options: Any) -> Any:
        return None

    BACKENDS.register("my-agent", my_agent)
    request.addfinalizer(lambda: BACKENDS.unregister("my-agent"))
    _code, out = run(capsys, "list", "--json")
    mine = next(b for b in json.loads(out)["backends"] if b["name"] == "my-agent")
    assert mine == {"name": "my-agent", "aliases": [], "kind": "external agent",
                    "description": "an external agent registered by a plugin"}


# -- benchmarks and evaluators ---------------------------------------------------------------

def test_list_benchmarks_and_evaluators(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    class Exact:
        kinds = ("boolean",)

    class Judge:
        kinds, default_scale, uses_model, description = ("score",), (0, 4), True, "rubric"

    class Pairwise:
        kinds, choice_labels, uses_model = ("choice",), ("1", "2", "tie"), True

    monkeypatch.setattr(_list, "load_evaluators", lambda: {"llm_judge": Judge, "exact_match": Exact,
                                                           "pairwise": Pairwise})
    code, out, _ = run_cli(capsys, "list")
    assert code == 0
    assert any(line.split()[:4] == ["gsm8k", "math", "openai/gsm8k", "1319"] for line in out.splitlines())
    rows = {line.split()[0]: line.split() for line in out.split("evaluators:")[1].split("\n\n")[0].splitlines()[3:]}
    assert rows == {"exact_match": ["exact_match", "code", "boolean", "true/false"],
                    "llm_judge": ["llm_judge", "llm", "score", "0-4"],
                    "pairwise": ["pairwise", "llm", "choice", "1/2/tie"]}
    code, out, _ = run_cli(capsys, "list", "--json")
    evaluators = json.loads(out)["evaluators"]
    assert [e["name"] for e in evaluators] == ["exact_match", "llm_judge", "pairwise"]
    assert evaluators[1] == {"name": "llm_judge", "category": "llm", "dataset": None, "kind": "score", "scale": "0-4",
                             "description": "rubric"}


def test_list_the_real_evaluator_registry(capsys: pytest.CaptureFixture[str]) -> None:
    _code, out, _ = run_cli(capsys, "list", "--json")
    evaluators = {e["name"]: e for e in json.loads(out)["evaluators"]}
    assert evaluators["sql"]["category"] == "code" and evaluators["factuality"]["scale"] == "A/B/C/D/E"


def test_list_without_an_evaluator_registry(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_list, "load_evaluators", lambda: None)
    code, out, _ = run_cli(capsys, "list")
    assert code == 0 and "evaluators: none" in out and "quickstart" in out


