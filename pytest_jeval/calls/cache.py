"""An on-disk, content-addressed cache of model replies.

Entries are keyed by :meth:`ChatRequest.cache_key` (endpoint, model, messages,
generation parameters and nonce) and written atomically, never through a link: a
fresh ``O_EXCL`` temporary file in the same directory, then a rename
(:func:`pytest_jeval.core.files.write_atomic`). A killed run never leaves a partial entry,
and concurrent writers (xdist workers) at worst write the same content twice.
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_jeval.core.chat import Reply, TokenLogprob, ToolCall
from pytest_jeval.core.files import make_dir, write_atomic

_FORMAT = 1


class ResponseCache:
    """Replies stored as ``<dir>/<key[:2]>/<key>.json``."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Reply | None:
        """The cached reply for ``key`` (marked ``cached=True``), or None."""
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            self.misses += 1
            return None
        except (OSError, ValueError):
            self.misses += 1  # unreadable entry: treat as absent, it will be rewritten
            return None
        if data.get("format") != _FORMAT:
            self.misses += 1
            return None
        self.hits += 1
        logprobs = data.get("logprobs")
        return Reply(
            text=data["text"],
            model=data["model"],
            prompt_tokens=data.get("prompt_tokens"),
            completion_tokens=data.get("completion_tokens"),
            latency_seconds=data.get("latency_seconds"),
            ttft=data.get("ttft"),
            finish_reason=data.get("finish_reason"),
            logprobs=None
            if logprobs is None
            else tuple(TokenLogprob(t, lp, tuple((a, b) for a, b in top)) for t, lp, top in logprobs),
            cached=True,
            tool_calls=tuple(ToolCall(i, n, a) for i, n, a in data.get("tool_calls") or ()),
            message=data.get("message"),
            system_fingerprint=data.get("system_fingerprint"),
        )

    def put(self, key: str, reply: Reply) -> None:
        """Store ``reply`` atomically under ``key``."""
        path = self._path(key)
        make_dir(path.parent, allow_link=False)
        data = {
            "format": _FORMAT,
            "text": reply.text,
            "model": reply.model,
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "latency_seconds": reply.latency_seconds,
            "ttft": reply.ttft,
            "finish_reason": reply.finish_reason,
            "logprobs": None
            if reply.logprobs is None
            else [[t.token, t.logprob, [list(a) for a in t.top]] for t in reply.logprobs],
        }
        if reply.tool_calls:
            data["tool_calls"] = [[c.id, c.name, c.arguments] for c in reply.tool_calls]
        if reply.message is not None:
            data["message"] = reply.message
        if reply.system_fingerprint is not None:
            data["system_fingerprint"] = reply.system_fingerprint
        # ASCII JSON: a reply holding a lone surrogate stores (and reads back) as it came
        write_atomic(path, json.dumps(data).encode("ascii"), durable=False)
