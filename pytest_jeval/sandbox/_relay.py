"""The network of a confined program: a TCP listener on its own loopback that leads to one Unix socket.

Started inside the sandbox as ``python -I -S -c <this source> PORT SOCKET -- PROGRAM ARGS...``. It
listens on ``127.0.0.1:PORT`` of the sandbox's network namespace (nothing else is reachable
there), starts the program, relays every connection to the Unix socket the harness bound in
(the recording proxy), and exits with the program's exit status (``128 + N`` when a signal N
killed it). The listening socket is close-on-exec, so the program does not hold it. Only the
standard library is used; the harness reads this file as text (it is never imported).
"""

import os
import socket
import sys
import threading


def _pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve_one(conn, path):
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        up.close()
        return
    back = threading.Thread(target=_pump, args=(up, conn), daemon=True)
    back.start()
    _pump(conn, up)
    back.join()
    conn.close()
    up.close()


def _serve(listener, path):
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_serve_one, args=(conn, path), daemon=True).start()


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    if sys.argv[3] != "--" or len(sys.argv) < 5:
        sys.stderr.write("usage: relay PORT SOCKET -- PROGRAM ARGS...\n")
        os._exit(2)
    argv = sys.argv[4:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    try:
        pid = os.posix_spawnp(argv[0], argv, dict(os.environ))
    except OSError as exc:
        sys.stderr.write(f"jeval: cannot start {argv[0]}: {exc.strerror}\n")
        os._exit(127)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    sys.stdout.flush()
    os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
