"""A LiteLLM proxy in front of several OpenAI-compatible replicas, for tests and benchmarks.

The proxy is LiteLLM's own (``litellm --config ...``), installed in its own virtualenv by
``make litellm`` (``.venv-litellm``: it pins many packages that the project's ``.venv`` must
not get). :class:`LiteLLMProxy` writes its config, starts it on ``127.0.0.1``, waits until it
answers ``GET /health/readiness`` and stops it again::

    groups = {"test-model": [Deployment(replica_a.base_url), Deployment(replica_b.base_url)]}
    with LiteLLMProxy(groups, RouterSettings(num_retries=2, timeout=5)) as proxy:
        client = openai.OpenAI(base_url=proxy.base_url, api_key=proxy.master_key)

Each model group (the ``model`` a client asks for) is served by its deployments, each one
``openai/<model>`` at its ``api_base``; ``router_settings`` say how LiteLLM spreads the calls
and what it does with a deployment that fails or hangs (:class:`RouterSettings`).

Keys: the proxy's master key (generated, ``sk-`` and 64 hex digits) and the replicas' keys are
written only into the config file (mode 0600, in a private temporary folder), never into the
proxy's ``argv`` or environment. The proxy gets a short allowlisted environment
(:func:`proxy_environment`) that also keeps it off the network: LiteLLM otherwise fetches its
model price map from GitHub at start-up (``LITELLM_LOCAL_MODEL_COST_MAP=True`` stops that).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

__all__ = [
    "DEFAULT_LITELLM",
    "HOST",
    "OFFLINE_ENV",
    "ROUTING_STRATEGIES",
    "Deployment",
    "LiteLLMNotInstalledError",
    "LiteLLMProxy",
    "LiteLLMProxyError",
    "RouterSettings",
    "find_litellm",
    "proxy_config",
    "proxy_environment",
]

REPO = Path(__file__).resolve().parents[2]

DEFAULT_LITELLM = REPO / ".venv-litellm" / "bin" / "litellm"
"""Where ``make litellm`` installs the proxy's command."""

HOST = "127.0.0.1"
"""The proxy only ever listens on the loopback interface."""

ROUTING_STRATEGIES: tuple[str, ...] = (
    "simple-shuffle",
    "least-busy",
    "usage-based-routing",
    "usage-based-routing-v2",
    "latency-based-routing",
)
"""LiteLLM's ``router_settings.routing_strategy`` values (none of them needs Redis on one proxy)."""

OFFLINE_ENV: Mapping[str, str] = {
    # The model price map, Anthropic's beta headers, the UI's blog posts, auto-router presets and
    # policy templates: LiteLLM downloads each from GitHub unless told to use its packaged copy.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    # WARNING also turns off uvicorn's access log: one line per request costs the proxy CPU.
    "LITELLM_LOG": "WARNING",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}
"""Environment the proxy always gets: no download at start-up, quiet logs, no HTTP proxy for loopback."""

_PASSED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR")
"""Variables copied from the caller's environment (plus ``LC_*``); nothing else is passed on."""

_READY_PATH = "/health/readiness"
_LOG_TAIL_CHARS = 4000


class LiteLLMProxyError(RuntimeError):
    """The proxy could not be started or did not become ready."""


class LiteLLMNotInstalledError(LiteLLMProxyError):
    """The ``litellm`` command is missing: ``make litellm`` installs it."""


@dataclasses.dataclass(frozen=True)
class Deployment:
    """One replica behind a model group: an OpenAI-compatible server at ``api_base``."""

    api_base: str
    """The replica's base URL, ``http://host:port/v1``."""
    api_key: str | None = None
    """The key the proxy sends to this replica; None sends a placeholder (the replica checks none)."""
    model: str = "test-model"
    """The model id the proxy asks this replica for (LiteLLM's ``openai/<model>``)."""
    deployment_id: str | None = None
    """LiteLLM's ``model_info.id`` (names the deployment in its logs); None lets LiteLLM pick one."""


@dataclasses.dataclass(frozen=True)
class RouterSettings:
    """LiteLLM's ``router_settings``: how calls are spread and what a failing replica costs."""

    routing_strategy: str = "simple-shuffle"
    """One of :data:`ROUTING_STRATEGIES`."""
    num_retries: int = 2
    """Retries of a failed call inside the proxy, each on a deployment picked again."""
    timeout: float = 30.0
    """Seconds one call to a replica may take before the proxy gives up on it (then retries)."""
    stream_timeout: float | None = None
    """The same for streamed calls; None: ``timeout``."""
    allowed_fails: int | None = 1
    """Failures in a minute after which a deployment is cooled down; None: LiteLLM's failure-rate rule."""
    cooldown_time: float | None = 30.0
    """Seconds a cooled-down deployment gets no calls; None: LiteLLM's default (5 s)."""

    def __post_init__(self) -> None:
        if self.routing_strategy not in ROUTING_STRATEGIES:
            raise ValueError(f"routing_strategy must be one of {ROUTING_STRATEGIES}, not {self.routing_strategy!r}")
        if self.num_retries < 0:
            raise ValueError(f"num_retries must be >= 0, not {self.num_retries!r}")
        for name in ("timeout", "stream_timeout", "cooldown_time"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0, not {value!r}")
        if self.allowed_fails is not None and self.allowed_fails < 0:
            raise ValueError(f"allowed_fails must be >= 0, not {self.allowed_fails!r}")

    def as_config(self) -> dict[str, Any]:
        """The ``router_settings`` mapping (unset optional values left out)."""
        settings: dict[str, Any] = {
            "routing_strategy": self.routing_strategy,
            "num_retries": self.num_retries,
            "timeout": self.timeout,
            "stream_timeout": self.stream_timeout if self.stream_timeout is not None else self.timeout,
        }
        if self.allowed_fails is not None:
            settings["allowed_fails"] = self.allowed_fails
        if self.cooldown_time is not None:
            settings["cooldown_time"] = self.cooldown_time
        return settings


def proxy_config(
    groups: Mapping[str, Sequence[Deployment]], settings: RouterSettings, master_key: str
) -> dict[str, Any]:
    """The proxy's config: one ``model_list`` entry per deployment, ``router_settings``, the master key."""
    if not groups:
        raise ValueError("groups must name at least one model group")
    model_list: list[dict[str, Any]] = []
    for name, deployments in groups.items():
        if not deployments:
            raise ValueError(f"model group {name!r} has no deployments")
        for deployment in deployments:
            entry: dict[str, Any] = {
                "model_name": name,
                "litellm_params": {
                    "model": f"openai/{deployment.model}",
                    "api_base": deployment.api_base,
                    # LiteLLM's openai client wants a key; a replica that checks none ignores it.
                    "api_key": deployment.api_key if deployment.api_key is not None else "no-key",
                },
            }
            if deployment.deployment_id is not None:
                entry["model_info"] = {"id": deployment.deployment_id}
            model_list.append(entry)
    return {
        "model_list": model_list,
        "router_settings": settings.as_config(),
        "litellm_settings": {"drop_params": False},
        "general_settings": {"master_key": master_key},
    }


def proxy_environment(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The proxy's whole environment: :data:`OFFLINE_ENV`, ``HOME`` = ``home``, and a few of ``base``'s.

    Only ``PATH``, locale, ``TZ``, ``TMPDIR`` and TLS variables come from ``base`` (default:
    ``os.environ``), so no key, token or proxy setting of the caller reaches the proxy.
    """
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if k in _PASSED_ENV or k.startswith("LC_")}
    env.setdefault("PATH", os.defpath)
    env["HOME"] = str(home)
    env.update(OFFLINE_ENV)
    return env


def find_litellm(litellm: str | Path | None = None) -> Path:
    """The ``litellm`` command to run: ``litellm``, ``$JEVAL_LITELLM``, or :data:`DEFAULT_LITELLM`.

    Raises :class:`LiteLLMNotInstalledError`, saying to run ``make litellm``, when it is missing.
    """
    chosen = litellm if litellm is not None else os.environ.get("JEVAL_LITELLM") or DEFAULT_LITELLM
    path = Path(chosen)
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise LiteLLMNotInstalledError(
            f"the LiteLLM proxy is not installed: {path} is missing; run `make litellm` "
            f"(it creates .venv-litellm with litellm[proxy])"
        )
    return path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class LiteLLMProxy:
    """A LiteLLM proxy process on 127.0.0.1 serving ``groups`` (model group -> deployments).

    ``start()`` returns once ``GET /health/readiness`` answers 200 (a proxy that exits or
    is not ready within ``startup_timeout`` seconds raises :class:`LiteLLMProxyError` with
    the end of its log). ``stop()`` sends SIGTERM to the proxy's process group, then SIGKILL
    after ``stop_timeout`` seconds, and removes its temporary folder: nothing is left running.
    """

    def __init__(
        self,
        groups: Mapping[str, Sequence[Deployment]],
        settings: RouterSettings | None = None,
        *,
        litellm: str | Path | None = None,
        port: int = 0,
        startup_timeout: float = 120.0,
        stop_timeout: float = 15.0,
    ) -> None:
        self.settings = settings if settings is not None else RouterSettings()
        self.groups: dict[str, tuple[Deployment, ...]] = {name: tuple(d) for name, d in groups.items()}
        self.master_key = "sk-" + secrets.token_hex(32)
        """The key clients send (``Authorization: Bearer <master_key>``)."""
        self._config = proxy_config(self.groups, self.settings, self.master_key)
        self._litellm = litellm
        self._requested_port = port
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self._proc: subprocess.Popen[bytes] | None = None
        self._dir: Path | None = None
        self._log: IO[bytes] | None = None
        self._port: int | None = None
        self.startup_seconds: float | None = None
        """Seconds from launch until the proxy was ready (None before)."""

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> str:
        """Start the proxy and return its base URL, ``http://127.0.0.1:PORT/v1``."""
        if self._proc is not None:
            raise RuntimeError("LiteLLMProxy is already running")
        command = find_litellm(self._litellm)
        self._dir = Path(tempfile.mkdtemp(prefix="jeval-litellm-"))
        config = self._dir / "config.yaml"
        # JSON is YAML: LiteLLM reads the file with yaml.safe_load. Mode 0600 from the start.
        fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(self._config, fh, indent=2)
        self._port = self._requested_port or _free_port()
        self._log = (self._dir / "proxy.log").open("wb")
        started = time.monotonic()
        try:
            self._proc = subprocess.Popen(
                [str(command), "--config", str(config), "--host", HOST, "--port", str(self._port)],
                cwd=self._dir,
                env=proxy_environment(self._dir),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self._wait_ready(started)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - started
        return self.base_url

    def _wait_ready(self, started: float) -> None:
        assert self._proc is not None
        url = f"http://{HOST}:{self._port}{_READY_PATH}"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while True:
            code = self._proc.poll()
            if code is not None:
                raise LiteLLMProxyError(f"the LiteLLM proxy exited with status {code} before it was ready:\n"
                                        f"{self.log_tail()}")
            try:
                with opener.open(url, timeout=2.0) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass  # not listening yet, or not ready: poll again
            if time.monotonic() - started > self.startup_timeout:
                raise LiteLLMProxyError(f"the LiteLLM proxy was not ready at {url} within {self.startup_timeout:g} s:\n"
                                        f"{self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> int | None:
        """Stop the proxy (its whole process group) and remove its folder; returns its exit status.

        Safe to call more than once; returns None when it was not running.
        """
        proc, code = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                self._signal_group(proc, signal.SIGTERM)
                try:
                    proc.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    self._signal_group(proc, signal.SIGKILL)
                    proc.wait(timeout=self.stop_timeout)
            # Children that outlived the leader (none expected): the group goes too.
            self._signal_group(proc, signal.SIGKILL)
            code = proc.returncode
            self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        self._port = None
        return code

    @staticmethod
    def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)

    def __enter__(self) -> LiteLLMProxy:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ state

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``; raises RuntimeError when not running."""
        if self._proc is None or self._port is None:
            raise RuntimeError("LiteLLMProxy is not running; call start() first")
        return f"http://{HOST}:{self._port}/v1"

    @property
    def pid(self) -> int:
        """The proxy's process id; raises RuntimeError when not running."""
        if self._proc is None:
            raise RuntimeError("LiteLLMProxy is not running; call start() first")
        return self._proc.pid

    @property
    def config(self) -> dict[str, Any]:
        """The config the proxy was given (it holds the keys: do not print it)."""
        return json.loads(json.dumps(self._config))  # type: ignore[no-any-return]

    def log_tail(self, chars: int = _LOG_TAIL_CHARS) -> str:
        """The end of the proxy's log, with the master key and the replicas' keys replaced by ``[REDACTED]``."""
        if self._dir is None:
            return ""
        if self._log is not None:
            self._log.flush()
        try:
            text = (self._dir / "proxy.log").read_bytes()[-chars:].decode("utf-8", "replace")
        except OSError as exc:
            return f"(the proxy's log could not be read: {exc})"
        keys = [self.master_key, *(d.api_key for group in self.groups.values() for d in group if d.api_key)]
        for key in sorted(keys, key=len, reverse=True):
            text = text.replace(key, "[REDACTED]")
        return text
