"""Running a program in the sandbox for the ``python`` and ``bash`` tools, the workspace as its directory."""

from __future__ import annotations

from pytest_jeval.agents.tool import HarnessError, ToolContext, ToolError

MAX_PROGRAM_OUTPUT = 16 * 1024
"""``python`` and ``bash`` keep at most this many bytes of stdout and of stderr (head and tail)."""
MAX_PROGRAM_CHARS = 100_000
"""Longer code or commands are refused."""
BASH = "/bin/bash"


def run_sandboxed(ctx: ToolContext, args: list[str], *, executable: str | None, stdin: str | None) -> str:
    from pytest_jeval.sandbox import SandboxError, run_in_workspace  # the sandbox probes on first use

    try:
        result = run_in_workspace(ctx.workspace, args, executable=executable, stdin=stdin, timeout=ctx.timeout,
                                  max_output=MAX_PROGRAM_OUTPUT)
    except SandboxError as exc:
        raise HarnessError(f"the sandbox cannot run: {exc}") from exc
    if result.status == "timeout":
        raise ToolError(f"timed out after {ctx.timeout:g}s" + streams(result.stdout, result.stderr))
    status = f"exit status: {result.returncode}"
    if result.returncode < 0:
        status += f" (killed by signal {-result.returncode})"
    if result.status == "memory":
        status += " (out of memory)"
    return status + streams(result.stdout, result.stderr, always=True)


def streams(stdout: str, stderr: str, *, always: bool = False) -> str:
    parts = []
    for label, text in (("stdout", stdout), ("stderr", stderr)):
        if text or always:
            parts.append(f"\n{label}:\n{text}" if text else f"\n{label}: (empty)")
    return "".join(parts)


def check_program(text: str, what: str) -> None:
    if "\x00" in text:
        raise ToolError(f"{what} contains a NUL byte")
    if len(text) > MAX_PROGRAM_CHARS:
        raise ToolError(f"{what} is longer than {MAX_PROGRAM_CHARS} characters")
