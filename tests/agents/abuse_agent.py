"""An agent CLI that abuses its recording proxy, for the proxy tests (standard library only).

``python abuse_agent.py --mode MODE`` sends its requests to ``OPENAI_BASE_URL`` with
``OPENAI_API_KEY`` and prints one JSON line: the HTTP status (and error code) of each.

==========  ==============================================================================
``params``  one request asking for ``max_tokens = 999999``, ``n = 3``, ``logit_bias``,
            ``temperature = 1.7``, ``top_p``, ``seed`` and a penalty
``deep``    a 1 MB body nested 500,000 deep
``giant``   a 31 MiB body
``flood``   3,000 invalid requests (``{"messages": 5}``)
``parallel``  eight requests at once
==========  ==============================================================================
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import threading
import urllib.parse
from typing import Any


def post(body: bytes) -> list[Any]:
    """``[status, error code]`` of one POST to the proxy's chat completions."""
    url = urllib.parse.urlsplit(os.environ["OPENAI_BASE_URL"])
    conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port or 80, timeout=60)
    try:
        conn.request("POST", url.path.rstrip("/") + "/chat/completions", body=body,
                     headers={"Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}",
                              "Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
    except OSError as exc:
        return [0, type(exc).__name__]
    finally:
        conn.close()
    try:
        code = json.loads(data).get("error", {}).get("code")
    except (ValueError, AttributeError):
        code = None
    return [response.status, code]


def chat(**extra: Any) -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": "What is 6*7?"}], **extra}).encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", required=True)
    parser.add_argument("--prompt-file")
    mode = parser.parse_args().mode
    statuses: list[list[Any]] = []
    if mode == "params":
        statuses.append(post(chat(max_tokens=999_999, n=3, logit_bias={"50256": 100}, temperature=1.7, top_p=0.1,
                                  seed=7, presence_penalty=2.0)))
    elif mode == "deep":
        depth = 500_000
        statuses.append(post(b'{"model": "m", "messages": ' + b"[" * depth + b"]" * depth + b"}"))
    elif mode == "giant":
        statuses.append(post(chat(padding="x" * (31 * 1024 * 1024))))
    elif mode == "flood":
        for _ in range(3000):
            statuses.append(post(b'{"messages": 5}'))
    elif mode == "parallel":
        out: list[list[Any]] = [[] for _ in range(8)]

        def one(i: int) -> None:
            out[i] = post(chat())

        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        statuses = out
    print(json.dumps(statuses))


if __name__ == "__main__":
    main()
