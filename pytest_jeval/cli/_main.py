"""Argument parsing and dispatch of the ``jeval`` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from types import ModuleType

from pytest_jeval import __version__
from pytest_jeval.cli import _compare, _list, _report, _rescore, _run, _summarize, _tasks
from pytest_jeval.cli._read import FAILED
from pytest_jeval.results.reader import ResultFileError


def _count(low: int) -> Callable[[str], int]:
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


def _level(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:  # False for NaN too
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``jeval`` and its sub-commands."""
    parser = argparse.ArgumentParser(
        prog="jeval", description="Work on pytest-jeval result files; run and run-all start a benchmark run.")
    parser.add_argument("--version", action="version", version=f"pytest-jeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, module: ModuleType, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.set_defaults(run=module.run)
        return p

    p = command("list", _list, "list the built-in benchmarks and the registered evaluators")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("summarize", _summarize, "recompute a results file's summary from its records")
    p.add_argument("files", nargs="+", metavar="FILE.jsonl")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")

    p = command("compare", _compare, "compare runs on the record ids they share, with paired significance")
    p.add_argument("files", nargs="+", metavar="FILE.jsonl", help="two or more; the first is the baseline")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--resamples", type=_count(1), default=2000, help="bootstrap resamples (default 2000)")
    p.add_argument("--seed", type=_count(0), default=0, help="bootstrap seed (default 0)")
    p.add_argument("--confidence", type=_level, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--max-listed", type=_count(0), default=20, help="ids listed as in some files only (default 20)")

    p = command("report", _report, "write a self-contained HTML report")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="JSONL result files, or a results directory or its summary.json")
    p.add_argument("-o", "--output", default="report.html", help="the HTML file (default report.html)")
    p.add_argument("--title", default=None, help="page title")
    p.add_argument("--worst", type=_count(0), default=200, help="rows in the worst-samples table (default 200)")

    p = command("rescore", _rescore, "score stored answers again (no model is queried)")
    p.add_argument("file", metavar="FILE.jsonl")
    p.add_argument("--scorer", default=None,
                   help="a registered scorer (default: the one the records' benchmark names; `jeval list` "
                        "names them all)")
    p.add_argument("--reparse-judge", action="store_true",
                   help="parse the stored judge replies again with the current parser, instead of "
                        "keeping the stored judge verdicts")
    p.add_argument("--data", nargs="+", default=None, metavar="FILE",
                   help="the run's data files, for scorers that need the samples "
                        "(default: the benchmark's bundled files, else the Hub)")
    p.add_argument("--split", default=None, help="the split of --data (as the suite's split)")
    p.add_argument("--exec-workers", type=_count(1), default=None, metavar="N",
                   help="sandbox runs at once for code scorers, as the run's max_exec_workers "
                        "(default: one per CPU core, the run's default)")
    p.add_argument("-o", "--output", default=None,
                   help="the new JSONL (default {stem}.rescored-{scorer}.jsonl beside the input)")

    _run.add_parsers(sub)
    _tasks.add_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``jeval`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if argv[:1] and argv[0] in (*_run.PASSTHROUGH_COMMANDS, "tasks"):  # `jeval run ... -- PYTEST ARGS`
        argv, passthrough = _run.split_passthrough(argv)
        args, extra = parser.parse_known_args(argv)
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)} (pytest's options go after --)")
    else:
        args = parser.parse_args(argv)
    args.passthrough = passthrough
    if args.command == "compare" and len(args.files) < 2:
        parser.error("compare needs at least two result files")
    try:
        return int(args.run(args))
    except ResultFileError as exc:
        print(f"jeval: error: {exc}", file=sys.stderr)
        return FAILED
    except BrokenPipeError:  # `jeval list | head`: the reader has gone; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # an output that cannot be written (a directory, a read-only place, a full disk)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"jeval: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return FAILED
