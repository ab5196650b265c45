"""Test helpers shipped with pytest-jeval.

:mod:`pytest_jeval.testing.openai_server` holds :class:`FakeOpenAIServer`, a small
OpenAI-compatible HTTP server (aiohttp, loopback only) for tests and throughput
benchmarks that must drive the real ``openai`` client over real HTTP.
"""
