"""A small TOML writer for the suites ``jeval run`` writes (tomllib reads them back unchanged).

It writes what a suite holds: tables of scalars (text, booleans, integers, floats), lists of
scalars, nested tables and arrays of tables. Text is written as a basic string with every
character TOML does not allow there escaped, so any Python string round-trips.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


class TomlWriteError(TypeError):
    """A value this writer cannot express in TOML."""


def string(text: str) -> str:
    """``text`` as a TOML basic string."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            raise TomlWriteError(f"a lone surrogate (U+{ord(ch):04X}) cannot be written to TOML")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def key(name: str) -> str:
    """A key, bare where TOML allows it, else quoted."""
    return name if _BARE_KEY.fullmatch(name) else string(name)


def value(v: Any) -> str:
    """A scalar or a list of scalars as TOML."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        text = repr(v)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(v, str):
        return string(v)
    if isinstance(v, Sequence):
        return "[" + ", ".join(value(x) for x in v) + "]"
    raise TomlWriteError(f"cannot write a {type(v).__name__} to TOML")


def _is_table_list(v: Any) -> bool:
    return isinstance(v, Sequence) and not isinstance(v, str) and bool(v) and all(isinstance(x, Mapping) for x in v)


def _table(path: list[str], table: Mapping[str, Any], lines: list[str], *, array: bool = False) -> None:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, Mapping) and not _is_table_list(v)]
    if path:
        name = ".".join(key(p) for p in path)
        if lines:
            lines.append("")
        lines.append(f"[[{name}]]" if array else f"[{name}]")
    for k, v in scalars:
        if v is None:
            continue  # TOML has no null: an unset key is left out
        lines.append(f"{key(k)} = {value(v)}")
    for k, v in table.items():
        if isinstance(v, Mapping):
            _table([*path, k], v, lines)
        elif _is_table_list(v):
            for item in v:
                _table([*path, k], item, lines, array=True)


def dumps(document: Mapping[str, Any]) -> str:
    """``document`` (nested dicts and lists of dicts) as TOML text; keys holding None are left out."""
    lines: list[str] = []
    _table([], document, lines)
    return "\n".join(lines) + "\n"
