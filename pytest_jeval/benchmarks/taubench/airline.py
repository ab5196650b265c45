"""τ²-bench's airline domain tools, written from upstream's documented semantics (``domains/airline/tools.py``).

As for retail, each tool makes upstream's checks in upstream's order with its error texts, and changes the
database as upstream does. Where upstream builds a record from the arguments (a passenger, a flight, a
payment), the record keeps only the model's fields with the model's types (a payment's amount an integer),
as pydantic does. Upstream's quirks are kept: a cancellation releases no seats and checks nothing; changing
flights updates no seat counts; the one-stop search's next day is ``2024-05-<day + 1>`` (not zero-padded); new
reservation ids are HATHAT, HATHAU, HATHAV and new certificates certificate_3221322..3221324; the clock is
2024-05-15T15:00:00.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Literal

from pytest_jeval.agents.tool import Tool, ToolContext, ToolError, tool
from pytest_jeval.benchmarks.taubench.common import calculate, encoded, env_of, mutating, transfer_to_human_agents
from pytest_jeval.benchmarks.taubench.db import Database

DOMAIN = "airline"
NOW = "2024-05-15T15:00:00"
RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CERTIFICATE_IDS = (3221322, 3221323, 3221324)
AIRPORTS = (("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
            ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
            ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"), ("MCO", "Orlando"),
            ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"), ("DTW", "Detroit"),
            ("PHL", "Philadelphia"), ("LGA", "LaGuardia"))
Cabin = Literal["business", "economy", "basic_economy"]
FlightType = Literal["round_trip", "one_way"]
Insurance = Literal["yes", "no"]


def _db(ctx: ToolContext) -> Database:
    return env_of(ctx, DOMAIN)


def _record(kind: str, value: Any, fields: dict[str, type]) -> dict[str, Any]:
    """``value`` as upstream's pydantic model ``kind`` keeps it: its fields only, each of its type (an integral
    float for an int field); a missing or mistyped field fails the call as the model's validation does."""
    if not isinstance(value, dict):
        raise ToolError(f"1 validation error for {kind}: input should be a valid dictionary")
    out: dict[str, Any] = {}
    for name, kind_of in fields.items():
        if name not in value:
            raise ToolError(f"1 validation error for {kind}\n{name}\n  Field required")
        item = value[name]
        if kind_of is int:
            if isinstance(item, bool) or not isinstance(item, (int, float)) or item != int(item):
                raise ToolError(f"1 validation error for {kind}\n{name}\n  Input should be a valid integer")
            item = int(item)
        elif kind_of is str and not isinstance(item, str):
            raise ToolError(f"1 validation error for {kind}\n{name}\n  Input should be a valid string")
        out[name] = item
    return out


def _passenger(value: Any) -> dict[str, Any]:
    return _record("Passenger", value, {"first_name": str, "last_name": str, "dob": str})


def _flight_info(value: Any) -> dict[str, Any]:
    return _record("FlightInfo", value, {"flight_number": str, "date": str})


def _payment(value: Any) -> dict[str, Any]:
    return _record("Payment", value, {"payment_id": str, "amount": int})


def _user(db: Database, user_id: str) -> dict[str, Any]:
    if user_id not in db["users"]:
        raise ToolError(f"User {user_id} not found")
    return db["users"][user_id]  # type: ignore[no-any-return]


def _reservation(db: Database, reservation_id: str) -> dict[str, Any]:
    if reservation_id not in db["reservations"]:
        raise ToolError(f"Reservation {reservation_id} not found")
    return db["reservations"][reservation_id]  # type: ignore[no-any-return]


def _flight(db: Database, flight_number: str) -> dict[str, Any]:
    if flight_number not in db["flights"]:
        raise ToolError(f"Flight {flight_number} not found")
    return db["flights"][flight_number]  # type: ignore[no-any-return]


def _flight_on(db: Database, flight_number: str, date: str) -> dict[str, Any]:
    flight = _flight(db, flight_number)
    if date not in flight["dates"]:
        raise ToolError(f"Flight {flight_number} not found on date {date}")
    return flight["dates"][date]  # type: ignore[no-any-return]


@dataclasses.dataclass
class _Direct:
    """One search result (upstream's ``DirectFlight``)."""

    flight: dict[str, Any]
    day: dict[str, Any]
    date: str | None = None

    def dump(self) -> dict[str, Any]:
        f = self.flight
        return {"flight_number": f["flight_number"], "origin": f["origin"], "destination": f["destination"],
                "status": "available", "scheduled_departure_time_est": f["scheduled_departure_time_est"],
                "scheduled_arrival_time_est": f["scheduled_arrival_time_est"], "date": self.date,
                "available_seats": dict(self.day["available_seats"]), "prices": dict(self.day["prices"])}


def _search(db: Database, date: str, origin: str | None = None, destination: str | None = None,
            leave_after: str | None = None) -> list[_Direct]:
    out = []
    for flight in db["flights"].values():
        if ((origin is None or flight["origin"] == origin)
                and (destination is None or flight["destination"] == destination)
                and date in flight["dates"] and flight["dates"][date]["status"] == "available"
                and (leave_after is None or flight["scheduled_departure_time_est"] >= leave_after)):
            out.append(_Direct(flight, flight["dates"][date]))
    return out


def _pay_for_update(user: dict[str, Any], payment_id: str, total: int) -> dict[str, Any] | None:
    """Upstream's update payment: no certificates, a gift card must cover it and is charged; None for 0."""
    if payment_id not in user["payment_methods"]:
        raise ToolError("Payment method not found")
    method = user["payment_methods"][payment_id]
    if method["source"] == "certificate":
        raise ToolError("Certificate cannot be used to update reservation")
    if method["source"] == "gift_card" and method["amount"] < total:
        raise ToolError("Gift card balance is not enough")
    if method["source"] == "gift_card":
        method["amount"] -= total
    return {"payment_id": payment_id, "amount": total} if total != 0 else None


def book_reservation(user_id: str, origin: str, destination: str, flight_type: FlightType, cabin: Cabin,
                     flights: list[dict[str, Any]], passengers: list[dict[str, Any]],
                     payment_methods: list[dict[str, Any]], total_baggages: int, nonfree_baggages: int,
                     insurance: Insurance, ctx: ToolContext) -> str:
    """Book a reservation.

    Args:
        user_id: The id of the user who books, such as 'sara_doe_496'.
        origin: The IATA code of the origin city, such as 'SFO'.
        destination: The IATA code of the destination city, such as 'JFK'.
        flight_type: 'one_way' or 'round_trip'.
        cabin: 'basic_economy', 'economy' or 'business'.
        flights: Each flight of the reservation: {"flight_number": "HAT001", "date": "2024-05-01"}.
        passengers: Each passenger: {"first_name": ..., "last_name": ..., "dob": "YYYY-MM-DD"}.
        payment_methods: Each payment: {"payment_id": "credit_card_7815826", "amount": 100} (whole dollars).
        total_baggages: The total number of bags of the reservation.
        nonfree_baggages: How many of the bags are paid.
        insurance: Whether the reservation has travel insurance: 'yes' or 'no'.
    """
    db = _db(ctx)
    infos = [_flight_info(f) for f in flights]
    people = [_passenger(p) for p in passengers]
    payments = [_payment(p) for p in payment_methods]
    user = _user(db, user_id)
    reservation_id = next((r for r in RESERVATION_IDS if r not in db["reservations"]), None)
    if reservation_id is None:
        raise ToolError("Too many reservations")
    reservation: dict[str, Any] = {
        "reservation_id": reservation_id, "user_id": user_id, "origin": origin, "destination": destination,
        "flight_type": flight_type, "cabin": cabin, "flights": [], "passengers": copy.deepcopy(people),
        "payment_history": copy.deepcopy(payments), "created_at": NOW, "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages, "insurance": insurance, "status": None,
    }
    total = 0
    days = []
    for info in infos:
        number = info["flight_number"]
        flight = _flight(db, number)
        day = _flight_on(db, number, info["date"])
        if day["status"] != "available":
            raise ToolError(f"Flight {number} not available on date {info['date']}")
        if day["available_seats"][cabin] < len(people):
            raise ToolError(f"Not enough seats on flight {number}")
        price = day["prices"][cabin]
        reservation["flights"].append({"flight_number": number, "origin": flight["origin"],
                                       "destination": flight["destination"], "date": info["date"], "price": price})
        days.append(day)
        total += price * len(people)
    if insurance == "yes":
        total += 30 * len(people)
    total += 50 * nonfree_baggages
    for payment in payments:
        if payment["payment_id"] not in user["payment_methods"]:
            raise ToolError(f"Payment method {payment['payment_id']} not found")
        method = user["payment_methods"][payment["payment_id"]]
        if method["source"] in ("gift_card", "certificate") and method["amount"] < payment["amount"]:
            raise ToolError(f"Not enough balance in payment method {payment['payment_id']}")
    paid = sum(p["amount"] for p in payments)
    if paid != total:
        raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")
    for payment in payments:
        method = user["payment_methods"][payment["payment_id"]]
        if method["source"] == "gift_card":
            method["amount"] -= payment["amount"]
        elif method["source"] == "certificate":
            user["payment_methods"].pop(payment["payment_id"])
    for day in days:
        day["available_seats"][cabin] -= len(people)
    db["reservations"][reservation_id] = reservation
    user["reservations"].append(reservation_id)
    return encoded(reservation)


def cancel_reservation(reservation_id: str, ctx: ToolContext) -> str:
    """Cancel a whole reservation: every payment is refunded. Returns the reservation after it.

    Args:
        reservation_id: The reservation id, such as 'ZFA04Y'.
    """
    reservation = _reservation(_db(ctx), reservation_id)
    refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return encoded(reservation)


def get_reservation_details(reservation_id: str, ctx: ToolContext) -> str:
    """The details of a reservation.

    Args:
        reservation_id: The reservation id, such as '8JX2WO'.
    """
    return encoded(_reservation(_db(ctx), reservation_id))


def get_user_details(user_id: str, ctx: ToolContext) -> str:
    """A user's details, with their reservations.

    Args:
        user_id: The user id, such as 'sara_doe_496'.
    """
    return encoded(_user(_db(ctx), user_id))


def list_all_airports(ctx: ToolContext) -> str:
    """Every airport served: its IATA code and city."""
    return encoded([{"iata": code, "city": city} for code, city in AIRPORTS])


def search_direct_flight(origin: str, destination: str, date: str, ctx: ToolContext) -> str:
    """The direct flights between two cities on a date that can be booked.

    Args:
        origin: The origin airport's IATA code, such as 'JFK'.
        destination: The destination airport's IATA code, such as 'LAX'.
        date: The date, 'YYYY-MM-DD', such as '2024-01-01'.
    """
    return encoded([d.dump() for d in _search(_db(ctx), date, origin, destination)])


def search_onestop_flight(origin: str, destination: str, date: str, ctx: ToolContext) -> str:
    """The one-stop connections between two cities on a date: pairs of flights, the second leaving after
    the first arrives.

    Args:
        origin: The origin airport's IATA code, such as 'JFK'.
        destination: The destination airport's IATA code, such as 'LAX'.
        date: The date, 'YYYY-MM-DD', such as '2024-05-01'.
    """
    db = _db(ctx)
    pairs = []
    for first in _search(db, date, origin, None):
        first.date = date
        arrival = first.flight["scheduled_arrival_time_est"]
        date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in arrival else date
        for second in _search(db, date2, first.flight["destination"], destination, leave_after=arrival):
            second.date = date2
            pairs.append([first.dump(), second.dump()])
    return encoded(pairs)


def send_certificate(user_id: str, amount: int, ctx: ToolContext) -> str:
    """Send a certificate of ``amount`` dollars to a user. Be careful!

    Args:
        user_id: The user id, such as 'sara_doe_496'.
        amount: The certificate's amount in dollars.
    """
    user = _user(_db(ctx), user_id)
    for number in CERTIFICATE_IDS:
        payment_id = f"certificate_{number}"
        if payment_id not in user["payment_methods"]:
            user["payment_methods"][payment_id] = {"source": "certificate", "id": payment_id, "amount": float(amount)}
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    raise ToolError("Too many certificates")


def update_reservation_baggages(reservation_id: str, total_baggages: int, nonfree_baggages: int,
                                payment_id: str, ctx: ToolContext) -> str:
    """Change the bags of a reservation; each added paid bag costs $50. Returns the reservation after it.

    Args:
        reservation_id: The reservation id, such as 'ZFA04Y'.
        total_baggages: The new total number of bags.
        nonfree_baggages: The new number of paid bags.
        payment_id: A payment method of the user's profile, such as 'credit_card_7815826' or
            'gift_card_7815826'.
    """
    db = _db(ctx)
    reservation = _reservation(db, reservation_id)
    user = _user(db, reservation["user_id"])
    total = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    payment = _pay_for_update(user, payment_id, total)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    return encoded(reservation)


def update_reservation_flights(reservation_id: str, cabin: Cabin, flights: list[dict[str, Any]],
                               payment_id: str, ctx: ToolContext) -> str:
    """Change the flights (and cabin) of a reservation. Returns the reservation after it.

    Args:
        reservation_id: The reservation id, such as 'ZFA04Y'.
        cabin: The reservation's cabin: 'basic_economy', 'economy' or 'business'.
        flights: Every flight of the WHOLE new reservation, changed or not: {"flight_number": "HAT001",
            "date": "2024-05-01"} each.
        payment_id: A payment method of the user's profile, such as 'credit_card_7815826' or
            'gift_card_7815826'.
    """
    db = _db(ctx)
    infos = [_flight_info(f) for f in flights]
    reservation = _reservation(db, reservation_id)
    user = _user(db, reservation["user_id"])
    people = len(reservation["passengers"])
    total = 0
    new_flights = []
    for info in infos:
        kept = next((f for f in reservation["flights"] if f["flight_number"] == info["flight_number"]
                     and f["date"] == info["date"] and cabin == reservation["cabin"]), None)
        if kept is not None:
            total += kept["price"] * people
            new_flights.append(kept)
            continue
        flight = _flight(db, info["flight_number"])
        day = _flight_on(db, info["flight_number"], info["date"])
        if day["status"] != "available":
            raise ToolError(f"Flight {info['flight_number']} not available on date {info['date']}")
        if day["available_seats"][cabin] < people:
            raise ToolError(f"Not enough seats on flight {info['flight_number']}")
        added = {"flight_number": info["flight_number"], "origin": flight["origin"],
                 "destination": flight["destination"], "date": info["date"], "price": day["prices"][cabin]}
        total += added["price"] * people
        new_flights.append(added)
    total -= sum(f["price"] for f in reservation["flights"]) * people
    payment = _pay_for_update(user, payment_id, total)
    if payment is not None:
        reservation["payment_history"].append(payment)
    reservation["flights"] = new_flights
    reservation["cabin"] = cabin
    return encoded(reservation)


def update_reservation_passengers(reservation_id: str, passengers: list[dict[str, Any]], ctx: ToolContext) -> str:
    """Change the passengers of a reservation (the number of passengers stays the same). Returns the
    reservation after it.

    Args:
        reservation_id: The reservation id, such as 'ZFA04Y'.
        passengers: Each passenger: {"first_name": ..., "last_name": ..., "dob": "YYYY-MM-DD"}.
    """
    people = [_passenger(p) for p in passengers]
    reservation = _reservation(_db(ctx), reservation_id)
    if len(people) != len(reservation["passengers"]):
        raise ToolError("Number of passengers does not match")
    reservation["passengers"] = copy.deepcopy(people)
    return encoded(reservation)


def get_flight_status(flight_number: str, date: str, ctx: ToolContext) -> str:
    """The status of a flight on a date.

    Args:
        flight_number: The flight number, such as 'HAT001'.
        date: The date, 'YYYY-MM-DD'.
    """
    return str(_flight_on(_db(ctx), flight_number, date)["status"])


_FLIGHT = {"type": "object", "properties": {
    "flight_number": {"type": "string", "description": "The flight number, such as 'HAT001'."},
    "date": {"type": "string", "description": "The date, 'YYYY-MM-DD', such as '2024-05-01'."}},
    "required": ["flight_number", "date"]}
_PASSENGER = {"type": "object", "properties": {
    "first_name": {"type": "string"}, "last_name": {"type": "string"},
    "dob": {"type": "string", "description": "Date of birth, 'YYYY-MM-DD'."}},
    "required": ["first_name", "last_name", "dob"]}
_PAYMENT = {"type": "object", "properties": {
    "payment_id": {"type": "string", "description": "A payment method id of the user's profile."},
    "amount": {"type": "integer", "description": "The amount in dollars."}},
    "required": ["payment_id", "amount"]}
_ITEMS = {"flights": _FLIGHT, "passengers": _PASSENGER, "payment_methods": _PAYMENT}


def _with_items(made: Tool) -> Tool:
    """The tool with the object schema of its list arguments' items (flights, passengers, payments)."""
    properties = dict(made.parameters["properties"])
    for name, items in _ITEMS.items():
        if name in properties:
            properties[name] = {**properties[name], "items": items}
    return dataclasses.replace(made, parameters={**made.parameters, "properties": properties})


_READ = (get_reservation_details, get_user_details, list_all_airports, search_direct_flight,
         search_onestop_flight, get_flight_status)
_WRITE = (book_reservation, cancel_reservation, send_certificate, update_reservation_baggages,
          update_reservation_flights, update_reservation_passengers)


def _tools() -> tuple[Tool, ...]:
    reads = {f.__name__: tool(parallel_safe=True, blocking=False)(f) for f in _READ}
    writes = {f.__name__: _with_items(tool(blocking=False)(f)) for f in _WRITE}
    calc = tool(name="calculate", parallel_safe=True, blocking=False)(calculate)
    transfer = tool(name="transfer_to_human_agents", parallel_safe=True, blocking=False)(transfer_to_human_agents)
    every = {"calculate": calc, **reads, **writes, "transfer_to_human_agents": transfer}
    order = ("book_reservation", "calculate", "cancel_reservation", "get_reservation_details", "get_user_details",
             "list_all_airports", "search_direct_flight", "search_onestop_flight", "send_certificate",
             "transfer_to_human_agents", "update_reservation_baggages", "update_reservation_flights",
             "update_reservation_passengers", "get_flight_status")
    return tuple(every[name] for name in order)


TOOLS: tuple[Tool, ...] = _tools()
"""The airline tools, in upstream's order."""
TOOLS_BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
WRITE_TOOLS = mutating(TOOLS_BY_NAME, frozenset(f.__name__ for f in _WRITE))
"""The tools that change the database (upstream's WRITE tools)."""
