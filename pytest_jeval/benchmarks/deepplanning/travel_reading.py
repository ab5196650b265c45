"""Reading a DeepPlanning travel plan (upstream's converted JSON) for the checks: routes, cities, times and
activities, read as upstream's ``evaluation/utils.py`` reads them; and the trip's cost as upstream's
checks compute it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

Check = tuple[bool | None, str | None]
Day = dict[str, Any]
WEEKDAYS = {"monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6, "sunday": 7,
            "周一": 1, "周二": 2, "周三": 3, "周四": 4, "周五": 5, "周六": 6, "周日": 7}
ALL_DAY = ("全天开放", "Open 24 Hours")
FLIGHT_MODES = ("flight", "飞机", "airplane", "plane")
TRAIN_MODES = ("train", "火车", "railway", "高铁", "gaotie")


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


def _float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


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
