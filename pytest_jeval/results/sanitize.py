"""Odd values in a reply become null (or readable text), with a note, never a crash.

A server may send usage token counts that are strings, negative, NaN or infinite,
or content holding a lone UTF-16 surrogate (which no UTF-8 file can store). Such
values are replaced - a bad count by null, a non-finite number by null, a lone
surrogate by U+FFFD - and each replacement is noted in the record's
``scoring_metadata["sanitized"]``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["TOKEN_FIELDS", "clean_record", "json_line", "token_count"]

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "judge_prompt_tokens", "judge_completion_tokens")
"""Record fields that hold token counts."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def token_count(value: Any, where: str, notes: list[str]) -> int | None:
    """``value`` as a token count (a non-negative whole number), else None with a note."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and math.isfinite(value) and value >= 0 and value.is_integer():
        return int(value)
    notes.append(f"{where}: {_shown(value)} is not a token count; recorded as null")
    return None


def _clean(value: Any, where: str, notes: list[str]) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        notes.append(f"{where}: {value!r} is not a finite number; recorded as null")
        return None
    if isinstance(value, str):
        if _SURROGATE.search(value):
            notes.append(f"{where}: a lone surrogate character was replaced by U+FFFD")
            return _SURROGATE.sub("\ufffd", value)
        return value
    if isinstance(value, dict):
        return {
            (_SURROGATE.sub("\ufffd", k) if isinstance(k, str) else k): _clean(v, f"{where}.{k}", notes)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_clean(v, f"{where}[{i}]", notes) for i, v in enumerate(value)]
    return value


def clean_record(record: dict[str, Any], notes: list[str] | None = None) -> dict[str, Any]:
    """``record`` with odd values replaced; ``notes`` (and any made here) go to ``scoring_metadata["sanitized"]``."""
    found = list(notes or ())
    try:  # the common case, checked at C speed: nothing to replace
        json.dumps(record, ensure_ascii=False, allow_nan=False).encode("utf-8")
        out = dict(record)
    except (ValueError, UnicodeEncodeError, TypeError, RecursionError):
        out = {k: _clean(v, k, found) for k, v in record.items()}
    for field in TOKEN_FIELDS:
        if field in out:
            out[field] = token_count(out[field], field, found)
    if found:
        meta = out.get("scoring_metadata")
        meta = dict(meta) if isinstance(meta, dict) else {}
        previous = meta.get("sanitized")
        meta["sanitized"] = (list(previous) if isinstance(previous, list) else []) + found
        out["scoring_metadata"] = meta
    return out


def json_line(record: dict[str, Any]) -> bytes:
    """One JSONL line (UTF-8, ending in a newline); odd values are cleaned first when they would not encode."""
    try:
        return (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        cleaned = clean_record(record)
        return (json.dumps(cleaned, ensure_ascii=False, allow_nan=False, default=str) + "\n").encode("utf-8")
    except TypeError:
        return (json.dumps(clean_record(record), ensure_ascii=False, allow_nan=False, default=str) + "\n").encode(
            "utf-8"
        )
