#!/usr/bin/env python
"""Recording-proxy overhead: what an external agent pays per model turn and per episode, run by hand.

Not part of the test suite. From the repository root::

    .venv/bin/python tests/perf/bench_proxy.py                 # 300 turns, 20 process starts
    .venv/bin/python tests/perf/bench_proxy.py --turns 1000 --starts 50

Printed:

* per turn: the median and mean wall time of one non-streaming chat request from an
  ``openai`` client straight to the zero-latency fake server, and through the episode's
  recording proxy (proxy -> the plugin's call scheduler -> the server); the difference is
  the proxy's overhead per turn, and the proxy's own time (``overhead_seconds``) per turn;
* per episode: the time to start and reap ``/bin/true`` directly and inside the
  bubblewrap PID namespace the runner uses (when bubblewrap works here).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import threading
import time
from typing import Any

from pydantic import SecretStr


def _time_requests(base_url: str, key: str, turns: int) -> list[float]:
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key=key, max_retries=0)
    messages: Any = [{"role": "user", "content": "What is 6*7?"}]
    client.chat.completions.create(model="m", messages=messages)  # warm the connection
    out = []
    for _ in range(turns):
        started = time.perf_counter()
        client.chat.completions.create(model="m", messages=messages)
        out.append(time.perf_counter() - started)
    return out


def per_turn(turns: int) -> None:
    """Direct versus proxied request times."""
    from pytest_jeval.agents.external.proxy import RecordingProxy
    from pytest_jeval.agents.loop import Limits
    from pytest_jeval.calls.scheduler import CallScheduler
    from pytest_jeval.core.chat import ChatRequest, Endpoint
    from pytest_jeval.testing.openai_server import FakeOpenAIServer

    with FakeOpenAIServer(lambda body, attempt: "42", models=("m",)) as server:
        direct = _time_requests(server.base_url, "x", turns)
        scheduler = CallScheduler(cache=None)
        endpoint = Endpoint(base_url=server.base_url, api_key=SecretStr("x"), max_retries=0)

        async def forward(request: ChatRequest) -> Any:
            return await asyncio.wrap_future(scheduler.submit(endpoint, request))

        def build(messages: Any, options: dict[str, Any]) -> ChatRequest:
            return ChatRequest(model="m", messages=messages)

        proxy = RecordingProxy(model="m", limits=Limits(max_turns=turns + 10), forward=forward, build=build)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        base_url = asyncio.run_coroutine_threadsafe(proxy.start(), loop).result()
        try:
            proxied = _time_requests(base_url, proxy.key, turns)
        finally:
            asyncio.run_coroutine_threadsafe(proxy.stop(), loop).result()
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            scheduler.close()
    d_med, p_med = statistics.median(direct), statistics.median(proxied)
    print(f"per turn ({turns} requests, zero-latency server):")
    print(f"  direct:   median {d_med * 1e3:.2f} ms, mean {statistics.mean(direct) * 1e3:.2f} ms")
    print(f"  proxied:  median {p_med * 1e3:.2f} ms, mean {statistics.mean(proxied) * 1e3:.2f} ms")
    print(f"  overhead: {(p_med - d_med) * 1e3:.2f} ms per turn (median); proxy's own time "
          f"{proxy.overhead_seconds / (turns + 1) * 1e3:.2f} ms per turn")


def per_episode(starts: int) -> None:
    """Process start directly and in the agent's sandbox (bubblewrap, relay, uid and cgroup of its own)."""
    import tempfile

    from pytest_jeval.sandbox.confined import confine, confinement_problem
    from pytest_jeval.sandbox.files import private_base_dir

    def run(contained: bool) -> float:
        times = []
        for _ in range(starts):
            folder = tempfile.mkdtemp(dir=private_base_dir("/tmp"))
            os.chmod(folder, 0o711)
            started = time.perf_counter()
            if contained:
                with confine(["/bin/true"], workspace=folder, home=folder, socket_path=os.devnull) as box:
                    subprocess.run(box.argv, check=True, start_new_session=True, **box.popen)
            else:
                subprocess.run(["/bin/true"], check=True, start_new_session=True)
            times.append(time.perf_counter() - started)
            os.rmdir(folder)
        return statistics.median(times)

    print(f"per episode ({starts} starts of /bin/true):")
    print(f"  direct:      median {run(False) * 1e3:.2f} ms")
    problem = confinement_problem()
    if problem is None:
        print(f"  its sandbox: median {run(True) * 1e3:.2f} ms (bubblewrap, relay, uid and cgroup of its own)")
    else:
        print(f"  its sandbox: {problem}")


def main() -> None:
    """Parse the options and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--starts", type=int, default=20)
    args = parser.parse_args()
    per_turn(args.turns)
    per_episode(args.starts)


if __name__ == "__main__":
    main()
