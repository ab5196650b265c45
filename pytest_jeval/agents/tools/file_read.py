"""``file_read``: a text file of the episode's workspace, confined to it."""

from __future__ import annotations

import os
import stat

from pytest_jeval.agents.tool import ToolContext, ToolError, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools._files import MAX_FILE_READ_BYTES
from pytest_jeval.agents.workspace import open_in
from pytest_jeval.core.redact import redact_known


@tool(parallel_safe=True)
def file_read(path: str, ctx: ToolContext) -> str:
    """Read a text file from the workspace.

    Args:
        path: The file's path relative to the workspace (the working directory), e.g. "data.csv".
    """
    with open_in(ctx.workspace, path, os.O_RDONLY) as (fd, name):
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"{name!r} is a directory; use list_files")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{name!r} is not a regular file")
        data = os.read(fd, MAX_FILE_READ_BYTES + 1)
        while len(data) <= MAX_FILE_READ_BYTES and (more := os.read(fd, MAX_FILE_READ_BYTES + 1 - len(data))):
            data += more
    text = data[:MAX_FILE_READ_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_READ_BYTES:
        text += (f"\n[file_read: showed the first {MAX_FILE_READ_BYTES} of {info.st_size} bytes; "
                 "use python to read the rest]")
    return redact_known(text)


register_tool(file_read)
