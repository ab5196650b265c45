"""The trusted checker inside the sandbox: it never runs the solution's code.

Started by the runner as ``python -I -S -B -c <_values + this source> JOB_FD VERDICT_FD``.
It reads the job from ``JOB_FD`` (an unlinked file of the runner's), makes itself
non-dumpable (no ``ptrace``, no ``/proc/<pid>/mem`` or ``/proc/<pid>/fd`` for the
solution) and starts the *callee* (``_callee``): a fresh interpreter that runs the
solution and answers requests over two pipes. The verdict descriptor is
close-on-exec, so the callee never holds it; the verdict is written once, at the
end, after the solution's code and the checks have finished.

Modes (``job["mode"]``):

``humaneval``  the task's ``prompt`` and ``test`` are executed here; ``check`` gets a
               proxy whose calls go to the callee; return values come back as plain
               values (``_values``), so ``==`` in the test is Python's own.
``call``       one call ``func_name(*args)`` (a method of ``Solution`` when it exists);
               the plain return value goes back to the runner, which compares it.
``tests``      test functions run here, in the harness; the solution's top-level names are
               plain values or :class:`Remote` objects (its classes, their instances) whose
               calls go to the callee, so a test compares plain values only, with Python's
               own ``==`` (an object whose ``__eq__`` always says yes never reaches it).

The verdict is JSON: ``passed`` (bool), ``reason`` (passed, wrong answer, exception,
timeout, memory, killed), ``detail`` and, per mode, ``value`` or ``tests``.
"""

import json as _json
import os as _os
import sys as _sys


class CalleeDied(Exception):
    """The callee ended (or broke the protocol) while the harness waited for it."""

    def __init__(self, reason, detail):
        super().__init__(detail)
        self.reason = reason


class RemoteError(Exception):
    """The solution raised; ``name`` is the exception's type name."""

    def __init__(self, name, message):
        super().__init__(f"{name}: {message}")
        self.name, self.message = name, message


class Callee:
    """The solution's process and the two pipes to it."""

    def __init__(self, source):
        to_r, self.to_w = _os.pipe()
        self.from_r, from_w = _os.pipe()
        _os.set_inheritable(to_r, True)
        _os.set_inheritable(from_w, True)
        # stdin is /dev/null and stdout/stderr are the runner's capture files; every
        # other descriptor of the harness (the verdict) is close-on-exec.
        self.pid = _os.posix_spawn(
            _sys.executable, [_sys.executable, "-I", "-S", "-B", "-u", "-c", source, str(to_r), str(from_w)],
            {k: v for k, v in _os.environ.items()})
        self.status = None
        _os.close(to_r)
        _os.close(from_w)

    def wait(self, block=True):
        """The callee's exit status (negative: killed by that signal), or None while it runs."""
        if self.status is None:
            pid, raw = _os.waitpid(self.pid, 0 if block else _os.WNOHANG)
            if pid:
                self.status = _os.waitstatus_to_exitcode(raw)
        return self.status

    def kill(self):
        if self.status is None:
            try:
                _os.kill(self.pid, 9)
            except ProcessLookupError:
                pass

    def send(self, message):
        data = pack_frame(_json.dumps(message).encode("utf-8"))
        try:
            while data:
                data = data[_os.write(self.to_w, data):]
        except BrokenPipeError:
            raise self.died() from None

    def _read(self, size):
        chunks, left = [], size
        while left:
            chunk = _os.read(self.from_r, min(left, 1 << 20))
            if not chunk:
                raise self.died()
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def receive(self):
        size = int.from_bytes(self._read(8), "big")
        if size > MAX_FRAME:
            raise CalleeDied("exception", "the solution's process sent an oversized frame")
        try:
            message = _json.loads(self._read(size).decode("utf-8"))
        except ValueError:
            raise CalleeDied("exception", "the solution's process broke the protocol") from None
        if type(message) is not dict:
            raise CalleeDied("exception", "the solution's process broke the protocol")
        return message

    def died(self):
        import time

        deadline = time.monotonic() + 2
        while self.wait(block=False) is None and time.monotonic() < deadline:
            time.sleep(0.005)
        if self.status is None:
            self.kill()
        code = self.wait()
        if code < 0:
            reason = "timeout" if code == -24 else "killed"
            return CalleeDied(reason, f"the solution's process was killed by signal {-code}")
        return CalleeDied("exception", f"the solution's process exited with status {code} before it answered")

    def request(self, message):
        self.send(message)
        reply = self.receive()
        if "exc" in reply:
            name, text, trace = (list(reply["exc"]) + ["", "", ""])[:3]
            if trace:
                _sys.stderr.write(str(trace))
            raise RemoteError(str(name), str(text))
        return reply

    def close(self):
        self.kill()  # nothing the solution does after the checks can matter
        self.wait()


def _builtin_exception(name, message):
    import builtins

    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception) and kind is not StopIteration:
        try:
            return kind(message)
        except Exception:
            pass
    return RemoteError(name, message)


def _candidate(callee, name):
    def candidate(*args, **kwargs):
        message = {"op": "call", "name": name, "method": False,
                   "args": encode_value(list(args)), "kwargs": encode_value(dict(kwargs))}
        try:
            reply = callee.request(message)
        except RemoteError as exc:
            if exc.name == "NotPlainValue":
                raise NotPlainValue(exc.message) from None
            raise _builtin_exception(exc.name, exc.message) from None
        try:
            return decode_value(reply.get("value"))
        except (ValueError, TypeError, OverflowError):
            raise CalleeDied("exception", "the solution's process sent a malformed value") from None

    candidate.__name__ = name
    return candidate


def _reason(exc):
    if isinstance(exc, CalleeDied):
        return exc.reason
    if isinstance(exc, (AssertionError, NotPlainValue)):
        return "wrong answer"
    if isinstance(exc, RemoteError) and exc.name == "NotPlainValue":
        return "wrong answer"
    if isinstance(exc, MemoryError) or (isinstance(exc, RemoteError) and exc.name == "MemoryError"):
        return "memory"
    return "exception"


def _failure(exc):
    import traceback

    traceback.print_exception(exc, file=_sys.stderr)
    _sys.stderr.flush()
    detail = f"{type(exc).__name__}: {exc}" if not isinstance(exc, (CalleeDied, RemoteError)) else str(exc)
    return {"passed": False, "reason": _reason(exc), "detail": detail[:500]}


def _run(job, callee):
    callee.request({"op": "load", "code": job["code"]})
    mode = job["mode"]
    if mode == "humaneval":
        # The prompt's own helpers (poly, encode_cyclic, ...) come from the task, not from the
        # solution; the entry point's name is the candidate, as in the official program.
        space = {"__name__": "__jeval_check__"}
        try:
            prompt = compile(job["prompt"], "<prompt>", "exec")
        except SyntaxError:  # a prompt that ends at a bare signature
            prompt = None
        if prompt is not None:
            exec(prompt, space)
        candidate = _candidate(callee, job["entry_point"])
        space[job["entry_point"]] = candidate
        exec(compile(job["test"], "<test>", "exec"), space)
        check = space.get("check")
        if not callable(check):
            raise NameError("the test defines no check()")
        check(candidate)
        return {"passed": True, "reason": "passed", "detail": ""}
    if mode == "call":
        reply = callee.request({"op": "call", "name": job["func_name"], "method": True,
                                "args": job["args"], "kwargs": ["D", []]})
        return {"passed": True, "reason": "passed", "detail": "", "value": reply.get("value")}
    if mode == "tests":
        return _run_tests(job, callee)
    raise ValueError(f"unknown mode {mode!r}")


class Remote:
    """A value of the solution's that is not plain (an instance of its class, a method): the tests may call
    it and read its attributes (what comes back is a plain value or another :class:`Remote`), never compare
    it, hash it or test its truth: those raise :class:`NotPlainValue`, a wrong answer."""

    __slots__ = ("_callee", "_handle")

    def __init__(self, callee, handle):
        object.__setattr__(self, "_callee", callee)
        object.__setattr__(self, "_handle", handle)

    def __call__(self, *args, **kwargs):
        message = {"op": "call", "handle": self._handle, "handles": True,
                   "args": encode_value(list(args)), "kwargs": encode_value(dict(kwargs))}
        return _remote_request(self._callee, message, (args, kwargs))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _remote_request(self._callee, {"op": "getattr", "handle": self._handle, "attr": name})

    def __setattr__(self, name, value):
        raise NotPlainValue("the tests cannot change a value of the solution's")

    def _refuse(self, *args):
        raise NotPlainValue("a value of the solution's that is not plain was compared or tested")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __hash__ = __len__ = __iter__ = _refuse
    __contains__ = __index__ = __int__ = __float__ = __str__ = _refuse

    def __repr__(self):
        return f"<a value of the solution's, #{self._handle}>"


def _remote_value(callee, reply):
    if "handle" in reply:
        if type(reply["handle"]) is not int:
            raise CalleeDied("exception", "the solution's process sent a malformed handle")
        return Remote(callee, reply["handle"])
    try:
        return decode_value(reply.get("value"))
    except (ValueError, TypeError, OverflowError):
        raise CalleeDied("exception", "the solution's process sent a malformed value") from None


def _remote_request(callee, message, arguments=None):
    try:
        reply = callee.request(message)
    except RemoteError as exc:
        if exc.name == "NotPlainValue":
            raise NotPlainValue(exc.message) from None
        raise _builtin_exception(exc.name, exc.message) from None
    if arguments is not None and "after" in reply:
        try:
            after_args, after_kwargs = decode_value(reply["after"])
        except (ValueError, TypeError, OverflowError):
            raise CalleeDied("exception", "the solution's process sent a malformed value") from None
        for mine, theirs in zip([*arguments[0], *arguments[1].values()],
                                [*after_args, *(after_kwargs.get(k) for k in arguments[1])]):
            _update_in_place(mine, theirs)
    return _remote_value(callee, reply)


def _update_in_place(mine, theirs):
    """What the solution did to a list, dict or set it was given, done to the test's own object (the call
    crossed a process boundary: the test passed a copy)."""
    if type(mine) is list and type(theirs) is list:
        mine[:] = theirs
    elif (type(mine) is dict and type(theirs) is dict) or (type(mine) is set and type(theirs) is set):
        mine.clear()
        mine.update(theirs)


def _test_verdict(exc):
    if exc is None:
        return "passed", ""
    reason = _reason(exc)
    verdict = reason if reason in ("wrong answer", "memory") else "exception"
    return verdict, f"{type(exc).__name__}: {exc}"


def _run_tests(job, callee):
    """Run each test function here, in the trusted harness, with the solution's names as values or
    :class:`Remote` objects: ``==`` in a test is Python's own, on plain values only."""
    reply = callee.request({"op": "names"})
    shared = {}
    for item in reply.get("names") or []:
        if type(item) is not list or len(item) != 3 or type(item[0]) is not str:
            raise CalleeDied("exception", "the solution's process broke the protocol")
        name, value, handle = item
        shared[name] = _remote_value(callee, {"handle": handle} if handle is not None else {"value": value})
    spaces = []
    for source in job["sources"]:
        space = dict(shared)
        space["__name__"] = "jeval_tests"
        exec(compile(source, "<tests>", "exec"), space)
        spaces.append(space)
    calls = [list(c) for c in job["calls"]]
    results = []
    for which, name in calls:
        try:
            spaces[which][name]()
        except CalleeDied as exc:
            return {"passed": False, "reason": exc.reason, "detail": str(exc), "tests": results, "complete": False}
        except Exception as exc:
            verdict, detail = _test_verdict(exc)
        else:
            verdict, detail = _test_verdict(None)
        results.append({"verdict": verdict, "detail": detail[:300]})
    passed = all(r["verdict"] == "passed" for r in results)
    return {"passed": passed, "reason": "passed" if passed else "wrong answer", "detail": "",
            "tests": results, "complete": True}


def _non_dumpable():
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        _sys.stderr.write("jeval harness: could not make itself non-dumpable\n")


def _main():
    job_fd, verdict_fd = int(_sys.argv[1]), int(_sys.argv[2])
    _os.set_inheritable(verdict_fd, False)
    _non_dumpable()
    with _os.fdopen(job_fd, "rb") as fh:
        job = _json.loads(fh.read().decode("utf-8"))
    if _sys.flags.optimize:
        verdict = {"passed": False, "reason": "exception", "detail": "the harness must not run with -O"}
    else:
        callee = None
        try:
            callee = Callee(job["callee"])
            verdict = _run(job, callee)
        except BaseException as exc:  # every failure of the check is a verdict
            verdict = _failure(exc)
        finally:
            if callee is not None:
                callee.close()
    data = _json.dumps(verdict).encode("utf-8")
    while data:
        data = data[_os.write(verdict_fd, data):]
    _os.close(verdict_fd)


if __name__ == "__main__":
    _main()
