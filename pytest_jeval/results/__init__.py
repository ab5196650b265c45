"""Results: the record, the file layout, the writer, the summary, the gates and the terminal table.

No module outside this package builds a results path or writes a results file.

* :mod:`~pytest_jeval.results.records` builds a sample's record (verdict, usage, efficiency);
* :mod:`~pytest_jeval.results.shipping` puts records on test reports (all processes);
* :mod:`~pytest_jeval.results.writer` is the controller's writer plugin;
* :mod:`~pytest_jeval.results.resume` reads finished records back (``--jeval-resume``);
* :mod:`~pytest_jeval.results.summary`, :mod:`~pytest_jeval.results.gates` and
  :mod:`~pytest_jeval.results.table`: summaries, gates, the results table;
* :mod:`~pytest_jeval.core.paths` names every file of an output directory;
* :mod:`~pytest_jeval.core.files` creates files without following links;
* :mod:`~pytest_jeval.results.jsonl` appends whole lines and reads the newest per record;
* :mod:`~pytest_jeval.results.lock` keeps one run per output directory;
* :mod:`~pytest_jeval.results.selection` says what a session selected;
* :mod:`~pytest_jeval.results.sanitize` turns odd reply values into null, with a note.

Submodules are imported where they are used; this package imports nothing itself,
so that naming a file stays cheap.
"""
