"""Time-bounded symbolic equivalence, computed in worker processes that can be killed.

Why a separate process: SymPy work on hostile input (``9^{9^{9^9}}``) can run for
ever, and math-verify's own timeout is ``signal.alarm``-based - it only works in
the main thread, and no signal interrupts a long C-level big-integer operation.
The scorer may run in worker threads, so each comparison is sent to a small pool
of long-lived worker processes (``_symbolic_worker.py``); a worker that does not
answer within the deadline is killed and replaced. Results are cached.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from typing import Any, Literal

WORKER_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_symbolic_worker.py")
WORKER_MEMORY_BYTES = 2 * 1024**3
MAX_INPUT_CHARS = 2000
CACHE_SIZE = 8192
STARTUP_TIMEOUT = 60.0

Outcome = Literal["equal", "different", "timeout", "error", "unavailable"]


def _limit_memory() -> None:  # preexec_fn: only setrlimit
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    except (ImportError, ValueError, OSError):  # pragma: no cover
        pass


class _Worker:
    """One worker process speaking JSON lines over pipes."""

    def __init__(self) -> None:
        from pytest_jeval.core.redact import environment_without_keys

        self.proc = subprocess.Popen(
            [sys.executable, WORKER_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=0, close_fds=True, start_new_session=True,
            preexec_fn=_limit_memory if os.name == "posix" else None, env=environment_without_keys())
        self.buffer = b""

    def _read_line(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line from the worker, or None at the deadline or if it died."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except ValueError:
            return {"equal": None, "error": "garbled reply"}
        return reply if isinstance(reply, dict) else {"equal": None, "error": "garbled reply"}

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> dict[str, Any] | None:
        """The worker's start-up line (it imports SymPy and math-verify first)."""
        return self._read_line(time.monotonic() + timeout)

    def ask(self, pred: str, gold: str, timeout: float) -> dict[str, Any] | None:
        """Send one request; the reply, or None when the deadline passed (caller kills us)."""
        assert self.proc.stdin is not None
        inner = max(1, int(timeout / 3))  # parse gold, parse pred, verify
        line = json.dumps({"pred": pred, "gold": gold, "timeout": inner}) + "\n"
        try:
            self.proc.stdin.write(line.encode("utf-8"))
        except OSError:
            return None
        return self._read_line(time.monotonic() + timeout)

    def close(self) -> None:
        """Kill and reap the process."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


class _Pool:
    def __init__(self, max_workers: int) -> None:
        self.lock = threading.Lock()
        self.slots = threading.BoundedSemaphore(max_workers)
        self.idle: list[_Worker] = []
        self.available = True
        self.cache: OrderedDict[tuple[str, str], Outcome] = OrderedDict()

    def compare(self, pred: str, gold: str, timeout: float) -> Outcome:
        key = (pred, gold)
        with self.lock:
            if key in self.cache:
                self.cache.move_to_end(key)
                return self.cache[key]
        if not self.available:
            return "unavailable"
        with self.slots:
            outcome = self._compare_in_worker(pred, gold, timeout)
        if outcome != "unavailable":
            with self.lock:
                self.cache[key] = outcome
                while len(self.cache) > CACHE_SIZE:
                    self.cache.popitem(last=False)
        return outcome

    def _compare_in_worker(self, pred: str, gold: str, timeout: float) -> Outcome:
        with self.lock:
            worker = self.idle.pop() if self.idle else None
        if worker is None:
            try:
                worker = _Worker()
            except OSError:
                self.available = False
                return "unavailable"
            ready = worker.wait_ready()
            if ready is None or not ready.get("ready"):
                worker.close()
                self.available = False
                return "unavailable"
        reply = worker.ask(pred, gold, timeout)
        if reply is None:
            worker.close()  # stuck (or dead): kill it, a fresh one starts next time
            return "timeout"
        with self.lock:
            self.idle.append(worker)
        return self._outcome(reply)

    @staticmethod
    def _outcome(reply: dict[str, Any]) -> Outcome:
        if reply.get("equal") is None:
            return "error"
        return "equal" if reply["equal"] else "different"

    def shutdown(self) -> None:
        with self.lock:
            workers, self.idle = self.idle, []
        for worker in workers:
            worker.close()


_pool = _Pool(max(1, os.cpu_count() or 1))
atexit.register(_pool.shutdown)


def symbolic_compare(pred: str, gold: str, timeout: float = 10.0) -> Outcome:
    """Compare two LaTeX answers with math-verify in a worker process, within ``timeout`` seconds.

    Returns ``"equal"``, ``"different"``, ``"timeout"`` (worker killed),
    ``"error"`` (could not parse/compare) or ``"unavailable"`` (math-verify missing).
    """
    if len(pred) > MAX_INPUT_CHARS or len(gold) > MAX_INPUT_CHARS:
        return "error"
    return _pool.compare(pred, gold, timeout)
