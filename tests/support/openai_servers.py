"""Shared by the test server's own tests: a fixture that starts servers and stops them all at teardown,
and the openai clients aimed at one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer

MakeServer = Callable[..., FakeOpenAIServer]


@pytest.fixture
def make_server() -> Iterator[MakeServer]:
    """Start FakeOpenAIServers; every one is stopped at teardown."""
    servers: list[FakeOpenAIServer] = []

    def make(responder: Any = None, **kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(responder, **kwargs)
        server.start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def client_for(server: FakeOpenAIServer, *, api_key: str = "test-key", **kwargs: Any) -> openai.OpenAI:
    """A synchronous client of ``server`` (no retries unless asked)."""
    kwargs.setdefault("max_retries", 0)
    return openai.OpenAI(base_url=server.base_url, api_key=api_key, **kwargs)
