"""The browser tools on a real headless Chromium: confinement, popups, pages that never load, references,
the trajectory's details, and the episode loop never hanging on a bad page."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web

from pytest_jeval.agents.loop import Limits, run_episode
from pytest_jeval.agents.tool import ToolContext, ToolError, ToolOutput
from pytest_jeval.agents.tools import TOOLS
from pytest_jeval.agents.tools.browser import BROWSER_TOOLS, BrowserConfig, BrowserSession, origin_of
from pytest_jeval.agents.tools.browser._snapshot import cap, format_tree
from pytest_jeval.core.chat import Reply, ToolCall
from pytest_jeval.core.sample import Sample
from tests.support.web import html, require_browser, serve


def test_origins_and_the_family_are_registered() -> None:
    assert origin_of("HTTP://Example.org/x?y") == "http://example.org:80"
    assert origin_of("https://127.0.0.1:8443/") == "https://127.0.0.1:8443"
    assert origin_of("ws://127.0.0.1:5/s") == "http://127.0.0.1:5"
    assert origin_of("about:blank") == ""
    for t in BROWSER_TOOLS:
        assert TOOLS.get(t.name) is t and t.context_param == "ctx" and not t.blocking


def test_the_snapshot_prunes_and_keeps_references() -> None:
    nodes = [
        {"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "Shop"}, "backendDOMNodeId": 1,
         "childIds": ["2"]},
        {"nodeId": "2", "role": {"value": "generic"}, "name": {"value": ""}, "backendDOMNodeId": 2,
         "childIds": ["3", "5"]},
        {"nodeId": "3", "role": {"value": "link"}, "name": {"value": "Orders"}, "backendDOMNodeId": 30,
         "childIds": ["4"]},
        {"nodeId": "4", "role": {"value": "StaticText"}, "name": {"value": "Orders"}, "backendDOMNodeId": 31},
        {"nodeId": "5", "role": {"value": "checkbox"}, "name": {"value": "Gift"}, "backendDOMNodeId": 50,
         "properties": [{"name": "checked", "value": {"value": "true"}}]},
    ]
    snap = format_tree(nodes)
    assert snap.text == '[1] RootWebArea "Shop"\n  [30] link "Orders"\n  [50] checkbox "Gift" checked'
    assert snap.refs[30] == 'link "Orders"' and 2 not in snap.refs and 31 not in snap.refs
    assert cap("a\nb\nc\nd", 4) == "a\nb\n[... 2 more lines of the snapshot not shown ...]"


@pytest.fixture
def probe() -> dict[str, object]:
    require_browser()
    return {}


def _act(session: BrowserSession, make, timeout: float = 60):  # type: ignore[no-untyped-def]
    return session.service.call(lambda: make(session), timeout)


def test_requests_outside_the_allowed_origins_are_blocked_and_recorded(probe: dict[str, object]) -> None:
    hits: list[str] = []

    async def count(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.Response(text="leaked")

    # another origin on this machine (another port): a request reaching it would be counted
    with serve([web.get("/{tail:.*}", count)]) as other:
        page = (f'<h1>Probe</h1><img src="{other}/img.png"><script>fetch("{other}/fetch").catch(() => 0);'
                f'new WebSocket("{other.replace("http", "ws")}/ws");</script><a href="{other}/away">Away</a>')
        with serve([web.get("/", html(page))]) as base:
            session = BrowserSession.open(BrowserConfig(allowed_origins=[base]), base + "/")
            try:
                out = _act(session, lambda s: s.read())
                assert "Probe" in out.text
                with pytest.raises(ToolError, match="outside the origins") as caught:
                    _act(session, lambda s: s.navigate(other + "/direct"))
                assert caught.value.details is not None and caught.value.details["url"].startswith(base)
                _act(session, lambda s: s.click('role=link[name="Away"]'))  # a click to another origin: blocked too
                assert session.current_url().startswith(base) or session.current_url().startswith("chrome-error")
                blocked = {b.url.replace(other, "") for b in session.blocked}
                assert {"/img.png", "/fetch", "/direct", "/away"} <= blocked, blocked
                assert any(b.kind == "websocket" for b in session.blocked)
            finally:
                session.close()
    assert hits == []  # nothing reached the other origin


def test_popups_dialogs_and_a_page_that_never_loads_do_not_hang(probe: dict[str, object]) -> None:
    async def never(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = "text/html"
        await response.prepare(request)
        await response.write(b"<html><body><h1>Half a page</h1>")
        await asyncio.sleep(3600)
        return response

    spam = '<button onclick="setInterval(() => window.open(\'/\'), 5); alert(\'hi\')">Spam</button><h1>Home</h1>'
    with serve([web.get("/", html(spam)), web.get("/never", never)]) as base:
        session = BrowserSession.open(BrowserConfig(allowed_origins=[base], navigation_timeout=2, action_timeout=2),
                                      base + "/")
        try:
            out = _act(session, lambda s: s.click("text=Spam"))
            assert out.details["dialogs"] == ["alert: hi"]
            later = _act(session, lambda s: s.read())
            assert len(session.popups) >= 1 and session.current_url() == base + "/"
            assert "Home" in later.text
            slow = _act(session, lambda s: s.navigate(base + "/never"))
            assert "did not finish loading within 2s" in slow.text and "Half a page" in slow.text
            assert slow.details["note"].startswith("the page did not finish loading")
        finally:
            session.close()


def test_references_name_elements_and_forms_work(probe: dict[str, object]) -> None:
    async def search(request: web.Request) -> web.Response:
        return web.Response(text=f"<title>Found</title><p>You searched {request.query['q']} in "
                            f"{request.query['where']}</p>", content_type="text/html")

    page = ('<form action="/search"><input name="q" aria-label="Query"><select name="where" aria-label="Where">'
            '<option>shop</option><option>forum</option></select><button>Go</button></form>')
    with serve([web.get("/", html(page)), web.get("/search", search)]) as base:
        session = BrowserSession.open(BrowserConfig(allowed_origins=[base]), base + "/")
        try:
            snap = session.service.call(lambda: session.snapshot(), 30)
            query = next(r for r, line in snap.refs.items() if line.startswith('textbox "Query"'))
            _act(session, lambda s: s.select("css=select", "forum"))
            typed = _act(session, lambda s: s.type(f"[{query}]", "mugs", True))
            assert "You searched mugs in forum" in typed.text and typed.details["url"].endswith("q=mugs&where=forum")
            assert typed.details["target"].startswith(f'[{query}] textbox "Query"')
            with pytest.raises(ToolError, match="no element"):
                _act(session, lambda s: s.click(999999))
        finally:
            session.close()


@pytest.mark.slow
def test_the_loop_records_details_and_a_limit_stops_a_stuck_episode(probe: dict[str, object], tmp_path: Path) -> None:
    async def never(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await asyncio.sleep(3600)
        return response

    with serve([web.get("/", html("<h1>Start</h1>")), web.get("/never", never)]) as base:
        session = BrowserSession.open(BrowserConfig(allowed_origins=[base], navigation_timeout=30), base + "/")
        try:
            calls = iter([ToolCall("c1", "browser_snapshot", "{}"),
                          ToolCall("c2", "browser_navigate", json.dumps({"url": base + "/never"}))])

            async def model(conversation: object) -> Reply:
                call = next(calls, None)
                return Reply(text="", model="m", tool_calls=(call,) if call else ())

            ctx = ToolContext(sample=Sample(id="s", input="x"), workspace=tmp_path, state=session)
            episode = asyncio.run(run_episode([{"role": "user", "content": "go"}], tools=list(BROWSER_TOOLS),
                                              call_model=model, ctx=ctx,
                                              limits=Limits(time_limit=6, tool_timeout=60)))
        finally:
            session.close()
    first = episode.tool_calls[0]
    assert first.details is not None and first.details["action"] == "snapshot" and "Start" in first.details["snapshot"]
    assert episode.stop_reason == "time_limit"  # the page that never answers did not hang the episode
    assert "timed out" in (episode.tool_calls[1].error or "")
    assert isinstance(ToolOutput("x").details, dict)


def test_two_sessions_do_not_share_cookies(probe: dict[str, object]) -> None:
    async def visit(request: web.Request) -> web.Response:
        seen = request.cookies.get("who", "nobody")
        response = web.Response(text=f"<title>{seen}</title><p>seen {seen}</p>", content_type="text/html")
        response.set_cookie("who", request.query.get("me", seen))
        return response

    with serve([web.get("/", visit)]) as base:
        a = BrowserSession.open(BrowserConfig(allowed_origins=[base]), base + "/?me=alice")
        b = BrowserSession.open(BrowserConfig(allowed_origins=[base]), base + "/")
        try:
            assert "seen alice" in _act(a, lambda s: s.navigate(base + "/")).text
            assert "seen nobody" in _act(b, lambda s: s.navigate(base + "/")).text
        finally:
            a.close()
            b.close()
