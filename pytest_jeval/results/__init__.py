"""Results files: their names, safe creation, the append-only JSONL log, the run lock.

* :mod:`~pytest_jeval.results.paths` names every file of an output directory;
* :mod:`~pytest_jeval.results.files` creates files without following links;
* :mod:`~pytest_jeval.results.jsonl` appends whole lines and reads the newest per record;
* :mod:`~pytest_jeval.results.lock` keeps one run per output directory;
* :mod:`~pytest_jeval.results.selection` says what a session selected;
* :mod:`~pytest_jeval.results.sanitize` turns odd reply values into null, with a note.

Submodules are imported where they are used; this package imports nothing itself,
so that naming a file stays cheap.
"""
