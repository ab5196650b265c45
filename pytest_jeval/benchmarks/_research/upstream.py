"""Protocol data read from a user's clone of an upstream repository, without running any of it.

Judge prompts, fixed checklists and rubric tables live in upstream's Python source. :func:`literal` reads one
top-level assignment of a literal (a string, a dict of strings) from such a file with :mod:`ast`, and
:func:`fstring` reads a prompt that a function builds as an f-string (or returns as a string), as a template that
:func:`render` fills, so a benchmark uses the exact text the authors grade with while this repository ships none of
it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

__all__ = ["Template", "UpstreamError", "fstring", "literal", "render"]


Template = list[Any]
"""A prompt as parts: a string is text, a one-element list ``[name]`` is a value :func:`render` fills in."""


class UpstreamError(ValueError):
    """The file is missing, is not Python, or holds no literal assignment of that name."""


def _parse(path: Path) -> ast.Module:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except OSError as exc:
        raise UpstreamError(f"cannot read {path}: {exc}") from None
    except SyntaxError as exc:
        raise UpstreamError(f"{path} is not Python source: {exc}") from None


def literal(path: Path, name: str) -> Any:
    """The value of the top-level ``name = <literal>`` in the Python file ``path`` (read, never run)."""
    tree = _parse(path)
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


def fstring(path: Path, function: str, target: str | None, fill: set[str]) -> Template:
    """The prompt the top-level ``function`` of ``path`` (or ``"Class.method"``) assigns to ``target`` (or returns,
    for ``target=None``) as an f-string or a string, as a :data:`Template` (read, never run).

    A ``{name}`` (or ``{name.attribute}``, named so) of the f-string stays a part to fill when it is in ``fill``;
    otherwise it must be a string literal assigned at the top of the file (a rubric table), which is put in now.
    UpstreamError for anything else: a conversion or format spec, an expression, a name of neither kind, no such
    function or assignment.
    """
    tree = _parse(path)
    owner, _, name = function.rpartition(".")
    body: list[ast.stmt] = tree.body
    if owner:
        klass = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        body = klass.body if klass is not None else []
    found = next((n for n in body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if found is None:
        raise UpstreamError(f"{path} defines no {function}()")
    where = f"{path}:{function}()" + (f" {target}" if target else " return value")
    value: ast.expr | None = None
    for node in ast.walk(found):
        if target is None and isinstance(node, ast.Return) and node.value is not None:
            value = node.value
        elif (target is not None and isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Name) and node.targets[0].id == target):
            value = node.value
        if value is not None:
            break
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return [value.value]
    if not isinstance(value, ast.JoinedStr):
        raise UpstreamError(f"{where} is not a string or an f-string")
    parts: Template = []
    for part in value.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            parts.append(part.value)
            continue
        if not isinstance(part, ast.FormattedValue) or part.conversion != -1 or part.format_spec is not None:
            raise UpstreamError(f"{where} has a replacement field other than {{name}}")
        field = _dotted(part.value)
        if field is None:
            raise UpstreamError(f"{where} has a replacement field other than {{name}} or {{name.attribute}}")
        if field in fill:
            parts.append([field])
            continue
        text = literal(path, field) if "." not in field else None
        if not isinstance(text, str):
            raise UpstreamError(f"{where} uses {field}, which is neither filled in nor a string in {path}")
        parts.append(text)
    return parts


def _dotted(node: ast.expr) -> str | None:
    """``name`` or ``name.attribute`` (as that text), else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def render(template: Template, values: dict[str, str]) -> str:
    """The prompt of ``template`` with its ``[name]`` parts filled from ``values`` (KeyError for a missing one)."""
    return "".join(part if isinstance(part, str) else str(values[part[0]]) for part in template)
