"""Building and writing the report file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_jeval.core.files import make_dir, write_atomic
from pytest_jeval.report._html import Page
from pytest_jeval.results.reader import ResultFile, ResultFileError, load_result, locate_inputs


def build_report(files: Sequence[ResultFile], *, title: str | None = None,
                 aggregate: dict[str, Any] | None = None, worst: int = 200) -> str:
    """The HTML of the report on ``files``."""
    return Page(files, title=title, aggregate=aggregate, worst=worst).render()


def load_inputs(inputs: Sequence[Path | str]) -> tuple[list[ResultFile], dict[str, Any] | None]:
    """The result files ``inputs`` stand for (JSONL files, results directories or ``summary.json``
    files; nothing outside a given directory is read) and the aggregate summary, if one was given."""
    located, aggregate = locate_inputs(list(inputs))
    files = [load_result(path, root=root, trajectories=True) for path, root in located]
    if not files:
        raise ResultFileError("no result files to report on")
    return files, aggregate


def write_files(files: Sequence[ResultFile], output: Path | str, *, title: str | None = None,
                aggregate: dict[str, Any] | None = None, worst: int = 200) -> Path:
    """Write the report on ``files`` to ``output``, atomically; returns its path."""
    out = Path(output)
    make_dir(out.parent)
    write_atomic(out, build_report(files, title=title, aggregate=aggregate, worst=worst).encode("utf-8"))
    return out


def write_report(inputs: Sequence[Path | str], output: Path | str, *, title: str | None = None,
                 worst: int = 200) -> Path:
    """Write the report on ``inputs`` (see :func:`load_inputs`) to ``output``, atomically; returns its path."""
    files, aggregate = load_inputs(inputs)
    return write_files(files, output, title=title, aggregate=aggregate, worst=worst)
