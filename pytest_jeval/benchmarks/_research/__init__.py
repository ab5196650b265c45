"""Shared parts of the research and real-task benchmarks (``liveresearch``, ``liveresearchbench``, ``paperarena``,
``pinchbench``): the judge log that records every judge call for rescoring, upstream's protocol data read from a
user's clone without running it, and the research mode (closed-book, local corpus, tools) each record states."""
