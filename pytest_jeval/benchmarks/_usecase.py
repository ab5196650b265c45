"""Shared helpers of the synthetic use-case sets (security_scanner, doc_qa, email_triage).

* :func:`labelled_field` reads ``NAME: value`` lines of a structured reply (markdown
  bold, bullets and headings around the label are tolerated; the last such line wins).
* :func:`composite_score` turns weighted component scores into a :class:`Score` whose
  ``value`` is the weighted sum and whose ``correct`` is ``value >= threshold``.
* :func:`summarize_composite` adds the mean composite score and the mean of each
  component to a benchmark's summary.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_jeval.benchmarks._codeexec import strip_reasoning
from pytest_jeval.core.score import Score

_LABEL = r"^[ \t>*_#\-]*{name}[ \t*_]*[:=][ \t*_]*(?P<value>.*)$"


def _label_matches(text: str, name: str) -> list[re.Match[str]]:
    pattern = re.compile(_LABEL.format(name=re.escape(name).replace(r"\ ", r"[ _]")), re.I | re.M)
    return list(pattern.finditer(text))


def labelled_field(text: str, *names: str, multiline: bool = False, first: bool = False) -> str | None:
    """The value after a ``NAME:`` line (case-insensitive), or None.

    ``names`` are tried in order: a later name is only used when no earlier one occurs.
    The last line with the name wins (a final answer after reasoning), or the first
    with ``first``. With ``multiline`` the value runs to the end of the reply (a draft).
    """
    text = strip_reasoning(text)
    for name in names:
        found = _label_matches(text, name)
        if not found:
            continue
        m = found[0] if first else found[-1]
        if multiline:
            return (m.group("value") + text[m.end():]).strip().strip("*_").strip()
        return m.group("value").strip().strip("*_` ").strip()
    return None


def before_label(text: str, *names: str) -> str:
    """The reply up to the first line labelled with the first of ``names`` that occurs (all of it when none does)."""
    text = strip_reasoning(text)
    for name in names:
        found = _label_matches(text, name)
        if found:
            return text[: found[0].start()]
    return text


def composite_score(
    components: dict[str, float],
    weights: dict[str, float],
    threshold: float,
    *,
    extracted: Any,
    expected: Any,
    metadata: dict[str, Any],
) -> Score:
    """``value = sum(weight * component)`` (rounded to 4 places); correct iff ``value >= threshold``."""
    value = round(sum(weights[k] * components[k] for k in weights), 4)
    meta = {
        "components": {k: round(v, 4) for k, v in components.items()},
        "weights": dict(weights),
        "threshold": threshold,
        **metadata,
    }
    if value < threshold and "reason" not in meta:
        weakest = sorted((v, k) for k, v in components.items() if k in weights and v < 1.0)
        meta["reason"] = (f"score {value:g} < threshold {threshold:g}; lowest: "
                          + ", ".join(f"{k} {v:.2f}" for v, k in weakest[:3]))
    return Score(correct=value >= threshold, value=value, extracted=extracted, expected=expected, metadata=meta)


def summarize_composite(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean composite score and mean of each component over the samples that did not error."""
    values: list[float] = []
    parts: dict[str, list[float]] = {}
    for r in records:
        if r.get("error") is not None:
            continue
        values.append(float(r["score"]) if r.get("score") is not None else 0.0)
        for name, v in ((r.get("scoring_metadata") or {}).get("components") or {}).items():
            parts.setdefault(name, []).append(float(v))
    return {
        "mean_score": round(sum(values) / len(values), 4) if values else None,
        "component_means": {k: round(sum(v) / len(v), 4) for k, v in sorted(parts.items())},
    }
