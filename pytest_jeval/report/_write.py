"""Building and writing the report file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.report._data import ResultFile, ResultFileError, expand_inputs, load_result
from pytest_jeval.report._html import Page
from pytest_jeval.results.files import make_dir, write_atomic


def build_report(files: Sequence[ResultFile], *, title: str | None = None,
                 aggregate: dict[str, Any] | None = None, worst: int = 200) -> str:
    """The HTML of the report on ``files``."""
    return Page(files, title=title, aggregate=aggregate, worst=worst).render()


def write_report(inputs: Sequence[Path | str], output: Path | str, *, title: str | None = None,
                 worst: int = 200) -> Path:
    """Write the report on ``inputs`` (JSONL files, results directories or ``summary.json``
    files) to ``output``, atomically; returns its path."""
    paths, aggregate = expand_inputs(list(inputs))
    if not paths:
        raise ResultFileError("no result files to report on")
    files = [load_result(p) for p in paths]
    out = Path(output)
    make_dir(out.parent)
    write_atomic(out, build_report(files, title=title, aggregate=aggregate, worst=worst).encode("utf-8"))
    return out
