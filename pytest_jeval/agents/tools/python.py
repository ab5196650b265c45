"""``python``: a Python 3 program in the sandbox, no network."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools._programs import check_program, run_sandboxed


@tool(name="python")
def python_tool(code: str, ctx: ToolContext) -> str:
    """Run a Python 3 program in a sandbox without network and return its exit status, stdout and stderr.
    The working directory is the workspace: open its files by relative path; files written there stay
    for later calls. Print what you want to see.

    Args:
        code: The program's source.
    """
    check_program(code, "code")
    return run_sandboxed(ctx, ["-I", "-B", "-u", "-"], executable=None, stdin=code)


register_tool(python_tool)
