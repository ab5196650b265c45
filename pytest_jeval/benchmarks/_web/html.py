"""The HTML the applications render: escaped text, a page layout, tables, pagers and forms."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from aiohttp import web

STYLE = """body{font-family:sans-serif;margin:0;color:#222}header{background:#24364b;color:#fff;padding:8px 16px}
header a{color:#fff;margin-right:14px;text-decoration:none}main{padding:12px 16px}table{border-collapse:collapse}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}.pager a,.pager span{margin-right:8px}
.flash{background:#e7f6e7;border:1px solid #7b7;padding:6px;margin-bottom:8px}label{display:block;margin-top:6px}"""


def e(value: Any) -> str:
    """Escaped text."""
    return escape("" if value is None else str(value), quote=True)


def url(path: str, **query: Any) -> str:
    """``path`` with the non-empty query parameters."""
    kept = {k: v for k, v in query.items() if v not in (None, "")}
    return path + ("?" + urllib.parse.urlencode(kept) if kept else "")


def page(title: str, body: str, *, site: str, nav: Sequence[tuple[str, str]] = (), flash: str = "") -> web.Response:
    """A whole page: the site's header with its navigation links, an optional notice, the body."""
    links = "".join(f'<a href="{e(href)}">{e(label)}</a>' for label, href in nav)
    note = f'<div class="flash" role="status">{e(flash)}</div>' if flash else ""
    text = (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{e(title)} | {e(site)}</title>"
            f"<style>{STYLE}</style></head><body><header><strong>{e(site)}</strong> <nav>{links}</nav></header>"
            f"<main><h1>{e(title)}</h1>{note}{body}</main></body></html>")
    return web.Response(text=text, content_type="text/html")


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, ident: str = "") -> str:
    """A table; cells are HTML already (escape text with :func:`e`)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    attr = f' id="{e(ident)}"' if ident else ""
    return f"<table{attr}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def pager(path: str, current: int, pages: int, query: Mapping[str, Any] | None = None) -> str:
    """Links to the other pages of a paged list (``p`` = 1-based page number)."""
    if pages <= 1:
        return f'<p class="pager">Page {current} of {max(pages, 1)}</p>'
    parts = [f"<span>Page {current} of {pages}</span>"]
    base = dict(query or {})
    if current > 1:
        parts.append(f'<a href="{e(url(path, **{**base, "p": current - 1}))}">Previous page</a>')
    if current < pages:
        parts.append(f'<a href="{e(url(path, **{**base, "p": current + 1}))}">Next page</a>')
    return f'<nav class="pager" aria-label="Pages">{"".join(parts)}</nav>'


def paged(items: Sequence[Any], page_no: int, size: int) -> tuple[list[Any], int, int]:
    """The items of page ``page_no`` (clamped), that page number and the number of pages."""
    pages = max(1, -(-len(items) // size))
    current = min(max(1, page_no), pages)
    return list(items[(current - 1) * size: current * size]), current, pages


def int_arg(request: web.Request, name: str, default: int = 1) -> int:
    """An integer query parameter (the default when absent or not a number)."""
    try:
        return int(request.query.get(name, default))
    except ValueError:
        return default


def select(name: str, label: str, options: Sequence[str], chosen: str = "", *, ident: str = "") -> str:
    """A labelled drop-down list."""
    ident = ident or name
    opts = "".join(f'<option value="{e(o)}"{" selected" if o == chosen else ""}>{e(o)}</option>' for o in options)
    return f'<label for="{e(ident)}">{e(label)}</label><select id="{e(ident)}" name="{e(name)}">{opts}</select>'


def field(name: str, label: str, value: Any = "", *, kind: str = "text", ident: str = "") -> str:
    """A labelled input (``kind="textarea"`` for a text area)."""
    ident = ident or name
    if kind == "textarea":
        control = f'<textarea id="{e(ident)}" name="{e(name)}" rows="4" cols="60">{e(value)}</textarea>'
    else:
        control = f'<input id="{e(ident)}" name="{e(name)}" type="{e(kind)}" value="{e(value)}">'
    return f'<label for="{e(ident)}">{e(label)}</label>{control}'


def form(action: str, inner: str, submit: str, *, method: str = "post", ident: str = "") -> str:
    """A form with one submit button."""
    attr = f' id="{e(ident)}"' if ident else ""
    return (f'<form{attr} method="{method}" action="{e(action)}">{inner}'
            f'<p><button type="submit">{e(submit)}</button></p></form>')


def redirect(location: str) -> web.HTTPFound:
    """A 302 to ``location`` (raise it)."""
    return web.HTTPFound(location)


def money(value: float) -> str:
    """``$1,234.50``."""
    return f"${value:,.2f}"
