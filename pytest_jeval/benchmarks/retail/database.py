"""The retail database: users, orders and products in one JSON file, copied fresh for every episode."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
DB_PATH = DATA_DIR / "db.json"
TABLES = ("products", "users", "orders")

Database = dict[str, Any]
"""``{"products": {product_id: ...}, "users": {user_id: ...}, "orders": {order_id: ...}}``."""


@functools.lru_cache(maxsize=4)
def _load(path: Path) -> Database:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or any(not isinstance(data.get(t), dict) for t in TABLES):
        raise ValueError(f"{path} is not a retail database: it needs the objects {', '.join(TABLES)}")
    return data


def fresh_db(path: Path = DB_PATH) -> Database:
    """A private deep copy of the database; changing it never touches another episode's copy."""
    return copy.deepcopy(_load(path))


def canonical_json(db: Database) -> str:
    """The database as canonical JSON (sorted keys, no spaces), the form that is hashed."""
    return json.dumps(db, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def db_hash(db: Database) -> str:
    """The sha256 of :func:`canonical_json`: two databases are equal exactly when their hashes are."""
    return hashlib.sha256(canonical_json(db).encode("utf-8")).hexdigest()
