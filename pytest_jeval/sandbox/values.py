"""Plain values across a process boundary: the type-aware half of the verdict channel.

A value returned by sandboxed code reaches the checker only as data: a tagged JSON
tree built from objects whose type is *exactly* one of ``None``, ``bool``, ``int``,
``float``, ``complex``, ``str``, ``bytes``, ``list``, ``tuple``, ``dict``, ``set`` or
``frozenset``. Anything else (a subclass of ``int``, an object whose ``__eq__`` always
says yes, a generator) is refused with :class:`NotPlainValue`. The receiving side
rebuilds genuine built-in objects, so ``==`` there keeps Python's own semantics
(``1 == 1.0 == True``, ``[1] != (1,)``) and nothing the program defined can take part.

This module is also pasted, as source, into the trusted programs that run inside the
sandbox (``_harness``, ``_callee``): it imports nothing and defines only the names below.
"""

from __future__ import annotations

import struct
from typing import Any

#: Deepest nesting accepted (deeper structures are refused, not truncated).
MAX_DEPTH = 200
#: Largest frame accepted on a harness pipe.
MAX_FRAME = 256 * 1024 * 1024


class NotPlainValue(TypeError):
    """The value (or a part of it) is not exactly a built-in plain type."""


_SCALARS = {type(None): "N", bool: "B", int: "I", float: "F", complex: "C", str: "S", bytes: "Y"}
_CONTAINERS: dict[type, str] = {list: "L", tuple: "T", set: "E", frozenset: "Z"}


def encode_value(value: Any, depth: int = 0) -> list[Any]:
    """A tagged, JSON-ready tree of ``value``; :class:`NotPlainValue` for anything not plain."""
    if depth > MAX_DEPTH:
        raise NotPlainValue(f"nested deeper than {MAX_DEPTH} levels")
    kind = type(value)
    tag = _SCALARS.get(kind)
    if tag is not None:
        if tag == "N":
            return ["N"]
        if tag == "B" or tag == "S":
            return [tag, value]
        if tag == "I":
            return ["I", int.__repr__(value)]
        if tag == "F":
            return ["F", float.__repr__(value)]
        if tag == "C":
            return ["C", float.__repr__(value.real), float.__repr__(value.imag)]
        return ["Y", bytes.hex(value)]
    tag = _CONTAINERS.get(kind)
    if tag is not None:
        return [tag, [encode_value(item, depth + 1) for item in value]]
    if kind is dict:
        return ["D", [[encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in dict.items(value)]]
    raise NotPlainValue(f"a {kind.__module__}.{kind.__qualname__} is not a plain value")


def decode_value(tree: Any, depth: int = 0) -> Any:
    """The genuine built-in value of an :func:`encode_value` tree; ``ValueError`` when malformed."""
    if depth > MAX_DEPTH or type(tree) is not list or not tree or type(tree[0]) is not str:
        raise ValueError("malformed value")
    tag = tree[0]
    if tag == "N" and len(tree) == 1:
        return None
    if tag == "B" and len(tree) == 2 and type(tree[1]) is bool:
        return tree[1]
    if tag == "S" and len(tree) == 2 and type(tree[1]) is str:
        return tree[1]
    if tag == "I" and len(tree) == 2 and type(tree[1]) is str:
        return int(tree[1])
    if tag == "F" and len(tree) == 2 and type(tree[1]) is str:
        return float(tree[1])
    if tag == "C" and len(tree) == 3 and type(tree[1]) is str and type(tree[2]) is str:
        return complex(float(tree[1]), float(tree[2]))
    if tag == "Y" and len(tree) == 2 and type(tree[1]) is str:
        return bytes.fromhex(tree[1])
    if len(tree) == 2 and type(tree[1]) is list:
        items = tree[1]
        if tag == "D":
            out = {}
            for pair in items:
                if type(pair) is not list or len(pair) != 2:
                    raise ValueError("malformed dict item")
                try:
                    out[decode_value(pair[0], depth + 1)] = decode_value(pair[1], depth + 1)
                except TypeError:
                    raise ValueError("unhashable dict key") from None
            return out
        values = [decode_value(item, depth + 1) for item in items]
        try:
            if tag == "L":
                return values
            if tag == "T":
                return tuple(values)
            if tag == "E":
                return set(values)
            if tag == "Z":
                return frozenset(values)
        except TypeError:
            raise ValueError("unhashable set item") from None
    raise ValueError(f"malformed value with tag {tag!r}")


def pack_frame(payload: bytes) -> bytes:
    """``payload`` with its 8-byte big-endian length in front."""
    return struct.pack(">Q", len(payload)) + payload
