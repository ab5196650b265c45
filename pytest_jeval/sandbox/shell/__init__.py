"""Terminal tasks: shell tasks in the Terminal-Bench 2 layout, run in a sandboxed root filesystem.

- :mod:`.rootfs`: the Debian root filesystem built once with ``mmdebstrap`` and cached.
- :mod:`.providers`: the sandbox provider interface (start, exec, copy in, copy out, stop)
  and the bubblewrap provider, the default.
- :mod:`.verifier`: the checker's run (``exec(..., checker=True)``: nothing of the agent's) and
  the harness's verdict (exit status and reward file must agree).
- :mod:`.tasks`: the task folder loader (``task.toml``, ``instruction.md``, ``environment/``,
  ``tests/test.sh``, ``solution/solve.sh``).

See docs/terminal.md.
"""

from __future__ import annotations
