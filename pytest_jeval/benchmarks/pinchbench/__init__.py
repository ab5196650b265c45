"""pinchbench: PinchBench's real-world agent tasks, graders in the sandbox (see bench_pinchbench)."""
