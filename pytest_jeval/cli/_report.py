"""``jeval report``: one self-contained HTML file from result files."""

from __future__ import annotations

import argparse

from pytest_jeval.report import write_report


def run(args: argparse.Namespace) -> int:
    """Write the report and print its path."""
    path = write_report(args.files, args.output, title=args.title, worst=args.worst)
    print(f"jeval report: {path}")
    return 0
