"""One Python environment per (repo, version): a virtualenv built once from the package index, read-only after.

Upstream builds a conda environment per (repo, version) inside an Ubuntu 22.04 image, with the recipe's
Python. Here the environment is a virtualenv on this machine (Debian 12 in this project's images), on the
recipe's Python when the machine has it (``python3.X`` in ``/usr/bin`` or ``/usr/local/bin``), else on the
sandbox's own Python; the difference is recorded in every record (``deviations``). What goes in, in
upstream's order:

1. ``packages``: ``requirements.txt`` - the repository's requirements files at the instance's
   ``environment_setup_commit``, read from the mirror (upstream downloads them from GitHub), ``-r``
   includes followed and ``-e .`` lines left out as upstream does; ``environment.yml`` - its pip section
   and its conda packages under the same names (conda-only packages cannot be installed); otherwise a
   list of conda-style specs (``numpy=1.19`` read as ``numpy==1.19.*``), ``python`` left out;
2. ``pip_packages``;
3. ``harness_packages`` (this project's key): copied from the harness's own environment with their
   requirements, console scripts written for the environment's interpreter.

The environment lives in the cache (:mod:`.cache`), is built under a lock with network allowed (the
package index only), and is bound read-only into every sandboxed run of that (repo, version).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._swe.cache import build_once, digest
from pytest_jeval.benchmarks._swe.repos import mirror_name, read_at
from pytest_jeval.benchmarks._swe.specs import Spec

__all__ = ["Env", "EnvError", "choose_python", "ensure_env", "os_name"]

RECIPE_VERSION = 1
"""Bumped when the build steps below change what an environment holds."""


class EnvError(RuntimeError):
    """An environment could not be built (the message holds the failing step and its output)."""


@dataclasses.dataclass(frozen=True)
class Env:
    """A built environment."""

    root: Path
    key: str
    python: str
    """Its interpreter (``<root>/venv/bin/python``)."""
    bin_dir: str
    site_packages: str
    base_python: str
    python_version: str
    deviations: tuple[str, ...]
    ro_paths: tuple[str, ...]
    """What a sandboxed run must see read-only: the environment, and its base interpreter's prefix outside /usr."""
    built_now: bool = False


def os_name() -> str:
    """This machine's operating system, as ``/etc/os-release`` names it."""
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return "this machine's Linux"


def _version_of(python: str) -> str:
    done = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, timeout=60, check=False)
    return done.stdout.strip() if done.returncode == 0 else ""


def choose_python(wanted: str) -> tuple[str, str]:
    """``(interpreter, its version)``: the recipe's Python where this machine has it, else the sandbox's."""
    from pytest_jeval.sandbox.limits import sandbox_python, world_accessible
    from pytest_jeval.sandbox.plans import current_plan

    for candidate in (f"/usr/bin/python{wanted}", f"/usr/local/bin/python{wanted}", shutil.which(f"python{wanted}")):
        if candidate and os.path.exists(candidate) and world_accessible(os.path.realpath(candidate)):
            version = _version_of(candidate)
            if version:
                return os.path.realpath(candidate), version
    fallback = os.path.realpath(sandbox_python(current_plan().drops_privileges))
    return fallback, _version_of(fallback)


def _run(argv: list[str], what: str, timeout: float) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise EnvError(f"{what}: timed out after {timeout:g}s") from None
    if done.returncode != 0:
        raise EnvError(f"{what} failed (exit {done.returncode}): {(done.stdout + done.stderr).strip()[-3000:]}")
    return done.stdout


def requirements_text(spec: Spec, mirror: Path, commit: str) -> str:
    """The requirements files at ``commit`` as upstream assembles them (empty when none is found)."""
    for path in spec.requirements_paths:
        text = read_at(mirror, commit, path)
        if text is None:
            continue
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        extra: list[str] = []
        kept: list[str] = []
        for line in text.split("\n"):
            stripped = line.strip()
            if stripped.startswith("-r"):
                included = read_at(mirror, commit, f"{folder}/{stripped[2:].strip()}".lstrip("/")) or ""
                extra += [x for x in included.split("\n") if not _excluded(x)]
            elif not _excluded(line):
                kept.append(line)
        return "\n".join([*extra, "\n".join(kept)])
    return ""


def _excluded(line: str) -> bool:
    return any(line.strip().startswith(x) for x in ("-e .", "#", ".[test"))


def environment_yml_requirements(text: str) -> list[str]:
    """pip requirements from a conda ``environment.yml``: its ``pip:`` list and its conda packages."""
    reqs: list[str] = []
    in_deps = in_pip = False
    pip_indent = 0
    for line in text.split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if re.match(r"^dependencies\s*:", line):
            in_deps = True
            continue
        if in_deps and indent == 0:
            in_deps = in_pip = False
        if not in_deps:
            continue
        item = line.strip()[1:].strip() if line.strip().startswith("-") else ""
        if in_pip and indent <= pip_indent:
            in_pip = False
        if re.match(r"^pip\s*:", item):
            in_pip, pip_indent = True, indent
        elif in_pip and item:
            reqs.append(item)
        elif item and not item.startswith(("python", "pip")) and "::" not in item:
            reqs.append(conda_to_pip(item))
    return reqs


def conda_to_pip(spec: str) -> str:
    """``numpy=1.19`` -> ``numpy==1.19.*``; ``numpy==1.19.2`` and ``>=``/``<`` forms as they are."""
    match = re.match(r"^([A-Za-z0-9_.\-\[\]]+)=([^=<>!~\s][^\s]*)$", spec)
    if match:
        name, version = match.groups()
        return f"{name}=={version}" if "*" in version else f"{name}=={version}.*"
    return spec


def _package_list(packages: str) -> list[str]:
    if packages in ("", "requirements.txt", "environment.yml"):
        return []
    return [conda_to_pip(p) for p in shlex.split(packages) if not re.match(r"^python([=<>!~]|$)", p)]


def _harness_closure(names: tuple[str, ...]) -> list[importlib.metadata.Distribution]:
    from packaging.requirements import Requirement

    todo, seen, dists = list(names), set(), []
    while todo:
        name = todo.pop(0)
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            raise EnvError(f"harness_packages: {name!r} is not installed in the harness's environment") from None
        dists.append(dist)
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return dists


def copy_harness_packages(names: tuple[str, ...], site: Path, bin_dir: Path, python: str) -> list[str]:
    """Copy ``names`` and their requirements into ``site``; console scripts into ``bin_dir``."""
    copied = []
    for dist in _harness_closure(names):
        for file in dist.files or []:
            if ".." in file.parts or "__pycache__" in file.parts:
                continue
            source = Path(str(dist.locate_file(file)))
            if source.is_file():
                target = site / Path(*file.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
        for ep in dist.entry_points:
            if ep.group == "console_scripts":
                module, _, func = ep.value.partition(":")
                script = bin_dir / ep.name
                script.write_text(f"#!{python}\nimport sys\nfrom {module} import {func.split('.')[0]}\n"
                                  f"sys.exit({func}())\n")
                script.chmod(0o755)
        copied.append(f"{dist.metadata['Name']}=={dist.version}")
    return copied


def ensure_env(spec: Spec, *, mirror: Path, setup_commit: str, cache: Path, timeout: float) -> Env:
    """The environment of ``spec``, built now when the cache has none (see the module docstring)."""
    base, version = choose_python(spec.python)
    reqs = requirements_text(spec, mirror, setup_commit) if spec.packages == "requirements.txt" else ""
    yml = ""
    if spec.packages == "environment.yml":
        yml = next((t for p in spec.environment_yml_paths if (t := read_at(mirror, setup_commit, p))), "")
    harness = [f"{d.metadata['Name']}=={d.version}" for d in _harness_closure(spec.harness_packages)]
    key = digest(RECIPE_VERSION, spec.python, spec.packages, spec.pip_packages, harness, reqs, yml, base, version)
    final = cache / "envs" / mirror_name(spec.repo) / f"{spec.version}-{key}"
    deviations = _deviations(spec, base, version, bool(reqs), bool(yml))

    def build(root: Path) -> dict[str, Any]:
        venv = root / "venv"
        _run([base, "-m", "venv", str(venv)], f"making the virtualenv with {base}", timeout)
        python = str(venv / "bin" / "python")
        pip = [python, "-m", "pip", "--disable-pip-version-check", "--no-input", "install", "--quiet"]
        steps: list[str] = []
        if reqs.strip():
            (root / "requirements.txt").write_text(reqs)
            _run([*pip, "-r", str(root / "requirements.txt")], "pip install -r requirements.txt", timeout)
            steps.append("requirements.txt")
        if yml:
            wanted = environment_yml_requirements(yml)
            if wanted:
                _run([*pip, *wanted], "pip install (environment.yml)", timeout)
            steps.append("environment.yml: " + " ".join(wanted))
        listed = _package_list(spec.packages)
        if listed:
            _run([*pip, *listed], f"pip install {' '.join(listed)}", timeout)
            steps.append("packages: " + " ".join(listed))
        if spec.pip_packages:
            _run([*pip, *spec.pip_packages], f"pip install {' '.join(spec.pip_packages)}", timeout)
            steps.append("pip_packages: " + " ".join(spec.pip_packages))
        site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                         "reading site-packages", 60).strip())
        if spec.harness_packages:
            steps.append("harness_packages: " + " ".join(
                copy_harness_packages(spec.harness_packages, site, venv / "bin", python)))
        return {"repo": spec.repo, "version": spec.version, "key": key, "python": python, "site_packages": str(site),
                "base_python": base, "python_version": version, "steps": steps, "deviations": deviations}

    marker, built = build_once(final, build, kind="env", root=cache)
    prefix = os.path.dirname(os.path.dirname(base))
    ro = (str(final),) + (() if prefix in ("/", "/usr") or prefix.startswith("/usr/") else (prefix,))
    return Env(root=final, key=key, python=str(marker["python"]), bin_dir=str(final / "venv" / "bin"),
               site_packages=str(marker["site_packages"]), base_python=base, python_version=version,
               deviations=tuple(marker.get("deviations") or deviations), ro_paths=ro, built_now=built)


def _deviations(spec: Spec, base: str, version: str, reqs: bool, yml: bool) -> list[str]:
    out = [f"a pip virtualenv on {os_name()}, where upstream builds a conda environment in an Ubuntu 22.04 container"]
    same = version.startswith(spec.python + ".") or version == spec.python
    out.append(f"Python {version} ({base})" + ("" if same else f" instead of the recipe's Python {spec.python}"))
    if reqs:
        out.append("requirements files read from the mirror at environment_setup_commit (upstream fetches them "
                   "from GitHub)")
    if yml:
        out.append("environment.yml installed with pip under its conda package names")
    if spec.packages not in ("", "requirements.txt", "environment.yml"):
        out.append(f"the recipe's conda packages ({spec.packages}) installed with pip")
    if spec.harness_packages:
        out.append(f"{', '.join(spec.harness_packages)} copied from the harness's own environment")
    return out
