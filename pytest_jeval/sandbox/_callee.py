"""The solution's process inside the sandbox: runs the code and answers the harness.

Started by ``_harness`` as ``python -I -S -B -u -c <_values + this source> IN_FD OUT_FD``.
Everything it needs is bound to local names before the solution runs, and the
solution's module is a separate namespace, so patching ``json``, ``os``,
``builtins`` or this module's globals does not change how answers are sent. Its
two pipe descriptors are close-on-exec: a solution that re-executes itself (for
example with ``-O``) loses them and the harness records a failure. Whatever it
sends is only data: the harness decides, and a value crosses only when it is plain.
"""

import json as _json
import os as _os
import sys as _sys


def _serve():
    import builtins

    in_fd, out_fd = int(_sys.argv[1]), int(_sys.argv[2])
    _os.set_inheritable(in_fd, False)
    _os.set_inheritable(out_fd, False)
    if _sys.flags.optimize:
        _os._exit(70)
    read, write, loads, dumps = _os.read, _os.write, _json.loads, _json.dumps
    encode, decode, pack, exit_now = encode_value, decode_value, pack_frame, _os._exit
    base_exception, getattr_, isinstance_, type_ = BaseException, getattr, isinstance, type
    module = {"__name__": "__main__", "__builtins__": builtins}

    def receive():
        header = b""
        while len(header) < 8:
            chunk = read(in_fd, 8 - len(header))
            if not chunk:
                exit_now(0)
            header += chunk
        size, parts = int.from_bytes(header, "big"), []
        while size:
            chunk = read(in_fd, min(size, 1 << 20))
            if not chunk:
                exit_now(0)
            parts.append(chunk)
            size -= len(chunk)
        return loads(b"".join(parts).decode("utf-8"))

    def send(message):
        data = pack(dumps(message).encode("utf-8"))
        while data:
            data = data[write(out_fd, data):]

    def failure(exc):
        import traceback  # only when something failed: start-up stays short

        return {"exc": [type_(exc).__name__, str(exc)[:500], traceback.format_exc()[-4000:]]}

    def resolve(name, method):
        solution = module.get("Solution")
        if method and isinstance_(solution, type_):
            return getattr_(solution(), name)
        return module[name]

    def run_tests(message):
        nonce, spaces = message["nonce"], []
        plain = {k: v for k, v in module.items()}
        for source in message["sources"]:
            space = dict(plain)
            space["__name__"] = "jeval_tests"
            exec(compile(source, "<tests>", "exec"), space)
            spaces.append(space)
        for index, (which, name) in enumerate(message["calls"]):
            try:
                spaces[which][name]()
            except AssertionError as exc:
                verdict, detail = "wrong answer", "AssertionError: " + str(exc)
            except MemoryError:
                verdict, detail = "memory", "MemoryError"
            except base_exception as exc:
                verdict, detail = "exception", type_(exc).__name__ + ": " + str(exc)
            else:
                verdict, detail = "passed", ""
            send({"nonce": nonce, "index": index, "verdict": verdict, "detail": detail[:300]})

    while True:
        message = receive()
        op = message.get("op")
        if op == "exit":
            exit_now(0)
        try:
            if op == "load":
                exec(compile(message["code"], "main.py", "exec"), module)
                reply = {"ok": True}
            elif op == "call":
                args, kwargs = decode(message["args"]), decode(message["kwargs"])
                result = resolve(message["name"], message["method"])(*args, **kwargs)
                reply = {"ok": True, "value": encode(result)}
            elif op == "tests":
                run_tests(message)
                continue
            else:
                reply = {"exc": ["ValueError", f"unknown op {op!r}", ""]}
        except base_exception as exc:  # the solution's failure is the harness's to judge
            reply = failure(exc)
        send(reply)


if __name__ == "__main__":
    _serve()
