"""``Benchmark.aliases``: an alias finds its benchmark (the one-module lookup, the index), and an alias that is
another benchmark's name or alias is refused."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from pytest_jeval.suite.catalog import (
    CatalogError,
    benchmark_index,
    builtin_aliases,
    builtin_index,
    builtin_module,
    catalog_markdown,
    package_index,
)

MODULE = '''
from pytest_jeval import Benchmark, Sample

BENCHMARK = Benchmark(name={name!r}, aliases={aliases!r}, to_sample=lambda r, i, c: Sample(id="x", input="x"),
                      prompt=lambda s: s.input)
'''


def test_the_builtin_alias_finds_its_benchmark() -> None:
    assert builtin_aliases() == {"deepresearch": "liveresearch"}
    assert "deepresearch" not in builtin_index()
    assert benchmark_index()["deepresearch"] == builtin_index()["liveresearch"]
    assert builtin_module("liveresearch") == builtin_index()["liveresearch"]
    assert "| `liveresearch` (alias `deepresearch`) |" in catalog_markdown()


@pytest.mark.parametrize(("second", "clash"), [("b", "'b'"), ("c\x00b", "'b'")])
def test_an_alias_taken_twice_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: str,
                                          clash: str) -> None:
    name, _, alias = second.partition("\x00")
    package = tmp_path / f"aliaspkg_{abs(hash(second))}"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "bench_a.py").write_text(textwrap.dedent(MODULE.format(name="a", aliases=("b",))))
    (package / "bench_z.py").write_text(textwrap.dedent(MODULE.format(name=name, aliases=(alias,) if alias else ())))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(CatalogError, match=f"both define a benchmark named {clash}"):
            package_index(package.name)
    finally:
        for mod in [m for m in sys.modules if m.startswith(package.name)]:
            del sys.modules[mod]
