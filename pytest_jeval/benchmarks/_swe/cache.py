"""Where the SWE benchmarks keep what they build once, and building it once.

| what | where (below the cache folder) |
|---|---|
| mirrors made from bundles, or cloned with ``fetch_repos`` | ``mirrors/<owner>__<name>-<key>.git`` |
| Python environments, one per (repo, version, recipe) | ``envs/<owner>__<name>/<version>-<key>/`` |
| prepared checkouts, one per instance (upstream's instance image) | ``trees/<instance_id>-<key>/`` |
| measurements of swefficiency's workloads | ``trees/<instance_id>-<key>.costs/`` |
| compiled helpers | ``tools/`` |

The cache folder is the ``cache_dir`` option, else ``$JEVAL_SWE_CACHE``, else ``/var/cache/pytest-jeval/swe``
(as root) or ``${XDG_CACHE_HOME:-~/.cache}/pytest-jeval/swe``. Sandboxed programs read environments and
checkouts from it, so every folder above it must be enterable by others (``o+x``): a folder that is not
is refused with the reason. Each thing is built under an exclusive lock (``flock``, so two pytest-xdist
workers never build the same thing twice) and marked complete by a file written last; ``builds.log``
holds one line per build.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["CACHE_ENV", "MARKER", "CacheError", "build_once", "builds", "cache_root", "digest", "locked",
           "read_marker"]

CACHE_ENV = "JEVAL_SWE_CACHE"
MARKER = ".jeval-built.json"
"""Written last into a built folder: what was built, when, and how long it took."""
BUILDS_LOG = "builds.log"


class CacheError(RuntimeError):
    """The cache folder cannot be used (the message says why and what to do)."""


def digest(*parts: Any) -> str:
    """A short stable hash of JSON-able ``parts`` (cache keys)."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def cache_root(configured: Path | None = None) -> Path:
    """The cache folder (made when missing, mode 0755), checked to be enterable by sandboxed programs."""
    if configured is not None:
        root = Path(configured)
    elif os.environ.get(CACHE_ENV):
        root = Path(os.environ[CACHE_ENV])
    elif hasattr(os, "geteuid") and os.geteuid() == 0:
        root = Path("/var/cache/pytest-jeval/swe")
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-jeval" / "swe"
    root = root.expanduser().absolute()
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o755)
    except OSError as exc:
        raise CacheError(f"the SWE cache folder {root} cannot be made: {exc}; set cache_dir or ${CACHE_ENV}") from None
    folder = root
    while True:
        if not os.stat(folder).st_mode & 0o001:
            raise CacheError(
                f"the SWE cache folder {root} lies in {folder}, which other users cannot enter (o+x), so the "
                f"sandbox cannot read environments from it; choose another with cache_dir or ${CACHE_ENV}")
        if folder.parent == folder:
            return root
        folder = folder.parent


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``<path>.lock`` (between processes and between threads)."""
    lock = path.parent / f".{path.name}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of a completely built folder, or None."""
    try:
        value = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def build_once(final: Path, build: Callable[[Path], dict[str, Any]], *, kind: str,
               root: Path) -> tuple[dict[str, Any], bool]:
    """``(marker, built_now)`` for the folder ``final``, built by ``build(final)`` unless already complete.

    ``build`` fills the (empty) folder in place and returns what the marker records; a half-built folder
    left by a killed run is removed and built again. Everything in it is made readable by all
    (``a+rX``): sandboxed programs run as other users.
    """
    marker = read_marker(final)
    if marker is not None:
        return marker, False
    with locked(final):
        marker = read_marker(final)
        if marker is not None:
            return marker, False
        if final.exists():
            shutil.rmtree(final)
        final.mkdir(parents=True, mode=0o755)
        started = time.monotonic()
        try:
            info = build(final)
        except BaseException:
            shutil.rmtree(final, ignore_errors=True)
            raise
        seconds = round(time.monotonic() - started, 3)
        marker = {**info, "kind": kind, "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "build_seconds": seconds}
        _readable(final)
        tmp = final / f"{MARKER}.tmp"
        tmp.write_text(json.dumps(marker, indent=1, sort_keys=True))
        os.chmod(tmp, 0o644)
        os.replace(tmp, final / MARKER)
        with open(root / BUILDS_LOG, "a", encoding="utf-8") as log:
            log.write(json.dumps({"kind": kind, "path": str(final), "seconds": seconds, "pid": os.getpid()}) + "\n")
        return marker, True


def builds(root: Path) -> list[dict[str, Any]]:
    """The lines of ``builds.log``: one per thing built in this cache folder."""
    try:
        lines = (root / BUILDS_LOG).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [json.loads(line) for line in lines if line.strip()]


def _readable(folder: Path) -> None:
    """``chmod -R a+rX`` without following links."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            _add_mode(os.path.join(dirpath, name), 0o555)
        for name in filenames:
            path = os.path.join(dirpath, name)
            _add_mode(path, 0o444 | (0o111 if os.lstat(path).st_mode & 0o100 else 0))
    _add_mode(str(folder), 0o555)


def _add_mode(path: str, bits: int) -> None:
    info = os.lstat(path)
    if (info.st_mode & 0o170000) in (0o040000, 0o100000) and info.st_mode & bits != bits:
        os.chmod(path, (info.st_mode & 0o7777) | bits)
