"""An in-memory SQLite database per application instance: built by code, queried by handlers, exported as JSON."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class Database:
    """One instance's database (``sqlite3`` in memory; every call holds the instance's lock)."""

    def __init__(self, schema: str) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._conn.executescript(schema)

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> int:
        """Run one statement; the last row id (inserts) or the row count."""
        with self._lock:
            cur = self._conn.execute(sql, params)
            return int(cur.lastrowid or 0) if sql.lstrip().upper().startswith("INSERT") else cur.rowcount

    def insert_many(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        """Insert rows (dicts with the same keys) into ``table``."""
        rows = list(rows)
        if not rows:
            return
        keys = list(rows[0])
        sql = f"INSERT INTO {table} ({', '.join(keys)}) VALUES ({', '.join('?' for _ in keys)})"
        with self._lock:
            self._conn.executemany(sql, [[r[k] for k in keys] for r in rows])

    def rows(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[dict[str, Any]]:
        """The rows of a query, as dicts."""
        with self._lock:
            return [dict(r) for r in self._conn.execute(sql, params).fetchall()]

    def one(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> dict[str, Any] | None:
        """The first row of a query, or None."""
        found = self.rows(sql, params)
        return found[0] if found else None

    def value(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
        """The first column of the first row (None when there is none)."""
        row = self.one(sql, params)
        return next(iter(row.values())) if row else None

    def tables(self) -> list[str]:
        """The tables, by name."""
        return [r["name"] for r in self.rows("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]

    def export(self) -> dict[str, list[dict[str, Any]]]:
        """Every table's rows in primary-key order (JSON builtins): the instance's state for checking."""
        return {t: self.rows(f"SELECT * FROM {t} ORDER BY rowid") for t in self.tables()}
