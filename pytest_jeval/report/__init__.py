"""Self-contained HTML reports of result files (``jeval report``, ``pytest --jeval-report``).

The names below load on first use: the package's pytest plugin must stay cheap to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_jeval.core.lazy import lazy_getattr

if TYPE_CHECKING:
    from pytest_jeval.report._write import build_report, write_report
    from pytest_jeval.results.reader import ResultFile, ResultFileError, load_result

__all__ = ["ResultFile", "ResultFileError", "build_report", "load_result", "write_report"]

_EXPORTS = {
    "ResultFile": "pytest_jeval.results.reader",
    "ResultFileError": "pytest_jeval.results.reader",
    "load_result": "pytest_jeval.results.reader",
    "build_report": "pytest_jeval.report._write",
    "write_report": "pytest_jeval.report._write",
}


__getattr__ = lazy_getattr("pytest_jeval.report", _EXPORTS)
