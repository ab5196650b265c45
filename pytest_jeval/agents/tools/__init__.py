"""The built-in tools a suite names in ``tools = [...]``, one module each, and the tool registry.

| name | module | what it does |
|---|---|---|
| ``calculator`` | :mod:`.calculator` | arithmetic, parsed from the AST (never ``eval``) |
| ``file_read``, ``list_files``, ``file_write`` | one module each | the episode's workspace, confined to it |
| ``python``, ``bash`` | :mod:`.python`, :mod:`.bash` | a program in the sandbox, the workspace as its directory |

:data:`TOOLS` holds every tool a suite may name: the built-ins (each module here registers its tool
with :func:`register_tool`, so a new built-in is a new file), then the tools installed packages add
through the ``pytest_jeval.tools`` entry-point group (``name = "package.module:tool_object"``, a
:class:`~pytest_jeval.agents.tool.Tool` made with ``@tool``). See docs/agent-tools.md for the
arguments and limits of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_jeval.agents.tool import Tool
from pytest_jeval.core.registry import Registry

__all__ = ["MAX_FILE_READ_BYTES", "MAX_FILE_WRITE_BYTES", "MAX_LISTED", "MAX_PROGRAM_OUTPUT", "TOOLS",
           "builtin_tools", "evaluate", "register_tool"]


def _check(name: str, member: Any) -> Tool:
    if not isinstance(member, Tool):
        raise TypeError(f"{member!r} is not a Tool (make one with @tool)")
    if member.name != name:
        raise ValueError(f"the tool's name is {member.name!r}")
    return member


def _same(a: Tool, b: Tool) -> bool:
    """The same tool defined again (its module imported twice): same function module and name."""
    return ((getattr(a.fn, "__module__", None), getattr(a.fn, "__qualname__", None))
            == (getattr(b.fn, "__module__", None), getattr(b.fn, "__qualname__", None)))


TOOLS: Registry[Tool] = Registry("tools", kind="tool", check=_check, same=_same,
                                 modules=("pytest_jeval.agents.tools",))
"""Every tool a suite may name (built in, registered in code, installed)."""


def register_tool(t: Tool) -> Tool:
    """Make ``t`` available by its name in a suite's ``tools = [...]`` (a plugin may call it too)."""
    return TOOLS.register(t.name, t)


def builtin_tools(names: Sequence[str]) -> list[Tool]:
    """The registered tools ``names`` names, in that order.

    ValueError naming each unknown name (and the known ones), or a name given twice.
    """
    if isinstance(names, str):
        raise ValueError(f"tools must be a list of names, not the string {names!r}")
    unknown = [name for name in names if name not in TOOLS]
    if unknown:
        raise ValueError(f"unknown tool{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"the registered tools are: {', '.join(TOOLS.names())}")
    repeated = sorted({name for name in names if list(names).count(name) > 1})
    if repeated:
        raise ValueError(f"tool{'s' if len(repeated) > 1 else ''} {', '.join(map(repr, repeated))} named twice")
    return [TOOLS.get(name) for name in names]


# The built-in tools' limits, where callers look for them (each module registers its tool when imported).
from pytest_jeval.agents.tools._files import MAX_FILE_READ_BYTES, MAX_FILE_WRITE_BYTES, MAX_LISTED  # noqa: E402
from pytest_jeval.agents.tools._programs import MAX_PROGRAM_OUTPUT  # noqa: E402
from pytest_jeval.agents.tools.calculator import evaluate  # noqa: E402
