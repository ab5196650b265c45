"""browser_assistant's bundle as a local site (``agent_tools = "browser"``): what it serves, and an episode's
environment: a fresh site and a browser confined to it, open on the search page."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_jeval.agents import ToolError
from pytest_jeval.benchmarks._web.env import WebEnv
from pytest_jeval.benchmarks._web.host import start_app
from pytest_jeval.benchmarks.browser_assistant import bench_browser_assistant as ba
from pytest_jeval.benchmarks.browser_assistant import site
from pytest_jeval.benchmarks.browser_assistant.pages import store_for
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import DatasetLoadError
from tests.support.web import require_browser

QUESTIONS = ba.BUNDLED_PAGES.parent / "questions.jsonl"


def sample(record_id: str, **options: object) -> Sample:
    ctx = LoadContext(benchmark="browser_assistant", subset=None, seed=0, data_dir=None,
                      options=ba.Options.model_validate(options))
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines()]
    found = ba.to_sample(next(r for r in rows if r["id"] == record_id), 0, ctx)
    assert found is not None
    return found


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_the_site_serves_the_search_and_the_pages_and_records_the_visits() -> None:
    store = store_for(str(ba.BUNDLED_PAGES))
    app = start_app("pages", lambda: site.make_app(str(ba.BUNDLED_PAGES)))
    try:
        status, home = get(app.base_url + "/")
        assert status == 200 and 'name="q"' in home and 'action="/search"' in home
        status, results = get(app.base_url + "/search?q=Kelvara+bridge+toll")
        wanted = [p.id for p in store.search("Kelvara bridge toll")]
        assert status == 200 and wanted[0] == "kelvara-bridge-authority" and len(wanted) == 3
        assert [line.split('"')[0] for line in results.split('href="/pages/')[1:]] == wanted  # search_pages' order
        status, text = get(app.base_url + "/pages/kelvara-bridge-authority")
        assert status == 200
        assert "page id: kelvara-bridge-authority | URL: https://kelvara-bridge.example.gov/about" in text
        assert "the bridge&#x27;s total length is 1,284 metres" in text  # the bundled HTML itself
        assert text.index('role="banner"') > text.index("<body>")
        assert get(app.base_url + "/pages/no-such-page")[0] == 404
        assert get(app.base_url + "/contact")[0] == 404
        get(app.base_url + "/pages/orrin-news-2019")
        assert app.state.db.export() == {"visited": ["kelvara-bridge-authority", "orrin-news-2019"]}
    finally:
        app.stop()


def test_the_option_picks_the_tools_and_the_prompt() -> None:
    pages, browser = sample("ba-01"), sample("ba-01", agent_tools="browser")
    assert [t.name for t in ba.agent_tools(pages)] == ["search_pages", "fetch_page"]
    assert [t.name for t in ba.agent_tools(browser)][:3] == ["browser_navigate", "browser_click", "browser_type"]
    assert isinstance(ba.agent_prompt(pages), str)
    messages = ba.agent_prompt(browser)
    assert isinstance(messages, list) and messages[0]["role"] == "system"
    assert "search page" in messages[1]["content"] and "ANSWER:" in messages[1]["content"]
    assert ba.environment(pages, Path("/nonexistent")) is store_for(str(ba.BUNDLED_PAGES))
    with pytest.raises(ValidationError, match="agent_tools"):
        ba.Options.model_validate({"agent_tools": "chrome"})


def test_without_a_browser_the_browser_mode_is_refused_with_the_install_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JEVAL_CHROMIUM", "/nonexistent/chromium")
    assert sample("ba-01").metadata["agent_tools"] == "pages"  # the default needs no browser
    with pytest.raises(DatasetLoadError, match=r"browser_assistant cannot run here: .*apt-get install -y chromium"):
        sample("ba-01", agent_tools="browser")


def test_a_browser_episode_gets_a_fresh_site_and_a_confined_browser_on_the_search_page() -> None:
    require_browser()
    s = sample("ba-01", agent_tools="browser", action_timeout=120, navigation_timeout=120)
    first, second = (ba.environment(s, Path("/nonexistent")) for _ in range(2))
    try:
        assert isinstance(first, WebEnv) and isinstance(second, WebEnv)
        assert first.apps["pages"].base_url != second.apps["pages"].base_url  # an instance per episode
        b = first.browser
        assert b is not None
        assert b.current_url() == first.apps["pages"].base_url + "/"
        out = b.service.call(lambda: b.type("css=#q", "Kelvara bridge length", True), 120)
        assert "/search?q=Kelvara" in out.details["url"] and "About the Kelvara Bridge" in out.text
        out = b.service.call(lambda: b.click('role=link[name="About the Kelvara Bridge"]'), 120)
        assert out.details["url"].endswith("/pages/kelvara-bridge-authority")
        assert "page id: kelvara-bridge-authority" in out.text and "1,284 metres" in out.text
        # the page's analytics script and links stay on the site; another episode's site is another origin
        other = second.apps["pages"].base_url + "/pages/orrin-news-2019"
        with pytest.raises(ToolError, match="blocked"):
            b.service.call(lambda: b.navigate(other), 120)
        assert [x.url for x in b.blocked] == [other]
        assert first.export_state() == {"pages": {"visited": ["kelvara-bridge-authority"]}}
        assert second.export_state() == {"pages": {"visited": []}}
    finally:
        for env in (first, second):
            env.close()
    assert first.browser is not None and first.browser.closed
