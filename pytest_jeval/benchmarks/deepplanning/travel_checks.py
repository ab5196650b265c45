"""DeepPlanning travel's constraint checks, as upstream's ``constraints_commonsense.py`` and
``constraints_hard.py`` define them, and its per-case scores (``eval_converted.py``).

A plan is upstream's converted JSON: ``budget_summary`` (``total_estimated_budget``, ...) and
``daily_plans`` (each day: ``current_city`` -- a city or ``from A to B`` --, ``accommodation``
(``name``, ``price_per_night``) and ``activities``, each with a ``time_slot`` ``HH:MM-HH:MM``, a
``type`` among ``travel_intercity_public``, ``travel_city``, ``attraction``, ``meal``, ``hotel``,
``buffer``, and ``details``).

Every check returns ``(passed, reason)``; ``passed`` is None for a check that does not apply. The
commonsense checks fall in eight dimensions of weight 1/8; a dimension scores 1 when every check of it
that ran passed (one vote vetoes). The personalised (hard) score is 1 when every hard constraint that
applies passes. A case's ``composite_score`` is their mean, ``case_acc`` 1 when both are 1.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from pytest_jeval.benchmarks.deepplanning.travel_db import TravelDB

Check = tuple[bool | None, str | None]
Day = dict[str, Any]

DIMENSIONS: dict[str, tuple[str, ...]] = {
    "Route Consistency": ("valid_trip_duration", "closed_loop_route_structure", "seamless_intercity_transfers"),
    "Sandbox Compliance": ("validated_accommodation", "validated_attractions", "validated_meals",
                           "validated_transportation"),
    "Itinerary Structure": ("traceable_accommodation", "ends_with_accommodation", "essential_meal_coverage",
                            "essential_attraction_coverage"),
    "Time Feasibility": ("no_time_overlaps", "reasonable_transfer_time"),
    "Business Hours": ("attraction_visit_within_opening_hours", "dining_within_service_hours",
                       "avoidance_of_closure_days"),
    "Duration Rationality": ("reasonable_duration_at_attractions", "reasonable_meal_duration"),
    "Cost Calculation Accuracy": ("cost_calculation_correctness",),
    "Activity Diversity": ("diverse_meal_options", "diverse_attraction_options"),
}
WEIGHT = 1 / len(DIMENSIONS)
WEEKDAYS = {"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 7,
            "周一": 1, "周二": 2, "周三": 3, "周四": 4, "周五": 5, "周六": 6, "周日": 7}
ALL_DAY = ("全天开放", "Open 24 Hours")
FLIGHT_MODES = ("flight", "飞机", "airplane", "plane")
TRAIN_MODES = ("train", "火车", "railway", "高铁", "gaotie")


# ---------------------------------------------------------------- reading a plan

def route(current_city: Any) -> tuple[str | None, str | None]:
    """``from A to B`` -> (A, B); anything else -> (None, None)."""
    if not isinstance(current_city, str):
        return None, None
    found = re.search(r"from\s+(.+?)\s+to\s+([^,]+)(?=[,\s]|$)", current_city)
    return (found.group(1).strip(), found.group(2).strip()) if found else (None, None)


def city(name: str | None) -> str | None:
    """A city name without any parenthesised part (both bracket styles)."""
    return None if name is None else re.sub(r"[（(].*?[)）]", "", name).strip()


def clock(text: Any) -> int | None:
    """``HH:MM`` -> minutes after midnight (``24:00`` is 23:59)."""
    if not isinstance(text, str):
        return None
    text = text.strip()
    if text == "24:00":
        return 23 * 60 + 59
    found = re.fullmatch(r"(\d{1,2}):(\d{2})", text)
    if not found or int(found.group(1)) > 23 or int(found.group(2)) > 59:
        return None
    return int(found.group(1)) * 60 + int(found.group(2))


def slot(text: Any) -> tuple[int | None, int | None]:
    """A ``time_slot``'s start and end as clock minutes (the end may be before the start)."""
    if not isinstance(text, str):
        return None, None
    found = re.match(r"\s*(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*", text)
    return (clock(found.group(1)), clock(found.group(2))) if found else (None, None)


def span(text: Any) -> tuple[int | None, int | None]:
    """A ``time_slot`` in minutes with the end past midnight moved to the next day."""
    start, end = slot(text)
    if start is None or end is None:
        return None, None
    return start, end + 1440 if end < start else end


def _hour_of(act: dict[str, Any], part: int) -> float | None:
    """An activity's start (0) or end (1) in hours, from ``start_time``/``end_time`` or the slot (loosely)."""
    value = act.get("start_time" if part == 0 else "end_time")
    if not value:
        pieces = str(act.get("time_slot") or "").split("-")
        value = pieces[part] if len(pieces) > part and "-" in str(act.get("time_slot") or "") else ""
    try:
        hours, minutes = (int(x) for x in str(value).split(":"))
    except ValueError:
        return None
    return hours + minutes / 60


def _minutes_of(act: dict[str, Any], part: int) -> int | None:
    hours = _hour_of(act, part)
    return None if hours is None else round(hours * 60)


def activities(day: Day) -> list[dict[str, Any]]:
    """A day's activities (dicts only)."""
    return [a for a in (day.get("activities") or []) if isinstance(a, dict)]


def details(act: dict[str, Any]) -> dict[str, Any]:
    """An activity's details (an empty dict when absent)."""
    value = act.get("details")
    return value if isinstance(value, dict) else {}


def of_type(days: list[Day], kind: str) -> Iterator[tuple[dict[str, Any], dict[str, Any], str]]:
    """(activity, details, stripped name) of every activity of a type."""
    for day in days:
        for act in activities(day):
            if act.get("type") == kind:
                info = details(act)
                yield act, info, str(info.get("name") or "").strip()


def _intercity_time(day: Day, part: int) -> float | None:
    """The first intercity ride's departure (0) or arrival (1) hour of a day."""
    for act in activities(day):
        if act.get("type") == "travel_intercity_public":
            hours = _hour_of(act, part)
            if hours is not None:
                return hours
    return None


def _rounded(value: Any) -> int | None:
    try:
        return round(float(value))
    except (TypeError, ValueError):
        return None


def _number(value: Any) -> float | None:
    """A plan's number (int/float only, as upstream requires for prices)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _failed(problems: list[str], what: str) -> Check:
    return (False, f"{what}: {problems}") if problems else (True, None)


# ---------------------------------------------------------------- 1. route consistency

def valid_trip_duration(days: list[Day], meta: dict[str, Any]) -> Check:
    """The plan has exactly ``meta.days`` days."""
    expected = int(meta.get("days") or 0)
    ok = expected > 0 and len(days) == expected
    return ok, None if ok else f"Plan has {len(days)} days, expected {expected}"


def closed_loop_route_structure(days: list[Day], meta: dict[str, Any]) -> Check:
    """The first travel day leaves from the origin and the last returns to it."""
    org = city(meta.get("org"))
    first_from, _ = route(days[0].get("current_city")) if days else (None, None)
    _, last_to = route(days[-1].get("current_city")) if days else (None, None)
    if first_from and city(first_from) != org:
        return False, f"First day departure should be from {org}"
    if last_to and city(last_to) != org:
        return False, f"Last day destination should return to {org}"
    return True, None


def seamless_intercity_transfers(days: list[Day], meta: dict[str, Any], db: TravelDB) -> Check:
    """Where the traveller is, day by day: a ``from A to B`` day leaves from where they are and has an
    intercity ride from A to B (stations mapped to cities through the case's flights and trains); a
    one-city day is where they are."""
    here = city(meta.get("org"))
    if not here:
        return False, "Missing org info, cannot track location"
    problems: list[str] = []
    for n, day in enumerate(days, 1):
        current = str(day.get("current_city") or "")
        a, b = route(current)
        if a and b:
            if city(a) != here:
                problems.append(f"D{n}: leaves from {a} but the traveller is in {here}")
            rides = [details(x) for x in activities(day) if x.get("type") == "travel_intercity_public"]
            if not rides:
                problems.append(f"D{n}: {a}->{b} without a travel_intercity_public activity")
            elif not any(db.station_city(str(r.get("from") or "").strip()) == city(a)
                         and db.station_city(str(r.get("to") or "").strip()) == city(b)
                         for r in rides if r.get("from") and r.get("to")):
                problems.append(f"D{n}: no intercity ride goes {a}->{b} "
                                f"(rides: {[str(r.get('from')) + '->' + str(r.get('to')) for r in rides]})")
            here = city(b)
        else:
            name = city(current)
            if not name:
                problems.append(f"D{n}: current_city is empty")
            elif name != here:
                problems.append(f"D{n}: current_city is {current} but the traveller is in {here}")
    return _failed(problems, "Location tracking inconsistent")


# ---------------------------------------------------------------- 2. sandbox compliance

def validated_accommodation(days: list[Day], db: TravelDB) -> Check:
    """Every hotel (the ``accommodation`` field, name and price; hotel activities, name) is in the case's
    hotels; a last day's ``-`` is no hotel."""
    if not db.hotels:
        return False, "Hotel database failed to load or is empty"
    missing: list[str] = []
    wrong: list[str] = []
    for n, day in enumerate(days):
        stay = day.get("accommodation")
        if isinstance(stay, dict):
            name = str(stay.get("name") or "").strip()
            if not name or (n == len(days) - 1 and name == "-"):
                pass
            elif name not in db.hotels:
                missing.append(name)
            else:
                price = _rounded(db.hotels[name].get("price"))
                given = _number(stay.get("price") or stay.get("cost") or stay.get("price_per_night"))
                if price is not None and (given is None or round(given) != price):
                    wrong.append(f"{name}: plan has {given} != database {price}")
    for _act, _info, name in of_type(days[:-1], "hotel"):
        if name and name not in db.hotels:
            missing.append(name)
    if missing:
        return False, f"Hotels not in database: {sorted(set(missing))}"
    return _failed(wrong, "Hotel price mismatch")


def _priced(days: list[Day], kind: str, table: dict[str, dict[str, str]], column: str,
            label: str) -> Check:
    if not table:
        return False, f"{label.capitalize()} database failed to load or is empty"
    missing: list[str] = []
    wrong: list[str] = []
    for _act, info, name in of_type(days, kind):
        if not name or name not in table:
            missing.append(name or "<empty>")
            continue
        price = _rounded(table[name].get(column))
        if price is None:
            continue
        given = _number(info.get("cost"))
        if given is None or round(given) != price:
            wrong.append(f"{name}: plan has {info.get('cost')} != database {price}")
    if missing:
        return False, f"{label.capitalize()}s not in database: {sorted(set(missing))}"
    return _failed(wrong, f"{label.capitalize()} price mismatch")


def validated_attractions(days: list[Day], db: TravelDB) -> Check:
    """Every attraction is in the case's attractions and its cost is the ticket price."""
    return _priced(days, "attraction", db.attractions, "ticket_price", "attraction")


def validated_meals(days: list[Day], db: TravelDB) -> Check:
    """Every meal's restaurant is in the case's restaurants and its cost the price per person."""
    return _priced(days, "meal", db.restaurants, "price_per_person", "restaurant")


def validated_transportation(days: list[Day], db: TravelDB) -> Check:
    """Every intercity ride has a number, from, to and cost; the number is a flight or train of the case
    and the cost (rounded) one of that number's prices."""
    incomplete: list[str] = []
    unknown: list[str] = []
    wrong: list[str] = []
    for day in days:
        for act in activities(day):
            if act.get("type") != "travel_intercity_public":
                continue
            info = details(act)
            absent = [k for k in ("number", "from", "to", "cost") if info.get(k) in (None, "")]
            if absent:
                incomplete.append(f"{act.get('time_slot') or '<no time_slot>'}: missing {absent}")
                continue
            number = str(info["number"]).strip()
            rows = db.flights_by_no.get(number) or db.trains_by_no.get(number)
            if not rows:
                unknown.append(number)
                continue
            try:
                cost = round(float(info["cost"]))
            except (TypeError, ValueError):
                continue
            prices = [float(p) for p in (r.get("price", "") for r in rows) if _rounded(p) is not None]
            if prices and not any(round(p) == cost for p in prices):
                wrong.append(f"{number}: plan has {info['cost']} != database prices {prices}")
    parts = []
    if incomplete:
        parts.append(f"Missing fields: {incomplete}")
    if unknown:
        parts.append(f"Not found in database: {sorted(set(unknown))}")
    if wrong:
        parts.append(f"Price mismatch: {wrong}")
    return (False, "; ".join(parts)) if parts else (True, None)


# ---------------------------------------------------------------- 3. itinerary structure

def traceable_accommodation(days: list[Day]) -> Check:
    """Every day but the last has a hotel activity and an ``accommodation``; the last has none (or ``-``)."""
    if not days:
        return False, "Missing daily_plans"
    missing = [n for n, day in enumerate(days[:-1], 1)
               if not (any(a.get("type") == "hotel" for a in activities(day)) and day.get("accommodation"))]
    last = days[-1].get("accommodation")
    problem = None
    if last:
        if isinstance(last, dict):
            name = str(last.get("name") or "").strip()
            if name and name != "-":
                problem = f"last day accommodation.name should be '-' or empty, actual '{name}'"
        else:
            problem = "last day accommodation should be empty or name '-'"
    reasons = ([f"Accommodation not traceable on days: {missing}"] if missing else []) + ([problem] if problem else [])
    return (False, "; ".join(reasons)) if reasons else (True, None)


def ends_with_accommodation(days: list[Day]) -> Check:
    """Every day but the last ends with a hotel activity."""
    if not days:
        return False, "Missing daily_plans"
    bad = [n for n, day in enumerate(days[:-1], 1) if not activities(day) or activities(day)[-1].get("type") != "hotel"]
    return (False, f"Last activity not hotel on days: {bad}") if bad else (True, None)


def _meal_gap(meals: list[tuple[int, int]], n: int, problems: list[str]) -> None:
    """Two meals at least two hours apart (upstream's gap rule: the first two by start)."""
    if len(meals) >= 2:
        first, second = sorted(meals)[:2]
        gap = second[0] - first[1]
        if gap < 120:
            problems.append(f"D{n}: Gap between two meals less than 2 hours (gap {gap} minutes)")


def essential_meal_coverage(days: list[Day], meta: dict[str, Any]) -> Check:
    """Meals a day needs: two (two hours apart) on a day in one city; on a travel day, by the times of
    leaving a visited city (before 9:00 none, before 15:00 at most one, later at least one) and of arriving
    in one (before 10:00 two, before 15:00 at least one, later at most one)."""
    org = city(meta.get("org"))
    if not org:
        return False, "Missing org info, cannot determine meal necessity"
    here = org
    problems: list[str] = []
    good = 0
    for n, day in enumerate(days, 1):
        a, b = route(str(day.get("current_city") or ""))
        meals = [(s, e) for act in activities(day) if act.get("type") == "meal"
                 for s, e in [(_minutes_of(act, 0), _minutes_of(act, 1))] if s is not None and e is not None]
        before = len(problems)
        if a and b:
            if city(a) == here and city(a) != org:
                leave = _intercity_time(day, 0)
                if leave is not None:
                    if leave < 9:
                        if meals:
                            problems.append(f"D{n}: Departure <10:00, should not arrange any meals")
                    elif leave < 15:
                        if len(meals) > 1:
                            problems.append(f"D{n}: Departure 10:00-15:00, should not arrange two meals")
                    else:
                        if not meals:
                            problems.append(f"D{n}: Departure >15:00, must arrange at least one meal")
                        _meal_gap(meals, n, problems)
            if city(b) != org:
                arrive = _intercity_time(day, 1)
                if arrive is not None:
                    if arrive < 10:
                        if len(meals) < 2:
                            problems.append(f"D{n}: Arrival <10:00, must arrange two meals")
                        _meal_gap(meals, n, problems)
                    elif arrive < 15:
                        if not meals:
                            problems.append(f"D{n}: Arrival 10:00-16:00, must arrange at least one meal")
                        _meal_gap(meals, n, problems)
                    elif len(meals) > 1:
                        problems.append(f"D{n}: Arrival >16:00, should not arrange two meals")
            here = city(b) or here
        else:
            if len(meals) < 2:
                problems.append(f"D{n}: Non-intercity day must arrange two meals")
            _meal_gap(meals, n, problems)
        good += len(problems) == before
    if not days or good == len(days):
        return True, None
    return False, f"Meal necessity: {good}/{len(days)} days correct; Violations: {'; '.join(problems)}"


def _minutes_between(act: dict[str, Any]) -> int:
    """An activity's length in whole minutes as upstream computes it: from fractional hours, truncated (so
    09:01-12:30 is 208 minutes, not 209)."""
    start, end = act.get("start_time") or "", act.get("end_time") or ""
    if not start or not end:
        pieces = str(act.get("time_slot") or "").split("-")
        if len(pieces) >= 2:
            start, end = pieces[0], pieces[1]
    s, e = _hour_of({"start_time": start}, 0), _hour_of({"end_time": end}, 1)
    if s is None or e is None:
        return 0
    hours = e - s
    return int((hours + 24 if hours < 0 else hours) * 60)


def essential_attraction_coverage(days: list[Day], meta: dict[str, Any]) -> Check:
    """Sightseeing a day needs: in one city, four hours at attractions (with the rides to and from them) or
    two attractions; leaving a visited city after 16:00 or arriving in one before 12:00, one attraction."""
    org = city(meta.get("org"))
    if not org:
        return False, "Missing org info, cannot determine attraction necessity"
    here = org
    problems: list[str] = []
    for n, day in enumerate(days, 1):
        acts = activities(day)
        names = {str(details(a).get("name") or "").strip() for a in acts if a.get("type") == "attraction"} - {""}
        minutes = sum(_minutes_between(a) for a in acts if a.get("type") == "attraction")
        minutes += sum(_minutes_between(a) for a in acts if a.get("type") == "travel_city"
                       and ({str(details(a).get("from") or "").strip(), str(details(a).get("to") or "").strip()}
                            & names))
        count = sum(1 for a in acts if a.get("type") == "attraction")
        a, b = route(str(day.get("current_city") or ""))
        if a and b:
            if city(a) == here and city(a) != org:
                leave = _intercity_time(day, 0)
                if leave is not None and leave > 16 and count < 1:
                    problems.append(f"D{n}: Departure time later than 16:00, must arrange at least 1 attraction")
            if city(b) != org:
                arrive = _intercity_time(day, 1)
                if arrive is not None and arrive < 12 and count < 1:
                    problems.append(f"D{n}: Arrival time earlier than 12:00, must arrange at least 1 attraction")
            here = city(b) or here
        elif minutes / 60 < 4 and count < 2:
            problems.append(f"D{n}: Non-intercity day requires attraction-related duration >= 4 hours or >= 2 "
                            f"attractions (current: {minutes / 60:.1f} hours, {count} attractions)")
    return (False, f"Attraction arrangements unreasonable: {'; '.join(problems)}") if problems else (True, None)


# ---------------------------------------------------------------- 4. time feasibility

def no_time_overlaps(days: list[Day]) -> Check:
    """No two activities of a day overlap."""
    clashes: list[str] = []
    for n, day in enumerate(days, 1):
        spans = sorted((s, e, str(a.get("type") or "")) for a in activities(day)
                       for s, e in [span(a.get("time_slot"))] if s is not None and e is not None)
        clashes += [f"D{n}: {p[2]} and {c[2]} have time overlap" for p, c in itertools.pairwise(spans) if c[0] < p[1]]
    return _failed(clashes, "Time overlaps exist")


def reasonable_transfer_time(days: list[Day], db: TravelDB) -> Check:
    """Between consecutive anchors (hotel, attraction, meal, intercity ride) at different places, the gap
    less any buffers between them is the taxi time of the case's distance matrix, within
    [min(t-5, t rounded down to 10), max(t+5, t rounded up to 10)] minutes. Pairs without coordinates or
    matrix entry are skipped (noted)."""
    anchors_types = {"hotel", "attraction", "meal", "travel_intercity_public"}
    problems: list[str] = []
    skipped: list[str] = []
    for n, day in enumerate(days, 1):
        acts = activities(day)
        anchors = [(s, e, a) for a in acts if a.get("type") in anchors_types
                   for s, e in [span(a.get("time_slot"))] if s is not None and e is not None]
        for (_ps, pe, prev), (cs, _ce, cur) in itertools.pairwise(anchors):
            gap = cs - pe
            if pe > cs:
                if pe - cs <= 12 * 60:
                    continue  # an overlap: no_time_overlaps reports it
                gap += 1440
            if gap < 0:
                continue  # out of order: no_time_overlaps' business
            buffers = 0
            start = cs
            for act in acts:
                if str(act.get("type") or "").strip() != "buffer":
                    continue
                bs, be = span(act.get("time_slot"))
                if bs is None or be is None:
                    continue
                if bs < pe:
                    bs, be = bs + 1440, be + 1440
                elif be < pe:
                    be += 1440
                if start < pe:
                    start += 1440
                if pe <= bs and be <= start:
                    buffers += be - bs
            net = gap - buffers
            pd, cd = details(prev), details(cur)
            pname = str((pd.get("to") if prev.get("type") == "travel_intercity_public" else pd.get("name"))
                        or prev.get("type") or "").strip()
            cname = str((cd.get("from") if cur.get("type") == "travel_intercity_public" else cd.get("name"))
                        or cur.get("type") or "").strip()
            if pname == cname:
                continue
            taxi = db.taxi_minutes(pname, cname)
            if taxi is None:
                skipped.append(f"D{n}:{pname}->{cname}")
                continue
            low = min(max(0.0, taxi - 5), (taxi // 10) * 10)
            high = max(taxi + 5, math.ceil(taxi / 10) * 10)
            if not low <= net <= high:
                problems.append(f"D{n}:{pname}->{cname} commute {taxi:.0f}min, plan gap {net:.0f}min (buffers "
                                f"{buffers:.0f}min excluded) not in [{low:.0f},{high:.0f}]min")
    if problems:
        return False, f"Anchor transfer time unreasonable: {problems}" + (f"; skipped: {skipped}" if skipped else "")
    return True, (f"Some pairs missing coordinates, skipped: {skipped}" if skipped else None)


# ---------------------------------------------------------------- 5. business hours

def within_hours(start: int, end: int, opens: int, closes: int) -> bool:
    """A slot inside opening hours (hours past midnight, e.g. 16:30-03:00, handled as upstream)."""
    crosses = end < start
    if opens <= closes:
        return not crosses and start >= opens and end <= closes
    if crosses:
        return start >= opens and end <= closes
    return (start >= opens and end >= opens) or (start <= closes and end <= closes)


def attraction_visit_within_opening_hours(days: list[Day], db: TravelDB) -> Check:
    """Each known attraction is visited within its opening hours (all-day ones always)."""
    if not db.attractions:
        return False, "Attraction database failed to load or is empty"
    outside: list[str] = []
    unknown: list[str] = []
    for act, _info, name in of_type(days, "attraction"):
        if name not in db.attractions:
            continue
        row = db.attractions[name]
        opens_s, closes_s = str(row.get("opening_time") or "").strip(), str(row.get("closing_time") or "").strip()
        if opens_s in ALL_DAY and closes_s in ALL_DAY:
            continue
        s, e = slot(act.get("time_slot"))
        opens, closes = clock(opens_s), clock(closes_s)
        if s is None or e is None or opens is None or closes is None:
            unknown.append(name)
        elif not within_hours(s, e, opens, closes):
            outside.append(f"{name}({act.get('time_slot')} not within {opens_s}-{closes_s})")
    if outside:
        return False, f"Attraction opening hours mismatch: {outside}"
    return (False, f"Missing opening hours or invalid time_slot: {sorted(set(unknown))}") if unknown else (True, None)


def dining_within_service_hours(days: list[Day], db: TravelDB) -> Check:
    """Each known restaurant's meal has a slot inside its business hours (unknown hours are skipped)."""
    if not db.restaurants:
        return False, "Restaurant database failed to load or is empty"
    outside: list[str] = []
    no_slot: list[str] = []
    for act, _info, name in of_type(days, "meal"):
        if name not in db.restaurants:
            continue
        row = db.restaurants[name]
        s, e = slot(act.get("time_slot"))
        if s is None or e is None:
            no_slot.append(name)
            continue
        opens, closes = clock(row.get("opening_time")), clock(row.get("closing_time"))
        if opens is not None and closes is not None and not within_hours(s, e, opens, closes):
            outside.append(f"{name}({act.get('time_slot')} not within {row.get('opening_time')}-"
                           f"{row.get('closing_time')})")
    if no_slot:
        return False, f"Missing time_slot: {sorted(set(no_slot))}"
    return _failed(outside, "Meal time not within business hours")


def avoidance_of_closure_days(days: list[Day], db: TravelDB, meta: dict[str, Any]) -> Check:
    """No attraction on a weekday it is closed (day n's weekday from ``depart_weekday``, 1 = Monday)."""
    if not db.attractions:
        return False, "Attraction database failed to load or is empty"
    first = meta.get("depart_weekday")
    if not first:
        return True, None
    try:
        first = int(first)
    except (TypeError, ValueError):
        return False, f"Invalid depart_weekday value: {first}"
    closed: list[str] = []
    for n, day in enumerate(days):
        weekday = (first + n - 1) % 7 + 1
        for _act, _info, name in of_type([day], "attraction"):
            if name not in db.attractions:
                continue
            text = str(db.attractions[name].get("closing_dates") or "")
            shut = {WEEKDAYS.get(p.strip().lower(), WEEKDAYS.get(p.strip())) for p in text.split(",")}
            if weekday in shut:
                closed.append(f"{name} on Day {n + 1} (weekday {weekday}), closed on: {text}")
    return (False, f"Attractions visited on closing dates: {'; '.join(closed)}") if closed else (True, None)


# ---------------------------------------------------------------- 6. duration rationality

def reasonable_duration_at_attractions(days: list[Day], db: TravelDB) -> Check:
    """Each known attraction's visit lasts between its minimum and maximum visit hours."""
    if not db.attractions:
        return False, "Attraction database failed to load or is empty"
    bad: list[str] = []
    for act, _info, name in of_type(days, "attraction"):
        if name not in db.attractions:
            continue
        row = db.attractions[name]
        s, e = span(act.get("time_slot"))
        hours = (e - s) / 60 if s is not None and e is not None else None
        low, high = _float(row.get("min_visit_hours")), _float(row.get("max_visit_hours"))
        if hours is None or low is None or high is None:
            bad.append(f"{name}: Missing duration")
        elif not low <= hours <= high:
            bad.append(f"{name}: plan has {hours}h not in recommended {low}-{high}h")
    return _failed(bad, "Attraction visit duration unreasonable")


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def reasonable_meal_duration(days: list[Day]) -> Check:
    """Each named meal lasts 30 to 150 minutes."""
    bad: list[str] = []
    for act, _info, name in of_type(days, "meal"):
        if not name:
            continue
        s, e = span(act.get("time_slot"))
        if s is None or e is None:
            bad.append(f"{name}: Missing time_slot or invalid format")
        elif e - s < 30:
            bad.append(f"{name}: meal duration {e - s}min < minimum 30min")
        elif e - s > 150:
            bad.append(f"{name}: meal duration {e - s}min > maximum 150min")
    return _failed(bad, "Meal duration unreasonable")


# ---------------------------------------------------------------- 7. cost

def plan_cost(days: list[Day], meta: dict[str, Any]) -> dict[str, float]:
    """The trip's cost from the plan: each day's first intercity fare and every meal and ticket per person,
    each night's hotel per room (the last day none), each city ride per taxi (four people a taxi)."""
    people = int(meta.get("people_number") or 1)
    rooms = int(meta.get("room_number") or 1)
    taxis = max(1, (people + 3) // 4)
    cost = {"transportation": 0.0, "accommodation": 0.0, "meals": 0.0, "attractions": 0.0}
    for day in days:
        for act in activities(day):
            if act.get("type") == "travel_intercity_public":
                fare = _float(details(act).get("cost", 0))
                if fare is not None:
                    cost["transportation"] += fare * people if fare > 0 else 0.0
                    break
    for day in days[:-1]:
        stay = day.get("accommodation")
        if isinstance(stay, dict):
            price = _float(stay.get("price") or stay.get("price_per_night") or stay.get("cost"))
            cost["accommodation"] += (price or 0.0) * rooms
    for kind, key, times in (("meal", "meals", people), ("attraction", "attractions", people),
                             ("travel_city", "transportation", taxis)):
        for _act, info, _name in of_type(days, kind):
            value = info.get("cost")
            if value:
                cost[key] += (_float(value) or 0.0) * times
    cost["total"] = sum(cost.values())
    return cost


def cost_calculation_correctness(plan: dict[str, Any], days: list[Day], meta: dict[str, Any]) -> Check:
    """The plan's ``total_estimated_budget`` is within 10% of the cost computed from its days."""
    summary = plan.get("budget_summary")
    if not summary or not isinstance(summary, dict):
        return False, "Missing budget_summary in plan"
    if summary.get("total_estimated_budget") is None:
        return False, "Missing total_estimated_budget in budget_summary"
    stated = _float(summary["total_estimated_budget"])
    if stated is None:
        return False, f"Invalid total_estimated_budget: {summary['total_estimated_budget']}"
    cost = plan_cost(days, meta)
    if stated == 0:
        if cost["total"] == 0:
            return True, None
        return False, f"Plan shows 0 budget but calculated {cost['total']:.2f}"
    error = abs(cost["total"] - stated) / stated
    if error <= 0.10:
        return True, None
    return False, (f"Budget accuracy failed: Plan total={stated:.2f}, Calculated total={cost['total']:.2f} "
                   f"({', '.join(f'{k}={v:.2f}' for k, v in cost.items() if k != 'total')}), "
                   f"Error rate={error:.2%} (exceeds 10% threshold)")


# ---------------------------------------------------------------- 8. diversity

def _unique(days: list[Day], kind: str, label: str) -> Check:
    seen: set[str] = set()
    for _act, info, _name in of_type(days, kind):
        name = info.get("name")
        if name and name in seen:
            return False, f"Duplicate {label}: {name}"
        if name:
            seen.add(str(name))
    return True, None


def diverse_meal_options(days: list[Day]) -> Check:
    """No restaurant twice in the trip."""
    return _unique(days, "meal", "restaurant")


def diverse_attraction_options(days: list[Day]) -> Check:
    """No attraction twice in the trip."""
    return _unique(days, "attraction", "attraction")


# ---------------------------------------------------------------- all commonsense checks

def commonsense(plan: dict[str, Any], meta: dict[str, Any], db: TravelDB) -> dict[str, Check]:
    """Every commonsense check of a plan, by upstream's name. Without ``daily_plans`` every check but
    ``avoidance_of_closure_days`` fails with that reason (upstream leaves that one out then)."""
    days = [d for d in (plan.get("daily_plans") or []) if isinstance(d, dict)]
    if not days:
        return {name: (False, "Missing daily_plans") for names in DIMENSIONS.values() for name in names
                if name != "avoidance_of_closure_days"}
    checks: dict[str, Callable[[], Check]] = {
        "valid_trip_duration": lambda: valid_trip_duration(days, meta),
        "closed_loop_route_structure": lambda: closed_loop_route_structure(days, meta),
        "seamless_intercity_transfers": lambda: seamless_intercity_transfers(days, meta, db),
        "validated_accommodation": lambda: validated_accommodation(days, db),
        "validated_attractions": lambda: validated_attractions(days, db),
        "validated_meals": lambda: validated_meals(days, db),
        "validated_transportation": lambda: validated_transportation(days, db),
        "traceable_accommodation": lambda: traceable_accommodation(days),
        "ends_with_accommodation": lambda: ends_with_accommodation(days),
        "essential_meal_coverage": lambda: essential_meal_coverage(days, meta),
        "essential_attraction_coverage": lambda: essential_attraction_coverage(days, meta),
        "no_time_overlaps": lambda: no_time_overlaps(days),
        "reasonable_transfer_time": lambda: reasonable_transfer_time(days, db),
        "attraction_visit_within_opening_hours": lambda: attraction_visit_within_opening_hours(days, db),
        "dining_within_service_hours": lambda: dining_within_service_hours(days, db),
        "avoidance_of_closure_days": lambda: avoidance_of_closure_days(days, db, meta),
        "reasonable_duration_at_attractions": lambda: reasonable_duration_at_attractions(days, db),
        "reasonable_meal_duration": lambda: reasonable_meal_duration(days),
        "cost_calculation_correctness": lambda: cost_calculation_correctness(plan, days, meta),
        "diverse_meal_options": lambda: diverse_meal_options(days),
        "diverse_attraction_options": lambda: diverse_attraction_options(days),
    }
    return {name: run() for name, run in checks.items()}


# ---------------------------------------------------------------- hard constraints

def _names(plan: dict[str, Any], kind: str, key: str = "name", modes: tuple[str, ...] = ()) -> set[str]:
    found: set[str] = set()
    for day in plan.get("daily_plans") or []:
        if not isinstance(day, dict):
            continue
        if kind == "accommodation":
            stay = day.get("accommodation")
            if isinstance(stay, dict):
                found.add(str(stay.get("name", "")))
            continue
        for act in activities(day):
            if act.get("type") != kind:
                continue
            info = details(act)
            if modes and str(info.get("mode", "")).lower() not in modes:
                continue
            found.add(str(info.get(key, "")))
    return found


def _required(present: set[str], wanted: list[tuple[str, Any]], what: str) -> Check:
    for direction, value in wanted:
        if value not in present:
            return False, f"Required {direction}{what} not found: {value}"
    return True, None


def hard_check(key: str, data: dict[str, Any], plan: dict[str, Any], meta: dict[str, Any]) -> Check:
    """One hard constraint: the plan uses the flight/train numbers, hotel, restaurant or every attraction
    the constraint names (its type only words the reason), or its computed cost is within ``max_budget``."""
    if key.startswith("flight_") or key.startswith("train_"):
        flight = key.startswith("flight_")
        present = _names(plan, "travel_intercity_public", "number", FLIGHT_MODES if flight else TRAIN_MODES)
        field = "flight_no" if flight else "train_no"
        wanted = [(d, data[f"{d}_{field}"]) for d in ("outbound", "inbound") if f"{d}_{field}" in data]
        return _required(present, [(d + " ", v) for d, v in wanted], "flight" if flight else "train")
    if key.startswith("hotel_"):
        hotel = data.get("hotel_name")
        if not hotel:
            return False, "No hotel name specified in constraint data"
        if hotel in _names(plan, "accommodation"):
            return True, None
        return False, f"Required hotel not found ({key}): {hotel}"
    if key.startswith("restaurant_"):
        restaurant = data.get("restaurant_name")
        if not restaurant:
            return False, "No restaurant name specified in constraint data"
        if restaurant in _names(plan, "meal"):
            return True, None
        return False, f"Required restaurant not found ({key}): {restaurant}"
    if key.startswith("attraction_"):
        wanted_names = list(data.get("attraction_names") or [])
        if not wanted_names:
            return False, "No attraction names specified in constraint data"
        missing = [n for n in wanted_names if n not in _names(plan, "attraction")]
        return (False, f"Missing attractions ({key}): {', '.join(missing)}") if missing else (True, None)
    if key == "budget_constraint":
        limit = _float(data.get("max_budget"))
        if limit is None:
            return False, f"Invalid or missing max_budget: {data.get('max_budget')}"
        days = [d for d in (plan.get("daily_plans") or []) if isinstance(d, dict)]
        if not days:
            return False, "Plan missing daily_plans"
        total = plan_cost(days, meta)["total"]
        return (True, None) if total <= limit else (False, f"Actual budget exceeds limit: {total:.2f} > {limit:.2f}")
    return None, f"Unknown constraint type: {key}"


def hard(plan: dict[str, Any], meta: dict[str, Any]) -> dict[str, Check]:
    """Every hard constraint of the case (``meta.hard_constraints``) against the plan."""
    result: dict[str, Check] = {}
    for key, data in (meta.get("hard_constraints") or {}).items():
        try:
            result[key] = hard_check(key, data if isinstance(data, dict) else {}, plan, meta)
        except (KeyError, TypeError, ValueError) as exc:
            result[key] = (False, f"Evaluation error: {exc}")
    return result


# ---------------------------------------------------------------- a case's scores

def case_scores(plan: dict[str, Any], meta: dict[str, Any], db: TravelDB) -> dict[str, Any]:
    """Upstream's per-case scores and the failed checks, each with its reason."""
    checks = commonsense(plan, meta, db)
    dimensions: dict[str, float] = {}
    for dimension, names in DIMENSIONS.items():
        ran = [checks[n][0] for n in names if n in checks and checks[n][0] is not None]
        dimensions[dimension] = 1.0 if ran and all(ran) else 0.0
    common = sum(dimensions.values()) * WEIGHT
    constraints = hard(plan, meta)
    ran_hard = [ok for ok, _ in constraints.values() if ok is not None]
    personal = 1.0 if ran_hard and all(ran_hard) else 0.0
    failed = [{"kind": "commonsense", "check": n, "reason": r} for n, (ok, r) in checks.items() if ok is False]
    failed += [{"kind": "hard", "check": n, "reason": r} for n, (ok, r) in constraints.items() if ok is False]
    return {"commonsense_score": common, "personalized_score": personal, "composite_score": (common + personal) / 2,
            "case_acc": 1.0 if common == 1.0 and personal == 1.0 else 0.0, "dimension_scores": dimensions,
            "failed_constraints": failed,
            "checks": {n: ok for n, (ok, _r) in checks.items()},
            "hard_constraints": {n: ok for n, (ok, _r) in constraints.items()}}
