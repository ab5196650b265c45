"""swebench: SWE-bench instances graded as upstream grades, without Docker (:mod:`.bench_swebench`)."""
