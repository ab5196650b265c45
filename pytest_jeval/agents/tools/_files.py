"""Limits shared by the workspace file tools."""

from __future__ import annotations

MAX_FILE_READ_BYTES = 64 * 1024
"""``file_read`` returns at most this many bytes of a file (and says how much it left out)."""
MAX_FILE_WRITE_BYTES = 1024 * 1024
"""``file_write`` refuses larger content."""
MAX_LISTED = 1_000
"""``list_files`` lists at most this many entries."""
