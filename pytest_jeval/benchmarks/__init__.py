"""Built-in benchmarks, installed as ``pytest_jeval.benchmarks``.

Each ``bench_*.py`` module defines one :class:`pytest_jeval.Benchmark` and a test
function taking the ``sample`` fixture.
"""
