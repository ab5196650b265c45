"""``jeval report -o PATH`` and ``jeval rescore -o PATH`` never replace a device node, a FIFO or a socket.

Writes are atomic (a temporary file renamed over the target), and a rename replaces whatever the
name held: as root, ``-o /dev/null`` replaced the machine's ``/dev/null`` with a regular file.
The device and the FIFO here are made in a temporary folder (never the real ``/dev/null``).
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from pytest_jeval.cli import main

RESULTS = Path(__file__).resolve().parents[1] / "data" / "results" / "quickstart_model-a.jsonl"


def _special(path: Path, kind: str) -> socket.socket | None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a second /dev/null, in tmp_path
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        return server
    return None


@pytest.mark.parametrize("kind", ["device", "fifo", "socket"])
@pytest.mark.parametrize("command", ["report", "rescore"])
def test_output_onto_a_special_file_is_refused_and_it_stays(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            command: str, kind: str) -> None:
    target = tmp_path / "null"
    server = _special(target, kind)
    try:
        before = os.lstat(target)
        status = main([command, str(RESULTS), "-o", str(target)])
        err = capsys.readouterr().err
        after = os.lstat(target)
    finally:
        if server is not None:
            server.close()
    assert status != 0 and f"{target} is a" in err and "not a regular file" in err, err
    assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # nothing written beside it either
