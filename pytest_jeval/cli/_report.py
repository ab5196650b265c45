"""``jeval report``: one self-contained HTML file from result files.

A results directory (or its ``summary.json``) stands for the files it lists; no file
outside that directory is read, whatever the listing names (see
:func:`pytest_jeval.report._data.locate_inputs`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_jeval.cli._read import report_problems
from pytest_jeval.report._data import ResultFileError, load_result, locate_inputs
from pytest_jeval.report._write import build_report
from pytest_jeval.results.files import write_atomic


def run(args: argparse.Namespace) -> int:
    """Write the report and print its path; skipped lines exit 1."""
    located, aggregate = locate_inputs(list(args.files))
    files = [load_result(path, root=root) for path, root in located]
    if not files:
        raise ResultFileError("no result files to report on")
    status = report_problems(files)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, build_report(files, title=args.title, aggregate=aggregate, worst=args.worst).encode("utf-8"))
    print(f"jeval report: {out}")
    return status
