"""``jeval list``: the built-in benchmarks, the registered evaluators, the backends and the engines."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pytest_jeval.catalog import CatalogError, catalog_rows
from pytest_jeval.cli._table import table


def load_evaluators() -> dict[str, Any] | None:
    """The evaluator registry (name -> evaluator class), or None when it cannot be imported.

    A broken installed evaluator (entry point) raises EvaluatorLoadError, reported by :func:`run`.
    """
    try:
        from pytest_jeval.judge_bench import evaluator_classes
    except ImportError:
        return None
    return evaluator_classes()


def evaluator_scale(evaluator: Any) -> str:
    """``0-4`` for a score scale, ``A/B/C`` for choice labels, ``true/false`` for a boolean case."""
    low_high = getattr(evaluator, "default_scale", None)
    if low_high:
        return f"{low_high[0]}-{low_high[1]}"
    labels = getattr(evaluator, "choice_labels", ())
    if labels:
        return "/".join(str(x) for x in labels)
    kinds = tuple(getattr(evaluator, "kinds", ()) or ())
    return "true/false" if kinds[:1] == ("boolean",) else "-"


def evaluator_rows() -> list[dict[str, Any]] | None:
    """One row per registered evaluator (name, category, dataset, kind, scale, description);
    None when no evaluator registry is importable."""
    registry = load_evaluators()
    if registry is None:
        return None
    rows = []
    for name, evaluator in sorted(registry.items()):
        rows.append({
            "name": name,
            "category": "llm" if getattr(evaluator, "uses_model", False) else "code",
            "dataset": None,  # evaluators run on the gold set the suite names
            "kind": "/".join(getattr(evaluator, "kinds", ()) or ()) or None,
            "scale": evaluator_scale(evaluator),
            "description": getattr(evaluator, "description", "") or "",
        })
    return rows


#: What each built-in backend is, in words.
BACKEND_DESCRIPTIONS = {
    "direct": "one chat call per sample to the model's OpenAI-compatible endpoint (local or cloud)",
    "agent": "tool-calling loop, one episode per sample: the benchmark's tools or the suite's tools",
    "hermes": "Nous Research's Hermes Agent CLI, one headless process per episode, behind a recording proxy",
    "openclaw": "OpenClaw (npm openclaw), one embedded agent run per episode, behind a recording proxy",
    "command": "your own agent command ([[benchmarks]] command = [...]), one process per episode, behind a proxy",
}
ENGINE_DESCRIPTIONS = {
    "openai": "any OpenAI-compatible endpoint (base_url)",
    "cloud": "a hosted OpenAI-compatible API (base_url)",
    "vllm": "a vLLM server",
    "sglang": "an SGLang server",
    "ollama": "an Ollama server",
    "llamacpp": "a llama.cpp server",
    "local": "the bundled local model (llama-cpp-python), runs offline",
}


def backend_rows() -> list[dict[str, Any]]:
    """One row per backend a suite may name: the built-in ones (``BACKEND_ALIASES`` of the suite schema)
    and every registered external agent (name, aliases, kind, description)."""
    from pytest_jeval.config import BACKEND_ALIASES
    from pytest_jeval.external import registered_agents

    names = list(dict.fromkeys([*BACKEND_ALIASES.values(), *registered_agents()]))
    return [{
        "name": name,
        "aliases": sorted(k for k, v in BACKEND_ALIASES.items() if v == name and k != name),
        "kind": "built-in" if name in ("direct", "agent") else "external agent",
        "description": BACKEND_DESCRIPTIONS.get(name, "an external agent registered by a plugin"),
    } for name in names]


def engine_rows() -> list[dict[str, Any]]:
    """One row per ``engine`` a ``[[models]]`` entry may name, with its default base URL."""
    from pytest_jeval.config import ENGINES, OPENAI_COMPATIBLE_ENGINES

    return [{"name": name, "protocol": "local" if name == "local" else "openai-chat",
             "default_base_url": OPENAI_COMPATIBLE_ENGINES.get(name),
             "description": ENGINE_DESCRIPTIONS.get(name, "")} for name in ENGINES]


def _cell(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def run(args: argparse.Namespace) -> int:
    """Print the benchmarks, backends, engines and evaluators (``--json``: as one object); a broken installed
    benchmark or evaluator is an error."""
    from pytest_jeval.judge_bench.registry import EvaluatorLoadError

    try:
        benchmarks = catalog_rows()
        evaluators = evaluator_rows()
        backends = backend_rows()
        engines = engine_rows()
    except (CatalogError, EvaluatorLoadError) as exc:
        from pytest_jeval.cli._read import FAILED

        print(f"jeval: error: {exc}", file=sys.stderr)
        return FAILED
    if args.json:
        print(json.dumps({"benchmarks": benchmarks, "evaluators": evaluators, "backends": backends,
                          "engines": engines}, indent=2))
        return 0
    print("benchmarks:")
    bench_header = ("name", "category", "dataset", "samples", "scorer")
    rows = [[_cell(b[h]) for h in bench_header] for b in benchmarks]
    print("\n".join("  " + line for line in table(bench_header, rows, right={3})))
    print()
    if evaluators is None:
        print("evaluators: none (pytest_jeval.judge_bench has no evaluator registry)")
    else:
        print("evaluators:")
        header = ("name", "category", "kind", "scale")
        rows = [[_cell(e[h]) for h in header] for e in evaluators]
        print("\n".join("  " + line for line in table(header, rows)))
    print()
    print("backends:")
    backend_header = ("name", "aliases", "kind", "description")
    rows = [[b["name"], ", ".join(b["aliases"]) or "-", b["kind"], _cell(b["description"])] for b in backends]
    print("\n".join("  " + line for line in table(backend_header, rows)))
    print()
    print("engines:")
    engine_header = ("name", "default_base_url", "description")
    rows = [[_cell(e[h]) for h in engine_header] for e in engines]
    print("\n".join("  " + line for line in table(engine_header, rows)))
    return 0
