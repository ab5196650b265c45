"""``--jeval-set KEY=VALUE``: suite keys overridden from the command line.

Each override is applied to the parsed TOML before validation, so a wrong value gets the
file's own message, with the override that set it appended (``(from --jeval-set run.seed=x)``).

``KEY`` is a TOML dotted key (``defaults.temperature``, ``models."gpt-4.1".temperature``);
under ``models`` and ``benchmarks`` its second part selects an entry by its ``label`` (if it
has one), else its ``name``, or by index (``benchmarks.0.max_samples``, ``benchmarks[0].max_samples``).
``VALUE`` is a TOML value (``7``, ``0.3``, ``true``, ``"text"``, ``["a", "b"]``); anything that
is not valid TOML is taken as a bare string (``judge.model=gpt-5-mini``).

Argv is readable by every process on the machine, so a key never goes there: a key part named
``api_key`` (or a look-alike of it: any key part that is not plain ASCII is refused), a value
holding one, a value that looks like a key, and a URL with credentials are refused. No message
about an override ever repeats its value: an override is shown as ``--jeval-set KEY=…``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

OPTION = "--jeval-set"
ARRAYS = ("models", "benchmarks")
"""The suite's arrays of tables, whose entries a selector picks."""
SECRET_KEYS = ("api_key",)
"""Keys refused on the command line: argv is readable by every process on the machine."""


class OverrideError(Exception):
    """A ``--jeval-set`` that cannot be applied (malformed, a secret, or no such entry)."""


@dataclass(frozen=True)
class Override:
    """One ``--jeval-set KEY=VALUE``: the text as given, the key's parts and the parsed value."""

    text: str
    key: tuple[str, ...]
    value: Any

    def __str__(self) -> str:
        return f"{OPTION} {shown_key(self.text)}=…"


def shown_key(text: str) -> str:
    """The ``KEY`` of a ``KEY=VALUE`` as a message may show it (never the value; a bare text that looks like a key
    is hidden too)."""
    from pytest_jeval.core.redact import contains_secret

    key = text.split("=", 1)[0].strip() if "=" in text else text
    return "(a key-looking text, not shown)" if contains_secret(key) else repr(key) if not key.isprintable() else key


def _split(text: str) -> tuple[str, str]:
    """``KEY=VALUE`` split at the first ``=`` outside a quoted key part."""
    quote = ""
    escaped = False
    for i, ch in enumerate(text):
        if escaped:
            escaped = False
        elif quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"':
                escaped = True
        elif ch in "\"'":
            quote = ch
        elif ch == "=":
            return text[:i].strip(), text[i + 1:]
    if quote:
        raise OverrideError(f"{OPTION} {shown_key(text)}: the key has an unclosed {quote} (expected KEY=VALUE)")
    raise OverrideError(f"{OPTION} {shown_key(text)}: expected KEY=VALUE (e.g. {OPTION} run.seed=7)")


_INDEX = re.compile(r"^(models|benchmarks)\[(\d+)\]")


def _key_parts(key: str, text: str) -> tuple[str, ...]:
    """The parts of a TOML dotted key, parsed by the TOML parser itself (quoted parts allowed)."""
    if not key:
        raise OverrideError(f"{OPTION} =…: the key is empty (expected KEY=VALUE, e.g. {OPTION} run.seed=7)")
    key = _INDEX.sub(r"\1.\2", key)
    try:
        table: Any = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError:
        raise OverrideError(f"{OPTION} {shown_key(text)}=…: not a dotted key (quote parts with dots or spaces: "
                            'models."gpt-4.1".temperature=0)') from None
    parts: list[str] = []
    while isinstance(table, dict):
        (name, table), = table.items()
        parts.append(name)
    return tuple(parts)


def _value(raw: str) -> Any:
    """A TOML value, or the text itself where it is not one."""
    try:
        parsed = tomllib.loads(f"v = {raw}")
    except tomllib.TOMLDecodeError:
        return raw
    return parsed["v"] if set(parsed) == {"v"} else raw


def _holds_secret(value: Any) -> bool:
    """True when a value (or a part of it) is a key: under a key named ``api_key``, or a string that looks like one
    (a known key pattern, or a URL with credentials)."""
    from pytest_jeval.core.redact import contains_secret, url_has_credentials

    if isinstance(value, dict):
        return any(k in SECRET_KEYS or not str(k).isascii() or _holds_secret(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_secret(v) for v in value)
    if isinstance(value, str):
        return contains_secret(value) or ("://" in value and url_has_credentials(value))
    return False


def parse_override(text: str) -> Override:
    """Parse one ``KEY=VALUE``; raise :class:`OverrideError` (which never repeats the value) for malformed
    syntax, a key part that is not plain ASCII (a look-alike of ``api_key``), or a key on argv."""
    key_text, raw = _split(text)
    if not key_text.isascii():
        raise OverrideError(f"{OPTION} {shown_key(text)}=…: refused, a key with a letter that is not plain ASCII "
                            "(a look-alike of a key name such as api_key?); the value is not shown")
    key = _key_parts(key_text, text)
    if any(part in SECRET_KEYS for part in key) or _holds_secret(_value(raw)):
        example = f" ({OPTION} {'.'.join(key[:-1])}.api_key_env=MY_KEY_VAR)" if key[-1] in SECRET_KEYS else ""
        raise OverrideError(
            f"{OPTION} {key_text}=…: refused, an API key (or a URL with credentials) on the command line is readable "
            "by every process and kept in shell history; the value is not shown. Put the key in an environment "
            f"variable and name that with api_key_env{example}")
    return Override(text=text, key=key, value=_value(raw))


def parse_overrides(texts: Iterable[str]) -> tuple[Override, ...]:
    """Parse every ``--jeval-set`` (in order; a later one wins over an earlier one for the same key)."""
    return tuple(parse_override(t) for t in texts)


def _entry_name(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return None
    name = entry.get("label") or entry.get("name")
    return name if isinstance(name, str) else None


def _select(entries: list[Any], array: str, selector: str, ov: Override) -> int:
    """The index of the one entry of ``array`` that ``selector`` names (label, else name, or an index)."""
    names = [_entry_name(e) for e in entries]
    available = ", ".join(repr(n) for n in names if n is not None) or "none"
    hint = (f"the {array} are: {available} (or an index 0..{len(entries) - 1})" if entries
            else f"the suite has no {array}")
    if selector.isdigit():
        if int(selector) < len(entries):
            return int(selector)
        raise OverrideError(f"{ov}: {array}[{selector}] does not exist; {hint}")
    found = [i for i, n in enumerate(names) if n == selector]
    if not found:
        raise OverrideError(f"{ov}: no {array} entry has the label or name {selector!r}; {hint}")
    if len(found) > 1:
        raise OverrideError(f"{ov}: {len(found)} {array} entries are named {selector!r}; select one by index "
                            f"({array}.{found[0]}.KEY=VALUE) or give them a label; {hint}")
    return found[0]


def _set(table: dict[str, Any], keys: Sequence[str], value: Any, where: tuple[str | int, ...], ov: Override) -> None:
    """Set ``keys`` in ``table``, creating the tables on the way."""
    for part in keys[:-1]:
        where = (*where, part)
        child = table.setdefault(part, {})
        if not isinstance(child, dict):
            raise OverrideError(f"{ov}: {_loc(where)} is not a table")
        table = child
    table[keys[-1]] = value


def _apply(data: dict[str, Any], ov: Override) -> tuple[str | int, ...]:
    """Apply one override to the TOML data; return the key path it set, as validation errors name it."""
    head, *rest = ov.key
    if head in ARRAYS and rest:
        entries = data.get(head)
        if not isinstance(entries, list):
            entries = []
        index = _select(entries, head, rest[0], ov)
        if not rest[1:]:
            raise OverrideError(f"{ov}: name a key of the entry ({head}.{rest[0]}.KEY=VALUE)")
        entry = entries[index]
        if not isinstance(entry, dict):
            raise OverrideError(f"{ov}: {head}[{index}] is not a table")
        _set(entry, rest[1:], ov.value, (head, index), ov)
        return (head, index, *rest[1:])
    _set(data, ov.key, ov.value, (), ov)
    return ov.key


def _loc(loc: tuple[str | int, ...]) -> str:
    """A key path as the suite's error messages spell it: ``benchmarks[0].max_samples``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + part
    return out


@dataclass(frozen=True)
class Applied:
    """The overrides applied to one suite, with the key path each one set."""

    overrides: tuple[tuple[Override, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.overrides)

    def annotate(self, message: str) -> str:
        """``message`` (a suite error, one ``  key.path: problem`` line per problem) with
        ``(from --jeval-set ...)`` after each line whose key path an override set, or lies in or above."""
        if not self.overrides:
            return message
        lines = []
        for line in message.split("\n"):
            match = re.match(r"^  (\S+?): ", line)
            if match is not None:
                origins = [str(ov) for ov, loc in self.overrides if _related(loc, match.group(1))]
                if origins:
                    line += f" (from {', '.join(dict.fromkeys(origins))})"
            lines.append(line)
        return "\n".join(lines)


def _related(a: str, b: str) -> bool:
    """True when key path ``a`` equals ``b`` or one lies inside the other."""
    short, long = sorted((a, b), key=len)
    return long.startswith(short) and (len(long) == len(short) or long[len(short)] in ".[")


def apply_overrides(data: dict[str, Any], overrides: Sequence[Override]) -> Applied:
    """Apply ``overrides`` in order to the parsed suite ``data`` (in place), before validation."""
    return Applied(tuple((ov, _loc(_apply(data, ov))) for ov in overrides))


def applied_to(path: Path, overrides: Sequence[str]) -> Applied:
    """The key path each of ``overrides`` sets in the suite file ``path`` (which they were applied to
    once already, without error), to name them in an error found past validation."""
    if not overrides:
        return Applied()
    return apply_overrides(tomllib.loads(path.read_text(encoding="utf-8")), parse_overrides(overrides))
