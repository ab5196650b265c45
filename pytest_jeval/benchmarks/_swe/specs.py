"""Install recipes per (repo, version): how an instance's environment is built and its tests run.

The recipes of the repositories SWE-bench covers are read at run time from the installed ``swebench``
package (``swebench.harness.constants.MAP_REPO_VERSION_TO_SPECS``; ``make swebench`` installs release
4.1.0 without its dependencies, the last release that ships them: 5.x moved them into per-instance task
files). Its package ``__init__`` imports Docker and more, so the constants module is loaded below package
stubs when the plain import fails. A ``specs_file`` (JSON, ``{"owner/name": {"version": {...}}}``, the
same keys) gives recipes for repositories the package does not cover, and wins over the package.

Recipe keys (upstream's): ``python``, ``packages`` (``requirements.txt``, ``environment.yml`` or a
space-separated list of conda-style specs), ``pip_packages``, ``pre_install``, ``install``, ``test_cmd``,
``eval_commands``. Keys of this project (specs_file only): ``log_parser`` (a name of
:data:`~pytest_jeval.benchmarks._swe.parsers.PARSERS`; default ``parse_log_pytest``),
``harness_packages`` (pure-Python distributions copied from the harness's own environment instead of the
package index, so an environment builds with no network: the test fixtures use it),
``requirements_paths`` / ``environment_yml_paths`` (where ``packages`` files lie in the repository).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.metadata
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._swe.parsers import PARSERS, REPO_PARSERS

__all__ = ["Spec", "SpecError", "find_spec", "upstream_constants", "upstream_version"]

PACKAGE_HINT = "make swebench (pip install --no-deps swebench==4.1.0)"
KNOWN_KEYS = {"python", "packages", "pip_packages", "pre_install", "install", "test_cmd", "eval_commands",
              "log_parser", "harness_packages", "requirements_paths", "environment_yml_paths",
              "execute_test_as_nonroot", "nano_cpus", "no_use_env"}


class SpecError(ValueError):
    """No usable recipe for an instance's (repo, version); the message says where recipes come from."""


@dataclasses.dataclass(frozen=True)
class Spec:
    """One (repo, version)'s recipe."""

    repo: str
    version: str
    python: str
    test_cmd: str
    log_parser: str
    source: str
    """Where the recipe came from: ``swebench <version>`` or ``specs_file <path>``."""
    packages: str = ""
    pip_packages: tuple[str, ...] = ()
    pre_install: tuple[str, ...] = ()
    install: str = ""
    eval_commands: tuple[str, ...] = ()
    harness_packages: tuple[str, ...] = ()
    requirements_paths: tuple[str, ...] = ()
    environment_yml_paths: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The recipe as JSON builtins (records, cache keys)."""
        return dataclasses.asdict(self)


@functools.cache
def upstream_constants() -> types.ModuleType | None:
    """``swebench.harness.constants`` of the installed package, or None when it is not installed."""
    return upstream_module("swebench.harness.constants")


def upstream_module(name: str) -> types.ModuleType | None:
    """A module of the installed ``swebench`` package (``swebench.harness....``), or None when it cannot be
    imported. Where the package's ``__init__`` cannot be imported (it imports Docker and more, which ``make
    swebench`` leaves out), ``swebench`` and ``swebench.harness`` are put in ``sys.modules`` as bare packages
    first, each time: something that restores ``sys.modules`` (pytester's in-process runs) may have taken
    them out since."""
    try:
        return importlib.import_module(name)
    except ImportError:
        pass
    found = importlib.util.find_spec("swebench") if "swebench" not in sys.modules else None
    if found is not None and found.submodule_search_locations:
        root = Path(next(iter(found.submodule_search_locations)))
    else:
        current = sys.modules.get("swebench")
        paths = list(getattr(current, "__path__", []) or [])
        if not paths:
            return None
        root = Path(paths[0])
    for package, path in (("swebench", root), ("swebench.harness", root / "harness")):
        current = sys.modules.get(package)
        if current is None or not hasattr(current, "__path__"):
            stub = types.ModuleType(package)  # the package without its __init__ (which imports docker and more)
            stub.__path__ = [str(path)]
            sys.modules[package] = stub
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def upstream_version() -> str | None:
    """The installed ``swebench`` distribution's version, or None."""
    try:
        return importlib.metadata.version("swebench")
    except importlib.metadata.PackageNotFoundError:
        return None


def _tuple(value: Any, key: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise SpecError(f"{where}: {key} must be a string or a list of strings")


def make_spec(repo: str, version: str, raw: dict[str, Any], *, source: str, parser: str | None = None,
              requirements: tuple[str, ...] = (), environment_yml: tuple[str, ...] = ()) -> Spec:
    """A checked :class:`Spec` from a recipe dictionary."""
    where = f"recipe for {repo} {version} ({source})"
    unknown = set(raw) - KNOWN_KEYS
    if unknown:
        raise SpecError(f"{where}: unknown keys {', '.join(sorted(unknown))}; "
                        f"the keys are {', '.join(sorted(KNOWN_KEYS))}")
    test_cmd = raw.get("test_cmd")
    if isinstance(test_cmd, list) and len(test_cmd) == 1:
        test_cmd = test_cmd[0]
    if not isinstance(test_cmd, str) or not test_cmd.strip():
        raise SpecError(f"{where}: test_cmd must be a command line")
    python = raw.get("python")
    if not isinstance(python, str) or not python:
        raise SpecError(f"{where}: python must be a version such as \"3.9\"")
    log_parser = str(raw.get("log_parser") or parser or "parse_log_pytest")
    if log_parser not in PARSERS:
        raise SpecError(f"{where}: log_parser {log_parser!r} is not one of {', '.join(sorted(PARSERS))}")
    install = raw.get("install") or ""
    if isinstance(install, list):
        install = " && ".join(install)
    return Spec(
        repo=repo, version=version, python=python, test_cmd=test_cmd, log_parser=log_parser, source=source,
        packages=str(raw.get("packages") or ""), pip_packages=_tuple(raw.get("pip_packages"), "pip_packages", where),
        pre_install=_tuple(raw.get("pre_install"), "pre_install", where), install=str(install),
        eval_commands=_tuple(raw.get("eval_commands"), "eval_commands", where),
        harness_packages=_tuple(raw.get("harness_packages"), "harness_packages", where),
        requirements_paths=_tuple(raw.get("requirements_paths"), "requirements_paths", where) or requirements,
        environment_yml_paths=(_tuple(raw.get("environment_yml_paths"), "environment_yml_paths", where)
                               or environment_yml),
    )


@functools.lru_cache(maxsize=16)
def read_specs_file(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """A specs file's recipes by repo and version (SpecError for a file that is not one)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise SpecError(f"specs_file {path} cannot be read: {exc}") from None
    except ValueError as exc:
        raise SpecError(f"specs_file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise SpecError(f'specs_file {path} must map "owner/name" to {{"version": {{recipe}}}}')
    for repo, versions in data.items():
        for version, raw in versions.items():
            if not isinstance(raw, dict):
                raise SpecError(f"specs_file {path}: {repo} {version} must be an object")
    return data


def find_spec(repo: str, version: str, specs_file: Path | None = None) -> Spec:
    """The recipe of ``repo`` at ``version``: the specs file's, else the installed package's."""
    if specs_file is not None:
        own = read_specs_file(Path(specs_file))
        if version in own.get(repo, {}):
            return make_spec(repo, version, own[repo][version], source=f"specs_file {specs_file}")
    constants = upstream_constants()
    if constants is not None:
        python_specs = getattr(constants, "MAP_REPO_VERSION_TO_SPECS_PY", None) or {}
        all_specs = getattr(constants, "MAP_REPO_VERSION_TO_SPECS", None) or {}
        if repo in python_specs and version in python_specs[repo]:
            reqs = getattr(constants, "MAP_REPO_TO_REQS_PATHS", {}).get(repo, ())
            ymls = getattr(constants, "MAP_REPO_TO_ENV_YML_PATHS", {}).get(repo, ())
            return make_spec(repo, version, dict(python_specs[repo][version]), source=f"swebench {upstream_version()}",
                             parser=REPO_PARSERS.get(repo), requirements=tuple(reqs), environment_yml=tuple(ymls))
        if repo in all_specs and repo not in python_specs:
            raise SpecError(f"{repo} is not a Python repository; only SWE-bench's Python repositories can run here "
                            "(the others need their own toolchains in upstream's containers)")
        if repo in python_specs:
            known = ", ".join(sorted(python_specs[repo], key=_version_key))
            raise SpecError(f"swebench {upstream_version()} has no recipe for {repo} version {version!r} "
                            f"(it knows {known}); give one in specs_file")
    origin = f"the installed swebench {upstream_version()}" if constants is not None else \
        f"no swebench package (install it: {PACKAGE_HINT})"
    extra = f" or specs_file {specs_file}" if specs_file is not None else ""
    raise SpecError(f"no install recipe for {repo} version {version!r} in {origin}{extra}; give one in specs_file "
                    "(docs/swebench.md, 'Recipes')")


def _version_key(text: str) -> tuple[Any, ...]:
    parts = text.lstrip("v").split(".")
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)
