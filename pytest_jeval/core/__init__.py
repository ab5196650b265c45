"""The shared vocabulary of pytest-jeval; imports nothing else of the package.

* :mod:`~pytest_jeval.core.sample`, :mod:`~pytest_jeval.core.score`: a question with its gold answer, a verdict;
* :mod:`~pytest_jeval.core.benchmark`: the definition of a benchmark (dataset, prompt, scorer);
* :mod:`~pytest_jeval.core.chat`: engine-neutral chat types (messages, requests, replies, endpoints);
* :mod:`~pytest_jeval.core.case`: what one benchmark item is about and what happened while it ran;
* :mod:`~pytest_jeval.core.registry`: the one registry helper every family uses (open by entry points);
* :mod:`~pytest_jeval.core.redact`: keys out of everything stored or printed.

The layers above are listed in ``docs/development.md``; ``make lint`` checks them (``.importlinter``).
"""
