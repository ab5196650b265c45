"""The endpoint resolution table (docs/configuration.md, "Endpoint resolution"), row by row.

For each row, that row's source and every source below it are set, and the row's value must win;
the same for models, ``[judge]`` and ``[user]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_jeval.core.chat import Endpoint
from pytest_jeval.suite.plan import EvalPlan

ENV = ("JEVAL_BASE_URL", "JEVAL_API_KEY", "JARVIS_BACKEND_BASE_URL", "JARVIS_BACKEND_API_KEY", "VLLM_HOST",
       "OPENAI_API_KEY", "ENTRY_KEY_VAR")


@dataclass(frozen=True)
class Source:
    """One row of the table: what it sets (entry keys, ``[backend.external]`` keys, variables) and the value it gives."""

    name: str
    value: str | None
    doc: str = ""
    """Text the row's cell in docs/configuration.md holds."""
    entry: str = ""
    external: str = ""
    env: dict[str, str] = field(default_factory=dict)


BASE_URL_ROWS = [
    Source("entry", "http://entry:1/v1", "the entry's `base_url`", entry='base_url = "http://entry:1/v1"'),
    Source("JEVAL_BASE_URL", "http://jeval:2/v1", "$JEVAL_BASE_URL", env={"JEVAL_BASE_URL": "http://jeval:2/v1"}),
    Source("JARVIS_BACKEND_BASE_URL", "http://jarvis:3/v1", "$JARVIS_BACKEND_BASE_URL",
           env={"JARVIS_BACKEND_BASE_URL": "http://jarvis:3/v1"}),
    Source("[backend.external]", "http://external:4/v1", "[backend.external].base_url",
           external='base_url = "http://external:4/v1"'),
    Source("VLLM_HOST", "http://gpu-node:8000/v1", "$VLLM_HOST", env={"VLLM_HOST": "http://gpu-node:8000"}),
    Source("engine default", "http://localhost:8000/v1", "the engine's default URL"),
]
"""Base URL rows, for ``engine = "vllm"`` (the only engine ``VLLM_HOST`` applies to)."""

KEY_ROWS = [
    Source("entry api_key_env", "entry-key-0001", "the entry's `api_key`, or `$api_key_env`", entry='api_key_env = "ENTRY_KEY_VAR"',
           env={"ENTRY_KEY_VAR": "entry-key-0001"}),
    Source("JEVAL_API_KEY", "jeval-key-0002", "$JEVAL_API_KEY", env={"JEVAL_API_KEY": "jeval-key-0002"}),
    Source("JARVIS_BACKEND_API_KEY", "jarvis-key-0003", "$JARVIS_BACKEND_API_KEY",
           env={"JARVIS_BACKEND_API_KEY": "jarvis-key-0003"}),
    Source("[backend.external]", "external-key-0004", "[backend.external].api_key",
           external='api_key = "external-key-0004"'),
    Source("OPENAI_API_KEY", "openai-key-0005", "$OPENAI_API_KEY", env={"OPENAI_API_KEY": "openai-key-0005"}),
    Source("none", "EMPTY", "`EMPTY`"),
]
"""Key rows, for ``engine = "openai"`` with no base URL anywhere (where ``OPENAI_API_KEY`` applies)."""

TABLES = ("models", "judge", "user")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def _suite(tmp_path: Path, table: str, entry: str, external: str = "") -> Path:
    own = {t: entry if t == table else "" for t in TABLES}
    text = (f"[backend.external]\n{external}\n"
            f'[judge]\nmodel = "j"\n{own["judge"]}\n'
            f'[user]\nmodel = "u"\n{own["user"]}\n'
            f'[[models]]\nname = "m"\n{own["models"]}\n'
            '[[benchmarks]]\nname = "quickstart"\n')
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def _endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, rows: list[Source],
              engine: str) -> Endpoint:
    for row in rows:
        for name, value in row.env.items():
            monkeypatch.setenv(name, value)
    entry = "\n".join([f'engine = "{engine}"', *(r.entry for r in rows if r.entry)])
    external = "\n".join(r.external for r in rows if r.external)
    plan = EvalPlan.from_file(_suite(tmp_path, table, entry, external), invocation_dir=tmp_path)
    endpoint = (plan.endpoint_for(plan.models["m"]) if table == "models"
                else plan.endpoint_for(None, judge=table == "judge", user=table == "user"))
    for key in (r.value for r in rows if r.value and "-key-" in r.value):  # no key in any repr
        assert key not in repr(endpoint) and key not in repr(plan.suite)
    return endpoint


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("row", range(len(BASE_URL_ROWS)), ids=[r.name for r in BASE_URL_ROWS])
def test_base_url_row_wins_over_every_row_below(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str,
                                                row: int) -> None:
    endpoint = _endpoint(tmp_path, monkeypatch, table, BASE_URL_ROWS[row:], engine="vllm")
    assert endpoint.base_url == BASE_URL_ROWS[row].value


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("row", range(len(KEY_ROWS)), ids=[r.name for r in KEY_ROWS])
def test_key_row_wins_over_every_row_below(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str,
                                           row: int) -> None:
    endpoint = _endpoint(tmp_path, monkeypatch, table, KEY_ROWS[row:], engine="openai")
    assert endpoint.api_key.get_secret_value() == KEY_ROWS[row].value
    assert endpoint.base_url is None  # the client's own default, api.openai.com


def test_the_docs_table_lists_the_rows_in_this_order() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = text.split("**Endpoint resolution.**", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == len(BASE_URL_ROWS) == len(KEY_ROWS)
    for line, url_row, key_row in zip(rows, BASE_URL_ROWS, KEY_ROWS):
        _, _, url_cell, key_cell, _ = line.split("|")
        assert url_row.doc in url_cell and key_row.doc in key_cell, line


def test_openai_api_key_never_goes_to_a_base_url_set_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key-0005")
    for url_row in BASE_URL_ROWS:  # vllm always has a URL, at least its default
        with monkeypatch.context() as mp:
            ep = _endpoint(tmp_path, mp, "models", [url_row], engine="vllm")
        assert ep.api_key.get_secret_value() == "EMPTY", url_row.name
    ep = _endpoint(tmp_path, monkeypatch, "models", [], engine="openai")
    assert ep.api_key.get_secret_value() == "openai-key-0005"


def test_an_entry_url_with_the_environment_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The columns resolve separately: the entry's URL does not stop the key from coming from the environment."""
    ep = _endpoint(tmp_path, monkeypatch, "models", [BASE_URL_ROWS[0], KEY_ROWS[1]], engine="openai")
    assert (ep.base_url, ep.api_key.get_secret_value()) == ("http://entry:1/v1", "jeval-key-0002")


@pytest.mark.parametrize(("host", "url"), [
    ("http://gpu-node:8000", "http://gpu-node:8000/v1"),
    ("http://gpu-node:8000/", "http://gpu-node:8000/v1"),
    ("gpu-node:8000", "http://gpu-node:8000/v1"),
    ("https://vllm.example/v1", "https://vllm.example/v1"),
    ("", "http://localhost:8000/v1"),
])
def test_vllm_host_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str, url: str) -> None:
    ep = _endpoint(tmp_path, monkeypatch, "judge", [Source("VLLM_HOST", url, env={"VLLM_HOST": host})], engine="vllm")
    assert ep.base_url == url


@pytest.mark.parametrize(("engine", "url"), [("sglang", "http://localhost:30000/v1"), ("openai", None)])
def test_vllm_host_is_only_for_the_vllm_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str,
                                               url: str | None) -> None:
    monkeypatch.setenv("VLLM_HOST", "http://gpu-node:8000")
    assert _endpoint(tmp_path, monkeypatch, "models", [], engine=engine).base_url == url


def test_an_empty_variable_counts_as_unset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [Source("empty", None, env={"JEVAL_BASE_URL": "", "JEVAL_API_KEY": ""}), BASE_URL_ROWS[2], KEY_ROWS[2]]
    ep = _endpoint(tmp_path, monkeypatch, "models", rows, engine="openai")
    assert (ep.base_url, ep.api_key.get_secret_value()) == ("http://jarvis:3/v1", "jarvis-key-0003")
