"""``list_files``: the entries of a directory of the episode's workspace."""

from __future__ import annotations

import os
import stat

from pytest_jeval.agents.tool import ToolContext, tool
from pytest_jeval.agents.tools import register_tool
from pytest_jeval.agents.tools._files import MAX_LISTED
from pytest_jeval.agents.workspace import open_in


@tool(parallel_safe=True)
def list_files(ctx: ToolContext, path: str = ".") -> str:
    """List the entries of a directory in the workspace: directories end in "/", files show their size.

    Args:
        path: The directory relative to the workspace; "." (the default) is the workspace itself.
    """
    with open_in(ctx.workspace, path, os.O_RDONLY | os.O_DIRECTORY) as (fd, name):
        with os.scandir(fd) as entries:
            names = sorted(entry.name for entry in entries)
        lines = []
        for entry in names[:MAX_LISTED]:
            try:
                info = os.lstat(entry, dir_fd=fd)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(info.st_mode):
                lines.append(f"{entry}/")
            elif stat.S_ISLNK(info.st_mode):
                lines.append(f"{entry} -> {os.readlink(entry, dir_fd=fd)}")
            elif stat.S_ISREG(info.st_mode):
                lines.append(f"{entry}  ({info.st_size} bytes)")
            else:
                lines.append(f"{entry}  (special file)")
    if len(names) > MAX_LISTED:
        lines.append(f"[list_files: showed {MAX_LISTED} of {len(names)} entries]")
    return "\n".join(lines) if lines else f"{name}: empty directory"


register_tool(list_files)
