"""An instance's parts: checked when its sample is made (before any request), built when first used.

:func:`check_instance` (at collection, from ``to_sample``) finds the mirror, the base commit in it and the
install recipe, so a repository missing from ``repos_dir`` (the message says how to add it), a base commit
missing from the mirror or a (repo, version) no recipe covers stops the run as a usage error before any
request. :func:`prepare` (in an episode's set-up or at grading) builds or reuses the environment and the
prepared checkout; their failures are harness failures of that instance.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._swe.cache import CacheError, cache_root
from pytest_jeval.benchmarks._swe.envs import Env, EnvError, ensure_env
from pytest_jeval.benchmarks._swe.instances import Instance
from pytest_jeval.benchmarks._swe.repos import RepoError, has_commit, resolve_mirror
from pytest_jeval.benchmarks._swe.sandboxed import SandboxUnavailable, require_bubblewrap
from pytest_jeval.benchmarks._swe.specs import Spec, find_spec
from pytest_jeval.benchmarks._swe.trees import Tree, TreeError, ensure_tree

__all__ = ["HARNESS_ERRORS", "Prepared", "check_instance", "instance_of", "prepare", "spec_of"]

HARNESS_ERRORS: tuple[type[Exception], ...] = (EnvError, TreeError, SandboxUnavailable, RepoError, CacheError)
"""What :func:`prepare` and a sandboxed run raise when the harness fails: the sample is unscored, never wrong."""


@dataclasses.dataclass(frozen=True)
class Prepared:
    """An instance with its recipe, environment and prepared checkout."""

    instance: Instance
    spec: Spec
    mirror: Path
    cache: Path
    options: dict[str, Any]
    env: Env
    tree: Tree

    def deviations(self) -> list[str]:
        """How this instance's runs differ from upstream's container, for its record."""
        out = list(self.env.deviations)
        out.append("programs run unprivileged in a bubblewrap sandbox without network, the checkout at /sandbox "
                   "(upstream: root in a Docker container, /testbed); install and tests run with pip --no-index")
        if self.tree.skipped:
            out.append("pre_install steps not run (they need root or the network): " + "; ".join(self.tree.skipped))
        if self.tree.failed:
            out.append("pre_install steps that failed here: " + "; ".join(self.tree.failed))
        return out


def check_instance(instance: Instance, options: dict[str, Any]) -> dict[str, Any]:
    """The sample metadata of an instance whose mirror, base commit and recipe were found (ValueError
    saying what is missing and how to provide it)."""
    try:
        require_bubblewrap()
        cache = cache_root(Path(options["cache_dir"]) if options.get("cache_dir") else None)
    except (SandboxUnavailable, CacheError) as exc:
        raise ValueError(str(exc)) from None
    repos_dir = Path(options["repos_dir"]) if options.get("repos_dir") else None
    mirror = resolve_mirror(instance.repo, repos_dir, bool(options.get("fetch_repos")), cache,
                            str(options.get("clone_base") or "https://github.com"))
    commits = (("base commit", instance.base_commit), ("environment_setup_commit", instance.environment_setup_commit))
    for what, sha in commits:
        if not has_commit(mirror, sha):
            raise RepoError(f"{instance.instance_id}: the {what} {sha} is not in the mirror {mirror} of "
                            f"{instance.repo}; update the mirror (git -C {mirror} fetch --all, or a new bundle)")
    specs_file = Path(options["specs_file"]) if options.get("specs_file") else None
    spec = find_spec(instance.repo, instance.version, specs_file)
    return {"instance": instance.as_dict(), "options": options, "mirror": str(mirror), "cache": str(cache),
            "spec": spec.as_dict()}


def instance_of(metadata: dict[str, Any]) -> Instance:
    """The instance a sample carries."""
    return Instance.from_dict(metadata["instance"])


def spec_of(metadata: dict[str, Any]) -> Spec:
    """The recipe a sample carries."""
    raw: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in dict(metadata["spec"]).items()}
    return Spec(**raw)


def prepare(metadata: dict[str, Any]) -> Prepared:
    """The instance's environment and prepared checkout, built now when missing (EnvError, TreeError,
    SandboxUnavailable when they cannot be)."""
    instance, spec = instance_of(metadata), spec_of(metadata)
    options = dict(metadata["options"])
    cache, mirror = Path(metadata["cache"]), Path(metadata["mirror"])
    env = ensure_env(spec, mirror=mirror, setup_commit=instance.environment_setup_commit, cache=cache,
                     timeout=float(options["build_timeout"]))
    tree = ensure_tree(instance.instance_id, instance.base_commit, spec, env, mirror=mirror, cache=cache,
                       timeout=float(options["build_timeout"]))
    return Prepared(instance, spec, mirror, cache, options, env, tree)
