"""Reading result files for the ``jeval`` commands: validated, with every skipped line reported.

All commands read result files with :func:`pytest_jeval.results.reader.load_result`
(``read_result_lines``, ``record_problem``, ``strict_json``; ``jeval report`` finds them
with ``locate_inputs``) and print what was skipped with :func:`report_problems`. Exit status:
:data:`OK` (0), :data:`SKIPPED` (1) when lines or a stored summary were skipped, :data:`FAILED` (2)
for an input that cannot be used.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pytest_jeval.results.reader import ResultFile, load_result

OK = 0
SKIPPED = 1
FAILED = 2
#: Problems printed per file; the rest are counted.
MAX_SHOWN = 20


def load_inputs(paths: Sequence[Path | str]) -> list[ResultFile]:
    """The result files named by ``paths``, validated (see the module docstring)."""
    return [load_result(p) for p in paths]


def report_problems(files: Sequence[ResultFile], *, stream: TextIO | None = None) -> int:
    """Print each file's skipped lines on stderr; :data:`SKIPPED` if there were any, else :data:`OK`."""
    out = stream if stream is not None else sys.stderr
    status = OK
    for f in files:
        if not f.problems:
            continue
        status = SKIPPED
        for line in f.problems[:MAX_SHOWN]:
            print(f"jeval: warning: {line}", file=out)
        if len(f.problems) > MAX_SHOWN:
            print(f"jeval: warning: {f.path}: {len(f.problems) - MAX_SHOWN} more problems not shown",
                  file=out)
    return status
