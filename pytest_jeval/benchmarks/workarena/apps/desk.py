"""A ServiceNow-style service desk: lists with filters and sorting, record forms, a service catalog, a knowledge base.

URLs follow ServiceNow's: ``/<table>_list.do?sysparm_query=...`` (conditions joined by ``^``, ``^OR``
for an OR filter, ``ORDERBY<field>`` / ``ORDERBYDESC<field>`` for the sort), ``/<table>.do?sys_id=<id>``
(``-1``: a new record), ``/catalog`` and ``/kb``. The list's filter is built with its condition
form (field, operator, value, AND/OR) and its sort by the column headers (a second click reverses)
or the "Add sort" form. The browser is the logged-in agent "System Administrator".
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import urllib.parse
from typing import Any

from aiohttp import web

from pytest_jeval.benchmarks._web.db import Database
from pytest_jeval.benchmarks._web.host import STATE_KEY
from pytest_jeval.benchmarks._web.html import e, field, form, int_arg, page, redirect, select, table, url

SITE = "ServiceDesk"
SEED = 424242
PRIORITIES = ["1 - Critical", "2 - High", "3 - Moderate", "4 - Low", "5 - Planning"]
CATEGORIES = ["inquiry", "software", "hardware", "network", "database"]
DEPARTMENTS = ["IT", "Sales", "Finance", "HR", "Engineering"]


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    label: str
    kind: str = "string"  # string | choice | user
    choices: tuple[str, ...] = ()


TABLES: dict[str, tuple[str, str, tuple[Field, ...]]] = {
    "incident": ("Incidents", "INC", (
        Field("number", "Number"), Field("short_description", "Short description"), Field("caller", "Caller", "user"),
        Field("category", "Category", "choice", tuple(CATEGORIES)),
        Field("priority", "Priority", "choice", tuple(PRIORITIES)),
        Field("state", "State", "choice", ("New", "In Progress", "On Hold", "Resolved", "Closed")),
        Field("assigned_to", "Assigned to", "user"))),
    "problem": ("Problems", "PRB", (
        Field("number", "Number"), Field("short_description", "Short description"),
        Field("priority", "Priority", "choice", tuple(PRIORITIES)),
        Field("state", "State", "choice", ("New", "Assess", "Root Cause Analysis", "Resolved", "Closed")),
        Field("assigned_to", "Assigned to", "user"))),
    "sys_user": ("Users", "", (
        Field("user_name", "User ID"), Field("first_name", "First name"), Field("last_name", "Last name"),
        Field("email", "Email"), Field("department", "Department", "choice", tuple(DEPARTMENTS)),
        Field("title", "Title"))),
    "sc_req_item": ("Requested Items", "RITM", (
        Field("number", "Number"), Field("item", "Item"), Field("quantity", "Quantity"),
        Field("options", "Options"), Field("requested_for", "Requested for", "user"), Field("request", "Request"))),
}
ITEMS = [
    {"id": 1, "name": "Standard Laptop", "category": "Hardware", "options": {"memory": ["8 GB", "16 GB", "32 GB"]}},
    {"id": 2, "name": "Developer Mouse", "category": "Hardware", "options": {"color": ["black", "white"]}},
    {"id": 3, "name": "Office 365 License", "category": "Software", "options": {"edition": ["Business", "Enterprise"]}},
    {"id": 4, "name": "Desk Phone", "category": "Hardware", "options": {"line": ["single", "dual"]}},
]
ARTICLES = [
    ("KB0010001", "Connecting to the guest Wi-Fi", "The guest network is JEVAL-GUEST. This month's guest password is "
     "orchid-lantern-42; it changes on the first Monday of each month."),
    ("KB0010002", "Resetting your VPN token", "Open the VPN portal, choose Reset token and enter reset code VX-7731 "
     "when asked. Tokens expire after 90 days."),
    ("KB0010003", "Printer driver installation", "Install the universal driver UPD 7.2 from the software center; the "
     "queue name is PRN-FLOOR-3."),
    ("KB0010004", "Expense policy: travel meals", "Travel meals are reimbursed up to 45 EUR per day with receipts."),
]
_FIRST = ["Beth", "Fred", "Abel", "Carol", "David", "Emily", "Hector", "Ines", "Jon", "Kara", "Luis", "Maya"]
_LAST = ["Anglin", "Luddy", "Tuter", "Baker", "Chen", "Diaz", "Evans", "Frost", "Green", "Hill", "Ito", "Jones"]
_WORDS = ["Email not syncing", "VPN drops", "Laptop slow", "Database timeout", "Printer jam", "Password reset",
          "Wi-Fi weak", "Disk full", "Report fails", "App crash", "License expired", "Monitor flickers"]


def _schema() -> str:
    out = []
    for table_name, (_, _, fields) in TABLES.items():
        cols = ", ".join(f"{f.name} TEXT" for f in fields)
        out.append(f"CREATE TABLE {table_name} (sys_id INTEGER PRIMARY KEY AUTOINCREMENT, {cols});")
    out.append("CREATE TABLE sc_request (sys_id INTEGER PRIMARY KEY AUTOINCREMENT, number TEXT);")
    out.append("CREATE TABLE kb_knowledge (sys_id INTEGER PRIMARY KEY AUTOINCREMENT, number TEXT, title TEXT, "
               "text TEXT);")
    return "\n".join(out)


def seed_rows() -> dict[str, list[dict[str, Any]]]:
    """The desk's initial rows (deterministic)."""
    rng = random.Random(SEED)
    users = [{"user_name": f"{f.lower()}.{l.lower()}", "first_name": f, "last_name": l,
              "email": f"{f.lower()}.{l.lower()}@example.com", "department": DEPARTMENTS[i % 5], "title": "Staff"}
             for i, (f, l) in enumerate(zip(_FIRST, _LAST))]
    names = [f"{u['first_name']} {u['last_name']}" for u in users]
    incidents = []
    for i in range(36):
        incidents.append({"number": f"INC{10001 + i:07d}", "short_description": rng.choice(_WORDS),
                          "caller": rng.choice(names), "category": CATEGORIES[rng.randrange(5)],
                          "priority": PRIORITIES[rng.randrange(5)],
                          "state": rng.choice(["New", "New", "In Progress", "On Hold", "Resolved", "Closed"]),
                          "assigned_to": rng.choice(["", *names[:4]])})
    problems = [{"number": f"PRB{40001 + i:07d}", "short_description": rng.choice(_WORDS),
                 "priority": PRIORITIES[rng.randrange(5)],
                 "state": rng.choice(["New", "Assess", "Root Cause Analysis", "Resolved"]),
                 "assigned_to": rng.choice(names[:5])} for i in range(18)]
    kb = [{"number": n, "title": t, "text": x} for n, t, x in ARTICLES]
    return {"sys_user": users, "incident": incidents, "problem": problems, "kb_knowledge": kb}


@dataclasses.dataclass
class DeskState:
    """An instance's database and the last seed row id of each table (rows above it were made in the episode)."""

    db: Database
    seed_max: dict[str, int]


def new_state() -> DeskState:
    """A fresh database with the seed rows."""
    db = Database(_schema())
    for name, rows in seed_rows().items():
        db.insert_many(name, rows)
    tables = [*TABLES, "sc_request", "kb_knowledge"]
    return DeskState(db, {t: int(db.value(f"SELECT COALESCE(MAX(sys_id), 0) FROM {t}")) for t in tables})


def _state(request: web.Request) -> DeskState:
    state: DeskState = request.app[STATE_KEY]
    return state


NAV = [("Home", "/"), ("Incidents", "/incident_list.do"), ("Create incident", "/incident.do?sys_id=-1"),
       ("Problems", "/problem_list.do"), ("Users", "/sys_user_list.do"), ("Service Catalog", "/catalog"),
       ("Requested Items", "/sc_req_item_list.do"), ("Knowledge", "/kb")]


def _view(title: str, body: str, flash: str = "") -> web.Response:
    return page(title, body, site=SITE, nav=NAV, flash=flash)


async def home(request: web.Request) -> web.Response:
    links = "".join(f'<li><a href="{e(h)}">{e(label)}</a></li>' for label, h in NAV[1:])
    return _view("Navigator", f'<nav aria-label="Application navigator"><ul>{links}</ul></nav>')


# ------------------------------------------------------------------------------------------- queries
OPERATORS = {"=": "is", "!=": "is not", "LIKE": "contains"}
_OR = re.compile(r"\^(?:OR(?!DERBY)|NQ)")
_SPLIT = re.compile(r"\^(?:OR(?!DERBY)|NQ)?")


def parse_query(query: str) -> tuple[str, list[tuple[str, str, str]], list[tuple[str, str]]]:
    """``(kind, conditions, sorts)`` of an encoded query: kind ``AND``/``OR``, conditions ``(field, op, value)``,
    sorts ``(field, asc|desc)``."""
    kind = "OR" if _OR.search(query) else "AND"
    parts = [p for p in _SPLIT.split(query) if p]
    conds, sorts = [], []
    for part in parts:
        if part.startswith("ORDERBYDESC"):
            sorts.append((part[len("ORDERBYDESC"):], "desc"))
        elif part.startswith("ORDERBY"):
            sorts.append((part[len("ORDERBY"):], "asc"))
        else:
            for op in ("!=", "LIKE", "="):
                if op in part:
                    name, value = part.split(op, 1)
                    conds.append((name, op, value))
                    break
    return kind, conds, sorts


def build_query(kind: str, conds: list[tuple[str, str, str]], sorts: list[tuple[str, str]]) -> str:
    """The encoded query of ``parse_query``'s parts."""
    joined = ("^OR" if kind == "OR" else "^").join(f"{f}{op}{v}" for f, op, v in conds)
    order = "^".join(("ORDERBYDESC" if d == "desc" else "ORDERBY") + f for f, d in sorts)
    return "^".join(p for p in (joined, order) if p)


def _list_url(table_name: str, query: str) -> str:
    return url(f"/{table_name}_list.do", sysparm_query=query)


async def list_view(request: web.Request) -> web.Response:
    table_name = request.match_info["table"]
    if table_name not in TABLES:
        raise web.HTTPNotFound(text="no such table")
    title, _, fields = TABLES[table_name]
    names = [f.name for f in fields]
    q = request.query
    query = q.get("sysparm_query", "")
    kind, conds, sorts = parse_query(query)
    if q.get("add_field") in names and q.get("add_op") in OPERATORS:  # the condition form: a new condition
        if not conds:
            kind = "OR" if q.get("add_kind") == "OR" else "AND"
        conds.append((q["add_field"], q["add_op"], q.get("add_value", "")))
        raise redirect(_list_url(table_name, build_query(kind, conds, sorts)))
    if q.get("sort_field") in names:  # the sort form: one more sort level
        sorts.append((q["sort_field"], "desc" if q.get("sort_dir") == "desc" else "asc"))
        raise redirect(_list_url(table_name, build_query(kind, conds, sorts)))
    conds = [c for c in conds if c[0] in names]
    sorts = [s for s in sorts if s[0] in names]
    where, params = [], []
    for name, op, value in conds:
        where.append(f"{name} {'LIKE' if op == 'LIKE' else op} ?")
        params.append(f"%{value}%" if op == "LIKE" else value)
    clause = (" OR " if kind == "OR" else " AND ").join(where) or "1=1"
    order = ", ".join(f"{n} {d}" for n, d in sorts) or "sys_id"
    rows = _state(request).db.rows(f"SELECT * FROM {table_name} WHERE {clause} ORDER BY {order}, sys_id", params)
    first = max(0, int_arg(request, "sysparm_first_row", 0))
    shown = rows[first:first + 20]

    def head(f: Field) -> str:
        current = sorts[0] if len(sorts) == 1 and sorts[0][0] == f.name else None
        direction = "desc" if current and current[1] == "asc" else "asc"
        target = build_query(kind, conds, [(f.name, direction)])
        return f'<a href="{e(_list_url(table_name, target))}">{e(f.label)}</a>'

    cells = [[f'<a href="/{table_name}.do?sys_id={r["sys_id"]}">{e(r[fields[0].name])}</a>',
              *(e(r[f.name]) for f in fields[1:])] for r in shown]
    crumbs = " &gt; ".join(f"{e(n)} {e(OPERATORS[o])} {e(v)}" for n, o, v in conds) or "All"
    crumbs += f' (<a href="{e(_list_url(table_name, ""))}">Clear filter</a>)' if conds or sorts else ""
    sort_text = ", ".join(f"{n} {d}" for n, d in sorts) or "none"
    condition = form(f"/{table_name}_list.do", f'<input type="hidden" name="sysparm_query" value="{e(query)}">'
                     + select("add_field", "Field", names, ident="filter-field")
                     + select("add_op", "Operator", list(OPERATORS), ident="filter-operator")
                     + field("add_value", "Value", ident="filter-value")
                     + (select("add_kind", "Match", ["AND", "OR"], ident="filter-kind") if not conds else ""),
                     "Add condition", method="get", ident="filter-form")
    sorter = form(f"/{table_name}_list.do", f'<input type="hidden" name="sysparm_query" value="{e(query)}">'
                  + select("sort_field", "Sort by", names, ident="sort-field")
                  + select("sort_dir", "Direction", ["asc", "desc"], ident="sort-dir"), "Add sort", method="get",
                  ident="sort-form")
    more = ""
    if first + 20 < len(rows):
        more = f'<a href="{e(url(request.path, sysparm_query=query, sysparm_first_row=first + 20))}">Next page</a>'
    if first > 0:
        more += f' <a href="{e(url(request.path, sysparm_query=query, sysparm_first_row=max(0, first - 20)))}">Previous page</a>'
    new = f'<p><a href="/{table_name}.do?sys_id=-1">New</a></p>' if table_name != "sc_req_item" else ""
    body = (f'<p id="breadcrumb">Filter: {crumbs}</p><p id="sorting">Sorted by: {e(sort_text)}</p>{condition}{sorter}'
            f'{new}<p>Rows {first + 1 if rows else 0} to {min(first + 20, len(rows))} of {len(rows)}</p>'
            f'{table([head(f) for f in fields], cells, ident="list")}<p>{more}</p>')
    return _view(title, body)


def _users(db: Database) -> list[str]:
    return ["", *(f"{u['first_name']} {u['last_name']}" for u in db.rows(
        "SELECT first_name, last_name FROM sys_user ORDER BY last_name, first_name"))]


async def form_view(request: web.Request) -> web.Response:
    table_name = request.match_info["table"]
    if table_name not in TABLES or table_name == "sc_req_item":
        raise web.HTTPNotFound(text="no such form")
    title, prefix, fields = TABLES[table_name]
    state = _state(request)
    db = state.db
    sys_id = request.query.get("sys_id", "-1")
    record: dict[str, Any] | None = None
    if sys_id != "-1":
        record = db.one(f"SELECT * FROM {table_name} WHERE sys_id = ?", (sys_id,))
        if record is None:
            raise web.HTTPNotFound(text="no such record")
    editable = [f for f in fields if f.name != "number"]
    if request.method == "POST":
        data = await request.post()
        values = {f.name: str(data.get(f.name, (record or {}).get(f.name) or "")) for f in editable}
        if table_name == "incident" and not values.get("short_description"):
            raise redirect(url(request.path, sys_id=sys_id, flash="Short description is mandatory."))
        if record is None:
            if prefix:
                count = int(db.value(f"SELECT COUNT(*) FROM {table_name}"))
                values["number"] = f"{prefix}{(10001 if prefix == 'INC' else 40001) + count:07d}"
            keys = list(values)
            new_id = db.execute(f"INSERT INTO {table_name} ({', '.join(keys)}) VALUES ({', '.join('?' for _ in keys)})",
                                [values[k] for k in keys])
            raise redirect(url(request.path, sys_id=new_id, flash="Record created."))
        sets = ", ".join(f"{k} = ?" for k in values)
        db.execute(f"UPDATE {table_name} SET {sets} WHERE sys_id = ?", [*values.values(), sys_id])
        raise redirect(url(request.path, sys_id=sys_id, flash="Record updated."))
    users = _users(db)
    inner = []
    for f in fields:
        current = str((record or {}).get(f.name) or "")
        if f.name == "number":
            inner.append(f'<p>Number: <span id="number">{e(current or "(assigned on submit)")}</span></p>')
        elif f.kind == "choice":
            inner.append(select(f.name, f.label, ["", *f.choices], current))
        elif f.kind == "user":
            inner.append(select(f.name, f.label, users, current))
        else:
            inner.append(field(f.name, f.label, current))
    heading = f"{title[:-1]} {record.get('number') or record.get('user_name')}" if record else f"New {title[:-1]}"
    return _view(heading, form(url(request.path, sys_id=sys_id), "".join(inner), "Update" if record else "Submit",
                               ident="record-form"), flash=request.query.get("flash", ""))


async def catalog(request: web.Request) -> web.Response:
    listed = "".join(f'<li><a href="/catalog/item/{i["id"]}">{e(i["name"])}</a> ({e(i["category"])})</li>' for i in ITEMS)
    return _view("Service Catalog", f'<ul id="catalog">{listed}</ul>')


async def catalog_item(request: web.Request) -> web.Response:
    item = next((i for i in ITEMS if str(i["id"]) == request.match_info["iid"]), None)
    if item is None:
        raise web.HTTPNotFound(text="no such item")
    db = _state(request).db
    options: dict[str, list[str]] = item["options"]  # type: ignore[assignment]
    if request.method == "POST":
        data = await request.post()
        chosen = {k: str(data.get(k, v[0])) for k, v in options.items()}
        quantity = str(data.get("quantity", "1"))
        count = int(db.value("SELECT COUNT(*) FROM sc_request"))
        req = f"REQ{10001 + count:07d}"
        db.execute("INSERT INTO sc_request (number) VALUES (?)", (req,))
        ritm = f"RITM{10001 + int(db.value('SELECT COUNT(*) FROM sc_req_item')):07d}"
        db.execute("INSERT INTO sc_req_item (number, item, quantity, options, requested_for, request) VALUES "
                   "(?, ?, ?, ?, ?, ?)", (ritm, item["name"], quantity, json.dumps(chosen, sort_keys=True),
                                          str(data.get("requested_for", "")) or "System Administrator", req))
        raise redirect(f"/catalog/order/{req}")
    inner = "".join(select(k, k.title(), v) for k, v in options.items())
    inner += select("quantity", "Quantity", [str(n) for n in range(1, 6)])
    inner += select("requested_for", "Requested for", ["System Administrator", *_users(db)[1:]])
    return _view(str(item["name"]), form(request.path, inner, "Order Now", ident="order-form"))


async def order_done(request: web.Request) -> web.Response:
    req = request.match_info["req"]
    rows = _state(request).db.rows("SELECT * FROM sc_req_item WHERE request = ?", (req,))
    listed = "".join(f"<li>{e(r['number'])}: {e(r['item'])} x {e(r['quantity'])} {e(r['options'])}</li>" for r in rows)
    return _view("Order Status", f"<p>Thank you, your request has been submitted: <strong>{e(req)}</strong></p><ul>{listed}</ul>")


async def kb(request: web.Request) -> web.Response:
    q = request.query.get("q", "").strip()
    db = _state(request).db
    rows = db.rows("SELECT * FROM kb_knowledge WHERE title LIKE ? OR text LIKE ? ORDER BY number", (f"%{q}%", f"%{q}%"))
    listed = "".join(f'<li><a href="/kb/{e(r["number"])}">{e(r["number"])}: {e(r["title"])}</a></li>' for r in rows)
    box = form("/kb", field("q", "Search knowledge", q), "Search", method="get")
    return _view("Knowledge", f'{box}<ul id="articles">{listed or "<li>No articles.</li>"}</ul>')


async def kb_article(request: web.Request) -> web.Response:
    r = _state(request).db.one("SELECT * FROM kb_knowledge WHERE number = ?", (request.match_info["number"],))
    if r is None:
        raise web.HTTPNotFound(text="no such article")
    return _view(str(r["title"]), f'<p>{e(r["number"])}</p><article id="article-text">{e(r["text"])}</article>')


def make_app() -> web.Application:
    """A new service desk instance (fresh database)."""
    app = web.Application()
    app[STATE_KEY] = new_state()
    app.add_routes([
        web.get("/", home), web.get("/{table}_list.do", list_view), web.route("*", "/{table}.do", form_view),
        web.get("/catalog", catalog), web.route("*", "/catalog/item/{iid}", catalog_item),
        web.get("/catalog/order/{req}", order_done), web.get("/kb", kb), web.get("/kb/{number}", kb_article),
    ])
    return app


def query_of(page_url: str) -> str:
    """The ``sysparm_query`` of a list URL (decoded)."""
    return urllib.parse.parse_qs(urllib.parse.urlparse(page_url).query).get("sysparm_query", [""])[0]
