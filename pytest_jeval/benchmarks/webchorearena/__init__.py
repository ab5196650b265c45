"""webchorearena: WebChoreArena chores on local sites or your WebArena sites (see bench_webchorearena)."""
