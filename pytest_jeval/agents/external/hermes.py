"""``backend = "hermes"``: Nous Research's Hermes Agent (PyPI ``hermes-agent``), one headless process per episode.

Hermes pins exact versions of its dependencies, so it lives in its own virtualenv
(``make hermes`` makes ``.venv-hermes``). Each episode runs Hermes' one-shot mode
(``hermes -z``: the final response on stdout, nothing else) through
:mod:`pytest_jeval.agents.external.hermes_oneshot`, which reads the prompt from the episode's
prompt file so the prompt is never on a command line. The episode home gets a fresh
``HERMES_HOME`` whose ``config.yaml`` names one custom provider, ``jeval``: the episode's
proxy, with its key taken from ``OPENAI_API_KEY`` (the per-episode dummy key).

Where Hermes is: ``JEVAL_HERMES_BIN`` (the ``hermes`` script of its virtualenv), else
``hermes`` on ``PATH``, else ``.venv-hermes/bin/hermes`` under the working directory.
Its toolsets: ``JEVAL_HERMES_TOOLSETS`` (comma-separated, default ``terminal,file``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from pytest_jeval.agents.external.base import AgentInvocation, BackendOptions

BIN_ENV = "JEVAL_HERMES_BIN"
"""The environment variable naming the ``hermes`` script to run."""
TOOLSETS_ENV = "JEVAL_HERMES_TOOLSETS"
"""The environment variable naming Hermes' toolsets (comma-separated)."""
DEFAULT_TOOLSETS = "terminal,file"
"""Shell and file tools: what a task in the workspace needs, and nothing that wants the network."""
LOCAL_BIN = Path(".venv-hermes") / "bin" / "hermes"
"""Where ``make hermes`` puts the script, relative to the working directory."""
INSTALL = "make hermes   (or: python3.11 -m venv .venv-hermes && .venv-hermes/bin/pip install hermes-agent)"
"""The command that installs Hermes Agent."""
PYTHON_MIN, PYTHON_BELOW = (3, 11), (3, 14)
"""The Python versions ``hermes-agent`` supports (its ``Requires-Python``: ``>=3.11,<3.14``)."""
TESTED_VERSION = "0.19.0"
"""The ``hermes-agent`` release this adapter was checked against."""
PROVIDER = "jeval"
"""The name of the custom provider (the episode proxy) in the episode's ``config.yaml``."""
ONESHOT = Path(__file__).with_name("hermes_oneshot.py")
"""The script Hermes' interpreter runs: the prompt from a file, then Hermes' own CLI."""

_PROBE = ("import json, sys, importlib.metadata as m, importlib.util as u\n"
          "try:\n    v = m.version('hermes-agent')\nexcept m.PackageNotFoundError:\n    v = None\n"
          "print(json.dumps({'python': list(sys.version_info[:3]), 'hermes': v,"
          " 'cli': v is not None and u.find_spec('hermes_cli') is not None}))\n")
"""Run by Hermes' interpreter at check time: its Python version and the installed ``hermes-agent``."""

_FAILED = re.compile(r"^API call failed after \d+ retries:")
"""Hermes 0.19 prints a model call that kept failing as its final text, with exit status 0."""


def find_binary() -> Path | None:
    """The ``hermes`` script to run: ``JEVAL_HERMES_BIN``, ``hermes`` on PATH, ``.venv-hermes/bin/hermes``."""
    named = os.environ.get(BIN_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    found = shutil.which("hermes")
    if found:
        return Path(found)
    local = LOCAL_BIN.resolve()
    return local if local.is_file() else None


def interpreter_of(script: Path) -> Path | None:
    """The Python of a pip console script (its ``#!`` line), or None when it has no Python shebang."""
    try:
        with script.open("rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    parts = first[2:].split()
    if not parts:
        return None
    if Path(parts[0]).name == "env" and len(parts) > 1:  # "#!/usr/bin/env python3"
        located = shutil.which(parts[1])
        return Path(located) if located else None
    return Path(parts[0]) if "python" in Path(parts[0]).name else None


def answer_from(stdout: str, stderr: str, status: int) -> str:
    """Hermes' final answer: its standard output, stripped; empty when that is Hermes' own failure text."""
    text = stdout.strip()
    return "" if _FAILED.match(text) else text


def config_yaml(*, model: str, base_url: str) -> str:
    """The episode's ``HERMES_HOME/config.yaml``: the proxy as the only provider, the key from the environment.

    Strings are written as JSON strings, which YAML reads as double-quoted scalars.
    """
    q = json.dumps
    return (f"model:\n  provider: {q('custom:' + PROVIDER)}\n  default: {q(model)}\n"
            f"providers:\n  {PROVIDER}:\n    name: {q(PROVIDER)}\n    base_url: {q(base_url)}\n"
            f"    key_env: {q('OPENAI_API_KEY')}\n    transport: {q('chat_completions')}\n")


class HermesAgent:
    """Hermes Agent, run once per episode in one-shot mode with a fresh ``HERMES_HOME``."""

    name = "hermes"

    def __init__(self, binary: Path | None = None, toolsets: str | None = None) -> None:
        self.binary = binary if binary is not None else find_binary()
        self.toolsets = toolsets or os.environ.get(TOOLSETS_ENV, "").strip() or DEFAULT_TOOLSETS
        self.python: Path | None = None

    def check(self) -> str | None:
        """Why Hermes cannot run here (not found, not a pip script, wrong Python, package missing), or None."""
        if self.binary is None:
            return (f"hermes is not installed (not on PATH, no {LOCAL_BIN}, {BIN_ENV} unset); "
                    f"install it with: {INSTALL}")
        if not (self.binary.is_file() and os.access(self.binary, os.X_OK)):
            return f"{self.binary} (from {BIN_ENV} or PATH) is not an executable file; install Hermes with: {INSTALL}"
        python = interpreter_of(self.binary)
        if python is None or not python.is_file():
            return (f"{self.binary} is not the pip-installed hermes script of a virtualenv (no usable Python in its "
                    f"#! line); install Hermes with: {INSTALL}")
        try:
            done = subprocess.run([str(python), "-c", _PROBE], capture_output=True, text=True, timeout=60,
                                  env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"})
            probe = json.loads(done.stdout.strip().splitlines()[-1])
            version = tuple(int(x) for x in probe["python"])
        except (OSError, subprocess.SubprocessError, ValueError, KeyError, IndexError, TypeError) as exc:
            return f"{python} (the Python of {self.binary}) could not be asked its version: {exc}; install: {INSTALL}"
        shown = ".".join(map(str, version))
        if not PYTHON_MIN <= version[:2] < PYTHON_BELOW:
            return (f"{self.binary} runs on Python {shown}, but hermes-agent needs Python >=3.11,<3.14; "
                    f"recreate its virtualenv with: {INSTALL}")
        if not probe.get("hermes") or not probe.get("cli"):
            return f"hermes-agent is not installed in {python} (Python {shown}); install it with: {INSTALL}"
        self.python = python
        return None

    def invocation(self, *, prompt_file: Path, workspace: Path, home: Path, model: str, base_url: str,
                   api_key: str) -> AgentInvocation:
        """One-shot Hermes on the prompt file, with the episode's ``HERMES_HOME`` and config."""
        python = self.python or (interpreter_of(self.binary) if self.binary is not None else None)
        if python is None:
            raise ValueError(f"hermes is not usable: {self.check()}")
        argv = [str(python), str(ONESHOT), "--prompt-file", str(prompt_file), "--",
                "--model", model, "--provider", f"custom:{PROVIDER}", "--toolsets", self.toolsets]
        return AgentInvocation(
            argv=argv,
            env={"HERMES_HOME": str(home / ".hermes"), "PYTHONDONTWRITEBYTECODE": "1"},
            files={".hermes/config.yaml": config_yaml(model=model, base_url=base_url)},
            answer_from=answer_from,
        )


def make_agent(options: BackendOptions) -> HermesAgent:
    """Nous Research's Hermes Agent CLI, one headless process per episode, behind a recording proxy."""
    return HermesAgent()
