"""The forum (Postmill-like, as WebArena's reddit site): forums, submissions with votes and comments, posting."""

from __future__ import annotations

import dataclasses
import random
import re

from aiohttp import web

from pytest_jeval.benchmarks._web.db import Database
from pytest_jeval.benchmarks._web.host import STATE_KEY
from pytest_jeval.benchmarks._web.html import e, field, form, int_arg, page, paged, pager, redirect, select, url

SITE = "Postmill"
USER = "jeval_user"
"""The logged-in user."""
SEED = 7319

SCHEMA = """
CREATE TABLE forum (name TEXT PRIMARY KEY, description TEXT);
CREATE TABLE submission (id INTEGER PRIMARY KEY AUTOINCREMENT, forum TEXT, title TEXT, body TEXT, author TEXT,
                         score INTEGER, created TEXT);
CREATE TABLE comment (id INTEGER PRIMARY KEY AUTOINCREMENT, submission_id INTEGER, author TEXT, body TEXT);
CREATE TABLE vote (submission_id INTEGER, user TEXT, PRIMARY KEY (submission_id, user));
"""

#: Forums and how many submissions each starts with (news most, movies second).
FORUMS = [("news", 24), ("movies", 17), ("books", 14), ("gaming", 11), ("science", 8), ("AskForum", 5)]
_AUTHORS = ["Tarn_Helm", "quietfox", "MapleJune", "orbital_kat", "drift_wood", "Pixel_Pine", "lumen88", "harbor_light"]
_WORDS = ["city", "council", "launch", "review", "festival", "river", "record", "budget", "storm", "museum", "robot",
          "library", "market", "bridge", "season", "vote", "study", "garden", "signal", "island"]


def seed_rows() -> dict[str, list[dict[str, object]]]:
    """The forum's initial rows (deterministic; every submission title is distinct)."""
    rng = random.Random(SEED)
    forums: list[dict[str, object]] = [{"name": n, "description": f"Discussion about {n.lower()}."} for n, _ in FORUMS]
    subs: list[dict[str, object]] = []
    comments: list[dict[str, object]] = []
    seen: set[str] = set()
    sid = 0
    for name, count in FORUMS:
        scores = rng.sample(range(1, 400), count)
        for i in range(count):
            while True:
                a, b = rng.sample(_WORDS, 2)
                title = f"{a.title()} {b} update {rng.randint(2, 99)} in {name}"
                if title not in seen:
                    seen.add(title)
                    break
            sid += 1
            subs.append({"id": sid, "forum": name, "title": title, "body": f"Details about the {a} and the {b}.",
                         "author": rng.choice(_AUTHORS), "score": scores[i],
                         "created": f"2023-{rng.randint(1, 9):02d}-{rng.randint(1, 28):02d}"})
            for _ in range(rng.randint(0, 3)):
                comments.append({"submission_id": sid, "author": rng.choice(_AUTHORS), "body": "Interesting."})
    return {"forum": forums, "submission": subs, "comment": comments}


@dataclasses.dataclass
class ForumState:
    """An instance's database."""

    db: Database


def new_state() -> ForumState:
    """A fresh database with the seed rows."""
    db = Database(SCHEMA)
    for name, rows in seed_rows().items():
        db.insert_many(name, rows)
    return ForumState(db)


def _db(request: web.Request) -> Database:
    state: ForumState = request.app[STATE_KEY]
    return state.db


NAV = [("Forums", "/forums"), ("Submit", "/submit"), (USER, f"/user/{USER}")]


def slug(title: str) -> str:
    """A URL slug of a title."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "post"


def _view(title: str, body: str, flash: str = "") -> web.Response:
    return page(title, body, site=SITE, nav=NAV, flash=flash)


async def front(request: web.Request) -> web.Response:
    raise redirect("/forums")


async def forums(request: web.Request) -> web.Response:
    db = _db(request)
    rows = db.rows("SELECT f.name, f.description, COUNT(s.id) AS n FROM forum f LEFT JOIN submission s "
                   "ON s.forum = f.name GROUP BY f.name ORDER BY f.name COLLATE NOCASE")
    items = "".join(f'<li><a href="/f/{e(r["name"])}">{e(r["name"])}</a> {e(r["description"])} '
                    f'<span class="count">{r["n"]} submissions</span></li>' for r in rows)
    return _view("Forums", f'<ul id="forums">{items}</ul>')


_SORTS = {"new": "created DESC, id DESC", "top": "score DESC, id", "hot": "id DESC"}


def _entry(s: dict[str, object], voted: set[int]) -> str:
    sid = int(str(s["id"]))
    pressed = "true" if sid in voted else "false"
    return (f'<article class="submission" id="submission-{sid}"><h2><a href="/f/{e(s["forum"])}/{sid}/'
            f'{e(slug(str(s["title"])))}">{e(s["title"])}</a></h2><p>Score: <span class="score">{e(s["score"])}</span>'
            f' · submitted by <a href="/user/{e(s["author"])}">{e(s["author"])}</a> on {e(s["created"])}</p>'
            f'<form method="post" action="/vote/{sid}"><button type="submit" aria-pressed="{pressed}" '
            f'class="vote-up" aria-label="Upvote {e(s["title"])}">Upvote</button></form></article>')


def _voted(db: Database) -> set[int]:
    return {int(r["submission_id"]) for r in db.rows("SELECT submission_id FROM vote WHERE user = ?", (USER,))}


async def forum(request: web.Request) -> web.Response:
    db = _db(request)
    name = request.match_info["forum"]
    if db.one("SELECT name FROM forum WHERE name = ?", (name,)) is None:
        raise web.HTTPNotFound(text="no such forum")
    sort = request.query.get("sort", "hot") if request.query.get("sort") in _SORTS else "hot"
    rows = db.rows(f"SELECT * FROM submission WHERE forum = ? ORDER BY {_SORTS[sort]}", (name,))
    shown, current, pages = paged(rows, int_arg(request, "p"), 5)
    voted = _voted(db)
    sorts = " ".join(f'<a href="{e(url(request.path, sort=k))}">{k.title()}</a>' for k in _SORTS)
    body = (f'<p>Sort by: {sorts}</p><p><a href="{e(url("/submit", forum=name))}">Submit to {e(name)}</a></p>'
            + "".join(_entry(s, voted) for s in shown) + pager(request.path, current, pages, {"sort": sort}))
    return _view(f"/f/{name}", body)


async def submission(request: web.Request) -> web.Response:
    db = _db(request)
    s = db.one("SELECT * FROM submission WHERE id = ? AND forum = ?", (int(request.match_info["sid"]),
                                                                        request.match_info["forum"]))
    if s is None:
        raise web.HTTPNotFound(text="no such submission")
    comments = db.rows("SELECT * FROM comment WHERE submission_id = ? ORDER BY id", (s["id"],))
    listed = "".join(f'<li class="comment"><strong>{e(c["author"])}</strong>: {e(c["body"])}</li>' for c in comments)
    reply = form(f"/f/{s['forum']}/{s['id']}/comment", field("body", "Write a comment", kind="textarea"), "Post comment")
    body = (f'<div class="submission__inner"><h2 class="submission__title">{e(s["title"])}</h2>'
            f'<div class="submission__body">{e(s["body"])}</div></div>{_entry(s, _voted(db))}'
            f'<h2>Comments ({len(comments)})</h2><ul id="comments">{listed}</ul>{reply}')
    return _view(str(s["title"]), body, flash=request.query.get("flash", ""))


async def post_comment(request: web.Request) -> web.Response:
    db = _db(request)
    sid, name = int(request.match_info["sid"]), request.match_info["forum"]
    text = str((await request.post()).get("body", "")).strip()
    if text:
        db.execute("INSERT INTO comment (submission_id, author, body) VALUES (?, ?, ?)", (sid, USER, text))
    raise redirect(f"/f/{name}/{sid}")


async def vote(request: web.Request) -> web.Response:
    db = _db(request)
    sid = int(request.match_info["sid"])
    s = db.one("SELECT * FROM submission WHERE id = ?", (sid,))
    if s is None:
        raise web.HTTPNotFound(text="no such submission")
    if db.one("SELECT 1 AS x FROM vote WHERE submission_id = ? AND user = ?", (sid, USER)) is None:
        db.execute("INSERT INTO vote (submission_id, user) VALUES (?, ?)", (sid, USER))
        db.execute("UPDATE submission SET score = score + 1 WHERE id = ?", (sid,))
    raise redirect(request.headers.get("Referer") or f"/f/{s['forum']}")


async def submit(request: web.Request) -> web.Response:
    db = _db(request)
    names = [r["name"] for r in db.rows("SELECT name FROM forum ORDER BY name COLLATE NOCASE")]
    if request.method == "POST":
        data = await request.post()
        name, title, text = str(data.get("forum", "")), str(data.get("title", "")).strip(), str(data.get("body", ""))
        if name not in names or not title:
            raise redirect(url("/submit", flash="Choose a forum and give a title."))
        sid = db.execute("INSERT INTO submission (forum, title, body, author, score, created) VALUES (?, ?, ?, ?, 1, "
                         "'2024-01-01')", (name, title, text, USER))
        raise redirect(f"/f/{name}/{sid}/{slug(title)}")
    inner = (select("forum", "Forum", names, request.query.get("forum", "")) + field("title", "Title") +
             field("body", "Body", kind="textarea"))
    return _view("Create submission", form("/submit", inner, "Create submission", ident="submit-form"),
                 flash=request.query.get("flash", ""))


async def user(request: web.Request) -> web.Response:
    db = _db(request)
    name = request.match_info["name"]
    rows = db.rows("SELECT * FROM submission WHERE author = ? ORDER BY id DESC", (name,))
    voted = _voted(db)
    return _view(f"User {name}", f"<p>{len(rows)} submissions</p>" + "".join(_entry(s, voted) for s in rows))


def make_app() -> web.Application:
    """A new forum instance (fresh database)."""
    app = web.Application()
    app[STATE_KEY] = new_state()
    app.add_routes([
        web.get("/", front), web.get("/forums", forums), web.get("/f/{forum}", forum),
        web.get("/f/{forum}/{sid:\\d+}", submission), web.get("/f/{forum}/{sid:\\d+}/", submission),
        web.get("/f/{forum}/{sid:\\d+}/{slug}", submission), web.post("/f/{forum}/{sid:\\d+}/comment", post_comment),
        web.post("/vote/{sid:\\d+}", vote), web.route("*", "/submit", submit), web.get("/user/{name}", user),
    ])
    return app
