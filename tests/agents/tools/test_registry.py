"""Choosing built-in tools by name: every registered tool well formed, unknown and repeated names refused."""

from __future__ import annotations

import pytest

from pytest_jeval.agents.tools import TOOLS, builtin_tools


def test_builtin_tools_by_name() -> None:
    assert [t.name for t in builtin_tools(["python", "calculator"])] == ["python", "calculator"]
    assert {"bash", "calculator", "file_read", "file_write", "list_files", "python"} <= set(TOOLS.names())
    assert builtin_tools([]) == []
    safe = {name for name, t in TOOLS.items() if t.parallel_safe}
    assert {"calculator", "file_read", "list_files"} <= safe and not {"file_write", "python", "bash"} & safe
    assert not TOOLS.get("calculator").blocking and TOOLS.get("python").blocking and TOOLS.get("bash").blocking
    for name, t in TOOLS.items():  # every registered tool: named as registered, described, no ctx in its schema
        spec = t.spec()["function"]
        assert spec["name"] == name and spec["description"]
        assert "ctx" not in spec["parameters"]["properties"]


def test_builtin_tools_refuses_unknown_and_repeated_names() -> None:
    with pytest.raises(ValueError) as info:
        builtin_tools(["calculator", "web_search", "pyhton"])
    message = str(info.value)
    assert "unknown tools 'web_search', 'pyhton'" in message
    assert f"the registered tools are: {', '.join(TOOLS.names())}" in message  # every registered one, in order
    with pytest.raises(ValueError, match="'calculator' named twice"):
        builtin_tools(["calculator", "calculator"])
    with pytest.raises(ValueError, match="list of names"):
        builtin_tools("calculator")
