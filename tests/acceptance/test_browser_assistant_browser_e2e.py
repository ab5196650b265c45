"""browser_assistant in agent mode with the browser tools (``agent_tools = "browser"``), through the plugin: a
scripted model searches the bundle's local site, opens a result and answers; the episode is scored from the
pages the site served; the model was offered the browser tools only and read the pages through the browser."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from pytest_jeval.agents.tools.browser import BROWSER_TOOLS
from pytest_jeval.benchmarks.browser_assistant import bench_browser_assistant as ba
from pytest_jeval.benchmarks.browser_assistant.pages import store_for
from pytest_jeval.testing.openai_server import (
    FakeOpenAIServer,
    ToolCallSpec,
    first_user_message,
    script_responder,
    tool_answer,
)
from tests.support.web import require_browser

MODEL = "m"
QUESTIONS = ba.BUNDLED_PAGES.parent / "questions.jsonl"
ROWS = {r["id"]: r for r in map(json.loads, QUESTIONS.read_text().splitlines())}
BROWSED = ("ba-08", "ba-14")
"""Searched and opened in the browser."""
UNBROWSED = "ba-01"
"""Answered at once, without a tool call: right answer, nothing fetched."""

SUITE = """
    [run]
    output_dir = "out"
    max_retries = 0
    cache = false
    tool_timeout = 300   # generous: the machine may be busy

    [[models]]
    name = "{model}"
    base_url = "{base_url}"
    api_key = "x"

    [[benchmarks]]
    name = "browser_assistant"
    backend = "agent"
    record_ids = {ids}
    [benchmarks.options]
    agent_tools = "browser"
    action_timeout = 120
    navigation_timeout = 120
"""


def script(row: dict[str, Any]) -> list[Any]:
    page = row["support"][0]
    title = store_for(str(ba.BUNDLED_PAGES)).pages[page].title
    return [tool_answer(ToolCallSpec("browser_type", {"element": "css=#q", "text": row["question"], "submit": True})),
            tool_answer(ToolCallSpec("browser_click", {"element": f'role=link[name="{title}"]'})),
            f"I read the page.\nANSWER: {row['answer']}\nSOURCES: {page}"]


@pytest.mark.slow
def test_a_scripted_agent_researches_the_bundle_in_the_browser(pytester: pytest.Pytester) -> None:
    require_browser()
    scripts = {ROWS[i]["question"]: script(ROWS[i]) for i in BROWSED}
    scripts[ROWS[UNBROWSED]["question"]] = [f"ANSWER: {ROWS[UNBROWSED]['answer']}\nSOURCES: "
                                            f"{ROWS[UNBROWSED]['support'][0]}"]
    with FakeOpenAIServer(script_responder(scripts)) as server:
        ids = json.dumps([*BROWSED, UNBROWSED])
        (pytester.path / "suite.toml").write_text(textwrap.dedent(SUITE.format(model=MODEL, base_url=server.base_url,
                                                                               ids=ids)))
        result = pytester.runpytest_subprocess("--jeval-config", "suite.toml", "-p", "no:cacheprovider", "-rA")
        chats = [r["body"] for r in server.requests if r["path"].endswith("/chat/completions")]
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(chats) == 3 * len(BROWSED) + 1
    names = [t.name for t in BROWSER_TOOLS]
    assert all([t["function"]["name"] for t in b["tools"]] == names for b in chats)
    assert all(b["messages"][0]["content"] == ba.BROWSER_SYSTEM for b in chats)
    assert not any("2:27:05" in first_user_message(b) for b in chats)  # the pages are not in the prompt

    out = pytester.path / "out"
    records = {r["record_id"]: r for r in map(json.loads, (out / f"browser_assistant_{MODEL}.jsonl").read_text()
                                               .splitlines())}
    assert set(records) == {*BROWSED, UNBROWSED}
    trajectories = {t["record_id"]: t for t in map(json.loads, (out / f"browser_assistant_{MODEL}.jsonl"
                                                                 ".trajectories.jsonl").read_text().splitlines())}
    for record_id in BROWSED:
        row, record = ROWS[record_id], records[record_id]
        assert record["is_correct"] is True and record["backend"] == "agent" and record["tool_calls"] == 2
        assert record["scoring_metadata"]["fetched"] == row["support"]  # the pages the local site served
        assert record["scoring_metadata"]["cited_unfetched"] == []
        typed, clicked = trajectories[record_id]["tool_calls"]
        assert typed["name"] == "browser_type" and clicked["name"] == "browser_click"
        assert typed["details"]["url"].startswith("http://127.0.0.1:") and "/search?q=" in typed["details"]["url"]
        assert clicked["details"]["url"].endswith(f"/pages/{row['support'][0]}")
        assert "blocked" not in typed["details"] and "blocked" not in clicked["details"]
        assert f"page id: {row['support'][0]}" in clicked["result"] and row["answer"] in clicked["result"]
    # answered without browsing: right and cited, but nothing fetched
    lazy = records[UNBROWSED]
    assert lazy["tool_calls"] == 0 and lazy["scoring_metadata"]["fetched"] == []
    assert lazy["scoring_metadata"]["cited_unfetched"] == ROWS[UNBROWSED]["support"]
