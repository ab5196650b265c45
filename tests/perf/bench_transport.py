#!/usr/bin/env python
"""CPU per request of the openai client's transports, run by hand (pytest does not collect it).

    .venv/bin/python tests/perf/bench_transport.py                # 1,000 calls, 64 in flight, 3 repeats

Starts the fake OpenAI-compatible server (zero latency) on 127.0.0.1 and, each in a fresh
process, sends the same chat completions with ``AsyncOpenAI`` four ways: through
``chat.completions.create`` (pydantic parse of the reply) or through the client's
``post`` with the raw-response header and ``json.loads`` (what pytest-jeval does), each over
the default httpx transport and over openai's aiohttp one (``DefaultAioHttpClient``: what
``[run] http_client = "auto"`` picks). Prints the CPU time of the calls (``time.process_time``
around them, the client's start-up excluded) per call, and the wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time

MODES = ("create-httpx", "raw-httpx", "create-aiohttp", "raw-aiohttp")
RAW = {"headers": {"X-Stainless-Raw-Response": "true"}}


async def _calls(url: str, mode: str, n: int, concurrency: int) -> tuple[float, float]:
    from openai import AsyncOpenAI, DefaultAioHttpClient, DefaultAsyncHttpxClient

    http = DefaultAioHttpClient() if mode.endswith("aiohttp") else DefaultAsyncHttpxClient()
    client = AsyncOpenAI(base_url=url, api_key="bench", max_retries=2, timeout=60, http_client=http)
    slots = asyncio.Semaphore(concurrency)

    async def one(i: int) -> str:
        body = {"model": "test-model", "messages": [{"role": "user", "content": f"question {i}"}],
                "temperature": 0.0, "max_tokens": 64}
        async with slots:
            if mode.startswith("create"):
                reply = await client.chat.completions.create(**body)  # type: ignore[call-overload]
                return str(reply.choices[0].message.content)
            raw = await client.post("/chat/completions", body=body, cast_to=object, options=RAW)  # type: ignore[call-overload]
            return str(json.loads(raw.content)["choices"][0]["message"]["content"])

    await one(-1)  # connection and lazy imports out of the measurement
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    await client.close()
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--one":
        wall, cpu = asyncio.run(_calls(argv[1], argv[2], int(argv[3]), int(argv[4])))
        print(json.dumps({"wall": wall, "cpu": cpu}))
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    server = subprocess.Popen([sys.executable, "-m", "pytest_jeval.testing.openai_server", "--port", "0",
                               "--latency", "0", "--slots", str(args.concurrency)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[1]
        results: dict[str, list[tuple[float, float]]] = {m: [] for m in MODES}
        for _ in range(args.repeat):
            for mode in MODES:
                out = subprocess.run([sys.executable, __file__, "--one", url, mode, str(args.calls),
                                      str(args.concurrency)], capture_output=True, text=True, check=True).stdout
                got = json.loads(out.strip().splitlines()[-1])
                results[mode].append((got["wall"], got["cpu"]))
    finally:
        server.terminate()
        server.wait()
    print(f"# {args.calls} calls, {args.concurrency} in flight, zero-latency server, median of {args.repeat}")
    print("| client path | CPU per call (ms) | wall (s) |\n|---|---|---|")
    for mode in MODES:
        cpu = statistics.median(c for _w, c in results[mode]) / args.calls * 1000
        wall = statistics.median(w for w, _c in results[mode])
        print(f"| {mode} | {cpu:.2f} | {wall:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
