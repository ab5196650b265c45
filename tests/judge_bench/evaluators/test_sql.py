"""The ``sql`` evaluator: the database built once, read-only queries with a time limit, equivalence."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_jeval.judge_bench.evaluators.sql import QueryTimeout, build_database, has_top_level_order_by, run_query
from pytest_jeval.scoring.judging.registry import EvaluatorError
from tests.support.evaluators import DATA, judge


@pytest.fixture(scope="module")
def shop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_database(DATA / "shop.sql", cache_dir=tmp_path_factory.mktemp("sqlcache"))


def test_database_is_built_once_from_the_script(shop_db: Path, tmp_path: Path) -> None:
    assert shop_db.suffix == ".sqlite" and run_query(shop_db, "SELECT COUNT(*) FROM customers") == [(5,)]
    assert build_database(DATA / "shop.sql", cache_dir=shop_db.parent) == shop_db


def test_sql_read_only_and_time_limit(shop_db: Path) -> None:
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        run_query(shop_db, "DELETE FROM orders")
    assert run_query(shop_db, "SELECT COUNT(*) FROM orders") == [(6,)]
    slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
    with pytest.raises(QueryTimeout):
        run_query(shop_db, slow, timeout=0.2)


def test_order_by_detection() -> None:
    assert has_top_level_order_by("SELECT a FROM t ORDER BY a")
    assert not has_top_level_order_by("SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3)")
    assert not has_top_level_order_by("SELECT 'order by' FROM t -- order by a")


def test_sql_equivalence(shop_db: Path) -> None:
    db = str(shop_db)
    same_set = judge("sql", output="SELECT name FROM customers WHERE city='London' ORDER BY name DESC",
                     expected="SELECT name FROM customers WHERE city = 'London'", database=db)
    assert same_set.predicted is True and same_set.details["ordered"] is False
    wrong_order = judge("sql", output="SELECT name FROM products ORDER BY price DESC",
                        expected="SELECT name FROM products ORDER BY price", database=db)
    assert wrong_order.predicted is False
    broken = judge("sql", output="SELEC name FROM products", expected="SELECT name FROM products", database=db)
    assert broken.predicted is False and "syntax" in broken.details["output_error"]
    dupes = judge("sql", output="SELECT city FROM customers", expected="SELECT DISTINCT city FROM customers", database=db)
    assert dupes.predicted is False  # result sets are compared as multisets
    with pytest.raises(EvaluatorError, match="expected query fails"):
        judge("sql", output="SELECT 1", expected="SELECT nope FROM nowhere", database=db)
    with pytest.raises(EvaluatorError, match="no database"):
        judge("sql", output="SELECT 1", expected="SELECT 1")


def test_sql_database_path_relative_to_the_gold_file() -> None:
    j = judge("sql", output="SELECT COUNT(*) FROM products", expected="SELECT 6", database="shop.sql", data_dir=str(DATA))
    assert j.predicted is True
