"""LifelongAgentBench's database tasks (``db_bench``) on SQLite instead of MySQL.

Each task is one table (``table_info``: name, columns with MySQL types, rows) and an instruction. A
query task's gold is its result rows (``answer_info.direct``): the agent's ``Final Answer:`` is checked
against them by upstream's rules (:func:`answer_matches`: the tuples in order, numbers within 1e-6,
strings exactly, one pair of surrounding quotes forgiven). A task that changes the table
(``INSERT``/``UPDATE``/``DELETE``) is checked by the table's state afterwards: upstream compares an
MD5 of the rows' MySQL renderings (``answer_info.md5``); here the table after the agent's statements
must hold the same rows (rendered as MySQL renders them, :func:`mysql_text`) as the table after the
gold SQL replayed on a fresh copy, which is that hash's comparison without the hash.

SQLite is not MySQL. Every task is checked when it is loaded (:func:`gold_problem`): the gold SQL must
run on SQLite, a query's SQLite rows must pass upstream's check against MySQL's stored answer, and a
change's replayed table must hash to MySQL's stored MD5 (:func:`table_md5`, upstream's formula). A task
that fails is refused with the reason. Every record says ``sqlite-for-mysql`` in its ``deviations``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

Row = tuple[Any, ...]


@dataclasses.dataclass(frozen=True)
class Table:
    """A task's table: its name, its columns (name, MySQL type) and its rows."""

    name: str
    columns: tuple[tuple[str, str], ...]
    rows: tuple[Row, ...]

    @classmethod
    def from_info(cls, info: dict[str, Any]) -> Table:
        """From upstream's ``table_info`` (``name``, ``column_info_list`` of ``{name, type}``, ``row_list``)."""
        columns = tuple((str(c["name"]), str(c["type"])) for c in info["column_info_list"])
        rows = tuple(tuple(r) for r in info["row_list"])
        for i, row in enumerate(rows):
            if len(row) != len(columns):
                raise ValueError(f"table {info['name']!r}: row {i} has {len(row)} values for {len(columns)} columns")
        return cls(name=str(info["name"]), columns=columns, rows=rows)


def quote(name: str) -> str:
    """An identifier quoted for SQLite (which also accepts MySQL's backticks)."""
    return '"' + name.replace('"', '""') + '"'


def open_table(table: Table) -> sqlite3.Connection:
    """A fresh in-memory database holding the task's table, its values inserted as text the way upstream
    inserts them into MySQL (``'%s'`` of each value), so each column's type affinity converts them."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    cols = ", ".join(f"{quote(n)} {t}" for n, t in table.columns)
    conn.execute(f"CREATE TABLE {quote(table.name)} ({cols})")
    marks = ", ".join("?" for _ in table.columns)
    conn.executemany(f"INSERT INTO {quote(table.name)} VALUES ({marks})",
                     [tuple(str(v) for v in row) for row in table.rows])
    return conn


def run_sql(conn: sqlite3.Connection, sql: str) -> list[Row]:
    """Run one statement and return its rows ([] for a statement that returns none); sqlite3.Error on failure.

    Upstream splits the text on ``;`` and runs each part; so does this (the last part's rows are returned)."""
    rows: list[Row] = []
    parts = [p.strip() for p in sql.split(";") if p.strip()]
    if not parts:
        raise sqlite3.OperationalError("no SQL statement given")
    for part in parts:
        cursor = conn.execute(part)
        rows = [tuple(r) for r in cursor.fetchall()]
    return rows


def render_rows(rows: Sequence[Row]) -> str:
    """Rows as the database tool shows them (a Python list of tuples, as upstream's MySQL connector prints)."""
    return str([tuple(r) for r in rows])


# -- upstream's check of a query's final answer --------------------------------------------------------------

def _tuple_spans(answer: str) -> list[tuple[int, int]] | None:
    """The (open, close) positions of each parenthesised tuple in ``answer``, skipping ``Decimal(...)``;
    None when the parentheses do not pair up."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    in_decimal = False
    for i, char in enumerate(answer):
        if char == "(":
            if answer[max(0, i - 7):i] == "Decimal":
                if in_decimal:
                    return None
                in_decimal = True
            else:
                start = i
        elif char == ")":
            if in_decimal:
                in_decimal = False
                continue
            if start is None:
                return None
            spans.append((start, i))
            start = None
    return None if start is not None else spans


def _number(text: str) -> float | None:
    """A numeric element as upstream reads it: ``Decimal('x')`` unwrapped, then the slice its trimming loops
    keep (they stop one character short of stripping a leading or trailing non-number), parsed as a float."""
    text = re.sub(r'^Decimal\((["\']?)(.*?)(["\']?)\)$', r"\2", text)
    digits = "0123456789.-"
    begin = 0
    for i, char in enumerate(text):
        if char in digits:
            break
        begin = i
    end = len(text)
    for i in range(len(text) - 1, -1, -1):
        if text[i] in digits:
            break
        end = i + 1
    try:
        return float(text[begin:end])
    except ValueError:
        return None


def _unquoted(element: str, value: str) -> str:
    """An answered string with one surrounding quote dropped where the gold has none (upstream's order:
    the leading and trailing single quote, then the double quote; at most one each side)."""
    head = tail = False
    for mark in ("'", '"'):
        if element.startswith(mark) and not value.startswith(mark) and not head:
            element, head = element[1:], True
        if element.endswith(mark) and not value.endswith(mark) and not tail:
            element, tail = element[:-1], True
    return element


def _tuple_matches(text: str, gold: Row) -> bool:
    """One answered tuple's text against one gold row (upstream's element rules)."""
    elements = [e.strip() for e in re.split(r"\s*,\s*", text) if e.strip()]
    if len(elements) != len(gold):
        return False
    for element, value in zip(elements, gold):
        if isinstance(value, (int, float)):
            number = _number(element)
            if number is None or not math.isclose(number, value, rel_tol=1e-6, abs_tol=1e-6):
                return False
        elif isinstance(value, str):
            if 0 < len(element) - len(value) <= 2:
                element = _unquoted(element, value)
            if element != value:
                return False
        else:
            return False
    return True


def answer_matches(answer: str, gold: Sequence[Row]) -> bool:
    """Upstream's check of a query's final answer against the gold rows: as many tuples as rows, in order,
    each matching its row; an answer without parentheses is one row (or the empty answer, for no rows)."""
    spans = _tuple_spans(answer)
    if spans is None:
        return False
    if not spans:
        if not gold:
            return True
        return len(gold) == 1 and _tuple_matches(answer, gold[0])
    if len(spans) != len(gold):
        return False
    return all(_tuple_matches(answer[a + 1:b], row) for (a, b), row in zip(spans, gold))


# -- a changed table, as MySQL renders it --------------------------------------------------------------------

def mysql_text(value: Any, mysql_type: str) -> str | None:
    """How MySQL prints one stored value of a column of ``mysql_type`` (None for NULL): a DECIMAL with its
    scale's digits, a float without a trailing ``.0``, everything else as text."""
    if value is None:
        return None
    kind = mysql_type.strip().upper()
    decimal = re.match(r"(DECIMAL|NUMERIC)\s*\(\s*\d+\s*,\s*(\d+)\s*\)", kind)
    if decimal and isinstance(value, (int, float)):
        return f"{value:.{int(decimal.group(2))}f}"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def table_rows(conn: sqlite3.Connection, table: Table) -> list[tuple[str | None, ...]]:
    """The table's rows now, each value as MySQL renders it."""
    cols = ", ".join(quote(n) for n, _ in table.columns)
    rows = conn.execute(f"SELECT {cols} FROM {quote(table.name)}").fetchall()
    return [tuple(mysql_text(v, t) for v, (_, t) in zip(row, table.columns)) for row in rows]


def table_md5(rows: Sequence[tuple[str | None, ...]]) -> str | None:
    """Upstream's table hash: ``md5(group_concat(rowhash ORDER BY rowhash))`` where ``rowhash`` is the first five
    hex digits of ``md5(concat_ws(',', columns))`` (NULLs skipped); None for an empty table (MySQL's NULL)."""
    if not rows:
        return None
    hashes = sorted(hashlib.md5(",".join(v for v in row if v is not None).encode()).hexdigest()[:5] for row in rows)
    return hashlib.md5(",".join(hashes).encode()).hexdigest()


def same_rows(a: Sequence[tuple[str | None, ...]], b: Sequence[tuple[str | None, ...]]) -> bool:
    """The same rows, in any order (the hash comparison upstream makes, without the hash)."""
    return Counter(a) == Counter(b)


@dataclasses.dataclass(frozen=True)
class DbTask:
    """One ``db_bench`` task, parsed from its row."""

    table: Table
    gold_sql: str
    direct: tuple[Row, ...] | None
    """A query's gold rows (None for a task that changes the table)."""
    md5: str | None
    """A change's gold table hash, as MySQL computed it."""

    @property
    def is_query(self) -> bool:
        """True for a query (its answer is its rows), False for a change (judged by the table afterwards)."""
        return self.direct is not None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> DbTask:
        """From upstream's entry (``answer_info``: ``md5``, ``direct``, ``sql``; ``table_info``)."""
        info = row["answer_info"]
        direct = info.get("direct")
        return cls(table=Table.from_info(row["table_info"]), gold_sql=str(info["sql"]).strip(),
                   direct=tuple(tuple(r) for r in direct) if direct is not None else None,
                   md5=info.get("md5"))

    def gold_rows(self) -> list[tuple[str | None, ...]]:
        """The table after the gold SQL on a fresh copy (a change's reference state)."""
        conn = open_table(self.table)
        try:
            run_sql(conn, self.gold_sql)
            return table_rows(conn, self.table)
        finally:
            conn.close()


def nothing_passes(task: DbTask) -> bool:
    """True when an agent that does nothing passes the task (upstream's rules): a query whose gold is no rows
    (an unparsable answer counts as the empty one), or a change whose gold SQL leaves the table as it was."""
    if task.direct is not None:
        return not task.direct
    conn = open_table(task.table)
    try:
        before = table_rows(conn, task.table)
    finally:
        conn.close()
    return same_rows(before, task.gold_rows())


def gold_problem(task: DbTask) -> str | None:
    """Why SQLite cannot stand in for MySQL on this task, or None (see the module docstring)."""
    conn = open_table(task.table)
    try:
        try:
            rows = run_sql(conn, task.gold_sql)
        except sqlite3.Error as exc:
            return f"SQLite cannot run the gold SQL ({type(exc).__name__}: {exc}): {task.gold_sql}"
        if task.direct is not None:
            if not answer_matches(render_rows(rows), task.direct):
                return (f"SQLite's rows for the gold SQL differ from MySQL's stored answer "
                        f"(SQLite: {render_rows(rows)[:300]}; MySQL: {render_rows(task.direct)[:300]})")
            return None
        if task.md5 is not None and table_md5(table_rows(conn, task.table)) != task.md5:
            return "the table after the gold SQL on SQLite does not hash to MySQL's stored md5 (a MySQL-only effect)"
        return None
    finally:
        conn.close()


@dataclasses.dataclass
class DbState:
    """One episode's database (``episode.state``): the table on SQLite and the statements run so far."""

    task: DbTask
    conn: sqlite3.Connection
    rounds: int
    """Upstream's round limit: statements the episode may run (its answer must come within the rounds)."""
    executed: int = 0
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def close(self) -> None:
        """Drop the database."""
        self.conn.close()
