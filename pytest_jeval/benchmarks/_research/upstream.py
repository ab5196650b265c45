"""Protocol data read from a user's clone of an upstream repository, without running any of it.

Judge prompts, fixed checklists and rubric tables live in upstream's Python source. :func:`literal` reads one
top-level assignment of a literal (a string, a dict of strings) from such a file with :mod:`ast`, so a benchmark
uses the exact text the authors grade with while this repository ships none of it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

__all__ = ["UpstreamError", "literal"]


class UpstreamError(ValueError):
    """The file is missing, is not Python, or holds no literal assignment of that name."""


def literal(path: Path, name: str) -> Any:
    """The value of the top-level ``name = <literal>`` in the Python file ``path`` (read, never run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except OSError as exc:
        raise UpstreamError(f"cannot read {path}: {exc}") from None
    except SyntaxError as exc:
        raise UpstreamError(f"{path} is not Python source: {exc}") from None
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        value = getattr(node, "value", None)
        if value is not None and any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                return ast.literal_eval(value)
            except ValueError:
                raise UpstreamError(f"{path}: {name} is not a literal") from None
    raise UpstreamError(f"{path} assigns no {name}")
