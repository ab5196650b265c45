"""A workspace that a benchmark fills with a large tree (a repository checkout) can be given room for it.

As root a workspace is a size-limited file system (256 MiB, 65,536 entries by default): a SWE-bench
checkout with its history may not fit, so the benchmark asks for the tree's size plus room to work
(``make_room``, a remount that keeps what the workspace holds). Without root there is nothing to grow.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from pytest_jeval.sandbox.quota import quota_fs_support
from pytest_jeval.sandbox.workdir import make_room, make_workspace_dir, remove_workspace_dir, workspace_quota

MIB = 1024 * 1024


def _fill(folder: Path, name: str, mib: int) -> None:
    with open(folder / name, "wb") as fh:
        for _ in range(mib):
            fh.write(b"x" * MIB)


@pytest.mark.skipif(not quota_fs_support(), reason="size-limited workspaces need root")
def test_a_workspace_grows_to_the_room_asked_and_keeps_what_it_holds() -> None:
    path = Path(make_workspace_dir(disk_bytes=4 * MIB, files=64))
    try:
        assert workspace_quota(path)
        _fill(path, "kept.bin", 2)
        with pytest.raises(OSError) as full:
            _fill(path, "big.bin", 6)
        assert full.value.errno == errno.ENOSPC  # the default is too small for it
        assert make_room(path, disk_bytes=16 * MIB, files=128)
        _fill(path, "big.bin", 6)
        assert (path / "kept.bin").stat().st_size == 2 * MIB
        assert not make_room(path, disk_bytes=8 * MIB, files=64)  # never shrinks
        _fill(path, "more.bin", 6)
    finally:
        remove_workspace_dir(path)
    assert not path.exists()


def test_a_folder_that_is_no_workspace_of_ours_is_left_alone(tmp_path: Path) -> None:
    assert not make_room(tmp_path, disk_bytes=16 * MIB, files=128)
