"""``file_write``: write a text file in the episode's workspace, confined to it."""

from __future__ import annotations

import os
import stat

from pytest_jeval.agents.tool import ToolContext, ToolError, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools._files import MAX_FILE_WRITE_BYTES
from pytest_jeval.agents.workspace import open_in


@tool
def file_write(path: str, content: str, ctx: ToolContext) -> str:
    """Write a text file in the workspace (created, or replaced when it exists; missing directories are made).

    Args:
        path: The file's path relative to the workspace, e.g. "out/result.txt".
        content: The whole text of the file (UTF-8).
    """
    data = content.encode("utf-8", "surrogatepass")
    if len(data) > MAX_FILE_WRITE_BYTES:
        raise ToolError(f"content is {len(data)} bytes; file_write takes at most {MAX_FILE_WRITE_BYTES}")
    with open_in(ctx.workspace, path, os.O_WRONLY | os.O_CREAT, create_parents=True) as (fd, name):
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{name!r} is not a regular file")
        if info.st_nlink > 1:
            raise ToolError(f"{name!r} has other hard links; refused")
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    return f"wrote {len(data)} bytes to {name}"


register_tool(file_write)
