"""DeepPlanning (``deepplanning``): shopping cases, their shop and tools, and upstream's case score.

See :mod:`pytest_jeval.benchmarks.deepplanning.bench_deepplanning` and docs/deepplanning.md.
"""
