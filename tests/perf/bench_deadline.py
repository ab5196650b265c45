#!/usr/bin/env python
"""What the whole-attempt deadline costs per call, and how soon a trickling reply times out; run by hand.

Not part of the test suite. From the repository root::

    .venv/bin/python tests/perf/bench_deadline.py                 # 2,000 calls, 64 in flight, 3 repeats
    .venv/bin/python tests/perf/bench_deadline.py --calls 5000 --repeat 5

Against the test server (zero latency, in this process's background thread) it sends
``--calls`` chat completions through :func:`pytest_jeval.calls.engines.openai_compat.chat`
with ``--concurrency`` in flight, once with the endpoint's own client (each attempt
bounded by a deadline) and once with a plain ``AsyncOpenAI`` client, interleaved, and
prints the wall and CPU microseconds per call of each. Then it times one request whose
reply trickles a byte every 0.5 s (and one SSE stream that never ends) under
``request_timeout = 1``: the seconds until the timeout error.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from pydantic import SecretStr

from pytest_jeval.calls.engines.openai_compat import chat, make_client
from pytest_jeval.core.chat import ChatRequest, Endpoint, EndpointError
from pytest_jeval.testing.openai_server import Answer, FakeOpenAIServer


def _respond(body: dict[str, Any], attempt: int) -> Any:
    text = body["messages"][-1]["content"]
    if text == "trickle":
        return Answer("5", byte_interval=0.5)
    if text == "endless":
        return Answer("5", endless=True, byte_interval=0.2)
    return "OK"


async def _batch(endpoint: Endpoint, client: Any, calls: int, concurrency: int) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with semaphore:
            await chat(client, endpoint, ChatRequest(model="m", messages=[{"role": "user", "content": f"q{i}"}]))

    await asyncio.gather(*(one(i) for i in range(calls)))


def _timed(endpoint: Endpoint, plain: bool, calls: int, concurrency: int) -> tuple[float, float]:
    async def run() -> tuple[float, float]:
        if plain:
            from openai import AsyncOpenAI

            client = AsyncOpenAI(base_url=endpoint.base_url, api_key="x", timeout=endpoint.timeout,
                                 max_retries=endpoint.max_retries)
        else:
            client = make_client(endpoint)
        await _batch(endpoint, client, 50, concurrency)  # warm up connections
        wall, cpu = time.perf_counter(), time.process_time()
        await _batch(endpoint, client, calls, concurrency)
        out = (time.perf_counter() - wall, time.process_time() - cpu)
        await client.close()
        return out

    return asyncio.run(run())


def _time_to_error(endpoint: Endpoint, text: str, stream: bool) -> tuple[float, str]:
    async def run() -> tuple[float, str]:
        client = make_client(endpoint)
        started = time.perf_counter()
        try:
            await chat(client, endpoint, ChatRequest(model="m", messages=[{"role": "user", "content": text}],
                                                     stream=stream))
            message = "no error"
        except EndpointError as exc:
            message = str(exc)
        await client.close()
        return time.perf_counter() - started, message

    return asyncio.run(run())


def main() -> None:
    """Print the per-call cost and the time to a timeout error."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with FakeOpenAIServer(_respond) as server:
        endpoint = Endpoint(base_url=server.base_url, api_key=SecretStr("x"), timeout=30.0, max_retries=0)
        results: dict[str, list[tuple[float, float]]] = {"deadline": [], "plain": []}
        for _ in range(args.repeat):
            for name in results:
                results[name].append(_timed(endpoint, name == "plain", args.calls, args.concurrency))
        for name, runs in results.items():
            wall = min(w for w, _ in runs) / args.calls * 1e6
            cpu = min(c for _, c in runs) / args.calls * 1e6
            print(f"{name:9} best of {args.repeat}: {wall:7.1f} us wall/call, {cpu:7.1f} us CPU/call "
                  f"(client and server in one process)")
        short = Endpoint(base_url=server.base_url, api_key=SecretStr("x"), timeout=1.0, max_retries=0)
        for text, stream in (("trickle", False), ("trickle", True), ("endless", False), ("endless", True)):
            seconds, message = _time_to_error(short, text, stream)
            print(f"{text:8} stream={str(stream).lower():5} request_timeout=1: error after {seconds:.2f}s: {message}")


if __name__ == "__main__":
    main()
