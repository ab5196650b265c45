"""``backend = "openclaw"``: OpenClaw (npm ``openclaw``), one embedded agent run per episode.

Each episode runs ``openclaw agent exec --config <episode config> --message-file <prompt file>
--cwd <workspace> --model jeval/<model> --json``: OpenClaw's headless entry point for the
embedded (``--local``) agent, which needs no Gateway and prints one stable JSON envelope
(``{"ok", "status", "final", "payloads", "usage", ...}``). The per-episode config file
(``<home>/.openclaw/openclaw.json``) names one provider, ``jeval``: the episode's proxy
(``api = "openai-completions"``), with its key read from ``OPENAI_API_KEY`` (the dummy key).

OpenClaw needs a recent Node (its ``engines.node``, ``>=24.16.0 <25 || >=26.1.0`` for
2026.9.6; Debian 12 ships Node 18/20). Where things are: ``JEVAL_OPENCLAW_BIN`` (the
``openclaw`` launcher or ``openclaw.mjs``), else ``openclaw`` on ``PATH``, else
``.openclaw-npm/node_modules/.bin/openclaw`` (``make openclaw``); ``JEVAL_NODE_BIN`` (the
``node`` to run it with), else the Node that ``make openclaw`` installed next to it, else
``node`` on ``PATH``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pytest_jeval.agents.external.base import AgentInvocation, BackendOptions

BIN_ENV = "JEVAL_OPENCLAW_BIN"
"""The environment variable naming the ``openclaw`` launcher (or its ``openclaw.mjs``)."""
NODE_ENV = "JEVAL_NODE_BIN"
"""The environment variable naming the ``node`` binary that runs OpenClaw."""
PREFIX = Path(".openclaw-npm")
"""The project-local npm prefix ``make openclaw`` installs into (relative to the working directory)."""
INSTALL = "make openclaw   (npm install --prefix .openclaw-npm openclaw, run with Node >= 24.16)"
"""The command that installs OpenClaw (and, where the system Node is too old, a Node 24 from npm)."""
TESTED_VERSION = "2026.9.6"
"""The ``openclaw`` release this adapter was checked against."""
PROVIDER = "jeval"
"""The provider id of the episode proxy in the episode's config."""
CONFIG = ".openclaw/openclaw.json"
"""The per-episode config file, relative to the episode home."""
CONTEXT_WINDOW, MAX_TOKENS = 128000, 4096
"""What the config declares for the model (OpenClaw requires both for a custom model)."""

_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_COMPARATOR = re.compile(r"^(>=|<=|>|<|=)?\s*v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """The first ``major.minor.patch`` in ``text`` (``v24.22.3`` -> ``(24, 22, 3)``), or None."""
    m = _VERSION.search(text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def satisfies(version: tuple[int, int, int], spec: str) -> bool:
    """Whether ``version`` meets an npm ``engines`` range made of comparators joined by spaces and ``||``.

    Supported: ``>=``, ``>``, ``<=``, ``<``, ``=`` or a bare version, with missing or ``x`` parts
    read as 0 (``>=24`` is ``>=24.0.0``). ValueError for anything else (``^``, ``~``, hyphen ranges).
    """
    for alternative in spec.split("||"):
        comparators = alternative.split()
        if not comparators:
            return True
        ok = True
        for comparator in comparators:
            m = _COMPARATOR.match(comparator)
            if m is None:
                raise ValueError(f"unsupported version range {spec!r}")
            op = m.group(1) or "="
            bound = tuple(int(p) if p and p.isdigit() else 0 for p in m.group(2, 3, 4))
            ok = ok and {">=": version >= bound, ">": version > bound, "<=": version <= bound,
                         "<": version < bound, "=": version == bound}[op]
        if ok:
            return True
    return False


def find_launcher() -> Path | None:
    """The ``openclaw`` launcher: ``JEVAL_OPENCLAW_BIN``, ``openclaw`` on PATH, or the ``make openclaw`` one."""
    named = os.environ.get(BIN_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    found = shutil.which("openclaw")
    if found:
        return Path(found)
    local = (PREFIX / "node_modules" / ".bin" / "openclaw").resolve()
    return local if local.exists() else None


def find_node(package_dir: Path | None) -> Path | None:
    """The ``node`` to run OpenClaw: ``JEVAL_NODE_BIN``, the Node installed beside it by npm, ``node`` on PATH."""
    named = os.environ.get(NODE_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    if package_dir is not None:  # <prefix>/node_modules/openclaw -> <prefix>/node_modules/node-<os>-<arch>/bin/node
        for candidate in sorted(package_dir.parent.glob("node-*-*/bin/node")):
            if candidate.is_file():
                return candidate
    found = shutil.which("node")
    return Path(found) if found else None


def answer_from(stdout: str, stderr: str, status: int) -> str:
    """The final answer of OpenClaw's ``--json`` output.

    ``agent exec`` prints one envelope whose ``final`` is the answer (empty on failure);
    ``agent --local --json`` prints ``{"payloads": [{"text": ...}], "meta": ...}``, whose texts
    are joined. ValueError when stdout is not one of those (the episode is then an error).
    """
    text = stdout.strip()
    if not text:
        return ""
    try:
        data: Any = json.loads(text)
    except ValueError:
        raise ValueError(f"openclaw printed no JSON envelope: {text[:200]!r}") from None
    if isinstance(data, dict) and isinstance(data.get("final"), str):
        return str(data["final"]).strip()
    if isinstance(data, dict) and isinstance(data.get("payloads"), list):
        parts = [p.get("text") for p in data["payloads"] if isinstance(p, dict)]
        return "\n\n".join(p.strip() for p in parts if isinstance(p, str) and p.strip())
    raise ValueError(f"openclaw's JSON has neither 'final' nor 'payloads': {text[:200]!r}")


def config_json(*, model: str, base_url: str, workspace: Path) -> str:
    """The episode's OpenClaw config: the proxy as the only provider, its key ``${OPENAI_API_KEY}``."""
    config = {
        "agents": {"defaults": {"model": {"primary": f"{PROVIDER}/{model}"}, "workspace": str(workspace)}},
        "models": {"mode": "replace", "providers": {PROVIDER: {
            "baseUrl": base_url, "apiKey": "${OPENAI_API_KEY}", "api": "openai-completions",
            "models": [{"id": model, "name": model, "reasoning": False, "input": ["text"],
                        "contextWindow": CONTEXT_WINDOW, "maxTokens": MAX_TOKENS}]}}},
    }
    return json.dumps(config, indent=2) + "\n"


class OpenClawAgent:
    """OpenClaw's embedded agent, one ``agent exec`` per episode with its own config and state."""

    name = "openclaw"

    def __init__(self, launcher: Path | None = None, node: Path | None = None) -> None:
        self.launcher = launcher if launcher is not None else find_launcher()
        self._node = node
        self.script: Path | None = None
        self.node: Path | None = None

    def _package(self) -> tuple[Path, dict[str, Any]] | str:
        """``openclaw.mjs`` and its ``package.json``, or why they cannot be found."""
        assert self.launcher is not None
        if not self.launcher.exists():
            return f"{self.launcher} (from {BIN_ENV} or PATH) does not exist; install OpenClaw with: {INSTALL}"
        script = self.launcher.resolve()  # npm's .bin/openclaw is a link to <package>/openclaw.mjs
        manifest = script.parent / "package.json"
        try:
            package = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return (f"{self.launcher} is not npm's openclaw launcher (no package.json beside {script.name}); "
                    f"install OpenClaw with: {INSTALL}")
        if not isinstance(package, dict) or package.get("name") != "openclaw":
            return f"{manifest} is not the openclaw package; install OpenClaw with: {INSTALL}"
        if not package.get("bin"):
            return (f"{manifest} is openclaw {package.get('version')}, a placeholder without the CLI: npm picks it "
                    f"when the Node running npm is older than OpenClaw needs; reinstall with: {INSTALL}")
        return script, package

    def check(self) -> str | None:
        """Why OpenClaw cannot run here (not installed, the placeholder package, Node missing or too old), or None."""
        if self.launcher is None:
            return (f"openclaw is not installed (not on PATH, no {PREFIX}/node_modules/.bin/openclaw, {BIN_ENV} "
                    f"unset); install it with: {INSTALL}")
        found = self._package()
        if isinstance(found, str):
            return found
        script, package = found
        node = self._node or find_node(script.parent)
        engines = package.get("engines")
        wanted = str(engines.get("node", "")) if isinstance(engines, dict) else ""
        if node is None:
            return f"node is not installed ({NODE_ENV} unset, none on PATH); OpenClaw needs Node {wanted}: {INSTALL}"
        try:
            done = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"{node} cannot run: {exc}; OpenClaw needs Node {wanted}: {INSTALL}"
        version = parse_version(done.stdout)
        if version is None:
            return f"{node} --version printed {done.stdout.strip()[:80]!r}, not a version; install: {INSTALL}"
        try:
            fits = not wanted or satisfies(version, wanted)
        except ValueError as exc:
            return f"openclaw's engines.node: {exc}"
        if not fits:
            shown = ".".join(map(str, version))
            return (f"{node} is Node {shown}, but openclaw {package.get('version')} needs Node {wanted}; "
                    f"install a Node that fits and set {NODE_ENV}, or run: {INSTALL}")
        self.script, self.node = script, node
        return None

    def invocation(self, *, prompt_file: Path, workspace: Path, home: Path, model: str, base_url: str,
                   api_key: str) -> AgentInvocation:
        """``openclaw agent exec`` on the prompt file with the episode's config and state directory."""
        if self.script is None or self.node is None:
            problem = self.check()
            if problem is not None or self.script is None or self.node is None:
                raise ValueError(f"openclaw is not usable: {problem}")
        argv = [str(self.node), str(self.script), "agent", "exec", "--config", str(home / CONFIG),
                "--message-file", str(prompt_file), "--cwd", str(workspace), "--model", f"{PROVIDER}/{model}",
                "--state-dir", str(home / ".openclaw" / "state"), "--timeout", "0", "--json"]
        path = os.pathsep.join([str(self.node.parent), os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin"])
        return AgentInvocation(
            argv=argv,
            env={"PATH": path, "TMPDIR": str(home / "tmp"), "OPENCLAW_CONFIG_PATH": str(home / CONFIG),
                 "OPENCLAW_STATE_DIR": str(home / ".openclaw" / "state"), "NO_COLOR": "1"},
            files={CONFIG: config_json(model=model, base_url=base_url, workspace=workspace),
                   ".openclaw/state/.keep": "", "tmp/.keep": ""},
            answer_from=answer_from,
        )


def make_agent(options: BackendOptions) -> OpenClawAgent:
    """OpenClaw (npm openclaw), one embedded agent run per episode, behind a recording proxy."""
    return OpenClawAgent()
