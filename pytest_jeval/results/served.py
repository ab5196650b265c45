"""Fingerprints: what the endpoint said served each answer, so that drift is told from noise.

Every record keeps ``served``: the reply's ``model``, its ``system_fingerprint`` and the ``seed``
the request sent (:func:`~pytest_jeval.results.records.served_fields`). :func:`served_summary` is the
summary's ``served`` block: the distinct values with their record counts (and how many of them came
from the response cache), and a ``warning`` when one run was served by more than one model or
fingerprint. :func:`served_change` says how a run differs from an earlier one (the writer compares a
pair's new summary with the one it replaces; ``jeval compare`` compares its files).
"""

from __future__ import annotations

from typing import Any

__all__ = ["served_change", "served_summary", "served_values"]

_NULL = "(none)"
"""How a missing fingerprint or seed is counted."""


def _count(into: dict[str, dict[str, int]], value: Any, cached: bool) -> None:
    key = _NULL if value is None else str(value)
    slot = into.setdefault(key, {"records": 0, "cached": 0})
    slot["records"] += 1
    slot["cached"] += int(cached)


def served_summary(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``served`` block: ``models``, ``system_fingerprints`` and ``seeds``, each value -> ``{records,
    cached}``; ``warning`` when the run's answers came from several models or fingerprints. None when no
    record says what served it."""
    models: dict[str, dict[str, int]] = {}
    prints: dict[str, dict[str, int]] = {}
    seeds: dict[str, dict[str, int]] = {}
    for r in records:
        served = r.get("served")
        if not isinstance(served, dict):
            continue
        cached = r.get("cached") is True
        for value in served.get("models") or [served.get("model")]:
            _count(models, value, cached)
        for value in served.get("system_fingerprints") or [served.get("system_fingerprint")]:
            _count(prints, value, cached)
        _count(seeds, served.get("seed"), cached)
    if not models:
        return None
    out: dict[str, Any] = {"models": dict(sorted(models.items())), "system_fingerprints": dict(sorted(prints.items())),
                           "seeds": dict(sorted(seeds.items()))}
    warning = _warning(models, prints)
    if warning is not None:
        out["warning"] = warning
    return out


def _listed(values: dict[str, dict[str, int]]) -> str:
    parts = []
    for value, n in values.items():
        cached = f", {n['cached']} from the cache" if n["cached"] else ""
        parts.append(f"{value} ({n['records']} record{'s' if n['records'] != 1 else ''}{cached})")
    return ", ".join(parts)


def _warning(models: dict[str, dict[str, int]], prints: dict[str, dict[str, int]]) -> str | None:
    known = {k: v for k, v in prints.items() if k != _NULL}
    problems = []
    if len(models) > 1:
        problems.append(f"{len(models)} models: {_listed(models)}")
    if len(known) > 1:
        problems.append(f"{len(known)} system fingerprints: {_listed(known)}")
    if not problems:
        return None
    return ("served by " + "; ".join(problems) + ". The endpoint changed what it serves during this run (or the "
            "cache holds answers from an earlier configuration): differences between these records may be drift, "
            "not noise")


def served_values(summary_or_records: dict[str, Any] | list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """The distinct served models and (known) fingerprints of a summary's ``served`` block, or of records."""
    block = summary_or_records.get("served") if isinstance(summary_or_records, dict) else served_summary(
        summary_or_records)
    if not isinstance(block, dict):
        return set(), set()
    models = set(block.get("models") or {})
    prints = {k for k in (block.get("system_fingerprints") or {}) if k != _NULL}
    return models, prints


def served_change(before: tuple[set[str], set[str]], after: tuple[set[str], set[str]],
                  what: str = "the previous run") -> str | None:
    """How ``after`` (models, fingerprints) differs from ``before``, in words; None when nothing new appeared
    (or either side names none)."""
    (models_a, prints_a), (models_b, prints_b) = before, after
    parts = []
    if models_a and models_b and models_b - models_a:
        parts.append(f"model {', '.join(sorted(models_b - models_a))} where {what} had {', '.join(sorted(models_a))}")
    if prints_a and prints_b and prints_b - prints_a:
        parts.append(f"system fingerprint {', '.join(sorted(prints_b - prints_a))} where {what} had "
                     f"{', '.join(sorted(prints_a))}")
    return "; ".join(parts) if parts else None
