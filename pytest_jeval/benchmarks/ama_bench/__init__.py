"""AMA-Bench (``ama-bench``): its data and trajectory packing, its answer parsing, token F1 and judge.

See :mod:`pytest_jeval.benchmarks.ama_bench.bench_ama_bench` and docs/ama-bench.md.
"""
