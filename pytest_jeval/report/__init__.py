"""Self-contained HTML reports of result files (``jeval report``, ``pytest --jeval-report``).

The names below load on first use: the package's pytest plugin must stay cheap to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_jeval._lazy import lazy_getattr

if TYPE_CHECKING:
    from pytest_jeval.report._data import ResultFile, ResultFileError, load_result
    from pytest_jeval.report._write import build_report, write_report

__all__ = ["ResultFile", "ResultFileError", "build_report", "load_result", "write_report"]

_EXPORTS = {
    "ResultFile": "pytest_jeval.report._data",
    "ResultFileError": "pytest_jeval.report._data",
    "load_result": "pytest_jeval.report._data",
    "build_report": "pytest_jeval.report._write",
    "write_report": "pytest_jeval.report._write",
}


__getattr__ = lazy_getattr("pytest_jeval.report", _EXPORTS)
