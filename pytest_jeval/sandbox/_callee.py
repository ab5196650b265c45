"""The solution's process inside the sandbox: runs the code and answers the harness.

Started by ``_harness`` as ``python -I -S -B -u -c <_values + this source> IN_FD OUT_FD``.
Everything it needs is bound to local names before the solution runs, and the
solution's module is a separate namespace, so patching ``json``, ``os``,
``builtins`` or this module's globals does not change how answers are sent. Its
two pipe descriptors are close-on-exec: a solution that re-executes itself (for
example with ``-O``) loses them and the harness records a failure. Whatever it
sends is only data: the harness decides, and a value crosses only when it is plain.

Where the harness asks for ``handles`` (the ``tests`` mode), a value that is not plain (an
instance of the solution's class, a bound method) stays here and the harness gets a number
for it: it can call it or read its attributes, never compare it. No test code runs here.
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

    objects, not_plain = {}, NotPlainValue

    def resolve(name, method):
        solution = module.get("Solution")
        if method and isinstance_(solution, type_):
            return getattr_(solution(), name)
        return module[name]

    def value_reply(result, handles):
        try:
            return {"ok": True, "value": encode(result)}
        except not_plain:
            if not handles:
                raise
        handle = len(objects) + 1
        objects[handle] = result
        return {"ok": True, "handle": handle}

    def names():
        out = []
        for name, value in list(module.items()):
            if type_(name) is str and not name.startswith("__"):
                reply = value_reply(value, True)
                out.append([name, reply.get("value"), reply.get("handle")])
        return {"ok": True, "names": out}

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
                if "handle" in message:
                    target = objects[message["handle"]]
                else:
                    target = resolve(message["name"], message["method"])
                handles = message.get("handles") is True
                reply = value_reply(target(*args, **kwargs), handles)
                if handles:  # the arguments as the call left them: the harness updates its own in place
                    reply["after"] = encode([args, kwargs])
            elif op == "getattr":
                reply = value_reply(getattr_(objects[message["handle"]], message["attr"]), True)
            elif op == "names":
                reply = names()
            else:
                reply = {"exc": ["ValueError", f"unknown op {op!r}", ""]}
        except base_exception as exc:  # the solution's failure is the harness's to judge
            reply = failure(exc)
        send(reply)


if __name__ == "__main__":
    _serve()
