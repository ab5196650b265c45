"""Benchmarking judges: evaluators scored against gold labels."""
