"""``jeval report``: one self-contained HTML file from result files.

A results directory (or its ``summary.json``) stands for the files it lists; no file
outside that directory is read, whatever the listing names (see
:func:`pytest_jeval.results.reader.locate_inputs`).
"""

from __future__ import annotations

import argparse

from pytest_jeval.cli._read import report_problems
from pytest_jeval.report._write import load_inputs, write_files


def run(args: argparse.Namespace) -> int:
    """Write the report and print its path; skipped lines exit 1."""
    files, aggregate = load_inputs(args.files)
    status = report_problems(files)
    out = write_files(files, args.output, title=args.title, aggregate=aggregate, worst=args.worst)
    print(f"jeval report: {out}")
    return status
