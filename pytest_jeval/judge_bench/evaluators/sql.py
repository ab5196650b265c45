"""The ``sql`` evaluator: are two queries equivalent, judged by executing both on SQLite?

Both the output query and the expected query run on the item's database, opened
read-only (``file:...?mode=ro``) with a time limit enforced by SQLite's progress
handler. Equal result sets mean equivalent. Results are compared as multisets of
rows (duplicates count, columns by position, floats to 9 decimals) unless the
expected query has a top-level ``ORDER BY``, in which case row order matters too.

The database comes from the gold item's ``database`` column (a path relative to
the gold file), or the benchmark's default. A path ending in ``.sql`` is a
script: the database is built from it once, at runtime, in a cache folder under
the system temp directory (keyed by the script's hash), so no binary database is
ever committed.
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_jeval.judge_bench.evaluators.code import strip_fence
from pytest_jeval.scoring.judging.cases import CaseSpec
from pytest_jeval.scoring.judging.registry import CodeEvaluator, EvaluatorError, GoldItem, Judgment, register

#: Seconds each query may run.
DEFAULT_TIMEOUT = 5.0

_LITERAL = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


class QueryTimeout(Exception):
    """A query ran past its time limit."""


def build_database(script: Path, cache_dir: Path | None = None) -> Path:
    """The SQLite database built from a ``.sql`` script (once per script content; atomic)."""
    text = script.read_text(encoding="utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]
    folder = cache_dir or Path(tempfile.gettempdir()) / "pytest-jeval-sql"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{script.stem}-{digest}.sqlite"
    if target.is_file():
        return target
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(fd)
    try:
        conn = sqlite3.connect(tmp)
        try:
            conn.executescript(text)
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def resolve_database(value: str, data_dir: str | None) -> Path:
    """An item's database path (relative to the gold file), built first when it is a ``.sql`` script."""
    path = Path(value).expanduser()
    if not path.is_absolute() and data_dir:
        path = Path(data_dir) / path
    if not path.is_file():
        raise EvaluatorError(f"database not found: {path}")
    return build_database(path) if path.suffix.lower() == ".sql" else path


def run_query(database: Path, query: str, timeout: float = DEFAULT_TIMEOUT) -> list[tuple[Any, ...]]:
    """All rows of ``query`` on a read-only connection; QueryTimeout past ``timeout`` seconds."""
    uri = database.resolve().as_uri() + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, timeout=timeout)
    deadline = time.monotonic() + timeout
    timed_out = False

    def check() -> int:
        nonlocal timed_out
        timed_out = time.monotonic() > deadline
        return 1 if timed_out else 0

    conn.set_progress_handler(check, 1000)
    try:
        return conn.execute(query).fetchall()
    except sqlite3.OperationalError:
        if timed_out:
            raise QueryTimeout(f"query ran past {timeout:g} s") from None
        raise
    finally:
        conn.close()


def has_top_level_order_by(query: str) -> bool:
    """True when ``ORDER BY`` appears outside parentheses, string literals and comments."""
    text = _LITERAL.sub(lambda m: " " * len(m.group(0)), query)
    depth_at = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        depth_at.append(depth)
    return any(depth_at[m.start()] == 0 for m in _ORDER_BY.finditer(text))


def _norm(value: Any) -> Any:
    return round(value, 9) if isinstance(value, float) else value


def results_equal(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]], ordered: bool) -> bool:
    """Row lists equal (``ordered``) or equal as multisets of rows."""
    a = [tuple(_norm(v) for v in row) for row in got]
    b = [tuple(_norm(v) for v in row) for row in want]
    return a == b if ordered else collections.Counter(a) == collections.Counter(b)


@register
class SqlEquivalence(CodeEvaluator):
    """Output and expected SQL are equivalent when they return the same result set."""

    name = "sql"
    description = ("Are the output and expected SQL queries equivalent (same result set on the item's SQLite "
                   "database, read-only, time-limited; order matters only when expected has ORDER BY)?")
    required_columns = ("output", "expected")

    def __init__(self, default_database: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.default_database = default_database
        """Database used when an item has no ``database`` column."""
        self.timeout = timeout

    def judge(self, item: GoldItem, spec: CaseSpec) -> Judgment:
        """Run both queries; a failing or timed-out output query is a False decision."""
        db_value = item.extra.get("database") or self.default_database
        if not db_value:
            raise EvaluatorError(
                "no database: give the gold item a 'database' column (a .sqlite file or a .sql script)")
        if item.expected is None:
            raise EvaluatorError("the gold item has no 'expected' query")
        database = resolve_database(str(db_value), item.data_dir)
        expected = strip_fence(str(item.expected)).strip()
        output = strip_fence(str(item.output or "")).strip()
        try:
            want = run_query(database, expected, self.timeout)
        except (sqlite3.Error, QueryTimeout) as exc:
            raise EvaluatorError(f"the expected query fails: {type(exc).__name__}: {exc}") from None
        ordered = has_top_level_order_by(expected)
        try:
            got = run_query(database, output, self.timeout)
        except (sqlite3.Error, sqlite3.Warning, QueryTimeout) as exc:
            return self.decided(False, output_error=f"{type(exc).__name__}: {exc}", ordered=ordered)
        return self.decided(results_equal(got, want, ordered), ordered=ordered, output_rows=len(got),
                            expected_rows=len(want))
