"""liveresearchbench: LiveResearchBench, reports graded with DeepEval's five protocols (see bench_liveresearchbench)."""
