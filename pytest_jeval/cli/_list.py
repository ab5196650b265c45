"""``jeval list``: the built-in benchmarks, the registered evaluators, the backends and the engines."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from pytest_jeval.cli._table import table
from pytest_jeval.suite.catalog import CatalogError, catalog_rows


def load_evaluators() -> dict[str, Any] | None:
    """The evaluator registry (name -> evaluator class), or None when it cannot be imported.

    A broken installed evaluator (entry point) raises EvaluatorLoadError, reported by :func:`run`.
    """
    try:
        from pytest_jeval.scoring.judging.registry import evaluator_classes
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
}


def backend_rows() -> list[dict[str, Any]]:
    """One row per backend a suite may name: the built-in ones (``BACKEND_ALIASES`` of the suite schema)
    and every registered external agent (name, aliases, kind, description)."""
    from pytest_jeval.agents.external import BACKENDS
    from pytest_jeval.suite.config import BACKEND_ALIASES

    names = list(dict.fromkeys([*BACKEND_ALIASES.values(), *BACKENDS.names()]))
    return [{
        "name": name,
        "aliases": sorted(k for k, v in BACKEND_ALIASES.items() if v == name and k != name),
        "kind": "built-in" if name in ("direct", "agent") else "external agent",
        "description": BACKEND_DESCRIPTIONS.get(name) or _first_line(BACKENDS.get(name).__doc__)
        or "an external agent registered by a plugin",
    } for name in names]


def _first_line(doc: str | None) -> str:
    """The first sentence of a docstring or description."""
    return (doc or "").strip().split("\n")[0].split(". ")[0].rstrip(".")


def engine_rows() -> list[dict[str, Any]]:
    """One row per ``engine`` a ``[[models]]`` entry may name, with its default base URL."""
    from pytest_jeval.calls.engines import ENGINES

    return [{"name": name, "protocol": getattr(engine, "protocol", "-"),
             "default_base_url": engine.default_base_url, "description": engine.description,
             "origin": ENGINES.origin(name)} for name, engine in ENGINES.items()]


def family_rows() -> dict[str, list[dict[str, Any]]]:
    """The other families, one row per member (name, origin, description): tools, named agents, scorers,
    sandbox providers and exporters, each as its registry holds them (built in, registered, installed)."""
    from pytest_jeval.agents.named import AGENTS
    from pytest_jeval.agents.tools import TOOLS
    from pytest_jeval.exports import EXPORTERS
    from pytest_jeval.sandbox.shell.providers import SANDBOXES
    from pytest_jeval.suite.catalog import all_scorer_names, load_scorer

    def rows(registry: Any, names: list[str], describe: Any) -> list[dict[str, Any]]:
        return [{"name": n, "origin": registry.origin(n), "description": describe(n)} for n in names]

    from pytest_jeval.scoring.registry import SCORERS

    return {
        "tools": rows(TOOLS, TOOLS.names(), lambda n: _first_line(TOOLS.get(n).description)),
        "agents": rows(AGENTS, AGENTS.names(), lambda n: AGENTS.get(n).description),
        "scorers": rows(SCORERS, all_scorer_names(), lambda n: _first_line(load_scorer(n).fn.__doc__)),
        "sandboxes": rows(SANDBOXES, SANDBOXES.names(), lambda n: _first_line(SANDBOXES.get(n).__doc__)),
        "exporters": rows(EXPORTERS, EXPORTERS.names(), lambda n: EXPORTERS.get(n).title),
    }


def _cell(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def run(args: argparse.Namespace) -> int:
    """Print the benchmarks, backends, engines and evaluators (``--json``: as one object); a broken installed
    benchmark or evaluator is an error."""
    from pytest_jeval.core.registry import RegistryError
    from pytest_jeval.scoring.judging.registry import EvaluatorLoadError

    try:
        benchmarks = catalog_rows()
        evaluators = evaluator_rows()
        backends = backend_rows()
        engines = engine_rows()
        families = family_rows()
    except (CatalogError, EvaluatorLoadError, RegistryError) as exc:
        from pytest_jeval.cli._read import FAILED

        print(f"jeval: error: {exc}", file=sys.stderr)
        return FAILED
    if args.json:
        print(json.dumps({"benchmarks": benchmarks, "evaluators": evaluators, "backends": backends,
                          "engines": engines, **families}, indent=2))
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
    for family, members in families.items():
        print()
        print(f"{family}:")
        member_header = ("name", "origin", "description")
        rows = [[_cell(m[h]) for h in member_header] for m in members]
        print("\n".join("  " + line for line in table(member_header, rows)))
    return 0
