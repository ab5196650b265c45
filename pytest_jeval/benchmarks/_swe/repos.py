"""Repository mirrors and checkouts at an instance's base commit.

A mirror of ``owner/name`` is found in ``repos_dir`` under ``owner__name`` (SWE-bench's own file-safe
spelling), as any of:

* ``owner__name.git/`` or ``owner__name/``: a bare clone (``git clone --mirror``) or a working clone;
* ``owner__name.bundle``: a git bundle (``git bundle create owner__name.bundle --all``), unpacked once into
  the cache.

With ``fetch_repos = true`` a repository missing there is cloned from GitHub into the cache (the only
network the harness uses besides the package index). A checkout is a local clone of the mirror reset to
the base commit with every later commit made unreachable and pruned, as upstream's instance images do:
the origin remote removed, other branches and the tags not reachable from the base commit deleted, the
reflog expired and the objects garbage-collected, so an agent cannot find the fix in the history.

Host-side git runs only on mirrors and fresh clones, never on a checkout an agent has touched (those are
read in the sandbox).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from pytest_jeval.benchmarks._swe.cache import build_once, digest

__all__ = ["RepoError", "checkout", "find_mirror", "git", "has_commit", "mirror_name", "read_at", "resolve_mirror"]

GIT_TIMEOUT = 3600.0
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA = re.compile(r"^[0-9a-f]{7,40}$")
IDENTITY = ("-c", "user.name=SWE-bench", "-c", "user.email=setup@swebench.config")


class RepoError(ValueError):
    """A repository or a commit that cannot be had; the message says how to provide it."""


def git(*args: str, cwd: Path | None = None, input: bytes | None = None, timeout: float = GIT_TIMEOUT,
        check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run git on a mirror or a fresh clone, with no system or user configuration and no prompts."""
    env = {"PATH": os.environ.get("PATH") or "/usr/bin:/bin", "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0", "HOME": os.devnull}
    argv = ["git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null", "-c", "protocol.file.allow=always",
            "-c", "gc.auto=0", *args]
    done = subprocess.run(argv, cwd=cwd, input=input, capture_output=True, timeout=timeout, env=env, check=False)
    if check and done.returncode != 0:
        raise RepoError(f"git {' '.join(args[:3])} failed ({done.returncode}): "
                        f"{done.stderr.decode('utf-8', 'replace').strip()[-1500:]}")
    return done


def mirror_name(repo: str) -> str:
    """``owner__name`` for ``owner/name`` (RepoError for anything else)."""
    if not _REPO.match(repo) or ".." in repo:
        raise RepoError(f"{repo!r} is not a repository name of the form owner/name")
    return repo.replace("/", "__")


def find_mirror(repos_dir: Path | None, repo: str) -> Path | None:
    """The mirror of ``repo`` in ``repos_dir`` (a clone folder or a bundle file), or None."""
    if repos_dir is None:
        return None
    name = mirror_name(repo)
    for candidate in (repos_dir / f"{name}.git", repos_dir / name):
        if candidate.is_dir() and ((candidate / "HEAD").is_file() or (candidate / ".git").exists()):
            return candidate
    bundle = repos_dir / f"{name}.bundle"
    return bundle if bundle.is_file() else None


def how_to_add(repo: str, repos_dir: Path | None) -> str:
    """What a user runs to make ``repo`` available (the end of a missing-repository message)."""
    where = str(repos_dir) if repos_dir is not None else "<repos_dir>"
    name = mirror_name(repo)
    return (f"add it: git clone --mirror https://github.com/{repo} {where}/{name}.git (or put a bundle there as "
            f"{name}.bundle), set [benchmarks.options] repos_dir to that folder, or set fetch_repos = true to "
            "let the harness clone it into its cache")


def resolve_mirror(repo: str, repos_dir: Path | None, fetch: bool, cache: Path,
                   clone_base: str = "https://github.com") -> Path:
    """A git directory holding ``repo``'s history: the mirror in ``repos_dir``, a bundle unpacked into the
    cache, or (``fetch``) a clone from ``<clone_base>/owner/name`` in the cache. RepoError saying how to
    add a missing one."""
    found = find_mirror(repos_dir, repo)
    name = mirror_name(repo)
    if found is not None and found.is_dir():
        return found
    if found is not None:  # a bundle: unpacked once, named by its content
        info = found.stat()
        final = cache / "mirrors" / f"{name}-{digest(str(found.resolve()), info.st_size, info.st_mtime_ns)}.git"

        def unpack(dest: Path) -> dict[str, object]:
            git("clone", "--quiet", "--mirror", str(found), str(dest / "repo.git"))
            return {"repo": repo, "bundle": str(found)}

        build_once(final, unpack, kind="mirror", root=cache)
        return final / "repo.git"
    if not fetch:
        where = f"repos_dir {repos_dir}" if repos_dir is not None else "no repos_dir is set"
        raise RepoError(f"repository {repo} is not in the mirrors ({where}); {how_to_add(repo, repos_dir)}")
    url = f"{clone_base.rstrip('/')}/{repo}"
    final = cache / "mirrors" / f"{name}-{digest(url)}.git"

    def clone(dest: Path) -> dict[str, object]:
        try:
            git("clone", "--quiet", "--mirror", url, str(dest / "repo.git"))
        except RepoError as exc:
            raise RepoError(f"repository {repo} could not be cloned from {url} (fetch_repos = true): {exc}") from None
        return {"repo": repo, "url": url}

    build_once(final, clone, kind="mirror", root=cache)
    return final / "repo.git"


def has_commit(mirror: Path, sha: str) -> bool:
    """True when the mirror holds the commit ``sha``."""
    if not _SHA.match(sha):
        return False
    return git("cat-file", "-e", f"{sha}^{{commit}}", cwd=mirror, check=False, timeout=60).returncode == 0


def read_at(mirror: Path, sha: str, path: str) -> str | None:
    """The text of ``path`` at commit ``sha``, or None when it does not exist there."""
    done = git("show", f"{sha}:{path}", cwd=mirror, check=False, timeout=60)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def checkout(mirror: Path, sha: str, dest: Path) -> None:
    """Clone ``mirror`` into the empty folder ``dest`` at ``sha``, with no history after it (see the module)."""
    git("clone", "--quiet", "--no-checkout", str(mirror), str(dest))
    git("reset", "--quiet", "--hard", sha, cwd=dest)
    git("remote", "remove", "origin", cwd=dest)
    head = git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=dest, check=False).stdout.decode().strip()
    refs = git("for-each-ref", "--format=%(refname)", cwd=dest).stdout.decode().split()
    for ref in refs:
        if ref == f"refs/heads/{head}":
            continue
        if ref.startswith("refs/tags/") and git("merge-base", "--is-ancestor", ref, sha, cwd=dest,
                                                check=False).returncode == 0:
            continue  # a tag upstream keeps: it points at the past
        git("update-ref", "-d", ref, cwd=dest)
    git("reflog", "expire", "--expire=now", "--all", cwd=dest)
    git("gc", "--quiet", "--prune=now", cwd=dest)
    later = git("rev-list", "--all", "--not", sha, cwd=dest).stdout.decode().split()
    if later:
        raise RepoError(f"the checkout at {sha} still reaches {len(later)} later commits")
