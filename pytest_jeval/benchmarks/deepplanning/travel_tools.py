"""The travel tools an agent gets in a DeepPlanning travel case: the nine functions of upstream's
``tool_schema_en.json``, by name and parameters, over the episode's :class:`~.travel_db.TravelDB`.

As upstream: each query filters the case's own table (a case's database holds only what its trip
needs, so hotels and attractions are not filtered by city or date); what is not found is an ordinary
result saying so (upstream's English wording), not an error; results are indented JSON, the attraction
tools' plain text.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_jeval.agents import HarnessError, Tool, ToolContext, tool
from pytest_jeval.benchmarks.deepplanning.travel_db import Row, TravelDB


def _db(ctx: ToolContext) -> TravelDB:
    if not isinstance(ctx.state, TravelDB):
        raise HarnessError("the travel case's database is not open")
    return ctx.state


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _float(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def _int(text: str) -> int:
    value = _float(text)
    return int(value) if value is not None else 0


def _route_key(row: Row) -> tuple[float, str]:
    value = _float(row.get("route_index", ""))
    return (value if value is not None else float("inf"), row.get("route_index", ""))


def _segments(rows: list[Row], number: str, carrier: str, flight: bool) -> list[dict[str, Any]]:
    """Rows grouped into routes (``route_index``), segments in ``segment_index`` order; a route's price is
    its first segment's."""
    routes: dict[str, list[Row]] = {}
    for row in sorted(rows, key=_route_key):
        routes.setdefault(row.get("route_index", ""), []).append(row)
    result = []
    for legs in routes.values():
        legs.sort(key=lambda r: _float(r.get("segment_index", "")) or 0.0)
        route: dict[str, Any] = {}
        previous: Row | None = None
        for n, row in enumerate(legs, 1):
            status = row.get("seat_status", "").strip()
            dep_city = row.get("origin_city", "")
            if not flight and n > 1 and previous is not None:
                dep_city = previous.get("arr_station_name", "").split(" Station")[0]
            segment = {"arrCityName": row.get("destination_city", ""),
                       "arrStationCode": row.get("arr_station_code", ""),
                       "arrStationName": row.get("arr_station_name", ""), "depCityName": dep_city,
                       "depStationCode": row.get("dep_station_code", ""),
                       "depStationName": row.get("dep_station_name", ""),
                       "duration": _int(row.get("duration", "")),
                       "arrDateTime": row.get("arr_datetime", ""), "depDateTime": row.get("dep_datetime", ""),
                       "marketingTransportName": row.get(carrier, ""), "marketingTransportNo": row.get(number, ""),
                       "seatClassName": row.get("seat_class", ""),
                       "Remaining Seats": status if status and status.lower() != "nan" else "Available"}
            if flight:
                segment.update(equipSize=row.get("equip_size", ""), equipType=row.get("equip_type", ""),
                               manufacturer=row.get("manufacturer", ""))
            route[f"Segment {n}"] = segment
            previous = row
        route["price"] = _float(legs[0].get("price", "")) or 0
        result.append(route)
    return result


def _rides(ctx: ToolContext, table: str, origin: str, destination: str, dep_date: str, seat: str) -> list[Row]:
    return [r for r in _db(ctx).tables[table]
            if r.get("origin_city") == origin and r.get("destination_city") == destination
            and r.get("dep_date") == dep_date and (not seat or r.get("seat_class") == seat)]


@tool
def query_train_info(origin: str, destination: str, depDate: str, ctx: ToolContext, seatClassName: str = "") -> str:
    """Query train tickets from origin to destination on a date: train number, departure/arrival time,
    stations, duration, seat class, remaining seats, price.

    Args:
        origin: Origin city, supports city name.
        destination: Destination city, supports city name.
        depDate: Departure date, format: YYYY-MM-DD.
        seatClassName: Train seat class: First Class Seat, Second Class Seat, Business Seat.
    """
    rows = _rides(ctx, "trains", origin, destination, depDate, seatClassName)
    if not rows:
        return f"No train information found from {origin} to {destination} on {depDate}"
    return _json([[route] for route in _segments(rows, "train_no", "train_type", flight=False)])


@tool
def query_flight_info(origin: str, destination: str, depDate: str, ctx: ToolContext, seatClassName: str = "") -> str:
    """Query flights from origin to destination on a date: flight number, departure/arrival time, airports,
    duration, seat class, remaining seats, price, aircraft.

    Args:
        origin: Origin city, supports city name.
        destination: Destination city, supports city name.
        depDate: Departure date, format: YYYY-MM-DD.
        seatClassName: Flight seat class: Economy Class, Business Class, First Class.
    """
    rows = _rides(ctx, "flights", origin, destination, depDate, seatClassName)
    if not rows:
        return f"No flight information found from {origin} to {destination} on {depDate}"
    return _json(_segments(rows, "flight_no", "airline", flight=True))


@tool
def query_hotel_info(destination: str, checkinDate: str, checkoutDate: str, ctx: ToolContext,
                     hotelStar: str = "", hotelBrands: str = "") -> str:
    """Query hotels at a destination for check-in and check-out dates, optionally by star rating and brand.
    All hotel information in a plan must come from this tool's results.

    Args:
        destination: Destination (country, province, city, district/county name).
        checkinDate: Check-in date, format: yyyy-MM-dd.
        checkoutDate: Check-out date, format: yyyy-MM-dd.
        hotelStar: Hotel star rating: 1~5; single value.
        hotelBrands: Hotel brand, single value, e.g. Ji Hotel, Atour Hotel, Marriott, Hilton, Home Inn,
            Jinjiang Inn, Hanting Hotel, Orange Hotel.
    """
    rows = [r for r in _db(ctx).tables["hotels"]
            if (not hotelStar or r.get("hotel_star") == hotelStar)
            and (not hotelBrands or r.get("brand") == hotelBrands)]
    if not rows:
        return (f"No hotel information found in {destination} from {checkinDate} to {checkoutDate}, please check "
                "parameters or reduce constraints")
    result = []
    for r in rows:
        hotel: dict[str, Any] = {"name": r.get("name", ""), "address": r.get("address", ""),
                                 "latitude": r.get("latitude", ""), "longitude": r.get("longitude", ""),
                                 "decorationTime": r.get("decoration_time", ""), "hotelStar": r.get("hotel_star", ""),
                                 "price": r.get("price", ""), "score": r.get("score", ""), "brand": r.get("brand", "")}
        if r.get("services", "").strip():
            hotel["services"] = r["services"].split(";")
        result.append(hotel)
    return _json(result)


def _number_text(text: str) -> Any:
    value = _float(text)
    return value if value is not None else ""


@tool
def query_attraction_details(attraction_name: str, ctx: ToolContext) -> str:
    """Query an attraction's details: id, name, city, coordinates, description, rating, opening and closing
    time, closing dates, recommended visit duration, ticket price, type.

    Args:
        attraction_name: Attraction name.
    """
    row = next((r for r in _db(ctx).tables["attractions"] if r.get("attraction_name") == attraction_name), None)
    if row is None:
        return f"Detailed information not found for attraction {attraction_name}"
    opening, closing = row.get("opening_time", ""), row.get("closing_time", "")
    hours = opening if opening == closing else f"{opening} to {closing}"
    ticket = _float(row.get("ticket_price", ""))
    return "\n".join([
        f"Attraction ID：{row.get('attraction_id', '')}", f"Attraction Name：{row.get('attraction_name', '')}",
        f"City：{row.get('city', '')}", f"Address：{row.get('address', '')}",
        f"Coordinates：Latitude {row.get('latitude', '')}，Longitude {row.get('longitude', '')}",
        f"Description：{row.get('description', '')}",
        f"Rating：{_number_text(row.get('rating', ''))}(average visitor rating)", f"Opening Hours：{hours}",
        f"Closed Dates：{row.get('closing_dates', '')}",
        f"Minimum Visit Duration：{_number_text(row.get('min_visit_hours', ''))} hours",
        f"Maximum Visit Duration：{_number_text(row.get('max_visit_hours', ''))} hours",
        f"Ticket Price：{ticket if ticket is not None else '0'} yuan",
        f"Attraction Type：{row.get('attraction_type', '')}"])


@tool
def recommend_attractions(city: str, ctx: ToolContext, attraction_type: str = "") -> str:
    """Popular attractions of a city, optionally of one type. All attraction information in a plan must come
    from this tool's results.

    Args:
        city: City name or keyword.
        attraction_type: Attraction type filter: 'Historical and Cultural', 'Natural Scenery', 'Art Exhibition',
            'City Landmark', 'Theme Park', 'Leisure Experience'.
    """
    rows = [r for r in _db(ctx).tables["attractions"]
            if not attraction_type or r.get("attraction_type") == attraction_type]
    if not rows:
        return "No attraction recommendations found"
    return "\n".join(["Recommended attractions:\n", *(
        f"{r.get('attraction_name', '')}, {r.get('description', '')}. This is a {r.get('attraction_type', '')} "
        "type attraction" for r in rows)])


@tool
def search_location(place_name: str, ctx: ToolContext) -> str:
    """The latitude and longitude of a place name (six decimals), e.g. 'Beijing South Railway Station'.

    Args:
        place_name: The place name to query, for example: 'Lao She Teahouse'.
    """
    row = _db(ctx).locations.get(place_name)
    if row is None:
        return (f"Coordinate information not found for location {place_name}, please check: 1. Whether the place "
                "name comes from other tool results; 2. Whether the place name is spelled correctly")
    return _json({"place_name": row.get("poi_name", place_name), "latitude": row.get("latitude", ""),
                  "longitude": row.get("longitude", "")})


@tool
def query_road_route_info(origin: str, destination: str, ctx: ToolContext) -> str:
    """Road route between two coordinates: distance (meters), duration (minutes) and cost (walking up to 2 km,
    cost 0; otherwise a taxi).

    Args:
        origin: Origin coordinates (format: latitude,longitude), six decimals.
        destination: Destination coordinates (format: latitude,longitude), six decimals.
    """
    db = _db(ctx)
    known = {r.get("origin") for r in db.tables["distances"]} | {r.get("destination") for r in db.tables["distances"]}
    for coordinate in (origin, destination):
        if coordinate not in known:
            return (f"Coordinate {coordinate} is not in query range, please check:\n1. Whether coordinate comes from "
                    "valid tool query result, not manually entered or modified\n2. Whether coordinate format is "
                    "correct (latitude,longitude)")
    row = db.route(origin, destination)
    if row is None:
        return f"No transportation information found from {origin} to {destination}"
    return _json({"origin": row.get("origin", origin), "destination": row.get("destination", destination),
                  "distance_in_meters": _int(row.get("distance_meters", "")),
                  "duration_in_minutes": _int(row.get("duration_minutes", "")), "cost": _int(row.get("cost", ""))})


def _restaurant(row: Row, *, details: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"id": row.get("restaurant_id", "")} if details else {}
    result.update({"name": row.get("restaurant_name", ""), "latitude": row.get("latitude", ""),
                   "longitude": row.get("longitude", ""), "price_per_person": row.get("price_per_person", ""),
                   "cuisine": row.get("cuisine", ""), "opening_time": row.get("opening_time", ""),
                   "closing_time": row.get("closing_time", ""),
                   "nearby_attraction_name": row.get("nearby_attraction_name", ""), "rating": row.get("rating", "")})
    if row.get("tags", "").strip():
        result["tags"] = row["tags"].split(";")
    return result


@tool
def recommend_restaurants(latitude: str, longitude: str, ctx: ToolContext) -> str:
    """Restaurants near a coordinate: name, coordinates, price per person, rating, business hours, ...

    Args:
        latitude: Latitude coordinate, six decimals.
        longitude: Longitude coordinate, six decimals.
    """
    rows = [r for r in _db(ctx).tables["restaurants"]
            if r.get("query_latitude") == latitude and r.get("query_longitude") == longitude]
    if not rows:
        return (f"No recommended restaurants found near coordinates ({latitude}, {longitude}), please check "
                "coordinate source")
    return _json([_restaurant(r, details=False) for r in rows])


@tool
def query_restaurant_details(restaurant_name: str, ctx: ToolContext) -> str:
    """A restaurant's details: coordinates, price per person, opening and closing time, rating, ...

    Args:
        restaurant_name: Restaurant name.
    """
    row = next((r for r in _db(ctx).tables["restaurants"] if r.get("restaurant_name") == restaurant_name), None)
    if row is None:
        return _json({"message": f"Detailed information not found for restaurant {restaurant_name}",
                      "restaurant_name": restaurant_name})
    return _json(_restaurant(row, details=True))


TRAVEL_TOOLS: list[Tool] = [query_train_info, query_flight_info, query_hotel_info, query_attraction_details,
                            recommend_attractions, search_location, query_road_route_info, recommend_restaurants,
                            query_restaurant_details]
