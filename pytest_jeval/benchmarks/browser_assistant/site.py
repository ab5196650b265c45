"""browser_assistant's page bundle as a local web site, for the browser tools (``agent_tools = "browser"``).

One instance per episode on 127.0.0.1 (:mod:`pytest_jeval.benchmarks._web.host`), read-only:

* ``/``: a search form (``q``) over the collection;
* ``/search?q=...``: the same five best keyword matches as the ``search_pages`` tool (title as a link to the
  page, page id, original URL, date and a snippet);
* ``/pages/<id>``: the page's own HTML file as bundled, with a banner after ``<body>`` giving what the
  ``fetch_page`` tool shows above a page's text (page id, original URL, site, date), so the two tool sets
  show the same facts. Links of the pages to other paths (``/contact``) are not found (404).

Every page served is recorded (:attr:`Visits.pages`, exported as ``{"visited": [...]}``): the benchmark's
"pages fetched" in browser mode.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from aiohttp import web

from pytest_jeval.benchmarks._web.host import STATE_KEY
from pytest_jeval.benchmarks._web.html import e, field, form, page
from pytest_jeval.benchmarks.browser_assistant.pages import Page, PageStore, store_for

SITE = "Page collection"
#: Characters of a page's text in a search result (as ``search_pages``).
SNIPPET_CHARS = 160
_BODY = re.compile(r"<body\b[^>]*>", re.I)


@dataclasses.dataclass
class Visits:
    """The pages an instance served, in order (its exportable state)."""

    pages: list[str] = dataclasses.field(default_factory=list)

    def export(self) -> dict[str, Any]:
        """``{"visited": [page ids]}``."""
        return {"visited": list(self.pages)}


@dataclasses.dataclass
class SiteState:
    """An instance's state: the page store and what it served (``db``, as the other local applications)."""

    store: PageStore
    directory: Path
    db: Visits = dataclasses.field(default_factory=Visits)


def page_path(page_id: str) -> str:
    """The path of a page on the site."""
    return f"/pages/{page_id}"


def banner(found: Page) -> str:
    """The line shown above a page: its id, original URL, site and date."""
    parts = [f"page id: {found.id}"] + [f"{label}: {value}" for label, value in
                                        (("URL", found.url), ("site", found.site), ("date", found.date)) if value]
    return f'<div role="banner" class="jeval-page-info">{e(" | ".join(parts))}</div>'


def _search_form(query: str = "") -> str:
    return form("/search", field("q", "Search the collection", query, kind="search"), "Search", method="get",
                ident="search")


async def home(request: web.Request) -> web.Response:
    """The search form."""
    return page("Search", _search_form() + "<p>Search the collection by keywords.</p>", site=SITE,
                nav=(("Search", "/"),))


async def search(request: web.Request) -> web.Response:
    """The five best matches of ``q`` (as ``search_pages``)."""
    state: SiteState = request.app[STATE_KEY]
    query = request.query.get("q", "").strip()
    found = state.store.search(query) if query else []
    if not found:
        body = f"<p>No page matches {e(query)!s}.</p>" if query else "<p>Type some keywords.</p>"
    else:
        items = "".join(
            f'<li><a href="{e(page_path(p.id))}">{e(p.title)}</a><br>page id: {e(p.id)}'
            f'{" | URL: " + e(p.url) if p.url else ""}{" | date: " + e(p.date) if p.date else ""}'
            f"<p>{e(p.text[:SNIPPET_CHARS])}</p></li>" for p in found)
        body = f'<ol aria-label="Results">{items}</ol>'
    return page(f"Results for {query}" if query else "Search", _search_form(query) + body, site=SITE,
                nav=(("Search", "/"),))


async def show(request: web.Request) -> web.Response:
    """A page of the collection, as bundled, with its banner."""
    state: SiteState = request.app[STATE_KEY]
    page_id = request.match_info["page_id"]
    found = state.store.pages.get(page_id)
    if found is None:
        raise web.HTTPNotFound(text=f"no page {page_id!r} in the collection")
    state.db.pages.append(page_id)
    source = (state.directory / f"{page_id}.html").read_text(encoding="utf-8")
    match = _BODY.search(source)
    at = match.end() if match else 0
    return web.Response(text=source[:at] + banner(found) + source[at:], content_type="text/html")


def make_app(directory: str) -> web.Application:
    """A new instance over the pages of ``directory`` (``*.html``)."""
    app = web.Application()
    app[STATE_KEY] = SiteState(store=store_for(directory), directory=Path(directory))
    app.add_routes([web.get("/", home), web.get("/search", search), web.get("/pages/{page_id}", show)])
    return app
