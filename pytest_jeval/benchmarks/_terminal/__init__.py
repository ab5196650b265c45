"""Shared by the terminal benchmarks: the Terminal-Bench 2 task folder loader."""
