"""A domain database as plain JSON data: loaded once, copied fresh for every episode, hashed as upstream hashes.

Upstream holds the database as pydantic models; what the tools return and what is hashed is the models'
dump, which carries every optional field (``null`` when unset) that ``db.json`` leaves out. :func:`normalized`
adds those fields, in the models' order, so the tools' results and the hash read as upstream's do. The
hash is upstream's rule: sha256 of ``json.dumps(db, sort_keys=True, default=str)``.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

Database = MutableMapping[str, Any]

_ORDER_OPTIONAL = ("cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
                   "exchange_price_difference", "return_items", "return_payment_method_id")
"""A retail order's optional fields (upstream's ``Order`` model), in order."""
_FLIGHT_FIELDS = ("flight_number", "origin", "destination")
"""The leading fields of upstream's airline flight models (the data file puts them in another order)."""
TABLES = {"retail": ("products", "users", "orders"), "airline": ("flights", "users", "reservations")}


def normalized(domain: str, db: dict[str, Any]) -> dict[str, Any]:
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


class CowTable(MutableMapping[str, Any]):
    """One table of an episode's database over the shared, loaded one (copy on first use by key).

    ``table[key]`` hands out the episode's own deep copy of the record (made the first time), so changes never
    reach the shared data; new records and deletions are the episode's own. Iterating (``keys``, ``values``,
    ``items``) does not copy: the records it yields are read-only, and a tool that changes a record takes it
    by key first. The order is upstream's: the loaded records, then new ones as added.
    """

    __slots__ = ("base", "gone", "own")

    def __init__(self, base: dict[str, Any]) -> None:
        self.base = base
        self.own: dict[str, Any] = {}
        self.gone: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        if key in self.own:
            return self.own[key]
        if key in self.gone or key not in self.base:
            raise KeyError(key)
        value = self.own[key] = copy.deepcopy(self.base[key])
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self.own[key] = value
        self.gone.discard(key)

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self.own.pop(key, None)
        if key in self.base:
            self.gone.add(key)

    def __contains__(self, key: object) -> bool:
        return key in self.own or (key in self.base and key not in self.gone)

    def __iter__(self) -> Iterator[str]:
        for key in self.base:
            if key not in self.gone:
                yield key
        for key in self.own:
            if key not in self.base:
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def peek(self, key: str) -> Any:
        """The record as it is now, without copying it (read-only)."""
        return self.own[key] if key in self.own else self.base[key]

    def values(self) -> Any:
        """The records, read-only (no copy)."""
        return [self.peek(k) for k in self]

    def items(self) -> Any:
        """``(key, record)`` pairs, the records read-only (no copy)."""
        return [(k, self.peek(k)) for k in self]

    def plain(self) -> dict[str, Any]:
        """The table as a plain dict (a deep copy)."""
        return {k: copy.deepcopy(self.peek(k)) for k in self}


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


class Loaded:
    """A domain database loaded once per process: the shared records and, made when first needed, each
    record's canonical JSON (the pieces of upstream's hash)."""

    def __init__(self, domain: str, data: dict[str, Any]) -> None:
        self.domain = domain
        self.data = data
        self._dumps: dict[str, dict[str, str]] = {}

    def dumps(self, table: str) -> dict[str, str]:
        """Each record of ``table`` as canonical JSON."""
        if table not in self._dumps:
            self._dumps[table] = {k: _dump(v) for k, v in self.data[table].items()}
        return self._dumps[table]


@functools.lru_cache(maxsize=4)
def loaded(path: Path, domain: str) -> Loaded:
    """The normalized domain database at ``path``, loaded once per process."""
    return Loaded(domain, normalized(domain, json.loads(path.read_text(encoding="utf-8"))))


class TauDB(dict[str, CowTable]):
    """An episode's database: the domain's tables, each a :class:`CowTable` over the loaded data."""

    def __init__(self, source: Loaded) -> None:
        super().__init__((table, CowTable(records)) for table, records in source.data.items())
        self.source = source

    def hash(self) -> str:
        """Upstream's hash of the database now, the same bytes as ``json.dumps(db, sort_keys=True, default=str)``
        made from the cached JSON of the records this episode did not take."""
        digest = hashlib.sha256()
        digest.update(b"{")
        for i, table in enumerate(sorted(self)):
            rows = self[table]
            base = self.source.dumps(table) if table in self.source.data else {}
            digest.update(f"{', ' if i else ''}{json.dumps(table)}: {{".encode())
            pieces = (f"{json.dumps(k)}: {_dump(rows.own[k]) if k in rows.own else base[k]}" for k in sorted(rows))
            digest.update(", ".join(pieces).encode())
            digest.update(b"}")
        digest.update(b"}")
        return digest.hexdigest()

    def plain(self) -> dict[str, Any]:
        """The whole database as plain data (a deep copy)."""
        return {table: rows.plain() for table, rows in self.items()}


def fresh_db(path: Path, domain: str) -> TauDB:
    """A private database for an episode; changing it never touches another episode's (copy on first use)."""
    return TauDB(loaded(path, domain))


def db_hash(db: Any) -> str:
    """Upstream's database hash: sha256 of ``json.dumps(db, sort_keys=True, default=str)``."""
    if isinstance(db, TauDB):
        return db.hash()
    return hashlib.sha256(_dump(db).encode()).hexdigest()


@functools.lru_cache(maxsize=4)
def initial_hash(path: Path, domain: str) -> str:
    """The hash of the database as loaded (what a do-nothing agent leaves)."""
    return fresh_db(path, domain).hash()


@dataclasses.dataclass
class TauEnv:
    """The episode's environment state (``ctx.state``): the domain and its private database."""

    domain: str
    db: TauDB
    db_path: Path

    def hash(self) -> str:
        """The database's hash now."""
        return self.db.hash()


def deep_update(target: MutableMapping[str, Any], update: dict[str, Any]) -> None:
    """Merge ``update`` into ``target`` as upstream's ``initialization_data`` does: nested objects merge,
    any other value replaces."""
    for key, value in update.items():
        if isinstance(value, dict) and key in target and isinstance(target[key], MutableMapping):
            deep_update(target[key], value)
        else:
            target[key] = value
