"""A distinct, otherwise unused uid for each concurrent sandboxed run (root only).

Runs as different uids cannot signal, trace or open each other's processes and
files, and each has its own ``RLIMIT_NPROC`` budget. A uid is taken by holding an
exclusive ``flock`` on ``<base>/uids/<uid>`` for the length of the run; the kernel
drops the lock when the holder exits, however it ends, so nothing leaks. Uids come
from ``UID_BASE`` + [0, ``UID_SPAN``) and are skipped when the password database
knows them.
"""

from __future__ import annotations

import os
import random
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from pytest_jeval.sandbox.files import UnsafeDirectoryError

UID_BASE = 1_600_000_000
UID_SPAN = 100_000
_ATTEMPTS = 200


def _known(uid: int) -> bool:
    try:
        import pwd

        pwd.getpwuid(uid)
        return True
    except (ImportError, KeyError):
        return False


def _lock_dir(base: str) -> int:
    path = os.path.join(base, "uids")
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    info = os.fstat(fd)
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        os.close(fd)
        raise UnsafeDirectoryError(f"{path} must be a 0700 directory owned by uid {os.geteuid()}")
    return fd


@contextmanager
def run_uid(base: str) -> Iterator[int]:
    """Hold a uid no other run on this machine holds, for the ``with`` block."""
    import fcntl  # POSIX only, and only needed as root

    dir_fd = _lock_dir(base)
    try:
        rng = random.SystemRandom()
        for _ in range(_ATTEMPTS):
            uid = UID_BASE + rng.randrange(UID_SPAN)
            if _known(uid):
                continue
            fd = os.open(str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            try:
                yield uid
            finally:
                os.close(fd)  # releases the lock
            return
        raise RuntimeError(f"no free sandbox uid after {_ATTEMPTS} attempts")
    finally:
        os.close(dir_fd)
