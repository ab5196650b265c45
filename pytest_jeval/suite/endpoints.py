"""Where each endpoint is and which key it takes: the suite's entry, then the environment, then
``[backend.external]``, then the engine's default (docs/configuration.md, "Endpoint resolution")."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from pydantic import SecretStr

from pytest_jeval.calls.engines import get_engine
from pytest_jeval.core.redact import URL_CREDENTIALS_REFUSED, url_has_credentials
from pytest_jeval.suite.config import BackendExternal, Judge, ModelEntry, SuiteError, UserModel

BASE_URL_ENV = ("JEVAL_BASE_URL", "JARVIS_BACKEND_BASE_URL")
"""Environment variables giving every endpoint's base URL, first set wins (``JARVIS_BACKEND_*``: the reference's)."""
API_KEY_ENV = ("JEVAL_API_KEY", "JARVIS_BACKEND_API_KEY")
"""Environment variables giving every endpoint's key, first set wins."""
VLLM_HOST_ENV = "VLLM_HOST"
"""The default base URL of ``engine = "vllm"`` (``http://host:port``; ``/v1`` is added)."""


def resolve_endpoint(src: ModelEntry | Judge | UserModel, ext: BackendExternal, engine: str,
                     environ: Mapping[str, str] | None = None) -> tuple[str | None, SecretStr]:
    """The base URL and key of a remote endpoint; in each column the first source set wins
    (docs/configuration.md, "Endpoint resolution"):

    ====  ====================================  ================================================
    row   base URL                              key
    ====  ====================================  ================================================
    1     the entry's ``base_url``              the entry's ``api_key`` / ``$api_key_env``
    2     ``$JEVAL_BASE_URL``                   ``$JEVAL_API_KEY``
    3     ``$JARVIS_BACKEND_BASE_URL``          ``$JARVIS_BACKEND_API_KEY``
    4     ``[backend.external] base_url``       ``[backend.external] api_key``
    5     ``$VLLM_HOST`` (``engine = "vllm"``)  ``$OPENAI_API_KEY``, only when no base URL is set
    6     the engine's built-in default URL     ``EMPTY``
    ====  ====================================  ================================================

    An empty variable counts as unset. ``[judge]`` and ``[user]`` resolve the same way.
    """
    env = os.environ if environ is None else environ
    named = next((n for n in BASE_URL_ENV if env.get(n)), None) if not src.base_url else None
    base_url = (src.base_url or _first_env(env, BASE_URL_ENV) or ext.base_url
                or _engine_default(engine, env))
    if named is not None and base_url is not None and url_has_credentials(base_url):
        raise SuiteError(f"${named}: {URL_CREDENTIALS_REFUSED}")
    key = _key(src.api_key, src.api_key_env, env) or _secret(_first_env(env, API_KEY_ENV)) or ext.api_key
    if key is None and base_url is None:
        key = _secret(env.get("OPENAI_API_KEY"))
    return base_url, key if key is not None else SecretStr("EMPTY")


def _first_env(env: Mapping[str, str], names: Sequence[str]) -> str | None:
    return next((env[n] for n in names if env.get(n)), None)


def _engine_default(engine: str, env: Mapping[str, str]) -> str | None:
    """The engine's default base URL: ``$VLLM_HOST`` for vllm (``host:port`` or ``http://host:port``,
    ``/v1`` added unless there), else the built-in one."""
    host = env.get(VLLM_HOST_ENV, "").strip() if engine == "vllm" else ""
    if not host:
        return get_engine(engine).default_base_url
    url = (host if "://" in host else f"http://{host}").rstrip("/")
    return url if url.endswith("/v1") else f"{url}/v1"


def _secret(value: str | None) -> SecretStr | None:
    return SecretStr(value) if value else None


def _key(api_key: SecretStr | None, name: str | None, env: Mapping[str, str]) -> SecretStr | None:
    if api_key is not None:
        return api_key
    if name:
        return _secret(env.get(name))
    return None
