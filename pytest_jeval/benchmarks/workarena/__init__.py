"""workarena: WorkArena-style service-desk tasks on a local ServiceNow-like application (see bench_workarena)."""
