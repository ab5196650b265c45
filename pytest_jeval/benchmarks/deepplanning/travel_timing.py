"""DeepPlanning travel's commonsense checks of time (upstream's ``constraints_commonsense.py``, dimensions 4-6):
time feasibility, business hours, duration rationality."""

from __future__ import annotations

import itertools
import math
from typing import Any

from pytest_jeval.benchmarks.deepplanning.travel_db import TravelDB
from pytest_jeval.benchmarks.deepplanning.travel_reading import (
    ALL_DAY,
    WEEKDAYS,
    Check,
    Day,
    _failed,
    _float,
    activities,
    clock,
    details,
    of_type,
    slot,
    span,
)

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
