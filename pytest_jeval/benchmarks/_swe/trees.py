"""One prepared checkout per instance, the counterpart of upstream's instance image, copied for each use.

Built once into the cache (:mod:`.cache`):

1. on the host: the mirror cloned at ``base_commit`` with no later history (:func:`.repos.checkout`), and
   ``/.jeval/`` added to ``.git/info/exclude``;
2. in the sandbox, the checkout at ``/sandbox`` with the environment read-only and no network: the
   checkout's own interpreter ``/sandbox/.jeval/venv`` (a virtualenv over the environment: the
   environment's site-packages are a site folder of it, and its console scripts are rewritten to start
   this interpreter), so the recipe's ``install`` (``pip install -e .``, ``python setup.py develop``)
   writes into the checkout and never into the shared environment; then the recipe's ``pre_install``
   steps (those that need root and the network - ``apt-get``, ``locale-gen``, writes to ``/etc`` - are
   skipped and recorded; one that fails is recorded and the next one runs), the ``install`` step (its
   failure is a harness error with its output), the untracked files it made added to
   ``.git/info/exclude`` (so a submission's ``git diff`` never holds build output), and upstream's
   ``git commit --allow-empty -am SWE-bench``, so that ``git diff`` shows only later changes.

Each episode and each grading gets a fresh copy (:func:`copy_tree`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shutil
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._swe.cache import build_once, digest
from pytest_jeval.benchmarks._swe.envs import Env
from pytest_jeval.benchmarks._swe.repos import checkout
from pytest_jeval.benchmarks._swe.sandboxed import VENV, run_script
from pytest_jeval.benchmarks._swe.specs import Spec

__all__ = ["Tree", "TreeError", "copy_tree", "ensure_tree", "needs_root"]

RECIPE_VERSION = 1
SETUP_FAILED = "JEVAL_STEP_FAILED"
SKIPPED = "JEVAL_STEP_SKIPPED"
_ROOT_STEP = re.compile(r"(^|[;&|]\s*|\s)(apt-get|apt|locale-gen|dpkg|update-locale|useradd)\b|>\s*/etc/|\s/etc/\S|"
                        r"^\s*(wget|curl)\b")
_SAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


class TreeError(RuntimeError):
    """An instance's checkout could not be prepared (its install step failed; the output is in the message)."""


@dataclasses.dataclass(frozen=True)
class Tree:
    """A prepared checkout in the cache."""

    path: Path
    skipped: tuple[str, ...]
    """``pre_install`` steps not run here (they need root and the network)."""
    failed: tuple[str, ...]
    """``pre_install`` steps that ran and failed."""
    built_now: bool


def needs_root(step: str) -> bool:
    """True for a setup step that needs root or the network (system packages, locales, /etc, downloads)."""
    return bool(_ROOT_STEP.search(step))


def setup_script(spec: Spec, env: Env) -> str:
    """The in-sandbox part of the build (see the module docstring)."""
    lines = [
        "set -o pipefail",
        f"{env.python} -m venv --without-pip {VENV} || exit 90",
        f"site=$({VENV}/bin/python -c 'import sysconfig; print(sysconfig.get_path(\"purelib\"))') || exit 91",
        f"echo \"import site; site.addsitedir('{env.site_packages}')\" > \"$site/_jeval_env.pth\"",
        f"for f in {env.bin_dir}/*; do",
        '  name=$(basename "$f")',
        '  case "$name" in python*|activate*|Activate*) continue;; esac',
        f'  [ -f "$f" ] && head -n 1 "$f" | grep -q "^#!{env.bin_dir}/python" || continue',
        f'  {{ echo "#!{VENV}/bin/python"; tail -n +2 "$f"; }} > "{VENV}/bin/$name" && chmod 755 "{VENV}/bin/$name"',
        "done",
    ]
    for step in spec.pre_install:
        if needs_root(step):
            lines.append(f"echo {_q(SKIPPED + ' ' + step)}")
        else:
            lines.append(f"{step}\njeval_rc=$?\n[ $jeval_rc -eq 0 ] || echo {_q(SETUP_FAILED + ' ' + step)}")
    if spec.install:
        lines.append(f"{spec.install} || {{ echo 'JEVAL_INSTALL_FAILED'; exit 92; }}")
    lines += [
        f"{VENV}/bin/python - <<'JEVAL_PY'",
        "import subprocess",
        "out = subprocess.run(['git', 'ls-files', '--others', '--exclude-standard', '-z'],",
        "                     capture_output=True, check=True)",
        "names = [n for n in out.stdout.decode('utf-8', 'surrogateescape').split('\\0') if n]",
        "def esc(n):",
        "    for c in '\\\\[]*?!# ':",
        "        n = n.replace(c, '\\\\' + c)",
        "    return '/' + n",
        "with open('.git/info/exclude', 'a', encoding='utf-8', errors='surrogateescape') as f:",
        "    f.write(''.join(esc(n) + '\\n' for n in names))",
        "JEVAL_PY",
        "git -c user.name=SWE-bench -c user.email=setup@swebench.config commit --quiet --allow-empty -am SWE-bench "
        "|| exit 93",
    ]
    return "\n".join(lines) + "\n"


def _q(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def ensure_tree(instance_id: str, base_commit: str, spec: Spec, env: Env, *, mirror: Path, cache: Path,
                timeout: float) -> Tree:
    """The prepared checkout of an instance, built now when the cache has none."""
    key = digest(RECIPE_VERSION, base_commit, spec.pre_install, spec.install, env.key)
    final = cache / "trees" / f"{_SAFE_ID.sub('_', instance_id)}-{key}"

    def build(folder: Path) -> dict[str, Any]:
        tree = folder / "tree"
        tree.mkdir(mode=0o755)
        checkout(mirror, base_commit, tree)
        with open(tree / ".git" / "info" / "exclude", "a", encoding="utf-8") as f:
            f.write("\n/.jeval/\n")
        result = run_script(tree, setup_script(spec, env), env, timeout=timeout)
        out = result.stdout + ("\n" + result.stderr if result.stderr else "")
        if not result.ok:
            what = "its install step" if result.returncode == 92 else f"its set-up (exit {result.returncode})"
            if result.status == "timeout":
                what = f"its set-up (timed out after {timeout:g}s)"
            raise TreeError(f"{instance_id}: the checkout could not be prepared: {what} failed:\n{out.strip()[-3000:]}")
        return {"instance_id": instance_id, "base_commit": base_commit, "env": env.key,
                "skipped": _steps(out, SKIPPED), "failed": _steps(out, SETUP_FAILED), "log_tail": out[-2000:]}

    marker, built = build_once(final, build, kind="tree", root=cache)
    return Tree(final / "tree", tuple(marker.get("skipped") or ()), tuple(marker.get("failed") or ()), built)


def _steps(output: str, tag: str) -> list[str]:
    return [line[len(tag) + 1:] for line in output.splitlines() if line.startswith(tag + " ")]


WORK_ROOM_BYTES = 512 * 1024 * 1024
"""Room a copy of a checkout gets beyond its own size (the agent's edits, build output, test logs)."""
WORK_ROOM_FILES = 65_536


@functools.lru_cache(maxsize=64)
def room_for(tree: Path) -> tuple[int, int]:
    """``(bytes, entries)`` a copy of the prepared checkout ``tree`` needs, with room to work: a workspace is a
    size-limited file system as root (:func:`pytest_jeval.sandbox.workdir.make_room`), and a repository's
    history alone may be larger than its default size."""
    size = count = 0
    for root, dirs, names in os.walk(tree):
        count += len(dirs) + len(names)
        for name in names:
            try:
                size += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return size + size // 4 + WORK_ROOM_BYTES, count + WORK_ROOM_FILES


def copy_tree(tree: Path, dest: Path) -> None:
    """Copy the prepared checkout into the (empty) folder ``dest``: files, folders and links as they are."""
    for entry in os.scandir(tree):
        source = Path(entry.path)
        target = dest / entry.name
        if entry.is_dir(follow_symlinks=False):
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target, follow_symlinks=False)
