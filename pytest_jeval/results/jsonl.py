"""A pair's JSONL file as an append-only log: whole lines in, the newest line per record out.

A run appends each new record as one line and never rewrites what is stored while
it runs, so a kill at any moment loses nothing stored before. A record id may then
appear more than once (an earlier run's verdict, then this run's): readers take the
newest line of each record id, at the position of its first line. At session end
the writer compacts the file to one line per record, atomically.

A write that fails part-way (disk full, file-size limit) is cut back to the last
whole line before the error is raised; a torn last line left by an older writer or
by a crash of the machine is repaired when the file is next opened for appending.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
from pathlib import Path
from typing import Any

from pytest_jeval.core.files import open_append, read_bytes
from pytest_jeval.core.jsonsafe import RECORD_DEPTH, check_depth

__all__ = ["JsonlAppender", "JsonlContent", "ResultsWriteError", "parse_jsonl", "read_jsonl", "write_records"]

_TAIL_CHUNK = 1 << 16


class ResultsWriteError(Exception):
    """A record could not be stored; the file still ends with a whole line."""


@dataclasses.dataclass
class JsonlContent:
    """What a JSONL results file holds."""

    records: dict[str, dict[str, Any]]
    """The newest record per record id, in the order of each id's first line."""
    lines: int = 0
    """Non-blank lines read (records, repeats and unreadable lines)."""
    unreadable: int = 0
    """Lines that are not a JSON object with a ``record_id`` (a torn last line included)."""

    @property
    def compact(self) -> bool:
        """True when every line is a distinct, readable record."""
        return self.unreadable == 0 and self.lines == len(self.records)


def parse_jsonl(data: bytes) -> JsonlContent:
    """Parse JSONL bytes: the newest line per record id wins; unreadable lines are counted."""
    content = JsonlContent(records={})
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        content.lines += 1
        try:
            check_depth(raw, RECORD_DEPTH)
            rec = json.loads(raw)
        except (ValueError, RecursionError):
            content.unreadable += 1
            continue
        if isinstance(rec, dict) and "record_id" in rec:
            content.records[str(rec["record_id"])] = rec
        else:
            content.unreadable += 1
    return content


def read_jsonl(path: Path) -> JsonlContent:
    """The content of ``path`` (empty when it does not exist); a symbolic link is refused."""
    data = read_bytes(path)
    return parse_jsonl(data or b"")


def _is_record(fragment: bytes) -> bool:
    try:
        check_depth(fragment, RECORD_DEPTH)
        rec = json.loads(fragment)
    except (ValueError, RecursionError):
        return False
    return isinstance(rec, dict) and "record_id" in rec


class JsonlAppender:
    """Appends whole lines to one JSONL file, on a descriptor opened at the first line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._size = 0  # the run holds the directory's lock: nobody else appends
        self.repaired: str | None = None
        """What the repair of a torn last line did, if one was needed."""

    def _open(self) -> int:
        fd = open_append(self.path)
        self._fd = fd
        self._repair(fd)
        self._size = os.fstat(fd).st_size
        return fd

    def _repair(self, fd: int) -> None:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return
        end = size
        cut = -1
        while end > 0 and cut < 0:
            start = max(0, end - _TAIL_CHUNK)
            chunk = os.pread(fd, end - start, start)
            pos = chunk.rfind(b"\n")
            if pos >= 0:
                cut = start + pos + 1
            end = start
        cut = max(cut, 0)
        fragment = os.pread(fd, size - cut, cut)
        if _is_record(fragment):
            os.write(fd, b"\n")
            self.repaired = f"{self.path.name}: completed a last line that lacked its newline"
        else:
            os.ftruncate(fd, cut)
            self.repaired = f"{self.path.name}: removed a torn last line ({size - cut} bytes)"

    def append(self, line: bytes) -> None:
        """Append ``line`` (one record and its newline) whole, or raise with the file unchanged."""
        try:
            fd = self._fd if self._fd is not None else self._open()
        except OSError as exc:
            raise ResultsWriteError(f"cannot open {self.path}: {exc.strerror or exc}") from None
        start = self._size
        try:
            written = os.write(fd, line)
            if written < len(line):  # a short write: the rest fails too, or completes the line
                view = memoryview(line)[written:]
                while view:
                    view = view[os.write(fd, view):]
        except OSError as exc:
            reason = exc.strerror or str(exc)
            try:
                os.ftruncate(fd, start)
            except OSError as cut:
                reason += f"; and the partial line could not be removed: {cut.strerror or cut}"
            kind = "the disk is full" if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG) else "a write failed"
            raise ResultsWriteError(f"{kind}: cannot write {self.path}: {reason}") from None
        self._size = start + len(line)

    def close(self) -> None:
        """Close the descriptor (a later :meth:`append` reopens it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Replace ``path`` atomically with one JSONL line per record (creating its directory)."""
    from pytest_jeval.core.files import make_dir, write_atomic
    from pytest_jeval.results.sanitize import json_line

    make_dir(path.parent)
    write_atomic(path, b"".join(json_line(r) for r in records))
