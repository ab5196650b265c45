"""A PinchBench episode: the task's workspace, the agent's OpenClaw-style tools, its sessions and its transcript.

PinchBench measures a model as the brain of an OpenClaw agent. The episode gives the model OpenClaw's core tools
over the task's workspace: ``read`` (a file), ``write`` (a file, made with its folders), ``edit`` (replace text in
a file) and ``exec`` (a shell command in the sandbox, no network). The workspace is made from the task's
``workspace_files`` and outlives the episode (the graders read it afterwards), so it is the episode's state, not
its temporary directory. A multi-session task's later prompts come from a simulated user, a ``new_session`` one
as a :class:`~pytest_jeval.agents.spec.NewSession`. The graders get the conversation as OpenClaw's transcript
(:func:`transcript`): ``{"type": "message", "message": {"role": "user" | "assistant" | "toolResult", "content":
[{"type": "text", "text"} | {"type": "toolCall", "name", "arguments", "params"}]}}`` events.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.agents.spec import AsyncChat, NewSession
from pytest_jeval.agents.tool import HarnessError, ToolContext, ToolError, tool
from pytest_jeval.agents.tools import TOOLS
from pytest_jeval.agents.workspace import make_workspace, open_in, remove_workspace
from pytest_jeval.core.chat import Messages
from pytest_jeval.core.sample import Sample

__all__ = ["TOOLS_OF_AGENT", "PinchState", "Sessions", "copy_tree", "environment", "make_user", "transcript"]

MAX_EDIT_BYTES = 1024 * 1024


@dataclasses.dataclass
class PinchState:
    """An episode's workspace (removed when the state is garbage, or by :meth:`close`)."""

    workspace: Path

    def __post_init__(self) -> None:
        self._finalizer = weakref.finalize(self, remove_workspace, str(self.workspace))

    def close(self) -> None:
        """Remove the workspace now."""
        self._finalizer()


def _write_new(root: Path, rel: str, data: bytes) -> None:
    with open_in(root, rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL, create_parents=True) as (fd, _):
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]


def environment(sample: Sample, workspace: Path) -> PinchState:
    """A fresh workspace holding the task's ``workspace_files`` (inline ``content``, or ``source`` from ``assets/``)."""
    root = make_workspace()
    state = PinchState(root)
    try:
        for spec in sample.metadata["workspace_files"]:
            if "content" in spec:
                _write_new(root, str(spec["path"]), str(spec["content"]).encode("utf-8"))
            else:
                _write_new(root, str(spec["dest"]), Path(spec["source_path"]).read_bytes())
    except (OSError, ToolError) as exc:
        state.close()
        raise HarnessError(f"the task's workspace cannot be made: {exc}") from exc
    return state


def _ctx(ctx: ToolContext) -> ToolContext:
    state = ctx.state
    if not isinstance(state, PinchState):
        raise HarnessError("the PinchBench tools need the episode's workspace (PinchState)")
    return dataclasses.replace(ctx, workspace=state.workspace)


@tool(name="read", parallel_safe=True)
def read_file(path: str, ctx: ToolContext) -> Any:
    """Read a text file of the workspace.

    Args:
        path: The file's path relative to the workspace, e.g. "notes.md".
    """
    fn = TOOLS.get("file_read").fn
    assert fn is not None
    return fn(path=path, ctx=_ctx(ctx))


@tool(name="write")
def write_file(path: str, content: str, ctx: ToolContext) -> Any:
    """Write a text file in the workspace (created with its folders, or replaced).

    Args:
        path: The file's path relative to the workspace, e.g. "out/answer.txt".
        content: The file's whole text.
    """
    fn = TOOLS.get("file_write").fn
    assert fn is not None
    return fn(path=path, content=content, ctx=_ctx(ctx))


@tool(name="edit")
def edit_file(path: str, old_text: str, new_text: str, ctx: ToolContext) -> str:
    """Replace text in a workspace file: old_text must occur exactly once.

    Args:
        path: The file's path relative to the workspace.
        old_text: The exact text to replace.
        new_text: The text to put in its place.
    """
    inner = _ctx(ctx)
    with open_in(inner.workspace, path, os.O_RDWR) as (fd, name):
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_EDIT_BYTES:
            raise ToolError(f"{name!r} is not a regular file of at most {MAX_EDIT_BYTES} bytes")
        text = os.read(fd, MAX_EDIT_BYTES + 1).decode("utf-8", "replace")
        count = text.count(old_text) if old_text else 0
        if count != 1:
            raise ToolError(f"old_text occurs {count} times in {name}; it must occur exactly once")
        data = text.replace(old_text, new_text).encode("utf-8")
        os.lseek(fd, 0, os.SEEK_SET)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    return f"edited {name}"


@tool(name="exec")
def exec_command(command: str, ctx: ToolContext) -> Any:
    """Run a shell command (bash) in the workspace, in a sandbox without network; returns its exit status and
    output. Files written in the workspace stay for later calls.

    Args:
        command: The command line, e.g. "ls -la && python3 script.py".
    """
    fn = TOOLS.get("bash").fn
    assert fn is not None
    return fn(command=command, ctx=_ctx(ctx))


TOOLS_OF_AGENT = (read_file, write_file, edit_file, exec_command)


class Sessions:
    """The simulated user of a multi-session task: each later prompt once the agent has answered."""

    def __init__(self, prompts: Sequence[tuple[str, bool]]) -> None:
        self.pending = list(prompts)

    async def next_message(self, conversation: Messages) -> str | NewSession | None:
        """The next session's prompt (a :class:`NewSession` when it opens a new session), or None when done."""
        if not self.pending:
            return None
        text, new = self.pending.pop(0)
        return NewSession(text) if new else text


def make_user(sample: Sample, chat: AsyncChat | None) -> Sessions:
    """``AgentSpec.user``: the task's prompts after the first."""
    return Sessions([(str(t), bool(n)) for t, n in sample.metadata["prompts"][1:]])


def transcript(messages: Messages) -> list[dict[str, Any]]:
    """The episode's conversation as OpenClaw transcript events (see the module docstring)."""
    names: dict[str, str] = {}
    events: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role")
        content = m.get("content")
        text = content if isinstance(content, str) else "" if content is None else json.dumps(content)
        if role == "user":
            events.append({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": text}]}})
        elif role == "assistant":
            items: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = {}
                args = args if isinstance(args, dict) else {}
                names[str(call.get("id"))] = str(fn.get("name"))
                items.append({"type": "toolCall", "id": call.get("id"), "name": fn.get("name"), "arguments": args,
                              "params": args})
            events.append({"type": "message", "message": {"role": "assistant", "content": items}})
        elif role == "tool":
            call_id = str(m.get("tool_call_id"))
            events.append({"type": "message", "message": {"role": "toolResult", "toolCallId": call_id,
                                                          "toolName": names.get(call_id),
                                                          "content": [{"type": "text", "text": text}]}})
    return events


def copy_tree(source: Path, dest: Path) -> None:
    """Copy the regular files and folders of ``source`` into the existing ``dest``; links and other files are left
    out (a grader gets a copy: what it changes, the judge never sees)."""
    for dirpath, dirnames, filenames in os.walk(source):
        rel = Path(dirpath).relative_to(source)
        dirnames[:] = [d for d in dirnames if not (Path(dirpath) / d).is_symlink()]
        for d in dirnames:
            (dest / rel / d).mkdir(exist_ok=True)
        for name in filenames:
            src = Path(dirpath) / name
            info = src.lstat()
            if stat.S_ISREG(info.st_mode):
                shutil.copyfile(src, dest / rel / name, follow_symlinks=False)
