"""Model calls in a helper process, so the HTTP client gets a CPU core and a GIL of its own.

With the calls on a thread of the pytest process (:class:`CallScheduler`), pytest's
per-item work and the client's per-request work share one GIL: at dozens of requests
in flight the client, not the endpoint, becomes the limit. :class:`ProcessCallScheduler`
keeps the same interface but runs the :class:`CallCore` in a child interpreter
(``python -m pytest_jeval.calls.callproc FD``), one per pytest process.

The two talk over a socket pair with :class:`multiprocessing.connection.Connection`
framing (pickles): the parent sends ``("submit", [(id, endpoint, request, use_cache), ...])``,
``("check", id, [endpoint, ...])`` (the session-start endpoint check) and ``("close",)``; the
child answers calls with ``("done", [(id, reply, error), ...], stats)``: the calls that finished
in one pass of its event loop go in one message (one pickle of the counters, one write, one
wake-up of the parent's reader instead of one per call), and a check with
``("checked", id, [EndpointCheck, ...])``.
The suite's API keys travel only over that socket: they are never put in the child's
command line or environment, which holds only :data:`HELPER_ENV_VARS` (see
:func:`helper_environment`).

If the child dies, its unanswered calls are sent again from a thread of the pytest
process, as after a dropped connection, and so are all later calls: the run goes on
and loses nothing (replies the child had cached are not asked for again).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import itertools
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pytest_jeval.calls.budget import BudgetSpec
from pytest_jeval.calls.cache import ResponseCache
from pytest_jeval.calls.engines import EndpointCheck
from pytest_jeval.calls.scheduler import Call, CallCore, CallScheduler, SchedulerStats
from pytest_jeval.core.chat import ChatRequest, Endpoint, EndpointError, Reply

#: A call sent to the child and not answered yet: its future, and what to resend.
_Pending = tuple["concurrent.futures.Future[Reply]", Endpoint, ChatRequest, bool]

#: How long close() waits for the child to finish its goodbyes before killing it.
_CLOSE_TIMEOUT = 10.0
#: How long :meth:`ProcessCallScheduler.check_endpoints` waits for the helper's verdicts (each
#: check has a 10 s limit of its own) before the caller checks the endpoints itself.
_CHECK_TIMEOUT = 60.0


class ProcessCallScheduler:
    """A :class:`~pytest_jeval.calls.scheduler.Scheduler` whose event loop runs in a child process."""

    def __init__(self, cache_dir: Path | None = None, budget: BudgetSpec | None = None) -> None:
        self.cache_dir = cache_dir
        self.budget = budget
        """The run budget the helper (and any fallback) checks calls against."""
        self._child_stats = SchedulerStats()
        self._submitted = 0
        self._exits = 0
        self._pending: dict[int, _Pending] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._reader: threading.Thread | None = None
        self._fallback: CallScheduler | None = None
        self._closing = False
        self._errors: tuple[str, ...] = ()
        self._stderr: Any | None = None
        self._checks: dict[int, concurrent.futures.Future[list[EndpointCheck] | None]] = {}

    # -- the child ----------------------------------------------------------------------
    def _start(self) -> None:
        import pytest_jeval

        parent_sock, child_sock = socket.socketpair()
        package_root = str(Path(pytest_jeval.__file__).resolve().parents[1])
        env, piped_env = helper_environment(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        # -P: do not put the current directory first on sys.path (Python >= 3.11)
        flags = ["-P"] if sys.version_info >= (3, 11) else []
        # stderr goes to a file of its own: pytest captures this process's stderr per test,
        # and a long-lived child's warnings would land in whichever test runs at the time
        self._stderr = tempfile.TemporaryFile()
        try:
            with child_sock:
                self._proc = subprocess.Popen(
                    [sys.executable, *flags, "-m", "pytest_jeval.calls.callproc", str(child_sock.fileno())],
                    pass_fds=(child_sock.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=self._stderr, env=env,
                )
        except BaseException:
            parent_sock.close()
            self._stderr.close()
            self._stderr = None
            raise
        conn = Connection(parent_sock.detach())
        conn.send(("init", None if self.cache_dir is None else str(self.cache_dir), piped_env, self.budget))
        self._conn = conn
        self._reader = threading.Thread(target=self._read, args=(conn,), name="jeval-calls-reader", daemon=True)
        self._reader.start()

    def _read(self, conn: Connection) -> None:
        """Resolve futures as the child's answers arrive; on EOF, hand what is left to a thread."""
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "checked":
                with self._lock:
                    check = self._checks.pop(message[1], None)
                if check is not None:
                    check.set_result(message[2])
                continue
            _kind, answers, stats = message
            self._child_stats = stats
            with self._lock:
                settled = [(self._pending.pop(call_no, None), reply, error) for call_no, reply, error in answers]
            for pending, reply, error in settled:
                if pending is None or pending[0].done():
                    continue
                if error is None:
                    pending[0].set_result(reply)
                else:
                    pending[0].set_exception(error)
        self._child_gone()

    def _child_gone(self) -> None:
        """The child died (not closed by us): resend its unanswered calls from a thread of this process."""
        with self._lock:
            if self._closing or self._conn is None:
                return
            pending, self._pending = self._pending, {}
            checks, self._checks = self._checks, {}
            self._exits += 1
            self._conn = None
            self._child_stats = dataclasses.replace(self._child_stats, in_flight=0)
        for check in checks.values():  # the caller checks the endpoints itself
            check.set_result(None)
        if self._proc is not None:
            status = self._proc.wait()
            self._errors += (f"exit status {status}{self._stderr_tail()}",)
        self._resend(pending.values())

    def _resend(self, entries: Iterable[_Pending]) -> None:
        """Send calls the child will never answer from a thread of this process instead."""
        with self._lock:
            self._fallback = fallback = self._fallback or self._thread_scheduler()
        for future, endpoint, request, use_cache in entries:
            if not future.done():
                _chain(fallback.submit(endpoint, request, use_cache=use_cache), future)

    def _thread_scheduler(self) -> CallScheduler:
        """Where calls go once there is no helper process."""
        return CallScheduler(ResponseCache(self.cache_dir) if self.cache_dir else None, self.budget)

    def _stderr_tail(self, limit: int = 2000) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - limit))
        text = self._stderr.read().decode("utf-8", "replace").strip()
        from pytest_jeval.core.redact import redact

        return f": {redact(text)}" if text else ""

    # -- the scheduler interface -------------------------------------------------------------
    @property
    def stats(self) -> SchedulerStats:
        """The child's counters (as of its last answer), plus any fallback's."""
        stats = dataclasses.replace(self._child_stats, submitted=self._submitted, call_process_exits=self._exits,
                                    call_processes=int(self._proc is not None),
                                    call_process_errors=self._errors)
        if self._fallback is not None:
            stats = stats.merged(self._fallback.stats)
            stats.submitted = self._submitted  # resent calls are not new ones
        return stats

    def submit(
        self, endpoint: Endpoint, request: ChatRequest, *, use_cache: bool = True
    ) -> concurrent.futures.Future[Reply]:
        """Schedule one call; the future resolves to a Reply or raises EndpointError."""
        return self.submit_many([(endpoint, request)], use_cache=use_cache)[0]

    def start(self) -> None:
        """Start the helper now (it takes about a second to import ``openai``), not at the first call."""
        with self._lock:
            if self._fallback is None and self._conn is None and self._proc is None:
                try:
                    self._start()
                except (OSError, ValueError) as exc:  # ValueError: no pass_fds (not POSIX)
                    self._errors += (f"could not start: {exc}",)
                    self._fallback = self._thread_scheduler()

    def submit_many(self, calls: Sequence[Call], *, use_cache: bool = True) -> list[concurrent.futures.Future[Reply]]:
        """Send several calls to the child in one message; the futures come back in order."""
        if not calls:
            return []
        self._submitted += len(calls)
        futures: list[concurrent.futures.Future[Reply]] = []
        batch = []
        self.start()  # no helper at all: calls run on a thread instead
        with self._lock:
            fallback, conn = self._fallback, self._conn
            if fallback is None and conn is not None:
                for endpoint, request in calls:
                    call_no = next(self._ids)
                    future: concurrent.futures.Future[Reply] = concurrent.futures.Future()
                    self._pending[call_no] = (future, endpoint, request, use_cache)
                    futures.append(future)
                    batch.append((call_no, endpoint, request, use_cache))
        if fallback is not None:
            return fallback.submit_many(calls, use_cache=use_cache)
        if conn is None:
            raise RuntimeError("ProcessCallScheduler.submit_many() after close()")
        try:
            conn.send(("submit", batch))
        except (OSError, ValueError):  # the child is gone, and the reader may not have noticed yet
            self._child_gone()
            with self._lock:  # what _child_gone did not take (the reader got there first)
                orphans = [self._pending.pop(no) for no, *_ in batch if no in self._pending]
            self._resend(orphans)
        return futures

    def call(self, endpoint: Endpoint, request: ChatRequest, *, use_cache: bool = True) -> Reply:
        """Blocking form of :meth:`submit`."""
        return self.submit(endpoint, request, use_cache=use_cache).result()

    def check_endpoints(self, endpoints: Sequence[Endpoint]) -> list[EndpointCheck] | None:
        """:func:`~pytest_jeval.calls.scheduler.check_endpoints` run by the helper, or None when
        there is no helper (then the caller checks them itself).

        The helper imported ``openai`` while this process loaded the data, so the check costs
        this process no import and the endpoints are checked on the connections the calls use.
        """
        check: concurrent.futures.Future[list[EndpointCheck] | None] = concurrent.futures.Future()
        with self._lock:
            conn = self._conn if self._fallback is None and not self._closing else None
            if conn is None:
                return None
            token = next(self._ids)
            self._checks[token] = check
        try:
            conn.send(("check", token, list(endpoints)))
        except (OSError, ValueError):
            return None
        try:
            return check.result(timeout=_CHECK_TIMEOUT)
        except concurrent.futures.TimeoutError:
            with self._lock:
                self._checks.pop(token, None)
            return None

    @property
    def pid(self) -> int | None:
        """The child's process id, once started."""
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """Cancel pending calls, ask the child to close its clients, and reap it."""
        with self._lock:
            self._closing = True
            pending, self._pending = self._pending, {}
            conn = self._conn
        for future, *_call in pending.values():
            future.cancel()
        if conn is not None:
            try:
                conn.send(("close",))
            except (OSError, ValueError):
                pass
        if self._proc is not None:
            try:
                self._proc.wait(timeout=_CLOSE_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=_CLOSE_TIMEOUT)
        if conn is not None:
            conn.close()
        self._conn = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._fallback is not None:
            self._fallback.close()


#: Variables the helper gets in its environment: what Python, the ``openai`` client and
#: httpx read (paths, locale, certificates, proxies, ``OPENAI_BASE_URL``), nothing else.
HELPER_ENV_VARS = frozenset({
    "PATH", "HOME", "TMPDIR", "TEMP", "TMP", "TZ", "LANG", "LANGUAGE", "SYSTEMROOT", "LD_LIBRARY_PATH",
    "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONUTF8", "PYTHONIOENCODING", "PYTHONWARNINGS",
    "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONDEVMODE", "PYTHONFAULTHANDLER",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NETRC",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
    "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
})
#: ... and the variables starting with these (locale; pytest-cov's subprocess coverage).
HELPER_ENV_PREFIXES = ("LC_", "COV_CORE_")


def helper_environment(environ: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Split what the helper may know of ``environ`` into (its environment, what goes over its socket).

    Only :data:`HELPER_ENV_VARS` and :data:`HELPER_ENV_PREFIXES` pass; API keys and every
    other variable stay behind. A passed value that holds a secret (a proxy URL with a
    password, a registered key: see :func:`pytest_jeval.core.redact.contains_secret`) is sent
    over the socket instead, and set in the helper after it started.
    """
    from pytest_jeval.core.redact import contains_secret

    env: dict[str, str] = {}
    piped: dict[str, str] = {}
    for name, value in environ.items():
        if name in HELPER_ENV_VARS or name.startswith(HELPER_ENV_PREFIXES):
            (piped if contains_secret(value) else env)[name] = value
    return env, piped


def _chain(source: concurrent.futures.Future[Reply], target: concurrent.futures.Future[Reply]) -> None:
    """Settle ``target`` the way ``source`` settles."""

    def copy(done: concurrent.futures.Future[Reply]) -> None:
        if target.done():
            return
        if done.cancelled():
            target.cancel()
        elif done.exception() is not None:
            target.set_exception(done.exception())
        else:
            target.set_result(done.result())

    source.add_done_callback(copy)


# -- the child's side ---------------------------------------------------------------------------

async def _serve(conn: Connection, cache_dir: str | None, budget: BudgetSpec | None = None) -> None:
    core = CallCore(ResponseCache(Path(cache_dir)) if cache_dir else None, budget)
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()
    tasks: set[asyncio.Task[None]] = set()
    outbox: list[tuple[int, Reply | None, BaseException | None]] = []

    def flush() -> None:
        """Send the answers gathered since the last flush, in one message."""
        answers = outbox[:]
        outbox.clear()
        try:
            conn.send(("done", answers, core.stats))
        except (OSError, ValueError):
            if not stop.done():
                stop.set_result(None)

    async def check(token: int, endpoints: list[Endpoint]) -> None:
        from pytest_jeval.calls.scheduler import check_endpoints

        try:
            reasons: list[EndpointCheck] | None = await check_endpoints(endpoints)
        except Exception:  # the parent checks them itself
            reasons = None
        try:
            conn.send(("checked", token, reasons))
        except (OSError, ValueError):
            if not stop.done():
                stop.set_result(None)

    async def one(call_no: int, endpoint: Endpoint, request: ChatRequest, use_cache: bool) -> None:
        reply: Reply | None = None
        error: BaseException | None = None
        try:
            reply = await core.call(endpoint, request, use_cache)
        except EndpointError as exc:
            error = exc
        except Exception as exc:  # anything else reaches the item as an error, as in-process
            error = EndpointError(f"{type(exc).__name__}: {exc}")
        if not outbox:  # the first answer of this pass: flush once the loop has run what is ready
            loop.call_soon(flush)
        outbox.append((call_no, reply, error))

    def readable() -> None:
        try:
            while conn.poll():
                message: Any = conn.recv()
                if message[0] == "close":
                    raise EOFError
                if message[0] == "check":
                    task = loop.create_task(check(message[1], message[2]))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
                    continue
                for call_no, endpoint, request, use_cache in message[1]:
                    task = loop.create_task(one(call_no, endpoint, request, use_cache))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
        except (EOFError, OSError):
            loop.remove_reader(conn.fileno())
            if not stop.done():
                stop.set_result(None)

    loop.add_reader(conn.fileno(), readable)
    await stop
    for task in list(tasks):
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await core.aclose()


def _import_client() -> None:
    """Import the ``openai`` client and its HTTP transports now, while the parent loads the data."""
    import openai  # noqa: F401

    from pytest_jeval.calls.engines.openai_compat import _http_module, aiohttp_available

    _http_module()
    aiohttp_available()


def main(argv: list[str] | None = None) -> int:
    """Child entry point: serve calls on the inherited socket until the parent closes it."""
    argv = sys.argv[1:] if argv is None else argv
    conn = Connection(int(argv[0]))
    _import_client()
    _kind, cache_dir, piped_env, budget = conn.recv()
    os.environ.update(piped_env)  # after exec: not in /proc/<pid>/environ, which shows the initial block
    asyncio.run(_serve(conn, cache_dir, budget))
    conn.close()
    return 0


if __name__ == "__main__":
    status = main()
    # The clients are closed and every answer sent: skip the interpreter's teardown (a few
    # hundred milliseconds of freeing the openai and aiohttp modules) that pytest would wait for.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
