"""swefficiency: SWE-fficiency instances, speedups in instructions under callgrind (:mod:`.bench_swefficiency`)."""
