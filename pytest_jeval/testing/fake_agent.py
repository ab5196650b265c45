"""A small agent CLI for testing the external backends: it talks to ``OPENAI_BASE_URL`` with tool calls.

``python <this file> --prompt-file F [--mode MODE] [--stream]`` (run it as a script: an external agent's sandbox
shows this one file, not the package)

It reads the prompt from ``F``, offers one tool, ``calculator`` (arithmetic on numbers; with ``--bash``
also ``bash``: one ``bash -c`` command line in its working directory, as a terminal agent's shell),
runs every call the model makes, sends the results back and loops until the model
answers without tool calls; it prints that answer. ``--mode`` makes it misbehave:

============  ===================================================================
``normal``    the loop above (the default)
``hang``      one model turn, then sleeps forever
``exit1``     writes to stderr and exits with status 1
``garbage``   prints junk instead of an answer (no model call)
``flood``     writes ``--flood-mb`` MiB to stdout, then runs the loop
``daemon``    forks a daemon that leaves the session, keeps stdout and stderr open and
              sleeps (``--marker`` in its command line), then runs the loop and exits
``escape``    tries to write ``--escape-to`` (a path outside its workspace); exits 1 when it cannot,
              prints ``escaped`` when it could
``steal``     looks for a key everywhere it can read (its environment, ``/proc/<parent>/environ``,
              every ``/proc/*/environ`` and ``/proc/*/cmdline``, the files of its home and
              workspace) and prints what it found: each token whose SHA-256 is
              ``--needle-sha256``, and the count (``steal: found=N``)
============  ===================================================================
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import operator
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

MODES = ("normal", "hang", "exit1", "garbage", "flood", "daemon", "steal", "escape")

CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression (numbers, + - * / ** and parentheses).",
        "parameters": {"type": "object", "properties": {"expression": {"type": "string"}},
                       "required": ["expression"]},
    },
}

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run one command line with bash -c in the working directory; its exit status and output.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    },
}
TOOLS: list[dict[str, Any]] = [CALCULATOR]

_OPS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow, ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Mod: operator.mod,
    ast.FloorDiv: operator.floordiv,
}


def calculate(expression: str) -> str:
    """The value of an arithmetic expression, or ``Error: ...``."""
    def value(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.operand))
        raise ValueError(f"unsupported expression: {ast.dump(node)[:60]}")

    try:
        result = value(ast.parse(expression, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError) as exc:
        return f"Error: {exc}"
    return str(int(result)) if isinstance(result, float) and result.is_integer() else str(result)


def _call(client: Any, model: str, messages: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    """One model turn; the assistant message as a dict."""
    if not stream:
        reply = client.chat.completions.create(model=model, messages=messages, tools=TOOLS)
        msg = reply.choices[0].message
        out: dict[str, Any] = {"role": "assistant", "content": msg.content}
        if msg.tool_calls:
            out["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.function.name, "arguments": c.function.arguments}}
                                 for c in msg.tool_calls]
        return out
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in client.chat.completions.create(model=model, messages=messages, tools=TOOLS, stream=True,
                                                stream_options={"include_usage": True}):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            content.append(delta.content)
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": "", "type": "function",
                                               "function": {"name": "", "arguments": ""}})
            if tc.id:
                slot["id"] = tc.id
            if tc.function is not None:
                slot["function"]["name"] += tc.function.name or ""
                slot["function"]["arguments"] += tc.function.arguments or ""
    out = {"role": "assistant", "content": "".join(content) or None}
    if calls:
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


def run_loop(prompt: str, *, stream: bool, max_steps: int, hang_after_first: bool = False) -> str:
    """The agent loop; the final answer."""
    from openai import OpenAI

    client = OpenAI(max_retries=0)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
    model = os.environ.get("JEVAL_MODEL", "model")
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(max_steps):
        message = _call(client, model, messages, stream)
        messages.append(message)
        if hang_after_first:
            while True:
                time.sleep(3600)
        if not message.get("tool_calls"):
            return str(message.get("content") or "")
        for call in message["tool_calls"]:
            fn = call["function"]
            try:
                args = json.loads(fn["arguments"] or "{}")
                if fn["name"] == "calculator":
                    result = calculate(str(args.get("expression", "")))
                elif fn["name"] == "bash" and BASH in TOOLS:
                    result = run_bash(str(args.get("command", "")))
                else:
                    result = f"Error: unknown tool {fn['name']!r}"
            except (ValueError, AttributeError) as exc:
                result = f"Error: bad arguments ({exc})"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return "gave up"


def run_bash(command: str) -> str:
    """``bash -c command`` in the working directory (the task's): its exit status and output."""
    import subprocess

    try:
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Error: {exc}"
    return f"exit status: {done.returncode}\nstdout:\n{done.stdout[-8000:]}\nstderr:\n{done.stderr[-8000:]}"


def start_daemon(marker: str) -> None:
    """Fork a process that leaves the session (double fork, setsid) and sleeps with ``marker`` in its argv;
    it keeps the agent's stdout and stderr open."""
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    os.execv(sys.executable, [sys.executable, "-c", "import time\nwhile True: time.sleep(60)",
                              "fake-agent-daemon", marker])


def _tokens(data: bytes) -> Iterator[bytes]:
    yield from (t for t in re.split(rb"[\x00\s=\"':,;]+", data) if t)


def _readable_sources() -> Iterator[tuple[str, bytes]]:
    yield "os.environ", "\0".join(f"{k}={v}" for k, v in os.environ.items()).encode()
    for name in (f"/proc/{os.getppid()}/environ", "/proc/self/environ"):
        yield from _read(name)
    for entry in sorted(os.listdir("/proc")):
        if entry.isdigit():
            yield from _read(f"/proc/{entry}/environ")
            yield from _read(f"/proc/{entry}/cmdline")
    for root in {Path.home(), Path.cwd()}:
        for path in root.rglob("*"):
            if path.is_file() and path.stat().st_size < 1 << 20:
                yield from _read(str(path))


def _read(name: str) -> Iterator[tuple[str, bytes]]:
    try:
        with open(name, "rb") as fh:
            yield name, fh.read()
    except OSError:
        return


def steal(needle_sha256: str) -> str:
    """Look for the key everywhere; what was found, one line per find, and the count."""
    sources = 0
    found: list[str] = []
    for name, data in _readable_sources():
        sources += 1
        for token in _tokens(data):
            if hashlib.sha256(token).hexdigest() == needle_sha256:
                found.append(f"{name}: {token.decode('utf-8', 'replace')}")
    return "\n".join([*found, f"steal: sources={sources} found={len(found)}"])


def main(argv: list[str] | None = None) -> int:
    """The CLI."""
    parser = argparse.ArgumentParser(prog="fake_agent", description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--prompt-file", required=True)
    parser.add_argument("--mode", choices=MODES, default="normal")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--flood-mb", type=float, default=4.0)
    parser.add_argument("--marker", default="fake-agent-marker")
    parser.add_argument("--needle-sha256", default="")
    parser.add_argument("--escape-to", default="")
    parser.add_argument("--bash", action="store_true", help="offer a bash tool too (terminal tasks)")
    args = parser.parse_args(argv)
    if args.bash:
        TOOLS.append(BASH)
    prompt = Path(args.prompt_file).read_text(encoding="utf-8")
    mode = args.mode
    if mode == "exit1":
        print("fake agent: failing on purpose", file=sys.stderr)
        return 1
    if mode == "garbage":
        print("\x1b[31m%%%% <<junk>> \ufffd\x07 0xDEADBEEF ;;; not an answer\x1b[0m")
        return 0
    if mode == "steal":
        print(steal(args.needle_sha256))
        return 0
    if mode == "escape":
        try:
            Path(args.escape_to).write_text("written from inside the agent\n", encoding="utf-8")
        except OSError as exc:
            print(f"fake agent: cannot write {args.escape_to}: {exc}", file=sys.stderr)
            return 1
        print("escaped")
        return 0
    if mode == "flood":
        line = b"flood " * 170 + b"\n"
        for _ in range(int(args.flood_mb * (1 << 20) / len(line))):
            sys.stdout.buffer.write(line)
        sys.stdout.flush()
    if mode == "daemon":
        start_daemon(args.marker)
    answer = run_loop(prompt, stream=args.stream, max_steps=args.max_steps, hang_after_first=mode == "hang")
    print(answer)
    return 0


if __name__ == "__main__":
    sys.exit(main())
