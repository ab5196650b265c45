"""liveresearch (alias deepresearch): DeepResearch Bench, reports scored with RACE (see bench_liveresearch)."""
