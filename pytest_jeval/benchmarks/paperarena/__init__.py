"""paperarena: PaperArena's questions on AI papers, an agent with tools over the paper (see bench_paperarena)."""
