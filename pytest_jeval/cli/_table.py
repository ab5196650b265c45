"""Plain-text tables and number formats shared by the ``jeval`` commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def fmt(value: float | None, spec: str = ".3f") -> str:
    """``value`` formatted, ``-`` for a missing one."""
    return "-" if value is None else format(value, spec)


def fmt_ci(ci: Sequence[float] | None, spec: str = ".3f") -> str:
    """``[low, high]``, ``-`` for a missing interval."""
    return "-" if not ci else f"[{ci[0]:{spec}}, {ci[1]:{spec}}]"


def fmt_signed(value: float | None, spec: str = ".3f") -> str:
    """``+0.125`` / ``-0.125``, ``-`` for a missing value."""
    return "-" if value is None else format(value, "+" + spec)


def tokens(summary: dict[str, Any]) -> str:
    """``prompt/completion`` token totals of a summary."""
    p, c = summary.get("total_prompt_tokens"), summary.get("total_completion_tokens")
    if p is None and c is None:
        return "-"
    return f"{int(p or 0)}/{int(c or 0)}"


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], right: frozenset[int] | set[int] = frozenset()
) -> list[str]:
    """Lines of a table: columns padded to their widest cell, ``right`` columns right-aligned."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "  ".join(padded).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]
