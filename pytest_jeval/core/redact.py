"""Keys out of everything the run stores or prints: one registry, one marker.

Two rules, applied by :func:`redact`:

* **Known keys.** Every key the run knows is registered (:func:`register`; the session
  registers every key of the plan, :meth:`pytest_jeval.suite.plan.EvalPlan.keys`: the suite's
  ``api_key`` values, the values of the variables named by ``api_key_env``, ``[backend.external]
  api_key``, the judge's key, and the variables the plan falls back to, ``JEVAL_API_KEY`` and
  ``OPENAI_API_KEY``). Any occurrence of one is replaced by :data:`MARKER`, wherever it appears.
* **Key-looking text.** ``Authorization:`` and ``api_key=`` values, ``Bearer`` tokens,
  passwords in URLs and common provider key shapes (``sk-...``, ``AKIA...``,
  ``ghp_...``, ``hf_...``, JWTs, ...) are replaced by :data:`MARKER` as well.

Content that belongs to the benchmark (the model's answer, the question, the
expected answer) only gets the first rule: a question may legitimately talk about
``sk-`` keys, and rewriting it would change what ``jeval rescore`` scores. Everything
diagnostic (errors, tracebacks, logs, stderr tails, metadata) gets both.

The module imports nothing heavy: xdist workers, the call helper and the CLI use it.
"""

from __future__ import annotations

import collections
import json
import re
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import SecretStr

    from pytest_jeval.core.chat import Reply

__all__ = [
    "CONTENT_FIELDS",
    "MARKER",
    "MIN_KEY_LENGTH",
    "contains_secret",
    "environment_without_keys",
    "known_keys",
    "redact",
    "redact_known",
    "redact_record",
    "redact_reply",
    "redact_value",
    "register",
    "unregister",
]

MARKER = "[REDACTED]"
"""What every redacted key is replaced by."""

MIN_KEY_LENGTH = 8
"""Shorter values are not registered as keys: placeholders such as ``EMPTY`` or
``local`` (and test keys like ``x``) would otherwise be cut out of ordinary text.
Real provider keys are 20 characters or more."""

CONTENT_FIELDS = frozenset({"record_id", "benchmark", "model", "model_answer", "question", "expected", "extracted",
                            "subject"})
"""Record fields that hold benchmark content: only known keys are redacted there."""

# -- the registry ------------------------------------------------------------------------

_lock = threading.Lock()
_keys: collections.Counter[str] = collections.Counter()
_ordered: tuple[str, ...] = ()
"""The registered keys, longest first (so a key that contains another goes whole)."""


def _value(key: str | SecretStr | None) -> str | None:
    if key is None:
        return None
    text = key if isinstance(key, str) else key.get_secret_value()
    text = text.strip()
    return text if len(text) >= MIN_KEY_LENGTH else None


def register(*keys: str | SecretStr | None) -> list[str]:
    """Add keys to the registry (None and values shorter than :data:`MIN_KEY_LENGTH` are skipped).

    Returns the values added, for :func:`unregister`. Registration is counted: a key
    registered twice stays until it is unregistered twice.
    """
    global _ordered
    added = [v for v in (_value(k) for k in keys) if v is not None]
    if added:
        with _lock:
            _keys.update(added)
            _ordered = tuple(sorted(_keys, key=len, reverse=True))
    return added


def unregister(keys: Iterable[str]) -> None:
    """Undo a :func:`register` (the values it returned)."""
    global _ordered
    with _lock:
        for key in keys:
            _keys[key] -= 1
            if _keys[key] <= 0:
                del _keys[key]
        _ordered = tuple(sorted(_keys, key=len, reverse=True))


def known_keys() -> tuple[str, ...]:
    """The registered keys, longest first."""
    return _ordered


# -- text --------------------------------------------------------------------------------

_VALUE = r"[^\s\"'<>,;()\[\]{}]{8,}"
"""A header or parameter value: 8+ characters, stopping at quotes, brackets, separators."""

#: (substrings one of which the text must contain, pattern, replacement). The substrings, looked
#: for in the lower-cased text, are a cheap test that skips the scan of a pattern that cannot match.
#: Group 1, where there is one, is kept: the header or parameter name.
_PATTERNS: tuple[tuple[tuple[str, ...], re.Pattern[str], str], ...] = tuple(
    (triggers, re.compile(p), r) for triggers, p, r in (
        # Authorization: Bearer X / "authorization": "Basic X" / proxy-authorization=X
        (("authorization",),
         r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|digest)\s+)?)" + _VALUE,
         r"\1" + MARKER),
        # api_key=X, "x-api-key": "X", api-key: X, access_token=X, secret_key=X
        (("api", "access", "secret"),
         r"(?i)(\b(?:x-)?(?:api[-_]?key|access[-_]?token|secret[-_]?key)\b[\"']?\s*[:=]\s*[\"']?)" + _VALUE,
         r"\1" + MARKER),
        (("bearer",), r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}", r"\1" + MARKER),
        # https://user:password@host
        (("://",), r"(://[^/\s:@]+:)[^/\s@]+(@)", r"\1" + MARKER + r"\2"),
        # provider key shapes
        (("sk-", "pk-", "rk-"), r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}", MARKER),  # OpenAI, Anthropic, ...
        (("AKIA", "ASIA"), r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", MARKER),  # AWS access key ids
        (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,}", MARKER),  # GitHub
        (("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{30,}", MARKER),
        (("xox",), r"\bxox[abposr]-[A-Za-z0-9-]{10,}", MARKER),  # Slack
        (("AIza",), r"\bAIza[0-9A-Za-z_-]{30,}", MARKER),  # Google
        (("hf_",), r"\bhf_[A-Za-z0-9]{30,}", MARKER),  # Hugging Face
        (("gsk", "xai", "nvapi", "r8"), r"\b(?:gsk|xai|nvapi|r8)[_-][A-Za-z0-9_-]{20,}", MARKER),  # Groq, xAI, ...
        (("eyJ",), r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", MARKER),  # JWTs
    )
)
_TRIGGERS = tuple((i, t.lower()) for i, (triggers, _p, _r) in enumerate(_PATTERNS) for t in triggers)


def redact_known(text: str, extra: Iterable[str | SecretStr | None] = ()) -> str:
    """``text`` with every registered key (and each of ``extra``) replaced by :data:`MARKER`."""
    keys = _ordered
    more = [v for v in (_value(k) for k in extra) if v is not None]
    if more:
        keys = tuple(sorted(set(keys).union(more), key=len, reverse=True))
    for key in keys:
        if key in text:
            text = text.replace(key, MARKER)
    return text


def redact(text: str, *extra: str | SecretStr | None) -> str:
    """``text`` without known keys (the registry and ``extra``) and without key-looking strings."""
    if len(text) < MIN_KEY_LENGTH:
        return text
    text = redact_known(text, extra)
    lower = text.lower()
    for i in sorted({i for i, trigger in _TRIGGERS if trigger in lower}):
        _triggers, pattern, replacement = _PATTERNS[i]
        text = pattern.sub(replacement, text)
    return text


def contains_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``."""
    return redact(text) != text


def url_has_credentials(url: str) -> bool:
    """True when ``url`` carries a user name or password (``http://user:secret@host/v1``)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "@" in url
    return parts.username is not None or parts.password is not None or "@" in parts.netloc


URL_CREDENTIALS_REFUSED = ("a URL with credentials (user:password@host) is refused: they would be written to the "
                           "suite, records and logs, and sent to every request's log; give the URL without them "
                           "and the key in an environment variable named by api_key_env (the value is not shown)")
"""Why a URL with credentials is refused (the URL itself is never repeated)."""


def redact_value(value: Any, *, patterns: bool = True) -> Any:
    """A copy of JSON-like ``value`` (dicts, lists, tuples, strings) with every string redacted.

    ``patterns=False`` applies only the known keys (for benchmark content).
    """
    if isinstance(value, str):
        return redact(value) if patterns else redact_known(value)
    if isinstance(value, dict):
        return {k: redact_value(v, patterns=patterns) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, patterns=patterns) for v in value]
    if isinstance(value, tuple):
        return tuple(redact_value(v, patterns=patterns) for v in value)
    return value


def redact_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record with known keys redacted everywhere and key-looking strings redacted outside
    the benchmark content (:data:`CONTENT_FIELDS`). Returns ``record`` itself when nothing changed."""
    out = {k: redact_value(v, patterns=k not in CONTENT_FIELDS) for k, v in record.items()}
    return record if out == record else out


_KEY_NAME = re.compile(r"(?i)(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)")
"""Variable names that say they hold a secret."""


def environment_without_keys(environ: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment (default ``os.environ``) for a child process, without every variable
    that holds a key: a name such as ``*_API_KEY``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, or a
    value that :func:`redact` would change (a registered key, a key shape, a URL with a password)."""
    import os

    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if not _KEY_NAME.search(k) and redact(v) == v}


def redact_reply(reply: Reply, *extra: str | SecretStr | None) -> Reply:
    """``reply`` with known keys (the registry and ``extra``, e.g. the endpoint's own key) cut out of
    its text and logprob tokens, before anything (scorer, cache, record) sees it."""
    import dataclasses

    text = redact_known(reply.text, extra)
    logprobs = reply.logprobs
    if logprobs is not None and any(redact_known(t.token, extra) != t.token for t in logprobs):
        logprobs = tuple(dataclasses.replace(t, token=redact_known(t.token, extra)) for t in logprobs)
    calls = tuple(dataclasses.replace(c, arguments=redact_known(c.arguments, extra), name=redact_known(c.name, extra))
                  for c in reply.tool_calls)
    message = reply.message
    if message is not None:
        blob = json.dumps(message, ensure_ascii=False)
        if redact_known(blob, extra) != blob:
            message = {k: _redact_json(v, extra) for k, v in message.items()}
    if text == reply.text and logprobs is reply.logprobs and calls == reply.tool_calls and message is reply.message:
        return reply
    return dataclasses.replace(reply, text=text, logprobs=logprobs, tool_calls=calls, message=message)


def _redact_json(value: Any, extra: tuple[str | SecretStr | None, ...]) -> Any:
    """``value`` (JSON builtins) with known keys cut out of every string in it."""
    if isinstance(value, str):
        return redact_known(value, extra)
    if isinstance(value, dict):
        return {k: _redact_json(v, extra) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_json(v, extra) for v in value]
    return value
