"""The root filesystem terminal tasks run in: a Debian base built once with ``mmdebstrap``, cached.

The filesystem is named by a hash of what goes into it (suite, variant, packages, the
recipe version), so a changed package list builds a new one beside the old. It is built
into a temporary directory next to its final place and renamed when complete, so a
half-built tree is never used. Where it lives:

| | |
|---|---|
| ``$JEVAL_ROOTFS_DIR`` | the cache folder, when set |
| root | ``/var/cache/pytest-jeval`` (sandbox uids must be able to enter it) |
| other users | ``${XDG_CACHE_HOME:-~/.cache}/pytest-jeval`` |

Command line::

    python -m pytest_jeval.sandbox.shell.rootfs build     # build unless present (make rootfs)
    python -m pytest_jeval.sandbox.shell.rootfs path      # print where it is (or would be)
    python -m pytest_jeval.sandbox.shell.rootfs check     # exit 1 and say why when it is not usable
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["BUILD_COMMAND", "PACKAGES", "RootfsError", "build_rootfs", "cache_dir", "check_rootfs", "require_rootfs",
           "rootfs_key", "rootfs_path"]

SUITE = "bookworm"
"""The Debian release."""
VARIANT = "minbase"
"""mmdebstrap's smallest variant: Essential packages and apt."""
PACKAGES = ("bash", "coreutils", "findutils", "grep", "sed", "gawk", "diffutils", "patch", "make", "gcc",
            "libc6-dev", "git", "python3")
"""Installed on top of the variant (the tools the bundled tasks use)."""
RECIPE_VERSION = 2
"""Bumped whenever the build steps below change what the tree holds."""
DEFAULT_MIRROR = "http://deb.debian.org/debian"
MARKER = ".jeval-rootfs.json"
"""Written last, inside the tree: what was built, when, and how long it took."""
BUILD_COMMAND = "make rootfs"
"""What a user runs to build it (``python -m pytest_jeval.sandbox.shell.rootfs build`` without make)."""
MOUNT_POINTS = ("app", "tests", "logs")
"""Empty folders the sandbox mounts the task directory and the checker's files on."""
REQUIRED = ("app", "bin/bash", "usr/bin/python3", "usr/bin/git", "usr/bin/make", "usr/bin/gcc", "usr/bin/gawk")
"""Programs a usable tree has."""
GITCONFIG = """[user]
\tname = Sandbox User
\temail = sandbox@example.invalid
[init]
\tdefaultBranch = main
[safe]
\tdirectory = *
"""
"""``/etc/gitconfig`` of the tree: commits work without a writable home configuration."""


class RootfsError(Exception):
    """The root filesystem is missing or unusable, or cannot be built; the message says what to run."""


def rootfs_key() -> str:
    """A short hash of everything that decides the tree's contents."""
    recipe = json.dumps({"suite": SUITE, "variant": VARIANT, "packages": sorted(PACKAGES),
                         "recipe": RECIPE_VERSION, "gitconfig": GITCONFIG}, sort_keys=True)
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def cache_dir() -> Path:
    """The folder root filesystems are cached in (see the module docstring)."""
    forced = os.environ.get("JEVAL_ROOTFS_DIR")
    if forced:
        return Path(forced).expanduser()
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/cache/pytest-jeval")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "pytest-jeval"


def rootfs_path() -> Path:
    """Where the root filesystem of the current recipe is (or will be)."""
    return cache_dir() / f"rootfs-{rootfs_key()}"


def check_rootfs(path: Path | None = None) -> list[str]:
    """What is wrong with the tree at ``path`` (default :func:`rootfs_path`); empty when usable."""
    path = path or rootfs_path()
    if not path.is_dir():
        return [f"no root filesystem at {path}"]
    problems = []
    marker = path / MARKER
    try:
        info = json.loads(marker.read_text())
        if info.get("key") != rootfs_key():
            problems.append(f"{marker} names recipe {info.get('key')!r}, not {rootfs_key()!r}")
    except (OSError, ValueError) as exc:
        problems.append(f"{marker} is missing or unreadable ({exc.__class__.__name__}): an unfinished build")
    for rel in REQUIRED:
        if not os.path.lexists(path / rel):
            problems.append(f"{path / rel} is missing")
    return problems


def require_rootfs() -> Path:
    """The usable root filesystem, or :class:`RootfsError` naming the command that builds it."""
    path = rootfs_path()
    problems = check_rootfs(path)
    if problems:
        raise RootfsError(f"the terminal-task root filesystem is not usable: {'; '.join(problems)}. "
                          f"Build it once with `{BUILD_COMMAND}` (needs mmdebstrap: apt-get install -y mmdebstrap, "
                          "and the Debian package mirror; a few minutes)")
    return path


def build_rootfs(*, mirror: str | None = None, force: bool = False, log: bool = True) -> Path:
    """Build the root filesystem unless a usable one is cached; returns its path.

    Raises :class:`RootfsError` when ``mmdebstrap`` is missing or the build fails (its
    output is in the message's log file).
    """
    final = rootfs_path()
    if not force and not check_rootfs(final):
        if log:
            print(f"the terminal-task root filesystem is built: {final}", flush=True)
        return final
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is None:
        raise RootfsError("mmdebstrap is not installed: apt-get install -y mmdebstrap (Debian/Ubuntu), then "
                          f"`{BUILD_COMMAND}`")
    parent = final.parent
    parent.mkdir(parents=True, exist_ok=True)
    os.chmod(parent, 0o755)  # the sandbox's per-run uids must reach the tree
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}.tmp-", dir=parent))
    target = work / "root"
    logfile = Path(f"{work}.log")
    argv = [mmdebstrap, f"--variant={VARIANT}", f"--include={','.join(PACKAGES)}",
            "--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/doc/*",
            "--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-exclude=/usr/share/info/*",
            SUITE, str(target), mirror or os.environ.get("JEVAL_ROOTFS_MIRROR") or DEFAULT_MIRROR]
    if log:
        print(f"building the terminal-task root filesystem in {final} (a few minutes; log: {logfile})", flush=True)
    start = time.monotonic()
    try:
        with open(logfile, "wb") as out:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, check=False)
        if proc.returncode != 0:
            raise RootfsError(f"mmdebstrap failed with exit status {proc.returncode}; see {logfile} "
                              f"(command: {' '.join(argv)})")
        (target / "etc" / "gitconfig").write_text(GITCONFIG)
        for name in MOUNT_POINTS:
            (target / name).mkdir(mode=0o755, exist_ok=True)
        seconds = time.monotonic() - start
        size = _tree_bytes(target)
        (target / MARKER).write_text(json.dumps({
            "key": rootfs_key(), "suite": SUITE, "variant": VARIANT, "packages": list(PACKAGES),
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "build_seconds": round(seconds, 1),
            "bytes": size}, indent=1) + "\n")
        os.chmod(target, 0o755)
        if final.exists():  # built meanwhile by another process, or force: replace
            shutil.rmtree(final)
        os.rename(target, final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    shutil.rmtree(work, ignore_errors=True)
    logfile.unlink(missing_ok=True)
    if log:
        print(f"built {final} in {seconds:.0f} s ({size / 2**20:.0f} MiB)", flush=True)
    return final


def _tree_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def main(argv: list[str] | None = None) -> int:
    """``python -m pytest_jeval.sandbox.shell.rootfs {build,path,check}``."""
    parser = argparse.ArgumentParser(prog="python -m pytest_jeval.sandbox.shell.rootfs",
                                     description="The terminal-task root filesystem (docs/terminal.md).")
    parser.add_argument("action", choices=("build", "path", "check"))
    parser.add_argument("--mirror", help=f"Debian mirror (default $JEVAL_ROOTFS_MIRROR or {DEFAULT_MIRROR})")
    parser.add_argument("--force", action="store_true", help="rebuild even when a usable tree is cached")
    args = parser.parse_args(argv)
    if args.action == "path":
        print(rootfs_path())
        return 0
    if args.action == "check":
        problems = check_rootfs()
        for problem in problems:
            print(problem, file=sys.stderr)
        if not problems:
            print(rootfs_path())
        return 1 if problems else 0
    try:
        print(build_rootfs(mirror=args.mirror, force=args.force))
    except RootfsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
