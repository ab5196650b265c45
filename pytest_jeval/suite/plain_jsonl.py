"""Small local JSON-lines files read with :mod:`json`, where ``datasets`` would give exactly the same rows.

``datasets.load_dataset("json", ...)`` costs about a second of start-up (importing ``datasets``,
``pandas`` and ``pyarrow``, preparing its Arrow cache) before the first row, which is most of a
small run's time outside its calls. For a local ``.jsonl`` file of flat rows the rows it gives are
the ones :func:`json.loads` gives, so :func:`plain_jsonl_rows` reads such files directly, and
declines (returns ``None``, and the caller loads through ``datasets`` as before) whenever the
Arrow reader could give anything else:

- a row that is not a JSON object, a blank line, a duplicate key, a lone ``\\uD800``-style escape,
  bytes that are not UTF-8, an empty file: ``datasets`` decides (a row or an error);
- rows whose keys differ, or come in another order (Arrow fills a missing column with ``None`` and
  orders the columns by first appearance);
- a value that is an object, or a list of anything but one scalar type (Arrow makes a struct of
  the union of the keys, or promotes the elements);
- a column of more than one scalar type, ``null`` apart (Arrow turns ``1`` into ``1.0`` beside
  ``2.5``, and refuses ``1`` beside ``"a"``); an integer outside int64; a float that is not finite;
- a string that starts like an ISO 8601 date (Arrow reads a column of them as timestamps).

Files over :data:`MAX_BYTES` in all go through ``datasets`` too (its Arrow copy is the cheaper
way to hold them).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Local JSON lines up to this many bytes in all are read without ``datasets``.
MAX_BYTES = 16 << 20

_DATE_LIKE = re.compile(r"\s*[+-]?\d{4,}-\d")
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_INT64 = (-(1 << 63), (1 << 63) - 1)
_SCALARS = (str, int, float, bool)


class _Declined(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    row = dict(pairs)
    if len(row) != len(pairs):
        raise _Declined
    return row


def plain_jsonl_rows(files: Sequence[Path]) -> list[dict[str, Any]] | None:
    """The rows of ``files`` as ``datasets`` would give them, or ``None`` where it might differ (see above)."""
    if not files or any(not f.name.lower().endswith(".jsonl") for f in files):
        return None
    try:
        if sum(f.stat().st_size for f in files) > MAX_BYTES:
            return None
        rows: list[dict[str, Any]] = []
        for f in files:
            data = f.read_bytes()
            if _SURROGATE.search(data):
                return None
            lines = data.decode("utf-8").split("\n")
            if lines[-1] == "":
                lines.pop()
            decode = json.JSONDecoder(object_pairs_hook=_pairs).decode
            for line in lines:
                row = decode(line)
                if type(row) is not dict:
                    return None
                rows.append(row)
        return rows if rows and _flat_and_uniform(rows) else None
    except (OSError, ValueError, _Declined):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None


def _flat_and_uniform(rows: list[dict[str, Any]]) -> bool:
    """Every row has the first row's keys in its order; each column holds one scalar type (or lists of one)."""
    keys = tuple(rows[0])
    if not keys:
        return False
    kinds: dict[str, type] = {}
    element_kinds: dict[str, type] = {}
    for row in rows:
        if tuple(row) != keys:
            return False
        for key, value in row.items():
            if value is None:
                continue
            kind = type(value)
            if kinds.setdefault(key, kind) is not kind:
                return False
            if kind is list:
                for element in value:
                    if element is None:
                        continue
                    element_kind = type(element)
                    if element_kinds.setdefault(key, element_kind) is not element_kind or not _plain(element):
                        return False
            elif not _plain(value):
                return False
    return True


def _plain(value: Any) -> bool:
    """A scalar that Arrow reads back as the same Python value."""
    kind = type(value)
    if kind is str:
        return not _DATE_LIKE.match(value)
    if kind is int:
        return bool(_INT64[0] <= value <= _INT64[1])
    if kind is float:
        return math.isfinite(value)
    return kind is bool
