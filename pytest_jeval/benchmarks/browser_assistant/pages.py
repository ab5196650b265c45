"""HTML pages to plain text, deterministically, and a store of pages with a small keyword search.

:func:`html_to_text` keeps what a reader sees of a page's content: the ``<title>``, then the
body's headings, paragraphs, list items and table rows, one block per line; ``<script>``,
``<style>``, ``<nav>`` and ``<footer>`` are dropped and whitespace is collapsed. Only the
standard library's :mod:`html.parser` is used, so the same file always gives the same text.

A page's id is its file name without ``.html``; its URL, date and site come from the
``<meta name="url|date|site">`` tags (empty when absent).
"""

from __future__ import annotations

import dataclasses
import functools
import html.parser
import re
from pathlib import Path

_SKIP = frozenset({"script", "style", "nav", "footer", "noscript", "template"})
_BLOCKS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "div", "article", "section", "br",
                     "blockquote", "pre", "dt", "dd", "table", "ul", "ol"})
_CELLS = frozenset({"td", "th"})
_WORD = re.compile(r"[a-z0-9]+")


class _TextParser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.skip = 0
        self.in_title = False
        self.title: list[str] = []
        self.meta: dict[str, str] = {}
        self.blocks: list[str] = []
        self.current: list[str] = []

    def _flush(self) -> None:
        text = " ".join("".join(self.current).split())
        if text:
            self.blocks.append(text)
        self.current = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
        elif tag == "title":
            self.in_title = True
        elif tag == "meta":
            found = dict(attrs)
            if found.get("name") and found.get("content") is not None:
                self.meta[str(found["name"]).lower()] = str(found["content"])
        elif tag in _BLOCKS:
            self._flush()
        elif tag in _CELLS and self.current and "".join(self.current).strip():
            self.current.append(": " if tag == "td" else " | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "title":
            self.in_title = False
        elif tag in _BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.in_title:
            self.title.append(data)
        else:
            self.current.append(data)

    def close(self) -> None:
        super().close()
        self._flush()


@dataclasses.dataclass(frozen=True)
class Page:
    """One page of the bundle, as text."""

    id: str
    url: str
    title: str
    date: str
    site: str
    text: str
    """The visible content, one block per line (the title is not repeated)."""

    def render(self) -> str:
        """The page as shown to the model: id, title, site, URL and date, then the text."""
        head = [f"[page: {self.id}] {self.title}", f"URL: {self.url}" if self.url else "",
                f"Site: {self.site}" if self.site else "", f"Date: {self.date}" if self.date else ""]
        return "\n".join([line for line in head if line] + ["", self.text])


def html_to_text(source: str) -> tuple[str, dict[str, str], str]:
    """``(title, meta tags, text)`` of an HTML document (see the module docstring)."""
    parser = _TextParser()
    parser.feed(source)
    parser.close()
    title = " ".join("".join(parser.title).split())
    blocks = list(parser.blocks)
    if blocks and blocks[0] == title:
        blocks = blocks[1:]  # the <h1> repeating the <title>
    return title, parser.meta, "\n".join(blocks)


def load_page(path: Path) -> Page:
    """The page of one HTML file."""
    title, meta, text = html_to_text(path.read_text(encoding="utf-8"))
    return Page(id=path.stem, url=meta.get("url", ""), title=title, date=meta.get("date", ""),
                site=meta.get("site", ""), text=text)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class PageStore:
    """Every page of a directory of ``*.html`` files, by id and by URL."""

    def __init__(self, pages: list[Page]) -> None:
        self.pages = {p.id: p for p in sorted(pages, key=lambda p: p.id)}
        self.by_url = {p.url.rstrip("/"): p for p in self.pages.values() if p.url}

    @classmethod
    def from_dir(cls, directory: Path) -> PageStore:
        """Load ``directory/*.html`` (sorted by name); ValueError when there is none."""
        files = sorted(directory.glob("*.html"))
        if not files:
            raise ValueError(f"{directory}: no *.html pages")
        return cls([load_page(f) for f in files])

    def get(self, ref: str) -> Page | None:
        """The page with this id or URL (a trailing slash, ``.html`` or surrounding spaces ignored)."""
        key = ref.strip()
        found = self.pages.get(key) or self.pages.get(key.removesuffix(".html"))
        return found or self.by_url.get(key.rstrip("/"))

    def search(self, query: str, limit: int = 5) -> list[Page]:
        """Pages ranked by how many distinct query words they contain (title words count twice), then by id.

        Pages matching no query word are left out.
        """
        wanted = set(_words(query))
        scored = []
        for page in self.pages.values():
            body, title = set(_words(page.text)), set(_words(page.title))
            hits = len(wanted & body) + 2 * len(wanted & title)
            if hits:
                scored.append((-hits, page.id, page))
        return [p for _, _, p in sorted(scored)[:limit]]


@functools.lru_cache(maxsize=8)
def store_for(directory: str) -> PageStore:
    """The store of a directory, loaded once per process."""
    return PageStore.from_dir(Path(directory))
