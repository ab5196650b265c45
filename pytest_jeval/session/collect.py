"""Collection: the suite file yields one module per benchmark, and each sample becomes an item.

``pytest --jeval-config suite.toml`` adds the suite file to the collection
arguments. :class:`SuiteFile` yields a :class:`BenchmarkModule` per
``[[benchmarks]]`` entry; these are ordinary pytest modules whose test
functions are parametrized over models x samples, with ids
``<model-slug>/<record-id>`` so ``-k`` selects by benchmark, model or record. Benchmarks and
models appear by their key (the entry's ``label``, else its ``name``).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_jeval.session import gcpause
from pytest_jeval.session.keys import plan_key
from pytest_jeval.suite.dataset import DatasetLoadError

__all__ = ["BenchmarkModule", "SuiteFile", "plan_key", "suite_args"]


class SuiteFile(pytest.File):
    """The suite TOML as a collector of benchmark modules."""

    def collect(self) -> Iterable[pytest.Collector]:
        plan = self.config.stash[plan_key]
        for name, planned in plan.benchmarks.items():
            yield BenchmarkModule.from_parent(
                self,
                path=planned.module_file,
                name=name,
                nodeid=f"{self.nodeid}::{name}",
            )


class BenchmarkModule(pytest.Module):
    """A benchmark module collected under the suite; its name is the benchmark entry's key (label, else name)."""

    is_jeval_benchmark = True
    """Marks the node :func:`~pytest_jeval.session.keys.case_for` looks for among an item's parents."""

    def _getobj(self) -> ModuleType:
        return self.config.stash[plan_key].benchmarks[self.name].module


def is_suite_path(config: pytest.Config, file_path: Path) -> bool:
    """True for the suite file given with ``--jeval-config``."""
    plan = config.stash.get(plan_key, None)
    return plan is not None and file_path.resolve() == plan.path.resolve()


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, object, object]:
    """Collect with the cyclic garbage collector paused, then freeze what start-up and collection built
    (:mod:`pytest_jeval.session.gcpause`: with 100,000 samples the collector took a third of the collection
    time, and its pass over the items at exit another 4 s)."""
    gcpause.pause()  # paused at pytest_configure already, unless the suite was given another way
    try:
        return (yield)
    finally:
        gcpause.resume(freeze=True)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect the suite file named by ``--jeval-config``."""
    if is_suite_path(parent.config, file_path):
        return SuiteFile.from_parent(parent, path=file_path)
    return None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize benchmark tests over models x samples."""
    definition = metafunc.definition
    bench_node = definition.getparent(BenchmarkModule)
    if bench_node is None or "sample" not in metafunc.fixturenames:
        return
    plan = metafunc.config.stash[plan_key]
    name = bench_node.name
    if "jeval_model" not in metafunc.fixturenames:
        raise pytest.UsageError(
            f"{definition.nodeid}: a benchmark test must use the model (request the `response` or `model` fixture)"
        )
    try:
        samples, _skipped = plan.samples(name)
    except DatasetLoadError as exc:
        raise pytest.UsageError(str(exc)) from None
    params: list[Any] = []
    ids: list[str] = []
    for key, model in plan.models.items():
        slug = model.slug
        for s in samples:
            params.append((key, s))
            ids.append(f"{slug}/{s.id}")
    metafunc.parametrize(("jeval_model", "sample"), params, ids=ids)


def suite_args(config: pytest.Config, suite_path: Path) -> list[str]:
    """Collection arguments with the suite file added.

    Without explicit paths on the command line, only the suite is collected
    (not the tests under the current directory).
    """
    explicit = config.args_source == pytest.Config.ArgsSource.ARGS
    args = list(config.args) if explicit else []
    suite = str(suite_path)
    if suite not in args:
        args.append(suite)
    return args


def install(config: pytest.Config) -> None:
    """Collect the suite file (every process): the suite becomes a collection argument and this module a plugin."""
    import sys

    config.args = suite_args(config, config.stash[plan_key].path)
    config.pluginmanager.register(sys.modules[__name__], "jeval-collect")
