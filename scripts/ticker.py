"""Run a command and print a line every N seconds while it runs, so a silent step never looks hung.

Usage: ``python scripts/ticker.py [--every SECONDS] LABEL -- COMMAND [ARG ...]``

The command's output passes through unchanged; the tick lines go to stderr. The exit status is
the command's (128 + signal number when a signal ended it). Standard library only: the Makefile
runs it before anything is installed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time


def _elapsed(seconds: float) -> str:
    """``75.2`` -> ``"1m15s"``."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def run(label: str, command: list[str], every: float) -> int:
    """Run ``command``, ticking every ``every`` seconds; return its exit status."""
    start = time.monotonic()
    with subprocess.Popen(command) as proc:
        while True:
            try:
                status = proc.wait(timeout=every)
                break
            except subprocess.TimeoutExpired:
                elapsed = _elapsed(time.monotonic() - start)
                print(f"  ... {label}: still running, {elapsed} elapsed", file=sys.stderr, flush=True)
            except KeyboardInterrupt:
                # The terminal sent SIGINT to the whole process group: the command got it too.
                status = proc.wait()
                break
    how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
    print(f"  ... {label}: done in {_elapsed(time.monotonic() - start)} ({how})", file=sys.stderr, flush=True)
    return 128 - status if status < 0 else status


def main(argv: list[str] | None = None) -> int:
    """Parse ``[--every S] LABEL -- COMMAND...`` and run it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=float, default=30.0, help="seconds between tick lines (default 30)")
    parser.add_argument("label")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given after the label")
    if args.every <= 0:
        parser.error("--every must be positive")
    return run(args.label, command, args.every)


if __name__ == "__main__":
    sys.exit(main())
