"""LifelongAgentBench (``lifelong-agent``): its data, its SQLite database tasks, its sandboxed OS tasks.

See :mod:`pytest_jeval.benchmarks.lifelong_agent.bench_lifelong_agent` and docs/lifelong-agent.md.
"""
