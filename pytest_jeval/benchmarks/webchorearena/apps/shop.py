"""The shop: a storefront (categories, products, reviews, the customer's orders) and its admin back office
(orders, products, customers, reviews, a sales report) over one database."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from aiohttp import web

from pytest_jeval.benchmarks._web.db import Database
from pytest_jeval.benchmarks._web.host import STATE_KEY
from pytest_jeval.benchmarks._web.html import (
    e,
    field,
    form,
    int_arg,
    money,
    page,
    paged,
    pager,
    redirect,
    select,
    table,
    url,
)

SITE = "One Stop Market"
ADMIN_SITE = "One Stop Market Admin"
CUSTOMER_ID = 1
"""The storefront's logged-in customer."""
SEED = 20240517

SCHEMA = """
CREATE TABLE category (slug TEXT PRIMARY KEY, name TEXT);
CREATE TABLE product (sku TEXT PRIMARY KEY, name TEXT, category TEXT, price REAL, qty INTEGER, status TEXT,
                      description TEXT);
CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT, email TEXT, city TEXT, grp TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, increment_id TEXT UNIQUE, customer_id INTEGER, created TEXT,
                     status TEXT, grand_total REAL);
CREATE TABLE order_item (order_id INTEGER, sku TEXT, name TEXT, qty INTEGER, price REAL);
CREATE TABLE order_comment (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id INTEGER, comment TEXT);
CREATE TABLE review (id INTEGER PRIMARY KEY AUTOINCREMENT, sku TEXT, nickname TEXT, rating INTEGER, title TEXT,
                     detail TEXT, status TEXT);
"""

CATEGORIES = [("kitchen", "Kitchen"), ("outdoor", "Outdoor"), ("electronics", "Electronics"), ("books", "Books")]
_NAMES = {
    "kitchen": ["Enamel Dutch Oven", "Bamboo Cutting Board", "Pour-Over Coffee Kettle", "Cast Iron Skillet",
                "Chef Knife 8in", "Silicone Spatula Set", "Glass Storage Jars", "Stand Mixer Bowl"],
    "outdoor": ["Trail Backpack 30L", "Camping Lantern", "Folding Camp Chair", "Insulated Water Bottle",
                "Two-Person Tent", "Hiking Poles", "Sleeping Bag 0C", "Portable Stove"],
    "electronics": ["Wireless Earbuds", "USB-C Charger 65W", "Bluetooth Speaker", "Smart Plug Twin Pack",
                    "Noise Cancelling Headphones", "E-Reader 6in", "Webcam 1080p", "Mechanical Keyboard"],
    "books": ["The Quiet Harbor", "Atlas of Small Islands", "Cooking for Two", "A Short History of Maps",
              "Night Trains", "The Gardener's Year", "Learning Python Fast", "Mountains and Rivers"],
}
_PEOPLE = ["Emma Lopez", "Noah Kim", "Olivia Smith", "Liam Brown", "Ava Jones", "Lucas Garcia", "Mia Davis",
           "Ethan Miller", "Sofia Wilson", "Mason Moore", "Isabella Taylor", "Logan Anderson", "Chloe Thomas",
           "Elijah Jackson", "Grace White", "James Harris", "Lily Martin", "Henry Thompson", "Zoe Clark",
           "Jack Lewis", "Nora Walker", "Leo Hall", "Ella Young", "Owen King"]
_CITIES = ["Berlin", "Paris", "Austin", "Osaka"]
_GROUPS = ["General", "Wholesale", "Retailer"]
STATUSES = ["pending", "processing", "complete", "canceled"]
_NICKS = ["Sam", "Robin", "Alex", "Jordan", "Casey", "Taylor", "Morgan", "Riley", "Jamie", "Avery"]


def seed_rows() -> dict[str, list[dict[str, Any]]]:
    """The shop's initial rows (deterministic)."""
    rng = random.Random(SEED)
    out: dict[str, list[dict[str, Any]]] = {"category": [{"slug": s, "name": n} for s, n in CATEGORIES]}
    products: list[dict[str, Any]] = []
    n = 1000
    for slug, _ in CATEGORIES:
        for name in _NAMES[slug]:
            n += 1
            qty = 0 if rng.random() < 0.25 else rng.randint(1, 60)
            products.append({"sku": f"SKU-{n}", "name": name, "category": slug,
                             "price": round(rng.uniform(6, 240), 2), "qty": qty, "status": "enabled",
                             "description": f"{name}: a dependable pick from our {slug} range."})
    out["product"] = products
    out["customer"] = [{"id": i + 1, "name": p, "email": p.lower().replace(" ", ".") + "@example.com",
                        "city": _CITIES[rng.randrange(4)], "grp": _GROUPS[rng.randrange(3)]}
                       for i, p in enumerate(_PEOPLE)]
    orders, items = [], []
    for i in range(64):
        oid = i + 1
        customer = CUSTOMER_ID if i % 3 == 0 else rng.randint(2, len(_PEOPLE))
        month, day = rng.randint(1, 6), rng.randint(1, 28)
        status = rng.choices(STATUSES, weights=[2, 2, 5, 2])[0]
        chosen = rng.sample(products, rng.randint(1, 3))
        total = 0.0
        for p in chosen:
            qty = rng.randint(1, 3)
            items.append({"order_id": oid, "sku": p["sku"], "name": p["name"], "qty": qty, "price": p["price"]})
            total += qty * p["price"]
        orders.append({"id": oid, "increment_id": f"{100 + oid:09d}", "customer_id": customer,
                       "created": f"2023-{month:02d}-{day:02d}", "status": status, "grand_total": round(total, 2)})
    out["orders"], out["order_item"] = orders, items
    reviews = []
    for p in products[:12]:
        for _ in range(rng.randint(2, 9)):
            reviews.append({"sku": p["sku"], "nickname": rng.choice(_NICKS), "rating": rng.randint(1, 5),
                            "title": rng.choice(["Great", "Okay", "Not for me", "Love it", "Solid", "Meh"]),
                            "detail": "Bought it last season.", "status": "approved"})
    out["review"] = reviews
    return out


@dataclasses.dataclass
class ShopState:
    """An instance's database."""

    db: Database


def new_state() -> ShopState:
    """A fresh database with the seed rows."""
    db = Database(SCHEMA)
    for name, rows in seed_rows().items():
        db.insert_many(name, rows)
    return ShopState(db)


def _db(request: web.Request) -> Database:
    state: ShopState = request.app[STATE_KEY]
    return state.db


STORE_NAV = [("Home", "/"), ("My Orders", "/account/orders"), ("Search", "/search")]
ADMIN_NAV = [("Dashboard", "/admin"), ("Orders", "/admin/orders"), ("Products", "/admin/products"),
             ("Customers", "/admin/customers"), ("Reviews", "/admin/reviews"), ("Reports", "/admin/reports/sales")]


def _store(title: str, body: str, flash: str = "") -> web.Response:
    return page(title, body, site=SITE, nav=STORE_NAV, flash=flash)


def _admin(title: str, body: str, flash: str = "") -> web.Response:
    return page(title, body, site=ADMIN_SITE, nav=ADMIN_NAV, flash=flash)


# ----------------------------------------------------------------------------------- storefront
async def home(request: web.Request) -> web.Response:
    db = _db(request)
    cats = "".join(f'<li><a href="/category/{e(c["slug"])}">{e(c["name"])}</a></li>'
                   for c in db.rows("SELECT * FROM category ORDER BY name"))
    search = form("/search", field("q", "Search the catalog"), "Search", method="get")
    return _store("Welcome to One Stop Market", f"<h2>Categories</h2><ul>{cats}</ul>{search}")


def _product_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [[f'<a href="/product/{e(p["sku"])}">{e(p["name"])}</a>', e(p["sku"]), money(p["price"]),
             "In stock" if p["qty"] > 0 else "Out of stock"] for p in rows]


async def category(request: web.Request) -> web.Response:
    db = _db(request)
    slug = request.match_info["slug"]
    cat = db.one("SELECT * FROM category WHERE slug = ?", (slug,))
    if cat is None:
        raise web.HTTPNotFound(text="no such category")
    rows = db.rows("SELECT * FROM product WHERE category = ? AND status = 'enabled' ORDER BY name", (slug,))
    shown, current, pages = paged(rows, int_arg(request, "p"), 3)
    body = table(["Product", "SKU", "Price", "Availability"], _product_rows(shown), ident="products")
    return _store(cat["name"], f"<p>{len(rows)} items</p>{body}{pager(request.path, current, pages)}")


async def product(request: web.Request) -> web.Response:
    db = _db(request)
    sku = request.match_info["sku"]
    p = db.one("SELECT * FROM product WHERE sku = ?", (sku,))
    if p is None or p["status"] != "enabled":
        raise web.HTTPNotFound(text="no such product")
    reviews = db.rows("SELECT * FROM review WHERE sku = ? AND status = 'approved' ORDER BY id", (sku,))
    shown, current, pages = paged(reviews, int_arg(request, "p"), 3)
    listed = "".join(f'<li class="review"><strong>{e(r["title"])}</strong> by {e(r["nickname"])}: '
                     f'<span class="rating">Rating: {r["rating"] * 20}%</span></li>' for r in shown)
    write = form(f"/product/{sku}/review", field("nickname", "Nickname") + select("rating", "Rating (stars)",
                 ["1", "2", "3", "4", "5"], "5") + field("title", "Summary") + field("detail", "Review", kind="textarea"),
                 "Submit Review", ident="review-form")
    body = (f'<p>SKU: {e(p["sku"])}</p><p class="price">Price: {money(p["price"])}</p><p>{e(p["description"])}</p>'
            f'<h2>Customer Reviews ({len(reviews)})</h2><ul id="reviews">{listed}</ul>'
            f'{pager(request.path, current, pages)}<h2>Write Your Own Review</h2>{write}')
    return _store(p["name"], body, flash=request.query.get("flash", ""))


async def post_review(request: web.Request) -> web.Response:
    db = _db(request)
    sku = request.match_info["sku"]
    data = await request.post()
    if db.one("SELECT sku FROM product WHERE sku = ?", (sku,)) is None:
        raise web.HTTPNotFound(text="no such product")
    rating = int(str(data.get("rating", "5"))) if str(data.get("rating", "5")).isdigit() else 5
    db.execute("INSERT INTO review (sku, nickname, rating, title, detail, status) VALUES (?, ?, ?, ?, ?, 'pending')",
               (sku, str(data.get("nickname", "")), rating, str(data.get("title", "")), str(data.get("detail", ""))))
    raise redirect(url(f"/product/{sku}", flash="You submitted your review for moderation."))


async def my_orders(request: web.Request) -> web.Response:
    db = _db(request)
    rows = db.rows("SELECT * FROM orders WHERE customer_id = ? ORDER BY created DESC, id DESC", (CUSTOMER_ID,))
    shown, current, pages = paged(rows, int_arg(request, "p"), 5)
    cells = [[e(o["increment_id"]), e(o["created"]), money(o["grand_total"]), e(o["status"].title()),
              f'<a href="/account/orders/{e(o["increment_id"])}">View Order</a>'] for o in shown]
    body = table(["Order #", "Date", "Order Total", "Status", "Action"], cells, ident="my-orders")
    return _store("My Orders", f"<p>{len(rows)} orders</p>{body}{pager(request.path, current, pages)}")


def _items(db: Database, order_id: int) -> str:
    rows = db.rows("SELECT * FROM order_item WHERE order_id = ?", (order_id,))
    return table(["Product", "SKU", "Qty", "Price"], [[e(i["name"]), e(i["sku"]), str(i["qty"]), money(i["price"])]
                                                    for i in rows], ident="items")


async def my_order(request: web.Request) -> web.Response:
    db = _db(request)
    o = db.one("SELECT * FROM orders WHERE increment_id = ? AND customer_id = ?",
               (request.match_info["inc"], CUSTOMER_ID))
    if o is None:
        raise web.HTTPNotFound(text="no such order")
    body = (f'<p>Date: {e(o["created"])}</p><p>Status: {e(o["status"].title())}</p>{_items(db, o["id"])}'
            f'<p>Grand Total: {money(o["grand_total"])}</p>')
    return _store(f"Order # {o['increment_id']}", body)


async def search(request: web.Request) -> web.Response:
    db = _db(request)
    q = request.query.get("q", "").strip()
    rows = db.rows("SELECT * FROM product WHERE status = 'enabled' AND name LIKE ? ORDER BY name", (f"%{q}%",)) if q else []
    box = form("/search", field("q", "Search the catalog", q), "Search", method="get")
    return _store(f"Search results for: '{q}'" if q else "Search", box + table(
        ["Product", "SKU", "Price", "Availability"], _product_rows(rows), ident="products"))


# ----------------------------------------------------------------------------------- admin
async def dashboard(request: web.Request) -> web.Response:
    db = _db(request)
    pending = db.value("SELECT COUNT(*) FROM review WHERE status = 'pending'")
    facts = (f'<p>Orders: {db.value("SELECT COUNT(*) FROM orders")}</p>'
             f'<p>Products: {db.value("SELECT COUNT(*) FROM product")}</p>'
             f'<p>Customers: {db.value("SELECT COUNT(*) FROM customer")}</p>'
             f"<p>Reviews waiting for moderation: {pending}</p>")
    return _admin("Dashboard", facts)


_ORDER_SORTS = {"increment_id": "o.increment_id", "created": "o.created", "grand_total": "o.grand_total",
                "name": "c.name", "status": "o.status"}


async def admin_orders(request: web.Request) -> web.Response:
    db = _db(request)
    q = request.query
    status, name = q.get("status", ""), q.get("customer", "").strip()
    sort = q.get("sort", "increment_id") if q.get("sort") in _ORDER_SORTS else "increment_id"
    direction = "desc" if q.get("dir") == "desc" else "asc"
    where, params = ["1=1"], []
    if status:
        where.append("o.status = ?")
        params.append(status)
    if name:
        where.append("c.name LIKE ?")
        params.append(f"%{name}%")
    rows = db.rows(f"SELECT o.*, c.name FROM orders o JOIN customer c ON c.id = o.customer_id WHERE {' AND '.join(where)}"
                   f" ORDER BY {_ORDER_SORTS[sort]} {direction}, o.id", params)
    shown, current, pages = paged(rows, int_arg(request, "p"), 10)
    keep = {"status": status, "customer": name, "sort": sort, "dir": direction}

    def head(label: str, key: str) -> str:
        flip = "desc" if sort == key and direction == "asc" else "asc"
        return f'<a href="{e(url("/admin/orders", **{**keep, "sort": key, "dir": flip}))}">{e(label)}</a>'

    cells = [[e(o["increment_id"]), e(o["created"]), e(o["name"]), money(o["grand_total"]), e(o["status"].title()),
              f'<a href="/admin/orders/{e(o["increment_id"])}">View</a>'] for o in shown]
    filters = form("/admin/orders", select("status", "Status", ["", *STATUSES], status) +
                   field("customer", "Bill-to Name", name) + f'<input type="hidden" name="sort" value="{e(sort)}">'
                   f'<input type="hidden" name="dir" value="{e(direction)}">', "Apply Filters", method="get")
    grid = table([head("ID", "increment_id"), head("Purchase Date", "created"), head("Bill-to Name", "name"),
                  head("Grand Total", "grand_total"), head("Status", "status"), "Action"], cells, ident="orders-grid")
    return _admin("Orders", f"{filters}<p>{len(rows)} records found</p>{grid}{pager(request.path, current, pages, keep)}")


async def admin_order(request: web.Request) -> web.Response:
    db = _db(request)
    o = db.one("SELECT o.*, c.name FROM orders o JOIN customer c ON c.id = o.customer_id WHERE increment_id = ?",
               (request.match_info["inc"],))
    if o is None:
        raise web.HTTPNotFound(text="no such order")
    comments = db.rows("SELECT * FROM order_comment WHERE order_id = ? ORDER BY id", (o["id"],))
    history = "".join(f"<li>{e(c['comment'])}</li>" for c in comments) or "<li>No comments.</li>"
    inc = o["increment_id"]
    actions = form(f"/admin/orders/{inc}/comment", field("comment", "Comment", kind="textarea"), "Submit Comment",
                   ident="comment-form")
    if o["status"] in ("pending", "processing"):
        actions += form(f"/admin/orders/{inc}/cancel", "", "Cancel Order", ident="cancel-form")
    body = (f'<p>Order Date: {e(o["created"])}</p><p>Customer: {e(o["name"])}</p>'
            f'<p>Order Status: <span id="order-status">{e(o["status"])}</span></p>{_items(db, o["id"])}'
            f'<p>Grand Total: {money(o["grand_total"])}</p><h2>Comments History</h2><ul id="order-history">{history}</ul>'
            f"{actions}")
    return _admin(f"Order # {inc}", body, flash=request.query.get("flash", ""))


async def admin_order_comment(request: web.Request) -> web.Response:
    db = _db(request)
    inc = request.match_info["inc"]
    o = db.one("SELECT id FROM orders WHERE increment_id = ?", (inc,))
    if o is None:
        raise web.HTTPNotFound(text="no such order")
    text = str((await request.post()).get("comment", "")).strip()
    if text:
        db.execute("INSERT INTO order_comment (order_id, comment) VALUES (?, ?)", (o["id"], text))
    raise redirect(url(f"/admin/orders/{inc}", flash="You added a comment." if text else "The comment is empty."))


async def admin_order_cancel(request: web.Request) -> web.Response:
    db = _db(request)
    inc = request.match_info["inc"]
    db.execute("UPDATE orders SET status = 'canceled' WHERE increment_id = ? AND status IN ('pending', 'processing')",
               (inc,))
    raise redirect(url(f"/admin/orders/{inc}", flash="You canceled the order."))


async def admin_products(request: web.Request) -> web.Response:
    db = _db(request)
    cat, q = request.query.get("category", ""), request.query.get("q", "").strip()
    where, params = ["1=1"], []
    if cat:
        where.append("category = ?")
        params.append(cat)
    if q:
        where.append("(name LIKE ? OR sku LIKE ?)")
        params.extend([f"%{q}%", f"%{q}%"])
    rows = db.rows(f"SELECT * FROM product WHERE {' AND '.join(where)} ORDER BY sku", params)
    shown, current, pages = paged(rows, int_arg(request, "p"), 10)
    cells = [[e(p["sku"]), e(p["name"]), e(p["category"]), money(p["price"]), str(p["qty"]), e(p["status"].title()),
              f'<a href="/admin/products/{e(p["sku"])}/edit">Edit</a>'] for p in shown]
    filters = form("/admin/products", select("category", "Category", ["", *(s for s, _ in CATEGORIES)], cat) +
                   field("q", "Keyword", q), "Search", method="get")
    grid = table(["SKU", "Name", "Category", "Price", "Quantity", "Status", "Action"], cells, ident="products-grid")
    keep = {"category": cat, "q": q}
    return _admin("Products", f"{filters}<p>{len(rows)} records found</p>{grid}{pager(request.path, current, pages, keep)}")


async def admin_product(request: web.Request) -> web.Response:
    db = _db(request)
    sku = request.match_info["sku"]
    p = db.one("SELECT * FROM product WHERE sku = ?", (sku,))
    if p is None:
        raise web.HTTPNotFound(text="no such product")
    if request.method == "POST":
        data = await request.post()
        try:
            price, qty = float(str(data.get("price", p["price"]))), int(str(data.get("qty", p["qty"])))
        except ValueError:
            raise redirect(url(f"/admin/products/{sku}/edit", flash="Price and quantity must be numbers.")) from None
        status = "disabled" if str(data.get("status", "")).lower() == "disabled" else "enabled"
        db.execute("UPDATE product SET name = ?, price = ?, qty = ?, status = ? WHERE sku = ?",
                   (str(data.get("name", p["name"])), price, qty, status, sku))
        raise redirect(url(f"/admin/products/{sku}/edit", flash="You saved the product."))
    inner = (field("name", "Product Name", p["name"]) + field("price", "Price", p["price"]) +
             field("qty", "Quantity", p["qty"]) + select("status", "Enable Product", ["enabled", "disabled"], p["status"]))
    return _admin(f"Edit {p['name']}", f'<p>SKU: {e(sku)}</p>{form(request.path, inner, "Save", ident="product-form")}',
                  flash=request.query.get("flash", ""))


async def admin_customers(request: web.Request) -> web.Response:
    db = _db(request)
    grp, city = request.query.get("group", ""), request.query.get("city", "")
    where, params = ["1=1"], []
    if grp:
        where.append("grp = ?")
        params.append(grp)
    if city:
        where.append("city = ?")
        params.append(city)
    rows = db.rows(f"SELECT * FROM customer WHERE {' AND '.join(where)} ORDER BY id", params)
    shown, current, pages = paged(rows, int_arg(request, "p"), 8)
    cells = [[str(c["id"]), e(c["name"]), e(c["email"]), e(c["city"]), e(c["grp"]),
              f'<a href="/admin/customers/{c["id"]}">Edit</a>'] for c in shown]
    grid = table(["ID", "Name", "Email", "City", "Group", "Action"], cells, ident="customers-grid")
    return _admin("Customers", f"<p>{len(rows)} records found</p>{grid}{pager(request.path, current, pages, {'group': grp, 'city': city})}")


async def admin_customer(request: web.Request) -> web.Response:
    db = _db(request)
    cid = int(request.match_info["cid"])
    c = db.one("SELECT * FROM customer WHERE id = ?", (cid,))
    if c is None:
        raise web.HTTPNotFound(text="no such customer")
    if request.method == "POST":
        grp = str((await request.post()).get("grp", c["grp"]))
        if grp in _GROUPS:
            db.execute("UPDATE customer SET grp = ? WHERE id = ?", (grp, cid))
        raise redirect(url(f"/admin/customers/{cid}", flash="You saved the customer."))
    inner = select("grp", "Group", _GROUPS, c["grp"], ident="group")
    body = f'<p>Email: {e(c["email"])}</p><p>City: {e(c["city"])}</p>{form(request.path, inner, "Save Customer")}'
    return _admin(c["name"], body, flash=request.query.get("flash", ""))


async def admin_reviews(request: web.Request) -> web.Response:
    db = _db(request)
    status = request.query.get("status", "")
    rows = db.rows("SELECT * FROM review WHERE (? = '' OR status = ?) ORDER BY id DESC", (status, status))
    shown, current, pages = paged(rows, int_arg(request, "p"), 10)
    cells = [[str(r["id"]), e(r["sku"]), e(r["nickname"]), str(r["rating"]), e(r["title"]), e(r["detail"]),
              e(r["status"]), form(f"/admin/reviews/{r['id']}/approve", "", "Approve") if r["status"] == "pending" else ""]
             for r in shown]
    grid = table(["ID", "SKU", "Nickname", "Rating", "Title", "Review", "Status", "Action"], cells, ident="reviews-grid")
    filters = form("/admin/reviews", select("status", "Status", ["", "pending", "approved"], status), "Filter", method="get")
    return _admin("Reviews", f"{filters}<p>{len(rows)} records found</p>{grid}{pager(request.path, current, pages, {'status': status})}")


async def admin_review_approve(request: web.Request) -> web.Response:
    _db(request).execute("UPDATE review SET status = 'approved' WHERE id = ?", (int(request.match_info["rid"]),))
    raise redirect("/admin/reviews")


async def admin_sales(request: web.Request) -> web.Response:
    db = _db(request)
    rows = db.rows("SELECT substr(created, 1, 7) AS month, COUNT(*) AS n, SUM(grand_total) AS total FROM orders "
                   "WHERE status != 'canceled' GROUP BY month ORDER BY month")
    cells = [[e(r["month"]), str(r["n"]), money(r["total"])] for r in rows]
    return _admin("Sales Report", "<p>Orders not canceled, by month of purchase.</p>" +
                  table(["Month", "Orders", "Revenue"], cells, ident="sales-report"))


def make_app() -> web.Application:
    """A new shop instance (fresh database)."""
    app = web.Application()
    app[STATE_KEY] = new_state()
    app.add_routes([
        web.get("/", home), web.get("/category/{slug}", category), web.get("/product/{sku}", product),
        web.post("/product/{sku}/review", post_review), web.get("/account/orders", my_orders),
        web.get("/account/orders/{inc}", my_order), web.get("/search", search),
        web.get("/admin", dashboard), web.get("/admin/", dashboard), web.get("/admin/orders", admin_orders),
        web.get("/admin/orders/{inc}", admin_order), web.post("/admin/orders/{inc}/comment", admin_order_comment),
        web.post("/admin/orders/{inc}/cancel", admin_order_cancel), web.get("/admin/products", admin_products),
        web.route("*", "/admin/products/{sku}/edit", admin_product), web.get("/admin/customers", admin_customers),
        web.route("*", "/admin/customers/{cid}", admin_customer), web.get("/admin/reviews", admin_reviews),
        web.post("/admin/reviews/{rid}/approve", admin_review_approve), web.get("/admin/reports/sales", admin_sales),
    ])
    return app
