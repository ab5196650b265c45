"""An episode's web environment: its applications, the browser confined to them, and the cleanup.

A benchmark's environment function starts the applications a task needs (:func:`open_env`): each a
fresh instance on its own port, so every episode starts from a clean state and two parallel episodes
never see each other's changes. Sites a user brings (the WebArena sites of real WebChoreArena tasks)
are given as URLs and are not started or reset. The browser session may reach exactly these origins.
Placeholders such as ``__SHOPPING__`` in a task are rendered to the episode's addresses by
:meth:`WebEnv.render`. :func:`close_env` (the benchmark's ``AgentSpec.cleanup``) closes the browser and
stops the applications.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web

from pytest_jeval.agents.tools.browser import BrowserConfig, BrowserSession
from pytest_jeval.benchmarks._web.host import RunningApp, start_app


@dataclasses.dataclass
class WebEnv:
    """One episode's sites, applications and browser (``ctx.state`` and ``episode.state``)."""

    sites: dict[str, str]
    """Placeholder name (``SHOPPING``, ``REDDIT``, ``DESK``) → base URL, without a trailing slash."""
    apps: dict[str, RunningApp]
    """The applications started for the episode, by name."""
    browser: BrowserSession | None = None
    start_url: str = ""
    closed: bool = False

    def render(self, value: Any) -> Any:
        """``value`` (a string, or JSON-like data) with every ``__NAME__`` placeholder replaced by its site's URL."""
        if isinstance(value, str):
            for name in sorted(self.sites, key=len, reverse=True):
                value = value.replace(f"__{name}__", self.sites[name])
            return value
        if isinstance(value, list):
            return [self.render(v) for v in value]
        if isinstance(value, dict):
            return {k: self.render(v) for k, v in value.items()}
        return value

    def export_state(self) -> dict[str, Any]:
        """Each started application's database, as JSON builtins."""
        return {name: app.state.db.export() for name, app in self.apps.items()}

    def close(self) -> None:
        """Close the browser and stop the applications (idempotent)."""
        if self.closed:
            return
        self.closed = True
        if self.browser is not None:
            self.browser.close()
        for app in self.apps.values():
            app.stop()


AppFactory = Callable[[], web.Application]


def open_env(*, apps: Mapping[str, AppFactory], sites: Mapping[str, str], site_apps: Mapping[str, tuple[str, str]],
             start_url: str, config: BrowserConfig | None = None, extra_origins: tuple[str, ...] = ()) -> WebEnv:
    """Start ``apps`` (name → factory), map each placeholder of ``site_apps`` (``SHOPPING_ADMIN`` → (app name,
    path)) to its application's address, add the user's ``sites`` (placeholder → URL, not started), open the
    browser confined to all of them on the rendered ``start_url``."""
    env = WebEnv(sites={}, apps={})
    try:
        for name, factory in apps.items():
            env.apps[name] = start_app(name, factory)
        for placeholder, (app_name, path) in site_apps.items():
            env.sites[placeholder] = env.apps[app_name].base_url + path
        env.sites.update({k: v.rstrip("/") for k, v in sites.items()})
        env.start_url = env.render(start_url)
        origins = [*env.sites.values(), *(a.base_url for a in env.apps.values()), *extra_origins]
        base = config or BrowserConfig(allowed_origins=())
        env.browser = BrowserSession.open(dataclasses.replace(base, allowed_origins=tuple(origins)),
                                          env.start_url.split(" |AND| ")[0] or None)
    except BaseException:
        env.close()
        raise
    return env


def close_env(state: Any) -> None:
    """``AgentSpec.cleanup`` of the web benchmarks."""
    if isinstance(state, WebEnv):
        state.close()


def state_json(env: WebEnv) -> str:
    """The exported state as indented JSON (for a failure message or a file)."""
    return json.dumps(env.export_state(), indent=1, default=str)
