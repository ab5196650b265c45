"""The SWE benchmarks' own settings, ``[benchmarks.options]`` of a suite (checked at plan time)::

    [[benchmarks]]
    name = "swebench"
    subset = "lite"                       # or verified, full, mini (the default), or a Hub id
    [benchmarks.options]
    repos_dir = "mirrors"                 # bare clones or bundles named owner__name (relative to the suite)
    fetch_repos = false                   # true: clone a missing repository from GitHub into the cache
    specs_file = "recipes.json"           # install recipes for repositories the swebench package lacks
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_jeval.suite.options import SuitePath

__all__ = ["SweOptions", "SwefficiencyOptions", "metadata_of"]


class SweOptions(BaseModel):
    """``swebench``'s settings."""

    model_config = ConfigDict(extra="forbid")

    repos_dir: SuitePath | None = None
    """A folder of repository mirrors: ``owner__name.git`` (bare clone), ``owner__name`` (clone) or
    ``owner__name.bundle`` (git bundle)."""
    fetch_repos: bool = False
    """Clone a repository missing from ``repos_dir`` from GitHub into the cache (needs network)."""
    clone_base: str = "https://github.com"
    """Where ``fetch_repos`` clones ``owner/name`` from (``<clone_base>/owner/name``): another host, a local
    ``file://`` folder of bare clones."""
    specs_file: SuitePath | None = None
    """A JSON file of install recipes (``{"owner/name": {"version": {...}}}``), over the swebench package's."""
    cache_dir: SuitePath | None = None
    """Where mirrors, environments and prepared checkouts are kept (default: ``$JEVAL_SWE_CACHE``, else
    ``/var/cache/pytest-jeval/swe`` as root, else ``~/.cache/pytest-jeval/swe``)."""
    build_timeout: float = Field(3600.0, gt=0)
    """Seconds an environment's or a checkout's build step may take."""
    test_timeout: float = Field(1800.0, gt=0)
    """Seconds the evaluation script may run (upstream's default timeout)."""
    direct_context: Literal["oracle", "none"] = "oracle"
    """``backend = "direct"``: the files the gold patch edits, shown at the base commit (upstream's "oracle"
    retrieval setting), or the issue alone."""


class SwefficiencyOptions(SweOptions):
    """``swefficiency``'s settings: ``swebench``'s, and how the workload is measured."""

    measure_timeout: float = Field(3600.0, gt=0)
    """Seconds one measurement of the workload under callgrind may take."""


def metadata_of(options: Any, default: type[SweOptions] = SweOptions) -> dict[str, Any]:
    """The settings a sample carries (JSON builtins) to its episode and its grading (``default()``'s when
    the loader was given none)."""
    opts = options if options is not None else default()
    data: dict[str, Any] = opts.model_dump(mode="json")
    return data
