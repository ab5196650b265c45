"""Start Hermes Agent's one-shot mode with the prompt read from a file.

``hermes -z PROMPT`` takes the prompt as a command-line argument, which would put it in
``ps`` and ``/proc/<pid>/cmdline``. This script runs in Hermes' own interpreter (its
virtualenv, which does not have pytest-jeval installed, so it uses the standard library
only)::

    .venv-hermes/bin/python hermes_oneshot.py --prompt-file PROMPT.md -- --model M --provider custom:jeval

It reads the prompt, sets ``sys.argv`` to ``hermes --oneshot=<prompt> <the rest>`` inside the
process and calls Hermes' own command-line entry point, so the real CLI runs (its config,
provider resolution, tools, exit statuses) while the process's command line keeps only the
file name. Exit status 2 when the prompt file is missing or empty.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Read ``--prompt-file PATH`` from ``argv``, then hand Hermes ``--oneshot=<prompt>`` and what follows ``--``."""
    if len(argv) < 2 or argv[0] != "--prompt-file":
        sys.stderr.write("usage: hermes_oneshot.py --prompt-file PATH [-- HERMES-ARGS...]\n")
        return 2
    path, rest = Path(argv[1]), argv[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    try:
        prompt = path.read_text(encoding="utf-8")
    except OSError as exc:
        sys.stderr.write(f"hermes_oneshot: cannot read the prompt file {path}: {exc}\n")
        return 2
    if not prompt.strip():
        sys.stderr.write(f"hermes_oneshot: the prompt file {path} is empty\n")
        return 2
    sys.argv = ["hermes", f"--oneshot={prompt}", *rest]  # one item: a prompt starting with "-" stays the value
    from hermes_cli.main import main as hermes_main  # type: ignore[import-not-found, unused-ignore]

    result = hermes_main()  # one-shot mode ends the process itself (os._exit) with its status
    return int(result) if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
