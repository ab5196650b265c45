"""The mock world of a ToolCall-15 scenario and the twelve deterministic tools that act on it.

A scenario's ``environment`` (JSON) becomes a :class:`World`; every tool reads or changes
only that world, so the same calls always give the same results. ``failures`` schedules
errors: ``{"tool": "get_stock_price", "times": 1, "message": "503 ..."}`` makes the first
call of that tool fail (``times = -1``: every call fails).
"""

from __future__ import annotations

import ast
import dataclasses
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pytest_jeval.agents.tool import Tool, ToolContext, ToolError, tool

ENVIRONMENT_KEYS = ("weather", "stocks", "rates", "contacts", "files", "calendar", "search", "failures")
"""The keys a scenario's ``environment`` may hold (each a list of objects)."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)


def norm(text: str) -> str:
    """Lower case with every run of non-alphanumerics as one space (``"Paris, TX"`` -> ``"paris tx"``)."""
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


@dataclasses.dataclass
class Failure:
    """A scheduled error: the next ``times`` calls of ``tool`` fail with ``message`` (-1: all of them)."""

    tool: str
    times: int
    message: str


@dataclasses.dataclass
class World:
    """One episode's mock state: the data the tools read and what the write tools did."""

    weather: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    stocks: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    rates: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    contacts: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    files: dict[str, str] = dataclasses.field(default_factory=dict)
    calendar: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    search: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    failures: list[Failure] = dataclasses.field(default_factory=list)
    sent: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """E-mails ``send_email`` sent."""
    created: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Events ``create_event`` added (also listed by ``list_events``)."""
    deleted: list[str] = dataclasses.field(default_factory=list)
    """Paths ``delete_file`` removed."""

    @classmethod
    def from_environment(cls, env: Mapping[str, Any]) -> World:
        """A fresh world from a scenario's ``environment`` (never shares lists with it)."""
        unknown = sorted(set(env) - set(ENVIRONMENT_KEYS))
        if unknown:
            raise ValueError(f"unknown environment keys {unknown}; known: {list(ENVIRONMENT_KEYS)}")
        files = {str(f["path"]): str(f["content"]) for f in env.get("files", [])}
        failures = [Failure(str(f["tool"]), int(f["times"]), str(f["message"])) for f in env.get("failures", [])]
        for f in failures:
            if f.tool not in TOOLS:
                raise ValueError(f"failure scheduled for unknown tool {f.tool!r}")
        return cls(
            weather=[dict(w) for w in env.get("weather", [])],
            stocks=[dict(s) for s in env.get("stocks", [])],
            rates=[dict(r) for r in env.get("rates", [])],
            contacts=[dict(c) for c in env.get("contacts", [])],
            files=files,
            calendar=[dict(e) for e in env.get("calendar", [])],
            search=[dict(s) for s in env.get("search", [])],
            failures=failures,
        )

    def check_failure(self, tool_name: str) -> None:
        """Raise the scheduled error for this call of ``tool_name``, if one is due."""
        for failure in self.failures:
            if failure.tool == tool_name and failure.times != 0:
                if failure.times > 0:
                    failure.times -= 1
                raise ToolError(failure.message)


def _world(ctx: ToolContext, tool_name: str) -> World:
    world = ctx.state
    if not isinstance(world, World):
        raise ToolError("the mock environment is not available")
    world.check_failure(tool_name)
    return world


def _check_date(date: str) -> str:
    if not _DATE.match(date.strip()):
        raise ToolError(f"date {date!r} must be YYYY-MM-DD")
    return date.strip()


@tool(blocking=False)
def get_weather(city: str, ctx: ToolContext, units: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, Any]:
    """Current weather conditions for a city.

    Args:
        city: City name; add the region or country when the name is ambiguous.
        units: Temperature units.
    """
    world = _world(ctx, "get_weather")
    key = norm(city)
    for entry in world.weather:
        if key == norm(entry["city"]) or key in {norm(a) for a in entry.get("aliases", [])}:
            temp_c = float(entry["temp_c"])
            temp = round(temp_c * 9 / 5 + 32) if units == "fahrenheit" else round(temp_c)
            return {"city": entry["city"], "temperature": temp, "units": units, "condition": entry["condition"],
                    "humidity_percent": entry.get("humidity", 50)}
    raise ToolError(f"no weather station found for {city!r}")


@tool(blocking=False)
def get_stock_price(symbol: str, ctx: ToolContext) -> dict[str, Any]:
    """The latest trade price of a stock.

    Args:
        symbol: Exchange ticker symbol, e.g. AAPL.
    """
    world = _world(ctx, "get_stock_price")
    for entry in world.stocks:
        if symbol.strip().upper() == entry["symbol"]:
            return {"symbol": entry["symbol"], "price": entry["price"], "currency": entry.get("currency", "USD")}
    raise ToolError(f"unknown ticker symbol {symbol!r}; pass the exchange ticker, e.g. AAPL")


@tool(blocking=False)
def get_exchange_rate(base: str, quote: str, ctx: ToolContext) -> dict[str, Any]:
    """Today's exchange rate: how many units of ``quote`` one unit of ``base`` buys.

    Args:
        base: ISO 4217 currency code to convert from, e.g. USD.
        quote: ISO 4217 currency code to convert to, e.g. EUR.
    """
    world = _world(ctx, "get_exchange_rate")
    b, q = base.strip().upper(), quote.strip().upper()
    for entry in world.rates:
        if (entry["base"], entry["quote"]) == (b, q):
            return {"base": b, "quote": q, "rate": entry["rate"]}
        if (entry["base"], entry["quote"]) == (q, b):
            return {"base": b, "quote": q, "rate": round(1 / float(entry["rate"]), 6)}
    raise ToolError(f"no rate for {b}/{q}; use ISO 4217 codes such as USD, EUR, GBP")


# unit -> (dimension, factor to the base unit); temperatures are handled apart
_UNITS: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0), "km": ("length", 1000.0), "cm": ("length", 0.01), "mm": ("length", 0.001),
    "mi": ("length", 1609.344), "ft": ("length", 0.3048), "in": ("length", 0.0254), "yd": ("length", 0.9144),
    "kg": ("mass", 1.0), "g": ("mass", 0.001), "lb": ("mass", 0.45359237), "oz": ("mass", 0.028349523125),
    "l": ("volume", 1.0), "ml": ("volume", 0.001), "gal": ("volume", 3.785411784),
}
_UNIT_ALIASES = {
    "meter": "m", "meters": "m", "metre": "m", "metres": "m", "kilometer": "km", "kilometers": "km",
    "kilometre": "km", "kilometres": "km", "centimeter": "cm", "centimeters": "cm", "millimeter": "mm",
    "millimeters": "mm", "mile": "mi", "miles": "mi", "foot": "ft", "feet": "ft", "inch": "in", "inches": "in",
    "yard": "yd", "yards": "yd", "kilogram": "kg", "kilograms": "kg", "gram": "g", "grams": "g", "pound": "lb",
    "pounds": "lb", "lbs": "lb", "ounce": "oz", "ounces": "oz", "liter": "l", "liters": "l", "litre": "l",
    "litres": "l", "milliliter": "ml", "milliliters": "ml", "gallon": "gal", "gallons": "gal",
    "celsius": "c", "fahrenheit": "f", "kelvin": "k", "°c": "c", "°f": "f",
}
_TEMPERATURE = {"c", "f", "k"}


def _unit(name: str) -> str:
    key = name.strip().lower()
    key = _UNIT_ALIASES.get(key, key)
    if key in _UNITS or key in _TEMPERATURE:
        return key
    if re.fullmatch(r"[a-z]{3}", key):
        raise ToolError(f"unknown unit {name!r}: convert_units handles physical units only, not currencies")
    raise ToolError(f"unknown unit {name!r}")


def _to_celsius(value: float, unit: str) -> float:
    return value if unit == "c" else (value - 32) * 5 / 9 if unit == "f" else value - 273.15


@tool(blocking=False)
def convert_units(value: float, from_unit: str, to_unit: str, ctx: ToolContext) -> dict[str, Any]:
    """Convert a quantity between physical units (length, mass, volume, temperature).

    Args:
        value: The quantity to convert.
        from_unit: Unit of the value, e.g. mi, km, lb, kg, F, C.
        to_unit: Unit to convert to.
    """
    _world(ctx, "convert_units")
    src, dst = _unit(from_unit), _unit(to_unit)
    if src in _TEMPERATURE or dst in _TEMPERATURE:
        if not (src in _TEMPERATURE and dst in _TEMPERATURE):
            raise ToolError(f"cannot convert {from_unit} to {to_unit}")
        c = _to_celsius(float(value), src)
        out = c if dst == "c" else c * 9 / 5 + 32 if dst == "f" else c + 273.15
    else:
        (dim_a, fa), (dim_b, fb) = _UNITS[src], _UNITS[dst]
        if dim_a != dim_b:
            raise ToolError(f"cannot convert {dim_a} ({from_unit}) to {dim_b} ({to_unit})")
        out = float(value) * fa / fb
    return {"value": round(out, 6), "unit": to_unit}


_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Mod: operator.mod, ast.Pow: operator.pow,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        inner = _evaluate(node.operand)
        return inner if isinstance(node.op, ast.UAdd) else -inner
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ToolError("exponent too large")
        return _BINARY[type(node.op)](left, right)
    raise ToolError(f"unsupported expression element: {type(node).__name__}")


@tool(blocking=False)
def calculator(expression: str, ctx: ToolContext) -> dict[str, Any]:
    """Evaluate an arithmetic expression (+, -, *, /, %, ** and parentheses).

    Args:
        expression: The expression, e.g. (412.5 * 40) * 0.92.
    """
    _world(ctx, "calculator")
    if len(expression) > 500:
        raise ToolError("expression too long")
    try:
        result = _evaluate(ast.parse(expression.replace(",", ""), mode="eval"))
    except SyntaxError as exc:
        raise ToolError(f"cannot parse {expression!r}: {exc.msg}") from None
    except (ZeroDivisionError, OverflowError) as exc:
        raise ToolError(f"cannot evaluate {expression!r}: {exc}") from None
    if not math.isfinite(result):
        raise ToolError(f"{expression!r} has no finite value")
    return {"result": int(result) if result.is_integer() else round(result, 10)}


@tool(blocking=False)
def web_search(query: str, ctx: ToolContext, max_results: int = 3) -> dict[str, Any]:
    """Search the web and return the top results (title, url, snippet).

    Args:
        query: What to search for.
        max_results: How many results to return (1-10).
    """
    world = _world(ctx, "web_search")
    if not 1 <= max_results <= 10:
        raise ToolError("max_results must be between 1 and 10")
    words = norm(query)
    for entry in world.search:
        if all(norm(k) in words for k in entry["keywords"]):
            return {"query": query, "results": [dict(r) for r in entry["results"][:max_results]]}
    return {"query": query, "results": []}


def _events_on(world: World, date: str) -> list[dict[str, Any]]:
    events = [e for e in world.calendar + world.created if e["date"] == date]
    return sorted(events, key=lambda e: (e["start_time"], e["title"]))


@tool(blocking=False)
def list_events(date: str, ctx: ToolContext) -> dict[str, Any]:
    """The events on the user's calendar on one day.

    Args:
        date: The day, YYYY-MM-DD.
    """
    world = _world(ctx, "list_events")
    day = _check_date(date)
    return {"date": day, "events": [dict(e) for e in _events_on(world, day)]}


@tool(blocking=False)
def create_event(
    title: str, date: str, start_time: str, ctx: ToolContext, duration_minutes: int = 60,
    attendees: list[str] | None = None,
) -> dict[str, Any]:
    """Add an event to the user's calendar.

    Args:
        title: Event title.
        date: Day of the event, YYYY-MM-DD.
        start_time: Start time, 24-hour HH:MM.
        duration_minutes: Length in minutes.
        attendees: E-mail addresses to invite.
    """
    world = _world(ctx, "create_event")
    day = _check_date(date)
    if not _TIME.match(start_time.strip()):
        raise ToolError(f"start_time {start_time!r} must be 24-hour HH:MM")
    if not 5 <= duration_minutes <= 720:
        raise ToolError("duration_minutes must be between 5 and 720")
    start = start_time.strip()
    end = int(start[:2]) * 60 + int(start[3:]) + duration_minutes
    event = {"event_id": f"evt-{len(world.created) + 1}", "title": title, "date": day, "start_time": start,
             "end_time": "23:59" if end >= 24 * 60 else f"{end // 60:02d}:{end % 60:02d}",
             "attendees": list(attendees or [])}
    world.created.append(event)
    return {"status": "created", **event}


@tool(blocking=False)
def find_contact(name: str, ctx: ToolContext) -> dict[str, Any]:
    """Look up people in the user's address book by name.

    Args:
        name: Full or partial name.
    """
    world = _world(ctx, "find_contact")
    tokens = norm(name).split()
    matches = [{"name": c["name"], "email": c["email"]} for c in world.contacts
               if tokens and all(t in norm(c["name"]).split() for t in tokens)]
    return {"matches": matches}


@tool(blocking=False)
def send_email(to: str, subject: str, body: str, ctx: ToolContext) -> dict[str, Any]:
    """Send an e-mail from the user's account.

    Args:
        to: Recipient e-mail address.
        subject: Subject line.
        body: Message text.
    """
    world = _world(ctx, "send_email")
    if not _EMAIL.match(to.strip()):
        raise ToolError(f"invalid recipient {to!r}: give an e-mail address (find_contact looks one up)")
    world.sent.append({"to": to.strip(), "subject": subject, "body": body})
    return {"status": "sent", "message_id": f"msg-{len(world.sent)}", "to": to.strip()}


def _clean_path(path: str) -> str:
    p = path.strip()
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


@tool(blocking=False)
def read_file(path: str, ctx: ToolContext) -> dict[str, Any]:
    """Read a text file from the user's documents.

    Args:
        path: File path, e.g. notes/todo.txt.
    """
    world = _world(ctx, "read_file")
    p = _clean_path(path)
    if p in world.files:
        return {"path": p, "content": world.files[p]}
    folder = p.rsplit("/", 1)[0] if "/" in p else ""
    siblings = sorted(f for f in world.files if (f.rsplit("/", 1)[0] if "/" in f else "") == folder)
    where = f"{folder}/" if folder else "the top folder"
    listing = ", ".join(siblings) if siblings else "none"
    raise ToolError(f"no such file: {p}. Files in {where}: {listing}")


@tool(blocking=False)
def delete_file(path: str, ctx: ToolContext) -> dict[str, Any]:
    """Delete a file from the user's documents (cannot be undone).

    Args:
        path: File path.
    """
    world = _world(ctx, "delete_file")
    p = _clean_path(path)
    if p not in world.files:
        raise ToolError(f"no such file: {p}")
    del world.files[p]
    world.deleted.append(p)
    return {"status": "deleted", "path": p}


TOOLS: dict[str, Tool] = {
    t.name: t
    for t in (
        get_weather, get_stock_price, get_exchange_rate, convert_units, calculator, web_search,
        list_events, create_event, find_contact, send_email, read_file, delete_file,
    )
}
"""The universal tool set, by name, in the order offered to the model."""


def tools_named(names: Sequence[str]) -> list[Tool]:
    """The tools of a scenario (all of them when ``names`` is empty), in the universal order."""
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise ValueError(f"unknown tools {unknown}; known: {list(TOOLS)}")
    wanted = set(names) if names else set(TOOLS)
    return [t for name, t in TOOLS.items() if name in wanted]
