"""``bash``: a bash command in the sandbox, no network."""

from __future__ import annotations

from pytest_jeval.agents.tool import ToolContext, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools._programs import BASH, check_program, run_sandboxed


@tool(name="bash")
def bash_tool(command: str, ctx: ToolContext) -> str:
    """Run a bash command in a sandbox without network and return its exit status, stdout and stderr.
    The working directory is the workspace; files written there stay for later calls.

    Args:
        command: The command line, run with bash -c.
    """
    check_program(command, "command")
    return run_sandboxed(ctx, ["-c", command], executable=BASH, stdin=None)


register_tool(bash_tool)
