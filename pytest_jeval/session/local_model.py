"""The bundled local model's lifecycle in a pytest session: its server launched at configure, waited for
at session start, handed to xdist workers, stopped at unconfigure (:mod:`pytest_jeval.calls.engines.local`)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_jeval.calls.engines.local import LocalModelError, LocalServer
from pytest_jeval.session.keys import plan_key
from pytest_jeval.suite.plan import EvalPlan


class LocalModelPlugin:
    """The local model server's lifecycle, registered on the controller when a suite model uses it.

    Launched in ``pytest_configure``, so the model loads while pytest finishes its set-up;
    waited for in ``pytest_sessionstart`` (after the results writer took the output dir,
    before the endpoint check and before any xdist worker starts), where a failure to
    start is a usage error. Its URL is handed to each worker in ``pytest_configure_node``;
    it is stopped in ``pytest_unconfigure``.
    """

    def __init__(self, plan: EvalPlan) -> None:
        self.plan = plan
        self.server: LocalServer | None = None
        self._launch_error: LocalModelError | None = None

    @pytest.hookimpl
    def pytest_configure(self, config: pytest.Config) -> None:
        """Launch the server (not under ``--collect-only`` or ``--setup-plan``); an error waits for sessionstart."""
        if config.option.collectonly or config.getoption("setupplan", False):
            return
        plan = self.plan
        server = LocalServer(plan.local_model_path(), name=next(
            (m.name for m in plan.models.values() if m.engine == "local"), "local"))
        self.server = server
        try:
            server.launch()
        except LocalModelError as exc:
            self._launch_error = exc

    @pytest.hookimpl
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Wait until the server answers; a failure to start is a usage error."""
        server = self.server
        if server is None:
            return
        try:
            if self._launch_error is not None:
                raise self._launch_error
            self.plan.local_base_url = server.wait_ready()
        except LocalModelError as exc:
            server.stop()
            self.server = None
            raise pytest.UsageError(str(exc)) from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: tell each worker where the server listens (read back in :func:`worker_base_url`)."""
        if self.plan.local_base_url:
            node.workerinput["jeval_local_url"] = self.plan.local_base_url

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """Stop the server."""
        if self.server is not None:
            self.server.stop()
            self.server = None
        config.pluginmanager.unregister(self)


def worker_base_url(config: pytest.Config) -> str | None:
    """On an xdist worker: the controller's local model server URL (None when it runs none)."""
    url = config.workerinput.get("jeval_local_url")  # type: ignore[attr-defined]
    return str(url) if url else None


def install(config: pytest.Config) -> None:
    """The bundled local model: its server on the controller when the suite uses it; a worker takes its URL."""
    plan = config.stash[plan_key]
    if hasattr(config, "workerinput"):
        plan.local_base_url = worker_base_url(config)
    elif plan.needs_local_model:
        config.pluginmanager.register(LocalModelPlugin(plan), "jeval-local-model")
