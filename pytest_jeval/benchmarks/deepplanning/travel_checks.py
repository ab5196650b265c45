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

from collections.abc import Callable
from typing import Any

from pytest_jeval.benchmarks.deepplanning.travel_db import TravelDB
from pytest_jeval.benchmarks.deepplanning.travel_hard import hard, hard_check
from pytest_jeval.benchmarks.deepplanning.travel_reading import (
    Check,
    Day,
    _failed,
    _float,
    _hour_of,
    _intercity_time,
    _minutes_of,
    _number,
    _rounded,
    activities,
    city,
    clock,
    details,
    of_type,
    plan_cost,
    route,
    slot,
    span,
)
from pytest_jeval.benchmarks.deepplanning.travel_timing import (
    attraction_visit_within_opening_hours,
    avoidance_of_closure_days,
    dining_within_service_hours,
    no_time_overlaps,
    reasonable_duration_at_attractions,
    reasonable_meal_duration,
    reasonable_transfer_time,
    within_hours,
)

__all__ = ["DIMENSIONS", "case_scores", "clock", "commonsense", "hard", "hard_check", "plan_cost", "slot", "span",
           "within_hours"]


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
