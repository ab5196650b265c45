"""The benchmark catalog: the built-in ``bench_*.py`` modules of ``pytest_jeval.benchmarks``, found by
walking the package, and the benchmarks of installed packages, found through the
``pytest_jeval.benchmarks`` entry-point group (``name = "package.module"``)."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.resources
from types import ModuleType
from typing import Any

from pytest_jeval.core.benchmark import Benchmark, find_benchmark
from pytest_jeval.core.registry import Registry, entry_point_label
from pytest_jeval.scoring.registry import RecordScorer

BUILTIN_PACKAGE = "pytest_jeval.benchmarks"

JUDGE_MODULE = "pytest_jeval.judge_bench.bench_judge"
"""The module every judge benchmark runs (a ``[[benchmarks]]`` entry with ``evaluator = ...``): its
``Benchmark`` is a template whose ``configure`` builds the entry's benchmark."""

ENTRY_POINT_GROUP = "pytest_jeval.benchmarks"
"""The entry-point group of installed benchmarks: each names the module that defines one Benchmark."""


class CatalogError(ValueError):
    """An installed benchmark (``pytest_jeval.benchmarks`` entry point) that cannot be used."""


def bench_modules(package: str) -> list[str]:
    """The benchmark modules of ``package``: each ``bench_*.py`` in it, and each ``bench_*.py`` of its
    subpackages (a benchmark with its own tools, data or rescorer is a package ``<name>/``)."""
    pkg = importlib.resources.files(package)
    found: list[str] = []
    for entry in sorted(pkg.iterdir(), key=lambda e: e.name):
        n = entry.name
        if n.startswith("bench_") and n.endswith(".py"):
            found.append(f"{package}.{n[:-3]}")
        elif entry.is_dir() and n.isidentifier() and not n.startswith("_") and entry.joinpath("__init__.py").is_file():
            found.extend(f"{package}.{n}.{sub.name[:-3]}" for sub in sorted(entry.iterdir(), key=lambda e: e.name)
                         if sub.name.startswith("bench_") and sub.name.endswith(".py"))
    return found


def package_index(package: str) -> dict[str, str]:
    """Map each benchmark defined by a benchmark module of ``package`` (:func:`bench_modules`) to its module.

    CatalogError when two modules define benchmarks of the same name (or a name another one has as an alias).
    """
    return _package_catalog(package)[0]


def _package_catalog(package: str) -> tuple[dict[str, str], dict[str, str]]:
    """``(name -> module, alias -> name)`` of the benchmarks of ``package``."""
    index: dict[str, str] = {}
    aliases: dict[str, str] = {}
    for mod_name in bench_modules(package):
        bench = find_benchmark(importlib.import_module(mod_name))
        if bench is None:
            continue
        for name in (bench.name, *bench.aliases):
            taken = index.get(name) or (index[aliases[name]] if name in aliases else None)
            if taken is not None:
                raise CatalogError(f"{mod_name} and {taken} both define a benchmark named {name!r}")
            if name != bench.name:
                aliases[name] = bench.name
        index[bench.name] = mod_name
    clash = sorted(set(index) & set(aliases))
    if clash:
        raise CatalogError(f"{', '.join(map(repr, clash))}: both a benchmark's name and another's alias")
    return index, aliases


@functools.lru_cache(maxsize=1)
def builtin_index() -> dict[str, str]:
    """Map each built-in benchmark name to the module that defines it (found by walking the package)."""
    return _package_catalog(BUILTIN_PACKAGE)[0]


@functools.lru_cache(maxsize=1)
def builtin_aliases() -> dict[str, str]:
    """Map each alias of a built-in benchmark (``Benchmark.aliases``) to the benchmark's name."""
    return _package_catalog(BUILTIN_PACKAGE)[1]


BENCHMARKS: Registry[str] = Registry("benchmarks", kind="benchmark")
"""The benchmark family's registry: its ``pytest_jeval.benchmarks`` entry points name the modules of
installed benchmarks (read by :func:`installed_index`; the built-ins are found by walking the package)."""


@functools.lru_cache(maxsize=1)
def installed_index() -> dict[str, str]:
    """Map each installed benchmark's name (its entry point's name) to its module, without importing it.

    CatalogError for an entry point naming an attribute rather than a module, taking a built-in
    name, or taking a name another package's entry point holds.
    """
    builtins = {**builtin_index(), **builtin_aliases()}
    index: dict[str, str] = {}
    for ep in BENCHMARKS.entry_points():
        if ep.attr:
            raise CatalogError(f"{entry_point_label(ep)} must name a module (the one defining the Benchmark), "
                               "not an attribute")
        if ep.name in builtins:
            raise CatalogError(f"{entry_point_label(ep)}: {ep.name!r} is the name of a built-in benchmark")
        if index.get(ep.name, ep.module) != ep.module:
            raise CatalogError(f"{entry_point_label(ep)}: {ep.name!r} is already installed from {index[ep.name]}")
        index[ep.name] = ep.module
    return index


def builtin_module(name: str) -> str | None:
    """The module of built-in benchmark ``name`` when it lives in ``bench_<name>.py`` (all but a few
    do; a name with ``-`` and ``.`` in ``bench_<name with _ for - and no .>.py``, as ``terminalbench-v2.1``
    in ``terminalbench_v21/bench_terminalbench_v21.py``), found by importing that one module instead of
    walking the package; else None."""
    import importlib.util

    stem = name.replace("-", "_").replace(".", "")
    if not stem.isidentifier() or stem.startswith("_"):
        return None
    for mod_name in (f"{BUILTIN_PACKAGE}.bench_{stem}", f"{BUILTIN_PACKAGE}.{stem}.bench_{stem}"):
        try:
            if importlib.util.find_spec(mod_name) is None:
                continue
        except ModuleNotFoundError:  # no package ``<name>``
            continue
        bench = find_benchmark(importlib.import_module(mod_name))
        return mod_name if bench is not None and name in (bench.name, *bench.aliases) else None
    return None


def benchmark_index() -> dict[str, str]:
    """Every benchmark a suite can name: the built-ins (and their aliases), then the installed ones (name -> module)."""
    builtins = builtin_index()
    aliased = {alias: builtins[name] for alias, name in builtin_aliases().items()}
    return {**builtins, **aliased, **installed_index()}


def close_names(name: str, index: dict[str, str]) -> list[str]:
    """The benchmarks a misspelled or foreign ``name`` may mean: those that declare it among their
    ``aliases`` (the reference's name of what they provide), then the closest names by spelling
    (``_`` and ``-`` taken as one), at most three."""
    import difflib

    def fold(text: str) -> str:
        return text.lower().replace("_", "-")

    aliased = []
    for known, mod_name in index.items():
        bench = find_benchmark(importlib.import_module(mod_name))
        if bench is not None and fold(name) in {fold(a) for a in bench.aliases}:
            aliased.append(known)
    folded = {fold(known): known for known in index}
    close = [folded[f] for f in difflib.get_close_matches(fold(name), list(folded), n=3, cutoff=0.6)]
    return list(dict.fromkeys([*aliased, *close]))[:3]


def installed_benchmarks() -> list[Benchmark]:
    """The definition of every installed benchmark, sorted by name; CatalogError for a broken one."""
    out = []
    for name, mod_name in sorted(installed_index().items()):
        try:
            module = importlib.import_module(mod_name)
            bench = find_benchmark(module)
        except Exception as exc:
            raise CatalogError(f"installed benchmark {name!r} ({mod_name}) failed to load: "
                               f"{type(exc).__name__}: {exc}") from exc
        if bench is None or bench.name != name:
            found = "no Benchmark" if bench is None else f"the Benchmark {bench.name!r}"
            raise CatalogError(f"installed benchmark {name!r}: module {mod_name} defines {found}")
        out.append(bench)
    return out


def builtin_names() -> list[str]:
    """Names of the built-in benchmarks."""
    return sorted(builtin_index())


def builtin_benchmarks() -> list[Benchmark]:
    """The definition of every built-in benchmark, sorted by name."""
    out = []
    for name in builtin_names():
        bench = find_benchmark(importlib.import_module(builtin_index()[name]))
        assert bench is not None
        out.append(bench)
    return out


def catalog_rows(installed: bool = True) -> list[dict[str, Any]]:
    """One row per benchmark (the built-ins, then with ``installed`` the installed ones):
    name, aliases, category, dataset id, sample count, scorer, description."""
    benches = builtin_benchmarks() + (installed_benchmarks() if installed else [])
    return [
        {
            "name": b.name,
            "aliases": list(b.aliases),
            "category": b.category,
            "dataset": b.dataset.path if b.dataset else f"({b.data_source})" if b.data_source else "(bundled)",
            "samples": b.sample_count,
            "scorer": b.scoring or b.scorer,
            "description": b.description,
        }
        for b in benches
    ]


def catalog_markdown() -> str:
    """The catalog as a Markdown table (name, category, dataset, samples, scorer), for docs/benchmarks.md.

    The block in docs/benchmarks.md between ``<!-- catalog:start -->`` and ``<!-- catalog:end -->``
    is this text; ``tests/suite/test_catalog.py`` checks that it has not drifted.
    """

    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|")

    lines = ["| name | category | dataset | samples | scorer |", "|---|---|---|---:|---|"]
    for r in catalog_rows(installed=False):
        dataset = r["dataset"] if r["dataset"].startswith("(") else f"`{r['dataset']}`"
        samples = f"{r['samples']:,}" if isinstance(r["samples"], int) else "?"
        name = f"`{cell(r['name'])}`" + "".join(f" (alias `{cell(a)}`)" for a in r["aliases"])
        lines.append(f"| {name} | {cell(r['category'])} | {dataset} | {samples} | {cell(r['scorer'])} |")
    return "\n".join(lines) + "\n"


def load_scorer(name: str) -> RecordScorer:
    """The scorer registered as ``name``, importing the benchmark modules when it is not registered yet
    (a benchmark registers its own scorer in its module); a KeyError naming every scorer otherwise."""
    from pytest_jeval.scoring.registry import SCORERS

    if name not in SCORERS:
        all_scorer_names()
    return SCORERS.get(name)


def all_scorer_names() -> list[str]:
    """Every scorer: the generic ones, the installed ones and those of every built-in and installed benchmark
    (their modules are imported, which registers them)."""
    from pytest_jeval.scoring.registry import SCORERS

    for mod_name in benchmark_index().values():
        importlib.import_module(mod_name)
    return SCORERS.names()


def judge_validator() -> Any:
    """The judge family's gate: ``validate_judge(entry, samples, judge, workers=...)`` of :data:`JUDGE_MODULE`
    (``[judge] validate``)."""
    _template, module = judge_template()
    found = getattr(module, "validate_judge", None)
    if not callable(found):
        raise CatalogError(f"{JUDGE_MODULE} defines no validate_judge(entry, samples, judge)")
    return found


def judge_template() -> tuple[Benchmark, ModuleType]:
    """The judge family's template benchmark and its test module (:data:`JUDGE_MODULE`)."""
    module = importlib.import_module(JUDGE_MODULE)
    bench = find_benchmark(module)
    if bench is None or bench.configure is None:
        raise CatalogError(f"{JUDGE_MODULE} defines no template Benchmark (one with configure=...)")
    return bench, module
