"""An OpenAI-compatible server for the bundled local model (llama-cpp-python), on 127.0.0.1.

Run as ``python -m pytest_jeval.calls.engines.local_server --model FILE.gguf``; it prints
``READY <base_url>`` once listening. The plugin starts one such process per run
(on the xdist controller), so the model is loaded once however many workers call it.

Identical requests give identical answers, and temperature-0 sampling is greedy.
The KV cache of a prompt's start is reused by the next request only at fixed
positions (:func:`boundary_at_or_below`): every prompt is evaluated in pieces that
end at those positions, so a reused piece holds exactly the numbers a fresh
evaluation of that request would compute. (llama.cpp's own prefix reuse, at
whatever token two prompts part, makes the batch split depend on the previous
request, and llama.cpp's numbers can depend on the batch split.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

#: Evaluation boundaries: every 8 tokens below 32 (a chat template's fixed start is reused
#: whole), every 32 below 512, then every 512 (fewer, larger batches further on).
_STEPS = ((32, 8), (512, 32))
_LAST_STEP = 512


def _step(position: int) -> int:
    return next((step for limit, step in _STEPS if position < limit), _LAST_STEP)


def boundary_at_or_below(n: int) -> int:
    """The last evaluation boundary at or before position ``n`` (0 is one)."""
    return n // _step(n) * _step(n)


def next_boundary(position: int) -> int:
    """The first evaluation boundary after ``position``: a prompt piece starting there ends there."""
    return (position // _step(position) + 1) * _step(position)


def reuse_point(cached: list[int], tokens: list[int]) -> int:
    """How many of ``tokens`` to take from the KV cache: a boundary within the common prefix.

    ``cached`` are the tokens whose cache entries were computed in whole pieces. At least
    one token is always evaluated again, since sampling needs its logits.
    """
    common = 0
    for a, b in zip(cached, tokens):
        if a != b:
            break
        common += 1
    return boundary_at_or_below(max(0, min(common, len(tokens) - 1, len(cached))))


_llama_class: Any | None = None


def reusing_llama() -> Any:
    """``llama_cpp.Llama`` evaluating prompts in boundary-aligned pieces, reusing whole pieces only."""
    global _llama_class
    if _llama_class is not None:
        return _llama_class
    from llama_cpp import Llama

    class ReusingLlama(Llama):
        """Llama whose prompt cache is reused at :func:`boundary_at_or_below` positions only."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.cached_prompt: list[int] = []
            self.reused_tokens = 0

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
            tokens = list(tokens)
            reuse = reuse_point(self.cached_prompt, tokens)
            self.cached_prompt = []
            self.reused_tokens = reuse
            self.n_tokens = reuse  # llama-cpp-python keeps the cache up to n_tokens, evaluates the rest
            inner = super().generate(tokens, *args, **kwargs)
            try:
                token = next(inner)
            except StopIteration:
                return
            # the prompt is evaluated: its whole pieces may serve the next request
            self.cached_prompt = tokens[:boundary_at_or_below(len(tokens))]
            while True:
                sent = yield token
                try:
                    token = inner.send(sent)
                except StopIteration:
                    return

        def eval(self, tokens: Any) -> None:
            tokens = list(tokens)
            start = 0
            while start < len(tokens):
                end = start + next_boundary(self.n_tokens) - self.n_tokens
                super().eval(tokens[start:end])
                start = end

    _llama_class = ReusingLlama
    return ReusingLlama


class LocalModel:
    """``llama_cpp.Llama`` behind a lock (llama.cpp contexts are not thread-safe).

    Prompt evaluation and generation use the same ``n_threads``.

    Two contexts share the weights file: a fast one, and one created on first use
    with ``logits_all=True`` for requests that ask for logprobs (computing logits
    for every prompt token makes generation several times slower).
    """

    def __init__(self, path: str, *, n_ctx: int = 2048, n_threads: int | None = None, name: str = "local") -> None:
        self.name = name
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, (os.cpu_count() or 2) // 2)
        self.llm = self._load(logits_all=False)
        self._with_logits: Any | None = None
        self.lock = threading.Lock()

    def _load(self, *, logits_all: bool) -> Any:
        Llama = reusing_llama()
        # n_threads_batch (the prompt's threads) would default to every core: on a shared or busy
        # machine llama.cpp's spinning threads then wait on each other, and prompt eval got 6x slower.
        return Llama(model_path=self.path, n_ctx=self.n_ctx, n_threads=self.n_threads,
                     n_threads_batch=self.n_threads, logits_all=logits_all, verbose=False, seed=0)

    def _context(self, logprobs: bool) -> Any:
        if not logprobs:
            return self.llm
        if self._with_logits is None:
            self._with_logits = self._load(logits_all=True)
        return self._with_logits

    @staticmethod
    def _kwargs(body: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "messages": body["messages"],
            "temperature": float(body.get("temperature") or 0.0),
            "max_tokens": int(body.get("max_tokens") or body.get("max_completion_tokens") or 256),
            "seed": int(body.get("seed") or 0),
        }
        for key in ("top_p", "stop", "presence_penalty", "frequency_penalty"):
            if body.get(key) is not None:
                kwargs[key] = body[key]
        if body.get("logprobs"):
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = int(body.get("top_logprobs") or 0)
        return kwargs

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """Run one chat completion and return it in the OpenAI response format."""
        kwargs = self._kwargs(body)
        with self.lock:
            llm = self._context(bool(kwargs.get("logprobs")))
            result: dict[str, Any] = llm.create_chat_completion(**kwargs)
        result["model"] = body.get("model") or self.name
        return result

    def stream(self, body: dict[str, Any], emit: Callable[[dict[str, Any] | None], None]) -> None:
        """Generate token by token, calling ``emit`` per chunk and ``emit(None)`` at the end.

        The last chunk carries ``usage``: completion tokens are the content
        chunks, prompt tokens the rest of the evaluated context.
        """
        kwargs = self._kwargs(body)
        kwargs.pop("logprobs", None)
        kwargs.pop("top_logprobs", None)
        try:
            with self.lock:
                generated = 0
                last: dict[str, Any] = {}
                for chunk in self.llm.create_chat_completion(stream=True, **kwargs):
                    chunk = dict(chunk)
                    chunk["model"] = body.get("model") or self.name
                    if chunk["choices"] and chunk["choices"][0].get("delta", {}).get("content"):
                        generated += 1
                    last = chunk
                    emit(chunk)
                prompt = max(int(self.llm.n_tokens) - generated, 0)
            usage = {"prompt_tokens": prompt, "completion_tokens": generated, "total_tokens": prompt + generated}
            emit({**last, "choices": [], "usage": usage})
        finally:
            emit(None)


def _jsonable(value: Any) -> Any:
    """``json.dumps`` fallback: llama-cpp returns numpy floats in logprobs."""
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _dumps(value: Any) -> str:
    return json.dumps(value, default=_jsonable)


def make_app(model: LocalModel) -> Any:
    """The aiohttp application serving ``/v1/models`` and ``/v1/chat/completions``."""
    from aiohttp import web

    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama")

    async def models(_request: web.Request) -> web.Response:
        entry = {"id": model.name, "object": "model", "owned_by": "local"}
        return web.json_response({"object": "list", "data": [entry]})

    async def chat(request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
            if not isinstance(body.get("messages"), list):
                raise ValueError("messages must be a list")
        except ValueError as exc:
            return web.json_response({"error": {"message": str(exc), "type": "invalid_request_error"}}, status=400)
        loop = asyncio.get_running_loop()
        if not body.get("stream"):
            try:
                result = await loop.run_in_executor(executor, model.complete, body)
            except Exception as exc:  # report model errors as 500s; the server stays up
                return web.json_response(
                    {"error": {"message": f"{type(exc).__name__}: {exc}", "type": "server_error"}}, status=500
                )
            return web.json_response(result, dumps=_dumps)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

        def emit(chunk: dict[str, Any] | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, chunk)

        producer = loop.run_in_executor(executor, model.stream, body, emit)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        while (chunk := await queue.get()) is not None:
            if chunk.get("usage") is not None and not include_usage:
                continue
            await resp.write(f"data: {_dumps(chunk)}\n\n".encode())
        await producer
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    app.on_cleanup.append(lambda _app: asyncio.get_running_loop().run_in_executor(None, executor.shutdown))
    return app


async def _serve(model: LocalModel, host: str, port: int) -> None:
    from aiohttp import web

    runner = web.AppRunner(make_app(model), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    addresses = runner.addresses
    bound = addresses[0][1] if addresses else port
    print(f"READY http://{host}:{bound}/v1", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="path of a GGUF file")
    parser.add_argument("--name", default="local", help="model id reported by /v1/models")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--n-ctx", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    model = LocalModel(args.model, n_ctx=args.n_ctx, n_threads=args.threads, name=args.name)
    print(f"loaded {args.model} in {time.perf_counter() - started:.2f}s", file=sys.stderr, flush=True)
    try:
        asyncio.run(_serve(model, args.host, args.port))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
