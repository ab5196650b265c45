"""terminal_lite: the project's own shell tasks in the Terminal-Bench 2 layout (:mod:`.bench_terminal_lite`)."""
