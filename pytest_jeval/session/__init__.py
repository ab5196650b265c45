"""One pytest session of a suite: collection, fixtures, the per-process runtime, prefetch, xdist,
the local model's lifecycle, warm-up, redaction wiring and the notices printed once."""
