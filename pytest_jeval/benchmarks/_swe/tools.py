"""The agent's tools over the checkout (its workspace): ``bash``, ``python``, ``str_replace`` and the
built-in ``file_read``, ``file_write`` and ``list_files``.

``bash`` and ``python`` run in the sandbox (:mod:`.sandboxed`): the checkout at ``/sandbox`` as the working
directory, the instance's environment and the checkout's own interpreter on ``PATH``, no network; files
stay between calls, processes do not. ``str_replace`` is the editing command of SWE-agent's
``str_replace_editor``: it replaces exactly one occurrence of a text in a file (none, or more than one, is
an error the model reads). One call at a time runs per episode.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from pytest_jeval.agents import HarnessError, Tool, ToolContext, ToolError, tool
from pytest_jeval.agents.tools import TOOLS
from pytest_jeval.agents.workspace import open_in
from pytest_jeval.benchmarks._swe.sandboxed import SandboxUnavailable, run_script

__all__ = ["MAX_OUTPUT", "agent_tools", "bash", "python", "str_replace"]

MAX_OUTPUT = 16 * 1024
"""Bytes of stdout and of stderr a call keeps (head and tail)."""
MAX_TEXT = 2_000_000
"""Longest command, code or edit text accepted (the oracle sends a whole gold patch in one command)."""
MAX_FILE = 4 * 1024 * 1024
TOOL_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PAGER": "cat", "GIT_PAGER": "cat", "TERM": "dumb"}


def _episode(ctx: ToolContext) -> Any:
    from pytest_jeval.benchmarks._swe.episode import SweEpisode

    state = ctx.state
    if not isinstance(state, SweEpisode) or state.prepared is None:
        raise HarnessError("the instance's checkout is not prepared")
    return state


def _check(text: str, what: str) -> None:
    if "\x00" in text:
        raise ToolError(f"{what} contains a NUL byte")
    if len(text) > MAX_TEXT:
        raise ToolError(f"{what} is longer than {MAX_TEXT} characters")


def _run(ctx: ToolContext, script: str, stdin: str | None) -> str:
    state = _episode(ctx)
    with state.lock:
        try:
            result = run_script(ctx.workspace, script, state.prepared.env, timeout=ctx.timeout, stdin=stdin,
                                max_output=MAX_OUTPUT, extra_env=TOOL_ENV)
        except SandboxUnavailable as exc:
            raise HarnessError(str(exc)) from exc
    parts = [f"timed out after {ctx.timeout:g}s; the command and its processes were killed"
             if result.status == "timeout" else f"exit status: {result.returncode}"]
    for label, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        parts.append(f"{label}:\n{text}" if text else f"{label}: (empty)")
    out = "\n".join(parts)
    if result.status == "timeout":
        raise ToolError(out)
    return out


@tool(name="bash")
def bash(command: str, ctx: ToolContext) -> str:
    """Run a bash command in the repository checkout (the working directory, /sandbox) and return its exit
    status, stdout and stderr. The instance's Python environment is on PATH; there is no network. Files
    you change stay; processes do not outlive the call.

    Args:
        command: The command line, run with bash -c in the checkout.
    """
    _check(command, "command")
    return _run(ctx, command, None)


@tool(name="python")
def python(code: str, ctx: ToolContext) -> str:
    """Run a Python program with the repository's interpreter in the checkout (the working directory) and
    return its exit status, stdout and stderr; the repository is importable. No network.

    Args:
        code: The program's source.
    """
    _check(code, "code")
    return _run(ctx, "python -", code)


@tool(name="str_replace")
def str_replace(path: str, old_str: str, new_str: str, ctx: ToolContext) -> str:
    """Edit a file of the checkout: replace the one occurrence of old_str with new_str. old_str must occur
    exactly once (include enough surrounding lines); whitespace counts.

    Args:
        path: The file's path relative to the checkout, e.g. "src/pkg/module.py".
        old_str: The exact text to replace.
        new_str: The text to put in its place (may be empty to delete).
    """
    _check(old_str, "old_str")
    _check(new_str, "new_str")
    if not old_str:
        raise ToolError("old_str is empty; give the text to replace")
    state = _episode(ctx)
    with state.lock, open_in(ctx.workspace, path, os.O_RDWR) as (fd, name):
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{name!r} is not a regular file")
        if info.st_size > MAX_FILE:
            raise ToolError(f"{name!r} is larger than {MAX_FILE} bytes")
        if info.st_nlink > 1:
            raise ToolError(f"{name!r} has other hard links; refused")
        data = b""
        while chunk := os.read(fd, 1 << 20):
            data += chunk
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ToolError(f"{name!r} is not UTF-8 text") from None
        count = text.count(old_str)
        if count != 1:
            raise ToolError(f"old_str occurs {count} times in {name}; it must occur exactly once" +
                            ("" if count else " (check whitespace and indentation)"))
        new = text.replace(old_str, new_str, 1).encode("utf-8")
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        view = memoryview(new)
        while view:
            view = view[os.write(fd, view):]
    line = text[: text.index(old_str)].count("\n") + 1
    lines = new.count(b"\n") + 1
    return f"replaced 1 occurrence in {name} (line {line}); the file now has {lines} lines"


def agent_tools() -> list[Tool]:
    """The episode's tools, in the order offered."""
    return [bash, python, str_replace, TOOLS.get("file_read"), TOOLS.get("file_write"), TOOLS.get("list_files")]
