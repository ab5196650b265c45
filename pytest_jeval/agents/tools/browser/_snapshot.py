"""The page as the agent reads it: Chromium's accessibility tree as indented text with element references.

The tree comes from the DevTools protocol (``Accessibility.getFullAXTree``), as WebArena's agents read
it; each shown node is one line, ``[ref] role "name"`` and its states (``value``, ``checked``,
``selected``, ``disabled``, ``expanded``, ``level``, ``required``, ``focused``), indented by depth. The
reference is the node's DOM ``backendNodeId``: stable as long as the element lives in the page, so a
reference from the latest snapshot names the same element for the next action. Nodes that carry
nothing for a reader are left out and their children lifted: ignored nodes, unnamed ``generic`` and
``none`` nodes, inline text boxes, and static text that only repeats its parent's name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

#: Roles never shown themselves (their children are).
HIDDEN_ROLES = frozenset({"none", "generic", "InlineTextBox", "LineBreak", "presentation", "ListMarker"})
#: Node properties shown after the name, in this order.
SHOWN_PROPERTIES = ("checked", "selected", "disabled", "expanded", "level", "required", "focused", "readonly")


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """One accessibility snapshot of a page."""

    text: str
    """The indented lines."""
    refs: Mapping[int, str]
    """Each shown reference and its line's ``role "name"``, to describe an action's target."""
    nodes: int
    """Nodes in the tree before pruning."""


def _value(field: Any) -> Any:
    return field.get("value") if isinstance(field, dict) else None


def _quote(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return '"' + text.replace('"', "'") + '"'


def _line(node: Mapping[str, Any], role: str, name: str) -> str:
    parts = [f"[{node['backendDOMNodeId']}] {role}"]
    if name:
        parts.append(_quote(name))
    value = _value(node.get("value"))
    if value not in (None, "") and role not in ("StaticText", "heading", "link"):
        parts.append(f"value={_quote(str(value), 120)}")
    props = {p.get("name"): _value(p.get("value")) for p in node.get("properties") or [] if isinstance(p, dict)}
    for key in SHOWN_PROPERTIES:
        if key in props and props[key] not in (None, False, "false", ""):
            shown = props[key]
            parts.append(key if shown is True or shown == "true" else f"{key}={shown}")
    return " ".join(parts)


def format_tree(nodes: Sequence[Mapping[str, Any]]) -> Snapshot:
    """The snapshot of a ``getFullAXTree`` result's ``nodes``."""
    by_id = {str(n.get("nodeId")): n for n in nodes}
    children_of = {key: [str(c) for c in n.get("childIds") or []] for key, n in by_id.items()}
    child_ids = {c for cs in children_of.values() for c in cs}
    roots = [key for key in by_id if key not in child_ids]
    lines: list[str] = []
    refs: dict[int, str] = {}

    def visit(key: str, depth: int, parent_name: str, seen: set[str]) -> None:
        if key in seen or key not in by_id:
            return
        seen.add(key)
        node = by_id[key]
        role = str(_value(node.get("role")) or "")
        name = str(_value(node.get("name")) or "").strip()
        backend = node.get("backendDOMNodeId")
        shown = not node.get("ignored") and isinstance(backend, int) and role not in HIDDEN_ROLES
        if role in ("generic", "none") and name and isinstance(backend, int) and not node.get("ignored"):
            shown = True
        if role == "StaticText" and (not name or name == parent_name):
            shown = False
        next_depth, next_parent = depth, parent_name
        if shown:
            line = _line(node, role, name)
            lines.append("  " * depth + line)
            assert isinstance(backend, int)
            refs[backend] = line.split("] ", 1)[1]
            next_depth, next_parent = depth + 1, name
        for child in children_of.get(key, []):
            visit(child, next_depth, next_parent, seen)

    seen: set[str] = set()
    for root in roots:
        visit(root, 0, "", seen)
    return Snapshot(text="\n".join(lines), refs=refs, nodes=len(nodes))


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a line end, with a note of what was left out."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    cut = cut if cut > 0 else limit
    rest = text[cut:].count("\n") + (0 if text[cut:].startswith("\n") else 1)
    return text[:cut] + f"\n[... {rest} more lines of the snapshot not shown ...]"
