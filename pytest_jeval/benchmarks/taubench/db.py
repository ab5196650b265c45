"""A domain database as plain JSON data: loaded once, copied fresh for every episode, hashed as upstream hashes.

Upstream holds the database as pydantic models; what the tools return and what is hashed is the models'
dump, which carries every optional field (``null`` when unset) that ``db.json`` leaves out. :func:`normalized`
adds those fields, in the models' order, so the tools' results and the hash read as upstream's do. The
hash is upstream's rule: sha256 of ``json.dumps(db, sort_keys=True, default=str)``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

Database = dict[str, Any]

_ORDER_OPTIONAL = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                   "exchange_price_difference", "return_items", "return_payment_method_id")
"""A retail order's optional fields (upstream's ``Order`` model), in order."""
_FLIGHT_FIELDS = ("flight_number", "origin", "destination")
"""The leading fields of upstream's airline flight models (the data file puts them in another order)."""
TABLES = {"retail": ("products", "users", "orders"), "airline": ("flights", "users", "reservations")}


def normalized(domain: str, db: Database) -> Database:
    """``db`` with the optional fields upstream's models add (``None`` when absent), in place; checks the tables."""
    for table in TABLES[domain]:
        if not isinstance(db.get(table), dict):
            raise ValueError(f"not a {domain} database: it needs the objects {', '.join(TABLES[domain])}")
    if domain == "retail":
        for order in db["orders"].values():
            for key in _ORDER_OPTIONAL:
                order.setdefault(key, None)
    elif domain == "airline":
        for reservation in db["reservations"].values():
            reservation.setdefault("status", None)
            reservation["flights"] = [_ordered(f, _FLIGHT_FIELDS) for f in reservation["flights"]]
        for number, flight in list(db["flights"].items()):
            db["flights"][number] = _ordered(flight, _FLIGHT_FIELDS)
        for user in db["users"].values():
            user["address"].setdefault("address2", None)
    return db


def _ordered(record: dict[str, Any], first: tuple[str, ...]) -> dict[str, Any]:
    """``record`` with the fields ``first`` leading, the others after them as they were."""
    return {**{k: record[k] for k in first if k in record}, **{k: v for k, v in record.items() if k not in first}}


@functools.lru_cache(maxsize=4)
def _text(path: Path, domain: str) -> str:
    """The normalized database as JSON text (parsing it is the cheapest deep copy)."""
    db = normalized(domain, json.loads(path.read_text(encoding="utf-8")))
    return json.dumps(db, ensure_ascii=False)


def fresh_db(path: Path, domain: str) -> Database:
    """A private copy of the domain database; changing it never touches another episode's."""
    data: Database = json.loads(_text(path, domain))
    return data


def db_hash(db: Database) -> str:
    """Upstream's database hash: sha256 of ``json.dumps(db, sort_keys=True, default=str)``."""
    return hashlib.sha256(json.dumps(db, sort_keys=True, default=str).encode()).hexdigest()


@functools.lru_cache(maxsize=4)
def initial_hash(path: Path, domain: str) -> str:
    """The hash of the database as loaded (what a do-nothing agent leaves)."""
    return db_hash(fresh_db(path, domain))


@dataclasses.dataclass
class TauEnv:
    """The episode's environment state (``ctx.state``): the domain and its private database."""

    domain: str
    db: Database
    db_path: Path

    def hash(self) -> str:
        """The database's hash now."""
        return db_hash(self.db)


def deep_update(target: dict[str, Any], update: dict[str, Any]) -> None:
    """Merge ``update`` into ``target`` as upstream's ``initialization_data`` does: nested objects merge,
    any other value replaces."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            deep_update(target[key], value)
        else:
            target[key] = value
