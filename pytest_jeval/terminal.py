"""The results table printed in pytest's terminal summary."""

from __future__ import annotations

from typing import Any, Optional, Sequence


def _fmt(value: Optional[float], spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _tokens(summary: dict[str, Any]) -> str:
    p, c = summary.get("total_prompt_tokens"), summary.get("total_completion_tokens")
    if p is None and c is None:
        return "-"
    return f"{int(p or 0)}/{int(c or 0)}"


def results_table(summaries: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """Lines of a table with one row per (benchmark, model)."""
    header = ("benchmark", "model", "n", "accuracy", "95% CI", "errors", "unscored", "mean latency", "tokens in/out")
    rows: list[Sequence[str]] = []
    for (bench, model), s in sorted(summaries.items()):
        ci = s.get("accuracy_ci")
        rows.append(
            (
                bench,
                model,
                str(s["total_samples"]),
                _fmt(s.get("accuracy")),
                "-" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
                str(s["errors"]),
                str(s["unscored"]),
                "-" if s.get("mean_latency_seconds") is None else f"{s['mean_latency_seconds']:.3f}s",
                _tokens(s),
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    right = {2, 3, 5, 6, 7, 8}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    return out
