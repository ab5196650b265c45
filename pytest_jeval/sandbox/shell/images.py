"""Base images without a registry: a Dockerfile's ``FROM`` mapped to a Debian root filesystem built with mmdebstrap.

:func:`resolve_base` reads an image reference and says which Debian release and which
packages stand in for it, and what differs (:attr:`BaseImage.notes`, recorded with every
sample); :func:`build_base` builds that root filesystem once and caches it.

- ``debian:<release or version>[-slim]``: that Debian release, ``minbase``;
- ``ubuntu:20.04``/``22.04``/``24.04`` and later: Debian bullseye/bookworm/trixie (the nearest in age);
- ``python:<version>-slim-<release>``: that release with its ``python3``, ``pip`` and ``venv`` (no
  ``EXTERNALLY-MANAGED`` marker, like the image); ``python:<version>[-<release>]`` adds a compiler,
  ``git``, ``curl`` and ``wget`` (a part of ``buildpack-deps``);
- Terminal-Bench 1's ``t-bench/ubuntu-24-04`` and ``t-bench/python-3-13``: as ``ubuntu:24.04`` and
  ``python:3.13-slim-bookworm``.

A tag without a release means the release Docker Hub uses today (trixie). The Python of an
image is Debian's ``python3`` of that release (bullseye 3.9, bookworm 3.11, trixie 3.13); a
different requested version is a recorded difference. Anything else (alpine, CUDA, other
distributions, ``scratch``) is :class:`UnsupportedBase` with the reason.

Every file of a built tree is owned by the namespace uids (``ENV_UID_BASE`` + the uid in
the image), so container root can write and chown in its overlay; see :mod:`.nsrun`.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ENV_UID_BASE", "ENV_UID_COUNT", "PYTHON_OF", "BaseImage", "BuildError", "UnsupportedBase", "base_path",
           "build_base", "env_cache_dir", "resolve_base", "shift_ownership", "tree_bytes"]

ENV_UID_BASE = 1_650_000_000
"""Host uid of container root in every image sandbox (the namespace maps 0..65535 onto it)."""
ENV_UID_COUNT = 65536
RELEASES = ("bullseye", "bookworm", "trixie")
PYTHON_OF = {"bullseye": "3.9", "bookworm": "3.11", "trixie": "3.13"}
"""Debian's ``python3`` in each release."""
DEFAULT_RELEASE = "trixie"
"""The Debian release behind an image tag that names none (Docker Hub's default since August 2025)."""
_DEBIAN_NAMES = {"11": "bullseye", "12": "bookworm", "13": "trixie", "bullseye": "bullseye", "bookworm": "bookworm",
                 "trixie": "trixie", "stable": "trixie", "latest": "trixie", "oldstable": "bookworm"}
_UBUNTU = {"20.04": "bullseye", "focal": "bullseye", "22.04": "bookworm", "jammy": "bookworm", "24.04": "trixie",
           "noble": "trixie", "24.10": "trixie", "oracular": "trixie", "25.04": "trixie", "plucky": "trixie",
           "25.10": "trixie", "questing": "trixie", "latest": "trixie", "rolling": "trixie", "devel": "trixie"}
PYTHON_PACKAGES = ("python3", "python3-pip", "python3-venv", "python-is-python3", "ca-certificates", "netbase",
                   "tzdata")
BUILDPACK_PACKAGES = ("build-essential", "python3-dev", "git", "curl", "wget", "procps", "openssh-client",
                      "xz-utils", "unzip")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RECIPE_VERSION = 2
"""Bumped whenever :func:`build_base` changes what a tree holds."""
MIRROR = "http://deb.debian.org/debian"
MARKER = ".jeval-base.json"
_APT_REMOVE = '"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"'
APT_CLEAN = ("// As in Docker's Debian images: no package cache files and no downloaded packages kept in a layer.\n"
             f"DPkg::Post-Invoke {{ {_APT_REMOVE}; }};\nAPT::Update::Post-Invoke {{ {_APT_REMOVE}; }};\n"
             'Dir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n')
"""``/etc/apt/apt.conf.d/docker-clean`` of every base."""


class UnsupportedBase(Exception):
    """A ``FROM`` image this builder cannot stand in for; the message is the reason."""


class BuildError(Exception):
    """Building a root filesystem or an environment failed; the message says where (and which log)."""


@dataclasses.dataclass(frozen=True)
class BaseImage:
    """What stands in for a ``FROM`` image."""

    reference: str
    """The image as the Dockerfile names it."""
    release: str
    """The Debian release built (bullseye, bookworm, trixie)."""
    flavor: str
    """``debian`` (minbase), ``python-slim`` or ``python`` (see the module docstring)."""
    packages: tuple[str, ...] = ()
    """Installed on top of ``minbase``."""
    env: tuple[tuple[str, str], ...] = (("PATH", DEFAULT_PATH),)
    """The image's own ``ENV`` defaults."""
    python_requested: str | None = None
    """The Python version the tag asks for (``python:3.13-...``), if any."""
    notes: tuple[str, ...] = ()
    """How it differs from the real image, one sentence each (recorded in every sample)."""

    @property
    def python(self) -> str | None:
        """The Python version the built tree has (None for a tree without ``python3``)."""
        return PYTHON_OF[self.release] if "python3" in self.packages else None

    def key(self) -> str:
        """A short hash of everything that decides the tree's contents."""
        recipe = json.dumps({"release": self.release, "packages": sorted(self.packages), "flavor": self.flavor,
                             "recipe": RECIPE_VERSION, "uid_base": ENV_UID_BASE}, sort_keys=True)
        return hashlib.sha256(recipe.encode()).hexdigest()[:16]

    @property
    def name(self) -> str:
        """``<release>-<flavor>-<key>``: the cache folder's name."""
        return f"{self.release}-{self.flavor}-{self.key()}"


_PY_TAG = re.compile(r"^(?P<version>3(?:\.\d+){0,2})?(?:-?(?P<slim>slim))?(?:-?(?P<release>[a-z]+))?$")


def _split_reference(reference: str) -> tuple[str, str, list[str]]:
    """``(repository, tag, notes)`` with ``docker.io/library/`` and a digest removed."""
    notes = []
    ref = reference.strip()
    if "@" in ref:
        ref, _, digest = ref.partition("@")
        notes.append(f"the digest @{digest[:19]}... is not checked: the image is rebuilt from Debian packages")
    repo, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if repo.startswith(prefix):
            repo = repo[len(prefix):]
    if repo.startswith("library/"):
        repo = repo[len("library/"):]
    return repo.lower(), tag.lower() or "latest", notes


def resolve_base(reference: str) -> BaseImage:
    """What stands in for the image ``reference``; :class:`UnsupportedBase` with the reason."""
    repo, tag, notes = _split_reference(reference)
    supported = ("supported bases: debian:<release>[-slim], ubuntu:20.04/22.04/24.04+, python:<version>[-slim]"
                 "[-<release>], Terminal-Bench's t-bench/ubuntu-24-04 and t-bench/python-3-13")
    if repo.endswith("t-bench/ubuntu-24-04"):
        notes.append(f"{reference} (ubuntu:24.04 with tmux and asciinema) is built as Debian trixie without tmux "
                     "and asciinema (this harness drives no terminal multiplexer)")
        return BaseImage(reference, "trixie", "debian", notes=tuple(notes))
    if repo.endswith("t-bench/python-3-13"):
        notes.append(f"{reference} (python:3.13-slim-bookworm with tmux and asciinema) is built as "
                     "python:3.13-slim-bookworm without tmux and asciinema")
        return _python(reference, "3.13", True, "bookworm", notes)
    if repo == "debian":
        base = tag.removesuffix("-slim")
        release = _DEBIAN_NAMES.get(base) or _DEBIAN_NAMES.get(base.split(".")[0]) \
            or _DEBIAN_NAMES.get(base.split("-")[0])
        if release is None:
            raise UnsupportedBase(f"FROM {reference}: Debian {tag!r} is not a release this builder knows "
                                  f"({', '.join(RELEASES)}); {supported}")
        if base in ("latest", "stable"):
            notes.append(f"{reference} is built as Debian {release}, the stable release today")
        return BaseImage(reference, release, "debian", notes=tuple(notes))
    if repo == "ubuntu":
        release = _UBUNTU.get(tag.split("-")[0]) or _UBUNTU.get(".".join(tag.split(".")[:2]))
        if release is None:
            raise UnsupportedBase(f"FROM {reference}: Ubuntu {tag!r} is not mapped; {supported}")
        notes.append(f"{reference} is built as Debian {release} (no Ubuntu mirror is used: package names mostly "
                     "agree, versions differ)")
        return BaseImage(reference, release, "debian", notes=tuple(notes))
    if repo == "python":
        match = _PY_TAG.match("" if tag == "latest" else tag)
        if match is None or (match.group("release") or DEFAULT_RELEASE) not in RELEASES:
            raise UnsupportedBase(f"FROM {reference}: the tag {tag!r} is not a python image on Debian "
                                  f"{', '.join(RELEASES)} (alpine and windows variants are not supported); {supported}")
        return _python(reference, match.group("version"), bool(match.group("slim")), match.group("release"), notes)
    if "cuda" in repo or repo.startswith("nvidia/"):
        raise UnsupportedBase(f"FROM {reference}: a CUDA image needs a GPU, which image sandboxes do not provide")
    raise UnsupportedBase(f"FROM {reference}: {repo!r} images are not supported; {supported}")


def _python(reference: str, version: str | None, slim: bool, release: str | None, notes: list[str]) -> BaseImage:
    chosen = release or DEFAULT_RELEASE
    if release is None:
        notes.append(f"{reference} names no Debian release: built on {chosen}, Docker Hub's default today")
    have = PYTHON_OF[chosen]
    if version and not (have == version or have.startswith(version + ".") or version.startswith(have + ".")
                        or version == "3"):
        notes.append(f"Python {version} requested, Debian {chosen}'s python3 ({have}) provided")
    packages = PYTHON_PACKAGES if slim else PYTHON_PACKAGES + BUILDPACK_PACKAGES
    if not slim:
        notes.append(f"{reference} (buildpack-deps) is built with only part of its packages: "
                     f"{' '.join(BUILDPACK_PACKAGES)}")
    notes.append("python is Debian's python3 in /usr/bin (the image's is in /usr/local/bin); pip installs into "
                 "/usr/local/lib as in the image")
    env = (("PATH", DEFAULT_PATH), ("LANG", "C.UTF-8"), ("PYTHON_VERSION", have))
    return BaseImage(reference, chosen, "python-slim" if slim else "python", packages, env, version, tuple(notes))


# --------------------------------------------------------------------------------------- the cache

def env_cache_dir() -> Path:
    """``<rootfs cache>/environments``: bases, built environments and verifier kits (never in the repository)."""
    from pytest_jeval.sandbox.shell.rootfs import cache_dir

    return cache_dir() / "environments"


def base_path(image: BaseImage) -> Path:
    """Where the tree of ``image`` is (or will be): ``<cache>/bases/<name>/root``."""
    return env_cache_dir() / "bases" / image.name / "root"


@contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """An exclusive lock on ``<cache>/locks/<name>`` (another process building the same thing waits)."""
    folder = env_cache_dir() / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _searchable(path: Path) -> None:
    """Make ``path`` and its parents up to the cache root enterable by the namespace uids."""
    root = env_cache_dir().parent
    for folder in [path, *path.parents]:
        if folder == root.parent:
            break
        try:
            mode = os.stat(folder).st_mode
            if mode & 0o001 == 0:
                os.chmod(folder, stat.S_IMODE(mode) | 0o011)
        except OSError:
            break


def build_base(image: BaseImage, *, log: bool = True) -> tuple[Path, float]:
    """The tree of ``image``, built unless cached: ``(path, seconds spent building now)``."""
    final = base_path(image)
    if (final / MARKER).is_file():
        return final, 0.0
    with cache_lock(f"base-{image.name}"):
        if (final / MARKER).is_file():
            return final, 0.0
        mmdebstrap = shutil.which("mmdebstrap")
        if mmdebstrap is None:
            raise BuildError("mmdebstrap is not installed: apt-get install -y mmdebstrap (make rootfs installs it)")
        final.parent.mkdir(parents=True, exist_ok=True)
        _searchable(final.parent)
        for stale in final.parent.glob(".build-*"):  # a build killed half-way (we hold its lock)
            shutil.rmtree(stale, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
        target, logfile = work / "root", final.parent / "build.log"
        argv = [mmdebstrap, "--variant=minbase", "--dpkgopt=path-exclude=/usr/share/man/*",
                "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/locale/*",
                "--dpkgopt=path-exclude=/usr/share/info/*"]
        if image.packages:
            argv.append(f"--include={','.join(image.packages)}")
        argv += [image.release, str(target), os.environ.get("JEVAL_ROOTFS_MIRROR") or MIRROR]
        if log:
            print(f"building the base {image.name} for FROM {image.reference} (about a minute; log: {logfile})",
                  flush=True)
        start = time.monotonic()
        try:
            with open(logfile, "wb") as out:
                proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                      check=False)
            if proc.returncode != 0:
                raise BuildError(f"mmdebstrap failed with exit status {proc.returncode} building {image.name}; "
                                 f"see {logfile}")
            _finish_tree(target, image)
            seconds = time.monotonic() - start
            (target / MARKER).write_text(json.dumps({
                "name": image.name, "release": image.release, "flavor": image.flavor,
                "packages": list(image.packages), "build_seconds": round(seconds, 1), "bytes": tree_bytes(target),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1) + "\n")
            os.lchown(target / MARKER, ENV_UID_BASE, ENV_UID_BASE)
            os.rename(target, final)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return final, seconds


def _finish_tree(target: Path, image: BaseImage) -> None:
    """Make the tree look like the image: no pip marker for python images, an empty resolv.conf; then shift
    every owner onto the namespace uids."""
    if image.flavor.startswith("python"):
        for marker in target.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
            marker.unlink()
    (target / "etc/apt/apt.conf.d/docker-clean").write_text(APT_CLEAN)
    for name in ("etc/resolv.conf", "etc/hostname"):
        path = target / name
        if path.is_symlink() or path.exists():
            path.unlink()
        path.write_text("")
    os.chmod(target, 0o755)
    shift_ownership(target, ENV_UID_BASE)


def shift_ownership(root: Path, base: int) -> None:
    """Add ``base`` to the owner and group of every entry below ``root`` (once per inode, links not followed),
    keeping set-id bits (``chown`` clears them)."""
    seen: set[tuple[int, int]] = set()

    def shift(path: str) -> None:
        info = os.lstat(path)
        if (info.st_dev, info.st_ino) in seen:
            return
        seen.add((info.st_dev, info.st_ino))
        if info.st_uid >= base:
            return
        os.lchown(path, info.st_uid + base, info.st_gid + base)
        if not stat.S_ISLNK(info.st_mode) and info.st_mode & (stat.S_ISUID | stat.S_ISGID):
            os.chmod(path, stat.S_IMODE(info.st_mode))

    shift(str(root))
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            shift(os.path.join(folder, name))


def tree_bytes(path: Path) -> int:
    """Bytes of the regular files below ``path`` (each inode once)."""
    total, seen = 0, set()
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                info = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen and stat.S_ISREG(info.st_mode):
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total
